/* olla-onnx: shape rules for quantization operators. Quantize/Dequantize
 * keep the input's shape and change the element type; the quantized matmul
 * and its relatives follow numpy matmul shapes. */
#include "passes/shapes/olla_shape_rules.h"

/* QuantizeLinear: element type of y_zero_point, else output_dtype, else uint8. */
static olla_status rule_quantize(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 2);
    if (!olla_shape_has_input(c, 2)) {
        elem = (int32_t)olla_shape_attr_int(c, "output_dtype", 0);
        if (!elem) elem = OLLA_DT_UINT8;
    }
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x) return olla_shape_set_out(c, 0, elem, -1, NULL);
    return olla_shape_set_out(c, 0, elem, x->rank, x->dims);
}

/* DequantizeLinear: output_dtype when set (opset 23+), else the scale's
 * type (opset 19+), else float. */
static olla_status rule_dequantize(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "output_dtype", 0);
    if (!elem) elem = olla_shape_opset(c) >= 19 ? olla_shape_in_elem(c, 1) : OLLA_DT_FLOAT;
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x) return olla_shape_set_out(c, 0, elem, -1, NULL);
    return olla_shape_set_out(c, 0, elem, x->rank, x->dims);
}

static olla_status rule_dynamic_quantize(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_UINT8, x ? x->rank : -1, x ? x->dims : NULL);
    if (st == OLLA_OK && olla_shape_has_output(c, 1))
        st = olla_shape_set_out(c, 1, OLLA_DT_FLOAT, 0, NULL);
    if (st == OLLA_OK && olla_shape_has_output(c, 2))
        st = olla_shape_set_out(c, 2, OLLA_DT_UINT8, 0, NULL);
    return st;
}

/* numpy matmul of inputs a and b into output 0. */
static olla_status matmul_shape(olla_shape_ctx *c, int a, int b, int32_t elem)
{
    int ra = olla_shape_in_rank(c, a), rb = olla_shape_in_rank(c, b);
    if (ra < 1 || rb < 1 || ra > OLLA_SHAPE_MAX_RANK || rb > OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    const olla_value_type *ta = olla_shape_in(c, a), *tb = olla_shape_in(c, b);
    /* Batch dims: broadcast a[:-2] with b[:-2]. */
    int ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0;
    int nb = ba > bb ? ba : bb;
    olla_dim dims[OLLA_SHAPE_MAX_RANK + 2];
    int rank = 0;
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - ba), ib = i - (nb - bb);
        olla_dim da = ia >= 0 ? ta->dims[ia] : olla_dim_known(1);
        olla_dim db = ib >= 0 ? tb->dims[ib] : olla_dim_known(1);
        if (olla_dim_is_known(da) && da.value == 1) dims[rank++] = db;
        else if (olla_dim_is_known(db) && db.value == 1) dims[rank++] = da;
        else if (olla_dim_is_known(da) && olla_dim_is_known(db) && da.value != db.value)
            return olla_shape_fail(c, "matmul batch dimensions %lld and %lld do not broadcast",
                                   (long long)da.value, (long long)db.value);
        else if (olla_dim_is_known(da) || olla_dim_equal(da, db)) dims[rank++] = da;
        else dims[rank++] = db;
    }
    if (ra >= 2) dims[rank++] = ta->dims[ra - 2];
    if (rb >= 2) dims[rank++] = tb->dims[rb - 1];
    if (rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    return olla_shape_set_out(c, 0, elem, rank, dims);
}

static olla_status rule_qlinear_matmul(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 7);
    if (!elem) elem = olla_shape_in_elem(c, 0);
    return matmul_shape(c, 0, 3, elem);
}

const olla_shape_rule_entry olla_shape_rules_quant[] = {
    {"", "QuantizeLinear", rule_quantize},
    {"", "DequantizeLinear", rule_dequantize},
    {"", "DynamicQuantizeLinear", rule_dynamic_quantize},
    {"", "QLinearMatMul", rule_qlinear_matmul},
    {NULL, NULL, NULL}};
