/* olla-onnx: element types and shapes of every value in a graph.
 *
 * Inference runs over the protobuf model itself (subgraphs included) and
 * yields a table from value name to type, so the graph builder can size
 * every tensor. Symbolic dimensions are kept as names until bound. */
#ifndef OLLA_SHAPES_H
#define OLLA_SHAPES_H

#include <stdint.h>

#include "olla_error.h"
#include "onnx.pb-c.h"

typedef struct olla_dim {
    int64_t value;     /* >= 0 when known */
    const char *param; /* symbolic name when value < 0, else NULL; NULL and value < 0 = unknown */
} olla_dim;

typedef enum olla_value_kind {
    OLLA_VALUE_TENSOR = 0,
    OLLA_VALUE_SPARSE_TENSOR,
    OLLA_VALUE_SEQUENCE,
    OLLA_VALUE_MAP,
    OLLA_VALUE_OPTIONAL
} olla_value_kind;

typedef enum olla_shape_source {
    OLLA_SRC_NONE = 0,
    OLLA_SRC_INFERRED,
    OLLA_SRC_VALUE_INFO,
    OLLA_SRC_INPUT,
    OLLA_SRC_INITIALIZER
} olla_shape_source;

typedef struct olla_value_type {
    olla_value_kind kind;
    int32_t elem_type;        /* ONNX TensorProto.DataType; 0 = unknown */
    int rank;                 /* -1 = unknown rank */
    olla_dim *dims;           /* rank entries */
    olla_shape_source source;
} olla_value_type;

typedef struct olla_dim_binding {
    const char *name;
    int64_t value;
} olla_dim_binding;

/* ONNX's lower-case name of an element type ("float32", "int64", ...), or
 * NULL when unknown. */
const char *olla_elem_type_name(int32_t elem_type);
/* Bits per element (4 for int4/uint4/float4, 8 for bytes...); 0 when the type
 * has no fixed size (string) or is unknown. */
int olla_elem_type_bits(int32_t elem_type);
/* Bytes of a tensor of this type, rounded up to whole bytes; -1 when the type
 * or any dimension is unknown or symbolic, -2 on 64-bit overflow. */
int64_t olla_value_bytes(const olla_value_type *t);

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
} olla_shape_options;

/* Infers the type of every value of model (opt may be NULL). Errors only for
 * bad input (e.g. a malformed attribute) or OOM; unknown shapes are not
 * errors: see olla_shape_unknown_reason(). */
olla_status olla_infer_shapes(const Onnx__ModelProto *model, const olla_shape_options *opt,
                              olla_shape_table **out, olla_error *err);
/* Main-graph values: inputs, initializers, node outputs; NULL if absent. */
const olla_value_type *olla_shape_lookup(const olla_shape_table *t, const char *name);
/* Why a value has no size (symbolic dims and the --dim to pass, a
 * data-dependent output, an unsupported operator...); NULL when sized. */
const char *olla_shape_unknown_reason(const olla_shape_table *t, const char *name);
/* All main-graph values in a stable order: inputs, initializers, then node
 * outputs in node order. */
size_t olla_shape_count(const olla_shape_table *t);
const char *olla_shape_name_at(const olla_shape_table *t, size_t i);
const olla_value_type *olla_shape_at(const olla_shape_table *t, size_t i);
/* Disagreements with value_info, one line each. */
size_t olla_shape_warning_count(const olla_shape_table *t);
const char *olla_shape_warning_at(const olla_shape_table *t, size_t i);
void olla_shape_table_free(olla_shape_table *t);

#endif
