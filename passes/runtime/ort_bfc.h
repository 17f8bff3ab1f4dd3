/* olla-onnx: a model of ONNX Runtime's CPU memory arena, the BFC arena
 * ("best fit with coalescing", bfc_arena.cc of onnxruntime 1.30), as the
 * process sees it (internal to passes/runtime).
 *
 * The arena takes regions from malloc and never gives them back (no shrink
 * unless a run asks for it, which onnxruntime-node never does). Each request
 * is rounded up to 256 bytes and served from the smallest free chunk that
 * holds it (ties: the lowest address); the chunk is split when it is at
 * least twice the request or the rest is at least 128 MiB, else the whole
 * chunk is used. A freed chunk merges with free neighbours of its region.
 * When nothing fits the arena extends by a region:
 * - kNextPowerOfTwo (the default): the region size starts at 1 MiB; it is
 *   doubled until it holds the request, and when it did not have to grow it
 *   doubles after the extension for the next one (up to 1 GiB).
 * - kSameAsRequested: a region of the request's size.
 * Beside each region the arena keeps a table of 8 bytes per 256 bytes of it
 * (new[]), and one vector of 72-byte chunk records that grows by doubling;
 * both are heap blocks the process holds.
 *
 * Regions are modelled at decreasing addresses (large mallocs are mmaps,
 * which glibc places downwards), which only decides ties between free
 * chunks of equal size. */
#ifndef OLLA_ORT_BFC_H
#define OLLA_ORT_BFC_H

#include <stdint.h>

typedef enum olla_bfc_strategy {
    OLLA_BFC_NEXT_POWER_OF_TWO = 0,
    OLLA_BFC_SAME_AS_REQUESTED = 1
} olla_bfc_strategy;

typedef struct olla_bfc olla_bfc;

/* min_block: heap blocks below it are not counted (as the measurement). */
olla_bfc *olla_bfc_new(olla_bfc_strategy strategy, int64_t min_block);
void olla_bfc_free_arena(olla_bfc *a);

/* Serves a request of bytes > 0; returns a handle for olla_bfc_release, -1
 * out of memory. *grown gets the counted heap bytes the request added
 * (regions, their tables, the chunk vector); *transient the counted bytes
 * live only during the request (the chunk vector's old copy while it grows). */
int olla_bfc_alloc(olla_bfc *a, int64_t bytes, int64_t *grown, int64_t *transient);
void olla_bfc_release(olla_bfc *a, int handle);

/* The counted heap bytes the arena holds (regions, tables, chunk vector). */
int64_t olla_bfc_held(const olla_bfc *a);
/* Bytes of its regions. */
int64_t olla_bfc_region_bytes(const olla_bfc *a);
int olla_bfc_regions(const olla_bfc *a);

#endif
