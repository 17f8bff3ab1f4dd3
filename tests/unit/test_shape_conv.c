/* Shape rules of convolutions and pooling (passes/shapes/shape_conv.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case conv_cases[] = {
    {"Conv", 22, "x:float[1,1,5,5] W:float[1,1,3,3]", "kernel_shape=ints:3,3 pads=ints:1,1,1,1", "y:float[1,1,5,5]"},
    {"Conv", 22, "x:float[1,1,5,5] W:float[1,1,3,3]", "", "y:float[1,1,3,3]"},
    {"Conv", 22, "x:float[1,1,7,5] W:float[1,1,3,3]", "pads=ints:1,0,1,0 strides=ints:2,2", "y:float[1,1,4,2]"},
    {"Conv", 22, "x:float[1,1,5,5] W:float[1,1,3,3]", "auto_pad=s:SAME_LOWER strides=ints:2,2", "y:float[1,1,3,3]"},
    {"Conv", 22, "x:float[1,1,9,9] W:float[4,1,3,3]", "auto_pad=s:VALID strides=ints:2,2", "y:float[1,4,4,4]"},
    {"Conv", 11, "x:float[2,4,10] W:float[8,2,3] b:float[8]", "group=i:2 dilations=ints:2", "y:float[2,8,6]"},
    {"Conv", 22, "x:float[N,3,224,224] W:float[64,3,7,7]", "strides=ints:2,2 pads=ints:3,3,3,3", "y:float[N,64,112,112]"},
    {"Conv", 22, "x:float[1,3,H,8] W:float[2,3,1,1]", "", "y:float[1,2,H,8]"},
    {"Conv", 22, "x:float[1,3,H,W] W:float[2,3,3,3]", "pads=ints:1,1,1,1", "y:float[1,2,H,W]"},
    {"Conv", 22, "x:float[1,3,8,8] W:float[2,3,3,3]", "pads=ints:1,1", "ERROR"},
    {"Conv", 22, "x:float[1,3,8,8] W:float[2,3,3,3]", "auto_pad=s:BOGUS", "ERROR"},
    {"Conv", 22, "x:float[1,3,8,8] W:float[2,3,3,3]", "dilations=ints:4611686018427387904,2", "ERROR"},
    {"Conv", 22, "x:float[1,3,8,8] W:float[2,3,3,3]", "strides=ints:0,1", "ERROR"},
    {"Conv", 22, "x:float[1,3,9223372036854775807,8] W:float[2,3,3,3]", "", "y:float[1,2,?,6]"},
    {"Conv", 22, "x:float[1,3,8,8] W:float[2,3,3,3]", "kernel_shape=ints:9223372036854775807,3", "ERROR"},
    {"MaxPool", 22, "x:float[1,3,8,8]", "kernel_shape=ints:3,3 pads=ints:-1,0,0,0", "ERROR"},
    {"Col2Im", 18, "input:float[1,5,5] is:int64[2]=5,5 bs:int64[2]=0,5", "", "ERROR"},
    {"com.microsoft:FusedConv", 1, "x:float[N,3,32,32] W:float[16,3,3,3] B:float[16]", "activation=s:Relu pads=ints:1,1,1,1 strides=ints:2,2", "y:float[N,16,16,16]"},
    {"ConvInteger", 10, "x:uint8[1,1,3,3] w:uint8[2,1,2,2] xz:uint8[] wz:uint8[2]", "pads=ints:1,1,1,1", "y:int32[1,2,4,4]"},
    {"QLinearConv", 10, "x:uint8[1,1,7,7] xs:float[] xz:uint8[] w:uint8[1,1,1,1] ws:float[1] wz:uint8[1] ys:float[] yz:uint8[]", "", "y:uint8[1,1,7,7]"},
    {"DeformConv", 22, "X:float[1,2,3,3] W:float[1,2,2,2] off:float[1,16,2,2]", "kernel_shape=ints:2,2 offset_group=i:2", "Y:float[1,1,2,2]"},
};

static const olla_shape_case conv_transpose_cases[] = {
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,2,3,3]", "", "Y:float[1,2,5,5]"},
    {"ConvTranspose", 22, "X:float[1,1,3,4,5] W:float[1,2,3,3,3]", "", "Y:float[1,2,5,6,7]"},
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,2,3,3]", "auto_pad=s:SAME_UPPER strides=ints:2,2", "Y:float[1,2,6,6]"},
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,1,2,2]", "dilations=ints:2,2", "Y:float[1,1,5,5]"},
    {"ConvTranspose", 11, "X:float[2,4,7,12] W:float[4,3,1,3]", "auto_pad=s:SAME_UPPER dilations=ints:1,2 output_padding=ints:1,0 strides=ints:3,2", "Y:float[2,3,21,24]"},
    {"ConvTranspose", 11, "X:float[2,4,S] W:float[4,3,3]", "auto_pad=s:SAME_LOWER strides=ints:2", "Y:float[2,3,S*2]"},
    {"ConvTranspose", 22, "X:float[3,2,3,3] W:float[2,1,3,3]", "group=i:2", "Y:float[3,2,5,5]"},
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,2,3,3]", "output_shape=ints:10,8 strides=ints:3,2", "Y:float[1,2,10,8]"},
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,2,3,3]", "output_padding=ints:1,1 strides=ints:3,2", "Y:float[1,2,10,8]"},
    {"ConvTranspose", 22, "X:float[1,1,3,3] W:float[1,2,3,3]", "pads=ints:1,2,1,2 strides=ints:3,2", "Y:float[1,2,7,3]"},
    {"ConvTranspose", 22, "X:float[B,4,L] W:float[4,2,4]", "strides=ints:2 pads=ints:1,1", "Y:float[B,2,(L-1)*2+2]"},
};

static const olla_shape_case pool_cases[] = {
    {"MaxPool", 22, "x:float[1,3,32]", "kernel_shape=ints:2", "y:float[1,3,31]"},
    {"MaxPool", 22, "x:float[1,1,4,4]", "ceil_mode=i:1 kernel_shape=ints:3,3 strides=ints:2,2", "y:float[1,1,2,2]"},
    {"MaxPool", 22, "x:float[1,1,2,2]", "ceil_mode=i:1 kernel_shape=ints:1,1 strides=ints:2,2", "y:float[1,1,1,1]"},
    {"MaxPool", 22, "x:float[1,1,4,4]", "dilations=ints:2,2 kernel_shape=ints:2,2", "y:float[1,1,2,2]"},
    {"MaxPool", 22, "x:float[1,3,32,32]", "auto_pad=s:SAME_UPPER kernel_shape=ints:2,2", "y:float[1,3,32,32]"},
    {"MaxPool", 22, "x:float[1,1,5,5]", "kernel_shape=ints:2,2 storage_order=i:1 strides=ints:2,2", "y:float[1,1,2,2] z:int64[1,1,2,2]"},
    {"MaxPool", 22, "x:float[1,1,32,32,32]", "ceil_mode=i:1 dilations=ints:2,2,2 kernel_shape=ints:5,5,5 strides=ints:3,3,3", "y:float[1,1,9,9,9]"},
    {"MaxPool", 22, "x:uint8[N,C,28,28]", "kernel_shape=ints:2,2 strides=ints:2,2", "y:uint8[N,C,14,14]"},
    {"MaxPool", 22, "x:float[1,3,8,8]", "", "ERROR"},
    {"AveragePool", 22, "x:float[1,3,2,2]", "ceil_mode=i:1 count_include_pad=i:1 kernel_shape=ints:3,3 pads=ints:1,1,1,1 strides=ints:3,3", "y:float[1,3,1,1]"},
    {"AveragePool", 22, "x:float[1,3,28,28]", "kernel_shape=ints:3,3 pads=ints:2,2,2,2", "y:float[1,3,30,30]"},
    {"AveragePool", 22, "x:float[1,1,32,32,32]", "dilations=ints:2,2,2 kernel_shape=ints:5,5,5 strides=ints:3,3,3", "y:float[1,1,8,8,8]"},
    {"LpPool", 22, "x:float[1,3,32,32]", "kernel_shape=ints:5,5 p=i:2 strides=ints:3,3", "y:float[1,3,10,10]"},
    {"GlobalAveragePool", 22, "x:float[N,3,5,5]", "", "y:float[N,3,1,1]"},
    {"GlobalMaxPool", 22, "x:float[1,3,5,5,5]", "", "y:float[1,3,1,1,1]"},
    {"MaxUnpool", 22, "xT:float[1,1,2,2] xI:int64[1,1,2,2]", "kernel_shape=ints:2,2 strides=ints:2,2", "y:float[1,1,4,4]"},
    {"MaxUnpool", 22, "xT:float[1,1,2,2] xI:int64[1,1,2,2] os:int64[4]=1,1,5,5", "kernel_shape=ints:2,2 strides=ints:2,2", "y:float[1,1,5,5]"},
    {"MaxUnpool", 22, "xT:float[1,1,2,2] xI:int64[1,1,2,2] os:int64[4]", "kernel_shape=ints:2,2 strides=ints:2,2", "y:float[?,?,?,?]!"},
    {"MaxUnpool", 22, "xT:float[N,1,2,2] xI:int64[N,1,2,2] os=shape(z:float[N,1,5,H])", "kernel_shape=ints:2,2 strides=ints:2,2", "y:float[N,1,5,H]"},
    {"Col2Im", 18, "input:float[1,5,5] is=shape(z:float[5,H]) bs:int64[2]=1,5", "", "output:float[1,1,5,H]"},
    {"MaxRoiPool", 1, "X:float[1,3,16,16] rois:float[5,5]", "pooled_shape=ints:2,3", "Y:float[5,3,2,3]"},
    {"RoiAlign", 22, "X:float[1,1,10,10] rois:float[3,4] bi:int64[3]", "output_height=i:5 output_width=i:5", "Y:float[3,1,5,5]"},
    {"Col2Im", 18, "input:float[1,5,5] is:int64[2]=5,5 bs:int64[2]=1,5", "", "output:float[1,1,5,5]"},
    {"Col2Im", 18, "input:float[1,10,12] is:int64[3]=3,4,5 bs:int64[3]=1,1,5", "", "output:float[1,2,3,4,5]"},
    {"Col2Im", 18, "input:float[1,5,5] is:int64[2] bs:int64[2]", "", "output:float[1,?,?,?]!"},
};

OLLA_TEST(test_conv) { OLLA_SHAPE_CASES(conv_cases); }
OLLA_TEST(test_conv_transpose) { OLLA_SHAPE_CASES(conv_transpose_cases); }
OLLA_TEST(test_pool) { OLLA_SHAPE_CASES(pool_cases); }

OLLA_TEST_MAIN(OLLA_T(test_conv), OLLA_T(test_conv_transpose), OLLA_T(test_pool))
