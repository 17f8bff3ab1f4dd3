/* Shape rules of signal processing (passes/shapes/shape_signal.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case signal_cases[] = {
    {"DFT", 19, "x:float[1,10,10,1]", "axis=i:1", "y:float[1,10,10,2]"},
    {"DFT", 19, "x:float[1,10,10,1]", "axis=i:1 onesided=i:1", "y:float[1,6,10,2]"},
    {"DFT", 19, "x:float[1,6,10,2]", "axis=i:1 inverse=i:1 onesided=i:1", "y:float[1,10,10,1]"},
    {"DFT", 20, "x:float[1,10,10,1] - a:int64[]=2", "onesided=i:1", "y:float[1,10,6,2]"},
    {"DFT", 20, "x:float[1,10,10,1] n:int64[]=16 a:int64[]=1", "", "y:float[1,16,10,2]"},
    {"DFT", 20, "x:float[1,10,10,1] - a:int64[]", "", "y:float[1,10,10,2]"},
    {"DFT", 20, "x:float[1,10,10,1] - a:int64[]", "onesided=i:1", "y:float[?,?,?,2]!"},
    {"DFT", 20, "x:float[1,10,10,1] - a:int64[]=3", "", "ERROR"},
    {"STFT", 17, "sig:float[1,128,1] st:int64[]=8 - fl:int64[]=16", "", "y:float[1,15,9,2]"},
    {"STFT", 17, "sig:float[1,128,1] st:int64[]=8 w:float[16]", "onesided=i:0", "y:float[1,15,16,2]"},
    {"STFT", 17, "sig:float[1,128,1] st:int64[] w:float[16]", "", "y:float[1,?,9,2]!"},
    {"HannWindow", 17, "x:int32[]=10", "", "y:float[10]"},
    {"BlackmanWindow", 17, "x:int64[]=8", "output_datatype=i:11", "y:double[8]"},
    {"HammingWindow", 17, "x:int32[]", "", "y:float[?]!"},
    {"HammingWindow", 17, "n=shape(z:float[L])", "", "y:float[L]"},
    {"MelWeightMatrix", 17, "m:int32[]=8 n:int32[]=16 sr:int32[]=8192 lo:float[]=0 hi:float[]=4096", "", "y:float[9,8]"},
};

OLLA_TEST(test_signal) { OLLA_SHAPE_CASES(signal_cases); }

OLLA_TEST_MAIN(OLLA_T(test_signal))
