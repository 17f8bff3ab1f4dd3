/* olla-onnx: best-fit caching allocator simulation (see olla_online_alloc.h). */
#include <stdlib.h>

#include "solver/olla_online_alloc.h"
#include "solver/place_internal.h"
#include "util/olla_arith.h"
#include "util/olla_grow.h"

typedef struct block {
    int64_t addr, size;
    int prev, next; /* neighbours in the same segment, -1 at its ends */
    int free_;
    int alive;      /* 0 once merged into a neighbour */
    int left, right; /* children in the free blocks' treap */
    unsigned pri;    /* the treap's priority */
} block;

/* The free blocks are a treap keyed by (size, address), so the best fit,
 * the smallest block that holds a request and the lowest of equal ones, is
 * the first key with size >= the request: O(log n) an allocation instead of
 * a pass over every free block. Addresses are distinct, so keys are. */
typedef struct heap {
    block *b;
    size_t n, cap;
    int root;          /* the free blocks' treap, -1 when empty */
    uint64_t lcg;      /* the priorities' generator: the same treap on every run */
    int64_t reserved;
} heap;

/* 1 when block a's key is below block b's */
static int key_below(const heap *h, int a, int b)
{
    const block *x = &h->b[a], *y = &h->b[b];
    return x->size < y->size || (x->size == y->size && x->addr < y->addr);
}

/* splits the treap at u into keys below k's (into *l) and the rest (*r) */
static void split(heap *h, int u, int k, int *l, int *r)
{
    if (u < 0) {
        *l = *r = -1;
    } else if (key_below(h, u, k)) {
        split(h, h->b[u].right, k, &h->b[u].right, r);
        *l = u;
    } else {
        split(h, h->b[u].left, k, l, &h->b[u].left);
        *r = u;
    }
}

/* joins treaps x and y, every key of x below every key of y */
static int merge(heap *h, int x, int y)
{
    if (x < 0 || y < 0)
        return x < 0 ? y : x;
    if (h->b[x].pri > h->b[y].pri) {
        h->b[x].right = merge(h, h->b[x].right, y);
        return x;
    }
    h->b[y].left = merge(h, x, h->b[y].left);
    return y;
}

/* the treap at u without its smallest key */
static int drop_min(heap *h, int u)
{
    if (h->b[u].left < 0)
        return h->b[u].right;
    h->b[u].left = drop_min(h, h->b[u].left);
    return u;
}

/* block i joins the free blocks, under its current key */
static void fl_add(heap *h, int i)
{
    int l, r;
    h->b[i].left = h->b[i].right = -1;
    split(h, h->root, i, &l, &r);
    h->root = merge(h, merge(h, l, i), r);
}

/* block i leaves the free blocks; its key must not have changed since it joined */
static void fl_del(heap *h, int i)
{
    int l, r;
    split(h, h->root, i, &l, &r); /* i is the smallest key of r */
    h->root = merge(h, l, drop_min(h, r));
}

/* the free block that best fits size (smallest, then lowest), -1 when none */
static int best_fit(const heap *h, int64_t size)
{
    int best = -1;
    for (int u = h->root; u >= 0;) {
        if (h->b[u].size >= size) {
            best = u;
            u = h->b[u].left;
        } else {
            u = h->b[u].right;
        }
    }
    return best;
}

/* a block at addr of size between prev and next; -1 when out of memory */
static int new_block(heap *h, int64_t addr, int64_t size, int prev, int next, int is_free)
{
    block *g = olla_grow(h->b, &h->cap, h->n + 1, sizeof *g);
    if (!g)
        return -1;
    h->b = g;
    h->lcg = olla_lcg_next(h->lcg);
    h->b[h->n] = (block){addr, size, prev, next, is_free, 1, -1, -1, (unsigned)olla_lcg_bits(h->lcg)};
    int i = (int)h->n++;
    if (is_free)
        fl_add(h, i);
    return i;
}

/* Returns the block index, or -1 when out of memory. */
static int alloc_block(heap *h, int64_t size)
{
    int best = best_fit(h, size);
    if (best < 0) { /* a new segment of exactly the request */
        int s = new_block(h, h->reserved, size, -1, -1, 0);
        if (s >= 0)
            h->reserved += size;
        return s;
    }
    fl_del(h, best);
    if (h->b[best].size > size) {
        int rest = new_block(h, h->b[best].addr + size, h->b[best].size - size, best, h->b[best].next, 1);
        if (rest < 0)
            return -1;
        if (h->b[rest].next >= 0)
            h->b[h->b[rest].next].prev = rest;
        h->b[best].next = rest;
        h->b[best].size = size;
    }
    h->b[best].free_ = 0;
    return best;
}

/* frees block i, merged with its free neighbours in the segment */
static void free_block(heap *h, int i)
{
    h->b[i].free_ = 1;
    int nx = h->b[i].next;
    if (nx >= 0 && h->b[nx].free_) { /* absorb the next block */
        fl_del(h, nx);
        h->b[i].size += h->b[nx].size;
        h->b[i].next = h->b[nx].next;
        if (h->b[i].next >= 0)
            h->b[h->b[i].next].prev = i;
        h->b[nx].alive = 0;
    }
    int pv = h->b[i].prev;
    if (pv >= 0 && h->b[pv].free_) { /* merge into the previous block */
        fl_del(h, pv);
        h->b[pv].size += h->b[i].size;
        h->b[pv].next = h->b[i].next;
        if (h->b[pv].next >= 0)
            h->b[h->b[pv].next].prev = pv;
        h->b[i].alive = 0;
        fl_add(h, pv);
        return;
    }
    fl_add(h, i);
}

olla_status olla_online_alloc_simulate(const olla_buffer *bufs, size_t n, int64_t *reserved_bytes,
                                       int64_t *peak_in_use, olla_error *err)
{
    if (!reserved_bytes || !peak_in_use)
        return olla_error_set(err, OLLA_ERR_USAGE, "online allocator: no result pointers given");
    *reserved_bytes = 0;
    *peak_in_use = 0;
    olla_status st = olla_place_check_input(bufs, n, OLLA_ONLINE_ROUND, err);
    if (st != OLLA_OK)
        return st;
    /* events: (time, 0 = free / 1 = alloc, index) */
    olla_pkey *ev = malloc((2 * n + 1) * sizeof *ev);
    int *where = malloc((n + 1) * sizeof *where);
    heap h = {NULL, 0, 0, -1, OLLA_GOLDEN_GAMMA, 0};
    if (!ev || !where) {
        free(ev);
        free(where);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "online allocator: out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (bufs[i].upper <= bufs[i].lower)
            continue;
        ev[m++] = (olla_pkey){bufs[i].upper, 0, (int)i};
        ev[m++] = (olla_pkey){bufs[i].lower, 1, (int)i};
    }
    olla_place_sort_keys(ev, m);
    int64_t in_use = 0, peak = 0;
    for (size_t e = 0; e < m; e++) {
        int i = ev[e].idx;
        int64_t sz = (bufs[i].size + OLLA_ONLINE_ROUND - 1) / OLLA_ONLINE_ROUND * OLLA_ONLINE_ROUND;
        if (sz == 0)
            sz = OLLA_ONLINE_ROUND;
        if (ev[e].k2 == 0) {
            free_block(&h, where[i]);
            in_use -= sz;
            continue;
        }
        where[i] = alloc_block(&h, sz);
        if (where[i] < 0) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "online allocator: out of memory");
            break;
        }
        in_use += sz;
        if (in_use > peak)
            peak = in_use;
    }
    if (st == OLLA_OK) {
        *reserved_bytes = h.reserved;
        *peak_in_use = peak;
    }
    free(ev);
    free(where);
    free(h.b);
    return st;
}
