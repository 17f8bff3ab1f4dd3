/* The placement stops within its work limit: on generated training steps
 * (tests/unit/place_gen.h), whose splits and searches used to charge past
 * their share (a 1e5-unit limit once ended after 1.6e6-5.3e6 units, a
 * 1e8-unit one after up to 1.13e8), every whole placement, every exact
 * search and every split spends at most the units it was given, and still
 * returns a valid placement. Asserted on work units only, with no
 * deadline. */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "place_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* The generated steps checked: family, seed, batch, in-place ReLU. */
static const int STEPS[][4] = {
    {PLACE_GEN_DENSENET, 5, 1, 0}, {PLACE_GEN_INCEPTION, 3, 32, 0}, {PLACE_GEN_DENSENET, 7, 1, 1},
    {PLACE_GEN_INCEPTION, 5, 32, 0}};
enum { NSTEPS = sizeof STEPS / sizeof STEPS[0] };
/* The work limits tried, smallest first. */
static const long long LIMITS[] = {1, 1000, 100000, 1000000, 10000000, 100000000};
enum { NLIMITS = sizeof LIMITS / sizeof LIMITS[0] };

/* Generated step k as buffers; returns their number (0 when it failed). */
static size_t step_buffers(int k, olla_buffer **b)
{
    long n = place_gen_train(STEPS[k][0], STEPS[k][2], STEPS[k][3], (uint64_t)STEPS[k][1], b);
    OLLA_CHECK(n > 100);
    return n > 0 ? (size_t)n : 0;
}

/* Step k as items in units of 64 bytes (what the placement works on). */
static size_t step_items(int k, olla_pitem **it)
{
    olla_buffer *b = NULL;
    size_t n = step_buffers(k, &b), m = 0;
    *it = malloc((n + 1) * sizeof **it);
    OLLA_CHECK(*it != NULL);
    for (size_t i = 0; i < n && *it; i++)
        if (b[i].size > 0 && b[i].upper > b[i].lower)
            (*it)[m++] = (olla_pitem){b[i].lower, b[i].upper, (b[i].size + 63) / 64};
    free(b);
    return m;
}

/* The whole placement: at most the limit, a valid arena at or above max
 * live, stopped by the budget whenever it is not proven optimal. */
OLLA_TEST(test_placement_within_work_limit)
{
    for (int k = 0; k < NSTEPS; k++) {
        olla_buffer *b = NULL;
        size_t n = step_buffers(k, &b);
        int64_t live = olla_place_max_live(b, n, 64);
        for (int l = 0; l < NLIMITS && n > 0; l++) {
            olla_place_options opt = {64, 0, 0, 0, LIMITS[l]};
            olla_place_result res;
            olla_error err = {0};
            OLLA_CHECK(olla_place(b, n, &opt, &res, &err) == OLLA_OK);
            if (res.work > LIMITS[l])
                fprintf(stderr, "step %d: %lld units against a limit of %lld\n", k, res.work, LIMITS[l]);
            OLLA_CHECK(res.work <= LIMITS[l]);
            OLLA_CHECK(res.arena_bytes >= live);
            OLLA_CHECK(res.status == OLLA_PLACE_OPTIMAL || res.stopped_by == OLLA_PLACE_STOPPED_BUDGET);
            OLLA_CHECK(olla_place_validate(b, n, res.arena_bytes, 64, &err) == OLLA_OK);
        }
        free(b);
    }
}

/* The exact search and the split at max live on their own: each charges at
 * most its budget, and what it finds is valid. */
OLLA_TEST(test_search_and_split_within_budget)
{
    for (int k = 0; k < NSTEPS; k++) {
        olla_pitem *it = NULL;
        size_t n = step_items(k, &it);
        int64_t live = olla_place_items_max_live(it, n);
        int64_t *off = malloc((n + 1) * sizeof *off);
        OLLA_CHECK(off != NULL);
        for (int l = 0; l < NLIMITS && off && n > 0; l++) {
            olla_pwork w = {LIMITS[l], 0, 0, 0};
            int r = olla_place_search(it, n, live, &w, off);
            OLLA_CHECK(w.used <= w.limit);
            OLLA_CHECK(r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_GAVE_UP);
            if (r == OLLA_SEARCH_FOUND)
                olla_test_check_valid(it, n, off, live);
            olla_pwork s = {LIMITS[l], 0, 0, 0};
            r = olla_place_split(it, n, live, &s, off, NULL);
            OLLA_CHECK(s.used <= s.limit);
            if (r == OLLA_SEARCH_FOUND)
                olla_test_check_valid(it, n, off, live);
        }
        free(off);
        free(it);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_placement_within_work_limit), OLLA_T(test_search_and_split_within_budget))
