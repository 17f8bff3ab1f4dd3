/* olla-onnx: the operators that may be recomputed (olla_recompute.h). Three
 * sorted tables of names, one per domain, searched with bsearch; anything
 * not listed is denied. A name is listed only when every version of the
 * operator is a deterministic function of its inputs and attributes on the
 * CPU kernels our runtimes have (ONNX Runtime runs one kernel the same way
 * for the same inputs, single- or multi-threaded). */
#include "passes/runtime/olla_recompute.h"

#include <stdlib.h>
#include <string.h>

/* ONNX's default domain. Not here: Bernoulli, Dropout, Multinomial,
 * RandomNormal(Like), RandomUniform(Like) (random); If, Loop, Scan
 * (control flow); Constant (never runs: a constant); the Sequence and
 * Optional operators; StringNormalizer and the other string operators. */
static const char *const onnx_ops[] = {
    "Abs", "Acos", "Acosh", "Add", "AffineGrid", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
    "Attention", "AveragePool", "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr",
    "BitwiseXor", "BlackmanWindow", "Cast", "CastLike", "Ceil", "Celu", "CenterCropPad", "Clip", "Col2Im",
    "Compress", "Concat", "ConstantOfShape", "Conv", "ConvInteger", "ConvTranspose", "Cos", "Cosh", "CumSum",
    "DFT", "DepthToSpace", "DequantizeLinear", "Det", "Div", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal",
    "Erf", "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gelu",
    "Gemm", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample",
    "GroupNormalization", "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "LogSoftmax", "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max", "MaxPool",
    "MaxPoolGrad", "MaxRoiPool", "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min",
    "Mish", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss", "Not", "OneHot", "Or", "PRelu", "Pad", "Pow",
    "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RMSNormalization", "RNN", "Range", "Reciprocal",
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
    "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign",
    "RotaryEmbedding", "Round", "STFT", "Scatter", "ScatterElements", "ScatterND", "Selu", "Shape", "Shrink",
    "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss", "Softplus",
    "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Swish", "Tan", "Tanh",
    "ThresholdedRelu", "Tile", "Transpose", "Trilu", "Unsqueeze", "Upsample", "Where", "Xor",
    /* MaxPoolGrad and AveragePoolGrad sit in this domain in ONNX Runtime's training builds */
};

/* ONNX Runtime's com.microsoft (contrib and training). Not here:
 * AdamOptimizer, AdamWOptimizer, SGDOptimizer(V2), LambOptimizer,
 * InPlaceAccumulator(V2), ZeroGradient, InplaceClipGradNorm (they update
 * state); BitmaskDropout, BiasDropout, Dropout and the other random ops;
 * PassThrough, RecordEvent, WaitEvent, YieldOp, PythonOp (side effects,
 * synchronisation or host code); the communication ops; BatchNormInternal
 * (ONNX Runtime writes the updated running statistics into its
 * running_mean and running_var inputs when those outputs are not asked
 * for, as a copy's never are: measured, the original's statistics then
 * hold the update twice). */
static const char *const ms_ops[] = {
    "AveragePoolGrad", "BatchNormalizationGrad", "BiasAdd", "BiasFastGeluGrad_dX", "BiasGelu",
    "BiasGeluGrad_dX", "BiasSoftmax", "BroadcastGradientArgs", "ConcatTraining", "ConvGrad", "ConvTransposeGrad",
    "DivGrad", "DropoutGrad", "ExpandDims", "FastGelu", "FastGeluGrad", "FusedConv", "FusedGemm", "FusedMatMul",
    "GatherElementsGrad", "GatherGrad", "GatherNDGrad", "Gelu", "GeluGrad", "InvertibleLayerNormalizationGrad",
    "LayerNormalizationGrad", "LogSoftmaxGrad", "LogSoftmaxGrad_13", "MaxPoolGrad", "QuickGelu", "QuickGeluGrad",
    "ReduceSumTraining", "ReluGrad", "RotaryEmbedding", "Scale", "SigmoidGrad", "SimplifiedLayerNormalization",
    "SimplifiedLayerNormalizationGrad", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
    "SliceGrad", "SoftmaxCrossEntropy", "SoftmaxCrossEntropyGrad", "SoftmaxCrossEntropyLossGrad",
    "SoftmaxCrossEntropyLossInternal", "SoftmaxCrossEntropyLossInternalGrad", "SoftmaxGrad", "SoftmaxGrad_13",
    "SparseSoftmaxCrossEntropy", "SparseSoftmaxCrossEntropyGrad", "SplitGrad", "TanhGrad", "TransposeMatMul",
};

/* PyTorch's ATen fallback, by the node's `operator` attribute. Not here:
 * empty, empty_like (uninitialised bytes), bernoulli, native_dropout,
 * dropout, multinomial, normal, uniform, rand, randn, randint, randperm. */
static const char *const aten_ops[] = {
    "_adaptive_avg_pool2d",  "_adaptive_avg_pool2d_backward", "adaptive_avg_pool2d", "argmax", "avg_pool2d",
    "avg_pool2d_backward",   "baddbmm",         "clamp",       "copy",        "diagonal",  "diagonal_backward",
    "embedding",             "embedding_backward", "embedding_dense_backward", "fill", "gelu", "gelu_backward",
    "group_norm",            "hardswish",       "hardswish_backward", "hardtanh", "hardtanh_backward", "max",
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "min", "mish", "mse_loss",
    "mse_loss_backward",     "native_group_norm", "native_group_norm_backward", "nll_loss_backward",
    "nll_loss_forward",      "numpy_T",         "ones_like",   "silu",        "silu_backward", "unfold",
    "unfold_backward",       "upsample_bilinear2d", "upsample_bilinear2d_backward", "upsample_nearest2d",
    "upsample_nearest2d_backward", "zero", "zeros_like",
};

static int by_name(const void *key, const void *item)
{
    return strcmp((const char *)key, *(const char *const *)item);
}

static int listed(const char *name, const char *const *table, size_t n)
{
    return name && bsearch(name, table, n, sizeof *table, by_name) != NULL;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int olla_op_recomputable(const char *domain, const char *op_type, const char *aten_operator)
{
    if (!op_type)
        return 0;
    if (!domain || !*domain || strcmp(domain, "ai.onnx") == 0)
        return listed(op_type, onnx_ops, COUNT(onnx_ops)) || strcmp(op_type, "AveragePoolGrad") == 0;
    if (strcmp(domain, "com.microsoft") == 0)
        return listed(op_type, ms_ops, COUNT(ms_ops));
    if (strcmp(domain, "org.pytorch.aten") == 0 && strcmp(op_type, "ATen") == 0 && aten_operator) {
        /* "fill.Scalar", "max.dim": the overload name does not change purity */
        char base[64];
        size_t len = strcspn(aten_operator, ".");
        if (len >= sizeof base)
            return 0;
        memcpy(base, aten_operator, len);
        base[len] = '\0';
        return listed(base, aten_ops, COUNT(aten_ops));
    }
    return 0;
}

/* Operators with optional trailing outputs, and how many lead. */
static const struct {
    const char *domain, *op_type;
    int required;
} optional_tail[] = {
    {"", "BatchNormalization", 1},       {"", "GRU", 0},  {"", "LSTM", 0},  {"", "LayerNormalization", 1},
    {"", "MaxPool", 1},                  {"", "RNN", 0},  {"com.microsoft", "BatchNormInternal", 1},
    {"com.microsoft", "SimplifiedLayerNormalization", 1}, {"com.microsoft", "SkipLayerNormalization", 1},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1},
};

int olla_op_required_outputs(const char *domain, const char *op_type, int n_outputs)
{
    const char *d = !domain || strcmp(domain, "ai.onnx") == 0 ? "" : domain;
    for (size_t i = 0; op_type && i < COUNT(optional_tail); i++)
        if (strcmp(optional_tail[i].domain, d) == 0 && strcmp(optional_tail[i].op_type, op_type) == 0)
            return optional_tail[i].required < n_outputs ? optional_tail[i].required : n_outputs;
    return n_outputs;
}
