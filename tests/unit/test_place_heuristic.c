/* The greedy heuristics on their own. */
#include <stdio.h>
#include <stdlib.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "place_gen.h"
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

/* Best fit by start time from its definition: the buffers by start (larger
 * first, then by index); each sees the placed ones still live at its start,
 * sorted by offset (at one offset, those of size 0 first), and goes to the
 * lowest offset of the tightest free stretch between them (from 0; a
 * stretch ends at the next one's offset and starts at the highest end
 * below it, so one of size 0 at an offset splits the stretch there) that
 * holds it, else on top of them all. O(n^2 log n): a reference for small
 * inputs. */
static void best_fit_reference(const olla_pitem *it, size_t n, int64_t *off)
{
    int *ord = malloc(n * sizeof *ord), *live = malloc(n * sizeof *live);
    char *placed = calloc(n, 1);
    for (size_t i = 0; i < n; i++)
        ord[i] = (int)i;
    for (size_t a = 1; a < n; a++) /* insertion sort by (lower, -size, index) */
        for (size_t b = a; b > 0; b--) {
            const olla_pitem *x = &it[ord[b - 1]], *y = &it[ord[b]];
            if (x->lower < y->lower || (x->lower == y->lower && (x->size > y->size ||
                                                                 (x->size == y->size && ord[b - 1] < ord[b]))))
                break;
            int t = ord[b - 1];
            ord[b - 1] = ord[b];
            ord[b] = t;
        }
    for (size_t e = 0; e < n; e++) {
        int i = ord[e];
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (placed[j] && it[j].upper > it[i].lower)
                live[k++] = (int)j;
        for (size_t a = 1; a < k; a++) /* by offset, then size */
            for (size_t b = a; b > 0 && (off[live[b - 1]] > off[live[b]] ||
                                         (off[live[b - 1]] == off[live[b]] && it[live[b - 1]].size > it[live[b]].size));
                 b--) {
                int t = live[b - 1];
                live[b - 1] = live[b];
                live[b] = t;
            }
        int64_t below = 0, best = -1, best_len = 0;
        for (size_t a = 0; a < k; a++) {
            int64_t len = off[live[a]] - below;
            if (len >= it[i].size && (best < 0 || len < best_len)) {
                best = below;
                best_len = len;
            }
            if (off[live[a]] + it[live[a]].size > below)
                below = off[live[a]] + it[live[a]].size;
        }
        off[i] = best >= 0 ? best : below;
        placed[i] = 1;
    }
    free(ord);
    free(live);
    free(placed);
}

/* Offset for offset, a (the code under test) equals b (the reference). */
static void check_same_offsets(const int64_t *a, const int64_t *b, size_t n)
{
    size_t same = 0;
    while (same < n && a[same] == b[same])
        same++;
    OLLA_CHECK(same == n);
}

/* The nb generated buffers as items, into a new array of *n: only those
 * with a size when sized_only, with a lifetime too when live_only. */
static olla_pitem *generated_items(const olla_buffer *buf, long nb, int sized_only, int live_only, size_t *n)
{
    olla_pitem *it = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *it);
    *n = 0;
    for (long i = 0; it && i < nb; i++)
        if ((!sized_only || buf[i].size > 0) && (!live_only || buf[i].upper > buf[i].lower))
            it[(*n)++] = (olla_pitem){buf[i].lower, buf[i].upper, buf[i].size};
    return it;
}

/* the sweep's best fit against the reference, offset for offset */
static void check_best_fit(const olla_pitem *it, size_t n)
{
    int64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    int64_t arena = olla_place_sweep_best_fit(it, n, a);
    best_fit_reference(it, n, b);
    check_same_offsets(a, b, n);
    OLLA_CHECK_EQ_I64(arena, olla_place_items_arena(it, b, n));
    olla_test_check_valid(it, n, a, arena);
    free(a);
    free(b);
}

/* Best fit by start time (olla_place_sweep_best_fit, a treap of gaps) gives
 * the offsets of its definition: random lifetimes with many equal sizes and
 * gaps (ties), buffers live for no step, buffers of size 0 (in one trial in
 * three), a long-lived stack, and generated training steps and compiler
 * traces with their buffers of size 0. */
OLLA_TEST(test_sweep_best_fit_matches_definition)
{
    uint64_t x = 11;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + olla_test_rng_below(&x, 300);
        int64_t span = 1 + olla_test_rng_range(&x, 0, 120), sizes = 1 + olla_test_rng_range(&x, 0, 12);
        olla_pitem it[300];
        for (size_t i = 0; i < n; i++) {
            int64_t l = olla_test_rng_range(&x, 0, span), len = olla_test_rng_range(&x, 0, 30);
            if (trial % 4 == 0 && i % 7 == 0)
                len = span + 10; /* outputs: live to the end */
            it[i] = (olla_pitem){l, l + len, 1 + olla_test_rng_range(&x, 0, sizes) * (trial % 3 == 0 ? 64 : 1)};
            if (trial % 3 == 2 && olla_test_rng_below(&x, 4) == 0)
                it[i].size = 0;
        }
        check_best_fit(it, n);
    }
    for (int family = 0; family < 2; family++) {
        olla_buffer *buf = NULL;
        long nb = family ? place_gen_compiler(2000, 5, &buf) : place_gen_train(PLACE_GEN_DENSENET, 2, 1, 3, &buf);
        OLLA_CHECK(nb > 0);
        size_t n = 0;
        olla_pitem *it = generated_items(buf, nb, 0, 0, &n);
        check_best_fit(it, n);
        free(it);
        free(buf);
    }
}

/* First fit (or best fit) from its definition: the buffers in the given
 * order, each at its pinned offset or at the lowest offset (from 0) where
 * it overlaps no placed buffer whose lifetime meets its own (lower <
 * other's upper and other's lower < upper: a lifetime [s, s) meets those
 * that hold s inside); best fit: at the lowest offset of the tightest free
 * stretch between those buffers that holds it (a stretch ends at the next
 * one's offset and starts at the highest end below it, so one of size 0
 * splits a stretch; an empty stretch holds nothing, not even a buffer of
 * size 0), else on top of them all. One live for no step, [a, a),
 * is placed as one live at step a alone, [a, a + 1), would be. O(n^2 log n). */
static void greedy_reference(const olla_pitem *it, size_t n, const int *order, const int64_t *pinned,
                             int best_fit, int64_t *off)
{
    int *live = malloc((n + 1) * sizeof *live);
    char *placed = calloc(n + 1, 1);
    for (size_t e = 0; e < n; e++) {
        int i = order[e];
        if (pinned && pinned[i] >= 0) {
            off[i] = pinned[i];
            placed[i] = 1;
            continue;
        }
        size_t k = 0;
        int64_t upper = it[i].upper > it[i].lower ? it[i].upper : it[i].lower + 1;
        for (size_t j = 0; j < n; j++)
            if (placed[j] && it[j].lower < upper && it[i].lower < it[j].upper)
                live[k++] = (int)j;
        for (size_t a = 1; a < k; a++) /* by offset */
            for (size_t b = a; b > 0 && off[live[b - 1]] > off[live[b]]; b--) {
                int t = live[b - 1];
                live[b - 1] = live[b];
                live[b] = t;
            }
        int64_t y = 0, best = -1, best_len = 0;
        for (size_t a = 0; a < k && (best_fit || off[live[a]] < y + it[i].size); a++) {
            int64_t len = off[live[a]] - y;
            if (best_fit && len > 0 && len >= it[i].size && (best < 0 || len < best_len)) {
                best = y;
                best_len = len;
            }
            if (off[live[a]] + it[live[a]].size > y)
                y = off[live[a]] + it[live[a]].size;
        }
        off[i] = best >= 0 ? best : y;
        placed[i] = 1;
    }
    free(live);
    free(placed);
}

/* The greedy first and best fit (their unions of address ranges per tree
 * node) give the offsets of the definition: random orders and lifetimes
 * with many equal sizes, long-lived stacks, pinned buffers, buffers of size
 * 0 and buffers live for no step (one trial in two), best fit in two trials
 * of five; generated training steps and compiler traces with their buffers
 * of size 0, by both. */
OLLA_TEST(test_greedy_first_fit_matches_definition)
{
    uint64_t x = 23;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + olla_test_rng_below(&x, 300);
        int64_t span = 1 + olla_test_rng_range(&x, 0, 150), sizes = 1 + olla_test_rng_range(&x, 0, 12);
        olla_pitem it[300];
        int order[300];
        int64_t pinned[300], a[300], b[300], stack = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t l = olla_test_rng_range(&x, 0, span), len = 1 + olla_test_rng_range(&x, 0, 40);
            if (trial % 4 == 0 && i % 5 == 0)
                len = span + 10; /* outputs: live to the end */
            it[i] = (olla_pitem){l, l + len, 1 + olla_test_rng_range(&x, 0, sizes)};
            if (trial % 2 == 1 && olla_test_rng_below(&x, 5) == 0)
                it[i].size = 0;
            if (trial % 2 == 1 && olla_test_rng_below(&x, 5) == 0)
                it[i].upper = it[i].lower; /* live for no step */
            order[i] = (int)i;
            pinned[i] = -1;
        }
        for (size_t i = n; i-- > 1;) { /* a random order */
            size_t j = olla_test_rng_below(&x, (uint32_t)(i + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        if (trial % 3 == 1) /* a few pinned, stacked from 0, first in the order */
            for (size_t e = 0; e < n / 10; e++) {
                pinned[order[e]] = stack;
                stack += it[order[e]].size;
            }
        int best_fit = trial % 5 >= 3;
        int64_t arena = olla_place_greedy(it, n, order, trial % 3 == 1 ? pinned : NULL, best_fit, a);
        greedy_reference(it, n, order, trial % 3 == 1 ? pinned : NULL, best_fit, b);
        check_same_offsets(a, b, n);
        OLLA_CHECK_EQ_I64(arena, olla_place_items_arena(it, b, n));
    }
    for (int family = 0; family < 4; family++) {
        olla_buffer *buf = NULL;
        int best_fit = family >= 2;
        long nb = family % 2 ? place_gen_compiler(2000, 9, &buf) : place_gen_train(PLACE_GEN_INCEPTION, 1, 1, 4, &buf);
        OLLA_CHECK(nb > 0);
        size_t cap = (size_t)(nb > 0 ? nb : 1), n = 0;
        olla_pitem *it = generated_items(buf, nb, 0, 0, &n);
        int *order = malloc(cap * sizeof *order);
        int64_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
        for (size_t i = 0; i < n; i++) /* greedy by size: larger first */
            order[i] = (int)i;
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && it[order[j - 1]].size < it[order[j]].size; j--) {
                int t = order[j - 1];
                order[j - 1] = order[j];
                order[j] = t;
            }
        int64_t arena = olla_place_greedy(it, n, order, NULL, best_fit, a);
        greedy_reference(it, n, order, NULL, best_fit, b);
        check_same_offsets(a, b, n);
        olla_test_check_valid(it, n, a, arena);
        free(it);
        free(order);
        free(a);
        free(b);
        free(buf);
    }
}

/* The promotion rounds on parts over 10,000 buffers: small random
 * instances that the portfolio alone leaves above max live, each joined by
 * 10,001 one-step buffers of size 1 after it in time (too many buffers for
 * the exact searches, which the rounds are for). Then the arena is never
 * above the portfolio's alone, the placement is valid, and the rounds
 * close some of the gaps (taking first the buffers that ended above max
 * live lets the greedy pass find them room). */
OLLA_TEST(test_promotion_closes_gaps)
{
    enum { FILL = 10001, SMALL = 12 };
    static olla_pitem it[SMALL + FILL];
    static int64_t off[SMALL + FILL], alone_off[SMALL];
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int gaps = 0, closed = 0;
    for (int trial = 0; trial < 20000 && gaps < 40 && closed < 2; trial++) {
        int n = (int)olla_test_rng_range(&rng, 5, SMALL);
        for (int i = 0; i < n; i++) {
            int64_t l = olla_test_rng_range(&rng, 0, 9);
            it[i] = (olla_pitem){l, l + olla_test_rng_range(&rng, 1, 8), olla_test_rng_range(&rng, 1, 12)};
        }
        int64_t live = olla_place_items_max_live(it, (size_t)n);
        int64_t alone = olla_place_heuristic(it, (size_t)n, alone_off, live, &(olla_pwork){0, 0, 0, 0}, 0);
        if (alone <= live)
            continue;
        gaps++;
        for (int k = 0; k < FILL; k++)
            it[n + k] = (olla_pitem){100 + k, 101 + k, 1};
        size_t m = (size_t)n + FILL;
        int64_t a = olla_place_heuristic(it, m, off, live, &(olla_pwork){0, 0, 0, 0}, 0);
        OLLA_CHECK(a >= live && a <= alone);
        olla_test_check_valid(it, m, off, a);
        closed += a == live;
    }
    fprintf(stderr, "promotion: %d of %d gaps closed\n", closed, gaps);
    OLLA_CHECK(closed >= 1);
}

OLLA_TEST_MAIN(OLLA_T(test_training_pyramid), OLLA_T(test_random_heuristic_bounds),
               OLLA_T(test_sweep_best_fit_matches_definition), OLLA_T(test_greedy_first_fit_matches_definition),
               OLLA_T(test_promotion_closes_gaps))
