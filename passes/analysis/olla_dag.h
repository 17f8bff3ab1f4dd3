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
 * the largest sum of bytes of live tensors over all steps.
 *
 * Buffer sharing (a runtime's views and in-place kernels) enters the DAG in
 * two ways. A view shares its input's buffer whatever the order: the graph's
 * DAG gives the view 0 bytes and makes its readers readers of the tensor that
 * holds the buffer, so the buffer lives until the last reader of any view. An
 * in-place write depends on the order: candidate k lets node inplace_node[k]
 * write its output inplace_out[k] into the buffer of its input inplace_in[k]
 * when that node is the input's last reader (last[in] == the node's step).
 * The output then takes over the buffer, and at that step the two count
 * once: the live bytes of the step drop by bytes[out] (equal to bytes[in]).
 * At one node the candidates have distinct inputs and distinct outputs. */
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
    /* In-place candidates, sorted by node: those of node v are
     * inplace_start[v] .. inplace_start[v+1]; all NULL when there are none. */
    int n_inplace;
    int *inplace_start;              /* n_nodes + 1 */
    int *inplace_in, *inplace_out;   /* n_inplace each */
} olla_dag;

/* Builder: collects nodes and tensors, then freezes them into CSR form. */
typedef struct olla_dag_builder olla_dag_builder;

olla_dag_builder *olla_dag_builder_new(int n_nodes_hint, int n_tensors_hint);
/* Adds a tensor produced by node `producer`; returns its index. */
int olla_dag_builder_tensor(olla_dag_builder *b, int producer, int64_t bytes, int is_output);
/* Records that node `node` reads tensor `tensor` (duplicates are ignored). */
void olla_dag_builder_use(olla_dag_builder *b, int node, int tensor);
/* Records an in-place candidate: node may write tensor out (which it
 * produces) into the buffer of tensor in (which it reads); bytes of both
 * must be equal, and in must not be a graph output. A second candidate of
 * the node with the same in or out is dropped. */
void olla_dag_builder_inplace(olla_dag_builder *b, int node, int in, int out);
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

/* The in-place candidates that apply under an order, from the step of every
 * node and the lifetimes: applies[k] = 1 when candidate k's node is the last
 * reader of its input. */
void olla_dag_inplace_applied(const olla_dag *dag, const int *step, const int *last, unsigned char *applies);
/* The live bytes at every step of an order given the step of every node:
 * lifetimes into first/last (n_tensors each), live bytes into live
 * (n_nodes), in-place sharing included; delta is scratch of n_nodes + 1.
 * Returns the peak. Allocates nothing. */
int64_t olla_dag_profile(const olla_dag *dag, const int *step, int *first, int *last, int64_t *delta, int64_t *live);
/* Lifetimes under an order: tensor e is live on steps [first[e], last[e]]
 * inclusive. */
olla_status olla_dag_lifetimes(const olla_dag *dag, const int *order, int *first, int *last, olla_error *err);
/* Peak live bytes under an order into *peak; live (optional, n_nodes)
 * receives the live bytes at every step; peak_step (optional) the first step
 * at the peak. */
olla_status olla_dag_peak(const olla_dag *dag, const int *order, int64_t *peak, int64_t *live, int *peak_step,
                          olla_error *err);

#endif
