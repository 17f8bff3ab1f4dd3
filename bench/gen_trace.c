/* Deterministic generator of a compiler-like allocation trace in
 * minimalloc's CSV format, shaped like one training step: a forward pass
 * whose activations are partly kept for the backward pass (long-lived, freed
 * in mirror order), many short-lived temporaries, gradients that live a few
 * steps, and a few buffers live throughout. Sizes are multiples of 256 bytes,
 * spread log-uniformly from 256 B to 16 MiB.
 * usage: gen_trace N [seed] > trace.csv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}
static int64_t uniform(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }
static int64_t size_bytes(void)
{
    int e = (int)uniform(0, 16); /* 256 B .. 16 MiB */
    int64_t base = (int64_t)256 << e;
    return base + (int64_t)uniform(0, 3) * (base / 4) / 256 * 256;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 60000;
    if (argc > 2)
        s ^= (uint64_t)atoll(argv[2]) * 0x2545F4914F6CDD1DULL;
    if (n < 10) {
        fprintf(stderr, "usage: gen_trace N [seed] (N >= 10)\n");
        return 2;
    }
    long fwd = n * 2 / 5; /* forward buffers */
    long steps = fwd * 2 + 10;
    long id = 0;
    printf("id,lower,upper,size\n");
    for (int k = 0; k < 8; k++) /* weights, optimizer state: live throughout */
        printf("%ld,0,%ld,%lld\n", id++, steps, (long long)size_bytes());
    for (long t = 0; t < fwd && id < n; t++) {
        int64_t len = uniform(1, 4);
        if (uniform(0, 9) < 3) /* an activation kept for the backward pass */
            len = 2 * (fwd - t) + uniform(0, 2);
        printf("%ld,%ld,%ld,%lld\n", id++, t, t + len, (long long)size_bytes());
    }
    for (long t = fwd; id < n; t++) { /* backward: gradients and temporaries */
        long b = fwd + (t - fwd) / 2;
        int64_t len = uniform(0, 7) == 0 ? uniform(5, 40) : uniform(1, 3);
        printf("%ld,%ld,%ld,%lld\n", id++, b, b + len, (long long)size_bytes());
    }
    return 0;
}
