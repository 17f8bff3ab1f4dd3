/* olla-onnx: element types and shapes of every value in a graph.
 *
 * Inference runs over the protobuf model itself (subgraphs included) and
 * yields a table from value name to type, so the graph builder can size
 * every tensor. Symbolic dimensions are kept as names until bound. */
#ifndef OLLA_SHAPES_H
#define OLLA_SHAPES_H

#include <stdint.h>

#include "olla_bindings.h"
#include "olla_error.h"
#include "onnx.pb-c.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_value_type.h"

/* ---- the table of a model ---- */
typedef struct olla_shape_table olla_shape_table;

/* The value of a dimension parameter under the bindings: a bound name, or an
 * exporter's expression over names and integers with +, -, * and parentheses
 * ("8*batch", "batch*seq+1", "(seq-1)*2"). Returns 0 when some name is
 * unbound, on overflow, or when the value is negative. */
int olla_dim_param_eval(const char *param, const olla_dim_binding *dims, int n_dims, int64_t *value);

typedef struct olla_shape_options {
    const olla_dim_binding *dims; /* symbolic dims to replace by values */
    int n_dims;
    int ignore_value_info; /* 1: ignore graph value_info and declared graph-output
                              types (for benchmarks); graph inputs still used */
    int strict;            /* 1: any disagreement between an inferred type and a
                              declared one (value_info, graph output) is an error */
    const olla_input_shape *input_shapes; /* replace graph inputs' declared shapes; */
    int n_input_shapes;                   /* a name that is no graph input, a rank that
                                             differs from the declared one or a dim
                                             below -1 is an OLLA_ERR_USAGE */
    int64_t alignment;     /* the plan's: a declared size that the bindings (dims,
                              input_shapes) make differ from the inferred one by more
                              than this is a binding warning; 0 or 1: any difference */
} olla_shape_options;

/* Infers the type of every value of model (opt may be NULL). Errors only for
 * bad input (e.g. a malformed attribute), a declared type that contradicts
 * the inferred one beyond repair (or any disagreement with opt->strict), or
 * OOM; unknown shapes are not errors: see olla_shape_unknown_reason().
 *
 * Declared types win: where a node output's declared type (value_info or
 * graph output) disagrees with the type its rule infers, the declared element
 * type and dimensions are kept (unknown parts filled from the inference) and
 * a warning names the node, the operator and both types. A runtime allocates
 * what the model declares, so a plan never holds less than that. When the
 * declaration has no complete size and its rank contradicts the inference,
 * nothing can be trusted: that is an error. */
olla_status olla_infer_shapes(const Onnx__ModelProto *model, const olla_shape_options *opt,
                              olla_shape_table **out, olla_error *err);
/* Main-graph values: inputs, initializers, node outputs; NULL if absent. */
const olla_value_type *olla_shape_lookup(const olla_shape_table *t, const char *name);
/* Why a value has no size (symbolic dims and the --dim to pass, a
 * data-dependent output, an unsupported operator...); NULL when sized. */
const char *olla_shape_unknown_reason(const olla_shape_table *t, const char *name);
/* What to pass so that values of unknown size (names[0..n), main-graph
 * values, e.g. every unknown node output) get one, as one line into buf:
 *   "4 tensors ('c1', 'r1', 'c2', ...) have no size: they depend on graph
 *    input 'x', whose dimensions N, H and W have no value; pass
 *    --input-shape x=N,3,H,W with a size in place of each name, or --dim N=N
 *    --dim H=N --dim W=N"
 * naming every graph input with open dimensions that the sizes depend on
 * (through values of unknown size), its open dimensions, the one flag that
 * gives its shape, written from the declared one (an unnamed dimension
 * reads D<position>), and the --dim names when every open dimension has a
 * name. When none depends on such an input but some have symbolic
 * dimensions (named only by a declaration), those and the --dim names that
 * bind them. Never cuts or splits a name: what does not fit is counted.
 * Returns 1 when it wrote advice, 0 when neither applies (the sizes are
 * unknown for other reasons, olla_shape_unknown_reason). The main command
 * and `olla-onnx shapes` give this same text. */
int olla_shape_size_advice(const olla_shape_table *t, const char *const *names, size_t n, char *buf, size_t size);
/* All main-graph values in a stable order: inputs, initializers, then node
 * outputs in node order. */
size_t olla_shape_count(const olla_shape_table *t);
const char *olla_shape_name_at(const olla_shape_table *t, size_t i);
const olla_value_type *olla_shape_at(const olla_shape_table *t, size_t i);
/* Disagreements with value_info, one line each; the ones the bindings
 * cause come first: a declared size that a binding (--dim, --input-shape)
 * makes differ from the inferred one by more than the alignment (naming
 * both sizes and the binding), and an --input-shape that changes a
 * dimension the model fixes. */
size_t olla_shape_warning_count(const olla_shape_table *t);
const char *olla_shape_warning_at(const olla_shape_table *t, size_t i);
/* How many of the first warnings the bindings cause. */
size_t olla_shape_binding_warning_count(const olla_shape_table *t);
void olla_shape_table_free(olla_shape_table *t);

/* The table as the graph builder's type source (borrows t). */
olla_type_source olla_shape_type_source(olla_shape_table *t);

/* ---- the values of subgraphs ----
 * Inference keeps the values of every subgraph (If branches, Loop and Scan
 * bodies, at any depth) as they were last inferred in their node's context.
 * g is the model's graph or one of its subgraphs; a name is looked up among
 * g's values, then those of the graphs around it. */
/* 1 when g's values are known (the main graph, or a subgraph that was
 * inferred: too deep a nesting or too much work leaves one out). */
int olla_shape_has_graph(const olla_shape_table *t, const Onnx__GraphProto *g);
const olla_value_type *olla_shape_lookup_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name);
const char *olla_shape_unknown_reason_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name);
/* 1 and *value when name holds one known integer (or boolean) element: an
 * initializer, a Constant, or a value inference folded. */
int olla_shape_known_scalar(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name, int64_t *value);
/* The values of graph g as the graph builder's type source (borrows both;
 * s must outlive the source). */
typedef struct olla_shape_graph_source {
    olla_shape_table *t;
    const Onnx__GraphProto *g;
} olla_shape_graph_source;
olla_type_source olla_shape_type_source_in(olla_shape_graph_source *s);

#endif
