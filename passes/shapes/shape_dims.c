/* olla-onnx: reading an integer input of a shape rule as dimensions. */
#include "passes/shapes/olla_shape_dims.h"

int64_t olla_shape_in_dims(olla_shape_ctx *c, int i, olla_dim *out, int64_t max, int *all_known)
{
    if (all_known) *all_known = 0;
    const olla_value_type *t = olla_shape_in(c, i);
    if (!t || t->kind != OLLA_VALUE_TENSOR || t->rank < 0 || t->rank > 1) return -1;
    int64_t n = 1;
    if (t->rank == 1) {
        if (!olla_dim_is_known(t->dims[0])) return -1;
        n = t->dims[0].value;
    }
    if (n > max) return -1;
    const olla_shape_value *v = olla_shape_in_value(c, i);
    int known = 1;
    for (int64_t k = 0; k < n; k++) {
        out[k] = olla_dim_unknown();
        if (v && v->n == n && v->e[k].state == OLLA_SV_KNOWN && v->e[k].i >= 0)
            out[k] = olla_dim_known(v->e[k].i);
        else if (v && v->n == n && v->e[k].state == OLLA_SV_SYMBOLIC && v->e[k].sym)
            out[k].param = v->e[k].sym;
        if (!olla_dim_is_known(out[k])) known = 0;
    }
    if (all_known) *all_known = known;
    return n;
}
