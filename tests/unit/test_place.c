/* The placement driver (solver/olla_place.h): optimal against brute force
 * on small random instances, capacity mode, alignment, common factors, the
 * validator, edge cases and a large trace. */
#include <unistd.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"

/* Deterministic pseudo-random numbers for generated instances. */
static uint64_t rng_state = 88172645463325252ULL;
static int64_t rnd(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return olla_test_rng_range(&rng_state, lo, hi);
}

/* The least arena brute force fits b[0..n) in (independent of the solver). */
static int64_t brute_optimum(const olla_buffer *b, int n)
{
    olla_pitem it[8];
    for (int i = 0; i < n; i++)
        it[i] = (olla_pitem){b[i].lower, b[i].upper, b[i].size};
    return olla_test_brute_optimum(it, n);
}

static void random_instance(olla_buffer *b, int n, int64_t tmax, int64_t smax)
{
    for (int i = 0; i < n; i++) {
        int64_t l = rnd(0, tmax - 1);
        b[i].lower = l;
        b[i].upper = rnd(l + 1, tmax);
        b[i].size = rnd(1, smax);
        b[i].offset = -1;
    }
}

/* Minimization is optimal on random small instances, and capacity mode
 * finds a fit at the optimum and proves none exists one byte below. */
OLLA_TEST(test_random_small_vs_brute_force)
{
    for (int trial = 0; trial < 300; trial++) {
        int n = (int)rnd(1, 6);
        olla_buffer b[6];
        random_instance(b, n, 6, 5);
        int64_t opt = brute_optimum(b, n);
        olla_error err = {0};
        olla_place_options o = {1, 10.0, 0, 0, 0};
        olla_place_result r;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(r.arena_bytes, opt);
        OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
        OLLA_CHECK(r.lower_bound <= opt);
        OLLA_CHECK(olla_place_validate(b, (size_t)n, r.arena_bytes, 1, &err) == OLLA_OK);

        o.capacity = opt;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL || r.status == OLLA_PLACE_FEASIBLE);
        OLLA_CHECK(r.arena_bytes <= opt);
        OLLA_CHECK(olla_place_validate(b, (size_t)n, opt, 1, &err) == OLLA_OK);
        if (opt > 1) {
            o.capacity = opt - 1;
            OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
            OLLA_CHECK(r.status == OLLA_PLACE_NO_FIT);
            OLLA_CHECK(r.lower_bound >= opt);
        }
        if (olla_test_failures) {
            fprintf(stderr, "trial %d, n %d, optimum %lld:\n", trial, n, (long long)opt);
            for (int i = 0; i < n; i++)
                fprintf(stderr, "  [%lld,%lld) size %lld\n", (long long)b[i].lower,
                        (long long)b[i].upper, (long long)b[i].size);
            return;
        }
    }
}

/* Sizes all at least 2 with no common factor, so that floors can differ by
 * less than the smallest size: optimum and proofs against brute force. */
OLLA_TEST(test_large_sizes_vs_brute_force)
{
    static const int64_t sizes[] = {2, 3, 5, 7};
    for (int trial = 0; trial < 400; trial++) {
        int n = (int)rnd(2, 7);
        olla_buffer b[7];
        random_instance(b, n, 7, 1);
        for (int i = 0; i < n; i++)
            b[i].size = sizes[rnd(0, 3)];
        int64_t opt = brute_optimum(b, n);
        olla_error err = {0};
        olla_place_options o = {1, 10.0, 0, 0, 0};
        olla_place_result r;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(r.arena_bytes, opt);
        OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
        o.capacity = opt;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL || r.status == OLLA_PLACE_FEASIBLE);
        o.capacity = opt - 1;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK(r.status == OLLA_PLACE_NO_FIT);
        if (olla_test_failures) {
            fprintf(stderr, "trial %d, n %d, optimum %lld:\n", trial, n, (long long)opt);
            for (int i = 0; i < n; i++)
                fprintf(stderr, "  [%lld,%lld) size %lld\n", (long long)b[i].lower,
                        (long long)b[i].upper, (long long)b[i].size);
            return;
        }
    }
}

/* Sizes sharing a common factor (3 here): the solver works in units of it;
 * the optimum is 3 times that of the sizes divided by 3, and a capacity one
 * byte below it is proven impossible. */
OLLA_TEST(test_common_factor)
{
    for (int trial = 0; trial < 60; trial++) {
        int n = (int)rnd(2, 6);
        olla_buffer b[6], small[6];
        random_instance(small, n, 6, 4);
        for (int i = 0; i < n; i++) {
            b[i] = small[i];
            b[i].size = 3 * small[i].size;
        }
        int64_t opt = 3 * brute_optimum(small, n);
        olla_error err = {0};
        olla_place_options o = {1, 10.0, 0, 0, 0};
        olla_place_result r;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(r.arena_bytes, opt);
        OLLA_CHECK(olla_place_validate(b, (size_t)n, r.arena_bytes, 1, &err) == OLLA_OK);
        o.capacity = opt - 1;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        OLLA_CHECK(r.status == OLLA_PLACE_NO_FIT);
    }
}

/* The exact search also works on instances too large for the brute force:
 * optimal by the solver's own claim means arena == max live. */
OLLA_TEST(test_medium_instances)
{
    for (int trial = 0; trial < 20; trial++) {
        int n = 40;
        olla_buffer b[40];
        random_instance(b, n, 30, 64);
        olla_error err = {0};
        olla_place_options o = {1, 5.0, 0, 0, 0};
        olla_place_result r;
        OLLA_CHECK(olla_place(b, (size_t)n, &o, &r, &err) == OLLA_OK);
        int64_t live = olla_place_max_live(b, (size_t)n, 1);
        OLLA_CHECK(r.lower_bound >= live);
        OLLA_CHECK(r.arena_bytes >= r.lower_bound);
        if (r.status == OLLA_PLACE_OPTIMAL && r.lower_bound == live)
            OLLA_CHECK_EQ_I64(r.arena_bytes, live);
        OLLA_CHECK(olla_place_validate(b, (size_t)n, r.arena_bytes, 1, &err) == OLLA_OK);
    }
}

/* Sizes are rounded up to the alignment and every offset is a multiple of
 * it: with alignment 8, sizes 3, 5 and 8 all take 8 bytes. Three buffers
 * live together need 24 bytes; a fourth after the first reuses its slot. */
OLLA_TEST(test_alignment)
{
    olla_buffer b[] = {{0, 2, 3, 0}, {0, 4, 5, 0}, {1, 4, 8, 0}, {2, 4, 1, 0}};
    olla_error err = {0};
    olla_place_options o = {8, 5.0, 0, 0, 0};
    olla_place_result r;
    OLLA_CHECK(olla_place(b, 4, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(r.arena_bytes, 24);
    OLLA_CHECK_EQ_I64(r.lower_bound, 24);
    OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
    for (int i = 0; i < 4; i++)
        OLLA_CHECK_EQ_I64(b[i].offset % 8, 0);
    OLLA_CHECK(olla_place_validate(b, 4, 24, 8, &err) == OLLA_OK);
    /* the same plan checked with raw sizes would not be aligned to 16 */
    olla_error err2 = {0};
    int unaligned = 0;
    for (int i = 0; i < 4; i++)
        unaligned |= b[i].offset % 16 != 0;
    if (unaligned) {
        OLLA_CHECK(olla_place_validate(b, 4, 64, 16, &err2) == OLLA_ERR_INPUT);
        OLLA_CHECK_STR_CONTAINS(err2.message, "not a multiple of the alignment");
    }

    /* random instances with alignment 4 against the brute force on the
     * rounded sizes */
    for (int trial = 0; trial < 50; trial++) {
        int n = (int)rnd(1, 5);
        olla_buffer x[5], y[5];
        random_instance(x, n, 5, 9);
        for (int i = 0; i < n; i++) {
            y[i] = x[i];
            y[i].size = (x[i].size + 3) / 4;
        }
        int64_t opt = brute_optimum(y, n) * 4;
        olla_place_options oa = {4, 5.0, 0, 0, 0};
        OLLA_CHECK(olla_place(x, (size_t)n, &oa, &r, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(r.arena_bytes, opt);
        OLLA_CHECK(olla_place_validate(x, (size_t)n, r.arena_bytes, 4, &err) == OLLA_OK);
    }
}

OLLA_TEST(test_validator_rejects)
{
    olla_error err = {0};
    /* 0 and 2 live together at [2,3) and overlap at bytes [4,6) */
    olla_buffer b[] = {{0, 3, 4, 0}, {3, 5, 4, 0}, {2, 4, 4, 2}, {0, 1, 2, 4}};
    OLLA_CHECK(olla_place_validate(b, 4, 10, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "buffers 0 and 2 overlap");
    /* moved up, it is fine; buffer 1 reuses buffer 0's bytes after it ends */
    b[2].offset = 4;
    olla_error_clear(&err);
    OLLA_CHECK(olla_place_validate(b, 4, 8, 1, &err) == OLLA_OK);
    /* beyond the arena */
    OLLA_CHECK(olla_place_validate(b, 4, 7, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "buffer 2");
    OLLA_CHECK_STR_CONTAINS(err.message, "beyond the arena of 7 bytes");
    /* unaligned */
    olla_error_clear(&err);
    OLLA_CHECK(olla_place_validate(b, 4, 8, 4, &err) == OLLA_OK);
    b[3].offset = 6;
    OLLA_CHECK(olla_place_validate(b, 4, 8, 4, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "buffer 3: offset 6 is not a multiple of the alignment 4");
    /* same offset but disjoint lifetimes, touching ends included */
    olla_buffer c[] = {{0, 2, 8, 0}, {2, 4, 8, 0}, {4, 9, 8, 0}};
    olla_error_clear(&err);
    OLLA_CHECK(olla_place_validate(c, 3, 8, 1, &err) == OLLA_OK);
    /* an overlap found only through a buffer inserted between two others */
    olla_buffer d[] = {{0, 5, 2, 0}, {0, 5, 2, 10}, {1, 2, 9, 2}};
    OLLA_CHECK(olla_place_validate(d, 3, 12, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "buffers 1 and 2 overlap");
    /* bad intervals */
    olla_buffer e[] = {{3, 2, 1, 0}};
    olla_error_clear(&err);
    OLLA_CHECK(olla_place_validate(e, 1, 8, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "inverted");
}

OLLA_TEST(test_edge_cases)
{
    olla_error err = {0};
    olla_place_options o = {1, 1.0, 0, 0, 0};
    olla_place_result r;
    OLLA_CHECK(olla_place(NULL, 0, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(r.arena_bytes, 0);
    OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
    /* zero sizes and empty lifetimes take no space */
    olla_buffer b[] = {{0, 4, 0, 7}, {2, 2, 100, 7}, {0, 4, 5, 7}};
    OLLA_CHECK(olla_place(b, 3, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(r.arena_bytes, 5);
    OLLA_CHECK_EQ_I64(b[2].offset, 0);
    /* bad options and inputs are errors, not crashes */
    olla_place_options bad = {0, 1.0, 0, 0, 0};
    OLLA_CHECK(olla_place(b, 3, &bad, &r, &err) == OLLA_ERR_USAGE);
    olla_error_clear(&err);
    olla_buffer neg[] = {{-1, 3, 4, 0}};
    OLLA_CHECK(olla_place(neg, 1, &o, &r, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "negative lifetime");
    olla_error_clear(&err);
    olla_buffer huge[] = {{0, 3, INT64_MAX / 5, 0}, {0, 3, INT64_MAX / 5, 0}, {0, 3, INT64_MAX / 5, 0}};
    OLLA_CHECK(olla_place(huge, 3, &o, &r, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "overflows");
    OLLA_CHECK(strcmp(olla_place_status_name(OLLA_PLACE_NO_FIT), "no-fit") == 0);
    OLLA_CHECK(strcmp(olla_place_status_name(OLLA_PLACE_NOT_FOUND), "not-found") == 0);
}

/* A larger generated trace: the result is valid and within the bounds. */
OLLA_TEST(test_large_trace_valid)
{
    size_t n = 3000;
    olla_buffer *b = malloc(n * sizeof *b);
    OLLA_CHECK(b != NULL);
    if (!b)
        return;
    for (size_t i = 0; i < n; i++) {
        int64_t l = (int64_t)i / 3;
        int64_t len = rnd(0, 9) == 0 ? rnd(50, 400) : rnd(1, 6);
        b[i] = (olla_buffer){l, l + len, rnd(1, 64) * 256, 0};
    }
    olla_error err = {0};
    olla_place_options o = {256, 2.0, 0, 0, 0};
    olla_place_result r;
    OLLA_CHECK(olla_place(b, n, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK(r.arena_bytes >= r.lower_bound);
    OLLA_CHECK_EQ_I64(r.lower_bound >= olla_place_max_live(b, n, 256), 1);
    OLLA_CHECK(olla_place_validate(b, n, r.arena_bytes, 256, &err) == OLLA_OK);
    free(b);
}

OLLA_TEST_MAIN(OLLA_T(test_random_small_vs_brute_force), OLLA_T(test_common_factor),
               OLLA_T(test_large_sizes_vs_brute_force),
               OLLA_T(test_medium_instances),
               OLLA_T(test_alignment), OLLA_T(test_validator_rejects), OLLA_T(test_edge_cases),
               OLLA_T(test_large_trace_valid))
