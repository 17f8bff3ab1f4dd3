/* olla-onnx: placement split at the busiest time. In a placement that
 * reaches max live, the buffers live at the peak time p are stacked without
 * a gap; the buffers that end by p and those that start after p never meet,
 * so once the stack is fixed the two sides are independent problems. In
 * training graphs lifetimes nest (what the forward pass makes early, the
 * backward pass frees late), so stacking the peak buffers by end time
 * (the latest-freed at the bottom) leaves the later side a floor without
 * holes, and by start time the earlier side. Several stacking orders are
 * tried.
 *
 * Each side is first placed greedily around the fixed buffers (by size,
 * lifetime, size x lifetime, start; first and best fit): away from the
 * busiest times a training step's load leaves room, and a greedy pass that
 * stays within the capacity ends the side at almost no cost. Otherwise the
 * side is split again at its own busiest time, counting the fixed buffers
 * live there: its buffers live then are stacked into what the fixed ones
 * leave free, in the same orders, and when no order fits, placed by the
 * exact search among the fixed buffers (holes included); then a short
 * direct search. Recursively.
 *
 * When lifetimes do not nest, the buffers live near the peak are searched
 * first as one problem, cut to a window around it, and then fixed (with
 * their whole lifetimes) while the two sides are searched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* How the buffers live at a split time are stacked: in order of start,
 * of end (latest end lowest) or of length, each at the lowest address
 * clear of the fixed buffers, or placed by the exact search among them. */
enum { STACK_START, STACK_END, STACK_LENGTH, STACK_SEARCH };

/* The split is only tried when at least one buffer in this many is live at
 * the peak time, as in training graphs (the forward pass's saved
 * activations all live across the turn to the backward pass). */
#define OLLA_SPLIT_MIN_SHARE 8

/* Time of maximum live units (the earliest if several). */
static int64_t peak_time(const olla_pitem *it, size_t n, olla_pkey *ev)
{
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (olla_pkey){it[i].lower, 1, (int)i};
        ev[2 * i + 1] = (olla_pkey){it[i].upper, 0, (int)i}; /* ends before starts */
    }
    olla_place_sort_keys(ev, 2 * n);
    int64_t cur = 0, best = -1, t = 0;
    for (size_t e = 0; e < 2 * n; e++) {
        cur += ev[e].k2 ? it[ev[e].idx].size : -it[ev[e].idx].size;
        if (ev[e].k2 && cur > best) {
            best = cur;
            t = ev[e].k1;
        }
    }
    return t;
}

/* Sides with more buffers than this are first given a short direct search
 * and, when it does not finish, split again at their own busiest time. */
#define OLLA_SPLIT_DIRECT_MAX 8
#ifndef OLLA_SPLIT_MAX_DEPTH
#define OLLA_SPLIT_MAX_DEPTH 24
#endif
/* Work units of direct search for a side below the top level (about 0.1 s). */
#define OLLA_SPLIT_QUICK (OLLA_PLACE_WORK_PER_SECOND / 10)
#ifndef OLLA_SPLIT_WINDOW
#define OLLA_SPLIT_WINDOW 16
#endif

/* Direct search of one side (idx[0..k)) above the fixed buffers. */
static int side_direct(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                       const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w,
                       int64_t *off)
{
    if (k == 0)
        return 1;
    olla_pitem *sub = calloc(k, sizeof *sub);
    int64_t *sub_off = calloc(k, sizeof *sub_off);
    if (!sub || !sub_off) {
        free(sub);
        free(sub_off);
        return -2;
    }
    for (size_t e = 0; e < k; e++)
        sub[e] = it[idx[e]];
    int r = olla_place_search_fixed(sub, k, fx, fx_off, nfx, cap, w, sub_off);
    if (r == 1)
        for (size_t e = 0; e < k; e++)
            off[idx[e]] = sub_off[e];
    free(sub);
    free(sub_off);
    return r;
}

/* Work units charged for one greedy pass: per buffer, and per pair of
 * buffers live at the same time (the greedy engine visits each such pair
 * when it places the later one, through a segment tree and a heap). */
#define OLLA_SPLIT_GREEDY_UNITS 32
#define OLLA_SPLIT_GREEDY_PAIR_UNITS 16

/* Pairs of the m buffers that are live at the same time, plus m; -1 when
 * out of memory. */
static long long overlapping_pairs(const olla_pitem *b, size_t m)
{
    int64_t *starts = malloc((m + 1) * sizeof *starts), *ends = malloc((m + 1) * sizeof *ends);
    long long pairs = -1;
    if (starts && ends) {
        for (size_t i = 0; i < m; i++) {
            starts[i] = b[i].lower;
            ends[i] = b[i].upper;
        }
        olla_place_sort_i64(starts, m);
        olla_place_sort_i64(ends, m);
        pairs = 0;
        for (size_t i = 0; i < m; i++) /* j starts before i ends and ends after i starts */
            pairs += (long long)olla_place_count_below(starts, m, b[i].upper) -
                     (long long)olla_place_count_below(ends, m, b[i].lower + 1);
        pairs = pairs / 2 + (long long)m;
    }
    free(starts);
    free(ends);
    return pairs;
}
enum { GREEDY_SIZE, GREEDY_LIFE, GREEDY_AREA, GREEDY_START, GREEDY_COUNT };

/* Greedy placements of one side (idx[0..k)) around the fixed buffers that
 * meet its time span, in a few orders (size, lifetime, size x lifetime,
 * start), first and best fit: 1 (off filled) when one stays within cap, 0
 * when none does (or the budget is spent), -2 when out of memory. Far
 * cheaper than a search; on training graphs, once the busiest times are
 * stacked, the load elsewhere leaves room and a greedy pass often fits. */
static int side_greedy(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                       const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w,
                       int64_t *off)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t e = 0; e < k; e++) {
        if (it[idx[e]].lower < lo)
            lo = it[idx[e]].lower;
        if (it[idx[e]].upper > hi)
            hi = it[idx[e]].upper;
    }
    size_t nf = 0;
    for (size_t f = 0; f < nfx; f++)
        nf += fx[f].lower < hi && lo < fx[f].upper;
    size_t m = nf + k;
    olla_pitem *sub = malloc((m + 1) * sizeof *sub);
    int64_t *pin = malloc((m + 1) * sizeof *pin), *o = malloc((m + 1) * sizeof *o);
    olla_pkey *keys = malloc((m + 1) * sizeof *keys);
    int *order = malloc((m + 1) * sizeof *order);
    int r = -2;
    if (!sub || !pin || !o || !keys || !order)
        goto done;
    nf = 0;
    for (size_t f = 0; f < nfx; f++)
        if (fx[f].lower < hi && lo < fx[f].upper) {
            sub[nf] = fx[f];
            pin[nf] = fx_off[f];
            nf++;
        }
    for (size_t e = 0; e < k; e++) {
        sub[nf + e] = it[idx[e]];
        pin[nf + e] = -1;
    }
    long long pairs = overlapping_pairs(sub, m);
    if (pairs < 0)
        goto done;
    w->used += (long long)nfx + 8 * (long long)m; /* gathering and counting */
    r = 0;
    for (int kind = 0; kind < GREEDY_COUNT && r == 0; kind++)
        for (int best_fit = 0; best_fit < 2 && r == 0; best_fit++) {
            long long units = OLLA_SPLIT_GREEDY_UNITS * (long long)m + OLLA_SPLIT_GREEDY_PAIR_UNITS * pairs;
            if (olla_pwork_left(w) < units || olla_pwork_late(w))
                goto done;
            w->used += units;
            for (size_t f = 0; f < nf; f++) /* the fixed ones first */
                keys[f] = (olla_pkey){INT64_MIN, pin[f], (int)f};
            for (size_t e = 0; e < k; e++) {
                const olla_pitem *b = &sub[nf + e];
                int64_t len = b->upper - b->lower;
                double area = (double)len * (double)b->size;
                int64_t key = kind == GREEDY_SIZE ? -b->size : kind == GREEDY_LIFE ? -len
                              : kind == GREEDY_AREA ? (area > 9e18 ? INT64_MIN + 1 : -(int64_t)area)
                              : b->lower;
                keys[nf + e] = (olla_pkey){key, -b->size, (int)(nf + e)};
            }
            olla_place_sort_keys(keys, m);
            for (size_t e = 0; e < m; e++)
                order[e] = keys[e].idx;
            int64_t a = olla_place_greedy(sub, m, order, pin, best_fit, o);
            if (a < 0) {
                r = -2;
            } else if (a <= cap) {
                for (size_t e = 0; e < k; e++)
                    off[idx[e]] = o[nf + e];
                r = 1;
            }
        }
done:
    free(sub);
    free(pin);
    free(o);
    free(keys);
    free(order);
    return r;
}

static int side_split(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                      const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w,
                      int64_t *off, int depth);

/* Work units of one exact search of a stack among the fixed buffers. */
#define OLLA_SPLIT_STACK_WORK (OLLA_PLACE_WORK_PER_SECOND / 50)

/* The buffers stack[0..ns), all live at one time, placed by the exact
 * search among the fixed buffers (holes included, which a stack built in
 * one order may fail to fill): 1 (off filled), 0 or -1 (none found), -2
 * (out of memory). */
static int stack_search(const olla_pitem *it, const int *stack, size_t ns, const olla_pitem *fx,
                        const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w,
                        int64_t *off)
{
    long long units = olla_pwork_left(w) / 4;
    olla_pwork part = olla_pwork_part(w, units < OLLA_SPLIT_STACK_WORK ? units : OLLA_SPLIT_STACK_WORK);
    int r = side_direct(it, stack, ns, fx, fx_off, nfx, cap, &part, off);
    olla_pwork_join(w, &part);
    return r;
}
static int side_window(const olla_pitem *it, const int *idx, size_t k, int64_t p,
                       olla_pitem *fx, int64_t *fx_off, size_t nfx, int64_t cap,
                       olla_pwork *w, int64_t *off, int depth);

/* Searches the buffers of one side (idx[0..k)) above the fixed buffers:
 * directly when small, else a short direct search and then a split at the
 * side's own busiest time. Returns 1 (off filled), 0 or -1 (not found),
 * -2 (out of memory). */
static int side(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w, int64_t *off,
                int depth)
{
    if (k == 0)
        return 1;
    int r = side_greedy(it, idx, k, fx, fx_off, nfx, cap, w, off);
    if (r != 0)
        return r;
    if (k <= OLLA_SPLIT_DIRECT_MAX || depth >= OLLA_SPLIT_MAX_DEPTH)
        return side_direct(it, idx, k, fx, fx_off, nfx, cap, w, off);
    /* the side's own busiest time stacked first: cheap when it works;
     * then a short direct search */
    r = side_split(it, idx, k, fx, fx_off, nfx, cap, w, off, depth + 1);
    if (r == 1 || r == -2 || olla_pwork_left(w) == 0 || olla_pwork_late(w))
        return r == 1 || r == -2 ? r : -1;
    long long quick = olla_pwork_left(w) / (depth == 0 ? 4 : 8);
    if (depth > 0 && quick > OLLA_SPLIT_QUICK)
        quick = OLLA_SPLIT_QUICK;
    olla_pwork q = olla_pwork_part(w, quick);
    r = side_direct(it, idx, k, fx, fx_off, nfx, cap, &q, off);
    olla_pwork_join(w, &q);
    return r;
}

/* The side's buffers live within OLLA_SPLIT_WINDOW steps of p, cut to that
 * window, searched above the fixed buffers (fx has room for k more), then
 * fixed with their whole lifetimes while the rest is searched. */
static int side_window(const olla_pitem *it, const int *idx, size_t k, int64_t p,
                       olla_pitem *fx, int64_t *fx_off, size_t nfx, int64_t cap,
                       olla_pwork *w, int64_t *off, int depth)
{
    const int64_t width = OLLA_SPLIT_WINDOW;
    olla_pitem *win = malloc((k + 1) * sizeof *win);
    int64_t *woff = malloc((k + 1) * sizeof *woff);
    int *in = malloc((k + 1) * sizeof *in);
    int *before = malloc((k + 1) * sizeof *before);
    int *after = malloc((k + 1) * sizeof *after);
    int r = -2;
    if (!win || !woff || !in || !before || !after)
        goto done;
    size_t nw = 0, nl = 0, nr = 0;
    for (size_t e = 0; e < k; e++) {
        int i = idx[e];
        if (it[i].upper <= p - width) {
            before[nl++] = i;
        } else if (it[i].lower > p + width) {
            after[nr++] = i;
        } else {
            olla_pitem b = it[i];
            if (b.lower < p - width)
                b.lower = p - width;
            if (b.upper > p + width + 1)
                b.upper = p + width + 1;
            win[nw] = b;
            in[nw++] = i;
        }
    }
    olla_pwork part = olla_pwork_part(w, olla_pwork_left(w) / 4);
    r = olla_place_search_fixed(win, nw, fx, fx_off, nfx, cap, &part, woff);
    olla_pwork_join(w, &part);
    if (r != 1)
        goto done;
    /* the search saw the cut lifetimes: outside the window a buffer may
     * still meet a fixed one */
    for (size_t e = 0; e < nw && r == 1; e++) {
        const olla_pitem *b = &it[in[e]];
        for (size_t f = 0; f < nfx && r == 1; f++)
            if (fx[f].lower < b->upper && b->lower < fx[f].upper &&
                fx_off[f] < woff[e] + b->size && woff[e] < fx_off[f] + fx[f].size)
                r = 0;
    }
    if (r != 1)
        goto done;
    for (size_t e = 0; e < nw; e++) {
        off[in[e]] = woff[e];
        fx[nfx + e] = it[in[e]];
        fx_off[nfx + e] = woff[e];
    }
    r = side(it, before, nl, fx, fx_off, nfx + nw, cap, w, off, depth);
    if (r == 1)
        r = side(it, after, nr, fx, fx_off, nfx + nw, cap, w, off, depth);
done:
    free(win);
    free(woff);
    free(in);
    free(before);
    free(after);
    return r;
}

/* Splits a side at the busiest time t of its own buffers: those live at t
 * are stacked, in one of several orders, each at the lowest address clear
 * of the fixed buffers and of the ones stacked before it, and the parts
 * before and after t are searched (recursively) with all of them fixed. */
static int side_split(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                      const int64_t *fx_off, size_t nfx, int64_t cap, olla_pwork *w,
                      int64_t *off, int depth)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t e = 0; e < k; e++) {
        if (it[idx[e]].lower < lo)
            lo = it[idx[e]].lower;
        if (it[idx[e]].upper > hi)
            hi = it[idx[e]].upper;
    }
    /* the fixed buffers that matter here: those meeting [lo, hi) */
    size_t m = 0;
    for (size_t f = 0; f < nfx; f++)
        m += fx[f].lower < hi && lo < fx[f].upper;
    olla_pitem *all = malloc((k + m + 1) * sizeof *all);
    olla_pkey *keys = malloc((2 * (k + m) + 1) * sizeof *keys);
    olla_pitem *nfx_it = malloc((k + m + 1) * sizeof *nfx_it);
    int64_t *nfx_off = malloc((k + m + 1) * sizeof *nfx_off);
    int *before = malloc((k + 1) * sizeof *before);
    int *after = malloc((k + 1) * sizeof *after);
    int *stack = malloc((k + 1) * sizeof *stack);
    int r = -2;
    if (!all || !keys || !nfx_it || !nfx_off || !before || !after || !stack)
        goto done;
    size_t nf = 0;
    for (size_t f = 0; f < nfx; f++)
        if (fx[f].lower < hi && lo < fx[f].upper) {
            nfx_it[nf] = fx[f];
            nfx_off[nf++] = fx_off[f];
        }
    /* the busiest time counts the fixed buffers too (cut to the side's span) */
    for (size_t e = 0; e < k; e++)
        all[e] = it[idx[e]];
    for (size_t f = 0; f < nf; f++) {
        all[k + f] = nfx_it[f];
        all[k + f].lower = all[k + f].lower < lo ? lo : all[k + f].lower;
        all[k + f].upper = all[k + f].upper > hi ? hi : all[k + f].upper;
    }
    int64_t p = peak_time(all, k + nf, keys);
    size_t nl = 0, nr = 0, ns = 0;
    for (size_t e = 0; e < k; e++) {
        int i = idx[e];
        if (it[i].upper <= p)
            before[nl++] = i;
        else if (it[i].lower > p)
            after[nr++] = i;
        else
            stack[ns++] = i;
    }
    r = 0;
    if (ns == 0 || nl == k || nr == k)
        goto done;
    static const int orders[] = {STACK_END, STACK_START, STACK_LENGTH, STACK_SEARCH};
    const int no = (int)(sizeof orders / sizeof orders[0]);
    for (int a = 0; a < no && r != 1 && r != -2; a++) {
        if (olla_pwork_left(w) == 0 || olla_pwork_late(w)) {
            r = -1;
            break;
        }
        int kind = orders[a];
        if (kind == STACK_SEARCH) {
            int q = stack_search(it, stack, ns, nfx_it, nfx_off, nf, cap, w, off);
            if (q != 1) {
                r = q == -2 ? -2 : r;
                continue;
            }
            for (size_t e = 0; e < ns; e++) {
                nfx_it[nf + e] = it[stack[e]];
                nfx_off[nf + e] = off[stack[e]];
            }
            int r1 = side(it, before, nl, nfx_it, nfx_off, nf + ns, cap, w, off, depth);
            int r2 = r1 == 1 ? side(it, after, nr, nfx_it, nfx_off, nf + ns, cap, w, off, depth)
                             : r1;
            r = r1 == -2 || r2 == -2 ? -2 : r1 == 1 && r2 == 1 ? 1 : -1;
            continue;
        }
        for (size_t e = 0; e < ns; e++) {
            const olla_pitem *b = &it[stack[e]];
            keys[e] = kind == STACK_START ? (olla_pkey){b->lower, -b->upper, stack[e]}
                      : kind == STACK_END ? (olla_pkey){-b->upper, b->lower, stack[e]}
                                          : (olla_pkey){b->lower - b->upper, b->lower, stack[e]};
        }
        olla_place_sort_keys(keys, ns);
        /* each stacked buffer first fit above the fixed ones it meets */
        int fits = 1;
        for (size_t e = 0; e < ns && fits; e++) {
            int i = keys[e].idx;
            int64_t at = 0;
            for (int moved = 1; moved;) {
                moved = 0;
                w->used += (long long)(nf + e);
                for (size_t f = 0; f < nf + e; f++)
                    if (nfx_it[f].lower < it[i].upper && it[i].lower < nfx_it[f].upper &&
                        nfx_off[f] < at + it[i].size && at < nfx_off[f] + nfx_it[f].size) {
                        at = nfx_off[f] + nfx_it[f].size;
                        moved = 1;
                    }
            }
            nfx_it[nf + e] = it[i];
            nfx_off[nf + e] = at;
            off[i] = at;
            fits = at + it[i].size <= cap;
        }
        if (!fits)
            continue;
        int r1 = side(it, before, nl, nfx_it, nfx_off, nf + ns, cap, w, off, depth);
        int r2 = r1 == 1 ? side(it, after, nr, nfx_it, nfx_off, nf + ns, cap, w, off, depth)
                         : r1;
        r = r1 == -2 || r2 == -2 ? -2 : r1 == 1 && r2 == 1 ? 1 : -1;
    }
    if (r != 1 && r != -2 && olla_pwork_left(w) > 0 && !olla_pwork_late(w))
        r = side_window(it, idx, k, p, nfx_it, nfx_off, nf, cap, w, off, depth);
done:
    free(all);
    free(keys);
    free(nfx_it);
    free(nfx_off);
    free(before);
    free(after);
    free(stack);
    return r;
}

/* One side searched with the stacked buffers free (cut at the peak), which
 * chooses their order; then the other side above that stack. */
static int free_side(const olla_pitem *it, const int *stack, size_t ns, const int *idx,
                     size_t k, int64_t p, int later, int64_t cap, olla_pwork *w,
                     olla_pitem *fx, int64_t *fx_off, olla_pitem *sub, int64_t *sub_off,
                     int64_t *off)
{
    size_t m = 0;
    for (size_t e = 0; e < k; e++)
        sub[m++] = it[idx[e]];
    for (size_t e = 0; e < ns; e++) {
        olla_pitem b = it[stack[e]];
        fx[e] = b;
        if (later)
            b.lower = p;
        else
            b.upper = p + 1;
        sub[m++] = b;
    }
    int r = olla_place_search_fixed(sub, m, NULL, NULL, 0, cap, w, sub_off);
    if (r != 1)
        return r;
    for (size_t e = 0; e < k; e++)
        off[idx[e]] = sub_off[e];
    for (size_t e = 0; e < ns; e++) {
        fx_off[e] = sub_off[k + e];
        off[stack[e]] = fx_off[e];
    }
    return 1;
}

/* The buffers live in the window [p - w, p + w] searched together, cut to
 * the window, then fixed (with their whole lifetimes) while the buffers
 * wholly before and wholly after the window are searched above them. */
static int window(const olla_pitem *it, size_t n, int64_t p, int64_t w, int64_t cap,
                  olla_pwork *work, int64_t *off)
{
    olla_pitem *win = malloc((n + 1) * sizeof *win);
    olla_pitem *full = malloc((n + 1) * sizeof *full);
    int64_t *woff = malloc((n + 1) * sizeof *woff);
    int *in = malloc((n + 1) * sizeof *in);
    int *before = malloc((n + 1) * sizeof *before);
    int *after = malloc((n + 1) * sizeof *after);
    int r = -2;
    if (!win || !full || !woff || !in || !before || !after)
        goto done;
    size_t nw = 0, nl = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (it[i].upper <= p - w) {
            before[nl++] = (int)i;
        } else if (it[i].lower > p + w) {
            after[nr++] = (int)i;
        } else {
            olla_pitem b = it[i];
            full[nw] = b;
            if (b.lower < p - w)
                b.lower = p - w;
            if (b.upper > p + w + 1)
                b.upper = p + w + 1;
            win[nw] = b;
            in[nw++] = (int)i;
        }
    }
    r = 0;
    if (2 * nw > n)
        goto done; /* the window holds most of the instance */
    olla_pwork part = olla_pwork_part(work, olla_pwork_left(work) / 8);
    r = olla_place_search_fixed(win, nw, NULL, NULL, 0, cap, &part, woff);
    olla_pwork_join(work, &part);
    if (r != 1)
        goto done;
    for (size_t e = 0; e < nw; e++)
        off[in[e]] = woff[e];
    r = side(it, before, nl, full, woff, nw, cap, work, off, 1);
    if (r == 1)
        r = side(it, after, nr, full, woff, nw, cap, work, off, 1);
done:
    free(win);
    free(full);
    free(woff);
    free(in);
    free(before);
    free(after);
    return r;
}

int olla_place_split(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                     int64_t *off, const olla_logger *log)
{
    if (n == 0)
        return 1;
    olla_pkey *keys = malloc((2 * n + 1) * sizeof *keys);
    int *before = malloc((n + 1) * sizeof *before);
    int *after = malloc((n + 1) * sizeof *after);
    int *stack = malloc((n + 1) * sizeof *stack);
    olla_pitem *fx = malloc((n + 1) * sizeof *fx);
    olla_pitem *sub = malloc((n + 1) * sizeof *sub);
    int64_t *fx_off = malloc((n + 1) * sizeof *fx_off);
    int64_t *sub_off = malloc((n + 1) * sizeof *sub_off);
    int r = 0;
    if (!keys || !before || !after || !stack || !fx || !sub || !fx_off || !sub_off) {
        r = -2;
        goto done;
    }
    int64_t p = peak_time(it, n, keys);
    size_t nl = 0, nr = 0, ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (it[i].upper <= p)
            before[nl++] = (int)i;
        else if (it[i].lower > p)
            after[nr++] = (int)i;
        else
            stack[ns++] = (int)i;
    }
    int64_t peak = 0;
    for (size_t e = 0; e < ns; e++)
        peak += it[stack[e]].size;
    if (peak > capacity)
        goto done; /* more live at p than the capacity */
    if (ns * OLLA_SPLIT_MIN_SHARE < n)
        goto done; /* few long-lived buffers: not a nested trace */
    /* attempts: the stack by end time, by start time, by length (cheap
     * when the sides' greedy placements fit), a window around the peak,
     * the later side chooses the stack, the earlier side chooses */
    static const int attempts[] = {STACK_END, STACK_START, STACK_LENGTH, -3, -2, -1};
    const int na = (int)(sizeof attempts / sizeof attempts[0]);
    for (int a = 0; a < na && r == 0; a++) {
        double now = olla_now();
        if (olla_pwork_left(w) == 0 || olla_pwork_late(w))
            break;
        /* each attempt an equal share of what is left */
        olla_pwork part = olla_pwork_part(w, olla_pwork_left(w) / (na - a));
        int kind = attempts[a], r1, r2;
        if (kind == -3) {
            r1 = r2 = 0;
            for (int64_t width = 32; width <= 256 && r1 != 1 && r1 != -2; width *= 2)
                r1 = r2 = window(it, n, p, width, capacity, &part, off);
        } else if (kind < 0) {
            int later = kind == -2;
            r1 = free_side(it, stack, ns, later ? after : before, later ? nr : nl, p, later,
                           capacity, &part, fx, fx_off, sub, sub_off, off);
            r2 = r1 == 1 ? side(it, later ? before : after, later ? nl : nr, fx, fx_off, ns,
                                capacity, &part, off, 0)
                         : 0;
        } else {
            for (size_t e = 0; e < ns; e++) {
                const olla_pitem *b = &it[stack[e]];
                keys[e] = kind == STACK_START ? (olla_pkey){b->lower, -b->upper, stack[e]}
                          : kind == STACK_END ? (olla_pkey){-b->upper, b->lower, stack[e]}
                                              : (olla_pkey){b->lower - b->upper, b->lower,
                                                            stack[e]};
            }
            olla_place_sort_keys(keys, ns);
            int64_t base = 0;
            for (size_t e = 0; e < ns; e++) {
                int i = keys[e].idx;
                fx[e] = it[i];
                fx_off[e] = base;
                off[i] = base;
                base += it[i].size;
            }
            r1 = side(it, before, nl, fx, fx_off, ns, capacity, &part, off, 0);
            r2 = r1 == 1 ? side(it, after, nr, fx, fx_off, ns, capacity, &part, off, 0) : 0;
        }
        olla_pwork_join(w, &part);
        olla_log(log, OLLA_LOG_DETAIL,
                 "place: split at time %lld (%zu stacked, %zu before, %zu after), attempt %d: %d, %d, %.3f s",
                 (long long)p, ns, nl, nr, a, r1, r2, olla_now() - now);
        if (r1 == -2 || r2 == -2)
            r = -2;
        else if (r1 == 1 && r2 == 1)
            r = 1;
    }
done:
    free(keys);
    free(before);
    free(after);
    free(stack);
    free(fx);
    free(sub);
    free(fx_off);
    free(sub_off);
    return r;
}
