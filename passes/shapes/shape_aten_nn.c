/* olla-onnx: ATen rules for pooling, upsampling and group normalization
 * (see shape_aten.c for how arguments are read). */
#include <math.h>
#include <string.h>

#include "passes/shapes/olla_shape_aten.h"

/* Each of n spatial values from a list argument of 1 or n entries, or dflt
 * when the list is absent or empty. 0 when it cannot be read. */
static int spatial_arg(olla_shape_ctx *c, const char *name, int input, int n, const int64_t *dflt, int64_t *out)
{
    int64_t v[8];
    int64_t k = olla_aten_ints(c, name, input, v, 8);
    for (int d = 0; d < n; d++) {
        if (k == 1)
            out[d] = v[0];
        else if (k == n)
            out[d] = v[d];
        else if ((k <= 0 && dflt))
            out[d] = dflt[d];
        else
            return 0;
    }
    return 1;
}

typedef struct pool_args {
    int64_t kernel[3], stride[3], pad[3], dil[3];
    int64_t ceil_mode;
} pool_args;

/* Output length of a pooling window over n: PyTorch's formula. */
static int64_t pooled(int64_t n, int d, const pool_args *p)
{
    int64_t span = n + 2 * p->pad[d] - p->dil[d] * (p->kernel[d] - 1) - 1;
    if (span < 0 || p->stride[d] < 1)
        return -1;
    int64_t out = (p->ceil_mode ? (span + p->stride[d] - 1) / p->stride[d] : span / p->stride[d]) + 1;
    if (p->ceil_mode && (out - 1) * p->stride[d] >= n + p->pad[d])
        out--;
    return out;
}

/* max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
 * ceil_mode) and avg_pool2d(self, kernel_size, stride, padding, ceil_mode...):
 * [.., H', W'] (and int64 indices of the same shape). */
static olla_status pool2d(olla_shape_ctx *c, int with_dilation)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    static const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
    pool_args p = {.ceil_mode = 0};
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = x ? x->rank : -1, ok = rank >= 3 && rank <= 4;
    ok = ok && spatial_arg(c, "kernel_size", 1, 2, NULL, p.kernel) &&
         spatial_arg(c, "stride", 2, 2, p.kernel, p.stride) && spatial_arg(c, "padding", 3, 2, zero, p.pad) &&
         (!with_dilation || spatial_arg(c, "dilation", 4, 2, one, p.dil));
    if (!with_dilation)
        memcpy(p.dil, one, sizeof one);
    olla_aten_int(c, "ceil_mode", with_dilation ? 5 : 4, &p.ceil_mode);
    if (ok) {
        memcpy(dims, x->dims, sizeof *dims * (size_t)rank);
        for (int d = 0; d < 2; d++) {
            olla_dim in = x->dims[rank - 2 + d];
            int64_t o = in.value >= 0 ? pooled(in.value, d, &p) : -1;
            dims[rank - 2 + d] = o >= 0 ? olla_dim_known(o) : olla_dim_unknown();
        }
    }
    olla_status st = olla_shape_set_out(c, 0, elem, ok ? rank : -1, ok ? dims : NULL);
    if (st == OLLA_OK && with_dilation && olla_shape_has_output(c, 1))
        st = olla_shape_set_out(c, 1, OLLA_DT_INT64, ok ? rank : -1, ok ? dims : NULL);
    return st;
}

static olla_status aten_max_pool2d(olla_shape_ctx *c) { return pool2d(c, 1); }
static olla_status aten_avg_pool2d(olla_shape_ctx *c) { return pool2d(c, 0); }

/* Input 0's leading dims (all but the last n), then the given sizes. */
static olla_status leading_then(olla_shape_ctx *c, int n, const int64_t *sizes, int known)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < n || !known)
        return olla_shape_set_out(c, 0, elem, x && x->rank >= n ? x->rank : -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
    for (int d = 0; d < n; d++)
        dims[x->rank - n + d] = sizes[d] >= 0 ? olla_dim_known(sizes[d]) : olla_dim_unknown();
    return olla_shape_set_out(c, 0, elem, x->rank, dims);
}

/* _adaptive_avg_pool2d(self, output_size) -> [.., oh, ow]. */
static olla_status aten_adaptive_avg_pool2d(olla_shape_ctx *c)
{
    int64_t size[2];
    return leading_then(c, 2, size, spatial_arg(c, "output_size", 1, 2, NULL, size));
}

/* upsample_nearest1d/2d/3d, upsample_bilinear2d, upsample_bicubic2d(self,
 * output_size, ..., scale_factors): [N, C] + output_size, or each spatial
 * size times its scale factor, rounded down. */
static olla_status upsample(olla_shape_ctx *c, int n)
{
    int64_t size[3];
    if (olla_aten_ints(c, "output_size", 1, size, 3) == n)
        return leading_then(c, n, size, 1);
    const float *scales;
    const olla_value_type *x = olla_shape_in(c, 0);
    int known = x && x->rank >= n && olla_shape_attr_floats(c, "scale_factors", &scales) == n;
    for (int d = 0; known && d < n; d++) {
        olla_dim in = x->dims[x->rank - n + d];
        size[d] = in.value >= 0 ? (int64_t)floor((double)in.value * (double)scales[d]) : -1;
    }
    return leading_then(c, n, size, known);
}

static olla_status aten_upsample1d(olla_shape_ctx *c) { return upsample(c, 1); }
static olla_status aten_upsample2d(olla_shape_ctx *c) { return upsample(c, 2); }
static olla_status aten_upsample3d(olla_shape_ctx *c) { return upsample(c, 3); }

/* upsample_*_backward(grad_output, output_size, input_size, ...): the
 * input_size argument, grad_output's type. */
static olla_status aten_upsample_backward(olla_shape_ctx *c)
{
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = olla_aten_size_dims(c, "input_size", 2, dims);
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), rank, rank >= 0 ? dims : NULL);
}

/* native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> out
 * (input's), mean and rstd [N, group]. */
static olla_status aten_native_group_norm(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t n, g;
    olla_dim stats[2] = {olla_dim_unknown(), olla_dim_unknown()};
    if (olla_aten_int(c, "N", 3, &n) && n >= 0)
        stats[0] = olla_dim_known(n);
    else if (x && x->rank >= 1)
        stats[0] = x->dims[0];
    if (olla_aten_int(c, "group", 6, &g) && g >= 0)
        stats[1] = olla_dim_known(g);
    olla_status st = olla_aten_like(c, 0, 0, 0);
    for (int i = 1; st == OLLA_OK && i < 3; i++)
        st = olla_shape_set_out(c, i, elem, 2, stats);
    return st;
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW,
 * group, output_mask) -> grad_input (input's), grad_weight, grad_bias [C]. */
static olla_status aten_native_group_norm_backward(olla_shape_ctx *c)
{
    int64_t ch;
    int32_t elem = olla_shape_in_elem(c, 4) ? olla_shape_in_elem(c, 4) : olla_shape_in_elem(c, 0);
    olla_dim cd = olla_aten_int(c, "C", 6, &ch) && ch >= 0 ? olla_dim_known(ch) : olla_dim_unknown();
    olla_status st = olla_aten_like(c, 0, 1, 0);
    for (int i = 1; st == OLLA_OK && i < 3; i++)
        st = olla_shape_set_out(c, i, elem, 1, &cd);
    return st;
}

static const olla_aten_rule nn_rules[] = {
    {"max_pool2d_with_indices", aten_max_pool2d},
    {"max_pool2d_with_indices_backward", olla_aten_grad_of_self},
    {"avg_pool2d", aten_avg_pool2d},
    {"avg_pool2d_backward", olla_aten_grad_of_self},
    {"_adaptive_avg_pool2d", aten_adaptive_avg_pool2d},
    {"_adaptive_avg_pool2d_backward", olla_aten_grad_of_self},
    {"upsample_nearest1d", aten_upsample1d},
    {"upsample_nearest2d", aten_upsample2d},
    {"upsample_nearest3d", aten_upsample3d},
    {"upsample_bilinear2d", aten_upsample2d},
    {"upsample_bicubic2d", aten_upsample2d},
    {"upsample_nearest1d_backward", aten_upsample_backward},
    {"upsample_nearest2d_backward", aten_upsample_backward},
    {"upsample_nearest3d_backward", aten_upsample_backward},
    {"upsample_bilinear2d_backward", aten_upsample_backward},
    {"upsample_bicubic2d_backward", aten_upsample_backward},
    {"native_group_norm", aten_native_group_norm},
    {"native_group_norm_backward", aten_native_group_norm_backward},
    {NULL, NULL}};

olla_aten_fn olla_aten_nn_rule(const char *op)
{
    for (const olla_aten_rule *r = nn_rules; r->name; r++)
        if (strcmp(r->name, op) == 0)
            return r->fn;
    return NULL;
}
