/* Prints one compiler-traced training step (tests/unit/place_gen_trace.h)
 * as minimalloc CSV (id,lower,upper,size): about N buffers, saved
 * activations freed out of mirror order with probability CROSS percent
 * (default 30, as the real traces; 0 frees them all in mirror order).
 * usage: gen_compiler_trace N [seed] [cross percent] > trace.csv */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/unit/place_gen_trace.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    int cross = argc > 3 ? atoi(argv[3]) : 30;
    if (n < 100 || cross < 0 || cross > 100) {
        fprintf(stderr, "usage: gen_compiler_trace N [seed] [cross percent] (N >= 100, 0 <= cross <= 100)\n");
        return 2;
    }
    olla_buffer *b = NULL;
    long m = place_gen_traced(n, cross, seed, &b);
    if (m < 0) {
        fprintf(stderr, "gen_compiler_trace: out of memory\n");
        return 3;
    }
    printf("id,lower,upper,size\n");
    for (long i = 0; i < m; i++)
        printf("%ld,%lld,%lld,%lld\n", i, (long long)b[i].lower, (long long)b[i].upper, (long long)b[i].size);
    free(b);
    return 0;
}
