/* olla-onnx: the placement driver. The buffers are first cut into parts
 * at the times no buffer is live across (minimalloc's sections): the parts
 * never meet, so each is placed on its own from address 0 and the arena is
 * the largest part's. In each part: the heuristic portfolio; then (when
 * minimizing) the split at the busiest time aimed at the lower bound (its
 * first rounds), the exact search at the lower bound with a small share,
 * windows of time around the busiest times with a small budget
 * (place_window.c), and the split's later rounds (the search's probe and
 * the split's later rounds only when the first rounds leave attempts for
 * the later ones); then the exact search (when its first probe, at
 * the lower bound, gives up: the windows with a larger budget, then the
 * split and that probe backwards in time), which
 * either reaches the lower bound, proves a capacity infeasible, or tightens
 * the arena by bisection; then the address ILP when the search could not
 * prove optimality. A part is done as soon as its arena reaches the whole
 * instance's max live. All searches share one deterministic work budget (place_internal.h), split
 * between parts by their number of buffers and between phases by fixed
 * shares, so the result depends on the buffers and the budget only; the
 * time limit is a safety net. All work is in units of the alignment times
 * the greatest common divisor of the aligned sizes (an optimal placement
 * exists with every offset a multiple of it), so every offset is a multiple
 * of the alignment and no capacity between two multiples of the unit is
 * ever tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"
#include "util/olla_arith.h"

/* Parts with more buffers are big: the split, the busy windows and the
 * searches around them did not pay there (on compiler traces and on LLM
 * training steps they spent whole budgets and found nothing: the windows'
 * sides, thousands of buffers around hundreds fixed, are as hard as the
 * whole), so a big part gets, after the heuristics, the exact search's
 * probe at the lower bound (which places LLM training steps at max live)
 * and the windows' bound, and no bisection: a probe above the bound is as
 * costly and no likelier to pay. */
#define OLLA_PLACE_BIG_PART 10000
/* The ILP is only tried on this many buffers or fewer. */
#define OLLA_PLACE_ILP_MAX_BUFFERS 400
/* Budget without a time limit: this many seconds' worth. */
#define OLLA_PLACE_DEFAULT_SECONDS 30.0
/* A probe of the bisection gets a quarter of what is left, but not less
 * than this (else all that is left). */
#define OLLA_PLACE_MIN_PROBE (OLLA_PLACE_WORK_PER_SECOND / 50)

/* place_part's capacity when the heuristics alone minimize
 * (olla_place_heuristics); -1 minimizes, one >= 0 is fitted within. */
#define CAP_HEURISTICS_ONLY (-2)

/* One part being placed. */
typedef struct driver {
    const olla_pitem *it;
    size_t n;
    olla_pwork work;
    const olla_logger *log;
    int64_t *best, *tmp;
    int64_t ub, lb;  /* best arena, proven bound */
    int64_t target;  /* the whole instance's max live: no need to go lower */
} driver;

static void keep_if_better(driver *d)
{
    int64_t a = olla_place_items_arena(d->it, d->tmp, d->n);
    if (a < d->ub) {
        d->ub = a;
        memcpy(d->best, d->tmp, d->n * sizeof *d->best);
    }
}

/* Runs the search at capacity cap with at most units of work, on the
 * buffers mirrored in time when reversed. */
static int try_cap_dir(driver *d, int64_t cap, long long units, int reversed)
{
    olla_pwork part = olla_pwork_part(&d->work, units);
    double t = olla_now();
    int r = reversed ? olla_place_search_reversed(d->it, d->n, cap, &part, d->tmp)
                     : olla_place_search(d->it, d->n, cap, &part, d->tmp);
    olla_pwork_join(&d->work, &part);
    char large[160] = "";
    if (r == OLLA_SEARCH_TOO_LARGE && d->log)
        snprintf(large, sizeof large,
                 "too large to search (its section lists would hold %lld entries, above OLLA_SEARCH_MAX_ENTRIES,"
                 " %lld; the best placement so far stays)",
                 olla_place_section_entries(d->it, d->n), (long long)OLLA_SEARCH_MAX_ENTRIES);
    olla_log(d->log, OLLA_LOG_DETAIL, "place: search%s at %lld: %s after %lld units, %.3f s",
             reversed ? " backwards in time" : "", (long long)cap,
             r == OLLA_SEARCH_FOUND ? "found" : r == OLLA_SEARCH_NONE ? "none exists"
             : r == OLLA_SEARCH_GAVE_UP ? "gave up" : r == OLLA_SEARCH_NOMEM ? "out of memory" : large,
             part.used, olla_now() - t);
    if (r == OLLA_SEARCH_FOUND)
        keep_if_better(d);
    else if (r == OLLA_SEARCH_NONE && cap + 1 > d->lb)
        d->lb = cap + 1; /* a proof that nothing fits within cap */
    return r;
}

static int try_cap(driver *d, int64_t cap, long long units)
{
    return try_cap_dir(d, cap, units, 0);
}

static int stuck(driver *d)
{
    return olla_pwork_left(&d->work) == 0 || olla_pwork_late(&d->work);
}

/* The probe at the lower bound gets this fraction of the part's whole
 * budget (3e9 units of the default 15e9), whatever the split spent before. */
#define OLLA_PLACE_BOUND_PROBE_SHARE 5
/* The other probes of the bisection get 1 / OLLA_PLACE_BISECT_SHARE of the
 * budget left, and the split at the busiest time 1 / OLLA_PLACE_SPLIT_SHARE. */
#define OLLA_PLACE_BISECT_SHARE 4
#define OLLA_PLACE_SPLIT_SHARE 3

/* Minimizes: a probe at the lower bound (reaching it ends everything), then
 * bisection between the proven bound and the best arena. The first probe
 * gets a fifth of the part's budget (at most what is left); when it gives
 * up, the windows' second pass gets a third, then the split and the same
 * probe backwards in time (place_reverse.c) a fifth each (at most what is
 * left); the others a quarter of the budget left. A probe that
 * gives up sends the bisection higher without raising the proven bound. */
static int split_backwards(driver *d, long long units);
static int busy_window(driver *d, int pass);
static int minimize(driver *d)
{
    int64_t lo = d->lb, hi = d->ub - 1; /* the optimum, if below ub, is in [lo, hi] */
    int first = 1;
    while (lo <= hi && d->ub > d->target && !stuck(d)) {
        int64_t cap = first ? lo : lo + (hi - lo) / 2;
        long long units = olla_pwork_left(&d->work) / OLLA_PLACE_BISECT_SHARE;
        if (first) {
            units = d->work.limit / OLLA_PLACE_BOUND_PROBE_SHARE;
            if (units > olla_pwork_left(&d->work))
                units = olla_pwork_left(&d->work);
        }
        if (units < OLLA_PLACE_MIN_PROBE)
            units = olla_pwork_left(&d->work);
        int r = try_cap(d, cap, units);
        if (first && r == OLLA_SEARCH_GAVE_UP && !stuck(d)) {
            /* the busy windows' second pass, then backwards in time: the
             * split, then the same probe, each with the same share (at
             * most what is left) */
            int s = busy_window(d, 1);
            if (s == OLLA_SEARCH_NOMEM || s == OLLA_SEARCH_FOUND || s == OLLA_SEARCH_NONE) {
                r = s; /* out of memory, at the bound, or nothing fits at cap */
            } else {
                if (units > olla_pwork_left(&d->work))
                    units = olla_pwork_left(&d->work);
                s = split_backwards(d, units);
                if (s == -2)
                    return OLLA_SEARCH_NOMEM;
                r = s == 1 ? OLLA_SEARCH_FOUND : OLLA_SEARCH_GAVE_UP;
            }
            if (r == OLLA_SEARCH_GAVE_UP) {
                if (units > olla_pwork_left(&d->work))
                    units = olla_pwork_left(&d->work);
                r = try_cap_dir(d, cap, units, 1);
            }
        }
        first = 0;
        if (r == OLLA_SEARCH_NOMEM)
            return OLLA_SEARCH_NOMEM;
        if (r == OLLA_SEARCH_TOO_LARGE)
            break;
        if (r == OLLA_SEARCH_FOUND) {
            hi = d->ub - 1;
        } else if (r == OLLA_SEARCH_NONE) {
            lo = cap + 1;
            if (lo > d->lb)
                d->lb = lo;
        } else {
            lo = cap + 1; /* unknown: look higher, without raising the proven bound */
        }
    }
    return 0;
}

/* The split at the busiest time, aiming straight at the lower bound with
 * at most units of work: its rounds from where pr stands up to round
 * rounds (all of them from a new pr with OLLA_PLACE_SPLIT_ROUNDS). */
static int split(driver *d, long long units, olla_split_progress *pr, int rounds)
{
    int from = pr->round;
    pr->until = rounds;
    olla_pwork part = olla_pwork_part(&d->work, units);
    int r = olla_place_split_rounds(d->it, d->n, d->lb > d->target ? d->lb : d->target, pr, &part, d->tmp, d->log);
    olla_pwork_join(&d->work, &part);
    olla_log(d->log, OLLA_LOG_DETAIL, "place: split%s: %s after %lld units",
             rounds < OLLA_PLACE_SPLIT_ROUNDS ? "'s first rounds" : from > 0 ? "'s later rounds" : "",
             r == OLLA_SEARCH_FOUND ? "found" : r == OLLA_SEARCH_GAVE_UP ? "gave up" : "none", part.used);
    if (r == 1)
        keep_if_better(d);
    return r;
}

/* The split of the buffers mirrored in time (place_reverse.c), with at
 * most units of work. */
static int split_backwards(driver *d, long long units)
{
    olla_pwork part = olla_pwork_part(&d->work, units);
    int r = olla_place_split_reversed(d->it, d->n, d->lb > d->target ? d->lb : d->target, &part,
                                      d->tmp, d->log);
    olla_pwork_join(&d->work, &part);
    olla_log(d->log, OLLA_LOG_DETAIL, "place: split backwards in time: %s after %lld units",
             r == OLLA_SEARCH_FOUND ? "found" : "none", part.used);
    if (r == 1)
        keep_if_better(d);
    return r;
}

/* The windows around the busiest times (place_window.c): their first pass
 * gets this fraction of the part's whole budget (1.67e9 units of the
 * default 15e9: 0.42e9 for each of its four windows, as each of three had
 * before the fourth; with 1.25e9, a DenseNet-201 training step that a
 * window's first pass placed in 0.33e9 units took 5.7e9), their second
 * this one (5e9), at most what is left. */
#define OLLA_PLACE_WINDOW_FIRST_SHARE 9
#define OLLA_PLACE_WINDOW_SECOND_SHARE 3

/* A pass of the busy windows (place_window.c), aimed at the lower bound: a
 * placement, or a window's proof that nothing fits, which raises the
 * bound. */
static int busy_window(driver *d, int pass)
{
    int64_t cap = d->lb > d->target ? d->lb : d->target;
    long long units = d->work.limit / (pass == 0 ? OLLA_PLACE_WINDOW_FIRST_SHARE : OLLA_PLACE_WINDOW_SECOND_SHARE);
    olla_pwork part = olla_pwork_part(&d->work, units);
    int r = olla_place_window(d->it, d->n, cap, &part, d->tmp, d->log, pass);
    olla_pwork_join(&d->work, &part);
    if (r == OLLA_SEARCH_FOUND)
        keep_if_better(d);
    else if (r == OLLA_SEARCH_NONE && cap + 1 > d->lb)
        d->lb = cap + 1;
    return r;
}

/* The windows of time whose relaxation may raise the bound
 * (place_bound.c) share 1 / OLLA_PLACE_BOUND_SHARE of the part's budget,
 * at most 0.05 s worth. */
#define OLLA_PLACE_BOUND_WORK (OLLA_PLACE_WORK_PER_SECOND / 20)
#define OLLA_PLACE_BOUND_SHARE 16

/* A lower bound above max live, where the buffers around a busy time cannot
 * be packed into max live (place_bound.c). */
static int window_bound(driver *d)
{
    long long units = olla_pwork_left(&d->work) / OLLA_PLACE_BOUND_SHARE;
    olla_pwork budget = olla_pwork_part(&d->work, units < OLLA_PLACE_BOUND_WORK ? units : OLLA_PLACE_BOUND_WORK);
    int r = olla_place_bound_windows(d->it, d->n, &d->lb, d->ub, &budget, d->log);
    olla_pwork_join(&d->work, &budget);
    return r == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : 0;
}

/* The address ILP on a small part, from the best placement. */
static olla_status ilp(driver *d, olla_error *err)
{
    if (d->ub <= d->lb || d->ub <= d->target || d->n > OLLA_PLACE_ILP_MAX_BUFFERS || stuck(d))
        return OLLA_OK;
    int64_t arena = d->ub, bound = d->lb;
    olla_status st = olla_place_ilp(&(olla_place_ilp_problem){d->it, d->n, d->best, d->ub, d->lb}, &d->work, d->log,
                                    d->tmp, &arena, &bound, err);
    if (st != OLLA_OK)
        return st;
    if (arena < d->ub) {
        d->ub = arena;
        memcpy(d->best, d->tmp, d->n * sizeof *d->best);
    }
    if (bound > d->lb)
        d->lb = bound;
    return OLLA_OK;
}

static olla_status no_memory(olla_error *err, size_t n)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory for %zu buffers", n);
}

/* The best arena is above the bound and above the whole instance's max live. */
static int open_gap(const driver *d)
{
    return d->ub > d->lb && d->ub > d->target;
}

/* The probe at the bound before the split's later rounds gets this many
 * passes' worth of the part's section lists (a unit per entry, the
 * search's unit) and at most 1 / OLLA_PLACE_EARLY_PROBE_SHARE of its
 * budget (0.9e9 units of the default 15e9; at most what is left): enough
 * for the search's first rounds, each configuration's dive placing every
 * buffer a few times over, which is where it places a training step whose
 * heuristics end just above max live. The split fails there only after
 * its whole share (its sides, most of the part around a thin stack, are
 * as hard as the whole), while on the parts it places in its later
 * rounds, the probe that gives up first costs little: its share grows
 * with the part's size, not with the budget. */
#define OLLA_PLACE_EARLY_PROBE_PASSES 256
#define OLLA_PLACE_EARLY_PROBE_SHARE 16

/* The probe at the lower bound before the split's later rounds, with a
 * small share. */
static int early_probe(driver *d)
{
    long long entries = olla_place_section_entries(d->it, d->n);
    if (entries < 0)
        return OLLA_SEARCH_NOMEM;
    long long units = d->work.limit / OLLA_PLACE_EARLY_PROBE_SHARE;
    if (entries < units / OLLA_PLACE_EARLY_PROBE_PASSES)
        units = OLLA_PLACE_EARLY_PROBE_PASSES * entries;
    int r = try_cap(d, d->lb > d->target ? d->lb : d->target,
                    units < olla_pwork_left(&d->work) ? units : olla_pwork_left(&d->work));
    return r == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : 0;
}

/* The split's first rounds of attempts (where the sides' greedy placements
 * fit: at most 5/64 of its share); when attempts are left for its later
 * rounds, the probe at the bound with a small share; the busy windows'
 * first pass; then the split's later rounds with the rest of its share (a
 * third of the budget left before them, at most what is left): a part that
 * the search or a window places cheaply does not wait behind a split
 * spending its whole share, nor one that the split places cheaply behind
 * the probe. When the probe or a window raised the bound the split aims
 * at, the split starts again there. (With the windows after the split's
 * later rounds, the 391 instances of bench/RESULTS.md took 81.6e9 units
 * instead of 57.6e9, with the same arenas.) */
static int split_probe_windows(driver *d)
{
    long long units = olla_pwork_left(&d->work) / OLLA_PLACE_SPLIT_SHARE, before = d->work.used;
    int64_t aim = d->lb > d->target ? d->lb : d->target;
    olla_split_progress pr = {0};
    int r = split(d, units, &pr, OLLA_PLACE_SPLIT_FIRST_ROUNDS);
    if (r == OLLA_SEARCH_NOMEM)
        return OLLA_SEARCH_NOMEM;
    int later = r == OLLA_SEARCH_GAVE_UP; /* attempts are left for the later rounds */
    long long rest = units - (d->work.used - before);
    if (later && open_gap(d) && early_probe(d) == OLLA_SEARCH_NOMEM)
        return OLLA_SEARCH_NOMEM;
    if (open_gap(d) && busy_window(d, 0) == OLLA_SEARCH_NOMEM)
        return OLLA_SEARCH_NOMEM;
    if (!later || !open_gap(d))
        return 0;
    if ((d->lb > d->target ? d->lb : d->target) != aim) {
        pr = (olla_split_progress){0};
        rest = units;
    }
    r = split(d, rest < olla_pwork_left(&d->work) ? rest : olla_pwork_left(&d->work), &pr, OLLA_PLACE_SPLIT_ROUNDS);
    return r == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : 0;
}

/* A big part (OLLA_PLACE_BIG_PART) after its heuristics: the probe at the
 * lower bound with the share the first probe of a bisection gets, then
 * the windows' bound. */
static olla_status place_big_part(driver *d, olla_place_status *ps, olla_error *err)
{
    *ps = OLLA_PLACE_HEURISTIC;
    int64_t cap = d->lb > d->target ? d->lb : d->target;
    if (open_gap(d) && !stuck(d)) {
        long long units = d->work.limit / OLLA_PLACE_BOUND_PROBE_SHARE;
        int r = try_cap(d, cap, units < olla_pwork_left(&d->work) ? units : olla_pwork_left(&d->work));
        if (r == OLLA_SEARCH_NOMEM)
            return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
    }
    if (open_gap(d) && window_bound(d) == OLLA_SEARCH_NOMEM)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
    return OLLA_OK;
}

/* Shakes of a peak stack's placement, at most. */
#define OLLA_PLACE_PEAK_SHAKES 4

/* A big part (OLLA_PLACE_BIG_PART) above max live also gets the peak
 * stack in both orders (place_peak_stack.c), each shaken, kept when lower
 * than the best so far; out of memory there leaves the best as it was. */
static void peak_stack(driver *d)
{
    for (int by = 0; by < OLLA_PEAK_STACK_ORDERS && d->n > OLLA_PLACE_BIG_PART && d->ub > d->lb; by++) {
        int64_t arena = olla_place_peak_stack(d->it, d->n, by, d->tmp);
        int64_t shaken = arena < 0 ? -1 : olla_place_shake(d->it, d->n, d->tmp, arena, OLLA_PLACE_PEAK_SHAKES);
        olla_log(d->log, OLLA_LOG_DETAIL, "place: peak stack by %s: %lld, shaken %lld%s", by ? "end" : "start",
                 (long long)arena, (long long)shaken, shaken >= 0 && shaken < d->ub ? " (kept)" : "");
        if (shaken >= 0)
            keep_if_better(d);
    }
}

/* Places one part: minimizes it (cap < 0), or fits it within cap. Returns
 * the part's status; d->best, ub, lb hold the result. */
static olla_status place_part(driver *d, int64_t cap, olla_place_status *ps, int64_t *heur,
                              olla_error *err)
{
    d->lb = olla_place_items_max_live(d->it, d->n);
    d->ub = olla_place_heuristic(d->it, d->n, d->best, d->lb > d->target ? d->lb : d->target,
                                 &d->work, d->log);
    if (d->lb < 0 || d->ub < 0)
        return no_memory(err, d->n);
    peak_stack(d);
    *heur = d->ub;
    olla_log(d->log, OLLA_LOG_DETAIL, "place: part of %zu buffers, lower bound %lld, heuristic %lld", d->n,
             (long long)d->lb, (long long)d->ub);
    if (cap >= 0) {
        if (d->lb > cap) {
            *ps = OLLA_PLACE_NO_FIT;
            return OLLA_OK;
        }
        if (d->ub <= cap) {
            *ps = OLLA_PLACE_FEASIBLE;
            return OLLA_OK;
        }
        int r = try_cap(d, cap, olla_pwork_left(&d->work));
        if (r == OLLA_SEARCH_NOMEM)
            return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
        *ps = r == OLLA_SEARCH_FOUND ? OLLA_PLACE_FEASIBLE
              : r == OLLA_SEARCH_NONE ? OLLA_PLACE_NO_FIT : OLLA_PLACE_NOT_FOUND;
        return OLLA_OK;
    }
    if (cap == CAP_HEURISTICS_ONLY)
        return OLLA_OK;
    if (d->n > OLLA_PLACE_BIG_PART)
        return place_big_part(d, ps, err);
    /* the split (aimed at max live), the probe at the bound and the
     * windows, the windows' bound when they fail, then the bisection
     * between the bound and the best arena */
    if ((open_gap(d) && split_probe_windows(d) == OLLA_SEARCH_NOMEM) ||
        (open_gap(d) && window_bound(d) == OLLA_SEARCH_NOMEM) || (open_gap(d) && minimize(d) == OLLA_SEARCH_NOMEM))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
    *ps = OLLA_PLACE_HEURISTIC;
    return ilp(d, err);
}

static olla_status fill_items(olla_buffer *bufs, size_t n, int64_t align, olla_pitem **items,
                              size_t **map, size_t *m, olla_error *err)
{
    *items = malloc((n + 1) * sizeof **items);
    *map = malloc((n + 1) * sizeof **map);
    if (!*items || !*map) {
        free(*items);
        free(*map);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory for %zu buffers",
                              n);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bufs[i].offset = 0;
        if (bufs[i].size == 0 || bufs[i].upper == bufs[i].lower)
            continue; /* occupies nothing */
        (*items)[k] = (olla_pitem){bufs[i].lower, bufs[i].upper,
                                   (bufs[i].size + align - 1) / align};
        (*map)[k++] = i;
    }
    *m = k;
    return OLLA_OK;
}


/* The items sorted by start, cut where no item is live across: part p is
 * ord[start[p] .. start[p + 1]). Returns the number of parts, or 0 when out
 * of memory (m > 0). */
static size_t cut_parts(const olla_pitem *it, size_t m, int *ord, size_t *start)
{
    olla_pkey *keys = malloc((m + 1) * sizeof *keys);
    if (!keys)
        return 0;
    for (size_t k = 0; k < m; k++)
        keys[k] = (olla_pkey){it[k].lower, it[k].upper, (int)k};
    olla_place_sort_keys(keys, m);
    size_t np = 0;
    int64_t reach = INT64_MIN;
    for (size_t e = 0; e < m; e++) {
        const olla_pitem *b = &it[keys[e].idx];
        if (e == 0 || b->lower >= reach)
            start[np++] = e;
        if (b->upper > reach)
            reach = b->upper;
        ord[e] = keys[e].idx;
    }
    start[np] = m;
    free(keys);
    return np;
}

/* The whole instance's result from its parts. */
typedef struct outcome {
    int64_t *off; /* every item's offset */
    int64_t arena, lb, heur;
    int no_fit, not_found;
} outcome;

static long long total_budget(const olla_place_options *opt)
{
    if (opt->work_limit > 0)
        return opt->work_limit;
    double seconds = opt->time_limit > 0 ? opt->time_limit / 2 : OLLA_PLACE_DEFAULT_SECONDS;
    return (long long)(seconds * (double)OLLA_PLACE_WORK_PER_SECOND) + 1;
}

/* Places every part in turn within the budget all; out->off gets every
 * item's offset. */
static olla_status place_parts(const olla_pitem *it, size_t m, const olla_place_options *opt, int64_t cap,
                               olla_pwork *all, outcome *out, olla_error *err)
{
    int *ord = malloc((m + 1) * sizeof *ord);
    size_t *start = malloc((m + 2) * sizeof *start);
    olla_pitem *sub = malloc((m + 1) * sizeof *sub);
    driver d = {0};
    d.best = malloc((m + 1) * sizeof *d.best);
    d.tmp = malloc((m + 1) * sizeof *d.tmp);
    olla_status st = OLLA_OK;
    size_t np = ord && start && sub && d.best && d.tmp ? cut_parts(it, m, ord, start) : 0;
    if (np == 0 && m > 0)
        st = no_memory(err, m);
    int64_t target = st == OLLA_OK ? olla_place_items_max_live(it, m) : 0;
    for (size_t p = 0; p < np && st == OLLA_OK; p++) {
        size_t k = start[p + 1] - start[p], rest = m - start[p];
        for (size_t e = 0; e < k; e++)
            sub[e] = it[ord[start[p] + e]];
        long long share = (long long)((double)olla_pwork_left(all) * (double)k / (double)rest);
        d = (driver){sub, k, olla_pwork_part(all, share), opt->log, d.best, d.tmp, 0, 0,
                     target};
        olla_place_status ps = OLLA_PLACE_HEURISTIC;
        int64_t heur = 0;
        st = place_part(&d, cap, &ps, &heur, err);
        olla_pwork_join(all, &d.work);
        if (st != OLLA_OK)
            break;
        for (size_t e = 0; e < k; e++)
            out->off[ord[start[p] + e]] = d.best[e];
        out->arena = d.ub > out->arena ? d.ub : out->arena;
        out->lb = d.lb > out->lb ? d.lb : out->lb;
        out->heur = heur > out->heur ? heur : out->heur;
        out->no_fit |= ps == OLLA_PLACE_NO_FIT;
        out->not_found |= ps == OLLA_PLACE_NOT_FOUND;
    }
    if (np > 1)
        olla_log(opt->log, OLLA_LOG_DETAIL, "place: %zu independent parts", np);
    free(ord);
    free(start);
    free(sub);
    free(d.best);
    free(d.tmp);
    return st;
}

static olla_place_status final_status(const outcome *o, int fit)
{
    if (fit)
        return o->no_fit ? OLLA_PLACE_NO_FIT : o->not_found ? OLLA_PLACE_NOT_FOUND
               : o->arena <= o->lb ? OLLA_PLACE_OPTIMAL : OLLA_PLACE_FEASIBLE;
    return o->arena <= o->lb ? OLLA_PLACE_OPTIMAL : o->arena < o->heur ? OLLA_PLACE_FEASIBLE
                                                                      : OLLA_PLACE_HEURISTIC;
}

/* What stopped the placer early. The clock is named whenever it cut a phase
 * whose result could have changed the outcome, even when the arena is
 * optimal (its offsets and work then depend on the load); a proven no-fit
 * and an optimum reached within the work budget are not stopped. */
static olla_place_stop stop_reason(olla_place_status ps, int stopped)
{
    if (ps == OLLA_PLACE_NO_FIT)
        return OLLA_PLACE_STOPPED_NONE;
    if (stopped & (1 << OLLA_PLACE_STOPPED_TIME))
        return OLLA_PLACE_STOPPED_TIME;
    if (ps == OLLA_PLACE_OPTIMAL)
        return OLLA_PLACE_STOPPED_NONE;
    if (stopped & (1 << OLLA_PLACE_STOPPED_BUDGET))
        return OLLA_PLACE_STOPPED_BUDGET;
    return OLLA_PLACE_STOPPED_NONE;
}

/* olla_place, or with heuristics_only olla_place_heuristics. */
static olla_status place_run(olla_buffer *bufs, size_t n, const olla_place_options *opt, int heuristics_only,
                             olla_place_result *res, olla_error *err)
{
    if (!opt || !res)
        return olla_error_set(err, OLLA_ERR_USAGE, "placement: options and result are required");
    memset(res, 0, sizeof *res);
    double t0 = olla_now();
    olla_status st = olla_place_check_input(bufs, n, opt->alignment, err);
    if (st != OLLA_OK)
        return st;
    if (opt->capacity < 0)
        return olla_error_set(err, OLLA_ERR_USAGE,
                              "placement: capacity %lld is negative; use 0 to minimize",
                              (long long)opt->capacity);
    if (opt->work_limit < 0)
        return olla_error_set(err, OLLA_ERR_USAGE,
                              "placement: work limit %lld is negative; use 0 for the default",
                              opt->work_limit);
    int64_t align = opt->alignment;
    olla_pitem *it = NULL;
    size_t *map = NULL, m = 0;
    st = fill_items(bufs, n, align, &it, &map, &m, err);
    if (st != OLLA_OK)
        return st;
    int64_t g = 0;
    for (size_t k = 0; k < m; k++)
        g = olla_gcd64(it[k].size, g);
    if (g > 1) {
        for (size_t k = 0; k < m; k++)
            it[k].size /= g;
        align *= g; /* the unit from here on */
    }
    olla_pwork all = {total_budget(opt), 0, opt->time_limit > 0 ? t0 + opt->time_limit : 0, 0};
    int64_t cap = opt->capacity / align;
    int64_t *off = malloc((m + 1) * sizeof *off);
    outcome out = {off, 0, 0, 0, 0, 0};
    int64_t part_cap = heuristics_only ? CAP_HEURISTICS_ONLY : opt->capacity > 0 ? cap : -1;
    st = off ? place_parts(it, m, opt, part_cap, &all, &out, err) : no_memory(err, n);
    if (st == OLLA_OK) {
        if (opt->capacity > 0 && out.lb > cap)
            out.no_fit = 1;
        for (size_t k = 0; k < m; k++)
            bufs[map[k]].offset = off[k] * align;
        res->arena_bytes = out.arena * align;
        res->lower_bound = out.lb * align;
        res->heuristic_bytes = out.heur * align;
        res->status = final_status(&out, opt->capacity > 0);
        res->stopped_by = stop_reason(res->status, all.stopped);
        res->work = all.used;
        res->seconds = olla_now() - t0;
        olla_log(opt->log, OLLA_LOG_DETAIL,
                 "place: %zu buffers, bound %lld, heuristic %lld, arena %lld (units of %lld), %lld work units, "
                 "stopped by %s", m, (long long)out.lb, (long long)out.heur, (long long)out.arena,
                 (long long)align, all.used, olla_place_stop_name(res->stopped_by));
    }
    free(off);
    free(it);
    free(map);
    return st;
}

olla_status olla_place(olla_buffer *bufs, size_t n, const olla_place_options *opt,
                       olla_place_result *res, olla_error *err)
{
    return place_run(bufs, n, opt, 0, res, err);
}

olla_status olla_place_heuristics(olla_buffer *bufs, size_t n, const olla_place_options *opt,
                                  olla_place_result *res, olla_error *err)
{
    return place_run(bufs, n, opt, 1, res, err);
}
