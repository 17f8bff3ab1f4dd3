/* The lower bound above max live (solver/place.c, window_bound): a
 * gadget of nine buffers over four steps whose max live is 11 but which
 * needs 12 (checked by brute force here), repeated along a long trace
 * with one buffer live throughout. Above 10,000 buffers no exact search
 * runs on the whole trace; the bound must still come from a window of
 * time around a busy step, and make the placement proven optimal. */
#include "olla_test.h"
#include "solver/olla_place.h"

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

OLLA_TEST(test_window_bound_on_a_long_trace)
{
    enum { COPIES = 1200, N = G * COPIES + 1 };
    olla_buffer *b = malloc(N * sizeof *b);
    for (int g = 0; g < COPIES; g++)
        for (int i = 0; i < G; i++)
            b[G * g + i] = (olla_buffer){STEPS * g + gadget[i][0], STEPS * g + gadget[i][1],
                                         64 * gadget[i][2], 0};
    b[N - 1] = (olla_buffer){0, STEPS * COPIES, 64, 0}; /* one part: live throughout */
    olla_place_options opt = {64, 0, 0, 0, 2000000000LL};
    olla_place_result res;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, N, &opt, &res, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(olla_place_max_live(b, N, 64), 12 * 64);
    OLLA_CHECK_EQ_I64(res.lower_bound, 13 * 64);
    OLLA_CHECK_EQ_I64(res.arena_bytes, 13 * 64);
    OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(olla_place_validate(b, N, res.arena_bytes, 64, &err) == OLLA_OK);
    free(b);
}

OLLA_TEST_MAIN(OLLA_T(test_gadget_needs_more_than_max_live), OLLA_T(test_window_bound_on_a_long_trace))
