/* olla-onnx: shape rules for recent and auxiliary operators: BitCast,
 * TensorScatter, CausalConvWithState, LinearAttention, FlexAttention
 * (ai.onnx.preview), the optimizers of ai.onnx.preview.training and the
 * ai.onnx.ml operators whose output shapes follow from their inputs and
 * attributes (the classifiers, maps and sequences are not covered). */
#include <stdint.h>
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

/* BitCast: same shape, element type 'to' (equal widths). */
static olla_status rule_bitcast(olla_shape_ctx *c)
{
    if (!olla_shape_attr_has(c, "to")) return olla_shape_fail(c, "attribute 'to' is missing");
    int32_t to = (int32_t)olla_shape_attr_int(c, "to", 0);
    const olla_value_type *x = olla_shape_in(c, 0);
    return olla_shape_set_out(c, 0, to, x ? x->rank : -1, x ? x->dims : NULL);
}

/* TensorScatter: the cache keeps its shape. */
static olla_status rule_pass0(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

/* CausalConvWithState: input [B, C, L], weight [C_out, 1, K] (depthwise);
 * output [B, C_out, L], present_state [B, C, K-1]. */
static olla_status rule_causal_conv(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    if (olla_shape_in_rank(c, 0) != 3) {
        olla_status st = olla_shape_set_out(c, 0, elem, -1, NULL);
        if (st == OLLA_OK) st = olla_shape_set_out(c, 1, elem, -1, NULL);
        return st;
    }
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_dim out[3] = {x->dims[0], x->dims[1], x->dims[2]};
    olla_dim state[3] = {x->dims[0], x->dims[1], olla_dim_unknown()};
    if (olla_shape_in_rank(c, 1) == 3) {
        const olla_value_type *w = olla_shape_in(c, 1);
        out[1] = w->dims[0];
        state[2] = olla_dim_sub(c, w->dims[2], olla_dim_known(1));
    }
    if (olla_shape_in_rank(c, 3) == 3) state[2] = olla_shape_in(c, 3)->dims[2];
    olla_status st = olla_shape_set_out(c, 0, elem, 3, out);
    if (st == OLLA_OK) st = olla_shape_set_out(c, 1, elem, 3, state);
    return st;
}

/* LinearAttention: 3-D [B, T, heads*d] (q_num_heads, kv_num_heads) or 4-D
 * [B, heads, T, d]; output like query with value's head size, present_state
 * [B, kv_heads, d_k, d_v]. */
static olla_status rule_linear_attention(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    /* present_state has past_state's type (S) when given */
    int32_t selem = olla_shape_in_elem(c, 3) ? olla_shape_in_elem(c, 3) : elem;
    int rq = olla_shape_in_rank(c, 0), rk = olla_shape_in_rank(c, 1), rv = olla_shape_in_rank(c, 2);
    if ((rq != 3 && rq != 4) || rk != rq || rv != rq) {
        olla_status st = olla_shape_set_out(c, 0, elem, -1, NULL);
        if (st == OLLA_OK) st = olla_shape_set_out(c, 1, selem, -1, NULL);
        return st;
    }
    const olla_value_type *q = olla_shape_in(c, 0), *k = olla_shape_in(c, 1), *v = olla_shape_in(c, 2);
    olla_status st;
    if (rq == 4) {
        olla_dim y[4] = {q->dims[0], q->dims[1], q->dims[2], v->dims[3]};
        olla_dim s[4] = {q->dims[0], k->dims[1], k->dims[3], v->dims[3]};
        st = olla_shape_set_out(c, 0, elem, 4, y);
        if (st == OLLA_OK) st = olla_shape_set_out(c, 1, selem, 4, s);
        return st;
    }
    olla_dim qh = olla_shape_attr_has(c, "q_num_heads")
                      ? olla_dim_known(olla_shape_attr_int(c, "q_num_heads", 1))
                      : olla_dim_unknown();
    olla_dim kvh = olla_shape_attr_has(c, "kv_num_heads")
                       ? olla_dim_known(olla_shape_attr_int(c, "kv_num_heads", 1))
                       : olla_dim_unknown();
    olla_dim dk = olla_dim_div(c, k->dims[2], kvh), dv = olla_dim_div(c, v->dims[2], kvh);
    olla_dim y[3] = {q->dims[0], q->dims[1], olla_dim_mul(c, qh, dv)};
    olla_dim s[4] = {q->dims[0], kvh, dk, dv};
    st = olla_shape_set_out(c, 0, elem, 3, y);
    if (st == OLLA_OK) st = olla_shape_set_out(c, 1, selem, 4, s);
    return st;
}

/* FlexAttention: [B, Hq, Lq, Ev] from Q [B, Hq, Lq, E] and V [B, Hkv, Lkv, Ev]. */
static olla_status rule_flex_attention(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    if (olla_shape_in_rank(c, 0) != 4) return olla_shape_set_out(c, 0, elem, -1, NULL);
    const olla_value_type *q = olla_shape_in(c, 0);
    olla_dim y[4] = {q->dims[0], q->dims[1], q->dims[2], olla_dim_unknown()};
    if (olla_shape_in_rank(c, 2) == 4) y[3] = olla_shape_in(c, 2)->dims[3];
    return olla_shape_set_out(c, 0, elem, 4, y);
}

/* Adagrad (X, G, H), Momentum (X, G, V), Adam (X, G, V, H): inputs R, T then
 * `groups` groups of n tensors; outputs are the new X and the new state
 * tensors (every input group but G), each shaped like its input. */
static olla_status optimizer(olla_shape_ctx *c, int groups)
{
    int nin = olla_shape_n_inputs(c) - 2;
    if (nin < 0 || nin % groups) return olla_shape_fail(c, "expected R, T and %d groups of tensors", groups);
    int n = nin / groups;
    int nout = olla_shape_n_outputs(c);
    for (int o = 0; o < nout; o++) {
        int g = n ? o / n : 0, k = n ? o % n : 0;
        int in_group = g == 0 ? 0 : g + 1;
        if (in_group >= groups) return olla_shape_fail(c, "too many outputs");
        olla_status st = olla_shape_pass(c, o, 2 + in_group * n + k);
        if (st != OLLA_OK) return st;
    }
    return OLLA_OK;
}

static olla_status rule_adagrad(olla_shape_ctx *c) { return optimizer(c, 3); }
static olla_status rule_momentum(olla_shape_ctx *c) { return optimizer(c, 3); }
static olla_status rule_adam(olla_shape_ctx *c) { return optimizer(c, 4); }

/* ArrayFeatureExtractor: X with its last axis replaced by the number of
 * selected indices. */
static olla_status rule_array_feature_extractor(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 1 || rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    const olla_value_type *x = olla_shape_in(c, 0);
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    dims[rank - 1] = olla_shape_in(c, 1) && olla_shape_in(c, 1)->rank >= 0
                         ? olla_shape_numel(c, olla_shape_in(c, 1))
                         : olla_dim_unknown();
    return olla_shape_set_out(c, 0, elem, rank, dims);
}

/* LabelEncoder: same shape; element type of the values attribute. */
static olla_status rule_label_encoder(olla_shape_ctx *c)
{
    int32_t elem = 0;
    const int64_t *iv = NULL;
    const float *fv = NULL;
    const ProtobufCBinaryData *sv = NULL;
    const Onnx__TensorProto *tv = olla_shape_attr_tensor(c, "values_tensor");
    if (tv) elem = tv->data_type;
    else if (olla_shape_attr_ints(c, "values_int64s", &iv) >= 0) elem = OLLA_DT_INT64;
    else if (olla_shape_attr_floats(c, "values_floats", &fv) >= 0) elem = OLLA_DT_FLOAT;
    else if (olla_shape_attr_strings(c, "values_strings", &sv) >= 0) elem = OLLA_DT_STRING;
    const olla_value_type *x = olla_shape_in(c, 0);
    return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, x ? x->dims : NULL);
}

/* TreeEnsemble: [N, n_targets] of the leaf weights' type. */
static olla_status rule_tree_ensemble(olla_shape_ctx *c)
{
    const Onnx__TensorProto *w = olla_shape_attr_tensor(c, "leaf_weights");
    int32_t elem = w ? w->data_type : olla_shape_in_elem(c, 0);
    olla_dim dims[2] = {olla_dim_unknown(), olla_dim_known(olla_shape_attr_int(c, "n_targets", 1))};
    if (olla_shape_in_rank(c, 0) >= 1) dims[0] = olla_shape_in(c, 0)->dims[0];
    return olla_shape_set_out(c, 0, elem, 2, dims);
}

/* Scaler, Normalizer: float of the input's shape. */
static olla_status rule_ml_float_same(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, x ? x->rank : -1, x ? x->dims : NULL);
}

/* CategoryMapper: strings to int64 or int64 to strings, same shape. */
static olla_status rule_category_mapper(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0) == OLLA_DT_STRING ? OLLA_DT_INT64
                   : olla_shape_in_elem(c, 0) == OLLA_DT_INT64 ? OLLA_DT_STRING
                                                               : 0;
    return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, x ? x->dims : NULL);
}

/* Batch size of a [N, C] (or [C], one row) input. */
static olla_dim ml_rows(olla_shape_ctx *c, int i)
{
    int r = olla_shape_in_rank(c, i);
    if (r == 2) return olla_shape_in(c, i)->dims[0];
    return r == 1 ? olla_dim_known(1) : olla_dim_unknown();
}

/* LinearRegressor ('targets'), TreeEnsembleRegressor ('n_targets'): float [N, targets]. */
static olla_status rule_ml_regressor(olla_shape_ctx *c)
{
    const char *attr = strcmp(olla_shape_op(c), "LinearRegressor") == 0 ? "targets" : "n_targets";
    olla_dim dims[2] = {ml_rows(c, 0), olla_dim_known(olla_shape_attr_int(c, attr, 1))};
    return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 2, dims);
}

/* FeatureVectorizer: float [N, sum(inputdimensions)]. */
static olla_status rule_feature_vectorizer(olla_shape_ctx *c)
{
    const int64_t *d = NULL;
    int64_t n = olla_shape_attr_ints(c, "inputdimensions", &d), sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (d[i] < 0 || d[i] > INT64_MAX / 4 - sum)
            return olla_shape_fail(c, "attribute 'inputdimensions' has an invalid value %lld", (long long)d[i]);
        sum += d[i];
    }
    olla_dim dims[2] = {ml_rows(c, 0), n >= 0 ? olla_dim_known(sum) : olla_dim_unknown()};
    return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 2, dims);
}

/* OneHotEncoder: float, the input's shape plus one axis of the categories. */
static olla_status rule_one_hot_encoder(olla_shape_ctx *c)
{
    const int64_t *ci = NULL;
    const ProtobufCBinaryData *cs = NULL;
    int64_t n = olla_shape_attr_ints(c, "cats_int64s", &ci);
    if (n < 0) n = olla_shape_attr_strings(c, "cats_strings", &cs);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 0 || rank >= OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = olla_shape_in(c, 0)->dims[i];
    dims[rank] = n >= 0 ? olla_dim_known(n) : olla_dim_unknown();
    return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, rank + 1, dims);
}

const olla_shape_rule_entry olla_shape_rules_extra[] = {
    {"", "BitCast", rule_bitcast},
    {"", "TensorScatter", rule_pass0},
    {"", "CausalConvWithState", rule_causal_conv},
    {"", "LinearAttention", rule_linear_attention},
    {"ai.onnx.preview", "FlexAttention", rule_flex_attention},
    {"ai.onnx.preview.training", "Adagrad", rule_adagrad},
    {"ai.onnx.preview.training", "Momentum", rule_momentum},
    {"ai.onnx.preview.training", "Adam", rule_adam},
    {"ai.onnx.ml", "ArrayFeatureExtractor", rule_array_feature_extractor},
    {"ai.onnx.ml", "Binarizer", rule_pass0},
    {"ai.onnx.ml", "LabelEncoder", rule_label_encoder},
    {"ai.onnx.ml", "TreeEnsemble", rule_tree_ensemble},
    {"ai.onnx.ml", "Scaler", rule_ml_float_same},
    {"ai.onnx.ml", "Normalizer", rule_ml_float_same},
    {"ai.onnx.ml", "Imputer", rule_pass0},
    {"ai.onnx.ml", "CategoryMapper", rule_category_mapper},
    {"ai.onnx.ml", "LinearRegressor", rule_ml_regressor},
    {"ai.onnx.ml", "TreeEnsembleRegressor", rule_ml_regressor},
    {"ai.onnx.ml", "FeatureVectorizer", rule_feature_vectorizer},
    {"ai.onnx.ml", "OneHotEncoder", rule_one_hot_encoder},
    {NULL, NULL, NULL}};
