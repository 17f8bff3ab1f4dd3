/* olla-onnx: first fit and best fit in order of start time, for any number
 * of buffers.
 *
 * Buffers are taken by start time (larger first on ties) and each goes to
 * the lowest gap among the buffers live at that moment. The live buffers
 * never overlap, so sorted by offset they are sorted by end too, and a gap
 * is the space between one's end and the next one's offset. They are kept
 * sorted in blocks that know their largest inner gap, so a query skips
 * whole blocks; ends of life come off a heap. Each buffer costs
 * O(live / BLOCK + BLOCK + log n) instead of O(live). */
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"
#include "util/olla_grow.h"
#include "util/olla_treap.h"

#define BLOCK 256 /* a block holds up to 2 * BLOCK buffers */

typedef struct sblock {
    int n;
    int64_t maxgap; /* largest gap between consecutive buffers inside */
    int idx[2 * BLOCK];
} sblock;

typedef struct sweep {
    const olla_pitem *it;
    int64_t *off;
    sblock **blk;
    int nb;
    size_t capb;
} sweep;

static int64_t top(const sweep *s, int i) { return s->off[i] + s->it[i].size; }

static void refresh(const sweep *s, sblock *b)
{
    int64_t g = 0;
    for (int j = 1; j < b->n; j++) {
        int64_t d = s->off[b->idx[j]] - top(s, b->idx[j - 1]);
        if (d > g)
            g = d;
    }
    b->maxgap = g;
}

/* Inserts a new block at position at; 0 when out of memory. */
static int add_block(sweep *s, int at)
{
    sblock **g = olla_grow(s->blk, &s->capb, (size_t)s->nb + 1, sizeof *g);
    if (!g)
        return 0;
    s->blk = g;
    sblock *b = malloc(sizeof *b);
    if (!b)
        return 0;
    b->n = 0;
    b->maxgap = 0;
    memmove(s->blk + at + 1, s->blk + at, (size_t)(s->nb - at) * sizeof *s->blk);
    s->blk[at] = b;
    s->nb++;
    return 1;
}

/* Puts buffer i at position j of block b (splitting a full block). */
static int insert_at(sweep *s, int b, int j, int i)
{
    if (s->blk[b]->n == 2 * BLOCK) {
        if (!add_block(s, b + 1))
            return 0;
        sblock *x = s->blk[b], *y = s->blk[b + 1];
        memcpy(y->idx, x->idx + BLOCK, BLOCK * sizeof *y->idx);
        y->n = BLOCK;
        x->n = BLOCK;
        refresh(s, y);
        if (j > BLOCK) {
            b++;
            j -= BLOCK;
        }
    }
    sblock *x = s->blk[b];
    memmove(x->idx + j + 1, x->idx + j, (size_t)(x->n - j) * sizeof *x->idx);
    x->idx[j] = i;
    x->n++;
    refresh(s, x);
    return 1;
}

static void remove_live(sweep *s, int i)
{
    int64_t o = s->off[i];
    int lo = 0, hi = s->nb - 1;
    while (lo < hi) { /* the last block whose first offset is <= o */
        int mid = (lo + hi + 1) / 2;
        if (s->off[s->blk[mid]->idx[0]] <= o)
            lo = mid;
        else
            hi = mid - 1;
    }
    sblock *b = s->blk[lo];
    int a = 0, z = b->n - 1;
    while (a < z) {
        int mid = (a + z) / 2;
        if (s->off[b->idx[mid]] < o)
            a = mid + 1;
        else
            z = mid;
    }
    memmove(b->idx + a, b->idx + a + 1, (size_t)(b->n - a - 1) * sizeof *b->idx);
    b->n--;
    if (b->n == 0) {
        free(b);
        memmove(s->blk + lo, s->blk + lo + 1, (size_t)(s->nb - lo - 1) * sizeof *s->blk);
        s->nb--;
    } else {
        refresh(s, b);
    }
}

/* Min-heap of live buffers by end time. */
static void heap_push(int *h, int *n, const olla_pitem *it, int i)
{
    int k = (*n)++;
    while (k > 0) {
        int p = (k - 1) / 2;
        if (it[h[p]].upper <= it[i].upper)
            break;
        h[k] = h[p];
        k = p;
    }
    h[k] = i;
}

static int heap_pop(int *h, int *n, const olla_pitem *it)
{
    int r = h[0], x = h[--(*n)], k = 0;
    for (;;) {
        int c = 2 * k + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && it[h[c + 1]].upper < it[h[c]].upper)
            c++;
        if (it[x].upper <= it[h[c]].upper)
            break;
        h[k] = h[c];
        k = c;
    }
    h[k] = x;
    return r;
}

/* Places i at the lowest gap that holds it among the live buffers. */
static int place_one(sweep *s, int i)
{
    int64_t size = s->it[i].size, cur = 0;
    for (int b = 0; b < s->nb; b++) {
        sblock *x = s->blk[b];
        if (s->off[x->idx[0]] - cur >= size) {
            s->off[i] = cur;
            return insert_at(s, b, 0, i);
        }
        if (x->maxgap >= size)
            for (int j = 1; j < x->n; j++)
                if (s->off[x->idx[j]] - top(s, x->idx[j - 1]) >= size) {
                    s->off[i] = top(s, x->idx[j - 1]);
                    return insert_at(s, b, j, i);
                }
        cur = top(s, x->idx[x->n - 1]);
    }
    s->off[i] = cur;
    if (s->nb == 0 && !add_block(s, 0))
        return 0;
    return insert_at(s, s->nb - 1, s->blk[s->nb - 1]->n, i);
}

/* The buffers in order of start time, larger first among equal starts:
 * the live ones that end by the next one's start are removed (earliest end
 * first), then it is placed. 0 when out of memory or when place fails. */
static int sweep_by_start(const olla_pitem *it, size_t n, void *ctx, int (*place)(void *, int),
                          void (*remove)(void *, int))
{
    olla_pkey *ord = malloc((n + 1) * sizeof *ord);
    int *heap = malloc((n + 1) * sizeof *heap);
    int ok = ord && heap;
    for (size_t i = 0; ok && i < n; i++)
        ord[i] = (olla_pkey){it[i].lower, -it[i].size, (int)i};
    if (ok)
        olla_place_sort_keys(ord, n);
    int nh = 0;
    for (size_t e = 0; ok && e < n; e++) {
        int i = ord[e].idx;
        while (nh > 0 && it[heap[0]].upper <= it[i].lower)
            remove(ctx, heap_pop(heap, &nh, it));
        ok = place(ctx, i);
        if (ok)
            heap_push(heap, &nh, it, i);
    }
    free(ord);
    free(heap);
    return ok;
}

static int first_fit_place(void *ctx, int i) { return place_one(ctx, i); }

static void first_fit_remove(void *ctx, int i) { remove_live(ctx, i); }

int64_t olla_place_sweep_first_fit(const olla_pitem *it, size_t n, int64_t *off)
{
    sweep s = {it, off, NULL, 0, 0};
    int64_t arena = -1;
    if (sweep_by_start(it, n, &s, first_fit_place, first_fit_remove))
        arena = olla_place_items_arena(it, off, n);
    for (int b = 0; b < s.nb; b++)
        free(s.blk[b]);
    free(s.blk);
    return arena;
}

/* ---- best fit in order of start time ----
 *
 * The same order and the same live buffers as above. Each live buffer q
 * owns the gap below it: from the previous live buffer's end (or 0) to q's
 * offset. The live buffers are a list in offset order, and their gaps a
 * treap (util/olla_treap.h) keyed by (gap, offset), so the tightest gap that holds a buffer,
 * the lowest of equal ones, is the first key with gap >= size: O(log n) a
 * buffer instead of a pass over the live ones. Buffers of size 0 may share
 * an offset (each before the sized one there, as the list keeps them), so
 * the key ends with the buffer's index: keys are distinct, and equal gaps
 * at one offset give the same place. */

typedef struct gaps {
    const olla_pitem *it;
    int64_t *off;
    int *prev, *next; /* live buffers in offset order; -1 at the ends */
    int last;         /* the live buffer with the highest offset, -1 when none */
    int64_t *gap;     /* per live buffer: the free space right below it */
    olla_treap tree;  /* the live buffers by (gap, offset, index) */
} gaps;

static int64_t gtop(const gaps *g, int i) { return g->off[i] + g->it[i].size; }

/* 1 when a's key (gap, offset, index) is below b's */
static int key_below(const void *ctx, int a, int b)
{
    const gaps *g = ctx;
    if (g->gap[a] != g->gap[b])
        return g->gap[a] < g->gap[b];
    return g->off[a] != g->off[b] ? g->off[a] < g->off[b] : a < b;
}

static void gap_insert(gaps *g, int q) { olla_treap_insert(&g->tree, q, key_below, g); }

static void gap_erase(gaps *g, int q) { olla_treap_erase(&g->tree, q, key_below, g); }

/* the live buffer with the tightest gap of at least size below it, the
 * lowest of equal ones; -1 when none */
static int tightest(const gaps *g, int64_t size)
{
    int best = -1;
    for (int u = g->tree.root; u >= 0;) {
        if (g->gap[u] >= size) {
            best = u;
            u = g->tree.left[u];
        } else {
            u = g->tree.right[u];
        }
    }
    return best;
}

/* Places i in the tightest gap that holds it, or on top of the live ones. */
static void best_place(gaps *g, int i)
{
    int q = tightest(g, g->it[i].size), p = q >= 0 ? g->prev[q] : g->last;
    g->off[i] = p >= 0 ? gtop(g, p) : 0;
    g->prev[i] = p;
    g->next[i] = q;
    if (p >= 0)
        g->next[p] = i;
    if (q >= 0) {
        gap_erase(g, q);
        g->gap[q] -= g->it[i].size;
        g->prev[q] = i;
        gap_insert(g, q);
    } else {
        g->last = i;
    }
    g->gap[i] = 0;
    gap_insert(g, i);
}

/* Takes live buffer q out; the next one's gap grows to the previous one's end. */
static void best_remove(gaps *g, int q)
{
    int p = g->prev[q], r = g->next[q];
    gap_erase(g, q);
    if (p >= 0)
        g->next[p] = r;
    if (r >= 0) {
        gap_erase(g, r);
        g->gap[r] = g->off[r] - (p >= 0 ? gtop(g, p) : 0);
        g->prev[r] = p;
        gap_insert(g, r);
    } else {
        g->last = p;
    }
}

static int best_fit_place(void *ctx, int i)
{
    best_place(ctx, i);
    return 1;
}

static void best_fit_remove(void *ctx, int q) { best_remove(ctx, q); }

int64_t olla_place_sweep_best_fit(const olla_pitem *it, size_t n, int64_t *off)
{
    size_t m = n + 1;
    gaps g = {it, off, malloc(m * sizeof(int)), malloc(m * sizeof(int)), -1, malloc(m * sizeof(int64_t)), {0}};
    olla_treap_init(&g.tree);
    int64_t arena = -1;
    if (g.prev && g.next && g.gap && olla_treap_reserve(&g.tree, m) &&
        sweep_by_start(it, n, &g, best_fit_place, best_fit_remove))
        arena = olla_place_items_arena(it, off, n);
    free(g.prev);
    free(g.next);
    free(g.gap);
    olla_treap_free(&g.tree);
    return arena;
}
