/* The offset-order search alone (olla_place_offset_search, no budget) on a
 * minimalloc CSV (id,lower,upper,size[,offset]; sizes rounded up to ALIGN,
 * size 0 dropped) at capacity PERMILLE/1000 of max live, in buffer order
 * ORDER (0-3): its outcome, nodes, work units, CPU seconds and a hash of
 * the offsets it found, so that two builds of the library can be compared
 * on the same choices.
 * usage: offset_search_cost FILE.csv ALIGN PERMILLE ORDER
 * (build: bench/offset_search_cost.sh; -DOLLA_OFFSET_SEARCH_6ARGS for the
 * library before the search's check argument, a1ee9c0 and earlier) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "solver/place_internal.h"

/* The buffers of the CSV in units of align: their number, or -1. */
static long read_csv(const char *path, long long align, olla_pitem **out)
{
    FILE *f = fopen(path, "r");
    char line[512];
    long n = 0, cap = 0;
    olla_pitem *it = NULL;
    if (!f || !fgets(line, sizeof line, f))
        return -1;
    long long id, lo, up, sz;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lld,%lld,%lld,%lld", &id, &lo, &up, &sz) != 4 || sz <= 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            olla_pitem *g = realloc(it, (size_t)cap * sizeof *g);
            if (!g)
                return -1;
            it = g;
        }
        it[n++] = (olla_pitem){lo, up, (sz + align - 1) / align};
    }
    fclose(f);
    *out = it;
    return n;
}

/* CPU seconds of this process. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: offset_search_cost FILE.csv ALIGN PERMILLE ORDER\n");
        return 2;
    }
    olla_pitem *it = NULL;
    long n = read_csv(argv[1], atoll(argv[2]), &it);
    int64_t *off = n > 0 ? malloc((size_t)n * sizeof *off) : NULL;
    if (n <= 0 || !off) {
        fprintf(stderr, "offset_search_cost: cannot read %s\n", argv[1]);
        return 1;
    }
    int64_t cap = olla_place_items_max_live(it, (size_t)n) * atoll(argv[3]) / 1000;
    olla_search_cost cost;
    double t = cpu_seconds();
#ifdef OLLA_OFFSET_SEARCH_6ARGS
    int r = olla_place_offset_search(it, (size_t)n, cap, atoi(argv[4]), off, &cost);
#else
    int r = olla_place_offset_search(it, (size_t)n, cap, atoi(argv[4]), off, &cost, 0);
#endif
    t = cpu_seconds() - t;
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a over the offsets */
    for (long i = 0; r == OLLA_SEARCH_FOUND && i < n; i++)
        h = (h ^ (unsigned long long)off[i]) * 1099511628211ULL;
    printf("%s order %s: outcome %d, %lld nodes, %lld work units, %.3f cpu s, offsets %016llx\n", argv[1], argv[4], r,
           cost.nodes, cost.work, t, r == OLLA_SEARCH_FOUND ? h : 0ULL);
    free(it);
    free(off);
    return 0;
}
