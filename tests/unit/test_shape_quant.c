/* Shape rules of quantization (passes/shapes/shape_quant.c) and random generators
 * (passes/shapes/shape_random.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case quant_cases[] = {
    {"QuantizeLinear", 25, "x:float[1,3,3,2] s:float[3] z:uint8[3]", "", "y:uint8[1,3,3,2]"},
    {"QuantizeLinear", 25, "x:float[3,4] s:float[3,2]", "axis=i:1 block_size=i:2 output_dtype=i:5", "y:int16[3,4]"},
    {"QuantizeLinear", 13, "x:float[N,8] s:float[]", "", "y:uint8[N,8]"},
    {"QuantizeLinear", 25, "x:float[5] s:float[] z:float8e4m3fn[1]", "", "y:float8e4m3fn[5]"},
    {"DequantizeLinear", 25, "x:uint8[1,4,3,2] s:float[1,2,3,2] z:uint8[1,2,3,2]", "axis=i:1 block_size=i:2", "y:float[1,4,3,2]"},
    {"DequantizeLinear", 25, "x:int8[5] s:float16[]", "", "y:float16[5]"},
    {"DequantizeLinear", 13, "x:int8[5] s:float[]", "", "y:float[5]"},
    {"DequantizeLinear", 25, "x:int8[5] s:float[]", "output_dtype=i:16", "y:bfloat16[5]"},
    {"DynamicQuantizeLinear", 11, "x:float[3,4]", "", "y:uint8[3,4] s:float[] z:uint8[]"},
    {"QLinearMatMul", 21, "a:int8[2,2,4] as:float[1] az:int8[1] b:int8[2,4,3] bs:float[1] bz:int8[1] ys:float[1] yz:int8[1]", "", "y:int8[2,2,3]"},
    {"MatMulInteger", 10, "A:uint8[4,3] B:uint8[3,2] az:uint8[1] bz:uint8[1]", "", "Y:int32[4,2]"},
    {"MatMulInteger", 10, "A:uint8[B,1,4,3] B:uint8[5,3,2]", "", "Y:int32[B,5,4,2]"},
    {"MatMulInteger", 10, "A:uint8[2,4,3] B:uint8[5,3,2]", "", "ERROR"},
};

static const olla_shape_case random_cases[] = {
    {"RandomNormal", 22, "", "shape=ints:2,3", "y:float[2,3]"},
    {"RandomUniform", 22, "", "shape=ints:4 dtype=i:11", "y:double[4]"},
    {"RandomUniform", 22, "", "", "ERROR"},
    {"RandomUniformLike", 22, "x:float16[B,3]", "", "y:float16[B,3]"},
    {"RandomNormalLike", 22, "x:float[2]", "dtype=i:11", "y:double[2]"},
    {"Bernoulli", 22, "x:float[10]", "dtype=i:11", "y:double[10]"},
    {"Multinomial", 22, "x:float[8,5]", "sample_size=i:3", "y:int32[8,3]"},
};

OLLA_TEST(test_quant) { OLLA_SHAPE_CASES(quant_cases); }
OLLA_TEST(test_random) { OLLA_SHAPE_CASES(random_cases); }

OLLA_TEST_MAIN(OLLA_T(test_quant), OLLA_T(test_random))
