/* olla-onnx: the buffer-sharing rules of ONNX Runtime's CPU kernels.
 *
 * Source: microsoft/onnxruntime main at cf5e9eba49b07b4b4ab71ed7903cded9f1446690
 * (2026-08-07, VERSION_NUMBER 1.29.0), the kernel registrations
 * (ONNX_CPU_OPERATOR_*KERNEL, ONNX_OPERATOR_*KERNEL_EX with
 * kCpuExecutionProvider) of onnxruntime/core/providers/cpu,
 * onnxruntime/contrib_ops/cpu and orttraining/orttraining/training_ops/cpu,
 * cross-checked against the registries that list them
 * (cpu_execution_provider.cc, cpu_contrib_kernels.cc, cpu_training_kernels.cc).
 * The same declarations stand at 1.28.0 (main of 2026-06-19) except that the
 * default-domain Trilu then lacked int32. onnxruntime-node 1.30.0 contains the
 * opset 24-26 kernels listed here (TensorScatter, BitCast).
 *
 * How ORT's allocation planner (onnxruntime/core/framework/allocation_planner.cc,
 * FindReusableInput) uses each kind, one output at a time in execution order:
 * - Alias(i, o) and VariadicAlias: output o always takes input i's buffer, when
 *   input i exists, whatever else reads it. Only a graph output (own buffer)
 *   or a producer with external outputs changes that.
 * - MayInplace(i, o): output o takes input i's buffer when the use count of
 *   that buffer is 1 (no pending reader other than this node's one read; graph
 *   inputs, initializers, outer-scope values and graph outputs carry an extra
 *   use, so they never qualify) and SameSize holds (same element size, same
 *   static shape, no strings). Otherwise the output is planned as usual.
 *
 * One row per registration and opset range. Typed registrations of the same
 * range (Relu 14 for float, double, int8, int32) are one row whose elem_types
 * holds every type; elem_types names the type of the node's output 0 that
 * selects the registration. Where one range has a sharing and a non-sharing
 * typed kernel (Softmax, LogSoftmax: only float shares) only the sharing types
 * are set.
 *
 * Left out, because this machine's builds (x86-64, standard CPU package, or
 * the training package) do not register them:
 * - ARM64-only fp16 kernels (MLAS_F16VEC_INTRINSICS_SUPPORTED): Relu fp16
 *   6-12, 13, 14+ and LeakyRelu fp16 6-15, 16+, MayInplace(0, 0).
 * - com.microsoft NhwcFusedConv float (USE_KLEIDIAI, ARM), MayInplace(3, 0).
 * - com.microsoft AdasumAllReduce (training with USE_MPI), VariadicAlias(0, 0).
 * - com.microsoft PythonOp/PythonOpGrad (training with torch interop): their
 *   aliases come from the node's tensor_reuse_map attribute, not the kernel.
 * Training-only rules (sources under orttraining/) exist only in ORT's
 * training builds; the inference packages (onnxruntime-node) have none of
 * those kernels. No CPU gradient kernel (ReluGrad, GeluGrad, SoftmaxGrad, ...)
 * declares MayInplace; their CUDA kernels do, and are not listed. */
#include "passes/runtime/olla_sharing.h"

#include <string.h>

#include "onnx.pb-c.h"

#define CPU_DIR "onnxruntime/core/providers/cpu/"
#define CONTRIB_DIR "onnxruntime/contrib_ops/cpu/"
#define TRAIN_DIR "orttraining/orttraining/training_ops/cpu/"

#define SRC_ACTIVATIONS CPU_DIR "activation/activations.cc"
#define SRC_BATCH_NORM CPU_DIR "nn/batch_norm.cc"
#define SRC_BITCAST CPU_DIR "tensor/bitcast_op.cc"
#define SRC_CAST CPU_DIR "tensor/cast_op.cc"
#define SRC_CLIP CPU_DIR "math/clip.cc"
#define SRC_FLATTEN CPU_DIR "nn/flatten.cc"
#define SRC_IDENTITY CPU_DIR "tensor/identity_op.cc"
#define SRC_OPTIONAL CPU_DIR "optional/optional_ops.cc"
#define SRC_RESHAPE CPU_DIR "tensor/reshape.cc"
#define SRC_SCATTER CPU_DIR "tensor/scatter.cc"
#define SRC_SHRINK CPU_DIR "nn/shrink.cc"
#define SRC_SOFTMAX CPU_DIR "math/softmax.cc"
#define SRC_SQUEEZE CPU_DIR "tensor/squeeze.cc"
#define SRC_STFT CPU_DIR "signal/dft.cc"
#define SRC_TENSORSCATTER CPU_DIR "llm/tensorscatter.cc"
#define SRC_TRILU CPU_DIR "tensor/trilu.cc"
#define SRC_UNSQUEEZE CPU_DIR "tensor/unsqueeze.cc"
#define SRC_WINDOWS CPU_DIR "signal/window_functions.cc"
#define SRC_ML_NORMALIZER CPU_DIR "ml/normalizer.cc"
#define SRC_ML_SCALER CPU_DIR "ml/scaler.cc"
#define SRC_ML_TREE_ENSEMBLE CPU_DIR "ml/tree_ensemble.cc"
#define SRC_ML_TREE_REGRESSOR CPU_DIR "ml/treeregressor.cc"
#define SRC_MS_ACTIVATIONS CONTRIB_DIR "activations.cc"
#define SRC_MS_DMMHA CONTRIB_DIR "bert/decoder_masked_multihead_attention.cc"
#define SRC_MS_EXPAND_DIMS CONTRIB_DIR "expand_dims.cc"
#define SRC_MS_FUSED_CONV CONTRIB_DIR "fused_conv.cc"
#define SRC_MS_MOE CONTRIB_DIR "moe/moe_cpu.cc"
#define SRC_MS_NCHWC CONTRIB_DIR "nchwc_ops.cc"
#define SRC_MS_SAMPLE CONTRIB_DIR "sample.cc"
#define SRC_TR_ADAMW TRAIN_DIR "optimizer/adamw/adamw.cc"
#define SRC_TR_BN_INTERNAL TRAIN_DIR "nn/batch_norm_internal.cc"
#define SRC_TR_CLIP_GRAD_NORM TRAIN_DIR "optimizer/clip_grad_norm/clip_grad_norm.cc"
#define SRC_TR_GIST TRAIN_DIR "gist/gistencode_op.cc"
#define SRC_TR_GRADIENT_CONTROL TRAIN_DIR "optimizer/gradient_control.cc"
#define SRC_TR_GROUP TRAIN_DIR "controlflow/group.cc"
#define SRC_TR_OPTIMIZERS TRAIN_DIR "optimizer/optimizers.cc"
#define SRC_TR_RECORD TRAIN_DIR "controlflow/record.cc"
#define SRC_TR_SGD TRAIN_DIR "optimizer/sgd/sgd.cc"
#define SRC_TR_WAIT TRAIN_DIR "controlflow/wait.cc"

/* Element-type masks of output 0, from the registrations' type constraints. */
#define T_(name) (UINT64_C(1) << ONNX__TENSOR_PROTO__DATA_TYPE__##name)
#define ANY_TYPE 0
#define F32 T_(FLOAT)
#define F32_F64 (T_(FLOAT) | T_(DOUBLE))
#define INTS_8_TO_64 (T_(INT8) | T_(INT16) | T_(INT32) | T_(INT64))
#define UINTS_8_TO_64 (T_(UINT8) | T_(UINT16) | T_(UINT32) | T_(UINT64))
/* Relu 14: float, double, int8, int32. */
#define RELU14_TYPES (F32_F64 | T_(INT8) | T_(INT32))
/* Clip 12 and 13: float, float16, double, int8, uint8, int32, uint32, int64, uint64. */
#define CLIP12_TYPES \
    (F32_F64 | T_(FLOAT16) | T_(INT8) | T_(UINT8) | T_(INT32) | T_(UINT32) | T_(INT64) | T_(UINT64))
/* element_type_lists::AllNumeric (Shrink). */
#define NUMERIC_TYPES (F32_F64 | INTS_8_TO_64 | UINTS_8_TO_64 | T_(FLOAT16) | T_(BFLOAT16))
/* BitCast T2, same as its T1. */
#define BITCAST_TYPES (F32_F64 | INTS_8_TO_64 | UINTS_8_TO_64 | T_(FLOAT16) | T_(BFLOAT16))
/* Window functions T2, MelWeightMatrix T3: the output type. */
#define WINDOW_TYPES (F32_F64 | INTS_8_TO_64 | UINTS_8_TO_64)
#define TRILU14_TYPES (F32_F64 | T_(INT32) | T_(INT64) | T_(BOOL))
#define TRILU_MS_TYPES (F32_F64 | T_(INT64))

#define DEFAULT_DOMAIN ""
#define ML_DOMAIN "ai.onnx.ml"
#define MS_DOMAIN "com.microsoft"
#define NCHWC_DOMAIN "com.microsoft.nchwc"

/* One registration: domain, op, since, last (0 = open), input, output, types, source. */
#define ALIAS(d, op, since, last, in, out, types, src) {d, op, since, last, OLLA_SHARE_ALIAS, in, out, 0, types, src}
#define INPLACE(d, op, since, last, in, out, types, src) \
    {d, op, since, last, OLLA_SHARE_INPLACE, in, out, 0, types, src}
#define VARIADIC_ALIAS(d, op, since, last, in, out, types, src) \
    {d, op, since, last, OLLA_SHARE_ALIAS, in, out, 1, types, src}

/* Sorted by (domain, op_type, since_version, kind, output, input). */
static const olla_share_rule share_rules[] = {
    /* Default ONNX domain. BatchNormalization aliases the running mean and
     * variance (outputs 1, 2, training mode only) to inputs 3, 4; 7-8 does not. */
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 9, 13, 3, 1, F32_F64, SRC_BATCH_NORM),
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 9, 13, 4, 2, F32_F64, SRC_BATCH_NORM),
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 14, 14, 3, 1, F32_F64, SRC_BATCH_NORM),
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 14, 14, 4, 2, F32_F64, SRC_BATCH_NORM),
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 15, 0, 3, 1, F32_F64, SRC_BATCH_NORM),
    ALIAS(DEFAULT_DOMAIN, "BatchNormalization", 15, 0, 4, 2, F32_F64, SRC_BATCH_NORM),
    INPLACE(DEFAULT_DOMAIN, "BitCast", 26, 0, 0, 0, BITCAST_TYPES, SRC_BITCAST),
    /* Window functions declare it on their size input (a scalar). */
    INPLACE(DEFAULT_DOMAIN, "BlackmanWindow", 17, 0, 0, 0, WINDOW_TYPES, SRC_WINDOWS),
    /* Cast: every source and target type; ORT's size check decides. */
    INPLACE(DEFAULT_DOMAIN, "Cast", 6, 12, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 13, 18, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 19, 20, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 21, 22, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 23, 23, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 24, 24, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Cast", 25, 0, 0, 0, ANY_TYPE, SRC_CAST),
    INPLACE(DEFAULT_DOMAIN, "Celu", 12, 0, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Clip", 6, 10, 0, 0, F32, SRC_CLIP),
    INPLACE(DEFAULT_DOMAIN, "Clip", 11, 11, 0, 0, F32, SRC_CLIP),
    INPLACE(DEFAULT_DOMAIN, "Clip", 12, 12, 0, 0, CLIP12_TYPES, SRC_CLIP),
    INPLACE(DEFAULT_DOMAIN, "Clip", 13, 0, 0, 0, CLIP12_TYPES, SRC_CLIP),
    INPLACE(DEFAULT_DOMAIN, "Elu", 6, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Elu", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 1, 8, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 9, 10, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 11, 12, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 13, 20, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 21, 22, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 23, 23, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 24, 24, 0, 0, ANY_TYPE, SRC_FLATTEN),
    ALIAS(DEFAULT_DOMAIN, "Flatten", 25, 0, 0, 0, ANY_TYPE, SRC_FLATTEN),
    INPLACE(DEFAULT_DOMAIN, "HammingWindow", 17, 0, 0, 0, WINDOW_TYPES, SRC_WINDOWS),
    INPLACE(DEFAULT_DOMAIN, "HannWindow", 17, 0, 0, 0, WINDOW_TYPES, SRC_WINDOWS),
    INPLACE(DEFAULT_DOMAIN, "HardSigmoid", 6, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "HardSigmoid", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    /* Identity only; Dropout 7-11 shares the kernel class but not the alias. */
    ALIAS(DEFAULT_DOMAIN, "Identity", 1, 12, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 13, 13, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 14, 15, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 16, 18, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 19, 20, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 21, 22, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 23, 23, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 24, 24, 0, 0, ANY_TYPE, SRC_IDENTITY),
    ALIAS(DEFAULT_DOMAIN, "Identity", 25, 0, 0, 0, ANY_TYPE, SRC_IDENTITY),
    INPLACE(DEFAULT_DOMAIN, "LeakyRelu", 6, 15, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "LeakyRelu", 16, 0, 0, 0, F32, SRC_ACTIVATIONS),
    /* LogSoftmax and Softmax: the float kernels only; double is not in place. */
    INPLACE(DEFAULT_DOMAIN, "LogSoftmax", 1, 10, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "LogSoftmax", 11, 12, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "LogSoftmax", 13, 0, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "MelWeightMatrix", 17, 0, 0, 0, WINDOW_TYPES, SRC_WINDOWS),
    ALIAS(DEFAULT_DOMAIN, "Optional", 15, 0, 0, 0, ANY_TYPE, SRC_OPTIONAL),
    ALIAS(DEFAULT_DOMAIN, "OptionalGetElement", 15, 17, 0, 0, ANY_TYPE, SRC_OPTIONAL),
    ALIAS(DEFAULT_DOMAIN, "OptionalGetElement", 18, 0, 0, 0, ANY_TYPE, SRC_OPTIONAL),
    /* Pre-opset-10 experimental ONNX ops, registered by the contrib ops. */
    INPLACE(DEFAULT_DOMAIN, "ParametricSoftplus", 1, 0, 0, 0, F32, SRC_MS_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Relu", 6, 12, 0, 0, F32_F64, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Relu", 13, 13, 0, 0, F32_F64, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Relu", 14, 0, 0, 0, RELU14_TYPES, SRC_ACTIVATIONS),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 1, 4, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 5, 12, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 13, 13, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 14, 18, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 19, 20, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 21, 22, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 23, 23, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 24, 24, 0, 0, ANY_TYPE, SRC_RESHAPE),
    ALIAS(DEFAULT_DOMAIN, "Reshape", 25, 0, 0, 0, ANY_TYPE, SRC_RESHAPE),
    INPLACE(DEFAULT_DOMAIN, "STFT", 17, 0, 0, 0, F32_F64, SRC_STFT),
    INPLACE(DEFAULT_DOMAIN, "ScaledTanh", 1, 0, 0, 0, F32, SRC_MS_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Scatter", 9, 10, 0, 0, ANY_TYPE, SRC_SCATTER),
    INPLACE(DEFAULT_DOMAIN, "ScatterElements", 11, 12, 0, 0, ANY_TYPE, SRC_SCATTER),
    INPLACE(DEFAULT_DOMAIN, "ScatterElements", 13, 15, 0, 0, ANY_TYPE, SRC_SCATTER),
    INPLACE(DEFAULT_DOMAIN, "ScatterElements", 16, 17, 0, 0, ANY_TYPE, SRC_SCATTER),
    INPLACE(DEFAULT_DOMAIN, "ScatterElements", 18, 0, 0, 0, ANY_TYPE, SRC_SCATTER),
    INPLACE(DEFAULT_DOMAIN, "Selu", 6, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Selu", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Shrink", 9, 0, 0, 0, NUMERIC_TYPES, SRC_SHRINK),
    INPLACE(DEFAULT_DOMAIN, "Sigmoid", 6, 12, 0, 0, F32_F64, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Sigmoid", 13, 0, 0, 0, F32_F64, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Softmax", 1, 10, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "Softmax", 11, 12, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "Softmax", 13, 0, 0, 0, F32, SRC_SOFTMAX),
    INPLACE(DEFAULT_DOMAIN, "Softplus", 1, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Softplus", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Softsign", 1, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Softsign", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 1, 10, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 11, 12, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 13, 20, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 21, 22, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 23, 23, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 24, 24, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Squeeze", 25, 0, 0, 0, ANY_TYPE, SRC_SQUEEZE),
    INPLACE(DEFAULT_DOMAIN, "Tanh", 6, 12, 0, 0, F32_F64, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Tanh", 13, 0, 0, 0, F32_F64, SRC_ACTIVATIONS),
    /* Every fixed-size type. */
    INPLACE(DEFAULT_DOMAIN, "TensorScatter", 24, 0, 0, 0, ANY_TYPE, SRC_TENSORSCATTER),
    INPLACE(DEFAULT_DOMAIN, "ThresholdedRelu", 1, 9, 0, 0, F32, SRC_MS_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "ThresholdedRelu", 10, 21, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "ThresholdedRelu", 22, 0, 0, 0, F32, SRC_ACTIVATIONS),
    INPLACE(DEFAULT_DOMAIN, "Trilu", 14, 0, 0, 0, TRILU14_TYPES, SRC_TRILU),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 1, 10, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 11, 12, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 13, 20, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 21, 22, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 23, 23, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 24, 24, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),
    ALIAS(DEFAULT_DOMAIN, "Unsqueeze", 25, 0, 0, 0, ANY_TYPE, SRC_UNSQUEEZE),

    /* ai.onnx.ml. The registrations are typed on input X; Normalizer, Scaler
     * and TreeEnsembleRegressor always output float, TreeEnsemble outputs X's
     * type. ORT's size check rules out the wider inputs. */
    INPLACE(ML_DOMAIN, "Normalizer", 1, 0, 0, 0, F32, SRC_ML_NORMALIZER),
    INPLACE(ML_DOMAIN, "Scaler", 1, 0, 0, 0, F32, SRC_ML_SCALER),
    INPLACE(ML_DOMAIN, "TreeEnsemble", 5, 0, 0, 0, F32_F64, SRC_ML_TREE_ENSEMBLE),
    INPLACE(ML_DOMAIN, "TreeEnsembleRegressor", 1, 2, 0, 0, F32, SRC_ML_TREE_REGRESSOR),
    INPLACE(ML_DOMAIN, "TreeEnsembleRegressor", 3, 0, 0, 0, F32, SRC_ML_TREE_REGRESSOR),

    /* com.microsoft: contrib ops, then the training ops (training builds only).
     * AdamOptimizer updates step, weights, gradients and moments in place;
     * output 0 (the new step) is int64. */
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 1, 0, T_(INT64), SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 4, 1, T_(INT64), SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 5, 2, T_(INT64), SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 2, 3, T_(INT64), SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 3, 4, T_(INT64), SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "AdamOptimizer", 1, 0, 6, 5, T_(INT64), SRC_TR_OPTIMIZERS),
    /* AdamWOptimizer: sequences of weights and moments updated in place. */
    ALIAS(MS_DOMAIN, "AdamWOptimizer", 1, 0, 2, 1, ANY_TYPE, SRC_TR_ADAMW),
    ALIAS(MS_DOMAIN, "AdamWOptimizer", 1, 0, 4, 2, ANY_TYPE, SRC_TR_ADAMW),
    ALIAS(MS_DOMAIN, "AdamWOptimizer", 1, 0, 5, 3, ANY_TYPE, SRC_TR_ADAMW),
    ALIAS(MS_DOMAIN, "BatchNormInternal", 1, 0, 3, 1, F32, SRC_TR_BN_INTERNAL),
    ALIAS(MS_DOMAIN, "BatchNormInternal", 1, 0, 4, 2, F32, SRC_TR_BN_INTERNAL),
    /* Past key and value (inputs 5, 6) into present key and value (outputs 1, 2). */
    INPLACE(MS_DOMAIN, "DecoderMaskedMultiHeadAttention", 1, 0, 5, 1, F32, SRC_MS_DMMHA),
    INPLACE(MS_DOMAIN, "DecoderMaskedMultiHeadAttention", 1, 0, 6, 2, F32, SRC_MS_DMMHA),
    ALIAS(MS_DOMAIN, "ExpandDims", 1, 0, 0, 0, ANY_TYPE, SRC_MS_EXPAND_DIMS),
    /* The fused "sum" input Z (input 3) into Y. */
    INPLACE(MS_DOMAIN, "FusedConv", 1, 0, 3, 0, F32, SRC_MS_FUSED_CONV),
    ALIAS(MS_DOMAIN, "GistBinarizeEncoder", 1, 0, 0, 0, ANY_TYPE, SRC_TR_GIST),
    ALIAS(MS_DOMAIN, "InPlaceAccumulator", 1, 0, 0, 0, F32, SRC_TR_GRADIENT_CONTROL),
    /* The accumulation buffer (input 0) is output 1; output 0 is the flag. */
    ALIAS(MS_DOMAIN, "InPlaceAccumulatorV2", 1, 0, 0, 1, ANY_TYPE, SRC_TR_GRADIENT_CONTROL),
    ALIAS(MS_DOMAIN, "InplaceClipGradNorm", 1, 0, 0, 0, ANY_TYPE, SRC_TR_CLIP_GRAD_NORM),
    INPLACE(MS_DOMAIN, "MoE", 1, 0, 0, 0, F32, SRC_MS_MOE),
    VARIADIC_ALIAS(MS_DOMAIN, "PassThrough", 1, 0, 0, 0, ANY_TYPE, SRC_TR_GROUP),
    /* RecordEvent and WaitEvent: input 0 is the event id, output i is input i + 1. */
    VARIADIC_ALIAS(MS_DOMAIN, "RecordEvent", 1, 0, 1, 0, ANY_TYPE, SRC_TR_RECORD),
    ALIAS(MS_DOMAIN, "SGDOptimizer", 1, 0, 1, 0, F32, SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "SGDOptimizer", 1, 0, 2, 1, F32, SRC_TR_OPTIMIZERS),
    ALIAS(MS_DOMAIN, "SGDOptimizerV2", 1, 0, 1, 1, ANY_TYPE, SRC_TR_SGD),
    /* An internal example kernel. */
    INPLACE(MS_DOMAIN, "SampleOp", 1, 0, 0, 0, F32, SRC_MS_SAMPLE),
    INPLACE(MS_DOMAIN, "Trilu", 1, 0, 0, 0, TRILU_MS_TYPES, SRC_TRILU),
    VARIADIC_ALIAS(MS_DOMAIN, "WaitEvent", 1, 0, 1, 0, ANY_TYPE, SRC_TR_WAIT),
    ALIAS(MS_DOMAIN, "ZeroGradient", 1, 0, 0, 0, F32, SRC_TR_GRADIENT_CONTROL),

    /* com.microsoft.nchwc (made by ORT's layout optimizer): the "sum" input. */
    INPLACE(NCHWC_DOMAIN, "Conv", 1, 0, 3, 0, F32, SRC_MS_NCHWC),
};

const olla_share_rule *olla_share_rules(size_t *count)
{
    *count = sizeof share_rules / sizeof share_rules[0];
    return share_rules;
}

static const char *canonical_domain(const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        return DEFAULT_DOMAIN;
    return domain;
}

static int rule_covers(const olla_share_rule *r, int64_t opset, int32_t out_elem_type)
{
    if (opset < r->since_version || (r->last_version != 0 && opset > r->last_version))
        return 0;
    if (r->elem_types == 0 || out_elem_type == 0)
        return 1;
    if (out_elem_type < 0 || out_elem_type > 63)
        return 0;
    return (r->elem_types >> out_elem_type) & 1;
}

/* Index of the first rule of (domain, op_type) in the sorted table, or the
 * table's length when there is none. */
static size_t first_rule_of(const char *domain, const char *op_type)
{
    size_t lo = 0, hi = sizeof share_rules / sizeof share_rules[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(share_rules[mid].domain, domain);
        if (c == 0)
            c = strcmp(share_rules[mid].op_type, op_type);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int olla_share_rules_for(const char *domain, const char *op_type, int64_t opset, int32_t out_elem_type,
                         const olla_share_rule **out, int max)
{
    if (!op_type)
        return 0;
    domain = canonical_domain(domain);
    size_t n = sizeof share_rules / sizeof share_rules[0];
    int found = 0;
    for (size_t i = first_rule_of(domain, op_type); i < n; i++) {
        const olla_share_rule *r = &share_rules[i];
        if (strcmp(r->domain, domain) != 0 || strcmp(r->op_type, op_type) != 0)
            break;
        if (!rule_covers(r, opset, out_elem_type))
            continue;
        if (out && found < max)
            out[found] = r;
        found++;
    }
    return found;
}

int olla_share_rule_input(const olla_share_rule *r, int output)
{
    if (!r->variadic)
        return output == r->output ? r->input : -1;
    return output >= r->output ? r->input + (output - r->output) : -1;
}
