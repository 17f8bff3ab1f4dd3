/* olla-onnx: simulation of the online caching allocator that frameworks use
 * today (PyTorch's CUDA caching allocator, ONNX Runtime's arena), as the
 * baseline a static plan is compared with. */
#ifndef OLLA_ONLINE_ALLOC_H
#define OLLA_ONLINE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "solver/olla_place.h"

#define OLLA_ONLINE_ROUND 512

/* Replays the buffers in time order: at each step, buffers whose upper is the
 * step are freed, then those whose lower is the step are allocated, in index
 * order. Sizes are rounded up to 512 bytes (at least 512); an allocation takes
 * the smallest free block that fits (lowest address on ties), split to size;
 * freed blocks merge with free neighbours of the same segment; when nothing
 * fits, a new segment of exactly the rounded size is reserved, never
 * released. Buffers with an empty lifetime are skipped. Reports the total
 * reserved bytes and the peak of the rounded bytes in use. */
olla_status olla_online_alloc_simulate(const olla_buffer *bufs, size_t n, int64_t *reserved_bytes,
                                       int64_t *peak_in_use, olla_error *err);

#endif
