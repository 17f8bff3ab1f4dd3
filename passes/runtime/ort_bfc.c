/* olla-onnx: ONNX Runtime's BFC arena, replayed (ort_bfc.h states the rules).
 *
 * Chunks live in one array indexed by handle, as ORT's chunks_ vector: a
 * handle freed by a merge goes on a free list and is taken again before the
 * array grows, so the array's length is ORT's vector's size. The free
 * chunks are kept in a treap by (size, address), nodes by handle: the
 * smallest that fits (ties: the lowest address) is the first key at or
 * above (request, lowest address), in O(log chunks); a training step's
 * session replays thousands of live chunks three runs over. */
#include "passes/runtime/ort_bfc.h"

#include <stdlib.h>

#include "util/olla_grow.h"
#include "util/olla_treap.h"

enum {
    MIN_ALLOCATION = 256,            /* kMinAllocationSize */
    HANDLE_BYTES_PER_MIN_ALLOC = 8,  /* the region's ChunkHandle table */
    CHUNK_RECORD_BYTES = 72          /* sizeof(BFCArena::Chunk) */
};
#define INITIAL_REGION_BYTES ((int64_t)1 << 20)      /* initial_chunk_size_bytes */
#define MAX_DEAD_BYTES ((int64_t)128 << 20)          /* max_dead_bytes_per_chunk */
#define MAX_POWER_OF_TWO_EXTEND ((int64_t)1 << 30)   /* max_power_of_two_extend_bytes */
#define TOP_ADDRESS ((int64_t)1 << 60)

typedef struct chunk {
    int64_t size, addr;
    int prev, next;     /* neighbours in the region, -1 at its ends */
    int in_use, alive;  /* alive: the handle is taken */
    int next_free;      /* the handle free list */
} chunk;

struct olla_bfc {
    olla_bfc_strategy strategy;
    int64_t min_block;
    int64_t region_size;  /* curr_region_allocation_bytes_ */
    int64_t low_address;  /* the lowest address of any region */
    int64_t regions_bytes, counted_regions, tables_bytes, vector_bytes;
    int n_regions;
    chunk *chunks;
    int n_chunks, cap_chunks, free_handles; /* length, ORT's capacity, free list head */
    size_t alloc_cap;     /* our array's capacity (olla_grow) */
    olla_treap free_set;  /* the free chunks (alive, not in use) by (size, addr) */
    int64_t probe_size, probe_addr; /* the key of the node FREE_PROBE, which is in no tree */
};

/* The node that stands for a key being looked up (never a handle). */
enum { FREE_PROBE = -2 };

/* 1 when chunk u's (size, addr) is below the key of node k. */
static int free_below(const void *ctx, int u, int k)
{
    const olla_bfc *a = ctx;
    int64_t size = k == FREE_PROBE ? a->probe_size : a->chunks[k].size;
    int64_t addr = k == FREE_PROBE ? a->probe_addr : a->chunks[k].addr;
    return a->chunks[u].size < size || (a->chunks[u].size == size && a->chunks[u].addr < addr);
}

static void free_insert(olla_bfc *a, int h)
{
    olla_treap_insert(&a->free_set, h, free_below, a);
}

static void free_erase(olla_bfc *a, int h)
{
    olla_treap_erase(&a->free_set, h, free_below, a);
}

static int64_t counted(const olla_bfc *a, int64_t bytes)
{
    return bytes > 0 && bytes >= a->min_block ? bytes : 0;
}

olla_bfc *olla_bfc_new(olla_bfc_strategy strategy, int64_t min_block)
{
    olla_bfc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->strategy = strategy;
    a->min_block = min_block;
    a->region_size = INITIAL_REGION_BYTES;
    a->low_address = TOP_ADDRESS;
    a->free_handles = -1;
    olla_treap_init(&a->free_set);
    return a;
}

void olla_bfc_free_arena(olla_bfc *a)
{
    if (a) {
        free(a->chunks);
        olla_treap_free(&a->free_set);
    }
    free(a);
}

/* AllocateChunk: a recycled handle, else the vector grows by one (doubling
 * its capacity when full: both copies live while it moves). */
static int take_handle(olla_bfc *a, int64_t *grown, int64_t *transient)
{
    if (a->free_handles >= 0) {
        int h = a->free_handles;
        a->free_handles = a->chunks[h].next_free;
        a->chunks[h].alive = 1;
        return h;
    }
    chunk *c = olla_grow(a->chunks, &a->alloc_cap, (size_t)a->n_chunks + 1, sizeof *c);
    if (!c)
        return -1;
    a->chunks = c;
    if (!olla_treap_reserve(&a->free_set, a->alloc_cap))
        return -1;
    if (a->n_chunks == a->cap_chunks) { /* ORT's vector doubling: what it allocates, not our array */
        int cap = a->cap_chunks ? 2 * a->cap_chunks : 1;
        int64_t old = counted(a, (int64_t)a->cap_chunks * CHUNK_RECORD_BYTES);
        int64_t now = counted(a, (int64_t)cap * CHUNK_RECORD_BYTES);
        if (old > *transient)
            *transient = old;
        *grown += now - old;
        a->vector_bytes += now - old;
        a->cap_chunks = cap;
    }
    int h = a->n_chunks++;
    a->chunks[h].alive = 1;
    return h;
}

static void drop_handle(olla_bfc *a, int h)
{
    a->chunks[h].alive = 0;
    a->chunks[h].next_free = a->free_handles;
    a->free_handles = h;
}

/* Extend: a new region holding at least rounded bytes, as one free chunk.
 * region_size doubles as ORT's next region does: a model of what ORT
 * allocates, not an array of ours (so not olla_grow). */
static int extend(olla_bfc *a, int64_t rounded, int64_t *grown, int64_t *transient)
{
    int64_t bytes = rounded;
    if (a->strategy == OLLA_BFC_NEXT_POWER_OF_TWO) {
        int increased = 0;
        while (rounded > a->region_size) {
            a->region_size *= 2;
            increased = 1;
        }
        bytes = a->region_size;
        if (!increased)
            a->region_size = a->region_size < MAX_POWER_OF_TWO_EXTEND / 2 ? 2 * a->region_size : MAX_POWER_OF_TWO_EXTEND;
    }
    int64_t table = counted(a, bytes / MIN_ALLOCATION * HANDLE_BYTES_PER_MIN_ALLOC);
    a->regions_bytes += bytes;
    a->counted_regions += counted(a, bytes);
    a->tables_bytes += table;
    *grown += counted(a, bytes) + table;
    a->n_regions++;
    int h = take_handle(a, grown, transient);
    if (h < 0)
        return -1;
    a->low_address -= bytes;
    chunk *c = &a->chunks[h];
    c->size = bytes;
    c->addr = a->low_address;
    c->prev = c->next = -1;
    c->in_use = 0;
    free_insert(a, h);
    return h;
}

/* The smallest free chunk of at least rounded bytes, lowest address first. */
static int best_fit(olla_bfc *a, int64_t rounded)
{
    olla_treap *t = &a->free_set;
    int l, r;
    a->probe_size = rounded;
    a->probe_addr = INT64_MIN;
    olla_treap_split(t, t->root, FREE_PROBE, free_below, a, &l, &r);
    int best = r >= 0 ? olla_treap_first(t, r) : -1;
    t->root = olla_treap_merge(t, l, r);
    return best;
}

int olla_bfc_alloc(olla_bfc *a, int64_t bytes, int64_t *grown, int64_t *transient)
{
    *grown = *transient = 0;
    int64_t rounded = (bytes + MIN_ALLOCATION - 1) / MIN_ALLOCATION * MIN_ALLOCATION;
    if (rounded <= 0)
        rounded = MIN_ALLOCATION;
    int h = best_fit(a, rounded);
    if (h < 0 && (h = extend(a, rounded, grown, transient)) < 0)
        return -1;
    free_erase(a, h);
    if (a->chunks[h].size >= 2 * rounded || a->chunks[h].size - rounded >= MAX_DEAD_BYTES) {
        int n = take_handle(a, grown, transient);
        if (n < 0) {
            free_insert(a, h);
            return -1;
        }
        chunk *c = &a->chunks[h], *rest = &a->chunks[n];
        rest->size = c->size - rounded;
        rest->addr = c->addr + rounded;
        rest->prev = h;
        rest->next = c->next;
        rest->in_use = 0;
        if (c->next >= 0)
            a->chunks[c->next].prev = n;
        c->next = n;
        c->size = rounded;
        free_insert(a, n);
    }
    a->chunks[h].in_use = 1;
    return h;
}

/* Merges chunk b into its predecessor h (both free). */
static void merge(olla_bfc *a, int h, int b)
{
    chunk *c = &a->chunks[h], *d = &a->chunks[b];
    c->size += d->size;
    c->next = d->next;
    if (d->next >= 0)
        a->chunks[d->next].prev = h;
    drop_handle(a, b);
}

void olla_bfc_release(olla_bfc *a, int h)
{
    if (h < 0 || h >= a->n_chunks || !a->chunks[h].alive || !a->chunks[h].in_use)
        return;
    a->chunks[h].in_use = 0;
    int next = a->chunks[h].next;
    if (next >= 0 && !a->chunks[next].in_use) {
        free_erase(a, next);
        merge(a, h, next);
    }
    int prev = a->chunks[h].prev;
    if (prev >= 0 && !a->chunks[prev].in_use) {
        free_erase(a, prev);
        merge(a, prev, h);
        h = prev;
    }
    free_insert(a, h);
}

int64_t olla_bfc_held(const olla_bfc *a)
{
    return a->counted_regions + a->tables_bytes + a->vector_bytes;
}

int64_t olla_bfc_region_bytes(const olla_bfc *a)
{
    return a->regions_bytes;
}

int olla_bfc_regions(const olla_bfc *a)
{
    return a->n_regions;
}
