/* olla-onnx: the plan checker, independent of the planner. It recomputes
 * every lifetime from the order and the liveness rules, judges every buffer
 * share against the runtime's sharing rules (passes/runtime/), and sweeps the
 * arena for buffers that overlap while live. */
#ifndef OLLA_VERIFY_H
#define OLLA_VERIFY_H

#include "olla_plan.h"
#include "onnx/olla_graph.h"
#include "passes/analysis/olla_graph_dag.h"

/* A plan laid over a graph, per graph tensor. */
typedef struct olla_plan_layout {
    const int *order;            /* operator indices in execution order */
    const int64_t *offset;       /* -1 when the plan does not list the tensor */
    const int64_t *bytes;
    const unsigned char *share;  /* olla_buffer_share; NULL: no tensor shares */
    const int *shares;           /* the tensor whose buffer it takes, or -1; NULL with share */
    int64_t arena_bytes, alignment;
    int sharing;                 /* 1: made under the sharing rules (a view of a graph input or
                                    initializer then takes no arena memory and is not listed) */
    const olla_runtime_view *view; /* the graph as the plan's runtime runs it (ops it does not run
                                    make nothing planned); NULL: the file's */
} olla_plan_layout;

/* Errors (OLLA_ERR_INPUT) name the tensors and the node: an order that is not
 * topological, a planned tensor missing or of the wrong size, a misaligned
 * offset, a tensor beyond the arena, a share the rules do not allow (no rule
 * at that node, sizes or offsets differ, the input read later or a graph
 * output), and two buffers overlapping while both are live. peak (may be
 * NULL) receives the largest sum of the bytes of the buffers live at one step
 * of the order, from the lifetimes the checker computed itself. */
olla_status olla_plan_verify(const olla_graph *g, const olla_plan_layout *p, int64_t *peak, olla_error *err);

#endif
