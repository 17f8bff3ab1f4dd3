/* olla-onnx: reading the arguments of an ATen fallback node. A PyTorch
 * argument is an attribute named as in the operation's signature (traced
 * graphs) or the node input at its position (ONNX Runtime training exports);
 * these readers try the attribute first, then the input. Shared by the rules
 * in shape_aten.c and shape_aten_nn.c. */
#include <string.h>

#include "passes/shapes/olla_shape_aten.h"

int olla_aten_int(olla_shape_ctx *c, const char *name, int input, int64_t *out)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
        *out = a->i;
        return 1;
    }
    if (a)
        return 0;
    return input >= 0 && olla_shape_has_input(c, input) && olla_shape_in_ints(c, input, out, 1) == 1;
}

int64_t olla_aten_ints(olla_shape_ctx *c, const char *name, int input, int64_t *out, int64_t max)
{
    const int64_t *v;
    int64_t n = olla_shape_attr_ints(c, name, &v);
    if (n >= 0) {
        if (n > max)
            return -1;
        memcpy(out, v, sizeof *v * (size_t)n);
        return n;
    }
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT && max >= 1) {
        out[0] = a->i;
        return 1;
    }
    if (input < 0 || !olla_shape_has_input(c, input))
        return -1;
    return olla_shape_in_ints(c, input, out, max);
}

/* A dtype argument: a "torch.float32" attribute, or an input holding
 * PyTorch's ScalarType number. 0 when absent or unknown. */
int32_t olla_aten_dtype(olla_shape_ctx *c, int input)
{
    static const struct {
        const char *torch;
        int32_t onnx;
    } names[] = {{"torch.float32", OLLA_DT_FLOAT}, {"torch.float", OLLA_DT_FLOAT},  {"torch.float16", OLLA_DT_FLOAT16},
                 {"torch.half", OLLA_DT_FLOAT16},  {"torch.float64", OLLA_DT_DOUBLE}, {"torch.double", OLLA_DT_DOUBLE},
                 {"torch.bfloat16", OLLA_DT_BFLOAT16}, {"torch.int64", OLLA_DT_INT64}, {"torch.long", OLLA_DT_INT64},
                 {"torch.int32", OLLA_DT_INT32},   {"torch.int", OLLA_DT_INT32},    {"torch.int16", OLLA_DT_INT16},
                 {"torch.int8", OLLA_DT_INT8},     {"torch.uint8", OLLA_DT_UINT8},  {"torch.bool", OLLA_DT_BOOL}};
    /* PyTorch's ScalarType enum: uint8, int8, int16, int32, int64, half,
     * float, double, ..., bool = 11, ..., bfloat16 = 15 */
    static const int32_t scalar_type[16] = {OLLA_DT_UINT8, OLLA_DT_INT8,   OLLA_DT_INT16, OLLA_DT_INT32,
                                            OLLA_DT_INT64, OLLA_DT_FLOAT16, OLLA_DT_FLOAT, OLLA_DT_DOUBLE,
                                            0,             0,               0,             OLLA_DT_BOOL,
                                            0,             0,               0,             OLLA_DT_BFLOAT16};
    const char *s = olla_shape_attr_string(c, "dtype", NULL);
    if (s) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcmp(names[i].torch, s) == 0)
                return names[i].onnx;
        return 0;
    }
    int64_t v;
    if (olla_aten_int(c, "dtype", input, &v) && v >= 0 && v < 16)
        return scalar_type[v];
    return 0;
}

olla_status olla_aten_like(olla_shape_ctx *c, int out, int in, int32_t elem)
{
    const olla_value_type *t = olla_shape_in(c, in);
    if (!t)
        return OLLA_OK;
    return olla_shape_set_out(c, out, elem ? elem : t->elem_type, t->rank, t->dims);
}

int olla_aten_size_dims(olla_shape_ctx *c, const char *name, int input, olla_dim *dims)
{
    int64_t size[OLLA_SHAPE_MAX_RANK];
    int64_t n = olla_aten_ints(c, name, input, size, OLLA_SHAPE_MAX_RANK);
    for (int64_t d = 0; d < n; d++)
        dims[d] = size[d] >= 0 ? olla_dim_known(size[d]) : olla_dim_unknown();
    return (int)n;
}

olla_status olla_aten_grad_of_self(olla_shape_ctx *c)
{
    return olla_aten_like(c, 0, 1, 0);
}
