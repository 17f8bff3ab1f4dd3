/* Prints one generated placement instance as minimalloc CSV
 * (id,lower,upper,size), from the generators of tests/unit/place_gen.h and
 * place_gen_trace.h:
 *   gen_family inception SEED BATCH [inplace]   an Inception-style training step
 *   gen_family densenet SEED BATCH [inplace]    a DenseNet-style training step
 *   gen_family compiler SEED N                  a compiler-like trace of about N buffers
 *   gen_family traced SEED N [cross]            a compiler-traced training step of about
 *                                               N >= 100 buffers, saved activations freed
 *                                               out of mirror order with probability cross
 *                                               percent (default 30; 0: all in mirror order)
 * inplace: 1 lets ReLU write over its input (ONNX Runtime's sharing), 0 (the
 * default) gives every tensor a buffer of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/place_gen_trace.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gen_family inception|densenet SEED BATCH [inplace] | compiler SEED N | traced SEED N [cross]\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[2], NULL, 10);
    long arg = strtol(argv[3], NULL, 10);
    olla_buffer *b = NULL;
    long n;
    if (!strcmp(argv[1], "compiler"))
        n = place_gen_compiler(arg, seed, &b);
    else if (!strcmp(argv[1], "traced")) {
        int cross = argc > 4 ? atoi(argv[4]) : 30;
        if (arg < 100 || cross < 0 || cross > 100) {
            fprintf(stderr, "gen_family: traced needs N >= 100 and 0 <= cross <= 100\n");
            return 2;
        }
        n = place_gen_traced(arg, cross, seed, &b);
    }
    else if (!strcmp(argv[1], "inception") || !strcmp(argv[1], "densenet"))
        n = place_gen_train(!strcmp(argv[1], "inception") ? PLACE_GEN_INCEPTION : PLACE_GEN_DENSENET,
                            (int)arg, argc > 4 && atoi(argv[4]), seed, &b);
    else {
        fprintf(stderr, "gen_family: unknown family '%s'\n", argv[1]);
        return 2;
    }
    if (n < 0) {
        fprintf(stderr, "gen_family: out of memory\n");
        return 3;
    }
    printf("id,lower,upper,size\n");
    for (long i = 0; i < n; i++)
        printf("%ld,%lld,%lld,%lld\n", i, (long long)b[i].lower, (long long)b[i].upper, (long long)b[i].size);
    free(b);
    return 0;
}
