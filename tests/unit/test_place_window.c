/* Placement from windows of time around the busiest times
 * (solver/place_window.c). On small instances (a tight core of a few steps
 * with light buffers before and after it and one buffer live throughout)
 * at capacity max live, every placement it returns is valid within the
 * capacity (the library's validator) and every proof that nothing fits is
 * confirmed by brute force; both outcomes must occur. A window whose sides
 * are too many is not tried; its buffers are placed by the split first,
 * and when the sides do not fit around a placement, by the exact search
 * forwards, then backwards in time. And a generated
 * DenseNet-style training step that only the searches backwards in time
 * placed at max live (after 1.2e10 units) is proven optimal within half
 * the default budget (judged by work units, not time). */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "place_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* The budget `olla-onnx place` derives from its default 30 s time limit. */
#define DEFAULT_WORK ((long long)(30.0 / 2 * (double)OLLA_PLACE_WORK_PER_SECOND) + 1)

/* A core of nine buffers over four steps whose max live is 11 but which
 * needs 12 (test_place_bound.c checks it by brute force): {lower, upper,
 * size}. */
enum { GADGET = 9, CORE_AT = 10, MAX_N = 16 };
static const int64_t gadget[GADGET][3] = {{1, 3, 2}, {2, 4, 1}, {1, 4, 2}, {0, 2, 2}, {0, 3, 3},
                                          {0, 1, 6}, {1, 2, 2}, {2, 3, 3}, {3, 4, 8}};

/* One instance into it (MAX_N room): the gadget as the core when gadget_core
 * is set, else five random buffers over four steps; one buffer of size 1
 * live throughout; two light buffers wholly before the core and two wholly
 * after it. Returns the number of buffers. */
static int make_instance(uint64_t *rng, int gadget_core, olla_pitem *it)
{
    int n = 0;
    if (gadget_core) {
        for (int i = 0; i < GADGET; i++)
            it[n++] = (olla_pitem){CORE_AT + gadget[i][0], CORE_AT + gadget[i][1], gadget[i][2]};
    } else {
        for (int i = 0; i < 5; i++) {
            int64_t lo = olla_test_rng_range(rng, 0, 3);
            it[n++] = (olla_pitem){CORE_AT + lo, CORE_AT + olla_test_rng_range(rng, lo + 1, 4),
                                   olla_test_rng_range(rng, 1, 5)};
        }
    }
    it[n++] = (olla_pitem){0, 2 * CORE_AT + 4, 1};
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < 2; i++) {
            int64_t base = side ? CORE_AT + 5 : 0, lo = base + olla_test_rng_range(rng, 0, 6);
            it[n++] = (olla_pitem){lo, lo + olla_test_rng_range(rng, 1, 3), olla_test_rng_range(rng, 1, 2)};
        }
    return n;
}

OLLA_TEST(test_window_outcomes_match_brute_force)
{
    uint64_t rng = 0x5eed2025;
    int found = 0, none = 0;
    for (int trial = 0; trial < 60; trial++) {
        olla_pitem it[MAX_N];
        int64_t off[MAX_N], brute[MAX_N];
        int n = make_instance(&rng, trial % 3 == 0, it);
        int64_t cap = olla_place_items_max_live(it, (size_t)n);
        int fits = olla_test_fits_brute(it, n, brute, 0, cap, NULL);
        for (int pass = 0; pass < 2; pass++) {
            olla_pwork w = {100000000LL, 0, 0, 0};
            int r = olla_place_window(it, (size_t)n, cap, &w, off, NULL, pass);
            OLLA_CHECK(r != OLLA_SEARCH_NOMEM && w.used <= w.limit);
            if (r == OLLA_SEARCH_FOUND) {
                found++;
                OLLA_CHECK(fits);
                olla_test_check_valid(it, (size_t)n, off, cap);
            } else if (r == OLLA_SEARCH_NONE) {
                none++;
                OLLA_CHECK(!fits);
            }
        }
    }
    OLLA_CHECK(found > 0);
    OLLA_CHECK(none > 0);
}

/* Through olla_place: the gadget's window proves that max live (11 per
 * copy) is out of reach, so the bound rises to 12 and the arena is proven
 * optimal there. */
OLLA_TEST(test_window_raises_the_bound)
{
    uint64_t rng = 0x0b0e;
    olla_pitem it[MAX_N];
    int n = make_instance(&rng, 1, it);
    olla_buffer b[MAX_N];
    for (int i = 0; i < n; i++)
        b[i] = (olla_buffer){it[i].lower, it[i].upper, 64 * it[i].size, 0};
    int64_t off[MAX_N];
    int64_t best = olla_place_items_max_live(it, (size_t)n);
    while (!olla_test_fits_brute(it, n, off, 0, best, NULL))
        best++;
    olla_place_options opt = {64, 0, 0, 0, DEFAULT_WORK};
    olla_place_result res;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, (size_t)n, &opt, &res, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(res.arena_bytes, 64 * best);
    OLLA_CHECK_EQ_I64(res.lower_bound, 64 * best);
    OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(olla_place_validate(b, (size_t)n, res.arena_bytes, 64, &err) == OLLA_OK);
}

/* A window whose sides hold more than OLLA_WINDOW_MAX_SIDES buffers is not
 * tried; with exactly that many the same window places everything. The
 * busiest time is one step with a buffer of 10 live; before it, one-step
 * buffers of 1, one a step. */
OLLA_TEST(test_window_skips_big_sides)
{
    for (size_t extra = 0; extra < 2; extra++) {
        size_t sides = OLLA_WINDOW_MAX_SIDES + extra, n = sides + 1;
        olla_pitem *it = malloc(n * sizeof *it);
        int64_t *off = malloc(n * sizeof *off);
        OLLA_CHECK(it && off);
        if (!it || !off) {
            free(it);
            free(off);
            return;
        }
        for (size_t i = 0; i < sides; i++)
            it[i] = (olla_pitem){(int64_t)i, (int64_t)i + 1, 1};
        it[sides] = (olla_pitem){(int64_t)sides, (int64_t)sides + 1, 10};
        for (int pass = 0; pass < 2; pass++) {
            olla_pwork w = {100000000LL, 0, 0, 0};
            int r = olla_place_window(it, n, 10, &w, off, NULL, pass);
            if (extra) {
                OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_GAVE_UP);
            } else {
                OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_FOUND);
                if (r == OLLA_SEARCH_FOUND)
                    olla_test_check_valid(it, n, off, 10);
            }
        }
        free(it);
        free(off);
    }
}

/* The log lines of a window's search (olla_place_window's logger). */
typedef struct window_log {
    int backwards;      /* a window was searched backwards in time */
    int placed_after;   /* and then the sides were placed */
    int by_split;       /* the first placement of a window was the split's */
    char first[32];     /* the first window tried, "a..b" */
    char placed[32];    /* the window whose sides were placed */
} window_log;

static void window_log_line(void *ctx, olla_log_level level, const char *message)
{
    window_log *wl = ctx;
    (void)level;
    char span[32];
    if (sscanf(message, "place: window %31[0-9.]", span) == 1) {
        if (!wl->first[0])
            snprintf(wl->first, sizeof wl->first, "%s", span);
        if (strstr(message, "sides placed"))
            snprintf(wl->placed, sizeof wl->placed, "%s", span);
    }
    if (strstr(message, "backwards in time ("))
        wl->backwards = 1;
    else if (wl->backwards && strstr(message, "sides placed"))
        wl->placed_after = 1;
    if (strstr(message, " by the split (") && strstr(message, ": found after"))
        wl->by_split = 1;
}

/* it[0..n) (at most MAX_N) through the windows' first pass at capacity
 * max live, which must be want: the window places everything, valid at max
 * live; *wl gets what its log said. */
static void window_places_at_max_live(const olla_pitem *it, size_t n, int64_t want, window_log *wl)
{
    int64_t off[MAX_N];
    int64_t cap = olla_place_items_max_live(it, n);
    OLLA_CHECK(n <= MAX_N);
    OLLA_CHECK_EQ_I64(cap, want);
    *wl = (window_log){0, 0, 0, "", ""};
    olla_logger log = {window_log_line, wl, OLLA_LOG_DETAIL};
    olla_pwork w = {100000000LL, 0, 0, 0};
    int r = n <= MAX_N ? olla_place_window(it, n, cap, &w, off, &log, 0) : OLLA_SEARCH_GAVE_UP;
    OLLA_CHECK_EQ_I64(r, OLLA_SEARCH_FOUND);
    if (r == OLLA_SEARCH_FOUND)
        olla_test_check_valid(it, n, off, cap);
}

/* Ten buffers over thirteen steps, max live 13: the split's first rounds
 * place the window's buffers, and the sides fit around them. */
OLLA_TEST(test_window_placed_by_the_split)
{
    const olla_pitem it[] = {{7, 9, 1}, {4, 9, 3}, {9, 11, 3}, {7, 8, 1}, {9, 13, 2},
                             {1, 3, 2}, {2, 3, 2}, {6, 11, 4}, {0, 1, 1}, {3, 8, 4}};
    window_log wl;
    window_places_at_max_live(it, sizeof it / sizeof it[0], 13, &wl);
    OLLA_CHECK(wl.by_split && !wl.backwards);
}

/* Twelve buffers over fourteen steps, max live 10, where the sides fit
 * neither around the window's placement by the split nor around the exact
 * search's forwards in time, and do around the one found backwards: the
 * window then places everything, valid at max live (found by a search over
 * random instances of this size). */
OLLA_TEST(test_window_searched_backwards_when_the_sides_do_not_fit)
{
    const olla_pitem it[] = {{7, 12, 2}, {9, 12, 2}, {5, 8, 3}, {4, 6, 4}, {6, 9, 2}, {8, 9, 3},
                             {7, 12, 3}, {0, 5, 4},  {9, 14, 2}, {3, 4, 3}, {6, 7, 4}, {3, 7, 1}};
    window_log wl;
    window_places_at_max_live(it, sizeof it / sizeof it[0], 10, &wl);
    OLLA_CHECK(wl.backwards && wl.placed_after);
}

/* Fourteen buffers over twenty steps, max live 795 at step 3 and 791
 * (99.497%) at step 4: the windows at 970-990 per mille are steps 3..4,
 * whose placements the sides fit around in none of the three ways; the
 * narrowest, at 995, is step 3 alone, and the sides fit around its block
 * (found by a search over random instances of this size). */
OLLA_TEST(test_window_narrowest_places_what_the_wider_do_not)
{
    const olla_pitem it[] = {{7, 9, 237},  {12, 20, 269}, {0, 4, 145},  {3, 4, 312},  {3, 6, 153},
                             {4, 11, 289}, {4, 12, 86},   {4, 7, 183},  {8, 13, 70},  {14, 18, 250},
                             {3, 4, 105},  {2, 10, 80},   {12, 18, 23}, {10, 16, 225}};
    window_log wl;
    window_places_at_max_live(it, sizeof it / sizeof it[0], 795, &wl);
    OLLA_CHECK(strcmp(wl.first, "3..4") == 0);
    OLLA_CHECK(strcmp(wl.placed, "3..3") == 0);
}

/* DenseNet-style seed 5 at batch 1, both sharing modes: the split at the
 * busiest time and the search at max live give up; before the windows the
 * search backwards in time placed it at max live after about 1.2e10 units.
 * A window's first pass places it now: proven optimal in under 6e9 units.
 * The normal build only (minutes under the sanitizers). */
OLLA_TEST(test_densenet_step_placed_from_a_window)
{
    if (olla_test_quick())
        return;
    for (int inplace = 0; inplace < 2; inplace++) {
        olla_buffer *b = NULL;
        long n = place_gen_train(PLACE_GEN_DENSENET, 1, inplace, 5, &b);
        OLLA_CHECK(n > 100);
        if (n <= 0)
            continue;
        olla_place_options opt = {64, 0, 0, 0, DEFAULT_WORK};
        olla_place_result res;
        olla_error err = {0};
        OLLA_CHECK(olla_place(b, (size_t)n, &opt, &res, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(res.arena_bytes, olla_place_max_live(b, (size_t)n, 64));
        OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL);
        OLLA_CHECK(res.work < 6000000000LL);
        OLLA_CHECK(olla_place_validate(b, (size_t)n, res.arena_bytes, 64, &err) == OLLA_OK);
        free(b);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_window_outcomes_match_brute_force), OLLA_T(test_window_raises_the_bound),
               OLLA_T(test_window_skips_big_sides), OLLA_T(test_window_placed_by_the_split),
               OLLA_T(test_window_searched_backwards_when_the_sides_do_not_fit),
               OLLA_T(test_window_narrowest_places_what_the_wider_do_not),
               OLLA_T(test_densenet_step_placed_from_a_window))
