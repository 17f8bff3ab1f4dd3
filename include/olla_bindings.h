/* olla-onnx: what a plan is made for: the concrete sizes (a model may leave
 * dimensions symbolic, "batch"; planning binds each such name to a value)
 * and the runtime that will execute it. */
#ifndef OLLA_BINDINGS_H
#define OLLA_BINDINGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A symbolic dimension bound to a value: --dim NAME=VALUE. */
typedef struct olla_dim_binding {
    const char *name;
    int64_t value;
} olla_dim_binding;

/* A graph input's shape given for planning: --input-shape NAME=D1,D2,...
 * dims[i] >= 0 is a size, -1 unknown. It replaces the declared shape; the
 * declared element type is kept. */
typedef struct olla_input_shape {
    const char *name;
    int rank;
    const int64_t *dims; /* rank entries */
} olla_input_shape;

/* The runtime that executes the written model, and so the order the plan is
 * made for (the planner models the order each executes). */
typedef enum olla_runtime {
    OLLA_RUNTIME_LISTED = 0,      /* runs graph.node as listed (olla_plan.h users) */
    OLLA_RUNTIME_ORT = 1,         /* ONNX Runtime's default order: depth first from the leaves */
    OLLA_RUNTIME_ORT_PRIORITY = 2 /* ONNX Runtime's PRIORITY_BASED order: the listing, Shape/Size first */
} olla_runtime;

#ifdef __cplusplus
}
#endif
#endif
