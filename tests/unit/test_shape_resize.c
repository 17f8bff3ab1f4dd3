/* Shape rules of Resize and Upsample (passes/shapes/shape_resize.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case resize_cases[] = {
    {"Resize", 19, "X:float[1,1,4,4] - s:float[4]=1,1,0.75,0.75", "mode=s:cubic", "Y:float[1,1,3,3]"},
    {"Resize", 19, "X:float[1,1,2,2] - s:float[4]=1,1,2,2.5", "", "Y:float[1,1,4,5]"},
    {"Resize", 19, "X:float[1,1,2,2] - s:float[2]=2,3", "axes=ints:3,2", "Y:float[1,1,6,4]"},
    {"Resize", 19, "X:float[1,1,2,4] - - z:int64[4]=1,1,1,3", "", "Y:float[1,1,1,3]"},
    {"Resize", 19, "X:float[1,1,2,2] - - z:int64[2]=7,8", "axes=ints:2,3 keep_aspect_ratio_policy=s:not_larger", "Y:float[1,1,7,7]"},
    {"Resize", 19, "X:float[1,1,2,4] - - z:int64[2]=1,3", "axes=ints:2,3 keep_aspect_ratio_policy=s:not_smaller", "Y:float[1,1,2,3]"},
    {"Resize", 13, "X:float[N,3,H,W] r:float[0]= s:float[4]=1,1,2,2", "", "Y:float[N,3,H*2,W*2]"},
    {"Resize", 11, "X:float[1,3,8,8] r:float[0]= s:float[0]= z:int64[4]=1,3,16,16", "", "Y:float[1,3,16,16]"},
    {"Resize", 10, "X:float[1,3,8,8] s:float[4]=1,1,0.5,0.5", "", "Y:float[1,3,4,4]"},
    {"Resize", 19, "X:float[1,3,8,8] - s:float[4]", "", "Y:float[?,?,?,?]!"},
    {"Resize", 19, "X:float[1,3,8,8] - s:float[2]", "axes=ints:2,3", "Y:float[1,3,?,?]!"},
    {"Resize", 19, "X:float[1,3,8,8] - s:float[3]=1,2,2", "", "ERROR"},
    {"Resize", 19, "X:float[1,3,8,8] - - z:int64[2]=4,4", "axes=ints:2,3 keep_aspect_ratio_policy=s:bogus", "ERROR"},
    {"Resize", 19, "X:float[1,3,8,8] - s:float[4]=1,1,1e30,2", "", "ERROR"},
    {"Resize", 19, "X:float[1,3,8,8] - s:float[4]=1,1,-2,2", "", "ERROR"},
    {"Resize", 19, "X:float[1,3,8,8] - - z:int64[4]=1,3,-4,4", "", "ERROR"},
    {"Resize", 19, "X:float[1,3,4611686018427387904,8] - s:float[4]=1,1,4,1", "", "Y:float[1,3,?,8]"},
    {"Upsample", 1, "X:float[1,1,2,2]", "height_scale=f:2 width_scale=f:3", "Y:float[1,1,4,6]"},
    {"Resize", 19, "X:float[N,3,8,8] - - z=shape(y:float[N,3,16,24])", "", "Y:float[N,3,16,24]"},
    {"Resize", 19, "X:float[N,3,8,8] - - z=shape(y:float[N,3,?,24])", "", "Y:float[N,3,?,24]!"},
    {"Resize", 19, "X:float[N,3,8,8] - - z=shape(y:float[N,3,16,24])", "keep_aspect_ratio_policy=s:not_larger", "Y:float[?,?,?,?]!"},
    {"Upsample", 9, "X:float[1,1,2,2] s:float[4]=1,1,2,3", "", "Y:float[1,1,4,6]"},
    {"Upsample", 7, "X:float[1,1,2,2]", "scales=floats:1,1,2,3", "Y:float[1,1,4,6]"},
};

OLLA_TEST(test_resize) { OLLA_SHAPE_CASES(resize_cases); }

OLLA_TEST_MAIN(OLLA_T(test_resize))
