/* olla-onnx: the portfolio of greedy placements. Each one takes the
 * buffers in some order and puts each at the lowest (first fit) or tightest
 * (best fit) gap left by the already placed buffers live at the same time
 * (place_greedy.c, place_sweep.c). The orders are the published ones: by
 * size, largest first (TFLite's "greedy by size"), with two tie rules; by
 * size times lifetime; by lifetime; by start time (an online allocator's
 * order); and the paper's pyramid (PreAllocateAddresses: nested long-lived
 * buffers stacked from address 0) before the rest by size or lifetime.
 * No single one wins everywhere (bench/place_portfolio.sh measures each),
 * so all are run and the best is kept; the portfolio is never worse than
 * any of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* Best fit in order of start time (larger first on ties), with only the
 * live buffers kept in an offset-sorted list: needs no conflict graph.
 * Buffers that all have a size go to olla_place_sweep_best_fit, which finds
 * the same gaps in O(log n) each; this pass over the live ones is for the
 * rest. (First fit in the same order: olla_place_sweep_first_fit.) */
static int64_t sweep_best_fit(const olla_pitem *it, size_t n, int64_t *off)
{
    size_t sized = 0;
    while (sized < n && it[sized].size >= 1)
        sized++;
    if (sized == n)
        return olla_place_sweep_best_fit(it, n, off);
    olla_pkey *ord = malloc((n + 1) * sizeof *ord);
    int *act = malloc((n + 1) * sizeof *act);
    if (!ord || !act) {
        free(ord);
        free(act);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = (olla_pkey){it[i].lower, -it[i].size, (int)i};
    olla_place_sort_keys(ord, n);
    size_t k = 0;
    for (size_t e = 0; e < n; e++) {
        int i = ord[e].idx;
        size_t w = 0;
        for (size_t a = 0; a < k; a++)
            if (it[act[a]].upper > it[i].lower)
                act[w++] = act[a];
        k = w;
        int64_t cur = 0, best_len = -1, best_off = -1;
        size_t pos = k, best_pos = k;
        for (size_t a = 0; a < k; a++) {
            int64_t gap = off[act[a]] - cur;
            if (gap >= it[i].size && (best_len < 0 || gap < best_len)) {
                best_len = gap;
                best_off = cur;
                best_pos = a;
            }
            int64_t top = off[act[a]] + it[act[a]].size;
            if (top > cur)
                cur = top;
        }
        if (best_off >= 0) {
            off[i] = best_off;
            pos = best_pos;
        } else {
            off[i] = cur;
        }
        memmove(act + pos + 1, act + pos, (k - pos) * sizeof *act);
        act[pos] = i;
        k++;
    }
    free(ord);
    free(act);
    return olla_place_items_arena(it, off, n);
}

/* The paper's PreAllocateAddresses: repeatedly take the longest-lived buffer
 * nested inside the previous one and stack it on top. By length, longest
 * first, the next one taken is the first later in that order nested in the
 * last one taken, so one pass over the sorted buffers does it. */
static void pyramid(const olla_pitem *it, size_t n, olla_pkey *keys, int64_t *pinned)
{
    for (size_t i = 0; i < n; i++) {
        pinned[i] = -1;
        keys[i] = (olla_pkey){it[i].lower - it[i].upper, 0, (int)i};
    }
    olla_place_sort_keys(keys, n);
    int64_t lo = INT64_MIN, hi = INT64_MAX, base = 0;
    for (size_t e = 0; e < n; e++) {
        int i = keys[e].idx;
        if (it[i].lower < lo || it[i].upper > hi)
            continue;
        pinned[i] = base;
        base += it[i].size;
        lo = it[i].lower;
        hi = it[i].upper;
    }
}

enum { ORD_SIZE, ORD_SIZE_START, ORD_AREA, ORD_LIFE };

typedef struct heuristic {
    const char *name;
    int order; /* -1: the sweeps by start time */
    int best_fit;
    int pyramid;
} heuristic;

/* Cheapest and most often best first (bench/place_portfolio.sh): the
 * portfolio stops at the bound, and on large inputs after the first
 * OLLA_PLACE_ALWAYS_RUN when its cost estimate is spent. Best fit cannot
 * stop at the first gap that holds a buffer, so it costs more. */
static const heuristic portfolio[] = {
    {"start, first fit", -1, 0, 0},
    {"start, best fit", -1, 1, 0},
    {"size, first fit", ORD_SIZE, 0, 0},
    {"size (ties by start), first fit", ORD_SIZE_START, 0, 0},
    {"size x lifetime, first fit", ORD_AREA, 0, 0},
    {"lifetime, first fit", ORD_LIFE, 0, 0},
    {"pyramid, then size, first fit", ORD_SIZE, 0, 1},
    {"pyramid, then lifetime, first fit", ORD_LIFE, 0, 1},
    {"size, best fit", ORD_SIZE, 1, 0},
    {"size (ties by start), best fit", ORD_SIZE_START, 1, 0},
    {"size x lifetime, best fit", ORD_AREA, 1, 0},
    {"lifetime, best fit", ORD_LIFE, 1, 0},
};
/* The two sweeps and greedy by size always run. */
#define OLLA_PLACE_ALWAYS_RUN 3
/* Cost estimate of the whole portfolio, in pairs of a buffer and a buffer
 * starting within its lifetime visited by the greedy engine (a pass visits
 * each such pair once, and best fit twice): about 3 s of one core. */
#define OLLA_PLACE_PORTFOLIO_PAIRS 400000000LL
#define NHEUR ((int)(sizeof portfolio / sizeof portfolio[0]))

int olla_place_heuristic_count(void) { return NHEUR; }

const char *olla_place_heuristic_name(int k)
{
    return k >= 0 && k < NHEUR ? portfolio[k].name : "none";
}

/* The order of one heuristic; pinned buffers (if any) first. */
static void make_order(const olla_pitem *it, size_t n, int kind, const int64_t *pinned,
                       olla_pkey *keys, int *order)
{
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        int64_t k1 = 0, k2 = 0;
        switch (kind) {
        case ORD_SIZE: k1 = -it[i].size; k2 = -len; break;
        case ORD_SIZE_START: k1 = -it[i].size; k2 = it[i].lower; break;
        case ORD_AREA: {
            double a = (double)len * (double)it[i].size;
            k1 = a > 9e18 ? INT64_MIN : -(int64_t)a;
            k2 = -it[i].size;
            break;
        }
        default: k1 = -len; k2 = -it[i].size; break;
        }
        if (pinned && pinned[i] >= 0) /* before all others, in stacking order */
            k1 = INT64_MIN, k2 = pinned[i];
        keys[i] = (olla_pkey){k1, k2, (int)i};
    }
    olla_place_sort_keys(keys, n);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].idx;
}

int64_t olla_place_heuristic_one(const olla_pitem *it, size_t n, int k, int64_t *off)
{
    if (n == 0)
        return 0;
    const heuristic *h = &portfolio[k];
    if (h->order < 0)
        return h->best_fit ? sweep_best_fit(it, n, off) : olla_place_sweep_first_fit(it, n, off);
    olla_pkey *keys = malloc(n * sizeof *keys);
    int *order = malloc(n * sizeof *order);
    int64_t *pinned = h->pyramid ? malloc(n * sizeof *pinned) : NULL;
    int64_t arena = -1;
    if (keys && order && (pinned || !h->pyramid)) {
        if (pinned)
            pyramid(it, n, keys, pinned);
        make_order(it, n, h->order, pinned, keys, order);
        arena = olla_place_greedy(it, n, order, pinned, h->best_fit, off);
    }
    free(keys);
    free(order);
    free(pinned);
    return arena;
}

/* Pairs (i, j) with j starting strictly within i's lifetime, plus n: the
 * part of a greedy pass that depends on the input's shape. -1 when out of
 * memory. */
static long long pass_cost(const olla_pitem *it, size_t n)
{
    int64_t *starts = malloc((n + 1) * sizeof *starts);
    if (!starts)
        return -1;
    for (size_t i = 0; i < n; i++)
        starts[i] = it[i].lower;
    olla_place_sort_i64(starts, n);
    long long pairs = (long long)n;
    for (size_t i = 0; i < n; i++) /* starts in (lower, upper) */
        pairs += (long long)(olla_place_count_below(starts, n, it[i].upper) -
                             olla_place_count_below(starts, n, it[i].lower + 1));
    free(starts);
    return pairs;
}

int64_t olla_place_heuristic(const olla_pitem *it, size_t n, int64_t *off, int64_t lb,
                             olla_pwork *w, const olla_logger *log)
{
    if (n == 0)
        return 0;
    long long cost = pass_cost(it, n), spent = 0;
    int64_t *tmp = malloc(n * sizeof *tmp), best = INT64_MAX;
    if (!tmp || cost < 0) {
        free(tmp);
        return -1;
    }
    for (int k = 0; k < NHEUR && best > lb; k++) {
        if (k > 0 && olla_pwork_late(w))
            break; /* the safety net: the first one always runs */
        long long c = portfolio[k].order < 0 ? 0 : cost * (portfolio[k].best_fit ? 2 : 1);
        if (k >= OLLA_PLACE_ALWAYS_RUN && spent + c > OLLA_PLACE_PORTFOLIO_PAIRS)
            continue; /* a deterministic cut on large inputs */
        spent += c;
        double t = olla_now();
        int64_t a = olla_place_heuristic_one(it, n, k, tmp);
        if (a < 0) {
            best = -1;
            break;
        }
        olla_log(log, OLLA_LOG_DETAIL, "place: heuristic %s: %lld (%.3f s)", portfolio[k].name, (long long)a,
                 olla_now() - t);
        if (a < best) {
            best = a;
            memcpy(off, tmp, n * sizeof *off);
        }
    }
    free(tmp);
    return best;
}
