/* olla-onnx: checking a written model's plan from the file alone,
 * independently of the planner. */
#ifndef OLLA_CHECK_H
#define OLLA_CHECK_H

#include "olla_bindings.h"
#include "onnx/olla_model.h"
#include "plan/olla_plan_json.h"

typedef struct olla_check_options {
    const olla_dim_binding *dims; /* symbolic dimensions to bind */
    int n_dims;
    int strict_shapes; /* every disagreement with a declared type is an error */
    const olla_input_shape *input_shapes; /* graph input shapes to use */
    int n_input_shapes;
} olla_check_options;

/* Verifies the model's olla.plan: the nodes are in a topological order,
 * every planned tensor is in the plan with its true (aligned) size, and with
 * exactly the size the model declares for it (graph outputs, value_info), no
 * two tensors live at the same step overlap, and the arena holds every
 * tensor. */
olla_status olla_plan_check(const olla_model *m, const olla_check_options *opt, olla_error *err);

/* The declared part on its own: every tensor of g's value_info and outputs
 * that the plan places has the size its declared type gives under the
 * bindings, rounded up to the plan's alignment. Declarations with an unknown
 * element type or dimension are skipped. */
olla_status olla_plan_check_declared(const Onnx__GraphProto *g, const olla_stored_plan *sp,
                                     const olla_check_options *opt, const char *file, olla_error *err);

#endif
