/* Each heuristic of the placement portfolio on its own, on every minimalloc
 * CSV file given: its arena in percent above max live and its seconds, the
 * best marked with *. Prints one markdown row per file (the header first).
 * usage: place_portfolio ALIGN FILE.csv... (build: bench/place_portfolio.sh) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"

static void header(void)
{
    printf("| instance | buffers | max live |");
    for (int k = 0; k < olla_place_heuristic_count(); k++)
        printf(" %s |", olla_place_heuristic_name(k));
    printf("\n|---|---|---|");
    for (int k = 0; k < olla_place_heuristic_count(); k++)
        printf("---|");
    printf("\n");
}

static int row(const char *path, int64_t align)
{
    olla_place_table t;
    olla_error err = {0};
    if (olla_place_csv_read(path, &t, &err) != OLLA_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    olla_pitem *it = malloc((t.n + 1) * sizeof *it);
    int64_t *off = malloc((t.n + 1) * sizeof *off), arena[64];
    double secs[64];
    size_t m = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.bufs[i].size > 0 && t.bufs[i].upper > t.bufs[i].lower)
            it[m++] = (olla_pitem){t.bufs[i].lower, t.bufs[i].upper,
                                   (t.bufs[i].size + align - 1) / align};
    int64_t live = olla_place_items_max_live(it, m), best = INT64_MAX;
    int nk = olla_place_heuristic_count();
    for (int k = 0; k < nk; k++) {
        double t0 = olla_now();
        arena[k] = olla_place_heuristic_one(it, m, k, off);
        secs[k] = olla_now() - t0;
        if (arena[k] < best)
            best = arena[k];
    }
    const char *name = strrchr(path, '/');
    printf("| %s | %zu | %lld |", name ? name + 1 : path, m, (long long)(live * align));
    for (int k = 0; k < nk; k++)
        printf(" %.3f%%%s (%.2f s) |", live > 0 ? 100.0 * (double)(arena[k] - live) / (double)live : 0.0,
               arena[k] == best ? "*" : "", secs[k]);
    printf("\n");
    fflush(stdout);
    free(it);
    free(off);
    olla_place_table_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: place_portfolio ALIGN FILE.csv...\n");
        return 2;
    }
    int64_t align = atoll(argv[1]);
    if (align < 1)
        return 2;
    header();
    int rc = 0;
    for (int i = 2; i < argc; i++)
        rc |= row(argv[i], align);
    return rc;
}
