/* olla-onnx: the ordering and placement stages as the pipeline calls them. */
#ifndef OLLA_STAGES_H
#define OLLA_STAGES_H

#include "olla.h"
#include "passes/analysis/olla_dag.h"

typedef struct olla_order_result {
    int64_t peak_bytes;
    int64_t heuristic_peak_bytes; /* best of the fast heuristics */
    int64_t lower_bound_bytes; /* -1 when not computed */
    const char *status;
} olla_order_result;

/* Fills order (n_nodes) with an order whose peak is never above input_order's. */
olla_status olla_stage_order(const olla_dag *dag, const int *input_order, const olla_options *opt, int *order,
                             olla_order_result *res, olla_error *err);

typedef struct olla_place_input {
    const olla_dag *dag;
    const int *first, *last; /* lifetimes, inclusive steps */
    int64_t alignment;
    double time_limit; /* seconds left for placement; <= 0: none */
    const olla_options *opt;
} olla_place_input;

typedef struct olla_place_outcome {
    int64_t arena_bytes;
    const char *status;
} olla_place_outcome;

/* Fills offset (one per DAG tensor; tensors of 0 bytes get 0). */
olla_status olla_stage_place(const olla_place_input *in, int64_t *offset, olla_place_outcome *out, olla_error *err);

#endif
