/* olla-onnx: best-fit caching allocator simulation (see olla_online_alloc.h). */
#include <stdlib.h>

#include "solver/olla_online_alloc.h"
#include "solver/place_internal.h"
#include "util/olla_grow.h"
#include "util/olla_treap.h"

typedef struct block {
    int64_t addr, size;
    int prev, next; /* neighbours in the same segment, -1 at its ends */
    int free_;
    int alive;      /* 0 once merged into a neighbour */
} block;

/* The free blocks are a treap (util/olla_treap.h) keyed by (size, address),
 * so the best fit, the smallest block that holds a request and the lowest of
 * equal ones, is the first key with size >= the request: O(log n) an
 * allocation instead of a pass over every free block. Addresses are
 * distinct, so keys are. */
typedef struct heap {
    block *b;
    size_t n, cap;
    olla_treap free_blocks;
    int64_t reserved;
} heap;

/* 1 when block a's key is below block b's */
static int key_below(const void *ctx, int a, int b)
{
    const heap *h = ctx;
    const block *x = &h->b[a], *y = &h->b[b];
    return x->size < y->size || (x->size == y->size && x->addr < y->addr);
}

/* block i joins the free blocks, under its current key */
static void fl_add(heap *h, int i) { olla_treap_insert(&h->free_blocks, i, key_below, h); }

/* block i leaves the free blocks; its key must not have changed since it joined */
static void fl_del(heap *h, int i) { olla_treap_erase(&h->free_blocks, i, key_below, h); }

/* the free block that best fits size (smallest, then lowest), -1 when none */
static int best_fit(const heap *h, int64_t size)
{
    int best = -1;
    for (int u = h->free_blocks.root; u >= 0;) {
        if (h->b[u].size >= size) {
            best = u;
            u = h->free_blocks.left[u];
        } else {
            u = h->free_blocks.right[u];
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
    if (!olla_treap_reserve(&h->free_blocks, h->n + 1))
        return -1;
    h->b[h->n] = (block){addr, size, prev, next, is_free, 1};
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
    heap h = {NULL, 0, 0, {0}, 0};
    olla_treap_init(&h.free_blocks);
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
    olla_treap_free(&h.free_blocks);
    return st;
}
