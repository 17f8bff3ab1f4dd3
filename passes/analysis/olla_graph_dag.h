/* olla-onnx: the scheduling DAG of a graph, with the buffer shares a
 * runtime's kernels allow.
 *
 * DAG tensors are the graph's produced tensors, in graph order. A share
 * (passes/runtime/ says which a runtime declares) is either a view (alias:
 * the output is its input's buffer whatever the order) or an in-place write
 * (the output may take its input's buffer when the node is the input's last
 * reader). A view is taken when both sizes are known and equal: its DAG
 * tensor gets 0 bytes and its readers become readers of the tensor that
 * holds the buffer (olla_dag.h), and a view of a graph input or initializer
 * takes no arena memory at all. An in-place write becomes a candidate of the
 * DAG when the output is not a view, the input's buffer is planned, is no
 * graph output, and has exactly the output's size.
 *
 * No runtime runs a Constant: its output is a constant held with the
 * initializers (olla_op_is_constant), never planned, in every memory model.
 * A runtime may also run a graph other than the file's (olla_runtime_view):
 * ops it does not run (ONNX Runtime turns Constants into initializers and
 * drops some Casts) then read nothing and make nothing planned (their
 * outputs are like initializers), and a reader reads the tensor the runtime
 * gives it (reads_as: a dropped Cast's readers read the Cast's input). */
#ifndef OLLA_GRAPH_DAG_H
#define OLLA_GRAPH_DAG_H

#include "onnx/olla_graph.h"
#include "passes/analysis/olla_dag.h"

static inline int64_t olla_align_up(int64_t bytes, int64_t alignment)
{
    return alignment > 1 ? (bytes + alignment - 1) / alignment * alignment : bytes;
}

/* A share one node's kernel declares: output slot `output` of operator `op`
 * is a view of input slot `input` (inplace 0) or may be written into it
 * (inplace 1). */
typedef struct olla_op_share {
    int op, input, output;
    int inplace;
} olla_op_share;

/* How graph tensors map to the DAG (arrays malloc'd; olla_graph_dag_map_free). */
typedef struct olla_graph_dag_map {
    int *graph_tensor;  /* per DAG tensor: its graph tensor */
    int *dag_tensor;    /* per graph tensor: its DAG tensor, -1 for graph inputs and initializers */
    int *buffer;        /* per graph tensor: the DAG tensor that holds its bytes (its own, or for a view
                           its root's); -1 when it takes no arena memory (graph input, initializer, a
                           view of one) or its size is unknown */
    int *view_of;       /* per graph tensor: the graph tensor (node input) it is a view of, or -1 */
    int *inplace_from;  /* per graph tensor: for an output with an in-place candidate, the graph
                           tensor (node input) whose buffer it may take; else -1 */
} olla_graph_dag_map;

/* The graph as a runtime runs it (see above); NULL members: the file's. */
typedef struct olla_runtime_view {
    const unsigned char *runs; /* per op: 1 when the runtime runs it */
    const int *reads_as;       /* per graph tensor: what a reader of it reads */
} olla_runtime_view;

/* How the runtime runs the graph, as the DAG takes it: the shares its
 * kernels declare and its view of the graph. */
typedef struct olla_dag_sharing {
    const olla_op_share *shares; /* n_shares of them; NULL: no sharing, every output its own buffer */
    int n_shares;
    const olla_runtime_view *view; /* NULL: the file's graph */
} olla_dag_sharing;

/* Builds the DAG of g. Sizes are rounded up to alignment; unknown sizes
 * become 0 (ordering only). sharing may be NULL (no shares, the file's
 * graph). */
olla_status olla_graph_dag(const olla_graph *g, int64_t alignment, const olla_dag_sharing *sharing, olla_dag *dag,
                           olla_graph_dag_map *map, olla_error *err);
void olla_graph_dag_map_free(olla_graph_dag_map *map);

#endif
