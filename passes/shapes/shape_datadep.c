/* olla-onnx: shape rules for operators whose output size depends on tensor
 * values: TopK (run-time k), NonZero, Unique and NonMaxSuppression.
 * When the deciding value is known at inference time (a constant or folded
 * shape arithmetic) the size is computed; otherwise the dimension is unknown
 * and the output carries a reason naming the operator and the value. */
#include "passes/shapes/olla_shape_dims.h"
#include "passes/shapes/olla_shape_rules.h"

static olla_status rule_topk(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    int64_t axis = olla_shape_attr_int(c, "axis", -1);
    olla_dim k = olla_dim_unknown();
    int k_input = olla_shape_opset(c) >= 10 || olla_shape_n_inputs(c) >= 2;
    if (!k_input) {
        int64_t ka = olla_shape_attr_int(c, "k", -1);
        if (ka < 0) return olla_shape_fail(c, "attribute 'k' is missing or negative");
        k = olla_dim_known(ka);
    } else {
        int64_t kv[1];
        if (olla_shape_in_ints(c, 1, kv, 1) == 1) {
            if (kv[0] < 0) return olla_shape_fail(c, "k = %lld is negative", (long long)kv[0]);
            k = olla_dim_known(kv[0]);
        } else if (olla_shape_in_dims(c, 1, &k, 1, NULL) != 1) {
            k = olla_dim_unknown(); /* k may also be a symbolic size taken from Shape */
        }
    }
    int k_unknown = !olla_dim_is_known(k) && !k.param;
    olla_status st = OLLA_OK;
    if (rank < 0 || rank > OLLA_SHAPE_MAX_RANK) {
        st = olla_shape_set_out(c, 0, elem, -1, NULL);
        if (st == OLLA_OK && olla_shape_has_output(c, 1))
            st = olla_shape_set_out(c, 1, OLLA_DT_INT64, -1, NULL);
        return st;
    }
    int64_t a;
    if (!olla_shape_axis(axis, rank, &a))
        return olla_shape_fail(c, "attribute 'axis' = %lld is out of range for rank %d",
                               (long long)axis, rank);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    const olla_value_type *x = olla_shape_in(c, 0);
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    dims[a] = k;
    for (int o = 0; o < 2 && st == OLLA_OK; o++) {
        if (!olla_shape_has_output(c, o)) continue;
        st = olla_shape_set_out(c, o, o ? OLLA_DT_INT64 : elem, rank, dims);
        if (st == OLLA_OK && k_unknown)
            olla_shape_set_unknown(c, o, "data-dependent output of TopK: k is the run-time value of '%s'",
                                   olla_shape_input_name(c, 1));
    }
    return st;
}

static olla_status rule_nonzero(olla_shape_ctx *c)
{
    int rank = olla_shape_in_rank(c, 0);
    olla_dim dims[2] = {rank >= 0 ? olla_dim_known(rank) : olla_dim_unknown(), olla_dim_unknown()};
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    int all_known = v != NULL;
    int64_t nnz = 0;
    for (int64_t i = 0; v && i < v->n; i++) {
        if (v->e[i].state != OLLA_SV_KNOWN) {
            all_known = 0;
            break;
        }
        if (v->e[i].f != 0.0 || v->e[i].i != 0) nnz++;
    }
    if (all_known) dims[1] = olla_dim_known(nnz);
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 2, dims);
    if (st == OLLA_OK && !all_known)
        olla_shape_set_unknown(c, 0, "data-dependent output of NonZero (count of non-zero elements of '%s')",
                               olla_shape_input_name(c, 0));
    return st;
}

/* Unique: Y, indices, inverse_indices, counts. Only inverse_indices has a
 * size known without the values. */
static olla_status rule_unique(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    const olla_value_type *x = olla_shape_in(c, 0);
    int has_axis = olla_shape_attr_has(c, "axis");
    int64_t axis = olla_shape_attr_int(c, "axis", 0), a = 0;
    if (has_axis && rank >= 0 && !olla_shape_axis(axis, rank, &a))
        return olla_shape_fail(c, "attribute 'axis' = %lld is out of range for rank %d",
                               (long long)axis, rank);
    olla_status st = OLLA_OK;
    olla_dim unk = olla_dim_unknown();
    for (int o = 0; o < 4 && st == OLLA_OK; o++) {
        if (!olla_shape_has_output(c, o)) continue;
        if (o == 0) {
            if (!has_axis) {
                st = olla_shape_set_out(c, 0, elem, 1, &unk);
            } else if (rank < 0 || rank > OLLA_SHAPE_MAX_RANK) {
                st = olla_shape_set_out(c, 0, elem, -1, NULL);
            } else {
                olla_dim dims[OLLA_SHAPE_MAX_RANK];
                for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
                dims[a] = unk;
                st = olla_shape_set_out(c, 0, elem, rank, dims);
            }
        } else if (o == 2) {
            olla_dim n = unk;
            if (has_axis && rank >= 0) n = x->dims[a];
            else if (!has_axis && rank >= 0) n = olla_shape_numel(c, x);
            st = olla_shape_set_out(c, 2, OLLA_DT_INT64, 1, &n);
            continue;
        } else {
            st = olla_shape_set_out(c, o, OLLA_DT_INT64, 1, &unk);
        }
        if (st == OLLA_OK)
            olla_shape_set_unknown(c, o, "data-dependent output of Unique (number of distinct values of '%s')",
                                   olla_shape_input_name(c, 0));
    }
    return st;
}

static olla_status rule_nms(olla_shape_ctx *c)
{
    olla_dim dims[2] = {olla_dim_unknown(), olla_dim_known(3)};
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 2, dims);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "data-dependent output of NonMaxSuppression (number of selected boxes)");
    return st;
}

const olla_shape_rule_entry olla_shape_rules_datadep[] = {
    {"", "TopK", rule_topk},
    {"", "NonZero", rule_nonzero},
    {"", "Unique", rule_unique},
    {"", "NonMaxSuppression", rule_nms},
    {NULL, NULL, NULL}};
