/* olla-onnx: one greedy placement, for any number of buffers.
 *
 * The buffers are taken in a given order and each goes to the lowest
 * (first fit) or the tightest (best fit) gap left by the already placed
 * buffers live at the same time. Those buffers fall in two disjoint parts:
 * the ones live at the buffer's first step (a stabbing query) and the ones
 * that start later within its lifetime.
 *
 * Time is compressed to the T distinct start and end values, and a segment
 * tree over the steps [0, T) keeps at each node two unions of address
 * ranges, as sorted runs of merged ranges: of the placed buffers whose
 * lifetime covers the node's range but not its parent's (`own`; each buffer
 * sits in at most 2 log T nodes), and of the placed buffers whose first
 * step falls in its range (`sub`). The buffers live during [a, b) are those
 * held on the path from leaf a to the root and those starting in one of the
 * O(log T) nodes that cover [a + 1, b); a small heap merges those O(log T)
 * runs in address order. The free gaps are the same whoever holds the
 * space, so first fit (which stops at the first gap that holds the buffer)
 * and best fit (which reads every gap) find what they would among the
 * overlapping buffers themselves; a training step's thousands of stacked
 * buffers are a handful of runs. A buffer costs O(log T) merges into runs
 * and a scan of the runs (first fit: those below its offset), never a pass
 * over every overlapping buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"

/* The cursor heap holds HEAP_PER_LEVEL cursors a level of the tree (the
 * own runs on the path, the sub runs of at most two covering nodes) and
 * this many more. */
#define HEAP_PER_LEVEL 3
#define HEAP_SLACK 6

typedef struct span {
    int64_t lo, hi;
} span;

/* A sorted run list being merged. */
typedef struct cursor {
    const span *spans;
    size_t pos, len;
    int64_t key; /* the current element's offset */
} cursor;

typedef struct greedy {
    const olla_pitem *it;
    size_t n;
    int64_t *off;
    int *first_step, *last_step; /* compressed lifetime [first, last) */
    size_t leaves;               /* power of two >= T */
    cursor *heap;                /* HEAP_PER_LEVEL * log2(leaves) + HEAP_SLACK */
    struct runs *own, *sub;      /* 2 * leaves each */
} greedy;

/* Address ranges merged where they overlap or touch, sorted. */
typedef struct runs {
    span *r;
    size_t len, cap;
} runs;

static void greedy_free(greedy *g)
{
    for (size_t v = 0; g->own && v < 2 * g->leaves; v++)
        free(g->own[v].r);
    for (size_t v = 0; g->sub && v < 2 * g->leaves; v++)
        free(g->sub[v].r);
    free(g->own);
    free(g->sub);
    free(g->first_step);
    free(g->last_step);
    free(g->heap);
}

/* Compresses time: each buffer's first and last step; 0 when out of memory. */
static int compress(greedy *g)
{
    size_t n = g->n, nt = 0;
    int64_t *t = malloc((2 * n + 1) * sizeof *t);
    if (!t)
        return 0;
    for (size_t i = 0; i < n; i++) {
        t[nt++] = g->it[i].lower;
        t[nt++] = g->it[i].upper;
    }
    olla_place_sort_i64(t, nt);
    size_t u = 0;
    for (size_t k = 0; k < nt; k++)
        if (u == 0 || t[k] != t[u - 1])
            t[u++] = t[k];
    for (size_t i = 0; i < n; i++) {
        g->first_step[i] = (int)olla_place_count_below(t, u, g->it[i].lower);
        g->last_step[i] = (int)olla_place_count_below(t, u, g->it[i].upper);
    }
    free(t);
    g->leaves = 1;
    while (g->leaves < u)
        g->leaves *= 2;
    return 1;
}

static int greedy_init(greedy *g, const olla_pitem *it, size_t n, int64_t *off)
{
    memset(g, 0, sizeof *g);
    g->it = it;
    g->n = n;
    g->off = off;
    g->first_step = malloc((n + 1) * sizeof *g->first_step);
    g->last_step = malloc((n + 1) * sizeof *g->last_step);
    if (!g->first_step || !g->last_step || !compress(g))
        return 0;
    size_t depth = 1;
    for (size_t l = g->leaves; l > 1; l /= 2)
        depth++;
    g->heap = malloc((HEAP_PER_LEVEL * depth + HEAP_SLACK) * sizeof *g->heap);
    g->own = calloc(2 * g->leaves, sizeof *g->own);
    g->sub = calloc(2 * g->leaves, sizeof *g->sub);
    return g->heap && g->own && g->sub;
}

/* Adds [lo, hi) to the runs, merged with those it overlaps or touches. */
static int runs_add(runs *v, int64_t lo, int64_t hi)
{
    size_t a = 0, z = v->len;
    while (a < z) { /* the first run ending at or above lo */
        size_t m = a + (z - a) / 2;
        if (v->r[m].hi < lo)
            a = m + 1;
        else
            z = m;
    }
    size_t e = a;
    while (e < v->len && v->r[e].lo <= hi)
        e++;
    if (e > a) { /* runs a .. e - 1 merge into one */
        span merged = {v->r[a].lo < lo ? v->r[a].lo : lo, v->r[e - 1].hi > hi ? v->r[e - 1].hi : hi};
        v->r[a] = merged;
        memmove(v->r + a + 1, v->r + e, (v->len - e) * sizeof *v->r);
        v->len -= e - a - 1;
        return 1;
    }
    if (v->len == v->cap) {
        size_t nc = v->cap ? 2 * v->cap : 4;
        span *grown = realloc(v->r, nc * sizeof *grown);
        if (!grown)
            return 0;
        v->r = grown;
        v->cap = nc;
    }
    memmove(v->r + a + 1, v->r + a, (v->len - a) * sizeof *v->r);
    v->r[a] = (span){lo, hi};
    v->len++;
    return 1;
}

/* Records placed buffer i in the unions: in `own` of the nodes that cover
 * its lifetime, and in `sub` of the nodes on the path from its first step
 * to the root (their ranges hold that step). One of size 0 is a point that
 * a later buffer may touch but not hold inside (an empty run); one live
 * for no step, [s, s), covers no node but is in `sub`, as a point in time
 * inside the lifetimes around it. */
static int unions_add(greedy *g, int i)
{
    int64_t lo = g->off[i], hi = lo + g->it[i].size;
    size_t l = (size_t)g->first_step[i] + g->leaves, r = (size_t)g->last_step[i] + g->leaves;
    for (; l < r; l /= 2, r /= 2) {
        if ((l & 1) && !runs_add(&g->own[l++], lo, hi))
            return 0;
        if ((r & 1) && !runs_add(&g->own[--r], lo, hi))
            return 0;
    }
    for (size_t u = (size_t)g->first_step[i] + g->leaves; u >= 1; u /= 2)
        if (!runs_add(&g->sub[u], lo, hi))
            return 0;
    return 1;
}

/* Sifts h[k] down the min-heap h[0..n) of cursors by key. */
static void heap_down(cursor *h, size_t n, size_t k)
{
    cursor x = h[k];
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].key < h[c].key)
            c++;
        if (x.key <= h[c].key)
            break;
        h[k] = h[c];
        k = c;
    }
    h[k] = x;
}

/* The lowest (or the tightest, of a positive length) gap that holds size
 * among the cursors' spans merged in address order from 0; their top when
 * none holds it. */
static int64_t scan(greedy *g, size_t nh, int64_t size, int best_fit)
{
    for (size_t k = nh / 2; k-- > 0;)
        heap_down(g->heap, nh, k);
    int64_t cur = 0, best = -1, best_len = INT64_MAX;
    while (nh > 0) {
        cursor *c = &g->heap[0];
        int64_t lo = c->key, hi = c->spans[c->pos].hi;
        if (lo - cur >= size && (!best_fit || lo > cur)) { /* best fit: no empty gap */
            if (!best_fit || lo - cur == size)
                return cur;
            if (lo - cur < best_len) {
                best_len = lo - cur;
                best = cur;
            }
        }
        if (hi > cur)
            cur = hi;
        if (++c->pos < c->len)
            c->key = c->spans[c->pos].lo;
        else
            g->heap[0] = g->heap[--nh];
        heap_down(g->heap, nh, 0);
    }
    return best >= 0 ? best : cur;
}

/* A cursor over runs v, when it has any. */
static size_t push_runs(greedy *g, const runs *v, size_t nh)
{
    if (v->len > 0)
        g->heap[nh++] = (cursor){v->r, 0, v->len, v->r[0].lo};
    return nh;
}

/* First or best fit on the unions: a buffer live during i's lifetime [a, b) is
 * live at a (held on the path from leaf a to the root: `own` there) or
 * starts inside (a, b) (in `sub` of the nodes covering [a + 1, b) that
 * hold its first step); those runs merged from address 0. A buffer live
 * for no step, [a, a), goes where one live at step a alone would (among
 * the buffers live at a); one of size 0 at 0 (first fit) or in the
 * tightest gap of a positive length (best fit). */
static int64_t find_offset(greedy *g, int i, int best_fit)
{
    size_t nh = 0, l = (size_t)g->first_step[i] + 1 + g->leaves, r = (size_t)g->last_step[i] + g->leaves;
    for (; l < r; l /= 2, r /= 2) {
        if (l & 1)
            nh = push_runs(g, &g->sub[l++], nh);
        if (r & 1)
            nh = push_runs(g, &g->sub[--r], nh);
    }
    for (size_t u = (size_t)g->first_step[i] + g->leaves; u >= 1; u /= 2)
        nh = push_runs(g, &g->own[u], nh);
    return scan(g, nh, g->it[i].size, best_fit);
}

int64_t olla_place_greedy(const olla_pitem *it, size_t n, const int *order,
                          const int64_t *pinned, int best_fit, int64_t *off)
{
    if (n == 0)
        return 0;
    greedy g;
    int64_t arena = -1;
    if (!greedy_init(&g, it, n, off))
        goto done;
    for (size_t e = 0; e < n; e++) {
        int i = order[e];
        off[i] = pinned && pinned[i] >= 0 ? pinned[i] : find_offset(&g, i, best_fit);
        if (!unions_add(&g, i))
            goto done;
    }
    arena = olla_place_items_arena(it, off, n);
done:
    greedy_free(&g);
    return arena;
}
