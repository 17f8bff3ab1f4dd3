/* olla-onnx: a lower bound above max live from windows of time.
 *
 * Cutting every lifetime to a window of time [a, b] only removes overlaps,
 * so a placement of the whole part gives one of the window at the same
 * arena: the window's optimum bounds the part's. In the window, a buffer
 * live across all of it meets every other one, so in any placement of the
 * window the address band it holds is free of every other buffer at every
 * step; cutting that band out and stacking the cut buffers on top gives a
 * placement of the same arena. So those buffers collapse into one block of
 * their summed size, and the window's optimum is the block plus the optimum
 * of the others (the buffers that start or end inside the window) alone.
 * The exact search sees only those: around a training step's busiest time
 * most of the live bytes live across a window of hundreds of steps, so a
 * window that spans them costs a search over tens of buffers, where the
 * window cut without the collapse held thousands.
 *
 * Around each of the busiest times, windows of 0, 1, 2, 4... steps either
 * side (while the searched buffers stay within OLLA_BOUND_MAX_SEARCHED, and
 * until a search gives up: a small window is the easier proof) are
 * bisected between the bound and the best arena; only proofs (no placement
 * within a capacity) raise the bound. */
#include <stdlib.h>

#include "solver/place_internal.h"

/* The windows tried: around this many busiest times, each with at most
 * this many buffers searched (those that start or end inside it). */
#define OLLA_BOUND_WINDOWS 4
#define OLLA_BOUND_MAX_SEARCHED 256
/* A window's half-width doubles from 1 up to at most this many steps. */
#define OLLA_BOUND_MAX_WIDTH ((int64_t)1 << 40)
/* Each bisection gets 1 / OLLA_BOUND_SEARCH_SHARE of what is left. */
#define OLLA_BOUND_SEARCH_SHARE 4

size_t olla_place_window_cut(const olla_pitem *it, size_t n, int64_t a, int64_t b, olla_pitem *win, size_t max,
                             int64_t *block)
{
    size_t k = 0;
    *block = 0;
    for (size_t i = 0; i < n; i++) {
        int side = olla_place_window_side(it[i], a, b);
        if (it[i].upper <= it[i].lower || it[i].size <= 0 || side == OLLA_WINDOW_BEFORE || side == OLLA_WINDOW_AFTER)
            continue;
        if (side == OLLA_WINDOW_ACROSS) {
            *block += it[i].size;
            continue;
        }
        if (k == max)
            return max + 1;
        win[k++] = olla_place_window_clip(it[i], a, b);
    }
    return k;
}

int olla_place_window_bound_at(const olla_pitem *win, size_t k, int64_t block, int64_t lo, int64_t hi,
                               olla_pwork *w, int64_t *bound)
{
    int64_t *off = malloc((k + 1) * sizeof *off); /* the search's placements, not kept */
    int r = off ? 0 : OLLA_SEARCH_NOMEM;
    while (lo <= hi && r == 0) {
        int64_t cap = lo + (hi - lo) / 2;
        int q = cap < block ? OLLA_SEARCH_NONE : olla_place_search(win, k, cap - block, w, off);
        if (q == OLLA_SEARCH_NONE)
            lo = cap + 1;
        else if (q == OLLA_SEARCH_FOUND)
            hi = cap - 1;
        else
            r = q == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : 1;
    }
    free(off);
    *bound = lo;
    return r;
}

/* The times at which a buffer starts, by the load after their last start,
 * busiest first, into ev[e].k2 (ev holds 2n keys): returns their number. */
static size_t busiest_times(const olla_pitem *it, size_t n, olla_pkey *ev)
{
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (olla_pkey){it[i].lower, 1, (int)i};
        ev[2 * i + 1] = (olla_pkey){it[i].upper, 0, (int)i}; /* ends first */
    }
    olla_place_sort_keys(ev, 2 * n);
    int64_t cur = 0;
    size_t ns = 0;
    for (size_t e = 0; e < 2 * n; e++) {
        cur += ev[e].k2 ? it[ev[e].idx].size : -it[ev[e].idx].size;
        if (ev[e].k2 && (e + 1 == 2 * n || ev[e + 1].k1 != ev[e].k1))
            ev[ns++] = (olla_pkey){-cur, ev[e].k1, 0};
    }
    olla_place_sort_keys(ev, ns);
    return ns;
}

/* The state of one bound: the part, its bound and best arena, the work. */
typedef struct bctx {
    const olla_pitem *it;
    size_t n;
    int64_t *lb, ub;
    int64_t first, last; /* the part's first and last steps */
    olla_pwork *w;
    const olla_logger *log;
    olla_pitem *win;
} bctx;

/* The windows around time t, growing while they stay small enough and
 * every search ends: returns the half-width reached (into *reach), and
 * OLLA_SEARCH_NOMEM or 0. */
static int around(bctx *c, int64_t t, int64_t *reach)
{
    size_t last = 0;
    int r = 0;
    *reach = 0;
    for (int64_t x = 0; x <= OLLA_BOUND_MAX_WIDTH && *c->lb < c->ub && r == 0; x = x ? 2 * x : 1) {
        int64_t block;
        size_t k = olla_place_window_cut(c->it, c->n, t - x, t + x, c->win, OLLA_BOUND_MAX_SEARCHED, &block);
        if (k > OLLA_BOUND_MAX_SEARCHED)
            break;
        *reach = x;
        if (k > last) {
            olla_pwork part = olla_pwork_part(c->w, olla_pwork_left(c->w) / OLLA_BOUND_SEARCH_SHARE);
            int64_t bound;
            r = olla_place_window_bound_at(c->win, k, block, *c->lb, c->ub - 1, &part, &bound);
            olla_pwork_join(c->w, &part);
            if (bound > *c->lb) {
                olla_log(c->log, OLLA_LOG_DETAIL,
                         "place: window %lld..%lld (%zu buffers searched, %lld units live across): bound %lld",
                         (long long)(t - x), (long long)(t + x), k, (long long)block, (long long)bound);
                *c->lb = bound;
            }
        }
        if (t - x <= c->first && t + x >= c->last)
            break; /* the whole part */
        last = k;
    }
    return r == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : 0;
}

int olla_place_bound_windows(const olla_pitem *it, size_t n, int64_t *lb, int64_t ub, olla_pwork *w,
                             const olla_logger *log)
{
    olla_pkey *ev = malloc((2 * n + 1) * sizeof *ev);
    bctx c = {it, n, lb, ub, INT64_MAX, INT64_MIN, w, log, malloc((OLLA_BOUND_MAX_SEARCHED + 1) * sizeof *c.win)};
    for (size_t i = 0; i < n; i++) {
        c.first = it[i].lower < c.first ? it[i].lower : c.first;
        c.last = it[i].upper > c.last ? it[i].upper : c.last;
    }
    int r = ev && c.win ? 0 : OLLA_SEARCH_NOMEM;
    size_t ns = r == 0 ? busiest_times(it, n, ev) : 0;
    int64_t used[OLLA_BOUND_WINDOWS][2];
    int nw = 0;
    for (size_t e = 0; e < ns && nw < OLLA_BOUND_WINDOWS && *lb < ub && r == 0; e++) {
        int64_t t = ev[e].k2, reach;
        int seen = 0;
        for (int k = 0; k < nw; k++)
            seen |= used[k][0] <= t && t <= used[k][1];
        if (seen)
            continue;
        r = around(&c, t, &reach);
        used[nw][0] = t - reach;
        used[nw][1] = t + reach;
        nw++;
    }
    free(ev);
    free(c.win);
    return r;
}
