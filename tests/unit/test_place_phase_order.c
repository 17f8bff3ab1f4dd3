/* The order of the placement's phases on a part under 10,000 buffers
 * (place.c): when the split's first rounds of attempts leave attempts
 * for its later ones, the probe at the lower bound runs with a small share
 * before the split gets its whole share. On a compiler-traced training
 * step of about 5,000 buffers (tests/unit/place_gen_trace.h, seed 1, no
 * crossing) the split fails after its whole share while the exact search
 * reaches max live in its first rounds: the placement must get there
 * within a sixteenth of its budget. On a DenseNet-style step
 * (tests/unit/place_gen.h, seed 5, batch 1) the probe gives up and the
 * split after it still reaches max live. The busy windows' first pass
 * runs before the split's later rounds: a DenseNet-style step (seed 7,
 * batch 1, in units of 64 bytes as bench/RESULTS.md places it) that a
 * window places reaches max live within a sixteenth of the default
 * budget (after the split's later rounds it took 4.2e9 of 15e9 units).
 * Fixed work limits and no
 * deadline, so the units are the same on every run; each placement is
 * checked by the validator. */
#include <stdlib.h>

#include "olla_test.h"
#include "place_gen.h"
#include "place_gen_trace.h"
#include "solver/olla_place.h"

#define WORK_LIMIT 8000000000LL

/* b[0..n) placed with the work limit: checks that it reaches max live,
 * is valid, and returns the units spent (-1 on failure). */
static long long place_aligned(olla_buffer *b, long n, int64_t align, long long limit)
{
    olla_error err = {0};
    olla_place_result r;
    olla_place_options o = {align, 0, 0, NULL, limit};
    int64_t live = olla_place_max_live(b, (size_t)n, align);
    OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
    fprintf(stderr, "%ld buffers: max live %lld, arena %lld after %lld units\n", n, (long long)live,
            (long long)r.arena_bytes, r.work);
    OLLA_CHECK_EQ_I64(r.arena_bytes, live);
    OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK_EQ_I64(olla_place_validate(b, (size_t)n, r.arena_bytes, align, &err), OLLA_OK);
    return r.arena_bytes == live ? r.work : -1;
}

static long long place_at_max_live(olla_buffer *b, long n)
{
    return place_aligned(b, n, 1, WORK_LIMIT);
}

OLLA_TEST(test_probe_before_split)
{
    olla_buffer *b = NULL;
    long n = place_gen_traced(5000, 0, 1, &b);
    OLLA_CHECK(n > 4000 && n < 10000);
    if (n <= 0)
        return;
    long long work = place_at_max_live(b, n);
    OLLA_CHECK(work >= 0 && work <= WORK_LIMIT / 16);
    free(b);
}

/* The DenseNet-style step of seed at batch 1 placed by place_aligned: the
 * units spent, or -1. */
static long long densenet_step_work(uint64_t seed, int64_t align, long long limit)
{
    olla_buffer *b = NULL;
    long n = place_gen_train(PLACE_GEN_DENSENET, 1, 0, seed, &b);
    OLLA_CHECK(n > 0);
    long long work = n > 0 ? place_aligned(b, n, align, limit) : -1;
    free(b);
    return work;
}

OLLA_TEST(test_split_after_probe)
{
    OLLA_CHECK(densenet_step_work(5, 1, WORK_LIMIT) >= 0);
}

/* The budget `olla-onnx place` derives from its default 30 s time limit. */
#define DEFAULT_WORK ((long long)(30.0 / 2 * (double)OLLA_PLACE_WORK_PER_SECOND) + 1)

OLLA_TEST(test_windows_before_split_later_rounds)
{
    long long work = densenet_step_work(7, 64, DEFAULT_WORK);
    OLLA_CHECK(work >= 0 && work <= DEFAULT_WORK / 16);
}

OLLA_TEST_MAIN(OLLA_T(test_probe_before_split), OLLA_T(test_split_after_probe),
               OLLA_T(test_windows_before_split_later_rounds))
