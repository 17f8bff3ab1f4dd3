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

/* ---- orders, limits and budgets ---- */

/* How the buffers live at a split time are stacked: in order of start,
 * of end (latest end lowest) or of length, each at the lowest address
 * clear of the fixed buffers, or placed by the exact search among them. */
enum { STACK_START, STACK_END, STACK_LENGTH, STACK_SEARCH };
/* The top-level split's other attempts: the buffers near the busiest time
 * searched as one window, the later side choosing the stack's order, the
 * earlier side choosing it. */
enum { SPLIT_WINDOW = STACK_SEARCH + 1, SPLIT_LATER_CHOOSES, SPLIT_EARLIER_CHOOSES };
/* The greedy orders of a side: by size, lifetime, size x lifetime, start. */
enum { GREEDY_SIZE, GREEDY_LIFE, GREEDY_AREA, GREEDY_START, GREEDY_COUNT };

/* The split is only tried when at least one buffer in this many is live at
 * the peak time, as in training graphs (the forward pass's saved
 * activations all live across the turn to the backward pass). */
#define OLLA_SPLIT_MIN_SHARE 8
/* Sides with more buffers than this are first given a short direct search
 * and, when it does not finish, split again at their own busiest time. */
#define OLLA_SPLIT_DIRECT_MAX 8
#ifndef OLLA_SPLIT_MAX_DEPTH
#define OLLA_SPLIT_MAX_DEPTH 24
#endif
/* Work units of direct search for a side below the top level (about 0.1 s). */
#define OLLA_SPLIT_QUICK (OLLA_PLACE_WORK_PER_SECOND / 10)
/* Half-width in time steps of a side's window around its busiest time. */
#ifndef OLLA_SPLIT_WINDOW
#define OLLA_SPLIT_WINDOW 16
#endif
/* Half-widths of the top-level window around the peak: from the first,
 * doubling up to the last while none is placed. */
#define OLLA_SPLIT_TOP_WINDOW_FIRST 32
#define OLLA_SPLIT_TOP_WINDOW_LAST 256
/* Work units charged for one greedy pass: per buffer, and per pair of
 * buffers live at the same time (the greedy engine visits each such pair
 * when it places the later one, through a segment tree and a heap). */
#define OLLA_SPLIT_GREEDY_UNITS 32
#define OLLA_SPLIT_GREEDY_PAIR_UNITS 16
/* Work units of one exact search of a stack among the fixed buffers. */
#define OLLA_SPLIT_STACK_WORK (OLLA_PLACE_WORK_PER_SECOND / 50)
/* The shares of the budget left (1 / N of it): a side's short direct
 * search at the top level and below it, a side's window, a stack's search
 * (at most OLLA_SPLIT_STACK_WORK) and the top-level window. */
#define OLLA_SPLIT_DIRECT_SHARE_TOP 4
#define OLLA_SPLIT_DIRECT_SHARE_DEEP 8
#define OLLA_SPLIT_SIDE_WINDOW_SHARE 4
#define OLLA_SPLIT_STACK_SHARE 4
#define OLLA_SPLIT_TOP_WINDOW_SHARE 8
/* Work units charged per buffer gathered and counted for the top window. */
#define OLLA_SPLIT_GATHER_UNITS 8

/* ---- the state of a side search ---- */

/* What every search of a side shares: the whole instance, the capacity,
 * the budget it charges, the offsets it fills and the buffers fixed so
 * far. A search that hands a nested one a part of its budget, other fixed
 * buffers or a deeper level passes a copy with those changed. */
typedef struct side_search {
    const olla_pitem *it; /* the whole instance */
    int64_t cap;
    olla_pwork *w;  /* the budget charged */
    int64_t *off;   /* offsets of it[], filled side by side */
    olla_pitem *fx; /* the fixed buffers: fx[f] at fx_off[f], f < nfx */
    int64_t *fx_off;
    size_t nfx;
    int depth; /* splits above this search */
} side_search;

/* A copy of s that charges w. */
static side_search with_budget(const side_search *s, olla_pwork *w)
{
    side_search c = *s;
    c.w = w;
    return c;
}

/* A copy of s above the fixed buffers fx[f] at fx_off[f], f < nfx. */
static side_search with_fixed(const side_search *s, olla_pitem *fx, int64_t *fx_off, size_t nfx)
{
    side_search c = *s;
    c.fx = fx;
    c.fx_off = fx_off;
    c.nfx = nfx;
    return c;
}

/* The buffers of a side cut at a time p: those that end by p (before),
 * those that start after it (after) and those live at it (stack). */
typedef struct side_cut {
    int *before, *after, *stack; /* room for every buffer of the side */
    size_t nl, nr, ns;
} side_cut;

/* Cuts the buffers idx[0..k) (0..k-1 when idx is NULL) at time p. */
static void cut_at(const olla_pitem *it, const int *idx, size_t k, int64_t p, side_cut *c)
{
    c->nl = c->nr = c->ns = 0;
    for (size_t e = 0; e < k; e++) {
        int i = idx ? idx[e] : (int)e;
        if (it[i].upper <= p)
            c->before[c->nl++] = i;
        else if (it[i].lower > p)
            c->after[c->nr++] = i;
        else
            c->stack[c->ns++] = i;
    }
}

/* Allocates the three lists of a cut of k buffers; 0, or -1 when out of
 * memory (every list then freeable). */
static int cut_alloc(side_cut *c, size_t k)
{
    c->before = malloc((k + 1) * sizeof *c->before);
    c->after = malloc((k + 1) * sizeof *c->after);
    c->stack = malloc((k + 1) * sizeof *c->stack);
    return c->before && c->after && c->stack ? 0 : -1;
}

/* Frees the lists of a cut. */
static void cut_free(side_cut *c)
{
    free(c->before);
    free(c->after);
    free(c->stack);
}

/* ---- what the splits share ---- */

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

/* The time span [*lo, *hi) of the buffers idx[0..k). */
static void side_span(const olla_pitem *it, const int *idx, size_t k, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (size_t e = 0; e < k; e++) {
        if (it[idx[e]].lower < *lo)
            *lo = it[idx[e]].lower;
        if (it[idx[e]].upper > *hi)
            *hi = it[idx[e]].upper;
    }
}

/* The number of fixed buffers of s that meet [lo, hi), copied with their
 * offsets to into[] and into_off[] unless into is NULL. */
static size_t fixed_meeting(const side_search *s, int64_t lo, int64_t hi, olla_pitem *into, int64_t *into_off)
{
    size_t m = 0;
    for (size_t f = 0; f < s->nfx; f++)
        if (s->fx[f].lower < hi && lo < s->fx[f].upper) {
            if (into) {
                into[m] = s->fx[f];
                into_off[m] = s->fx_off[f];
            }
            m++;
        }
    return m;
}

/* Sorts the buffers stack[0..ns) into keys[0..ns) in the order kind
 * (STACK_START, STACK_END or STACK_LENGTH). */
static void sort_stack(const olla_pitem *it, const int *stack, size_t ns, int kind, olla_pkey *keys)
{
    for (size_t e = 0; e < ns; e++) {
        const olla_pitem *b = &it[stack[e]];
        keys[e] = kind == STACK_START ? (olla_pkey){b->lower, -b->upper, stack[e]}
                  : kind == STACK_END ? (olla_pkey){-b->upper, b->lower, stack[e]}
                                      : (olla_pkey){b->lower - b->upper, b->lower, stack[e]};
    }
    olla_place_sort_keys(keys, ns);
}

/* ---- a side placed directly ---- */

/* Direct search of one side (idx[0..k)) above the fixed buffers: an
 * OLLA_SEARCH_ outcome, off filled when found. */
static int side_direct(const side_search *s, const int *idx, size_t k)
{
    if (k == 0)
        return OLLA_SEARCH_FOUND;
    olla_pitem *sub = calloc(k, sizeof *sub);
    int64_t *sub_off = calloc(k, sizeof *sub_off);
    if (!sub || !sub_off) {
        free(sub);
        free(sub_off);
        return OLLA_SEARCH_NOMEM;
    }
    for (size_t e = 0; e < k; e++)
        sub[e] = s->it[idx[e]];
    const olla_pfixed fixed = {s->fx, s->fx_off, s->nfx};
    int r = olla_place_search_fixed(sub, k, &fixed, s->cap, s->w, sub_off);
    if (r == OLLA_SEARCH_FOUND)
        for (size_t e = 0; e < k; e++)
            s->off[idx[e]] = sub_off[e];
    free(sub);
    free(sub_off);
    return r;
}

/* Pairs of the m buffers that are live at the same time, plus m; -1 when
 * out of memory. With the starts and the ends sorted (in linear time), a
 * pass over both counts for every end the starts below it and for every
 * start the ends at or below it: their difference counts each pair twice. */
static long long overlapping_pairs(const olla_pitem *b, size_t m)
{
    uint64_t *starts = malloc((m + 1) * sizeof *starts), *ends = malloc((m + 1) * sizeof *ends);
    uint64_t *tmp = malloc((m + 1) * sizeof *tmp);
    long long pairs = -1;
    if (starts && ends && tmp) {
        for (size_t i = 0; i < m; i++) { /* the sign bit flipped: unsigned order is signed order */
            starts[i] = (uint64_t)b[i].lower ^ (UINT64_C(1) << 63);
            ends[i] = (uint64_t)b[i].upper ^ (UINT64_C(1) << 63);
        }
        olla_place_radix_sort(starts, NULL, m, tmp, NULL);
        olla_place_radix_sort(ends, NULL, m, tmp, NULL);
        pairs = 0;
        size_t s = 0, e = 0;
        for (size_t i = 0; i < m; i++) { /* j starts before i ends */
            while (s < m && starts[s] < ends[i])
                s++;
            pairs += (long long)s;
        }
        for (size_t i = 0; i < m; i++) { /* j ends when or before i starts */
            while (e < m && ends[e] <= starts[i])
                e++;
            pairs -= (long long)e;
        }
        pairs = pairs / 2 + (long long)m;
    }
    free(starts);
    free(ends);
    free(tmp);
    return pairs;
}

/* A greedy pass's instance: the nf fixed buffers meeting the side's span
 * (pinned at their offsets), then the side's k buffers; room for m = nf + k
 * in each array. */
typedef struct greedy_input {
    olla_pitem *sub;
    int64_t *pin, *o; /* pinned offsets (-1: free); the offsets found */
    olla_pkey *keys;
    int *order;
    size_t nf, k, m;
} greedy_input;

/* Greedy pass key of buffer b in the order kind (GREEDY_*). */
static int64_t greedy_key(const olla_pitem *b, int kind)
{
    int64_t len = b->upper - b->lower;
    double area = (double)len * (double)b->size;
    return kind == GREEDY_SIZE   ? -b->size
           : kind == GREEDY_LIFE ? -len
           : kind == GREEDY_AREA ? (area > OLLA_PLACE_AREA_MAX ? INT64_MIN + 1 : -(int64_t)area)
                                 : b->lower;
}

/* One greedy pass in the order kind (GREEDY_*), first or best fit: the
 * arena (g->o filled), or -1 when out of memory. */
static int64_t greedy_pass(greedy_input *g, int kind, int best_fit)
{
    for (size_t f = 0; f < g->nf; f++) /* the fixed ones first */
        g->keys[f] = (olla_pkey){INT64_MIN, g->pin[f], (int)f};
    for (size_t e = 0; e < g->k; e++) {
        const olla_pitem *b = &g->sub[g->nf + e];
        g->keys[g->nf + e] = (olla_pkey){greedy_key(b, kind), -b->size, (int)(g->nf + e)};
    }
    olla_place_sort_keys(g->keys, g->m);
    for (size_t e = 0; e < g->m; e++)
        g->order[e] = g->keys[e].idx;
    return olla_place_greedy(g->sub, g->m, g->order, g->pin, best_fit, g->o);
}

/* Greedy placements of one side (idx[0..k)) around the fixed buffers that
 * meet its time span, in a few orders (size, lifetime, size x lifetime,
 * start), first and best fit: OLLA_SEARCH_FOUND (off filled) when one stays
 * within cap, OLLA_SEARCH_NONE when none does (or the budget is spent: no
 * proof either way), OLLA_SEARCH_NOMEM. Far cheaper than a search; on
 * training graphs, once the busiest times are stacked, the load elsewhere
 * leaves room and a greedy pass often fits. */
static int side_greedy(const side_search *s, const int *idx, size_t k)
{
    int64_t lo, hi;
    side_span(s->it, idx, k, &lo, &hi);
    greedy_input g = {.nf = fixed_meeting(s, lo, hi, NULL, NULL), .k = k};
    g.m = g.nf + k;
    g.sub = malloc((g.m + 1) * sizeof *g.sub);
    g.pin = malloc((g.m + 1) * sizeof *g.pin);
    g.o = malloc((g.m + 1) * sizeof *g.o);
    g.keys = malloc((g.m + 1) * sizeof *g.keys);
    g.order = malloc((g.m + 1) * sizeof *g.order);
    int r = OLLA_SEARCH_NOMEM;
    if (!g.sub || !g.pin || !g.o || !g.keys || !g.order)
        goto done;
    fixed_meeting(s, lo, hi, g.sub, g.pin);
    for (size_t e = 0; e < k; e++) {
        g.sub[g.nf + e] = s->it[idx[e]];
        g.pin[g.nf + e] = -1;
    }
    long long pairs = overlapping_pairs(g.sub, g.m);
    if (pairs < 0)
        goto done;
    r = OLLA_SEARCH_NONE;
    long long gather = (long long)s->nfx + OLLA_SPLIT_GATHER_UNITS * (long long)g.m; /* gathering and counting */
    if (olla_pwork_left(s->w) < gather)
        goto done;
    s->w->used += gather;
    for (int kind = 0; kind < GREEDY_COUNT && r == OLLA_SEARCH_NONE; kind++)
        for (int best_fit = 0; best_fit < 2 && r == OLLA_SEARCH_NONE; best_fit++) {
            long long units = OLLA_SPLIT_GREEDY_UNITS * (long long)g.m + OLLA_SPLIT_GREEDY_PAIR_UNITS * pairs;
            if (olla_pwork_left(s->w) < units || olla_pwork_late(s->w))
                goto done;
            s->w->used += units;
            int64_t a = greedy_pass(&g, kind, best_fit);
            if (a < 0) {
                r = OLLA_SEARCH_NOMEM;
            } else if (a <= s->cap) {
                for (size_t e = 0; e < k; e++)
                    s->off[idx[e]] = g.o[g.nf + e];
                r = OLLA_SEARCH_FOUND;
            }
        }
done:
    free(g.sub);
    free(g.pin);
    free(g.o);
    free(g.keys);
    free(g.order);
    return r;
}

/* ---- a side split at its busiest time ---- */

static int side_split(const side_search *s, const int *idx, size_t k);
static int side_window(const side_search *s, const int *idx, size_t k, int64_t p);

/* Searches the buffers of one side (idx[0..k)) above the fixed buffers:
 * greedily, then directly when small, else split at the side's own busiest
 * time and then a short direct search. Returns OLLA_SEARCH_FOUND (off
 * filled), OLLA_SEARCH_NOMEM, or another outcome (not found). */
static int side(const side_search *s, const int *idx, size_t k)
{
    if (k == 0)
        return OLLA_SEARCH_FOUND;
    int r = side_greedy(s, idx, k);
    if (r != OLLA_SEARCH_NONE)
        return r;
    if (k <= OLLA_SPLIT_DIRECT_MAX || s->depth >= OLLA_SPLIT_MAX_DEPTH)
        return side_direct(s, idx, k);
    /* the side's own busiest time stacked first: cheap when it works;
     * then a short direct search */
    side_search deeper = *s;
    deeper.depth++;
    r = side_split(&deeper, idx, k);
    if (r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NOMEM || olla_pwork_left(s->w) == 0 || olla_pwork_late(s->w))
        return r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NOMEM ? r : OLLA_SEARCH_GAVE_UP;
    long long quick = olla_pwork_left(s->w) / (s->depth == 0 ? OLLA_SPLIT_DIRECT_SHARE_TOP : OLLA_SPLIT_DIRECT_SHARE_DEEP);
    if (s->depth > 0 && quick > OLLA_SPLIT_QUICK)
        quick = OLLA_SPLIT_QUICK;
    olla_pwork q = olla_pwork_part(s->w, quick);
    side_search quick_search = with_budget(s, &q);
    r = side_direct(&quick_search, idx, k);
    olla_pwork_join(s->w, &q);
    return r;
}

/* The sides before and after a stack (fixed in s): OLLA_SEARCH_FOUND when
 * both are placed, OLLA_SEARCH_NOMEM, else OLLA_SEARCH_GAVE_UP. */
static int search_sides(const side_search *s, const side_cut *cut)
{
    int r1 = side(s, cut->before, cut->nl);
    int r2 = r1 == OLLA_SEARCH_FOUND ? side(s, cut->after, cut->nr) : r1;
    return r1 == OLLA_SEARCH_NOMEM || r2 == OLLA_SEARCH_NOMEM   ? OLLA_SEARCH_NOMEM
           : r1 == OLLA_SEARCH_FOUND && r2 == OLLA_SEARCH_FOUND ? OLLA_SEARCH_FOUND
                                                                : OLLA_SEARCH_GAVE_UP;
}

/* The side's buffers live within OLLA_SPLIT_WINDOW steps of p, cut to that
 * window, searched above the fixed buffers (s->fx has room for k more),
 * then fixed with their whole lifetimes while the rest is searched. */
static int side_window(const side_search *s, const int *idx, size_t k, int64_t p)
{
    const int64_t width = OLLA_SPLIT_WINDOW;
    const olla_pitem *it = s->it;
    olla_pitem *win = malloc((k + 1) * sizeof *win);
    int64_t *woff = malloc((k + 1) * sizeof *woff);
    int *in = malloc((k + 1) * sizeof *in);
    int *before = malloc((k + 1) * sizeof *before);
    int *after = malloc((k + 1) * sizeof *after);
    int r = OLLA_SEARCH_NOMEM;
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
    olla_pwork part = olla_pwork_part(s->w, olla_pwork_left(s->w) / OLLA_SPLIT_SIDE_WINDOW_SHARE);
    const olla_pfixed fixed = {s->fx, s->fx_off, s->nfx};
    r = olla_place_search_fixed(win, nw, &fixed, s->cap, &part, woff);
    olla_pwork_join(s->w, &part);
    if (r != OLLA_SEARCH_FOUND)
        goto done;
    /* the search saw the cut lifetimes: outside the window a buffer may
     * still meet a fixed one */
    for (size_t e = 0; e < nw && r == OLLA_SEARCH_FOUND; e++) {
        const olla_pitem *b = &it[in[e]];
        for (size_t f = 0; f < s->nfx && r == OLLA_SEARCH_FOUND; f++)
            if (s->fx[f].lower < b->upper && b->lower < s->fx[f].upper && s->fx_off[f] < woff[e] + b->size &&
                woff[e] < s->fx_off[f] + s->fx[f].size)
                r = OLLA_SEARCH_NONE;
    }
    if (r != OLLA_SEARCH_FOUND)
        goto done;
    for (size_t e = 0; e < nw; e++) {
        s->off[in[e]] = woff[e];
        s->fx[s->nfx + e] = it[in[e]];
        s->fx_off[s->nfx + e] = woff[e];
    }
    side_search above = with_fixed(s, s->fx, s->fx_off, s->nfx + nw);
    r = side(&above, before, nl);
    if (r == OLLA_SEARCH_FOUND)
        r = side(&above, after, nr);
done:
    free(win);
    free(woff);
    free(in);
    free(before);
    free(after);
    return r;
}

/* The buffers stack[0..ns), all live at one time, placed by the exact
 * search among the fixed buffers (holes included, which a stack built in
 * one order may fail to fill), with a small part of the budget: an
 * OLLA_SEARCH_ outcome, off filled when found. */
static int stack_search(const side_search *s, const int *stack, size_t ns)
{
    long long units = olla_pwork_left(s->w) / OLLA_SPLIT_STACK_SHARE;
    olla_pwork part = olla_pwork_part(s->w, units < OLLA_SPLIT_STACK_WORK ? units : OLLA_SPLIT_STACK_WORK);
    side_search in = with_budget(s, &part);
    int r = side_direct(&in, stack, ns);
    olla_pwork_join(s->w, &part);
    return r;
}

/* The stack of cut placed in the order kind above the fixed buffers of s,
 * and appended to them (s->fx has room for it): by the exact search
 * (STACK_SEARCH), else each buffer first fit above the fixed ones and those
 * stacked before it. OLLA_SEARCH_FOUND when it fits within the capacity,
 * OLLA_SEARCH_NOMEM, else OLLA_SEARCH_NONE. */
static int place_stack(const side_search *s, const side_cut *cut, int kind, olla_pkey *keys)
{
    const olla_pitem *it = s->it;
    size_t nf = s->nfx;
    if (kind == STACK_SEARCH) {
        int q = stack_search(s, cut->stack, cut->ns);
        if (q != OLLA_SEARCH_FOUND)
            return q == OLLA_SEARCH_NOMEM ? OLLA_SEARCH_NOMEM : OLLA_SEARCH_NONE;
        for (size_t e = 0; e < cut->ns; e++) {
            s->fx[nf + e] = it[cut->stack[e]];
            s->fx_off[nf + e] = s->off[cut->stack[e]];
        }
        return OLLA_SEARCH_FOUND;
    }
    sort_stack(it, cut->stack, cut->ns, kind, keys);
    int fits = 1, spent = 0;
    for (size_t e = 0; e < cut->ns && fits; e++) {
        int i = keys[e].idx;
        int64_t at = 0;
        for (int moved = 1; moved && !spent;) {
            moved = 0;
            spent = olla_pwork_left(s->w) < (long long)(nf + e); /* no budget for the pass: not placed */
            if (spent)
                break;
            s->w->used += (long long)(nf + e);
            for (size_t f = 0; f < nf + e; f++)
                if (s->fx[f].lower < it[i].upper && it[i].lower < s->fx[f].upper && s->fx_off[f] < at + it[i].size &&
                    at < s->fx_off[f] + s->fx[f].size) {
                    at = s->fx_off[f] + s->fx[f].size;
                    moved = 1;
                }
        }
        s->fx[nf + e] = it[i];
        s->fx_off[nf + e] = at;
        s->off[i] = at;
        fits = !spent && at + it[i].size <= s->cap;
    }
    return fits ? OLLA_SEARCH_FOUND : OLLA_SEARCH_NONE;
}

/* The stack of cut tried in each order above the fixed buffers of s, the
 * sides before and after it searched above both: an OLLA_SEARCH_
 * outcome. */
static int stack_orders(const side_search *s, const side_cut *cut, olla_pkey *keys)
{
    static const int orders[] = {STACK_END, STACK_START, STACK_LENGTH, STACK_SEARCH};
    const int no = (int)(sizeof orders / sizeof orders[0]);
    int r = OLLA_SEARCH_NONE;
    for (int a = 0; a < no && r != OLLA_SEARCH_FOUND && r != OLLA_SEARCH_NOMEM; a++) {
        if (olla_pwork_left(s->w) == 0 || olla_pwork_late(s->w)) {
            r = OLLA_SEARCH_GAVE_UP;
            break;
        }
        int q = place_stack(s, cut, orders[a], keys);
        if (q == OLLA_SEARCH_NOMEM) {
            r = OLLA_SEARCH_NOMEM;
        } else if (q == OLLA_SEARCH_FOUND) {
            side_search above = with_fixed(s, s->fx, s->fx_off, s->nfx + cut->ns);
            r = search_sides(&above, cut);
        }
    }
    return r;
}

/* What one split of a side works on: the fixed buffers that meet the
 * side's span (then its stack), its busiest time and its cut there. */
typedef struct side_frame {
    olla_pitem *all; /* k + m + 1: the side's buffers, then the fixed ones cut to its span */
    olla_pkey *keys; /* 2 (k + m) + 1 */
    olla_pitem *fx;  /* k + m + 1: the fixed buffers meeting the span, then the stack */
    int64_t *fx_off;
    size_t nf; /* fixed buffers meeting the span */
    int64_t p; /* the busiest time, counting the fixed buffers */
    side_cut cut;
} side_frame;

/* Fills fr for the side idx[0..k) of s; 0, or -1 when out of memory
 * (frame_free then still frees what was allocated). */
static int frame_init(side_frame *fr, const side_search *s, const int *idx, size_t k)
{
    int64_t lo, hi;
    side_span(s->it, idx, k, &lo, &hi);
    /* the fixed buffers that matter here: those meeting [lo, hi) */
    size_t m = fixed_meeting(s, lo, hi, NULL, NULL);
    fr->all = malloc((k + m + 1) * sizeof *fr->all);
    fr->keys = malloc((2 * (k + m) + 1) * sizeof *fr->keys);
    fr->fx = malloc((k + m + 1) * sizeof *fr->fx);
    fr->fx_off = malloc((k + m + 1) * sizeof *fr->fx_off);
    if (cut_alloc(&fr->cut, k) < 0 || !fr->all || !fr->keys || !fr->fx || !fr->fx_off)
        return -1;
    fr->nf = fixed_meeting(s, lo, hi, fr->fx, fr->fx_off);
    /* the busiest time counts the fixed buffers too (cut to the side's span) */
    for (size_t e = 0; e < k; e++)
        fr->all[e] = s->it[idx[e]];
    for (size_t f = 0; f < fr->nf; f++) {
        olla_pitem *b = &fr->all[k + f];
        *b = fr->fx[f];
        b->lower = b->lower < lo ? lo : b->lower;
        b->upper = b->upper > hi ? hi : b->upper;
    }
    fr->p = peak_time(fr->all, k + fr->nf, fr->keys);
    cut_at(s->it, idx, k, fr->p, &fr->cut);
    return 0;
}

/* Frees what frame_init allocated. */
static void frame_free(side_frame *fr)
{
    free(fr->all);
    free(fr->keys);
    free(fr->fx);
    free(fr->fx_off);
    cut_free(&fr->cut);
}

/* Splits a side at the busiest time t of its own buffers: those live at t
 * are stacked, in one of several orders, each at the lowest address clear
 * of the fixed buffers and of the ones stacked before it, and the parts
 * before and after t are searched (recursively) with all of them fixed;
 * then the buffers near t as one window. An OLLA_SEARCH_ outcome. */
static int side_split(const side_search *s, const int *idx, size_t k)
{
    side_frame fr = {0};
    int r = OLLA_SEARCH_NOMEM;
    if (frame_init(&fr, s, idx, k) == 0) {
        r = OLLA_SEARCH_NONE;
        const side_cut *cut = &fr.cut;
        if (cut->ns > 0 && cut->nl != k && cut->nr != k) {
            side_search in = with_fixed(s, fr.fx, fr.fx_off, fr.nf);
            r = stack_orders(&in, cut, fr.keys);
            if (r != OLLA_SEARCH_FOUND && r != OLLA_SEARCH_NOMEM && olla_pwork_left(s->w) > 0 && !olla_pwork_late(s->w))
                r = side_window(&in, idx, k, fr.p);
        }
    }
    frame_free(&fr);
    return r;
}

/* ---- the split of the whole instance ---- */

/* The whole instance cut at its busiest time, and what its attempts share. */
typedef struct split_top {
    side_search s; /* depth 0; fx, fx_off (n + 1): the stack, nfx = its size */
    size_t n;
    int64_t p; /* the busiest time */
    side_cut cut;
    olla_pkey *keys; /* 2 n + 1 */
    olla_pitem *sub; /* n + 1: the instance of free_side */
    int64_t *sub_off;
} split_top;

/* One side searched with the stacked buffers free (cut at the peak), which
 * chooses their order; then the stack is fixed where that search put it.
 * The later side when later is set, else the earlier one. */
static int free_side(const split_top *t, int later, olla_pwork *w)
{
    const olla_pitem *it = t->s.it;
    const side_cut *c = &t->cut;
    const int *idx = later ? c->after : c->before;
    size_t k = later ? c->nr : c->nl, m = 0;
    for (size_t e = 0; e < k; e++)
        t->sub[m++] = it[idx[e]];
    for (size_t e = 0; e < c->ns; e++) {
        olla_pitem b = it[c->stack[e]];
        t->s.fx[e] = b;
        if (later)
            b.lower = t->p;
        else
            b.upper = t->p + 1;
        t->sub[m++] = b;
    }
    int r = olla_place_search_fixed(t->sub, m, NULL, t->s.cap, w, t->sub_off);
    if (r != OLLA_SEARCH_FOUND)
        return r;
    for (size_t e = 0; e < k; e++)
        t->s.off[idx[e]] = t->sub_off[e];
    for (size_t e = 0; e < c->ns; e++) {
        t->s.fx_off[e] = t->sub_off[k + e];
        t->s.off[c->stack[e]] = t->s.fx_off[e];
    }
    return OLLA_SEARCH_FOUND;
}

/* The buffers live in the window [p - width, p + width] searched together,
 * cut to the window, then fixed (with their whole lifetimes) while the
 * buffers wholly before and wholly after the window are searched above
 * them. */
static int window(const split_top *t, int64_t width, olla_pwork *work)
{
    const olla_pitem *it = t->s.it;
    size_t n = t->n;
    int64_t p = t->p;
    olla_pitem *win = malloc((n + 1) * sizeof *win);
    olla_pitem *full = malloc((n + 1) * sizeof *full);
    int64_t *woff = malloc((n + 1) * sizeof *woff);
    int *in = malloc((n + 1) * sizeof *in);
    side_cut cut;
    int r = OLLA_SEARCH_NOMEM;
    if (cut_alloc(&cut, n) < 0 || !win || !full || !woff || !in)
        goto done;
    size_t nw = 0, nl = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (it[i].upper <= p - width) {
            cut.before[nl++] = (int)i;
        } else if (it[i].lower > p + width) {
            cut.after[nr++] = (int)i;
        } else {
            olla_pitem b = it[i];
            full[nw] = b;
            if (b.lower < p - width)
                b.lower = p - width;
            if (b.upper > p + width + 1)
                b.upper = p + width + 1;
            win[nw] = b;
            in[nw++] = (int)i;
        }
    }
    r = OLLA_SEARCH_NONE;
    if (2 * nw > n)
        goto done; /* the window holds most of the instance */
    olla_pwork part = olla_pwork_part(work, olla_pwork_left(work) / OLLA_SPLIT_TOP_WINDOW_SHARE);
    r = olla_place_search_fixed(win, nw, NULL, t->s.cap, &part, woff);
    olla_pwork_join(work, &part);
    if (r != OLLA_SEARCH_FOUND)
        goto done;
    for (size_t e = 0; e < nw; e++)
        t->s.off[in[e]] = woff[e];
    side_search above = {it, t->s.cap, work, t->s.off, full, woff, nw, 1};
    r = side(&above, cut.before, nl);
    if (r == OLLA_SEARCH_FOUND)
        r = side(&above, cut.after, nr);
done:
    free(win);
    free(full);
    free(woff);
    free(in);
    cut_free(&cut);
    return r;
}

/* One attempt of the top-level split (STACK_* but STACK_SEARCH, or
 * SPLIT_*) with the budget w: the outcomes of its two phases (the stack or
 * the side that chooses it, then the other sides) in r[0] and r[1]. */
static void attempt(split_top *t, int kind, olla_pwork *w, int r[2])
{
    const side_cut *c = &t->cut;
    side_search s = with_budget(&t->s, w);
    if (kind == SPLIT_WINDOW) {
        /* a wider window that holds most of the instance is none, but a
         * narrower one that gave up could have fitted with more budget */
        int gave_up = 0;
        r[0] = r[1] = OLLA_SEARCH_NONE;
        for (int64_t width = OLLA_SPLIT_TOP_WINDOW_FIRST;
             width <= OLLA_SPLIT_TOP_WINDOW_LAST && r[0] != OLLA_SEARCH_FOUND && r[0] != OLLA_SEARCH_NOMEM; width *= 2) {
            r[0] = r[1] = window(t, width, w);
            gave_up |= r[0] == OLLA_SEARCH_GAVE_UP;
        }
        if (r[0] == OLLA_SEARCH_NONE && gave_up)
            r[0] = r[1] = OLLA_SEARCH_GAVE_UP;
    } else if (kind == SPLIT_LATER_CHOOSES || kind == SPLIT_EARLIER_CHOOSES) {
        int later = kind == SPLIT_LATER_CHOOSES;
        r[0] = free_side(t, later, w);
        r[1] = r[0] == OLLA_SEARCH_FOUND ? side(&s, later ? c->before : c->after, later ? c->nl : c->nr)
                                         : OLLA_SEARCH_NONE;
    } else {
        /* the stack from address 0, in the order kind */
        sort_stack(t->s.it, c->stack, c->ns, kind, t->keys);
        int64_t base = 0;
        for (size_t e = 0; e < c->ns; e++) {
            int i = t->keys[e].idx;
            t->s.fx[e] = t->s.it[i];
            t->s.fx_off[e] = base;
            t->s.off[i] = base;
            base += t->s.it[i].size;
        }
        r[0] = side(&s, c->before, c->nl);
        r[1] = r[0] == OLLA_SEARCH_FOUND ? side(&s, c->after, c->nr) : OLLA_SEARCH_NONE;
    }
}

/* Allocates t's arrays for n buffers, finds the busiest time and cuts the
 * instance there; 0, or -1 when out of memory (split_top_free then still
 * frees what was allocated). */
static int split_top_init(split_top *t, const olla_pitem *it, size_t n, int64_t capacity, int64_t *off)
{
    memset(t, 0, sizeof *t);
    t->s = (side_search){it, capacity, NULL, off, NULL, NULL, 0, 0};
    t->n = n;
    t->keys = malloc((2 * n + 1) * sizeof *t->keys);
    t->s.fx = malloc((n + 1) * sizeof *t->s.fx);
    t->sub = malloc((n + 1) * sizeof *t->sub);
    t->s.fx_off = malloc((n + 1) * sizeof *t->s.fx_off);
    t->sub_off = malloc((n + 1) * sizeof *t->sub_off);
    if (cut_alloc(&t->cut, n) < 0 || !t->keys || !t->s.fx || !t->sub || !t->s.fx_off || !t->sub_off)
        return -1;
    t->p = peak_time(it, n, t->keys);
    cut_at(it, NULL, n, t->p, &t->cut);
    t->s.nfx = t->cut.ns;
    return 0;
}

/* Frees what split_top_init allocated. */
static void split_top_free(split_top *t)
{
    free(t->keys);
    cut_free(&t->cut);
    free(t->s.fx);
    free(t->sub);
    free(t->s.fx_off);
    free(t->sub_off);
}

/* The attempts run in rounds until one places everything: in each round
 * every attempt that gave up before runs again, each with an equal share of
 * what w has left but at most the round's cap. The cap starts at
 * 1 / OLLA_SPLIT_ROUND_GROWTH^(OLLA_PLACE_SPLIT_ROUNDS - 1) of an equal share of
 * the whole budget and grows by OLLA_SPLIT_ROUND_GROWTH a round; the last
 * round has none. So an attempt that succeeds cheaply does not wait behind
 * one that spends a whole share giving up, and the earlier rounds cost at
 * most 1 / (OLLA_SPLIT_ROUND_GROWTH - 1) of the last. An attempt whose
 * outcome more budget would not change is not run again. */
#define OLLA_SPLIT_ROUND_GROWTH 4

/* Attempt a of a round with at most units, logged: OLLA_SEARCH_FOUND when
 * it placed everything, OLLA_SEARCH_NOMEM, OLLA_SEARCH_GAVE_UP when more
 * budget could change its outcome, else OLLA_SEARCH_NONE. */
static int attempt_logged(split_top *t, int a, int round, long long units, olla_pwork *w, const olla_logger *log)
{
    /* the stack by end time, by start time, by length (cheap when the
     * sides' greedy placements fit), a window around the peak, the later
     * side chooses the stack, the earlier side chooses */
    static const int kinds[OLLA_PLACE_SPLIT_ATTEMPTS] = {STACK_END,    STACK_START,         STACK_LENGTH,
                                                   SPLIT_WINDOW, SPLIT_LATER_CHOOSES, SPLIT_EARLIER_CHOOSES};
    const side_cut *c = &t->cut;
    double now = olla_now();
    olla_pwork part = olla_pwork_part(w, units);
    int rs[2];
    attempt(t, kinds[a], &part, rs);
    /* a search may end its tries when the budget runs out and still report
     * none: a spent budget counts as giving up */
    int spent = olla_pwork_left(&part) == 0 || part.stopped;
    olla_pwork_join(w, &part);
    olla_log(log, OLLA_LOG_DETAIL,
             "place: split at time %lld (%zu stacked, %zu before, %zu after), round %d, attempt %d: %d, %d, "
             "%lld units, %.3f s",
             (long long)t->p, c->ns, c->nl, c->nr, round, a, rs[0], rs[1], part.used, olla_now() - now);
    if (rs[0] == OLLA_SEARCH_NOMEM || rs[1] == OLLA_SEARCH_NOMEM)
        return OLLA_SEARCH_NOMEM;
    if (rs[0] == OLLA_SEARCH_FOUND && rs[1] == OLLA_SEARCH_FOUND)
        return OLLA_SEARCH_FOUND;
    return spent || rs[0] == OLLA_SEARCH_GAVE_UP || rs[1] == OLLA_SEARCH_GAVE_UP ? OLLA_SEARCH_GAVE_UP
                                                                                 : OLLA_SEARCH_NONE;
}

/* The attempts in rounds, from round pr->round (a split that starts: 0,
 * its caps taken from what w has left) up to round rounds: an OLLA_SEARCH_
 * outcome (OLLA_SEARCH_NONE when none placed everything, OLLA_SEARCH_GAVE_UP
 * when attempts are left for the rounds not run, pr then where they
 * stand). */
static int attempts(split_top *t, olla_pwork *w, olla_split_progress *pr, const olla_logger *log)
{
    if (pr->round == 0) {
        pr->share = olla_pwork_left(w);
        for (int a = 0; a < OLLA_PLACE_SPLIT_ATTEMPTS; a++)
            pr->open[a] = 1;
    }
    int n_open = 0;
    for (int a = 0; a < OLLA_PLACE_SPLIT_ATTEMPTS; a++)
        n_open += pr->open[a];
    long long cap = pr->share / OLLA_PLACE_SPLIT_ATTEMPTS;
    for (int k = 1; k < OLLA_PLACE_SPLIT_ROUNDS; k++)
        cap /= OLLA_SPLIT_ROUND_GROWTH;
    for (int k = 0; k < pr->round; k++)
        cap *= OLLA_SPLIT_ROUND_GROWTH;
    for (; pr->round < OLLA_PLACE_SPLIT_ROUNDS && n_open > 0; pr->round++, cap *= OLLA_SPLIT_ROUND_GROWTH) {
        int round = pr->round;
        if (round == pr->until)
            return OLLA_SEARCH_GAVE_UP;
        int to_run = n_open;
        for (int a = 0; a < OLLA_PLACE_SPLIT_ATTEMPTS; a++) {
            if (!pr->open[a])
                continue;
            if (olla_pwork_left(w) == 0 || olla_pwork_late(w))
                return OLLA_SEARCH_NONE;
            long long units = olla_pwork_left(w) / to_run--;
            if (round < OLLA_PLACE_SPLIT_ROUNDS - 1 && units > cap)
                units = cap;
            int r = attempt_logged(t, a, round, units, w, log);
            if (r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NOMEM)
                return r;
            if (r == OLLA_SEARCH_NONE) {
                pr->open[a] = 0;
                n_open--;
            }
        }
    }
    return OLLA_SEARCH_NONE;
}

int olla_place_split(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w, int64_t *off,
                     const olla_logger *log)
{
    olla_split_progress pr = {OLLA_PLACE_SPLIT_ROUNDS, 0, 0, {0}};
    return olla_place_split_rounds(it, n, capacity, &pr, w, off, log);
}

int olla_place_split_rounds(const olla_pitem *it, size_t n, int64_t capacity, olla_split_progress *pr, olla_pwork *w,
                            int64_t *off, const olla_logger *log)
{
    if (n == 0)
        return OLLA_SEARCH_FOUND;
    split_top t;
    int r = OLLA_SEARCH_NOMEM;
    if (split_top_init(&t, it, n, capacity, off) == 0) {
        int64_t peak = 0;
        for (size_t e = 0; e < t.cut.ns; e++)
            peak += it[t.cut.stack[e]].size;
        r = OLLA_SEARCH_NONE;
        /* not when more is live at p than the capacity, nor when few buffers
         * live long (not a nested trace) */
        if (peak <= capacity && t.cut.ns * OLLA_SPLIT_MIN_SHARE >= n)
            r = attempts(&t, w, pr, log);
    }
    split_top_free(&t);
    return r;
}

/* ---- a side around buffers fixed elsewhere (place_window.c) ---- */

/* A side placed around buffers fixed by the caller, with a copy of them
 * that the side's splits can add to. */
int olla_place_split_side(const olla_pitem *it, int64_t cap, const int *idx, size_t k, const olla_pfixed *fixed,
                          olla_pwork *w, int64_t *off)
{
    size_t nf = fixed ? fixed->n : 0;
    olla_pitem *fx = malloc((nf + k + 1) * sizeof *fx);
    int64_t *fx_off = malloc((nf + k + 1) * sizeof *fx_off);
    int r = OLLA_SEARCH_NOMEM;
    if (fx && fx_off) {
        for (size_t f = 0; f < nf; f++) {
            fx[f] = fixed->it[f];
            fx_off[f] = fixed->off[f];
        }
        side_search s = {it, cap, w, off, fx, fx_off, nf, 0};
        r = side(&s, idx, k);
    }
    free(fx);
    free(fx_off);
    return r;
}
