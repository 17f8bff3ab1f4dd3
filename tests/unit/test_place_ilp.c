/* The address ILP on its own (the driver only reaches it when the search
 * cannot prove optimality in time). */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static int64_t rnd(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return olla_test_rng_range(&rng_state, lo, hi);
}

/* Starting from a deliberately poor placement (everything stacked), the
 * ILP reaches the brute-force optimum, proves it, and returns a valid plan. */
OLLA_TEST(test_ilp_optimum)
{
    for (int trial = 0; trial < 25; trial++) {
        int n = (int)rnd(2, 6);
        olla_pitem it[6];
        int64_t warm[6], off[6], tmp[6], sum = 0, opt;
        for (int i = 0; i < n; i++) {
            int64_t l = rnd(0, 4);
            it[i] = (olla_pitem){l, rnd(l + 1, 5), rnd(1, 6)};
            warm[i] = sum;
            sum += it[i].size;
        }
        for (opt = 0; !olla_test_fits_brute(it, n, tmp, 0, opt, NULL); opt++)
            ;
        int64_t lb = olla_place_items_max_live(it, (size_t)n), arena = 0, bound = 0;
        olla_error err = {0};
        olla_pwork w = {1LL << 40, 0, olla_now() + 30.0, 0};
        OLLA_CHECK(olla_place_ilp(&(olla_place_ilp_problem){it, (size_t)n, warm, sum, lb}, &w, 0, off, &arena, &bound,
                                  &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(arena, opt);
        OLLA_CHECK_EQ_I64(bound, opt);
        OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, (size_t)n), arena);
        olla_buffer b[6];
        for (int i = 0; i < n; i++)
            b[i] = (olla_buffer){it[i].lower, it[i].upper, it[i].size, off[i]};
        OLLA_CHECK(olla_place_validate(b, (size_t)n, arena, 1, &err) == OLLA_OK);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_ilp_optimum))
