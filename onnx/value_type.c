/* olla-onnx: ONNX element types, their names and sizes. */
#include "onnx/olla_value_type.h"
#include "util/olla_arith.h"

#include <stddef.h>

typedef struct {
    const char *name;
    int bits;
} elem_info;

/* Indexed by TensorProto.DataType. */
static const elem_info elem_types[] = {
    [1] = {"float32", 32},   [2] = {"uint8", 8},          [3] = {"int8", 8},
    [4] = {"uint16", 16},    [5] = {"int16", 16},         [6] = {"int32", 32},
    [7] = {"int64", 64},     [8] = {"string", 0},         [9] = {"bool", 8},
    [10] = {"float16", 16},  [11] = {"float64", 64},      [12] = {"uint32", 32},
    [13] = {"uint64", 64},   [14] = {"complex64", 64},    [15] = {"complex128", 128},
    [16] = {"bfloat16", 16}, [17] = {"float8e4m3fn", 8},  [18] = {"float8e4m3fnuz", 8},
    [19] = {"float8e5m2", 8}, [20] = {"float8e5m2fnuz", 8}, [21] = {"uint4", 4},
    [22] = {"int4", 4},      [23] = {"float4e2m1", 4},    [24] = {"float8e8m0", 8},
    [25] = {"uint2", 2},     [26] = {"int2", 2},
};

const char *olla_elem_type_name(int32_t elem_type)
{
    if (elem_type <= 0 || (size_t)elem_type >= sizeof elem_types / sizeof elem_types[0])
        return NULL;
    return elem_types[elem_type].name;
}

int olla_elem_type_bits(int32_t elem_type)
{
    if (elem_type <= 0 || (size_t)elem_type >= sizeof elem_types / sizeof elem_types[0])
        return 0;
    return elem_types[elem_type].bits;
}

int64_t olla_value_bytes(const olla_value_type *t)
{
    if (!t || t->kind != OLLA_VALUE_TENSOR || t->rank < 0)
        return -1;
    int bits = olla_elem_type_bits(t->elem_type);
    if (bits <= 0)
        return -1;
    uint64_t count = 1;
    int overflow = 0;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i].value < 0)
            return -1;
        if (!olla_mul_u64(count, (uint64_t)t->dims[i].value, &count))
            overflow = 1;
    }
    if (overflow)
        return -2;
    if (count == 0)
        return 0;
    uint64_t total_bits;
    if (!olla_mul_u64(count, (uint64_t)bits, &total_bits) || total_bits > (uint64_t)INT64_MAX)
        return -2;
    return (int64_t)((total_bits + 7) / 8);
}
