/* olla-onnx: best-fit caching allocator simulation (see olla_online_alloc.h). */
#include <stdlib.h>

#include "solver/olla_online_alloc.h"
#include "solver/place_internal.h"
#include "util/olla_grow.h"

typedef struct block {
    int64_t addr, size;
    int prev, next; /* neighbours in the same segment, -1 at its ends */
    int free_;
    int alive;      /* 0 once merged into a neighbour */
    int pos;        /* index in the free list, -1 if not free */
} block;

typedef struct heap {
    block *b;
    size_t n, cap;
    int *fl;        /* indices of the free blocks */
    size_t nfree, flcap;
    int64_t reserved;
} heap;

static int fl_add(heap *h, int i)
{
    int *g = olla_grow(h->fl, &h->flcap, h->nfree + 1, sizeof *g);
    if (!g)
        return -1;
    h->fl = g;
    h->b[i].pos = (int)h->nfree;
    h->fl[h->nfree++] = i;
    return 0;
}

static void fl_del(heap *h, int i)
{
    int p = h->b[i].pos, last = h->fl[--h->nfree];
    h->fl[p] = last;
    h->b[last].pos = p;
    h->b[i].pos = -1;
}

static int new_block(heap *h, int64_t addr, int64_t size, int prev, int next, int is_free)
{
    block *g = olla_grow(h->b, &h->cap, h->n + 1, sizeof *g);
    if (!g)
        return -1;
    h->b = g;
    h->b[h->n] = (block){addr, size, prev, next, is_free, 1, -1};
    int i = (int)h->n++;
    if (is_free && fl_add(h, i) < 0)
        return -1;
    return i;
}

/* Returns the block index, or -1 when out of memory. */
static int alloc_block(heap *h, int64_t size)
{
    int best = -1;
    for (size_t f = 0; f < h->nfree; f++) {
        int i = h->fl[f];
        const block *k = &h->b[i];
        if (k->size < size)
            continue;
        if (best < 0 || k->size < h->b[best].size ||
            (k->size == h->b[best].size && k->addr < h->b[best].addr))
            best = i;
    }
    if (best < 0) { /* a new segment of exactly the request */
        int s = new_block(h, h->reserved, size, -1, -1, 0);
        if (s >= 0)
            h->reserved += size;
        return s;
    }
    if (h->b[best].size > size) {
        int rest = new_block(h, h->b[best].addr + size, h->b[best].size - size, best,
                             h->b[best].next, 1);
        if (rest < 0)
            return -1;
        if (h->b[rest].next >= 0)
            h->b[h->b[rest].next].prev = rest;
        h->b[best].next = rest;
        h->b[best].size = size;
    }
    h->b[best].free_ = 0;
    fl_del(h, best);
    return best;
}

static int free_block(heap *h, int i)
{
    h->b[i].free_ = 1;
    int nx = h->b[i].next;
    if (nx >= 0 && h->b[nx].free_) { /* absorb the next block */
        h->b[i].size += h->b[nx].size;
        h->b[i].next = h->b[nx].next;
        if (h->b[i].next >= 0)
            h->b[h->b[i].next].prev = i;
        h->b[nx].alive = 0;
        fl_del(h, nx);
    }
    int pv = h->b[i].prev;
    if (pv >= 0 && h->b[pv].free_) { /* merge into the previous block */
        h->b[pv].size += h->b[i].size;
        h->b[pv].next = h->b[i].next;
        if (h->b[pv].next >= 0)
            h->b[h->b[pv].next].prev = pv;
        h->b[i].alive = 0;
        return 0;
    }
    return fl_add(h, i);
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
    heap h = {NULL, 0, 0, NULL, 0, 0, 0};
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
            if (free_block(&h, where[i]) < 0) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "online allocator: out of memory");
                break;
            }
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
    free(h.fl);
    return st;
}
