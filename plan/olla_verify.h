/* olla-onnx: the plan checker, independent of the planner. */
#ifndef OLLA_VERIFY_H
#define OLLA_VERIFY_H

#include "onnx/olla_graph.h"

/* order: operator indices in execution order. offset[t] / bytes[t] per graph
 * tensor, offset -1 when the plan does not list it. Recomputes every
 * lifetime from the order and the liveness rules. */
olla_status olla_plan_verify(const olla_graph *g, const int *order, const int64_t *offset, const int64_t *bytes,
                             int64_t arena_bytes, int64_t alignment, olla_error *err);

#endif
