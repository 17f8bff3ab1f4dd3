/* Schema facts written by hand, in the format of schema_facts_onnx.h, for
 * the operators the onnx package used by tests/tools/schema_facts.py does not
 * know: ONNX operators of later opsets (from the onnx/defs sources of the ONNX
 * repository) and ONNX Runtime's contrib and training operators (from
 * onnxruntime/core/graph/contrib_ops sources and
 * orttraining/orttraining/core/graph/training_op_defs.cc). F is
 * float16,float,double,bfloat16 (ONNX's all_float_types_ir4). */
#define F "float16,float,double,bfloat16"
#define F3 "float16,float,double"
#define INTS "uint8,uint16,uint32,uint64,int8,int16,int32,int64"
#define NUM INTS "," F
#define ALL NUM ",bool,string"

static const schema_fact schema_facts_extra[] = {
    /* ONNX, opsets newer than the generator's onnx package */
    {"", "DeformConv", 22, "T T T T? T?", "T", "T:" F},
    {"", "Col2Im", 18, "T =int64 =int64", "T", "T:" ALL},
    {"", "Mish", 22, "T", "T", "T:" F},
    {"", "Gelu", 20, "T", "T", "T:" F},
    {"", "Swish", 24, "T", "T", "T:" F},
    {"", "BitwiseNot", 18, "T", "T", "T:" INTS},
    {"", "BitwiseAnd", 18, "T T", "T", "T:" INTS},
    {"", "BitwiseOr", 18, "T T", "T", "T:" INTS},
    {"", "BitwiseXor", 18, "T T", "T", "T:" INTS},
    {"", "CumProd", 26, "T T2", "T", "T:" NUM " T2:int32,int64"},
    {"", "BitCast", 26, "T1", "T2", "T1:" NUM ",bool T2:" NUM ",bool"},
    {"", "TensorScatter", 24, "T T =int64?", "T", "T:" ALL},
    {"", "CausalConvWithState", 27, "T T T? T?", "T T", "T:float,float16,bfloat16"},
    {"", "LinearAttention", 27, "T T T S? T? T?", "T S", "T:float16,bfloat16,float S:float16,bfloat16,float"},
    {"ai.onnx.preview", "FlexAttention", 1, "T1 T1 T1", "T1", "T1:" F},
    {"ai.onnx.ml", "TreeEnsemble", 5, "T", "T", "T:float,double,float16"},
    {"", "AffineGrid", 20, "T1 T2", "T1", "T1:" F " T2:int64"},
    {"", "ImageDecoder", 20, "T1", "T2", "T1:uint8 T2:uint8"},
    {"", "CenterCropPad", 18, "T Tind", "T", "T:" ALL " Tind:int32,int64"},
    {"", "RegexFullMatch", 20, "T1", "T2", "T1:string T2:bool"},
    {"", "StringConcat", 20, "T T", "T", "T:string"},
    {"", "StringSplit", 20, "T1", "T2 T3", "T1:string T2:string T3:int64"},
    {"", "RotaryEmbedding", 23, "T T T M?", "T", "T:float,float16,bfloat16 M:int64"},
    {"", "Attention", 23, "T1 T1 T2 U? T1? T2? =int64?", "T1 T1? T2? T1?",
     "T1:" F " T2:" F " U:bool," F},
    {"", "GroupNormalization", 21, "T T T", "T", "T:" F},
    {"", "RMSNormalization", 23, "T V", "V", "T:" F " V:" F},
    /* ONNX, where the generator's package has an older or inconsistent row:
     * GridSample-20 binds Y to X's type (GridSample-16 declared Y float
     * while its inference copied X's type); Random*Like without dtype copy
     * the input's type, so T1 is one of T2's types in a valid model */
    {"", "GridSample", 20, "T1 T2", "T1", "T1:" ALL " T2:" F},
    {"", "RandomNormalLike", 1, "T2", "T2", "T2:float16,float,double"},
    {"", "RandomUniformLike", 1, "T2", "T2", "T2:float16,float,double"},
    /* ONNX Runtime: losses */
    {"com.microsoft", "SoftmaxCrossEntropy", 1, "T T", "T T?", "T:" F},
    {"com.microsoft", "SparseSoftmaxCrossEntropy", 1, "T Tind T?", "T T?", "T:" F " Tind:int32,int64"},
    {"com.microsoft", "SoftmaxCrossEntropyGrad", 1, "T T T", "T", "T:" F},
    {"com.microsoft", "SparseSoftmaxCrossEntropyGrad", 1, "T T Tind T?", "T", "T:" F " Tind:int32,int64"},
    {"com.microsoft", "SoftmaxCrossEntropyLossGrad", 1, "T T Tind T?", "T", "T:" F " Tind:int32,int64"},
    {"com.microsoft", "SoftmaxCrossEntropyLossInternal", 1, "T Tind T? I?", "T T?",
     "T:" F " Tind:int32,int64 I:int64"},
    {"com.microsoft", "SoftmaxCrossEntropyLossInternalGrad", 1, "T T Tind T? I?", "T",
     "T:" F " Tind:int32,int64 I:int64"},
    /* ONNX Runtime: gradients */
    {"com.microsoft", "ConvGrad", 1, "T T T", "T? T? T?", "T:" F3},
    {"com.microsoft", "ReluGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "GeluGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "FastGeluGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "BiasGeluGrad_dX", 1, "T T T", "T", "T:" F},
    {"com.microsoft", "BiasFastGeluGrad_dX", 1, "T T T", "T", "T:" F},
    {"com.microsoft", "QuickGeluGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "SigmoidGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "TanhGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "SoftmaxGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "SoftmaxGrad_13", 1, "T T", "T", "T:" F},
    {"com.microsoft", "LogSoftmaxGrad", 1, "T T", "T", "T:" F},
    {"com.microsoft", "LogSoftmaxGrad_13", 1, "T T", "T", "T:" F},
    {"com.microsoft", "DropoutGrad", 1, "T T2 T1? T2?", "T", "T:" F " T1:" F " T2:bool"},
    {"com.microsoft", "BitmaskDropoutGrad", 1, "T T3 T1? T2?", "T", "T:" F " T1:" F " T2:bool T3:uint32"},
    {"com.microsoft", "LayerNormalizationGrad", 1, "T T T U U", "T T T", "T:" F " U:float,bfloat16"},
    {"com.microsoft", "SimplifiedLayerNormalizationGrad", 1, "T T T U", "T T", "T:" F " U:float"},
    {"com.microsoft", "InvertibleLayerNormalizationGrad", 1, "T T T T U", "T T T", "T:" F3 " U:float"},
    {"com.microsoft", "BatchNormalizationGrad", 1, "T T T T T", "T T T", "T:" F},
    {"com.microsoft", "BatchNormInternal", 1, "T T T U U", "T U? U? U? U?", "T:" F " U:" F},
    {"com.microsoft", "GatherGrad", 1, "I Tind T", "T", "I:int64 Tind:int32,int64 T:" F3},
    {"com.microsoft", "GatherElementsGrad", 1, "T I Tind", "T", "I:int64 Tind:int32,int64 T:" F3},
    {"com.microsoft", "GatherNDGrad", 1, "T1 Tind T", "T", "T1:int64 Tind:int64 T:" F},
    {"com.microsoft", "SliceGrad", 1, "T I Tind Tind Tind? Tind?", "T", "I:int64 Tind:int32,int64 T:" ALL},
    {"com.microsoft", "MaxPoolGrad", 1, "T I", "T", "T:" F3 " I:int64"},
    {"", "MaxPoolGrad", 9, "T I", "T", "T:" F3 " I:int64"},
    {"com.microsoft", "AveragePoolGrad", 1, "T", "T", "T:" F3},
    {"", "AveragePoolGrad", 9, "T", "T", "T:" F3},
    /* ONNX Runtime: accumulators, optimizers, graph boundaries */
    {"com.microsoft", "InPlaceAccumulator", 1, "T T_GRAD T_BOOL?", "T", "T:" F " T_GRAD:" F " T_BOOL:bool"},
    {"com.microsoft", "InPlaceAccumulatorV2", 1, "T T_GRAD T_BOOL?", "T_BOOL T?",
     "T:" F " T_GRAD:" F " T_BOOL:bool"},
    {"com.microsoft", "ZeroGradient", 1, "T1 T2", "T1", "T1:" F " T2:" ALL},
    {"com.microsoft", "AdamWOptimizer", 1, "T1 T2 S_WEIGHT S_GRAD S_MOMENT S_MOMENT T_BOOL?",
     "T2 S_WEIGHT? S_MOMENT? S_MOMENT?",
     "T1:float T2:int64 S_WEIGHT:seq(float16),seq(float),seq(double) S_GRAD:seq(float16),seq(float),seq(double) "
     "S_MOMENT:seq(float16),seq(float),seq(double) T_BOOL:bool"},
    {"com.microsoft", "SGDOptimizerV2", 1, "T1 S_WEIGHT S_GRAD T_BOOL?", "T_BOOL S_WEIGHT?",
     "T1:float T_BOOL:bool S_WEIGHT:seq(float16),seq(float),seq(double) S_GRAD:seq(float16),seq(float),seq(double)"},
    {"com.microsoft", "YieldOp", 1, "T*", "T*", "T:" ALL},
    {"com.microsoft", "Scale", 1, "T ScaleT", "T", "T:" F3 " ScaleT:" F3 ",int64,int32"},
    {"com.microsoft", "IsAllFinite", 1, "V*", "T", "V:" F " T:bool"},
    {"com.microsoft", "ReduceAllL2", 1, "TIn*", "TOut", "TIn:" F " TOut:" F},
    {"com.microsoft", "MixedPrecisionScale", 1, "ScaleT SrcT*", "DstT*", "ScaleT:" F3 " SrcT:" F3 " DstT:" F3},
    /* ONNX Runtime: ATen, whose variadic inputs and outputs are heterogeneous
     * (each of any type), so no input binds an output's type */
    {"org.pytorch.aten", "ATen", 1, "T*", "U*", "T:" ALL " U:" ALL},
    /* ONNX Runtime: contrib */
    {"com.microsoft", "FusedConv", 1, "T T T? T?", "T", "T:float16,float,double"},
    {"com.microsoft", "FusedMatMul", 1, "T T", "T", "T:" F},
    {"com.microsoft", "TransposeMatMul", 1, "T T", "T", "T:" F},
    {"com.microsoft", "BiasGelu", 1, "T T", "T", "T:" F},
    {"com.microsoft", "FastGelu", 1, "T T?", "T", "T:" F},
    {"com.microsoft", "Gelu", 1, "T", "T", "T:" F},
    {"com.microsoft", "QuickGelu", 1, "T", "T", "T:" F},
    {"com.microsoft", "BiasSoftmax", 1, "T T", "T", "T:" F},
    {"", "SimplifiedLayerNormalization", 1, "T V", "V U?", "T:" F " U:float,double V:" F},
    {"com.microsoft", "LayerNormalization", 1, "T V V?", "V U? U?", "T:" F " U:float,double,bfloat16 V:" F},
    {"com.microsoft", "SimplifiedLayerNormalization", 1, "T V", "V U?", "T:" F " U:float,double V:" F},
    {"com.microsoft", "SkipLayerNormalization", 1, "T T T T? T?", "T U? U? T?", "T:float,float16,bfloat16 U:float"},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, "T T T T?", "T U? U? T?",
     "T:float,float16,bfloat16 U:float"},
    {"com.microsoft", "BiasDropout", 1, "T T T? T1? T2?", "T T2?", "T:" F " T1:" F " T2:bool"},
    {"com.microsoft", "BitmaskDropout", 1, "T T1? T2?", "T T3?", "T:" F " T1:" F " T2:bool T3:uint32"},
    {"com.microsoft", "BitmaskBiasDropout", 1, "T T T? T1? T2?", "T T3?", "T:" F " T1:" F " T2:bool T3:uint32"},
    {"com.microsoft", "ReduceSumTraining", 1, "T =int64", "T", "T:" NUM},
    {"com.microsoft", "SplitTraining", 1, "T =int64", "T*", "T:" ALL},
    {"com.microsoft", "ConcatTraining", 1, "T*", "T Tint", "T:" ALL " Tint:int64"},
};

#undef F
#undef F3
#undef INTS
#undef NUM
#undef ALL
