/* The exact search on its own, at the brute-force optimum (must find a
 * placement) and one below it (must prove none exists), whatever the
 * heuristics would have found; the same search backwards in time; and its
 * offset-order search alone, in each of its buffer orders. */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "solver/place_search_state.h"
#include "util/olla_clock.h"

/* A budget no test instance exhausts, and no deadline. */
#define UNLIMITED (&(olla_pwork){1LL << 50, 0, 0, 0})

static uint64_t rng_state = 0x853C49E6748FEA9BULL;
static int64_t rnd(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return olla_test_rng_range(&rng_state, lo, hi);
}

/* Max live bytes by a plain scan over time steps (times are small here). */
static int64_t max_live(const olla_pitem *it, int n, int64_t tmax)
{
    int64_t best = 0;
    for (int64_t t = 0; t <= tmax; t++) {
        int64_t cur = 0;
        for (int i = 0; i < n; i++)
            if (it[i].lower <= t && t < it[i].upper)
                cur += it[i].size;
        if (cur > best)
            best = cur;
    }
    return best;
}

static void run_family(const int64_t *sizes, int nsizes, int trials, int64_t tmax)
{
    int gaps = 0, before = olla_test_failures;
    for (int trial = 0; trial < trials; trial++) {
        int n = (int)rnd(2, 7);
        olla_pitem it[8];
        int64_t tmp[8], off[8];
        for (int i = 0; i < n; i++) {
            int64_t l = rnd(0, tmax - 1);
            it[i] = (olla_pitem){l, rnd(l + 1, tmax), sizes[rnd(0, nsizes - 1)]};
        }
        int64_t live = max_live(it, n, tmax), opt = live;
        while (!olla_test_fits_brute(it, n, tmp, 0, opt, NULL))
            opt++;
        gaps += opt > live;
        int r = olla_place_search(it, (size_t)n, opt, UNLIMITED, off);
        OLLA_CHECK_EQ_I64(r, 1);
        if (r == 1)
            olla_test_check_valid(it, n, off, opt);
        OLLA_CHECK_EQ_I64(olla_place_search(it, (size_t)n, opt - 1, UNLIMITED, off), 0);
        /* backwards in time: the same outcomes, and the placement found is
         * one of the buffers as given (offsets mapped back to their order) */
        for (int i = 0; i < n; i++)
            off[i] = -1;
        r = olla_place_search_reversed(it, (size_t)n, opt, UNLIMITED, off);
        OLLA_CHECK_EQ_I64(r, 1);
        if (r == 1)
            olla_test_check_valid(it, n, off, opt);
        OLLA_CHECK_EQ_I64(olla_place_search_reversed(it, (size_t)n, opt - 1, UNLIMITED, off), 0);
        /* the offset-order search alone, in each of its orders: it finds a
         * placement at the optimum and exhausts below it (its pruning rules
         * lose no placement) */
        for (int order = 0; order < 4; order++) {
            r = olla_place_offset_search(it, (size_t)n, opt, order, off, NULL, 1000000);
            OLLA_CHECK_EQ_I64(r, 1);
            if (r == 1)
                olla_test_check_valid(it, n, off, opt);
            OLLA_CHECK_EQ_I64(olla_place_offset_search(it, (size_t)n, opt - 1, order, off, NULL, 1000000), 0);
        }
        if (olla_test_failures != before) {
            fprintf(stderr, "trial %d, optimum %lld:\n", trial, (long long)opt);
            for (int i = 0; i < n; i++)
                fprintf(stderr, "  [%lld,%lld) size %lld\n", (long long)it[i].lower,
                        (long long)it[i].upper, (long long)it[i].size);
            return;
        }
    }
    fprintf(stderr, "%d of %d instances have their optimum above max live\n", gaps, trials);
}

OLLA_TEST(test_search_small_sizes)
{
    static const int64_t sizes[] = {1, 2, 3, 4, 5};
    run_family(sizes, 5, 400, 6);
}

/* Floors can differ by less than the smallest size. */
OLLA_TEST(test_search_large_sizes)
{
    static const int64_t sizes[] = {2, 3, 5, 7};
    run_family(sizes, 4, 400, 7);
}

OLLA_TEST(test_search_wide_sizes)
{
    static const int64_t sizes[] = {3, 4, 9, 10, 11};
    run_family(sizes, 5, 150, 5);
}

/* Instances whose optimum is above max live (found by exhaustive offset
 * enumeration outside this project): the search must find the optimum and
 * prove that one byte less is impossible, which needs real search. */
OLLA_TEST(test_search_gap_instances)
{
    static const olla_pitem a[] = {{2, 3, 8}, {4, 8, 8}, {6, 8, 5}, {1, 4, 5}, {3, 4, 5},
                                   {3, 6, 2}, {3, 7, 2}, {1, 5, 2}, {5, 8, 1}};
    int64_t off[16];
    OLLA_CHECK_EQ_I64(max_live(a, 9, 8), 16);
    /* variants: as is, mirrored in time, in reverse order, both */
    for (int v = 0; v < 4; v++) {
        olla_pitem b[9];
        for (int i = 0; i < 9; i++) {
            olla_pitem x = a[v & 2 ? 8 - i : i];
            if (v & 1)
                x = (olla_pitem){8 - x.upper, 8 - x.lower, x.size};
            b[i] = x;
        }
        OLLA_CHECK_EQ_I64(olla_place_search(b, 9, 17, UNLIMITED, off), 1);
        olla_test_check_valid(b, 9, off, 17);
        OLLA_CHECK_EQ_I64(olla_place_search(b, 9, 16, UNLIMITED, off), 0);
    }
    /* the driver reports the proven bound */
    olla_buffer c[9];
    for (int i = 0; i < 9; i++)
        c[i] = (olla_buffer){a[i].lower, a[i].upper, a[i].size, 0};
    olla_place_options o = {1, 10.0, 0, 0, 0};
    olla_place_result r;
    olla_error err = {0};
    OLLA_CHECK(olla_place(c, 9, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(r.arena_bytes, 17);
    OLLA_CHECK_EQ_I64(r.lower_bound, 17);
    OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
}

/* Larger instances, checked against the address ILP solved to proven
 * optimality by CBC (an independent method): the search finds a placement
 * at the ILP optimum and proves none exists one byte below. */
OLLA_TEST(test_search_vs_ilp)
{
    static const int64_t sizes[] = {1, 2, 3, 5, 8};
    int gaps = 0, compared = 0;
    for (int trial = 0; trial < 60; trial++) {
        int n = (int)rnd(8, 12);
        olla_pitem it[12];
        int64_t warm[12], off[12], sum = 0;
        for (int i = 0; i < n; i++) {
            int64_t l = rnd(0, 7);
            it[i] = (olla_pitem){l, rnd(l + 1, l + 4 > 8 ? 8 : l + 4), sizes[rnd(0, 4)]};
            warm[i] = sum;
            sum += it[i].size;
        }
        int64_t live = max_live(it, n, 8), arena = 0, bound = 0;
        olla_error err = {0};
        OLLA_CHECK(olla_place_ilp(&(olla_place_ilp_problem){it, (size_t)n, warm, sum, live},
                                  &(olla_pwork){1LL << 40, 0, olla_now() + 60, 0}, 0, off, &arena, &bound,
                                  &err) == OLLA_OK);
        if (bound != arena)
            continue; /* not proven within the limit: nothing to compare */
        compared++;
        gaps += arena > live;
        int r = olla_place_search(it, (size_t)n, arena, UNLIMITED, off);
        OLLA_CHECK_EQ_I64(r, 1);
        if (r == 1)
            olla_test_check_valid(it, n, off, arena);
        OLLA_CHECK_EQ_I64(olla_place_search(it, (size_t)n, arena - 1, UNLIMITED, off), 0);
    }
    fprintf(stderr, "compared %d instances with the ILP, %d with a gap\n", compared, gaps);
    OLLA_CHECK(compared > 0);
}

/* The offset-order search's pruning (the order of offsets, the lowest top,
 * buffers with nothing live beside them) against the section search, where
 * placements must leave gaps: instances whose optimum lies above max live,
 * made from the one of test_search_gap_instances (mirrored in time, in
 * reverse order) with up to five random buffers added. At the optimum each
 * of its orders finds a placement, and below it each exhausts. */
OLLA_TEST(test_offset_search_on_gap_instances)
{
    static const olla_pitem a[] = {{2, 3, 8}, {4, 8, 8}, {6, 8, 5}, {1, 4, 5}, {3, 4, 5},
                                   {3, 6, 2}, {3, 7, 2}, {1, 5, 2}, {5, 8, 1}};
    int found = 0, trial = 0;
    for (; trial < 2000 && found < 200; trial++) {
        int v = (int)rnd(0, 3), n = 9 + (int)rnd(0, 5);
        olla_pitem it[14];
        int64_t off[14];
        for (int i = 0; i < 9; i++) {
            olla_pitem x = a[v & 2 ? 8 - i : i];
            it[i] = v & 1 ? (olla_pitem){8 - x.upper, 8 - x.lower, x.size} : x;
        }
        for (int i = 9; i < n; i++) {
            int64_t l = rnd(0, 7);
            it[i] = (olla_pitem){l, rnd(l + 1, 8), rnd(1, 4)};
        }
        int64_t live = max_live(it, n, 8), opt = live;
        while (olla_place_search(it, (size_t)n, opt, UNLIMITED, off) == 0)
            opt++;
        if (opt == live)
            continue;
        found++;
        for (int order = 0; order < 4; order++) {
            int r = olla_place_offset_search(it, (size_t)n, opt, order, off, NULL, 1000000);
            OLLA_CHECK_EQ_I64(r, 1);
            if (r == 1)
                olla_test_check_valid(it, n, off, opt);
            OLLA_CHECK_EQ_I64(olla_place_offset_search(it, (size_t)n, opt - 1, order, off, NULL, 1000000), 0);
        }
    }
    fprintf(stderr, "%d instances with a gap in %d\n", found, trial);
    OLLA_CHECK(found >= 50);
}

/* The section-list entries, counted by olla_place_section_entries, on
 * small random instances against a count over every section, and the
 * search's limit on them: nested buffers [i, 2n - i) hold n * n entries,
 * so 7,071 of them (49,999,041) are searched and 7,072 (50,013,184) are
 * refused as too large, before any work is charged. */
OLLA_TEST(test_search_entries_limit)
{
    for (int trial = 0; trial < 200; trial++) {
        int n = (int)rnd(1, 7);
        olla_pitem it[7];
        for (int i = 0; i < n; i++) {
            int64_t l = rnd(0, 9);
            it[i] = (olla_pitem){l, rnd(l + 1, 10), rnd(1, 5)};
        }
        long long want = 0;
        for (int64_t t = 0; t < 10; t++) {
            int point = 0, live = 0; /* a section starts at t when some buffer starts or ends there */
            for (int i = 0; i < n; i++) {
                point |= it[i].lower == t || it[i].upper == t;
                live += it[i].lower <= t && t < it[i].upper;
            }
            if (point) /* the section from t to the next point holds the buffers live at t */
                want += live;
        }
        OLLA_CHECK_EQ_I64(olla_place_section_entries(it, (size_t)n), want);
    }
    for (int k = 0; k < 2; k++) {
        size_t n = k ? 7072 : 7071;
        olla_pitem *it = malloc(n * sizeof *it);
        int64_t *off = malloc(n * sizeof *off);
        OLLA_CHECK(it != NULL && off != NULL);
        if (!it || !off)
            return;
        for (size_t i = 0; i < n; i++)
            it[i] = (olla_pitem){(int64_t)i, (int64_t)(2 * n - i), 1};
        OLLA_CHECK_EQ_I64(olla_place_section_entries(it, n), (long long)(n * n));
        olla_pwork w = {1000, 0, 0, 0}; /* far too little to build the lists */
        int r = olla_place_search(it, n, (int64_t)n, &w, off);
        OLLA_CHECK_EQ_I64(r, k ? OLLA_SEARCH_TOO_LARGE : OLLA_SEARCH_GAVE_UP);
        OLLA_CHECK_EQ_I64(w.used, 0);
        free(it);
        free(off);
    }
}

/* A reset's section lists, section by section, against a direct count:
 * section j lists exactly the buffers live in it, in candidate order
 * (rank), rem[j] their bytes and cut[j] those also live in section j + 1;
 * with buffers fixed or not, in every order of both searches (the
 * offset-order search's without fixed buffers, where it runs). */
OLLA_TEST(test_search_reset_lists)
{
    for (int trial = 0; trial < 300; trial++) {
        size_t n = (size_t)rnd(1, 40), nf = (size_t)(trial % 3 == 0 ? rnd(1, 4) : 0);
        olla_pitem it[40], fx[4];
        int64_t off[40], fx_off[4], top = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t l = rnd(0, 30);
            it[i] = (olla_pitem){l, rnd(l + 1, trial % 2 ? 31 : l + 3), rnd(1, 9)};
        }
        for (size_t f = 0; f < nf; f++) {
            int64_t l = rnd(0, 30);
            fx[f] = (olla_pitem){l, rnd(l + 1, 31), rnd(1, 5)};
            fx_off[f] = top;
            top += fx[f].size;
        }
        search_input in = {it, n, {fx, fx_off, nf}, top + 400, 0.0, 1LL << 50};
        sctx c;
        olla_search_init(&c, &in, off, NULL);
        OLLA_CHECK_EQ_I64(olla_search_build(&c), 0);
        for (int offset_order = 0; offset_order < (nf ? 1 : 2); offset_order++) { /* it runs without fixed buffers */
            for (int order = 0; order < (offset_order ? BYORDER_COUNT : ORDER_COUNT + 2); order++) {
                OLLA_CHECK_EQ_I64(olla_search_reset(&c, offset_order, order), 0);
                for (size_t j = 0; j <= c.nsec; j++) {
                    int64_t bytes = 0, p = c.sec_start[j];
                    int both = 0, last_rank = -1;
                    for (size_t r = 0; r < n && j < c.nsec; r++) /* the buffers live in j, by rank */
                        for (size_t i = 0; i < n; i++) {
                            if (c.rank[i] != (int)r || c.sb[i] > (int)j || c.se[i] <= (int)j)
                                continue;
                            bytes += it[i].size;
                            both += c.se[i] > (int)j + 1;
                            OLLA_CHECK(p < c.sec_start[j + 1] && c.sec_buf[p] == (int)i && (int)r > last_rank);
                            p++;
                            last_rank = (int)r;
                        }
                    if (j < c.nsec)
                        OLLA_CHECK_EQ_I64(p, c.sec_start[j + 1]);
                    OLLA_CHECK_EQ_I64(c.rem[j], bytes);
                    OLLA_CHECK_EQ_I64(c.cut[j], both);
                }
            }
        }
        olla_search_free(&c);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_search_reset_lists), OLLA_T(test_search_entries_limit), OLLA_T(test_offset_search_on_gap_instances), OLLA_T(test_search_vs_ilp), OLLA_T(test_search_small_sizes), OLLA_T(test_search_large_sizes),
               OLLA_T(test_search_wide_sizes), OLLA_T(test_search_gap_instances))
