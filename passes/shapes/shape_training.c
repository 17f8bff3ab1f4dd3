/* olla-onnx: shape rules for losses (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss), ONNX Runtime training operators (gradients,
 * accumulators, optimizers, YieldOp) and common contrib operators (FusedMatMul,
 * Gelu variants, LayerNormalization variants...). ATen nodes are in
 * shape_aten.c. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

#define MS "com.microsoft"

static olla_status same0(olla_shape_ctx *c) { return olla_shape_pass(c, 0, 0); }

/* Output i has the shape of input j and the element type of input k. */
static olla_status shape_of(olla_shape_ctx *c, int i, int j, int k)
{
    const olla_value_type *t = olla_shape_in(c, j);
    if (!t)
        return OLLA_OK;
    int32_t elem = olla_shape_in_elem(c, k);
    return olla_shape_set_out(c, i, elem ? elem : t->elem_type, t->rank, t->dims);
}

/* ---- losses ---- */

/* loss: scalar, or the labels' shape with reduction "none"; log_prob:
 * the scores' type. */
static olla_status loss_common(olla_shape_ctx *c, int has_log_prob)
{
    const char *red = olla_shape_attr_string(c, "reduction", "mean");
    int32_t elem = olla_shape_in_elem(c, 0);
    olla_status st;
    if (strcmp(red, "none") == 0)
        st = shape_of(c, 0, 1, 0);
    else
        st = olla_shape_set_out(c, 0, elem, 0, NULL);
    if (st == OLLA_OK && has_log_prob)
        st = olla_shape_pass(c, 1, 0);
    return st;
}

static olla_status rule_sce(olla_shape_ctx *c) { return loss_common(c, 1); }
static olla_status rule_nll(olla_shape_ctx *c) { return loss_common(c, 0); }

/* Gradient of a loss: the shape of log_prob (input 1). */
static olla_status rule_sce_grad(olla_shape_ctx *c) { return olla_shape_pass(c, 0, 1); }

/* ---- gradients with the shape of dY or of a forward input ---- */

static olla_status rule_conv_grad(olla_shape_ctx *c)
{
    /* dY, X, W -> dX, dW, dB */
    olla_status st = shape_of(c, 0, 1, 0);
    if (st == OLLA_OK)
        st = shape_of(c, 1, 2, 0);
    const olla_value_type *w = olla_shape_in(c, 2);
    if (st == OLLA_OK && w && w->rank >= 1)
        st = olla_shape_set_out(c, 2, olla_shape_in_elem(c, 0), 1, &w->dims[0]);
    return st;
}

/* dY, X, scale, ... -> X_grad (X), scale_grad (scale), bias_grad (scale). */
static olla_status rule_norm_grad(olla_shape_ctx *c)
{
    olla_status st = shape_of(c, 0, 1, 0);
    if (st == OLLA_OK)
        st = shape_of(c, 1, 2, 2);
    if (st == OLLA_OK)
        st = shape_of(c, 2, 2, 2);
    return st;
}

static olla_status rule_bn_internal(olla_shape_ctx *c)
{
    /* X, scale, B, mean, var -> Y, running_mean, running_var, saved_mean, saved_inv_std */
    olla_status st = olla_shape_pass(c, 0, 0);
    if (st == OLLA_OK)
        st = olla_shape_pass(c, 1, 3);
    if (st == OLLA_OK)
        st = olla_shape_pass(c, 2, 4);
    if (st == OLLA_OK)
        st = shape_of(c, 3, 1, 3);
    if (st == OLLA_OK)
        st = shape_of(c, 4, 1, 4);
    return st;
}

/* Pooling gradients: the producer of the indices (MaxPool) knows X; else
 * the smallest input that pools to dY's shape. */
static olla_status pool_grad(olla_shape_ctx *c, int indices)
{
    const olla_value_type *x = indices >= 0 ? olla_shape_producer_input(c, indices, 0) : NULL;
    const char *pop = indices >= 0 ? olla_shape_producer_op(c, indices) : NULL;
    int32_t elem = olla_shape_in_elem(c, 0);
    if (x && pop && strcmp(pop, "MaxPool") == 0 && x->rank >= 0)
        return olla_shape_set_out(c, 0, elem, x->rank, x->dims);
    const olla_value_type *dy = olla_shape_in(c, 0);
    if (!dy || dy->rank < 2)
        return olla_shape_set_out(c, 0, elem, dy ? dy->rank : -1, NULL);
    const int64_t *k, *s, *p, *dl;
    int64_t nk = olla_shape_attr_ints(c, "kernel_shape", &k);
    int64_t ns = olla_shape_attr_ints(c, "strides", &s);
    int64_t np = olla_shape_attr_ints(c, "pads", &p);
    int64_t nd = olla_shape_attr_ints(c, "dilations", &dl);
    int sp = dy->rank - 2;
    if (nk != sp)
        return olla_shape_set_out(c, 0, elem, dy->rank, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    dims[0] = dy->dims[0];
    dims[1] = dy->dims[1];
    for (int d = 0; d < sp; d++) {
        olla_dim o = dy->dims[2 + d];
        int64_t st = ns == sp ? s[d] : 1, dil = nd == sp ? dl[d] : 1;
        int64_t pad = np == 2 * sp ? p[d] + p[d + sp] : 0;
        if (o.value < 1) {
            dims[2 + d] = olla_dim_unknown();
            continue;
        }
        int64_t in = (o.value - 1) * st - pad + dil * (k[d] - 1) + 1;
        dims[2 + d] = in > 0 ? olla_dim_known(in) : olla_dim_unknown();
    }
    return olla_shape_set_out(c, 0, elem, dy->rank, dims);
}

static olla_status rule_maxpool_grad(olla_shape_ctx *c) { return pool_grad(c, 1); }
static olla_status rule_avgpool_grad(olla_shape_ctx *c) { return pool_grad(c, -1); }

/* Output with the shape given by the value of input si, the type of input ti. */
static olla_status shape_from_value(olla_shape_ctx *c, int si, int ti)
{
    const olla_shape_value *v = olla_shape_in_value(c, si);
    int32_t elem = olla_shape_in_elem(c, ti);
    if (!v || v->n > OLLA_SHAPE_MAX_RANK) {
        olla_shape_set_unknown(c, 0, "the output shape is the run-time value of input '%s'",
                               olla_shape_has_input(c, si) ? olla_shape_input_name(c, si) : "?");
        const olla_value_type *s = olla_shape_in(c, si);
        int r = s && s->rank == 1 && s->dims[0].value >= 0 && s->dims[0].value <= OLLA_SHAPE_MAX_RANK
                    ? (int)s->dims[0].value
                    : -1;
        return olla_shape_set_out(c, 0, elem, r, NULL);
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int64_t k = 0; k < v->n; k++) {
        dims[k] = olla_dim_unknown();
        if (v->e[k].state == OLLA_SV_KNOWN && v->e[k].i >= 0)
            dims[k] = olla_dim_known(v->e[k].i);
        else if (v->e[k].state == OLLA_SV_SYMBOLIC)
            dims[k].param = v->e[k].sym;
    }
    return olla_shape_set_out(c, 0, elem, (int)v->n, dims);
}

static olla_status rule_gather_grad(olla_shape_ctx *c) { return shape_from_value(c, 0, 2); }
static olla_status rule_shape1_grad(olla_shape_ctx *c) { return shape_from_value(c, 1, 0); }
/* GatherNDGrad(shape, indices, update): the type of update. */
static olla_status rule_gather_nd_grad(olla_shape_ctx *c) { return shape_from_value(c, 0, 2); }

/* dY is input 0 and dX has its type (ReluGrad, GeluGrad, SoftmaxGrad...). */
static olla_status rule_dy(olla_shape_ctx *c) { return olla_shape_pass(c, 0, 0); }

/* ---- accumulators and optimizers ---- */

static olla_status flag_out(olla_shape_ctx *c, int i)
{
    olla_dim one = olla_dim_known(1);
    return olla_shape_set_out(c, i, OLLA_DT_BOOL, 1, &one);
}

static olla_status rule_accumulator_v2(olla_shape_ctx *c)
{
    olla_status st = flag_out(c, 0);
    return st == OLLA_OK ? olla_shape_pass(c, 1, 0) : st;
}

static olla_status rule_accumulator(olla_shape_ctx *c) { return olla_shape_pass(c, 0, 0); }

/* Output i is a sequence with the element type of the sequence input j. */
static olla_status sequence_like(olla_shape_ctx *c, int i, int j)
{
    const olla_value_type *t = olla_shape_in(c, j);
    return olla_shape_set_out_kind(c, i, OLLA_VALUE_SEQUENCE, t && t->kind == OLLA_VALUE_SEQUENCE ? t->elem_type : 0);
}

/* AdamWOptimizer(lr, step, weights, gradients, m1, m2[, update_signal]) ->
 * updated_flag, updated_weights, updated_m1, updated_m2. ORT's schema types
 * updated_flag as T2 = tensor(int64), the type of step, and its kernel
 * allocates it with step's shape; the sequences follow inputs 2, 4 and 5. */
static olla_status rule_adamw(olla_shape_ctx *c)
{
    const olla_value_type *step = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 1);
    olla_status st = olla_shape_set_out(c, 0, elem ? elem : OLLA_DT_INT64, step ? step->rank : -1,
                                        step ? step->dims : NULL);
    static const int seq_input[4] = {0, 2, 4, 5};
    for (int i = 1; st == OLLA_OK && i < olla_shape_n_outputs(c) && i < 4; i++)
        st = sequence_like(c, i, seq_input[i]);
    return st;
}

/* SGDOptimizerV2(lr, weights, gradients[, update_signal]) ->
 * update_completed (a bool scalar), updated_weights (input 1's type). */
static olla_status rule_sgd_v2(olla_shape_ctx *c)
{
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_BOOL, 0, NULL);
    return st == OLLA_OK ? sequence_like(c, 1, 1) : st;
}

static olla_status rule_yield(olla_shape_ctx *c)
{
    const int64_t *full;
    int64_t nf = olla_shape_attr_ints(c, "full_shape_outputs", &full);
    olla_status st = OLLA_OK;
    for (int i = 0; st == OLLA_OK && i < olla_shape_n_outputs(c); i++) {
        int is_full = 0;
        for (int64_t k = 0; k < nf; k++)
            is_full |= full[k] == i;
        if (is_full)
            st = olla_shape_pass(c, i, i);
        else
            st = olla_shape_set_out(c, i, olla_shape_in_elem(c, i), -1, NULL);
    }
    return st;
}

/* ---- contrib operators ---- */

static olla_status rule_fused_matmul(olla_shape_ctx *c)
{
    const olla_value_type *a = olla_shape_in(c, 0), *b = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!a || !b || a->rank < 2 || b->rank < 2 || olla_shape_attr_int(c, "transBatchA", 0) ||
        olla_shape_attr_int(c, "transBatchB", 0))
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int ta = olla_shape_attr_int(c, "transA", 0) != 0, tb = olla_shape_attr_int(c, "transB", 0) != 0;
    int r = a->rank > b->rank ? a->rank : b->rank;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < r - 2; d++) {
        int ia = d - (r - a->rank), ib = d - (r - b->rank);
        olla_dim x = ia >= 0 ? a->dims[ia] : olla_dim_known(1), y = ib >= 0 ? b->dims[ib] : olla_dim_known(1);
        dims[d] = x.value == 1 ? y : y.value == 1 ? x : x.value >= 0 ? x : y;
    }
    dims[r - 2] = a->dims[a->rank - (ta ? 1 : 2)];
    dims[r - 1] = b->dims[b->rank - (tb ? 2 : 1)];
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* Statistics output of a layer normalization: X's leading dims up to axis,
 * then ones; float unless stash_type says otherwise. */
static olla_status stats_out(olla_shape_ctx *c, int i, int64_t axis)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = (int32_t)olla_shape_attr_int(c, "stash_type", OLLA_DT_FLOAT);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, i, elem, -1, NULL);
    int64_t a;
    if (!olla_shape_axis(axis, x->rank, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        dims[d] = d < a ? x->dims[d] : olla_dim_known(1);
    return olla_shape_set_out(c, i, elem, x->rank, dims);
}

/* ORT's LayerNormalization and SimplifiedLayerNormalization: Y has the
 * scale's type (V), the statistics U. */
static olla_status rule_layer_norm(olla_shape_ctx *c)
{
    int64_t axis = olla_shape_attr_int(c, "axis", -1);
    olla_status st = shape_of(c, 0, 0, 1);
    int simplified = strstr(olla_shape_op(c), "Simplified") != NULL;
    if (st == OLLA_OK && !simplified)
        st = stats_out(c, 1, axis);
    if (st == OLLA_OK)
        st = stats_out(c, simplified ? 1 : 2, axis);
    return st;
}

static olla_status rule_skip_layer_norm(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    int simplified = strstr(olla_shape_op(c), "Simplified") != NULL;
    if (st == OLLA_OK && !simplified)
        st = stats_out(c, 1, -1);
    if (st == OLLA_OK)
        st = stats_out(c, simplified ? 1 : 2, -1);
    if (st == OLLA_OK)
        st = olla_shape_pass(c, 3, 0);
    return st;
}

static olla_status rule_bias_dropout(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_status st = olla_shape_pass(c, 0, 0);
    if (st == OLLA_OK && x)
        st = olla_shape_set_out(c, 1, OLLA_DT_BOOL, x->rank, x->dims);
    return st;
}

static olla_status rule_bitmask_dropout(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_status st = olla_shape_pass(c, 0, 0);
    if (st == OLLA_OK && x) {
        olla_dim n = olla_dim_ceil_div(c, olla_shape_numel(c, x), olla_dim_known(32));
        st = olla_shape_set_out(c, 1, OLLA_DT_UINT32, 1, &n);
    }
    return st;
}

/* Contrib operators that are a standard one under another name. */
static olla_status rule_reduce_sum_training(olla_shape_ctx *c) { return olla_shape_delegate(c, "", "ReduceSum", 13); }
static olla_status rule_split_training(olla_shape_ctx *c) { return olla_shape_delegate(c, "", "Split", 13); }
static olla_status rule_transpose_matmul(olla_shape_ctx *c) { return rule_fused_matmul(c); }

static olla_status rule_concat_training(olla_shape_ctx *c)
{
    olla_status st = olla_shape_delegate(c, "", "Concat", 13);
    int n = 0;
    for (int k = 0; k < olla_shape_n_inputs(c); k++)
        n += olla_shape_has_input(c, k);
    olla_dim d = olla_dim_known(n);
    return st == OLLA_OK ? olla_shape_set_out(c, 1, OLLA_DT_INT64, 1, &d) : st;
}

/* Scalar results over many inputs (IsAllFinite: bool, ReduceAllL2: float). */
static olla_status rule_is_all_finite(olla_shape_ctx *c) { return olla_shape_set_out(c, 0, OLLA_DT_BOOL, 0, NULL); }

static olla_status rule_reduce_all_l2(olla_shape_ctx *c)
{
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), 0, NULL);
}

/* MixedPrecisionScale(scale, inputs...) -> inputs cast to 'to'. */
static olla_status rule_mixed_precision_scale(olla_shape_ctx *c)
{
    int32_t to = (int32_t)olla_shape_attr_int(c, "to", 0);
    olla_status st = OLLA_OK;
    for (int i = 0; st == OLLA_OK && i < olla_shape_n_outputs(c); i++) {
        const olla_value_type *t = olla_shape_in(c, i + 1);
        if (t)
            st = olla_shape_set_out(c, i, to ? to : t->elem_type, t->rank, t->dims);
    }
    return st;
}

static olla_status rule_det(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 2)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    return olla_shape_set_out(c, 0, elem, x->rank - 2, x->dims);
}

const olla_shape_rule_entry olla_shape_rules_training[] = {
    /* default-domain losses and misc */
    {"", "SoftmaxCrossEntropyLoss", rule_sce}, {"", "NegativeLogLikelihoodLoss", rule_nll},
    {"", "Det", rule_det},
    {MS, "SoftmaxCrossEntropyLossInternal", rule_sce},
    {MS, "SoftmaxCrossEntropyLossGrad", rule_sce_grad},
    {MS, "SoftmaxCrossEntropyLossInternalGrad", rule_sce_grad},
    {MS, "SoftmaxCrossEntropyGrad", rule_sce_grad}, {MS, "SparseSoftmaxCrossEntropyGrad", rule_sce_grad},
    /* gradients */
    {MS, "ConvGrad", rule_conv_grad}, {MS, "ReluGrad", rule_dy}, {MS, "GeluGrad", rule_dy},
    {MS, "FastGeluGrad", rule_dy}, {MS, "BiasGeluGrad_dX", rule_dy}, {MS, "BiasFastGeluGrad_dX", rule_dy},
    {MS, "QuickGeluGrad", rule_dy}, {MS, "SigmoidGrad", rule_dy}, {MS, "TanhGrad", rule_dy},
    {MS, "SoftmaxGrad", rule_dy}, {MS, "SoftmaxGrad_13", rule_dy}, {MS, "LogSoftmaxGrad", rule_dy},
    {MS, "LogSoftmaxGrad_13", rule_dy}, {MS, "DropoutGrad", rule_dy}, {MS, "BitmaskDropoutGrad", rule_dy},
    {MS, "LayerNormalizationGrad", rule_norm_grad}, {MS, "SimplifiedLayerNormalizationGrad", rule_norm_grad},
    {MS, "InvertibleLayerNormalizationGrad", rule_norm_grad},
    {MS, "BatchNormalizationGrad", rule_norm_grad}, {MS, "BatchNormInternal", rule_bn_internal},
    {MS, "GatherGrad", rule_gather_grad}, {MS, "GatherElementsGrad", rule_shape1_grad},
    {MS, "GatherNDGrad", rule_gather_nd_grad}, {MS, "SliceGrad", rule_shape1_grad},
    {MS, "MaxPoolGrad", rule_maxpool_grad}, {"", "MaxPoolGrad", rule_maxpool_grad},
    {MS, "AveragePoolGrad", rule_avgpool_grad}, {"", "AveragePoolGrad", rule_avgpool_grad},
    /* accumulators, optimizers, graph boundaries */
    {MS, "InPlaceAccumulatorV2", rule_accumulator_v2}, {MS, "InPlaceAccumulator", rule_accumulator},
    {MS, "ZeroGradient", rule_accumulator}, {MS, "AdamWOptimizer", rule_adamw},
    {MS, "SGDOptimizerV2", rule_sgd_v2}, {MS, "YieldOp", rule_yield}, {MS, "Scale", same0},
    /* contrib */
    {MS, "FusedMatMul", rule_fused_matmul}, {MS, "BiasGelu", same0}, {MS, "FastGelu", same0},
    {MS, "Gelu", same0}, {MS, "QuickGelu", same0}, {MS, "BiasSoftmax", same0},
    {MS, "LayerNormalization", rule_layer_norm}, {MS, "SimplifiedLayerNormalization", rule_layer_norm},
    {"", "SimplifiedLayerNormalization", rule_layer_norm},
    {MS, "SkipLayerNormalization", rule_skip_layer_norm},
    {MS, "SkipSimplifiedLayerNormalization", rule_skip_layer_norm},
    {MS, "BiasDropout", rule_bias_dropout}, {MS, "BitmaskDropout", rule_bitmask_dropout},
    {MS, "BitmaskBiasDropout", rule_bitmask_dropout},
    {MS, "TransposeMatMul", rule_transpose_matmul}, {MS, "ReduceSumTraining", rule_reduce_sum_training},
    {MS, "SplitTraining", rule_split_training}, {MS, "ConcatTraining", rule_concat_training},
    {MS, "IsAllFinite", rule_is_all_finite}, {MS, "ReduceAllL2", rule_reduce_all_l2},
    {MS, "MixedPrecisionScale", rule_mixed_precision_scale},
    {MS, "SoftmaxCrossEntropy", rule_sce}, {MS, "SparseSoftmaxCrossEntropy", rule_sce},
    {NULL, NULL, NULL}};
