/* Shape rules of normalization (passes/shapes/shape_norm.c) and recurrent
 * operators (passes/shapes/shape_rnn.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case norm_cases[] = {
    {"BatchNormalization", 15, "x:float[2,3,4,5] s:float[3] b:float[3] m:float[3] v:float[3]", "", "y:float[2,3,4,5]"},
    {"BatchNormalization", 15, "x:float[2,3,4,5] s:float[3] b:float[3] m:float[3] v:float[3]", "training_mode=i:1", "y:float[2,3,4,5] rm:float[3] rv:float[3]"},
    {"BatchNormalization", 15, "x:float16[N,C,4] s:float[C] b:float[C] m:float[C] v:float[C]", "training_mode=i:1", "y:float16[N,C,4] rm:float[C] rv:float[C]"},
    {"BatchNormalization", 9, "x:float[2,8,4,4] s:float[8] b:float[8] m:float[8] v:float[8]", "", "y:float[2,8,4,4] m1:float[8] v1:float[8] sm:float[8] sv:float[8]"},
    {"InstanceNormalization", 22, "x:float[2,3,4,5] s:float[3] b:float[3]", "", "y:float[2,3,4,5]"},
    {"LayerNormalization", 17, "X:float[2,3,4,5] W:float[5] B:float[5]", "", "Y:float[2,3,4,5] Mean:float[2,3,4,1] Inv:float[2,3,4,1]"},
    {"LayerNormalization", 17, "X:float[2,3,4,5] W:float[3,4,5]", "axis=i:1", "Y:float[2,3,4,5] Mean:float[2,1,1,1] Inv:float[2,1,1,1]"},
    {"LayerNormalization", 17, "X:float16[B,S,64] W:float16[64]", "axis=i:-1", "Y:float16[B,S,64] Mean:float[B,S,1] -"},
    {"LayerNormalization", 17, "X:float[3,4] W:float[4]", "axis=i:2", "ERROR"},
    {"GroupNormalization", 21, "x:float[3,4,2,2] s:float[4] b:float[4]", "num_groups=i:2", "y:float[3,4,2,2]"},
    {"LpNormalization", 22, "x:float[2,2,3]", "", "y:float[2,2,3]"},
    {"MeanVarianceNormalization", 13, "X:float[3,3,3,1]", "", "Y:float[3,3,3,1]"},
    {"LRN", 13, "x:float[5,5,5,5]", "size=i:3", "y:float[5,5,5,5]"},
    {"RMSNormalization", 23, "X:float[2,3,5] W:float[3,5]", "axis=i:1", "Y:float[2,3,5]"},
};

static const olla_shape_case rnn_cases[] = {
    {"GRU", 22, "X:float[3,1,2] W:float[1,18,2] R:float[1,18,6]", "hidden_size=i:6 layout=i:1", "Y:float[3,1,1,6] Y_h:float[3,1,6]"},
    {"GRU", 22, "X:float[1,3,2] W:float[1,15,2] R:float[1,15,5]", "hidden_size=i:5", "- Y_h:float[1,3,5]"},
    {"LSTM", 22, "X:float[1,2,4] W:float[1,12,4] R:float[1,12,3] B:float[1,24] sl:int32[2] h0:float[1,2,3] c0:float[1,2,3] P:float[1,9]", "hidden_size=i:3", "- Y_h:float[1,2,3] Y_c:float[1,2,3]"},
    {"LSTM", 22, "X:float[T,B,16] W:float[2,128,16] R:float[2,128,32]", "direction=s:bidirectional", "Y:float[T,2,B,32] Y_h:float[2,B,32] Y_c:float[2,B,32]"},
    {"RNN", 22, "X:float[3,1,2] W:float[1,4,2] R:float[1,4,4]", "hidden_size=i:4 layout=i:1", "Y:float[3,1,1,4] Y_h:float[3,1,4]"},
    {"RNN", 22, "X:float[3,1,2] W:float[1,4,2] R:float[1,4,4]", "direction=s:sideways", "ERROR"},
};

OLLA_TEST(test_norm) { OLLA_SHAPE_CASES(norm_cases); }
OLLA_TEST(test_rnn) { OLLA_SHAPE_CASES(rnn_cases); }

OLLA_TEST_MAIN(OLLA_T(test_norm), OLLA_T(test_rnn))
