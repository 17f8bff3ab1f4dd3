/* olla-onnx runtime API: read the memory plan of a model written by
 * olla-onnx and serve its allocations from one arena.
 *
 *   olla_runtime_plan *p;
 *   olla_error err = {0};
 *   if (olla_runtime_plan_load("model.planned.onnx", &p, &err) != OLLA_OK) ...
 *   void *arena = aligned_alloc(olla_runtime_plan_alignment(p), olla_runtime_plan_arena_bytes(p));
 *   // run the nodes in the model's order; the k-th allocation request of an
 *   // iteration is olla_runtime_plan_allocation(p, k % n); frees are no-ops.
 *   olla_runtime_plan_free(p);
 */
#ifndef OLLA_PLAN_H
#define OLLA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct olla_runtime_plan olla_runtime_plan;

typedef struct olla_allocation {
    const char *name; /* the tensor */
    int64_t offset;   /* from the start of the arena */
    int64_t bytes;    /* rounded up to the plan's alignment */
} olla_allocation;

/* Reads the olla.plan metadata of a model file (the rest of the model is
 * parsed but not kept). */
olla_status olla_runtime_plan_load(const char *model_path, olla_runtime_plan **out, olla_error *err);
/* The same from the olla.plan JSON text itself. */
olla_status olla_runtime_plan_parse(const char *plan_json, olla_runtime_plan **out, olla_error *err);
void olla_runtime_plan_free(olla_runtime_plan *p);

int64_t olla_runtime_plan_arena_bytes(const olla_runtime_plan *p);
int64_t olla_runtime_plan_alignment(const olla_runtime_plan *p);
/* Offset of a tensor by name, or -1 when the plan does not place it. */
int64_t olla_runtime_plan_offset(const olla_runtime_plan *p, const char *name);
/* Allocation requests in execution order. */
size_t olla_runtime_plan_allocation_count(const olla_runtime_plan *p);
const olla_allocation *olla_runtime_plan_allocation(const olla_runtime_plan *p, size_t k);

#ifdef __cplusplus
}
#endif
#endif
