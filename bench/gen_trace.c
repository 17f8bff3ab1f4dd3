/* Deterministic generator of a compiler-like allocation trace in
 * minimalloc's CSV format, shaped like one training step: a forward pass
 * whose activations are partly kept for the backward pass (long-lived, freed
 * in mirror order), many short-lived temporaries, gradients that live a few
 * steps, and a few buffers live throughout. Sizes are multiples of 256 bytes,
 * spread log-uniformly from 256 B to 16 MiB.
 *
 * Optional third argument: the percentage of forward buffers kept for the
 * backward pass (default 30). Optional fourth argument, the size profile:
 * 0 (default) sizes independent of lifetimes as above; 1 compiler-like:
 * temporaries and gradients small (256 B to 256 KiB), kept activations
 * large (64 KiB to 64 MiB), the buffers live throughout huge (16 to 256 MiB).
 * usage: gen_trace N [seed] [keep percent] [profile] > trace.csv */
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
/* 256 << [lo, hi] bytes, log-uniform, plus up to 3/4 of that. */
static int64_t size_in(int lo, int hi)
{
    int e = (int)uniform(lo, hi);
    int64_t base = (int64_t)256 << e;
    return base + (int64_t)uniform(0, 3) * (base / 4) / 256 * 256;
}

enum { KIND_TEMP, KIND_KEPT, KIND_ALWAYS };
static int profile = 0;
static int64_t size_bytes(int kind)
{
    if (profile == 0)
        return size_in(0, 16); /* 256 B .. 16 MiB */
    return kind == KIND_TEMP ? size_in(0, 10) : kind == KIND_KEPT ? size_in(8, 18) : size_in(16, 20);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 60000;
    if (argc > 2)
        s ^= (uint64_t)atoll(argv[2]) * 0x2545F4914F6CDD1DULL;
    int keep = argc > 3 ? atoi(argv[3]) : 30;
    profile = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 10) {
        fprintf(stderr, "usage: gen_trace N [seed] (N >= 10)\n");
        return 2;
    }
    long fwd = n * 2 / 5; /* forward buffers */
    long steps = fwd * 2 + 10;
    long id = 0;
    printf("id,lower,upper,size\n");
    for (int k = 0; k < 8; k++) /* weights, optimizer state: live throughout */
        printf("%ld,0,%ld,%lld\n", id++, steps, (long long)size_bytes(KIND_ALWAYS));
    for (long t = 0; t < fwd && id < n; t++) {
        int64_t len = uniform(1, 4);
        int kind = KIND_TEMP;
        /* (a multiple of 10 draws as the first version did, so its traces stay the same) */
        int kept = keep % 10 == 0 ? uniform(0, 9) < keep / 10 : uniform(0, 99) < keep;
        if (kept) { /* an activation kept for the backward pass */
            len = 2 * (fwd - t) + uniform(0, 2);
            kind = KIND_KEPT;
        }
        printf("%ld,%ld,%ld,%lld\n", id++, t, t + len, (long long)size_bytes(kind));
    }
    for (long t = fwd; id < n; t++) { /* backward: gradients and temporaries */
        long b = fwd + (t - fwd) / 2;
        int64_t len = uniform(0, 7) == 0 ? uniform(5, 40) : uniform(1, 3);
        printf("%ld,%ld,%ld,%lld\n", id++, b, b + len, (long long)size_bytes(KIND_TEMP));
    }
    return 0;
}
