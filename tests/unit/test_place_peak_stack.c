/* The peak stack (solver/place_peak_stack.c) on a generated compiler-traced
 * training step of over 10,000 buffers whose busiest time is a one-step
 * spike (tests/unit/place_gen_trace.h, seed 10 of 18,700 buffers, saved
 * activations freed in mirror order): greedy by size leaves gaps between
 * the long buffers live across the spike, 0.90% above max live; stacking
 * the buffers live there first leaves none there, and once shaken the
 * placement ends 0.05% above it. Checked by the independent validator, at a work limit
 * small enough that the exact search's probe finds nothing (no deadline:
 * the result is judged by work units only). */
#include "olla_test.h"
#include "place_gen_trace.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* A tenth of a second's worth of work units. */
#define TENTH_SECOND_WORK (OLLA_PLACE_WORK_PER_SECOND / 10)

/* The load of b[0..n) at time t, by a plain scan. */
static int64_t load_at(const olla_buffer *b, long n, int64_t t)
{
    int64_t load = 0;
    for (long i = 0; i < n; i++)
        load += b[i].lower <= t && t < b[i].upper ? b[i].size : 0;
    return load;
}

/* The top of the buffers live at t: the highest offset + size among them. */
static int64_t top_at(const olla_buffer *b, long n, int64_t t)
{
    int64_t top = 0;
    for (long i = 0; i < n; i++)
        if (b[i].lower <= t && t < b[i].upper && b[i].offset + b[i].size > top)
            top = b[i].offset + b[i].size;
    return top;
}

/* The whole placement: valid, within 1.005 x max live (without the peak
 * stack: 4,146,253,065 bytes, 1.00902). */
OLLA_TEST(test_peak_stack_placement)
{
    olla_buffer *b = NULL;
    long n = place_gen_traced(18700, 0, 10, &b);
    OLLA_CHECK(n > 10000);
    if (n <= 0)
        return;
    olla_place_options opt = {1, 0, 0, 0, TENTH_SECOND_WORK};
    olla_place_result res;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, (size_t)n, &opt, &res, &err) == OLLA_OK);
    OLLA_CHECK(olla_place_validate(b, (size_t)n, res.arena_bytes, 1, &err) == OLLA_OK);
    int64_t live = olla_place_max_live(b, (size_t)n, 1);
    printf("arena %lld, max live %lld, ratio %.5f\n", (long long)res.arena_bytes, (long long)live,
           (double)res.arena_bytes / (double)live);
    OLLA_CHECK(res.arena_bytes >= live);
    OLLA_CHECK((double)res.arena_bytes <= 1.005 * (double)live);
    OLLA_CHECK(res.stopped_by != OLLA_PLACE_STOPPED_TIME);
    free(b);
}

/* The stack itself, in both orders: valid, no hole at the busiest time
 * (the buffers live there reach exactly max live), on the same step and on
 * a smaller one. */
OLLA_TEST(test_peak_stack_no_hole_at_peak)
{
    long sizes[2] = {3000, 18700};
    for (int k = 0; k < 4; k++) {
        olla_buffer *b = NULL;
        long n = place_gen_traced(sizes[k / 2], 30, 10, &b);
        OLLA_CHECK(n > 1000);
        if (n <= 0)
            continue;
        olla_pitem *it = malloc((size_t)n * sizeof *it);
        int64_t *off = malloc((size_t)n * sizeof *off);
        OLLA_CHECK(it && off);
        if (!it || !off) {
            free(it);
            free(off);
            free(b);
            continue;
        }
        for (long i = 0; i < n; i++)
            it[i] = (olla_pitem){b[i].lower, b[i].upper, b[i].size};
        int64_t arena = olla_place_peak_stack(it, (size_t)n, k % 2, off);
        OLLA_CHECK(arena > 0);
        for (long i = 0; i < n; i++)
            b[i].offset = off[i];
        olla_error err = {0};
        OLLA_CHECK(olla_place_validate(b, (size_t)n, arena, 1, &err) == OLLA_OK);
        int64_t live = olla_place_max_live(b, (size_t)n, 1), peak = -1;
        for (long i = 0; i < n; i++) /* the first busiest time, as the stack's */
            if ((peak < 0 || b[i].lower < peak) && load_at(b, n, b[i].lower) == live)
                peak = b[i].lower;
        OLLA_CHECK(peak >= 0);
        OLLA_CHECK_EQ_I64(top_at(b, n, peak), live);
        free(it);
        free(off);
        free(b);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_peak_stack_placement), OLLA_T(test_peak_stack_no_hole_at_peak))
