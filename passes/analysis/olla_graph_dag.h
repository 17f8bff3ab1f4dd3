/* olla-onnx: the scheduling DAG of a graph. */
#ifndef OLLA_GRAPH_DAG_H
#define OLLA_GRAPH_DAG_H

#include "onnx/olla_graph.h"
#include "passes/analysis/olla_dag.h"

static inline int64_t olla_align_up(int64_t bytes, int64_t alignment)
{
    return alignment > 1 ? (bytes + alignment - 1) / alignment * alignment : bytes;
}

/* DAG tensors are the graph's produced tensors, in graph order; graph_tensor
 * (n_tensors of the DAG, malloc'd) maps each to its graph index. Sizes are
 * rounded up to alignment; unknown sizes become 0 (ordering only). */
olla_status olla_graph_dag(const olla_graph *g, int64_t alignment, olla_dag *dag, int **graph_tensor,
                           olla_error *err);

#endif
