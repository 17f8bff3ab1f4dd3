/* The offset-order search's cost per node: on training-step-like nests
 * (long buffers spanning most time sections, short ones inside), a dive
 * that places every buffer without backtracking must cost about one pass
 * over the buffers per node, not one over every section list: work units
 * asserted against the section-list entries, placements validated, and the
 * same outcome as the whole search on small random instances; at every
 * node, the candidate tree the search keeps from node to node holds the
 * same buffers in the same order as gathering and sorting them anew. */
#include <string.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/place_internal.h"


static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

/* A nest of n forward buffers (i live on [i, 2n + 1 - i)), one short
 * buffer at every step and `keep` buffers that start in the second half
 * and live to the end (a step's gradients): it[0..*m). */
static void make_nest(olla_pitem *it, int n, int keep, size_t *m)
{
    size_t k = 0;
    int64_t end = 2 * (int64_t)n + 2;
    for (int i = 0; i < n; i++)
        it[k++] = (olla_pitem){i, 2 * (int64_t)n + 1 - i, olla_test_rng_range(&rng_state, 1, 9)};
    for (int64_t t = 0; t < end - 1; t++)
        it[k++] = (olla_pitem){t, t + 1, olla_test_rng_range(&rng_state, 1, 6)};
    for (int g = 0; g < keep; g++)
        it[k++] = (olla_pitem){n + 1 + g * (n / (keep + 1)), end, olla_test_rng_range(&rng_state, 1, 3)};
    *m = k;
}

/* Nests of 100 to 400 forward buffers with gradients: placed at max live
 * (the dive is valid and never above it), and each node costs at most a
 * few passes over the buffers: a node's share of one pass over every
 * section list (what a node cost before) falls as the nests grow, and is
 * under a quarter on the largest. */
OLLA_TEST(test_dive_cost_on_nests)
{
    static olla_pitem it[4000];
    static int64_t off[4000], off2[4000];
    double last_share = 1.0;
    for (int n = 100; n <= 400; n += 150) {
        size_t m;
        make_nest(it, n, n / 4, &m);
        int64_t live = olla_place_items_max_live(it, m);
        olla_search_cost cost;
        int r = olla_place_offset_search(it, m, live, 0, off, &cost, 0);
        long long nodes = cost.nodes, work = cost.work, entries = cost.entries;
        OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_FOUND);
        if (r != OLLA_SEARCH_FOUND)
            continue;
        olla_test_check_valid(it, m, off, live);
        fprintf(stderr, "nest %d: %zu buffers, %lld entries, %lld nodes, %lld work units\n", n, m, entries, nodes,
                work);
        OLLA_CHECK(nodes >= (long long)m);
        double share = (double)work / ((double)entries * (double)nodes);
        OLLA_CHECK(share < last_share);
        last_share = share;
        if (n + 150 > 400)
            OLLA_CHECK(share < 0.25);
        /* the same search checking its tree at every node: same nodes and
         * work (the smallest nest only under the sanitizers) */
        if (olla_test_quick() && n > 100)
            continue;
        olla_search_cost checked;
        OLLA_CHECK_EQ_I64(olla_place_offset_search(it, m, live, 0, off2, &checked, 1000000), OLLA_SEARCH_FOUND);
        OLLA_CHECK_EQ_I64(checked.order_errors, 0);
        OLLA_CHECK_EQ_I64(checked.nodes, nodes);
        OLLA_CHECK_EQ_I64(checked.work, work);
        OLLA_CHECK(memcmp(off, off2, m * sizeof *off) == 0);
    }
}

/* One unit below max live nothing fits, and the offset-order search finds
 * out at its first node: every candidate leaves some section with more
 * bytes to place than fit above it. A candidate so rejected costs a few
 * paths of the segment tree over the sections, not a pass over the
 * section lists after raising the buffers beside it (about 16 passes on
 * the largest nest when each was placed and checked in full): the proof
 * costs less than one pass. The same with the checks at every node (the
 * rejections against the bytes read section by section). */
OLLA_TEST(test_rejected_candidates_cost_no_pass)
{
    static olla_pitem it[4000];
    static int64_t off[4000];
    size_t m;
    make_nest(it, 400, 100, &m);
    int64_t live = olla_place_items_max_live(it, m);
    for (int order = 0; order < 4; order++) {
        olla_search_cost cost, checked;
        OLLA_CHECK_EQ_I64(olla_place_offset_search(it, m, live - 1, order, off, &cost, 0), OLLA_SEARCH_NONE);
        fprintf(stderr, "order %d below max live: %lld nodes, %lld work units, %lld entries\n", order, cost.nodes,
                cost.work, cost.entries);
        OLLA_CHECK_EQ_I64(cost.nodes, 1);
        OLLA_CHECK(cost.work < cost.entries);
        OLLA_CHECK_EQ_I64(olla_place_offset_search(it, m, live - 1, order, off, &checked, 1000000), OLLA_SEARCH_NONE);
        OLLA_CHECK_EQ_I64(checked.order_errors, 0);
        OLLA_CHECK_EQ_I64(checked.work, cost.work);
    }
}

/* Small random instances: the offset-order search at the exact search's
 * optimum finds a valid placement whenever the exact search does, and
 * exhausts one unit below it. */
OLLA_TEST(test_dive_agrees_with_search)
{
    int checked = 0;
    for (int trial = 0; trial < 200; trial++) {
        olla_pitem it[10];
        int64_t off[10];
        int n = 4 + (int)olla_test_rng_range(&rng_state, 0, 4);
        for (int i = 0; i < n; i++) {
            int64_t l = olla_test_rng_range(&rng_state, 0, 9);
            it[i] = (olla_pitem){l, olla_test_rng_range(&rng_state, l + 1, 12), olla_test_rng_range(&rng_state, 1, 7)};
        }
        int64_t opt = olla_test_brute_optimum(it, n);
        for (int order = 0; order < 4; order++) {
            int r = olla_place_offset_search(it, (size_t)n, opt, order, off, NULL, 1000000);
            OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_FOUND);
            if (r == OLLA_SEARCH_FOUND)
                olla_test_check_valid(it, (size_t)n, off, opt);
            OLLA_CHECK_EQ_I64(olla_place_offset_search(it, (size_t)n, opt - 1, order, off, NULL, 1000000), OLLA_SEARCH_NONE);
        }
        checked++;
    }
    OLLA_CHECK(checked == 200);
}

/* A random instance of n buffers over `span` steps: lifetimes of 1 to
 * `life` steps, sizes 1 to `size`, a few long ones; some steps left empty
 * so that the search splits into parts. */
static void make_random(olla_pitem *it, int n, int64_t span, int64_t life, int64_t size)
{
    for (int i = 0; i < n; i++) {
        int64_t l = olla_test_rng_range(&rng_state, 0, span - 1);
        int64_t len = i % 9 == 0 ? olla_test_rng_range(&rng_state, 1, span) : olla_test_rng_range(&rng_state, 1, life);
        if (l % 17 == 5)
            len = 1; /* steps that few buffers cross */
        it[i] = (olla_pitem){l, l + len, olla_test_rng_range(&rng_state, 1, size)};
    }
}

/* The tree against a sort at every node of whole runs, found or exhausted,
 * on random instances of 6 to 200 buffers at capacities from one below the
 * optimum (small ones: every node of the exhausted search) to well above
 * max live (large ones: at most 4,000 nodes), in all four orders (a
 * quarter of the instances under the sanitizers); a node where the tree's buffers, their
 * order, their keys or the lowest top differ from the sorted ones counts. */
OLLA_TEST(test_tree_matches_sort)
{
    static olla_pitem it[200];
    static int64_t off[200];
    long long nodes = 0, errors = 0;
    int exhausted = 0, found = 0;
    int trials = olla_test_quick() ? 30 : 120;
    for (int trial = 0; trial < trials; trial++) {
        int small = trial % 3 == 0;
        int n = small ? 6 + (int)olla_test_rng_range(&rng_state, 0, 2) : (int)olla_test_rng_range(&rng_state, 20, 200);
        int64_t span = small ? 10 : olla_test_rng_range(&rng_state, n / 4 + 2, 2 * n);
        make_random(it, n, span, small ? 6 : olla_test_rng_range(&rng_state, 2, 30), small ? 7 : 64);
        int64_t live = olla_place_items_max_live(it, (size_t)n);
        int64_t cap = live + live * (trial % 5) / 16;
        if (small) { /* the optimum by brute force from max live up, or one below it */
            int64_t bo[8];
            for (cap = live; !olla_test_fits_brute(it, n, bo, 0, cap, NULL); cap++) {
            }
            cap -= trial % 2;
        }
        for (int order = 0; order < 4; order++) {
            olla_search_cost cost;
            int r = olla_place_offset_search(it, (size_t)n, cap, order, off, &cost, 4000);
            OLLA_CHECK(r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NONE || (!small && r == OLLA_SEARCH_GAVE_UP));
            if (r == OLLA_SEARCH_FOUND)
                olla_test_check_valid(it, (size_t)n, off, cap);
            found += r == OLLA_SEARCH_FOUND;
            exhausted += r == OLLA_SEARCH_NONE;
            nodes += cost.nodes;
            errors += cost.order_errors;
        }
    }
    fprintf(stderr, "tree against sort: %lld nodes, %d found, %d exhausted, %lld differing\n", nodes, found, exhausted,
            errors);
    OLLA_CHECK_EQ_I64(errors, 0);
    OLLA_CHECK(found > trials / 3 && exhausted > trials / 8);
}

OLLA_TEST_MAIN(OLLA_T(test_dive_cost_on_nests), OLLA_T(test_rejected_candidates_cost_no_pass),
               OLLA_T(test_dive_agrees_with_search), OLLA_T(test_tree_matches_sort))
