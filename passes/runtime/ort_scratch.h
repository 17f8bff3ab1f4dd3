/* olla-onnx: scratch memory ONNX Runtime's CPU kernels allocate while they
 * run (internal to passes/runtime; olla_ort_memory.h lists the kernels). */
#ifndef OLLA_ORT_SCRATCH_H
#define OLLA_ORT_SCRATCH_H

#include <stdint.h>

#include "onnx/olla_graph.h"

/* Bytes of scratch op allocates during its node, at the sizes of g (dims
 * bound), counting only blocks of at least min_block bytes; 0 for kernels
 * without modelled scratch or when a size is unknown. */
int64_t olla_ort_kernel_scratch(const olla_graph *g, int op, int64_t min_block);

#endif
