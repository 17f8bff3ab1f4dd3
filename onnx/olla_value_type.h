/* olla-onnx: the type of a value in our graph: kind, element type, rank and
 * dimensions (a dimension is a value, a symbolic name, or unknown), and where
 * the type came from. Element type numbers are ONNX's TensorProto.DataType. */
#ifndef OLLA_VALUE_TYPE_H
#define OLLA_VALUE_TYPE_H

#include <stdint.h>

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

/* ONNX's lower-case name of an element type ("float32", "int64", ...), or
 * NULL when unknown. */
const char *olla_elem_type_name(int32_t elem_type);
/* Bits per element (4 for int4/uint4/float4, 8 for bytes...); 0 when the type
 * has no fixed size (string) or is unknown. */
int olla_elem_type_bits(int32_t elem_type);
/* Bytes of a tensor of this type, rounded up to whole bytes; -1 when the type
 * or any dimension is unknown or symbolic, -2 on 64-bit overflow. */
int64_t olla_value_bytes(const olla_value_type *t);

#endif
