/* olla-onnx: our graph. Operators and tensors; every tensor has one producer
 * (an operator, or the caller for graph inputs and initializers), its
 * consumers, a type, and a size in bytes when known. Built from a loaded
 * model; names and strings are borrowed from the model's protobuf. */
#ifndef OLLA_GRAPH_H
#define OLLA_GRAPH_H

#include <stdint.h>
#include <string.h>

#include "olla_error.h"
#include "onnx/olla_model.h"
#include "onnx/olla_value_type.h"
#include "util/olla_strmap.h"

typedef struct olla_tensor {
    const char *name;
    olla_value_type type;      /* copied from the type source; dims borrowed */
    int64_t bytes;             /* -1 when unknown */
    const char *unknown_reason; /* why bytes is unknown (borrowed), or NULL */
    int producer;              /* operator index, -1 for graph inputs and initializers */
    int first_consumer, n_consumers; /* into olla_graph.consumer_list */
    unsigned char is_input, is_initializer, is_output;
    unsigned char is_constant; /* the output of a Constant node (olla_op_is_constant) */
    unsigned char is_outer;    /* a subgraph's graph only: a value of an enclosing graph it reads (is_input set) */
} olla_tensor;

typedef struct olla_op {
    const char *name;    /* may be "" */
    const char *op_type;
    const char *domain;  /* "" for the default ONNX domain */
    int first_input, n_inputs;   /* into olla_graph.input_list; -1 entries = omitted optional input */
    int n_explicit_inputs;       /* the rest are outer-scope tensors read by subgraphs */
    int first_output, n_outputs; /* into olla_graph.output_list; -1 entries = omitted optional output */
    int proto_index;             /* position in the model's node list */
} olla_op;

typedef struct olla_graph {
    const olla_model *model;
    const Onnx__GraphProto *proto; /* the graph it was built from: the model's, or one of its subgraphs */
    olla_op *ops;
    int n_ops;
    olla_tensor *tensors;
    int n_tensors;
    int *input_list, *output_list, *consumer_list;
    int *graph_inputs, n_graph_inputs;
    int *graph_outputs, n_graph_outputs;
    olla_strmap by_name;
} olla_graph;

/* Where tensor types come from: a lookup by value name (NULL when unknown),
 * plus an optional reason for names whose size is unknown. */
typedef struct olla_type_source {
    const olla_value_type *(*lookup)(void *ctx, const char *name);
    const char *(*unknown_reason)(void *ctx, const char *name);
    void *ctx;
} olla_type_source;

/* Builds the graph. Errors (OLLA_ERR_INPUT): a tensor produced twice, an input
 * that nothing produces, a graph output nothing produces, a cycle. */
olla_status olla_graph_build(const olla_model *model, const olla_type_source *types, olla_graph **out,
                             olla_error *err);
/* Builds the graph of a subgraph of model (the body of a Loop or Scan, a
 * branch of an If, at any depth) on its own: the values it reads from the
 * graphs around it become tensors with is_input and is_outer set (in no
 * graph input list), and a node's proto is sg->node[proto_index]. Types come
 * from types (the values of sg and of the graphs around it). Errors as
 * olla_graph_build. */
olla_status olla_graph_build_subgraph(const olla_model *model, const Onnx__GraphProto *sg, const olla_type_source *types,
                                      olla_graph **out, olla_error *err);
void olla_graph_free(olla_graph *g);
/* The proto of op (g->proto->node[ops[op].proto_index]). */
const Onnx__NodeProto *olla_graph_node_proto(const olla_graph *g, int op);

/* 1 when op is a Constant node (of any domain). Its output is a constant:
 * a runtime holds it with the initializers (ONNX Runtime turns every
 * Constant into one when it loads the model, measured), so it is never an
 * intermediate to plan, in any runtime mode, and counts as constant bytes. */
static inline int olla_op_is_constant(const olla_graph *g, int op)
{
    return op >= 0 && strcmp(g->ops[op].op_type, "Constant") == 0;
}

/* 1 when tensor t is held outside the plan by whoever runs the model: a
 * graph input, an initializer, or a Constant's output. */
static inline int olla_tensor_is_held(const olla_graph *g, int t)
{
    return g->tensors[t].producer < 0 || g->tensors[t].is_constant;
}

/* "name (OpType)" or "#index (OpType)" for messages. */
const char *olla_op_label(const olla_graph *g, int op, char *buf, int buflen);

#endif
