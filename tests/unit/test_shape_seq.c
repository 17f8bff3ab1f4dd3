/* Shape rules of sequence and optional values (passes/shapes/shape_seq.c). */
#include "olla_test.h"
#include "shape_case.h"

static const olla_shape_case seq_cases[] = {
    {"SequenceEmpty", 17, "", "dtype=i:7", "s:seq(int64)"},
    {"SequenceEmpty", 17, "", "", "s:seq(float)"},
    {"SequenceConstruct", 11, "a:float[2,3] b:float[4,3]", "", "s:seq(float)"},
    {"SequenceInsert", 11, "s:seq(int64) t:int64[3]", "", "o:seq(int64)"},
    {"SequenceErase", 11, "s:seq(int32)", "", "o:seq(int32)"},
    {"SequenceAt", 11, "s:seq(float16) p:int64[]=0", "", "t:float16[*]!"},
    {"SequenceLength", 11, "s:seq(float)", "", "n:int64[]"},
    {"SplitToSequence", 24, "x:float[3,6] sp:int64[2]=2,4", "axis=i:1", "s:seq(float)"},
    {"ConcatFromSequence", 11, "s:seq(double)", "axis=i:0", "y:double[*]!"},
    {"Optional", 15, "x:bool[2]", "", "o:opt(bool)"},
    {"OptionalHasElement", 18, "x:float[4]", "", "h:bool[]"},
    {"OptionalHasElement", 18, "-", "", "h:bool[]"},
    {"OptionalGetElement", 18, "x:float[4]", "", "y:float[4]"},
    {"OptionalGetElement", 18, "s:seq(int32)", "", "y:seq(int32)"},
};

OLLA_TEST(test_seq) { OLLA_SHAPE_CASES(seq_cases); }

OLLA_TEST_MAIN(OLLA_T(test_seq))
