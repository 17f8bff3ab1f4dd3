/* Shape rules of data-dependent operators (passes/shapes/shape_datadep.c): sizes
 * computed when the deciding value is a constant, unknown with a reason
 * otherwise. */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case datadep_cases[] = {
    {"TopK", 11, "X:float[3,4] K:int64[1]=3", "axis=i:1", "V:float[3,3] I:int64[3,3]"},
    {"TopK", 24, "X:float[B,10] K:int64[1]=2", "", "V:float[B,2] I:int64[B,2]"},
    {"TopK", 24, "X:float[3,4] K:int64[1]", "", "V:float[3,?]! I:int64[3,?]!"},
    {"TopK", 24, "X:float[B,S,8] K=shape(z:float[T])", "axis=i:1", "V:float[B,T,8] I:int64[B,T,8]"},
    {"TopK", 1, "X:float[3,4]", "k=i:2 axis=i:0", "V:float[2,4] I:int64[2,4]"},
    {"TopK", 11, "X:float[3,4] K:int64[1]=3", "axis=i:2", "ERROR"},
    {"NonZero", 13, "c:bool[2,2]", "", "r:int64[2,?]!"},
    {"NonZero", 13, "c:int64[5]=0,3,0,1,1", "", "r:int64[1,3]"},
    {"Unique", 11, "X:float[6]", "", "Y:float[?]! i:int64[?]! inv:int64[6] cnt:int64[?]!"},
    {"Unique", 11, "X:float[3,4]", "axis=i:0 sorted=i:1", "Y:float[?,4]! i:int64[?]! inv:int64[3] cnt:int64[?]!"},
    {"NonMaxSuppression", 11, "b:float[1,6,4] s:float[1,1,6]", "", "sel:int64[?,3]!"},
    {"Compress", 11, "x:float[3,2] c:bool[3]", "axis=i:0", "y:float[?,2]!"},
    {"Compress", 11, "x:float[3,2] c:int64[2]=1,0", "axis=i:1", "y:float[3,1]"},
    {"Compress", 11, "x:float[3,2] c:bool[3]", "", "y:float[?]!"},
};

OLLA_TEST(test_datadep) { OLLA_SHAPE_CASES(datadep_cases); }

OLLA_TEST_MAIN(OLLA_T(test_datadep))
