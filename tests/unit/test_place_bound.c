/* The lower bound above max live (solver/place_bound.c): a gadget of nine
 * buffers over four steps whose max live is 11 but which needs 12 (checked
 * by brute force here), repeated along a long trace with one buffer live
 * throughout, or with 300 (the window then holds too many buffers to
 * search unless those live across it collapse into a block). Above 10,000
 * buffers no exact search runs on the whole trace; the bound must still
 * come from a window of time around a busy step, and make the placement
 * proven optimal. And on small random instances, every window's bound
 * against brute force: never above the optimum, equal to the window's own
 * optimum (the collapse loses nothing), above max live on some. */
#include <stdlib.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* {lower, upper, size}; found by a random search over small instances
 * made tight at every step with fillers. */
enum { G = 9, STEPS = 4 };
static const int64_t gadget[G][3] = {{1, 3, 2}, {2, 4, 1}, {1, 4, 2}, {0, 2, 2}, {0, 3, 3},
                                     {0, 1, 6}, {1, 2, 2}, {2, 3, 3}, {3, 4, 8}};

static int overlap(const int64_t *a, int64_t oa, const int64_t *b, int64_t ob)
{
    return a[0] < b[1] && b[0] < a[1] && oa < ob + b[2] && ob < oa + a[2];
}

/* Some placement of gadget buffers k.. within arena. */
static int fits(int64_t *off, int k, int64_t arena)
{
    if (k == G)
        return 1;
    for (off[k] = 0; off[k] + gadget[k][2] <= arena; off[k]++) {
        int ok = 1;
        for (int j = 0; j < k && ok; j++)
            ok = !overlap(gadget[k], off[k], gadget[j], off[j]);
        if (ok && fits(off, k + 1, arena))
            return 1;
    }
    return 0;
}

OLLA_TEST(test_gadget_needs_more_than_max_live)
{
    int64_t off[G];
    OLLA_CHECK(!fits(off, 0, 11));
    OLLA_CHECK(fits(off, 0, 12));
    olla_buffer b[G];
    for (int i = 0; i < G; i++)
        b[i] = (olla_buffer){gadget[i][0], gadget[i][1], gadget[i][2], 0};
    OLLA_CHECK_EQ_I64(olla_place_max_live(b, G, 1), 11);
}

/* The gadget repeated COPIES times along the trace with `across` buffers
 * of 64 bytes live throughout: placed, the bound and the arena one unit
 * above max live, proven optimal. */
static void long_trace(int across)
{
    enum { COPIES = 1200 };
    size_t n = G * COPIES + (size_t)across;
    olla_buffer *b = malloc(n * sizeof *b);
    for (int g = 0; g < COPIES; g++)
        for (int i = 0; i < G; i++)
            b[G * g + i] = (olla_buffer){STEPS * g + gadget[i][0], STEPS * g + gadget[i][1],
                                         64 * gadget[i][2], 0};
    for (int a = 0; a < across; a++) /* one part: live throughout */
        b[G * COPIES + a] = (olla_buffer){0, STEPS * COPIES, 64, 0};
    olla_place_options opt = {64, 0, 0, 0, 2000000000LL};
    olla_place_result res;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, n, &opt, &res, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(olla_place_max_live(b, n, 64), (11 + across) * 64);
    OLLA_CHECK_EQ_I64(res.lower_bound, (12 + across) * 64);
    OLLA_CHECK_EQ_I64(res.arena_bytes, (12 + across) * 64);
    OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(olla_place_validate(b, n, res.arena_bytes, 64, &err) == OLLA_OK);
    free(b);
}

OLLA_TEST(test_window_bound_on_a_long_trace)
{
    long_trace(1);
    long_trace(300);
}

/* The least arena brute force fits b[0..n) in (n <= 16), from lo (at
 * most the optimum) up. */
static int64_t brute_optimum_from(const olla_pitem *b, int n, int64_t lo)
{
    int64_t off[16];
    while (!olla_test_fits_brute(b, n, off, 0, lo, NULL))
        lo++;
    return lo;
}

/* Every window [a, b] of it[0..n) over steps: the bound from its cut (the
 * buffers live across it as a block) equals brute force's optimum of the
 * window cut without the collapse (at least max live), and is never above
 * the whole instance's optimum; counts the windows and those whose bound
 * is above max live. */
static void check_windows(const olla_pitem *it, int n, int64_t steps, int *windows, int *above)
{
    olla_pitem win[16], plain[16];
    int64_t ml = olla_place_items_max_live(it, (size_t)n), opt = brute_optimum_from(it, n, ml);
    for (int64_t a = 0; a < steps; a++)
        for (int64_t b = a; b < steps; b++) {
            int64_t block, bound;
            size_t k = olla_place_window_cut(it, (size_t)n, a, b, win, 16, &block);
            olla_pwork w = {1000000000LL, 0, 0, 0};
            OLLA_CHECK(olla_place_window_bound_at(win, k, block, ml, opt + 2, &w, &bound) == 0);
            int np = 0; /* the same window cut, nothing collapsed */
            for (int i = 0; i < n; i++)
                if (it[i].lower <= b && it[i].upper > a) {
                    plain[np] = it[i];
                    plain[np].lower = it[i].lower < a ? a : it[i].lower;
                    plain[np].upper = it[i].upper > b + 1 ? b + 1 : it[i].upper;
                    np++;
                }
            int64_t wopt = brute_optimum_from(plain, np, olla_place_items_max_live(plain, (size_t)np));
            OLLA_CHECK_EQ_I64(bound, wopt > ml ? wopt : ml);
            OLLA_CHECK(bound <= opt);
            *above += bound > ml;
            (*windows)++;
        }
}

/* Random small instances (up to 8 buffers over up to 6 steps, a few live
 * throughout, in two trials of three made tight at every step by a
 * one-step filler where the load is below max live; max live is packed
 * in all of them), and the gadget with its sizes scaled and up to two
 * buffers live throughout (its windows over all four steps need more):
 * every window checked by check_windows, some above max live. */
OLLA_TEST(test_window_bound_against_brute_force)
{
    uint64_t x = 5;
    int above = 0, windows = 0;
    for (int trial = 0; trial < 300; trial++) {
        int fill = trial % 3 != 0;
        int n = 2 + (int)olla_test_rng_below(&x, fill ? 4 : 7), steps = 2 + (int)olla_test_rng_below(&x, fill ? 3 : 5);
        olla_pitem it[8];
        for (int i = 0; i < n; i++) {
            int64_t l = olla_test_rng_range(&x, 0, steps - 1), u = olla_test_rng_range(&x, l + 1, steps);
            if (olla_test_rng_below(&x, 5) == 0)
                l = 0, u = steps; /* live throughout */
            it[i] = (olla_pitem){l, u, olla_test_rng_range(&x, 1, 8)};
        }
        int64_t ml = olla_place_items_max_live(it, (size_t)n);
        for (int64_t t = 0; fill && t < steps && n < 8; t++) {
            int64_t load = 0;
            for (int i = 0; i < n; i++)
                load += it[i].lower <= t && t < it[i].upper ? it[i].size : 0;
            if (load < ml)
                it[n++] = (olla_pitem){t, t + 1, ml - load};
        }
        check_windows(it, n, steps, &windows, &above);
    }
    int random_above = above;
    for (int extra = 0; extra <= 2; extra++)
        for (int64_t scale = 1; scale <= 2; scale++) {
            olla_pitem it[G + 2];
            for (int i = 0; i < G; i++)
                it[i] = (olla_pitem){gadget[i][0], gadget[i][1], scale * gadget[i][2]};
            for (int e = 0; e < extra; e++)
                it[G + e] = (olla_pitem){0, STEPS, 1 + e};
            check_windows(it, G + extra, STEPS, &windows, &above);
        }
    fprintf(stderr, "test_window_bound_against_brute_force: %d windows, %d bounds above max live (%d random)\n",
            windows, above, random_above);
    OLLA_CHECK(above > 0);
}

OLLA_TEST_MAIN(OLLA_T(test_gadget_needs_more_than_max_live), OLLA_T(test_window_bound_on_a_long_trace),
               OLLA_T(test_window_bound_against_brute_force))
