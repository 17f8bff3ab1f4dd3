/* Shape rules of ATen fallback nodes (passes/shapes/shape_aten.c and
 * shape_aten_nn.c): arguments as attributes (traced graphs) and as inputs
 * (ONNX Runtime training exports); an unknown operator keeps a clear reason. */
#include "olla_test.h"
#include "passes/shapes/olla_shape_rules.h"
#include "shape_case.h"

#define ATEN "org.pytorch.aten:ATen"

static const olla_shape_case like_cases[] = {
    {ATEN, 1, "x:float[2,3]", "operator=s:empty_like overload_name=s:default memory_format=s:torch.contiguous_format", "y:float[2,3]"},
    {ATEN, 1, "x:float[2,3]", "operator=s:empty_like dtype=s:torch.float16", "y:float16[2,3]"},
    {ATEN, 1, "x:float[N,3]", "operator=s:ones_like dtype=s:torch.float32", "y:float[N,3]"},
    {ATEN, 1, "x:int64[5]", "operator=s:zeros_like", "y:int64[5]"},
    {ATEN, 1, "x:float[5] d:int64[]=4", "operator=s:zeros_like", "y:int64[5]"},
    {ATEN, 1, "x:float[4,5]", "operator=s:bernoulli overload_name=s:p", "y:float[4,5]"},
    {ATEN, 1, "x:float[0]", "operator=s:empty overload_name=s:memory_format size=ints:0 dtype=s:torch.uint8", "y:uint8[0]"},
    {ATEN, 1, "", "operator=s:empty size=ints:3,4", "y:float[3,4]"},
    {ATEN, 1, "g:float[2,3] x:float[2,3]", "operator=s:hardtanh_backward min_val=f:0 max_val=f:6", "y:float[2,3]"},
    {ATEN, 1, "x:float[3,4] p:float[]=0.5 t:int64[]=1", "operator=s:native_dropout", "y:float[3,4] m:bool[3,4]"},
    {ATEN, 1, "g:float[3,4] m:bool[3,4] s:float[]=2", "operator=s:native_dropout_backward", "y:float[3,4]"},
    {ATEN, 1, "a:int64[3,1] b:int64[1,4]", "operator=s:bitwise_or", "y:int64[3,4]"},
    {ATEN, 1, "a:bool[3] b:bool[3]", "operator=s:bitwise_and", "y:bool[3]"},
};

static const olla_shape_case loss_cases[] = {
    {ATEN, 1, "s:float[8,10] t:int64[8]", "operator=s:nll_loss_forward reduction=i:1 ignore_index=i:-100", "o:float[] w:float[]"},
    {ATEN, 1, "s:float[8,10] t:int64[8]", "operator=s:nll_loss_forward reduction=i:0", "o:float[8] w:float[]"},
    {ATEN, 1, "g:float[] s:float[8,10] t:int64[8] - w:float[]", "operator=s:nll_loss_backward reduction=i:1", "y:float[8,10]"},
    {ATEN, 1, "a:float[2,3] b:float[2,3]", "operator=s:mse_loss", "y:float[]"},
    {ATEN, 1, "a:float[2,3] b:float[1,3]", "operator=s:mse_loss reduction=i:0", "y:float[2,3]"},
    {ATEN, 1, "g:float[] a:float[2,3] b:float[2,3]", "operator=s:mse_loss_backward reduction=i:1", "y:float[2,3]"},
};

static const olla_shape_case linalg_cases[] = {
    {ATEN, 1, "s:float[4,5,7] a:float[4,5,6] b:float[4,6,7]", "operator=s:baddbmm", "y:float[4,5,7]"},
    {ATEN, 1, "s:float[1] a:float[B,5,6] b:float[B,6,7]", "operator=s:baddbmm", "y:float[B,5,7]"},
    {ATEN, 1, "w:float[100,16] i:int64[4,7] p:int64[]=-1", "operator=s:embedding", "y:float[4,7,16]"},
    {ATEN, 1, "g:float[4,7,16] i:int64[4,7] n:int64[]=100 p:int64[]=-1", "operator=s:embedding_dense_backward", "y:float[100,16]"},
    {ATEN, 1, "g:float[4,7,16] i:int64[4,7]", "operator=s:embedding_backward num_weights=i:50", "y:float[50,16]"},
    {ATEN, 1, "x:float[2,3,4]", "operator=s:numpy_T", "y:float[4,3,2]"},
    {ATEN, 1, "g:float[1,4,8,16]", "operator=s:slice_backward input_sizes=ints:1,4,8,32 dim=i:-1 start=i:16 end=i:32 step=i:1",
     "y:float[1,4,8,32]"},
    {ATEN, 1, "g:float16[4,16] s:int64[3]=4,6,16", "operator=s:select_backward dim=i:1 index=i:2", "y:float16[4,6,16]"},
    {ATEN, 1, "x:float[3,4,5] o:int64[]=0 a:int64[]=1 b:int64[]=2", "operator=s:diagonal", "y:float[3,4]"},
    {ATEN, 1, "x:float[3,4,5] o:int64[]=-1 a:int64[]=1 b:int64[]=2", "operator=s:diagonal", "y:float[3,3]"},
    {ATEN, 1, "x:float[3,4,5]", "operator=s:diagonal offset=i:3 dim1=i:-2 dim2=i:-1", "y:float[3,2]"},
    {ATEN, 1, "x:float[3,4]", "operator=s:max", "y:float[]"},
    {ATEN, 1, "x:float[3,4] d:int64[]=1 k:int64[]=1", "operator=s:max overload_name=s:dim", "v:float[3,1] i:int64[3,1]"},
    {ATEN, 1, "x:float[3,4] d:int64[]=0 k:int64[]=0", "operator=s:min overload_name=s:dim", "v:float[4] i:int64[4]"},
    {ATEN, 1, "x:float[3,4] d:int64[]=0 k:int64[]=0", "operator=s:argmax", "y:int64[4]"},
    {ATEN, 1, "x:float[3,4] - k:int64[]=0", "operator=s:argmax", "y:int64[]"},
    {ATEN, 1, "x:float[3,10] n:int64[]=5", "operator=s:multinomial", "y:int64[3,5]"},
    {ATEN, 1, "x:float[2,10] d:int64[]=1 s:int64[]=4 t:int64[]=2", "operator=s:unfold", "y:float[2,4,4]"},
};

static const olla_shape_case nn_cases[] = {
    {ATEN, 1, "x:float[1,3,32,32]", "operator=s:max_pool2d_with_indices kernel_size=ints:3,3 stride=ints:2,2 padding=ints:1,1 dilation=ints:1,1 ceil_mode=i:0",
     "y:float[1,3,16,16] i:int64[1,3,16,16]"},
    {ATEN, 1, "x:float[1,3,7,7] k:int64[1]=2 s:int64[0]= p:int64[]=0 d:int64[]=1 c:int64[]=1", "operator=s:max_pool2d_with_indices",
     "y:float[1,3,4,4] i:int64[1,3,4,4]"},
    {ATEN, 1, "x:float[1,3,7,7] k:int64[1]=2 s:int64[0]= p:int64[]=0 d:int64[]=1 c:int64[]=0", "operator=s:max_pool2d_with_indices",
     "y:float[1,3,3,3] i:int64[1,3,3,3]"},
    {ATEN, 1, "g:float[1,3,16,16] x:float[1,3,32,32]", "operator=s:max_pool2d_with_indices_backward", "y:float[1,3,32,32]"},
    {ATEN, 1, "x:float[2,4,9,9] k:int64[2]=3,3 s:int64[2]=3,3 p:int64[2]=0,0 c:int64[]=0", "operator=s:avg_pool2d", "y:float[2,4,3,3]"},
    {ATEN, 1, "g:float[2,4,3,3] x:float[2,4,9,9]", "operator=s:avg_pool2d_backward", "y:float[2,4,9,9]"},
    {ATEN, 1, "x:float[2,8,9,9] o:int64[2]=3,3", "operator=s:_adaptive_avg_pool2d", "y:float[2,8,3,3]"},
    {ATEN, 1, "g:float[2,8,3,3] x:float[2,8,9,9]", "operator=s:_adaptive_avg_pool2d_backward", "y:float[2,8,9,9]"},
    {ATEN, 1, "x:float[1,3,4,4] o:int64[2]=8,8", "operator=s:upsample_nearest2d", "y:float[1,3,8,8]"},
    {ATEN, 1, "x:float[1,3,4,4]", "operator=s:upsample_nearest2d overload_name=s:vec scale_factors=floats:2,3", "y:float[1,3,8,12]"},
    {ATEN, 1, "x:float[1,3,5] o:int64[1]=10", "operator=s:upsample_nearest1d", "y:float[1,3,10]"},
    {ATEN, 1, "x:float[1,3,2,2,2] o:int64[3]=4,4,4", "operator=s:upsample_nearest3d", "y:float[1,3,4,4,4]"},
    {ATEN, 1, "x:float16[1,3,4,4] o:int64[2]=6,6", "operator=s:upsample_bicubic2d", "y:float16[1,3,6,6]"},
    {ATEN, 1, "g:float[1,3,8,8] o:int64[2]=8,8 i:int64[4]=1,3,4,4", "operator=s:upsample_nearest2d_backward", "y:float[1,3,4,4]"},
    {ATEN, 1, "x:float[2,6,5] w:float[6] b:float[6] n:int64[]=2 c:int64[]=6 h:int64[]=5 g:int64[]=3 e:float[]=0.00001",
     "operator=s:native_group_norm", "y:float[2,6,5] m:float[2,3] r:float[2,3]"},
    {ATEN, 1, "go:float[2,6,5] x:float[2,6,5] m:float[2,3] r:float[2,3] w:float[6] n:int64[]=2 c:int64[]=6",
     "operator=s:native_group_norm_backward", "gx:float[2,6,5] gw:float[6] gb:float[6]"},
};

/* Views and new tensors of another geometry (shape_aten_view.c), as
 * torchvision's training steps trace them (ConvNeXt's and EfficientNet's
 * as_strided, new_empty, new_empty_strided; ViT's select.int), arguments as
 * attributes or inputs; in-place forms take the new geometry, not self's. */
static const olla_shape_case view_cases[] = {
    {ATEN, 1, "x:float[1,768,1,1]", "operator=s:as_strided overload_name=s:default size=ints:1,768,1,1 stride=ints:768,1,768,768",
     "y:float[1,768,1,1]"},
    {ATEN, 1, "x:float[768]", "operator=s:as_strided size=ints:12,64 stride=ints:64,1 storage_offset=i:0", "y:float[12,64]"},
    {ATEN, 1, "x:float16[10] s:int64[2]=2,3 t:int64[2]=3,1", "operator=s:as_strided", "y:float16[2,3]"},
    {ATEN, 1, "x:float[1,768,1,1]", "operator=s:as_strided_ size=ints:768 stride=ints:1", "y:float[768]"},
    {ATEN, 1, "x:float[6]", "operator=s:resize_ size=ints:2,5", "y:float[2,5]"},
    {ATEN, 1, "x:float[1280]", "operator=s:new_empty overload_name=s:default size=ints:1280", "y:float[1280]"},
    {ATEN, 1, "x:float[4]", "operator=s:new_zeros size=ints:3,2 dtype=s:torch.int64", "y:int64[3,2]"},
    {ATEN, 1, "x:float[4] s:int64[1]=7 d:int64[]=11", "operator=s:new_ones", "y:bool[7]"},
    {ATEN, 1, "x:float[1,1280,1,1]", "operator=s:new_empty_strided size=ints:1,1280,7,7 stride=ints:62720,49,7,1",
     "y:float[1,1280,7,7]"},
    {ATEN, 1, "x:double[2] s:int64[2]=4,4 v:float[]=1 d:int64[]=6", "operator=s:new_full", "y:float[4,4]"},
    {ATEN, 1, "x:float[1,197,768]", "operator=s:select overload_name=s:int dim=i:1 index=i:0", "y:float[1,768]"},
    {ATEN, 1, "x:float[B,197,768] d:int64[]=-1 i:int64[]=3", "operator=s:select", "y:float[B,197]"},
    {ATEN, 1, "x:float[4,1,3,1]", "operator=s:squeeze", "y:float[4,3]"},
    {ATEN, 1, "x:float[4,1,3,1]", "operator=s:squeeze overload_name=s:dim dim=i:-1", "y:float[4,1,3]"},
    {ATEN, 1, "x:float[4,1,3,1]", "operator=s:squeeze_ dim=i:0", "y:float[4,1,3,1]"},
    {ATEN, 1, "x:float[4,3]", "operator=s:unsqueeze dim=i:1", "y:float[4,1,3]"},
    {ATEN, 1, "x:int64[4,3] d:int64[]=-1", "operator=s:unsqueeze_", "y:int64[4,3,1]"},
    {ATEN, 1, "x:float[2,3,5]", "operator=s:transpose overload_name=s:int dim0=i:0 dim1=i:-1", "y:float[5,3,2]"},
    {ATEN, 1, "x:float[2,3,5]", "operator=s:swapaxes axis0=i:1 axis1=i:2", "y:float[2,5,3]"},
    {ATEN, 1, "x:float[2,3,5] a:int64[]=0 b:int64[]=1", "operator=s:transpose_", "y:float[3,2,5]"},
    {ATEN, 1, "x:float[2,7]", "operator=s:t_", "y:float[7,2]"},
    {ATEN, 1, "x:float[7]", "operator=s:t", "y:float[7]"},
    {ATEN, 1, "x:float[1,56,56,96]", "operator=s:roll shifts=ints:-3,-3 dims=ints:1,2", "y:float[1,56,56,96]"},
    {ATEN, 1, "x:float[1,55,53,96]", "operator=s:constant_pad_nd pad=ints:0,0,0,3,0,1 value=f:0", "y:float[1,56,56,96]"},
    {ATEN, 1, "x:float[2,3,8] p:int64[2]=-1,-2", "operator=s:constant_pad_nd", "y:float[2,3,5]"},
    {ATEN, 1, "x:float[B,3,8]", "operator=s:constant_pad_nd pad=ints:1,1,2,2,0,0", "y:float[B,7,10]"},
    {ATEN, 1, "t:float[169,3] i:int64[2401]", "operator=s:index overload_name=s:Tensor", "y:float[2401,3]"},
    {ATEN, 1, "x:float[4,5,6] - i:int64[2,3]", "operator=s:index", "y:float[4,2,3,6]"},
    {ATEN, 1, "x:float16[4,5,6,7] - i:int64[2,1] j:int32[3]", "operator=s:index", "y:float16[4,2,3,7]"},
    {ATEN, 1, "x:float[4,5,6] i:int64[3] - j:int64[3]", "operator=s:index", "y:float[3,5]"},
};

/* One rule per schema kind: in place (any name with a trailing underscore),
 * point-wise, the backward of a point-wise operation, point-wise
 * predicates; arguments beside self change nothing, and the element type
 * is self's (bool for the predicates). Point-wise of two tensors and
 * comparisons: the broadcast of self and other (bool for comparisons);
 * written into self: self's. */
static const olla_shape_case kind_cases[] = {
    {ATEN, 1, "x:float[2,3,5]", "operator=s:silu overload_name=s:default", "y:float[2,3,5]"},
    {ATEN, 1, "x:float16[N,7]", "operator=s:gelu approximate=s:tanh", "y:float16[N,7]"},
    {ATEN, 1, "x:float[4]", "operator=s:hardswish", "y:float[4]"},
    {ATEN, 1, "x:double[3,3]", "operator=s:mish", "y:double[3,3]"},
    {ATEN, 1, "x:float[6,2]", "operator=s:clamp min=f:0 max=f:6", "y:float[6,2]"},
    {ATEN, 1, "x:bfloat16[8]", "operator=s:rsqrt", "y:bfloat16[8]"},
    {ATEN, 1, "x:float[2,3]", "operator=s:fill overload_name=s:Scalar value=f:1", "y:float[2,3]"},
    {ATEN, 1, "x:float[2,3] v:float[]=2", "operator=s:fill overload_name=s:Tensor", "y:float[2,3]"},
    {ATEN, 1, "x:int64[5]", "operator=s:zero", "y:int64[5]"},
    {ATEN, 1, "x:float[4,5] s:float[1,5]", "operator=s:copy non_blocking=i:0", "y:float[4,5]"},
    {ATEN, 1, "x:int32[4,5] s:float[4,5]", "operator=s:copy_", "y:int32[4,5]"},
    {ATEN, 1, "x:float[3,4]", "operator=s:fill_ overload_name=s:Scalar value=f:0", "y:float[3,4]"},
    {ATEN, 1, "x:float[3,4]", "operator=s:zero_", "y:float[3,4]"},
    {ATEN, 1, "x:float[3,4] m:bool[1,4]", "operator=s:masked_fill_ overload_name=s:Scalar value=f:0", "y:float[3,4]"},
    {ATEN, 1, "x:float[3,4] o:float[4]", "operator=s:add_ overload_name=s:Tensor", "y:float[3,4]"},
    {ATEN, 1, "x:uint8[7]", "operator=s:bernoulli_ overload_name=s:float p=f:0.5", "y:uint8[7]"},
    {ATEN, 1, "x:int64[3] o:int64[3]", "operator=s:__iand__", "y:int64[3]"},
    {ATEN, 1, "g:float[2,8] x:float[2,8]", "operator=s:silu_backward", "y:float[2,8]"},
    {ATEN, 1, "g:float16[2,8] x:float16[2,8]", "operator=s:gelu_backward approximate=s:none", "y:float16[2,8]"},
    {ATEN, 1, "g:float[2,3] x:float[2,3]", "operator=s:hardtanh_backward min_val=f:0 max_val=f:6", "y:float[2,3]"},
    {ATEN, 1, "g:float[9] x:float[9]", "operator=s:threshold_backward threshold=f:0", "y:float[9]"},
    {ATEN, 1, "g:float[4,4] y:float[4,4]", "operator=s:tanh_backward", "y:float[4,4]"},
    {ATEN, 1, "x:float[2,5]", "operator=s:isnan", "y:bool[2,5]"},
    {ATEN, 1, "x:int64[3]", "operator=s:logical_not", "y:bool[3]"},
    {ATEN, 1, "x:float[64,49,49]", "operator=s:ne overload_name=s:Scalar other=i:0", "y:bool[64,49,49]"},
    {ATEN, 1, "x:float[64,1,49] o:float[49,1]", "operator=s:eq overload_name=s:Tensor", "y:bool[64,49,49]"},
    {ATEN, 1, "a:bool[3,1] b:bool[4]", "operator=s:logical_and", "y:bool[3,4]"},
    {ATEN, 1, "x:float[3,1] o:float[1,5]", "operator=s:add overload_name=s:Tensor alpha=i:1", "y:float[3,5]"},
    {ATEN, 1, "x:int64[6] o:float[]=2", "operator=s:mul", "y:float[6]"},
    {ATEN, 1, "x:int32[2,6]", "operator=s:pow overload_name=s:Tensor_Scalar exponent=i:2", "y:int32[2,6]"},
    {ATEN, 1, "x:float[64,49,49] m:bool[64,49,49]", "operator=s:masked_fill overload_name=s:Scalar value=f:-100",
     "y:float[64,49,49]"},
    {ATEN, 1, "x:float[169,24] i:int64[2401] v:float[2401,24]", "operator=s:index_put accumulate=i:1", "y:float[169,24]"},
};

OLLA_TEST(test_like) { OLLA_SHAPE_CASES(like_cases); }
OLLA_TEST(test_rules_by_schema_kind) { OLLA_SHAPE_CASES(kind_cases); }
OLLA_TEST(test_views_and_new_sizes) { OLLA_SHAPE_CASES(view_cases); }
OLLA_TEST(test_losses) { OLLA_SHAPE_CASES(loss_cases); }
OLLA_TEST(test_linalg_and_indexing) { OLLA_SHAPE_CASES(linalg_cases); }
OLLA_TEST(test_pooling_upsampling_group_norm) { OLLA_SHAPE_CASES(nn_cases); }

/* An ATen operator without a rule keeps its outputs unknown, and says which. */
OLLA_TEST(test_unknown_operator_reason)
{
    olla_shape_case k = {ATEN, 1, "x:float[3]", "operator=s:frobnicate overload_name=s:out", "y:x"};
    Onnx__ModelProto *m = olla_case_model(&k);
    olla_shape_options opt = {.ignore_value_info = 1};
    olla_shape_table *t = NULL;
    olla_error err = {0};
    OLLA_CHECK(olla_infer_shapes(m, &opt, &t, &err) == OLLA_OK);
    OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "y"),
                            "ATen operator 'frobnicate.out' has no shape rule; declare its outputs in value_info");
    olla_shape_table_free(t);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* Names that look like a kind but are not one: a binary dunder, the
 * backward of an operation that is not point-wise, a name that only ends
 * in a point-wise one, an in-place operation that changes self's geometry
 * without a rule of its own. */
OLLA_TEST(test_kind_look_alikes_stay_unknown)
{
    static const char *const ops[] = {"__and__", "conv_backward", "unsilu", "_backward", "frobnicate", "resize_as_", "set_"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char attrs[96];
        snprintf(attrs, sizeof attrs, "operator=s:%s", ops[i]);
        olla_shape_case k = {ATEN, 1, "x:float[3] z:float[3]", attrs, "y:x"};
        Onnx__ModelProto *m = olla_case_model(&k);
        olla_shape_options opt = {.ignore_value_info = 1};
        olla_shape_table *t = NULL;
        olla_error err = {0};
        OLLA_CHECK(olla_infer_shapes(m, &opt, &t, &err) == OLLA_OK);
        char want[96];
        snprintf(want, sizeof want, "ATen operator '%s' has no shape rule", ops[i]);
        OLLA_CHECK_STR_CONTAINS(olla_shape_unknown_reason(t, "y"), want);
        olla_shape_table_free(t);
        onnx__model_proto__free_unpacked(m, NULL);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_like), OLLA_T(test_rules_by_schema_kind), OLLA_T(test_views_and_new_sizes), OLLA_T(test_kind_look_alikes_stay_unknown),
               OLLA_T(test_losses), OLLA_T(test_linalg_and_indexing),
               OLLA_T(test_pooling_upsampling_group_norm), OLLA_T(test_unknown_operator_reason))
