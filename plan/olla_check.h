/* olla-onnx: checking a written model's plan from the file alone,
 * independently of the planner. */
#ifndef OLLA_CHECK_H
#define OLLA_CHECK_H

#include "olla_bindings.h"
#include "onnx/olla_model.h"

typedef struct olla_check_options {
    const olla_dim_binding *dims; /* symbolic dimensions to bind */
    int n_dims;
} olla_check_options;

/* Verifies the model's olla.plan: the nodes are in a topological order,
 * every planned tensor is in the plan with its true (aligned) size, no two
 * tensors live at the same step overlap, and the arena holds every tensor. */
olla_status olla_plan_check(const olla_model *m, const olla_check_options *opt, olla_error *err);

#endif
