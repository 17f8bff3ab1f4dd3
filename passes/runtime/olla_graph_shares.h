/* olla-onnx: the buffer shares the sharing rules (olla_sharing.h) allow for
 * every node of a graph, as the scheduling DAG takes them
 * (passes/analysis/olla_graph_dag.h). */
#ifndef OLLA_GRAPH_SHARES_H
#define OLLA_GRAPH_SHARES_H

#include "onnx/olla_graph.h"
#include "passes/analysis/olla_graph_dag.h"

/* Every share a rule declares for a node of g: the node's domain and op
 * type, the opset the model imports for that domain, and the element type
 * of its output 0 select the rules. *shares is malloc'd (NULL when none). */
olla_status olla_graph_shares(const olla_graph *g, olla_op_share **shares, int *n_shares, olla_error *err);

/* Keeps, in place, only the views (alias shares) whose input is held
 * outside the plan (olla_tensor_is_held) or is itself such a view: a view
 * of a graph input, an initializer or a Constant is never a copy, also in
 * the memory model without sharing. Returns how many are kept (none when
 * out of memory: views then count as copies, never below the truth). */
int olla_graph_shares_held_views(const olla_graph *g, olla_op_share *shares, int n_shares);

/* The rule that lets output slot `output` of op share input slot `input`
 * under the given kind (inplace 0: view, 1: in place), or NULL when no rule
 * declares it; for the plan checker, which tests each declared share. */
const struct olla_share_rule *olla_graph_share_rule(const olla_graph *g, int op, int input, int output, int inplace);

#endif
