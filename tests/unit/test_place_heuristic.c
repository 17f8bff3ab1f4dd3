/* The greedy heuristics on their own. */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* A training step: activation i is produced at step i of the forward pass
 * and freed at its mirror step 2N - i of the backward pass (nested
 * lifetimes, the paper's pyramid), with a one-step temporary at every step.
 * Max live: all N activations plus the largest temporary. The heuristics
 * reach it without any search. */
OLLA_TEST(test_training_pyramid)
{
    enum { N = 200 };
    olla_pitem it[3 * N];
    size_t n = 0;
    uint64_t x = 99;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        it[n++] = (olla_pitem){i, 2 * N - i, 1 + (int64_t)((x >> 33) % 1000)};
    }
    for (int t = 0; t < 2 * N; t++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        it[n++] = (olla_pitem){t, t + 1, 1 + (int64_t)((x >> 33) % 300)};
    }
    int64_t off[3 * N];
    int64_t lb = olla_place_items_max_live(it, n);
    int64_t arena = olla_place_heuristic(it, n, off, lb, &(olla_pwork){0, 0, 0, 0}, 0);
    OLLA_CHECK_EQ_I64(arena, lb);
    olla_test_check_valid(it, n, off, arena);
}

/* When no greedy order reaches the bound, the best arena is still valid,
 * never below max live, and never worse than stacking everything. */
OLLA_TEST(test_random_heuristic_bounds)
{
    uint64_t x = 7;
    for (int trial = 0; trial < 30; trial++) {
        olla_pitem it[300];
        int64_t off[300], sum = 0;
        for (int i = 0; i < 300; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t l = (int64_t)((x >> 33) % 200);
            int64_t len = 1 + (int64_t)((x >> 17) % 40);
            it[i] = (olla_pitem){l, l + len, 1 + (int64_t)((x >> 45) % 500)};
            sum += it[i].size;
        }
        int64_t lb = olla_place_items_max_live(it, 300);
        int64_t arena = olla_place_heuristic(it, 300, off, lb, &(olla_pwork){0, 0, 0, 0}, 0);
        OLLA_CHECK(arena >= lb);
        OLLA_CHECK(arena <= sum);
        OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, 300), arena);
        olla_test_check_valid(it, 300, off, arena);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_training_pyramid), OLLA_T(test_random_heuristic_bounds))
