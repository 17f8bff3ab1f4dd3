/* olla-onnx: shape rules for normalization operators. The normalized output
 * has the input's type; statistics outputs are per channel (BatchNorm) or the
 * input with the normalized axes reduced to 1 (LayerNorm). */
#include "passes/shapes/olla_shape_rules.h"

/* Y = X for every operator that only rescales its input. */
static olla_status rule_same_as_input(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

/* Per-channel vector [C] of element type elem. */
static olla_status set_channel_vector(olla_shape_ctx *c, int out, int32_t elem)
{
    olla_dim ch = olla_dim_unknown();
    if (olla_shape_in_rank(c, 0) >= 2) ch = olla_shape_in(c, 0)->dims[1];
    else if (olla_shape_in_rank(c, 1) == 1) ch = olla_shape_in(c, 1)->dims[0];
    return olla_shape_set_out(c, out, elem, 1, &ch);
}

/* BatchNormalization: Y like X; opset >= 14 outputs running mean and var
 * (types of inputs 3 and 4); older opsets output mean, var, saved mean and
 * saved var, all [C]. */
static olla_status rule_batch_norm(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    int32_t stat_elem = olla_shape_in_elem(c, 1);
    if (!stat_elem) stat_elem = olla_shape_in_elem(c, 0);
    for (int i = 1; st == OLLA_OK && i < olla_shape_n_outputs(c) && i <= 4; i++) {
        if (!olla_shape_has_output(c, i)) continue;
        int src = i <= 2 ? i + 2 : -1; /* running mean/var come from inputs 3/4 */
        int32_t elem = stat_elem;
        if (src >= 0 && olla_shape_in_elem(c, src)) elem = olla_shape_in_elem(c, src);
        st = set_channel_vector(c, i, elem);
    }
    return st;
}

/* LayerNormalization: Mean and InvStdDev are X with axes [axis, rank)
 * reduced to 1, of element type stash_type. */
static olla_status rule_layer_norm(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    if (st != OLLA_OK) return st;
    int64_t axis = olla_shape_attr_int(c, "axis", -1);
    int32_t stash = (int32_t)olla_shape_attr_int(c, "stash_type", OLLA_DT_FLOAT);
    int rank = olla_shape_in_rank(c, 0);
    int64_t a = 0;
    if (rank >= 0 && !olla_shape_axis(axis, rank, &a))
        return olla_shape_fail(c, "attribute 'axis' = %lld is out of range for rank %d",
                               (long long)axis, rank);
    for (int i = 1; i <= 2 && i < olla_shape_n_outputs(c); i++) {
        if (!olla_shape_has_output(c, i)) continue;
        if (rank < 0 || rank > OLLA_SHAPE_MAX_RANK) {
            st = olla_shape_set_out(c, i, stash, -1, NULL);
        } else {
            olla_dim dims[OLLA_SHAPE_MAX_RANK];
            const olla_value_type *xt = olla_shape_in(c, 0);
            for (int d = 0; d < rank; d++) dims[d] = d < a ? xt->dims[d] : olla_dim_known(1);
            st = olla_shape_set_out(c, i, stash, rank, dims);
        }
        if (st != OLLA_OK) return st;
    }
    return st;
}

/* RMSNormalization (opset 23): Y has X's shape and the scale's type (V). */
static olla_status rule_rms_norm(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t v = olla_shape_in_elem(c, 1);
    if (!x)
        return OLLA_OK;
    return olla_shape_set_out(c, 0, v ? v : x->elem_type, x->rank, x->dims);
}

const olla_shape_rule_entry olla_shape_rules_norm[] = {
    {"", "BatchNormalization", rule_batch_norm},
    {"", "InstanceNormalization", rule_same_as_input},
    {"", "LayerNormalization", rule_layer_norm},
    {"", "GroupNormalization", rule_same_as_input},
    {"", "LpNormalization", rule_same_as_input},
    {"", "MeanVarianceNormalization", rule_same_as_input},
    {"", "LRN", rule_same_as_input},
    {"", "RMSNormalization", rule_rms_norm},
    {NULL, NULL, NULL}};
