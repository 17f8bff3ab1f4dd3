/* olla-onnx: greedy placements. Each one takes the buffers in some order
 * and puts each at the lowest (first fit) or tightest (best fit) gap left
 * by the buffers already placed that are live at the same time. The best
 * of several orders wins. Also the paper's pyramid pre-placement
 * (PreAllocateAddresses): nested long-lived buffers stacked from address 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* Stop building the conflict graph beyond this many directed edges. */
#define OLLA_PLACE_EDGE_BUDGET 16000000

typedef struct conflicts {
    int64_t *start; /* n + 1 */
    int *adj;
} conflicts;

static void conflicts_free(conflicts *c)
{
    free(c->start);
    free(c->adj);
    c->start = NULL;
    c->adj = NULL;
}

/* Sweeps buffers by start time; returns 0 on success, 1 over budget, -1 out of memory. */
static int conflicts_build(const olla_pitem *it, size_t n, conflicts *c)
{
    c->start = calloc(n + 1, sizeof *c->start);
    olla_pkey *ord = malloc((n + 1) * sizeof *ord);
    int *act = malloc((n + 1) * sizeof *act);
    int64_t *deg = c->start;
    c->adj = NULL;
    if (!c->start || !ord || !act) {
        free(ord);
        free(act);
        conflicts_free(c);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = (olla_pkey){it[i].lower, 0, (int)i};
    olla_place_sort_keys(ord, n);
    int64_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (size_t e = 0; e < n; e++) {
            int i = ord[e].idx;
            for (size_t a = 0; a < k;) {
                if (it[act[a]].upper <= it[i].lower)
                    act[a] = act[--k];
                else
                    a++;
            }
            for (size_t a = 0; a < k; a++) {
                int j = act[a];
                if (pass == 0) {
                    deg[i + 1]++;
                    deg[j + 1]++;
                    total += 2;
                } else {
                    c->adj[deg[i]++] = j;
                    c->adj[deg[j]++] = i;
                }
            }
            if (pass == 0 && total > OLLA_PLACE_EDGE_BUDGET) {
                free(ord);
                free(act);
                conflicts_free(c);
                return 1;
            }
            act[k++] = i;
        }
        if (pass == 0) {
            for (size_t i = 0; i < n; i++)
                deg[i + 1] += deg[i];
            c->adj = malloc(((size_t)total + 1) * sizeof *c->adj);
            if (!c->adj) {
                free(ord);
                free(act);
                conflicts_free(c);
                return -1;
            }
        }
    }
    /* deg[i] now holds the end of i's list, which is the start of i + 1's. */
    memmove(deg + 1, deg, n * sizeof *deg);
    deg[0] = 0;
    free(ord);
    free(act);
    return 0;
}

typedef struct span {
    int64_t lo, hi;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Lowest (best_fit == 0) or tightest gap of at least size among the busy
 * spans (unsorted on entry). */
static int64_t find_gap(span *busy, size_t k, int64_t size, int best_fit)
{
    if (k > 1)
        qsort(busy, k, sizeof *busy, cmp_span);
    int64_t cur = 0, best = -1, best_len = 0;
    for (size_t i = 0; i < k; i++) {
        if (busy[i].lo > cur) {
            int64_t len = busy[i].lo - cur;
            if (len >= size) {
                if (!best_fit)
                    return cur;
                if (best < 0 || len < best_len) {
                    best = cur;
                    best_len = len;
                }
            }
        }
        if (busy[i].hi > cur)
            cur = busy[i].hi;
    }
    return best >= 0 ? best : cur;
}

/* Places in the given order; fixed[i] >= 0 pins buffer i there. */
static int64_t greedy(const olla_pitem *it, size_t n, const conflicts *c, const int *order,
                      const int64_t *fixed, int best_fit, int64_t *off, char *placed,
                      span *busy)
{
    memset(placed, 0, n);
    for (size_t e = 0; e < n; e++) {
        int i = order[e];
        if (fixed && fixed[i] >= 0) {
            off[i] = fixed[i];
        } else {
            size_t k = 0;
            for (int64_t p = c->start[i]; p < c->start[i + 1]; p++) {
                int j = c->adj[p];
                if (placed[j])
                    busy[k++] = (span){off[j], off[j] + it[j].size};
            }
            off[i] = find_gap(busy, k, it[i].size, best_fit);
        }
        placed[i] = 1;
    }
    return olla_place_items_arena(it, off, n);
}

/* Best fit in order of start time (larger first on ties), with only the
 * live buffers kept in an offset-sorted list: needs no conflict graph.
 * (First fit in the same order: olla_place_sweep_first_fit.) */
static int64_t sweep_best_fit(const olla_pitem *it, size_t n, int64_t *off)
{
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
 * nested inside the previous one and stack it on top. */
static void pyramid(const olla_pitem *it, size_t n, int64_t *fixed)
{
    for (size_t i = 0; i < n; i++)
        fixed[i] = -1;
    int64_t lo = INT64_MIN, hi = INT64_MAX, base = 0;
    for (;;) {
        int best = -1;
        int64_t best_len = 0;
        for (size_t i = 0; i < n; i++) {
            if (fixed[i] >= 0 || it[i].lower < lo || it[i].upper > hi)
                continue;
            int64_t len = it[i].upper - it[i].lower;
            if (best < 0 || len > best_len) {
                best = (int)i;
                best_len = len;
            }
        }
        if (best < 0)
            break;
        fixed[best] = base;
        base += it[best].size;
        lo = it[best].lower;
        hi = it[best].upper;
    }
}

enum { ORD_SIZE, ORD_LIFE, ORD_AREA, ORD_START, ORD_COUNT };

static void make_order(const olla_pitem *it, size_t n, int kind, olla_pkey *keys, int *order)
{
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        int64_t k1 = 0, k2 = 0;
        switch (kind) {
        case ORD_SIZE: k1 = -it[i].size; k2 = -len; break;
        case ORD_LIFE: k1 = -len; k2 = -it[i].size; break;
        case ORD_AREA: {
            double a = (double)len * (double)it[i].size;
            k1 = a > 9e18 ? INT64_MIN : -(int64_t)a;
            k2 = -it[i].size;
            break;
        }
        default: k1 = it[i].lower; k2 = -it[i].size; break;
        }
        keys[i] = (olla_pkey){k1, k2, (int)i};
    }
    olla_place_sort_keys(keys, n);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].idx;
}

int64_t olla_place_heuristic(const olla_pitem *it, size_t n, int64_t *off, int64_t lb,
                             double deadline, int verbosity)
{
    if (n == 0)
        return 0;
    int64_t best = olla_place_sweep_first_fit(it, n, off);
    if (best < 0)
        return -1;
    if (verbosity)
        fprintf(stderr, "place: sweep first fit: %lld\n", (long long)best);
    if (best <= lb || (deadline > 0 && olla_now() > deadline))
        return best;
    int64_t *alt = malloc(n * sizeof *alt);
    if (!alt)
        return -1;
    int64_t sb = sweep_best_fit(it, n, alt);
    if (verbosity)
        fprintf(stderr, "place: sweep best fit: %lld\n", (long long)sb);
    if (sb >= 0 && sb < best) {
        best = sb;
        memcpy(off, alt, n * sizeof *off);
    }
    free(alt);
    if (sb < 0)
        return -1;
    if (best <= lb || (deadline > 0 && olla_now() > deadline))
        return best;
    conflicts c;
    int r = conflicts_build(it, n, &c);
    if (r < 0)
        return -1;
    if (r > 0) /* too many conflicts for the graph-based orders */
        return best;
    int64_t *tmp = malloc(n * sizeof *tmp);
    int64_t *fixed = malloc(n * sizeof *fixed);
    int *order = malloc(n * sizeof *order);
    olla_pkey *keys = malloc(n * sizeof *keys);
    char *placed = malloc(n);
    span *busy = malloc(n * sizeof *busy);
    if (!tmp || !fixed || !order || !keys || !placed || !busy) {
        best = -1;
        goto done;
    }
    pyramid(it, n, fixed);
    for (int kind = 0; kind < ORD_COUNT; kind++) {
        make_order(it, n, kind, keys, order);
        for (int variant = 0; variant < 3; variant++) {
            const int64_t *fx = variant == 2 ? fixed : NULL;
            if (fx) { /* pinned buffers first, in any order */
                size_t w = 0;
                for (size_t e = 0; e < n; e++)
                    if (fixed[order[e]] >= 0)
                        keys[w++].idx = order[e];
                for (size_t e = 0; e < n; e++)
                    if (fixed[order[e]] < 0)
                        keys[w++].idx = order[e];
                for (size_t e = 0; e < n; e++)
                    order[e] = keys[e].idx;
            }
            int64_t a = greedy(it, n, &c, order, fx, variant == 1, tmp, placed, busy);
            if (verbosity)
                fprintf(stderr, "place: order %d variant %d: %lld\n", kind, variant,
                        (long long)a);
            if (a < best) {
                best = a;
                memcpy(off, tmp, n * sizeof *off);
            }
            if (best <= lb || (deadline > 0 && olla_now() > deadline))
                goto done;
        }
    }
done:
    free(tmp);
    free(fixed);
    free(order);
    free(keys);
    free(placed);
    free(busy);
    conflicts_free(&c);
    return best;
}
