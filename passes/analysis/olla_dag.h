/* olla-onnx: the scheduling view of a graph, shared by passes/ and solver/.
 *
 * Nodes are operators. Tensors are the values nodes produce: every DAG tensor
 * has exactly one producer. Graph inputs and initializers belong to the caller
 * and are not part of the DAG. A tensor whose size is unknown, or a control
 * edge, has bytes == 0 and still orders its producer before its consumers.
 *
 * Liveness, the one definition every tool uses: when the node at step t runs,
 * the live tensors are its inputs and outputs, plus every tensor produced
 * before t and consumed at or after t. A graph output stays live to the end.
 * A tensor nobody consumes is live only at its producer's step. The peak is
 * the largest sum of bytes of live tensors over all steps. */
#ifndef OLLA_DAG_H
#define OLLA_DAG_H

#include <stdint.h>

#include "olla_error.h"

typedef struct olla_dag {
    int n_nodes;
    int n_tensors;
    /* CSR adjacency, node -> tensors: in_list[in_start[v] .. in_start[v+1]) */
    int *in_start, *in_list;   /* input tensors (deduplicated) */
    int *out_start, *out_list; /* output tensors */
    /* tensor -> consumers, CSR: sink_list[sink_start[e] .. sink_start[e+1]) */
    int *sink_start, *sink_list; /* deduplicated consumer nodes */
    int *producer;               /* node that produces each tensor */
    int64_t *bytes;              /* planned size in bytes; 0 = not planned */
    unsigned char *is_output;    /* 1: live until the last step */
    /* Optional, borrowed from the graph (may be NULL): each node's operator
     * type and domain ("" = default ONNX domain), for analyses that recognise
     * training patterns such as optimizer and gradient-accumulation nodes. */
    const char *const *op_type;
    const char *const *op_domain;
} olla_dag;

/* Builder: collects nodes and tensors, then freezes them into CSR form. */
typedef struct olla_dag_builder olla_dag_builder;

olla_dag_builder *olla_dag_builder_new(int n_nodes_hint, int n_tensors_hint);
/* Adds a tensor produced by node `producer`; returns its index. */
int olla_dag_builder_tensor(olla_dag_builder *b, int producer, int64_t bytes, int is_output);
/* Records that node `node` reads tensor `tensor` (duplicates are ignored). */
void olla_dag_builder_use(olla_dag_builder *b, int node, int tensor);
/* Freezes into *dag (n_nodes given explicitly so nodes with no tensors count).
 * Frees the builder. */
olla_status olla_dag_build(olla_dag_builder *b, int n_nodes, olla_dag *dag, olla_error *err);
void olla_dag_builder_free(olla_dag_builder *b);
void olla_dag_free(olla_dag *dag);

/* Returns 1 when order[0..n_nodes) is a permutation that respects every edge. */
int olla_dag_is_topological(const olla_dag *dag, const int *order);
/* Stable topological sort: the earliest listed node first among the ready
 * ones. order must hold n_nodes. Returns OLLA_ERR_INPUT on a cycle. */
olla_status olla_dag_stable_topo(const olla_dag *dag, int *order, olla_error *err);

/* Lifetimes under an order: tensor e is live on steps [first[e], last[e]]
 * inclusive. */
olla_status olla_dag_lifetimes(const olla_dag *dag, const int *order, int *first, int *last, olla_error *err);
/* Peak live bytes under an order into *peak; live (optional, n_nodes)
 * receives the live bytes at every step; peak_step (optional) the first step
 * at the peak. */
olla_status olla_dag_peak(const olla_dag *dag, const int *order, int64_t *peak, int64_t *live, int *peak_step,
                          olla_error *err);

#endif
