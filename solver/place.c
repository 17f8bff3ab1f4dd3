/* olla-onnx: the placement driver. Greedy heuristics first; then (when
 * minimizing a nested trace) the split at the busiest time aimed at the
 * lower bound; then the exact search, which either reaches the lower bound,
 * proves a capacity infeasible, or tightens the arena by bisection; then
 * the address ILP when the search could not prove optimality in time. All
 * work is in units of the alignment times the greatest common divisor of
 * the aligned sizes (an optimal placement exists with every offset a
 * multiple of it), so every offset is a multiple of the alignment and no
 * capacity between two multiples of the unit is ever tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "util/olla_clock.h"
#include "solver/place_internal.h"

/* Bounds on each exact phase when the caller sets no time limit. */
#define OLLA_PLACE_SEARCH_SLICE 10.0
#define OLLA_PLACE_ILP_SLICE 60.0
/* The ILP is only tried on this many buffers or fewer. */
#define OLLA_PLACE_ILP_MAX_BUFFERS 400

typedef struct driver {
    const olla_pitem *it;
    size_t n;
    double t0, deadline; /* deadline 0: none */
    int verbosity;
    int64_t *best, *tmp;
    int64_t ub, lb;
} driver;

static double remaining(const driver *d)
{
    if (d->deadline <= 0)
        return 1e30;
    double r = d->deadline - olla_now();
    return r > 0 ? r : 0;
}

/* Runs the search at capacity cap for at most slice seconds. */
static int try_cap(driver *d, int64_t cap, double slice)
{
    double rem = remaining(d);
    if (slice > rem)
        slice = rem;
    if (slice <= 0)
        return -1;
    long long nodes = 0;
    double t = olla_now();
    int r = olla_place_search(d->it, d->n, cap, t + slice, d->tmp, &nodes);
    if (d->verbosity)
        fprintf(stderr, "place: search at %lld: %s after %lld nodes, %.3f s\n", (long long)cap,
                r == 1 ? "found" : r == 0 ? "none exists" : r == -1 ? "gave up"
                : r == -2 ? "out of memory" : "too large to search",
                nodes, olla_now() - t);
    if (r == 1) {
        int64_t a = olla_place_items_arena(d->it, d->tmp, d->n);
        if (a < d->ub) {
            d->ub = a;
            memcpy(d->best, d->tmp, d->n * sizeof *d->best);
        }
    }
    return r;
}

/* Minimizes: a probe at the lower bound (reaching it ends everything), then
 * bisection between the proven bound and the best arena. Each search gets a
 * quarter of the time left; a search that gives up sends the bisection
 * higher without raising the proven bound. */
static int minimize(driver *d)
{
    int64_t lo = d->lb, hi = d->ub - 1; /* the optimum, if below ub, is in [lo, hi] */
    int first = 1;
    while (lo <= hi && remaining(d) > 0) {
        int64_t cap = first ? lo : lo + (hi - lo) / 2;
        double slice = d->deadline > 0 ? remaining(d) / 4 : OLLA_PLACE_SEARCH_SLICE;
        if (slice < 0.02)
            slice = remaining(d);
        first = 0;
        int r = try_cap(d, cap, slice);
        if (r == -2)
            return -2;
        if (r == -3)
            break;
        if (r == 1) {
            hi = d->ub - 1;
        } else if (r == 0) {
            lo = cap + 1;
            if (lo > d->lb)
                d->lb = lo;
        } else {
            /* unknown: look higher, without raising the proven bound */
            lo = cap + 1;
        }
        if (d->deadline <= 0 && r == -1 && cap >= hi)
            break;
    }
    return 0;
}

/* The split at the busiest time, aiming straight at the lower bound with
 * a third of the time left. */
static int split(driver *d)
{
    double t = olla_now();
    double until = d->deadline > 0 ? t + remaining(d) / 3 : t + OLLA_PLACE_SEARCH_SLICE;
    int r = olla_place_split(d->it, d->n, d->lb, until, d->tmp, d->verbosity);
    if (r == 1) {
        int64_t a = olla_place_items_arena(d->it, d->tmp, d->n);
        if (a < d->ub) {
            d->ub = a;
            memcpy(d->best, d->tmp, d->n * sizeof *d->best);
        }
    }
    return r;
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

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

olla_status olla_place(olla_buffer *bufs, size_t n, const olla_place_options *opt,
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
    int64_t align = opt->alignment;
    olla_pitem *it = NULL;
    size_t *map = NULL, m = 0;
    st = fill_items(bufs, n, align, &it, &map, &m, err);
    if (st != OLLA_OK)
        return st;
    int64_t g = 0;
    for (size_t k = 0; k < m; k++)
        g = gcd64(it[k].size, g);
    if (g > 1) {
        for (size_t k = 0; k < m; k++)
            it[k].size /= g;
        align *= g; /* the unit from here on */
    }
    driver d = {it, m, t0, opt->time_limit > 0 ? t0 + opt->time_limit : 0, opt->verbosity,
                malloc((m + 1) * sizeof(int64_t)), malloc((m + 1) * sizeof(int64_t)), 0, 0};
    if (!d.best || !d.tmp) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory for %zu buffers", n);
        goto done;
    }
    d.lb = olla_place_items_max_live(it, m);
    d.ub = olla_place_heuristic(it, m, d.best, d.lb, d.deadline, opt->verbosity);
    if (d.lb < 0 || d.ub < 0) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory for %zu buffers", n);
        goto done;
    }
    if (opt->verbosity)
        fprintf(stderr, "place: %zu buffers, lower bound %lld, heuristic %lld (units of %lld)\n",
                m, (long long)d.lb, (long long)d.ub, (long long)align);
    olla_place_status ps = d.ub == d.lb ? OLLA_PLACE_OPTIMAL : OLLA_PLACE_HEURISTIC;
    int64_t cap = opt->capacity / align;
    if (opt->capacity > 0) {
        if (d.lb > cap) {
            ps = OLLA_PLACE_NO_FIT;
        } else if (d.ub > cap) {
            int r = try_cap(&d, cap, d.deadline > 0 ? remaining(&d) : 1e30);
            if (r == -2) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
                goto done;
            }
            if (r == 0 && cap + 1 > d.lb)
                d.lb = cap + 1;
            ps = r == 1 ? (d.ub == d.lb ? OLLA_PLACE_OPTIMAL : OLLA_PLACE_FEASIBLE)
                 : r == 0 ? OLLA_PLACE_NO_FIT : OLLA_PLACE_NOT_FOUND;
        } else if (ps != OLLA_PLACE_OPTIMAL) {
            ps = OLLA_PLACE_FEASIBLE;
        }
    } else if (ps != OLLA_PLACE_OPTIMAL) {
        int64_t h = d.ub;
        if (split(&d) == -2 || (d.ub > d.lb && minimize(&d) == -2)) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "placement: out of memory in the search");
            goto done;
        }
        if (d.ub > d.lb && m <= OLLA_PLACE_ILP_MAX_BUFFERS && remaining(&d) > 0.05) {
            int64_t arena = d.ub, bound = d.lb;
            double slice = d.deadline > 0 ? remaining(&d) : OLLA_PLACE_ILP_SLICE;
            st = olla_place_ilp(it, m, d.best, d.ub, d.lb, slice, d.tmp, &arena, &bound,
                                opt->verbosity, err);
            if (st != OLLA_OK)
                goto done;
            if (arena < d.ub) {
                d.ub = arena;
                memcpy(d.best, d.tmp, m * sizeof *d.best);
            }
            if (bound > d.lb)
                d.lb = bound;
        }
        ps = d.ub <= d.lb ? OLLA_PLACE_OPTIMAL : d.ub < h ? OLLA_PLACE_FEASIBLE
                                                          : OLLA_PLACE_HEURISTIC;
    }
    for (size_t k = 0; k < m; k++)
        bufs[map[k]].offset = d.best[k] * align;
    res->arena_bytes = d.ub * align;
    res->lower_bound = d.lb * align;
    res->status = ps;
    res->seconds = olla_now() - t0;
done:
    free(d.best);
    free(d.tmp);
    free(it);
    free(map);
    return st;
}
