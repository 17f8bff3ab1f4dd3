/* Shape rules of image, text and attention operators (passes/shapes/shape_misc.c)
 * and of the recent and auxiliary operators (passes/shapes/shape_extra.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case misc_cases[] = {
    {"GridSample", 22, "X:float[1,1,3,2] G:float[1,2,4,2]", "mode=s:cubic", "Y:float[1,1,2,4]"},
    {"GridSample", 22, "X:float[N,C,3,2,2] G:float[N,2,4,2,3]", "", "Y:float[N,C,2,4,2]"},
    {"AffineGrid", 20, "t:float[2,2,3] s:int64[4]=2,3,5,6", "", "g:float[2,5,6,2]"},
    {"AffineGrid", 20, "t:float[2,3,4] s:int64[5]", "", "g:float[2,?,?,?,3]!"},
    {"AffineGrid", 20, "t:float[N,2,3] s=shape(x:float[N,3,H,W])", "", "g:float[N,H,W,2]"},
    {"ImageDecoder", 20, "d:uint8[1058]", "pixel_format=s:Grayscale", "y:uint8[?,?,1]!"},
    {"CenterCropPad", 18, "x:float[20,8,3] s:int64[2]=10,9", "axes=ints:-3,-2", "y:float[10,9,3]"},
    {"CenterCropPad", 18, "x:float[3,20,8] s:int64[2]", "axes=ints:1,2", "y:float[3,?,?]!"},
    {"CenterCropPad", 18, "x:float[B,20,8] s=shape(z:float[B,10,?])", "", "y:float[B,10,?]!"},
    {"StringNormalizer", 10, "x:string[2]", "is_case_sensitive=i:1", "y:string[2]"},
    {"StringNormalizer", 10, "x:string[1,6]", "stopwords=strs:monday", "y:string[1,?]!"},
    {"RegexFullMatch", 20, "x:string[2,2]", "pattern=s:a+", "y:bool[2,2]"},
    {"StringConcat", 20, "x:string[3] y:string[1]", "", "z:string[3]"},
    {"StringSplit", 20, "x:string[2,2]", "maxsplit=i:2", "s:string[2,2,?]! n:int64[2,2]"},
    {"TfIdfVectorizer", 9, "X:int32[2,6]", "ngram_indexes=ints:0,1,2,3,4,5,6 mode=s:TF", "Y:float[2,7]"},
    {"RotaryEmbedding", 23, "x:float[2,4,3,8] c:float[50,4] s:float[50,4] p:int64[2,3]", "", "y:float[2,4,3,8]"},
    {"Attention", 23, "Q:float[2,3,4,8] K:float[2,3,6,8] V:float[2,3,6,10]", "", "Y:float[2,3,4,10]"},
    {"Attention", 23, "Q:float[2,4,72] K:float[2,6,24] V:float[2,6,24] m:float[4,18] pk:float[2,3,12,8] pv:float[2,3,12,8]", "kv_num_heads=i:3 q_num_heads=i:9",
     "Y:float[2,4,72] pk2:float[2,3,18,8] pv2:float[2,3,18,8] qk:float[2,9,4,18]"},
    {"Attention", 23, "Q:float[B,4,S,8] K:float[B,4,S,8] V:float[B,4,S,8]", "", "Y:float[B,4,S,8]"},
};

static const olla_shape_case extra_cases[] = {
    {"BitCast", 26, "x:float[2,3]", "to=i:6", "y:int32[2,3]"},
    {"BitCast", 26, "x:float[2,3]", "", "ERROR"},
    {"TensorScatter", 24, "c:float[2,1,4,5] u:float[2,1,1,5] w:int64[2]", "", "y:float[2,1,4,5]"},
    {"CausalConvWithState", 27, "x:float[2,4,8] w:float[4,1,4]", "", "y:float[2,4,8] st:float[2,4,3]"},
    {"CausalConvWithState", 27, "x:float16[2,4,1] w:float16[4,1,4] b:float16[4] p:float16[2,4,3]", "", "y:float16[2,4,1] st:float16[2,4,3]"},
    {"LinearAttention", 27, "q:float[2,4,64] k:float[2,4,8] v:float[2,4,8]", "kv_num_heads=i:1 q_num_heads=i:8", "y:float[2,4,64] st:float[2,1,8,8]"},
    {"ai.onnx.preview:FlexAttention", 1, "Q:float[2,8,4,16] K:float[2,2,6,16] V:float[2,2,6,32]", "", "Y:float[2,8,4,32]"},
    {"ai.onnx.preview.training:Adam", 1, "R:float[] T:int64[] X1:float[1] X2:float[2] G1:float[1] G2:float[2] V1:float[1] V2:float[2] H1:float[1] H2:float[2]", "",
     "X1n:float[1] X2n:float[2] V1n:float[1] V2n:float[2] H1n:float[1] H2n:float[2]"},
    {"ai.onnx.preview.training:Adagrad", 1, "R:float[] T:int64[] X:float[3] G:float[3] H:float[3]", "", "Xn:float[3] Hn:float[3]"},
    {"ai.onnx.preview.training:Momentum", 1, "R:float[] T:int64[] X:float[3] G:float[3]", "", "ERROR"},
    {"ai.onnx.ml:ArrayFeatureExtractor", 1, "x:float[3,4] y:int64[2]", "", "z:float[3,2]"},
    {"ai.onnx.ml:LabelEncoder", 4, "x:string[5]", "keys_strings=strs:a,b values_int64s=ints:0,1", "y:int64[5]"},
    {"ai.onnx.ml:TreeEnsemble", 5, "x:double[3,2]", "n_targets=i:2", "y:double[3,2]"},
    {"ai.onnx.ml:Scaler", 1, "x:int64[N,3]", "scale=floats:2,2,2", "y:float[N,3]"},
    {"ai.onnx.ml:CategoryMapper", 1, "x:string[4]", "", "y:int64[4]"},
    {"ai.onnx.ml:LinearRegressor", 1, "x:float[5,3]", "targets=i:2", "y:float[5,2]"},
    {"ai.onnx.ml:TreeEnsembleRegressor", 3, "x:float[7,3]", "n_targets=i:3", "y:float[7,3]"},
    {"ai.onnx.ml:FeatureVectorizer", 1, "a:float[4,2] b:int64[4,3]", "inputdimensions=ints:2,3", "y:float[4,5]"},
    {"ai.onnx.ml:OneHotEncoder", 1, "x:int64[4,2]", "cats_int64s=ints:1,2,5", "y:float[4,2,3]"},
};

OLLA_TEST(test_misc) { OLLA_SHAPE_CASES(misc_cases); }
OLLA_TEST(test_extra) { OLLA_SHAPE_CASES(extra_cases); }

OLLA_TEST_MAIN(OLLA_T(test_misc), OLLA_T(test_extra))
