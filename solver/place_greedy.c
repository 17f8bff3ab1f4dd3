/* olla-onnx: one greedy placement, for any number of buffers.
 *
 * The buffers are taken in a given order and each goes to the lowest
 * (first fit) or the tightest (best fit) gap left by the already placed
 * buffers live at the same time. Those buffers fall in two disjoint parts:
 * the ones live at the buffer's first step (a stabbing query) and the ones
 * that start later within its lifetime.
 *
 * Time is compressed to the T distinct start and end values. A segment tree
 * over the steps [0, T) keeps at each node the placed buffers whose lifetime
 * covers the node's range but not its parent's (each buffer sits in at most
 * 2 log T nodes). The buffers of one node are all live at one common step,
 * so they never overlap in address: a node's list sorted by offset is
 * sorted by top as well. The stabbing query at step a reads the lists on
 * the path from leaf a to the root, O(log T) sorted lists. The second part
 * comes from the buffers sorted by first step (the ones not placed yet are
 * skipped) and is sorted by offset. A small heap merges all the lists in
 * address order, and first fit stops at the first gap that holds the
 * buffer. A buffer costs O(log T + k log log T) for k overlapping placed
 * buffers (plus the not yet placed ones starting inside its lifetime),
 * never a pass over every placed buffer.
 *
 * First fit needs only the union of the overlapping buffers' addresses: the
 * lowest offset where the buffer fits is the same whoever holds the space.
 * So first fit keeps at each node, instead of its list, two unions as
 * sorted runs of merged address ranges: of the buffers it holds (`own`),
 * and of the buffers whose first
 * step falls in its range (`sub`). The buffers live during [a, b) are those
 * held on the path from leaf a to the root and those starting in one of the
 * O(log T) nodes that cover [a, b); a query merges those O(log T) runs, and
 * a training step's thousands of stacked buffers are a handful of runs. A
 * buffer costs O(log T) merges into runs and a scan of the runs below its
 * offset.
 */
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"

/* sort_spans: insertion sort up to this many spans, else a radix sort by
 * digits of RADIX_BITS bits over the SPAN_KEY_BITS bits a start (>= 0) can
 * use. */
#define SORT_INSERTION_MAX 48
#define RADIX_BITS 11
#define RADIX (1 << RADIX_BITS)
#define SPAN_KEY_BITS 63
/* The cursor heap holds HEAP_PER_LEVEL cursors a level of the tree (a node's
 * list, and with the unions its own and its subtree's runs) and this many
 * more. */
#define HEAP_PER_LEVEL 3
#define HEAP_SLACK 6
/* A node list's first capacity: the tree has many short lists, which
 * olla_grow's first capacity (64 and more) would make several times larger. */
#define NODE_LIST_FIRST 4

typedef struct span {
    int64_t lo, hi;
} span;

/* A sorted list being merged: ids (read off[] for the addresses) or spans. */
typedef struct cursor {
    const int *ids;
    const span *spans;
    size_t pos, len;
    int64_t key; /* the current element's offset */
} cursor;

typedef struct greedy {
    const olla_pitem *it;
    size_t n;
    int64_t *off;
    int *first_step, *last_step; /* compressed lifetime [first, last) */
    int *by_start;               /* buffers by first step */
    size_t *start_pos;           /* T + 1: first index in by_start at each step */
    char *placed;
    size_t leaves;               /* power of two >= T */
    int **list;                  /* 2 * leaves node lists, sorted by offset */
    size_t *len, *cap;
    span *later, *later_tmp;     /* n each: scratch for the second part */
    cursor *heap;                /* HEAP_PER_LEVEL * log2(leaves) + HEAP_SLACK */
    int unions;                  /* 1: first fit on the unions below instead of the lists */
    struct runs *own, *sub;      /* 2 * leaves each, with unions */
} greedy;

/* Address ranges merged where they overlap or touch, sorted. */
typedef struct runs {
    span *r;
    size_t len, cap;
} runs;

/* Sorts spans by lo (>= 0): insertion sort when short, else a radix sort
 * by RADIX_BITS-bit digits up to the highest bit in use, through tmp. */
static void sort_spans(span *a, span *tmp, size_t n)
{
    if (n < SORT_INSERTION_MAX) {
        for (size_t i = 1; i < n; i++) {
            span x = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1].lo > x.lo; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    int64_t most = 0;
    for (size_t i = 0; i < n; i++)
        most |= a[i].lo;
    span *src = a, *dst = tmp;
    for (int shift = 0; shift < SPAN_KEY_BITS && (most >> shift) != 0; shift += RADIX_BITS) {
        size_t count[RADIX + 1] = {0};
        for (size_t i = 0; i < n; i++)
            count[((src[i].lo >> shift) & (RADIX - 1)) + 1]++;
        for (int d = 0; d < RADIX; d++)
            count[d + 1] += count[d];
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].lo >> shift) & (RADIX - 1)]++] = src[i];
        span *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

static void greedy_free(greedy *g)
{
    if (g->list)
        for (size_t v = 0; v < 2 * g->leaves; v++)
            free(g->list[v]);
    for (size_t v = 0; g->own && v < 2 * g->leaves; v++)
        free(g->own[v].r);
    for (size_t v = 0; g->sub && v < 2 * g->leaves; v++)
        free(g->sub[v].r);
    free(g->own);
    free(g->sub);
    free(g->list);
    free(g->len);
    free(g->cap);
    free(g->first_step);
    free(g->last_step);
    free(g->by_start);
    free(g->start_pos);
    free(g->placed);
    free(g->later);
    free(g->later_tmp);
    free(g->heap);
}

/* Compresses time and sorts the buffers by first step; 0 when out of memory. */
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
    g->start_pos = calloc(u + 2, sizeof *g->start_pos);
    if (!g->start_pos)
        return 0;
    for (size_t i = 0; i < n; i++) /* counting sort by first step */
        g->start_pos[g->first_step[i] + 1]++;
    for (size_t s = 0; s <= u; s++)
        g->start_pos[s + 1] += g->start_pos[s];
    size_t *fill = malloc((u + 1) * sizeof *fill);
    if (!fill)
        return 0;
    memcpy(fill, g->start_pos, (u + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        g->by_start[fill[g->first_step[i]]++] = (int)i;
    free(fill);
    return 1;
}

static int greedy_init(greedy *g, const olla_pitem *it, size_t n, int64_t *off, int best_fit)
{
    memset(g, 0, sizeof *g);
    g->it = it;
    g->n = n;
    g->off = off;
    g->first_step = malloc((n + 1) * sizeof *g->first_step);
    g->last_step = malloc((n + 1) * sizeof *g->last_step);
    g->by_start = malloc((n + 1) * sizeof *g->by_start);
    g->placed = calloc(n + 1, 1);
    g->later = malloc((n + 1) * sizeof *g->later);
    g->later_tmp = malloc((n + 1) * sizeof *g->later_tmp);
    if (!g->first_step || !g->last_step || !g->by_start || !g->placed || !g->later || !g->later_tmp ||
        !compress(g))
        return 0;
    size_t depth = 1;
    for (size_t l = g->leaves; l > 1; l /= 2)
        depth++;
    g->list = calloc(2 * g->leaves, sizeof *g->list);
    g->len = calloc(2 * g->leaves, sizeof *g->len);
    g->cap = calloc(2 * g->leaves, sizeof *g->cap);
    g->heap = malloc((HEAP_PER_LEVEL * depth + HEAP_SLACK) * sizeof *g->heap);
    g->unions = !best_fit;
    if (g->unions) {
        g->own = calloc(2 * g->leaves, sizeof *g->own);
        g->sub = calloc(2 * g->leaves, sizeof *g->sub);
        if (!g->own || !g->sub)
            return 0;
    }
    return g->list && g->len && g->cap && g->heap;
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
    g->placed[i] = 1;
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

/* Inserts buffer i (placed) into node v's list, keeping offset order. */
static int node_add(greedy *g, size_t v, int i)
{
    if (g->len[v] == g->cap[v]) {
        size_t nc = g->cap[v] ? 2 * g->cap[v] : NODE_LIST_FIRST;
        int *grown = realloc(g->list[v], nc * sizeof *grown);
        if (!grown)
            return 0;
        g->list[v] = grown;
        g->cap[v] = nc;
    }
    int *l = g->list[v];
    size_t lo = 0, hi = g->len[v];
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (g->off[l[m]] < g->off[i])
            lo = m + 1;
        else
            hi = m;
    }
    memmove(l + lo + 1, l + lo, (g->len[v] - lo) * sizeof *l);
    l[lo] = i;
    g->len[v]++;
    return 1;
}

/* Records buffer i at its offset in the nodes covering its lifetime. */
static int tree_add(greedy *g, int i)
{
    if (g->unions)
        return unions_add(g, i);
    size_t l = (size_t)g->first_step[i] + g->leaves, r = (size_t)g->last_step[i] + g->leaves;
    for (; l < r; l /= 2, r /= 2) {
        if ((l & 1) && !node_add(g, l++, i))
            return 0;
        if ((r & 1) && !node_add(g, --r, i))
            return 0;
    }
    g->placed[i] = 1;
    return 1;
}

static int64_t cursor_key(const greedy *g, const cursor *c)
{
    return c->ids ? g->off[c->ids[c->pos]] : c->spans[c->pos].lo;
}

static int64_t cursor_top(const greedy *g, const cursor *c)
{
    if (c->spans)
        return c->spans[c->pos].hi;
    int j = c->ids[c->pos];
    return g->off[j] + g->it[j].size;
}

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

/* Cursors on the tree path above step t (the placed buffers live then),
 * each from its first buffer with a top above from: a node's list is
 * sorted by top too. */
static size_t gather_path(greedy *g, size_t t, int64_t from)
{
    size_t nh = 0;
    for (size_t v = t + g->leaves; v >= 1; v /= 2) {
        const int *l = g->list[v];
        size_t lo = 0, hi = g->len[v];
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (g->off[l[m]] + g->it[l[m]].size <= from)
                lo = m + 1;
            else
                hi = m;
        }
        if (lo < g->len[v])
            g->heap[nh++] = (cursor){l, NULL, lo, g->len[v], g->off[l[lo]]};
    }
    return nh;
}

/* Adds a cursor over the placed buffers that start later within i's
 * lifetime and reach above from, sorted by offset. */
static size_t gather_later(greedy *g, int i, int64_t from, size_t nh)
{
    size_t nl = 0;
    for (size_t p = g->start_pos[g->first_step[i] + 1]; p < g->start_pos[g->last_step[i]]; p++) {
        int j = g->by_start[p];
        if (g->placed[j] && g->off[j] + g->it[j].size > from)
            g->later[nl++] = (span){g->off[j], g->off[j] + g->it[j].size};
    }
    if (nl > 0) {
        sort_spans(g->later, g->later_tmp, nl);
        g->heap[nh++] = (cursor){NULL, g->later, 0, nl, g->later[0].lo};
    }
    return nh;
}

/* The lowest (or the tightest) gap of size at or above from among the
 * cursors' spans merged in address order; their top when none holds it. */
static int64_t scan(greedy *g, size_t nh, int64_t from, int64_t size, int best_fit)
{
    for (size_t k = nh / 2; k-- > 0;)
        heap_down(g->heap, nh, k);
    int64_t cur = from, best = -1, best_len = INT64_MAX;
    while (nh > 0) {
        cursor *c = &g->heap[0];
        int64_t lo = c->key, hi = cursor_top(g, c);
        if (lo - cur >= size) {
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
            c->key = cursor_key(g, c);
        else
            g->heap[0] = g->heap[--nh];
        heap_down(g->heap, nh, 0);
    }
    return best >= 0 ? best : cur;
}

/* Steps of a lifetime sampled to bound the offset from below. */
#define OLLA_GREEDY_SAMPLES 8

/* The offset for buffer i. It is free at every step of the lifetime, so it
 * is at least x, the lowest offset free at a few sampled steps (found on
 * their sorted path lists alone, until no sample raises it). Of the
 * buffers that start after the first step, only those reaching above x are
 * then sorted and merged with the first step's lists. */
/* A cursor over runs v, when it has any. */
static size_t push_runs(greedy *g, const runs *v, size_t nh)
{
    if (v->len > 0)
        g->heap[nh++] = (cursor){NULL, v->r, 0, v->len, v->r[0].lo};
    return nh;
}

/* First fit on the unions: a buffer live during i's lifetime [a, b) is
 * live at a (held on the path from leaf a to the root: `own` there) or
 * starts inside (a, b) (in `sub` of the nodes covering [a + 1, b) that
 * hold its first step); those runs merged from address 0. A buffer live
 * for no step, [a, a), goes where one live at step a alone would (among
 * the buffers live at a), and one of size 0 at 0. */
static int64_t find_offset_unions(greedy *g, int i)
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
    return scan(g, nh, 0, g->it[i].size, 0);
}

static int64_t find_offset(greedy *g, int i, int best_fit)
{
    if (g->unions)
        return find_offset_unions(g, i);
    int64_t size = g->it[i].size, x = 0;
    size_t a = (size_t)g->first_step[i], len = (size_t)g->last_step[i] - a;
    size_t samples = len < OLLA_GREEDY_SAMPLES ? len : OLLA_GREEDY_SAMPLES;
    for (int moved = 1; moved;) {
        moved = 0;
        for (size_t k = 0; k < samples; k++) {
            size_t t = a + len * k / samples;
            int64_t y = scan(g, gather_path(g, t, x), x, size, 0);
            if (y > x) {
                x = y;
                moved = 1;
            }
        }
    }
    size_t nh = gather_path(g, a, x);
    nh = gather_later(g, i, x, nh);
    return scan(g, nh, x, size, best_fit);
}

int64_t olla_place_greedy(const olla_pitem *it, size_t n, const int *order,
                          const int64_t *pinned, int best_fit, int64_t *off)
{
    if (n == 0)
        return 0;
    greedy g;
    int64_t arena = -1;
    if (!greedy_init(&g, it, n, off, best_fit))
        goto done;
    for (size_t e = 0; e < n; e++) {
        int i = order[e];
        off[i] = pinned && pinned[i] >= 0 ? pinned[i] : find_offset(&g, i, best_fit);
        if (!tree_add(&g, i))
            goto done;
    }
    arena = olla_place_items_arena(it, off, n);
done:
    greedy_free(&g);
    return arena;
}
