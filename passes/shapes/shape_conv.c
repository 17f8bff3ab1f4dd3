/* olla-onnx: shape rules for convolutions and pooling.
 *
 * Every windowed operator shares one spatial rule: for each spatial axis,
 * with kernel k, dilation d, stride s and pads (b, e),
 *   NOTSET: out = floor((in + b + e - ((k-1)*d+1)) / s) + 1   (ceil with ceil_mode)
 *   VALID:  out = floor((in - ((k-1)*d+1)) / s) + 1
 *   SAME_*: out = ceil(in / s)
 * With ceil_mode a window that would start in the end padding is dropped.
 * Transposed convolutions and MaxUnpool invert it. */
#include <stdint.h>
#include <string.h>

#include "passes/shapes/olla_shape_dims.h"
#include "passes/shapes/olla_shape_rules.h"

/* Largest kernel, stride, dilation, pad or output size accepted; larger
 * attribute values are rejected as malformed (and keep the arithmetic below
 * far from int64 overflow). */
#define WINDOW_MAX ((int64_t)1 << 30)
/* Input sizes above this are treated as unknown for the same reason. */
#define SIZE_MAX_SAFE (INT64_MAX / 4)

typedef enum { PAD_NOTSET, PAD_VALID, PAD_SAME } pad_mode;

/* Window parameters of one node over nsp spatial axes. */
typedef struct {
    int nsp;
    int64_t k[OLLA_SHAPE_MAX_RANK];
    int64_t d[OLLA_SHAPE_MAX_RANK];
    int64_t s[OLLA_SHAPE_MAX_RANK];
    int64_t pb[OLLA_SHAPE_MAX_RANK];
    int64_t pe[OLLA_SHAPE_MAX_RANK];
    int k_known;
    pad_mode pad;
    int ceil_mode;
} window;

static olla_status read_list(olla_shape_ctx *c, const char *name, int64_t want, int64_t *out,
                             int64_t dflt)
{
    const int64_t *v = NULL;
    int64_t n = olla_shape_attr_ints(c, name, &v);
    if (n < 0) {
        for (int64_t i = 0; i < want; i++) out[i] = dflt;
        return OLLA_OK;
    }
    if (n != want)
        return olla_shape_fail(c, "attribute '%s' has %lld values, expected %lld (one per spatial axis)",
                               name, (long long)n, (long long)want);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < 0 || (dflt == 1 && v[i] < 1) || v[i] > WINDOW_MAX)
            return olla_shape_fail(c, "attribute '%s' has an invalid value %lld", name,
                                   (long long)v[i]);
        out[i] = v[i];
    }
    return OLLA_OK;
}

/* Reads kernel_shape (or the weight's spatial dims when w_input >= 0),
 * strides, dilations, pads, auto_pad and ceil_mode. */
static olla_status read_window(olla_shape_ctx *c, int nsp, int w_input, window *w)
{
    memset(w, 0, sizeof *w);
    w->nsp = nsp;
    const int64_t *ks = NULL;
    int64_t nk = olla_shape_attr_ints(c, "kernel_shape", &ks);
    if (nk >= 0) {
        if (nk != nsp)
            return olla_shape_fail(c, "attribute 'kernel_shape' has %lld values for %d spatial axes",
                                   (long long)nk, nsp);
        for (int i = 0; i < nsp; i++) {
            if (ks[i] < 1 || ks[i] > WINDOW_MAX)
                return olla_shape_fail(c, "attribute 'kernel_shape' has an invalid value %lld",
                                       (long long)ks[i]);
            w->k[i] = ks[i];
        }
        w->k_known = 1;
    } else if (w_input >= 0 && olla_shape_in_rank(c, w_input) == nsp + 2) {
        const olla_value_type *wt = olla_shape_in(c, w_input);
        w->k_known = 1;
        for (int i = 0; i < nsp; i++) {
            if (!olla_dim_is_known(wt->dims[2 + i]) || wt->dims[2 + i].value < 1 ||
                wt->dims[2 + i].value > WINDOW_MAX)
                w->k_known = 0;
            else w->k[i] = wt->dims[2 + i].value;
        }
    }
    olla_status st = read_list(c, "strides", nsp, w->s, 1);
    if (st == OLLA_OK) st = read_list(c, "dilations", nsp, w->d, 1);
    if (st != OLLA_OK) return st;
    const int64_t *p = NULL;
    int64_t np = olla_shape_attr_ints(c, "pads", &p);
    if (np >= 0) {
        if (np != 2 * nsp)
            return olla_shape_fail(c, "attribute 'pads' has %lld values, expected %d", (long long)np,
                                   2 * nsp);
        for (int i = 0; i < nsp; i++) {
            if (p[i] < 0 || p[nsp + i] < 0 || p[i] > WINDOW_MAX || p[nsp + i] > WINDOW_MAX)
                return olla_shape_fail(c, "attribute 'pads' has a negative value");
            w->pb[i] = p[i];
            w->pe[i] = p[nsp + i];
        }
    }
    const char *ap = olla_shape_attr_string(c, "auto_pad", "NOTSET");
    if (strcmp(ap, "VALID") == 0) w->pad = PAD_VALID;
    else if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) w->pad = PAD_SAME;
    else if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0') w->pad = PAD_NOTSET;
    else return olla_shape_fail(c, "attribute 'auto_pad' has the unknown value '%s'", ap);
    w->ceil_mode = (int)olla_shape_attr_int(c, "ceil_mode", 0);
    return OLLA_OK;
}

/* d + k for a constant k of either sign (dims themselves are never negative). */
static olla_dim dim_add_const(olla_shape_ctx *c, olla_dim d, int64_t k)
{
    if (olla_dim_is_known(d)) {
        if (d.value > SIZE_MAX_SAFE || k > SIZE_MAX_SAFE || k < -SIZE_MAX_SAFE) return olla_dim_unknown();
        return d.value + k >= 0 ? olla_dim_known(d.value + k) : olla_dim_unknown();
    }
    return k >= 0 ? olla_dim_add(c, d, olla_dim_known(k)) : olla_dim_sub(c, d, olla_dim_known(-k));
}

/* Output size of spatial axis i for input size in. */
static olla_dim window_out(olla_shape_ctx *c, const window *w, int i, olla_dim in)
{
    olla_dim s = olla_dim_known(w->s[i]);
    if (w->pad == PAD_SAME) return olla_dim_ceil_div(c, in, s);
    if (!w->k_known) return olla_dim_unknown();
    int64_t ek = (w->k[i] - 1) * w->d[i] + 1;
    int64_t pads = w->pad == PAD_VALID ? 0 : w->pb[i] + w->pe[i];
    if (olla_dim_is_known(in) && in.value > SIZE_MAX_SAFE) return olla_dim_unknown();
    if (olla_dim_is_known(in)) {
        int64_t span = in.value + pads - ek;
        if (span < 0) return olla_dim_unknown();
        int64_t out = (w->ceil_mode ? (span + w->s[i] - 1) / w->s[i] : span / w->s[i]) + 1;
        /* The last window must start inside the input or its begin padding. */
        if (w->ceil_mode && (out - 1) * w->s[i] >= in.value + w->pb[i]) out--;
        return olla_dim_known(out);
    }
    if (w->ceil_mode) return olla_dim_unknown(); /* the end-padding correction needs values */
    /* floor((in + pads - ek) / s) + 1 = floor((in + pads - ek + s) / s) */
    return olla_dim_div(c, dim_add_const(c, in, pads - ek + w->s[i]), s);
}

/* Sets output `out` to [N, C, spatial...] from input x. */
static olla_status set_windowed(olla_shape_ctx *c, int out, int32_t elem, int x, olla_dim ch,
                                const window *w)
{
    const olla_value_type *xt = olla_shape_in(c, x);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = w->nsp + 2;
    dims[0] = xt->dims[0];
    dims[1] = ch;
    for (int i = 0; i < w->nsp; i++) dims[2 + i] = window_out(c, w, i, xt->dims[2 + i]);
    return olla_shape_set_out(c, out, elem, rank, dims);
}

static int spatial_rank(olla_shape_ctx *c, int x)
{
    int r = olla_shape_in_rank(c, x);
    if (r < 0 || r > OLLA_SHAPE_MAX_RANK) return -1;
    return r - 2;
}

/* Conv, ConvInteger, QLinearConv, DeformConv: x at xi, weights at wi. */
static olla_status conv_like(olla_shape_ctx *c, int xi, int wi, int32_t elem)
{
    int nsp = spatial_rank(c, xi);
    if (nsp < 0) {
        int wr = olla_shape_in_rank(c, wi);
        return olla_shape_set_out(c, 0, elem, wr >= 3 ? wr : -1, NULL);
    }
    if (nsp < 1) return olla_shape_fail(c, "input %d has rank %d, expected at least 3", xi, nsp + 2);
    window w;
    olla_status st = read_window(c, nsp, wi, &w);
    if (st != OLLA_OK) return st;
    olla_dim ch = olla_dim_unknown();
    if (olla_shape_in_rank(c, wi) >= 1) ch = olla_shape_in(c, wi)->dims[0];
    return set_windowed(c, 0, elem, xi, ch, &w);
}

static olla_status rule_conv(olla_shape_ctx *c)
{
    return conv_like(c, 0, 1, olla_shape_in_elem(c, 0));
}

static olla_status rule_conv_integer(olla_shape_ctx *c)
{
    return conv_like(c, 0, 1, OLLA_DT_INT32);
}

static olla_status rule_qlinear_conv(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 7);
    if (!elem) elem = olla_shape_in_elem(c, 0);
    return conv_like(c, 0, 3, elem);
}

static olla_status rule_conv_transpose(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int nsp = spatial_rank(c, 0);
    if (nsp < 1) return olla_shape_set_out(c, 0, elem, nsp < 0 ? -1 : nsp + 2, NULL);
    window w;
    olla_status st = read_window(c, nsp, 1, &w);
    if (st != OLLA_OK) return st;
    int64_t outpad[OLLA_SHAPE_MAX_RANK];
    if ((st = read_list(c, "output_padding", nsp, outpad, 0)) != OLLA_OK) return st;
    int64_t group = olla_shape_attr_int(c, "group", 1);
    const olla_value_type *xt = olla_shape_in(c, 0);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    dims[0] = xt->dims[0];
    dims[1] = olla_dim_unknown();
    if (olla_shape_in_rank(c, 1) >= 2)
        dims[1] = olla_dim_mul(c, olla_shape_in(c, 1)->dims[1], olla_dim_known(group));
    const int64_t *os = NULL;
    int64_t nos = olla_shape_attr_ints(c, "output_shape", &os);
    if (nos >= 0) {
        /* output_shape may list the spatial axes only or all axes. */
        if (nos != nsp && nos != nsp + 2)
            return olla_shape_fail(c, "attribute 'output_shape' has %lld values for %d spatial axes",
                                   (long long)nos, nsp);
        for (int i = 0; i < nsp; i++) {
            if (os[nos - nsp + i] < 0)
                return olla_shape_fail(c, "attribute 'output_shape' has a negative value");
            dims[2 + i] = olla_dim_known(os[nos - nsp + i]);
        }
        return olla_shape_set_out(c, 0, elem, nsp + 2, dims);
    }
    for (int i = 0; i < nsp; i++) {
        olla_dim in = xt->dims[2 + i];
        if (w.pad == PAD_SAME) {
            /* The pads are chosen so that out = in * stride (output_padding
             * is part of the total padding), as the specification and ONNX's
             * reference implementation do. */
            dims[2 + i] = olla_dim_mul(c, in, olla_dim_known(w.s[i]));
            continue;
        }
        if (!w.k_known) {
            dims[2 + i] = olla_dim_unknown();
            continue;
        }
        int64_t ek = (w.k[i] - 1) * w.d[i] + 1;
        int64_t pads = w.pad == PAD_VALID ? 0 : w.pb[i] + w.pe[i];
        olla_dim t = olla_dim_mul(c, olla_dim_sub(c, in, olla_dim_known(1)), olla_dim_known(w.s[i]));
        dims[2 + i] = dim_add_const(c, t, outpad[i] + ek - pads);
    }
    return olla_shape_set_out(c, 0, elem, nsp + 2, dims);
}

static olla_status rule_pool(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int nsp = spatial_rank(c, 0);
    if (nsp < 1) {
        olla_status st = olla_shape_set_out(c, 0, elem, nsp < 0 ? -1 : nsp + 2, NULL);
        if (st == OLLA_OK && olla_shape_has_output(c, 1))
            st = olla_shape_set_out(c, 1, OLLA_DT_INT64, nsp < 0 ? -1 : nsp + 2, NULL);
        return st;
    }
    window w;
    olla_status st = read_window(c, nsp, -1, &w);
    if (st != OLLA_OK) return st;
    if (!w.k_known) return olla_shape_fail(c, "attribute 'kernel_shape' is missing");
    olla_dim ch = olla_shape_in(c, 0)->dims[1];
    st = set_windowed(c, 0, elem, 0, ch, &w);
    if (st == OLLA_OK && olla_shape_has_output(c, 1))
        st = set_windowed(c, 1, OLLA_DT_INT64, 0, ch, &w);
    return st;
}

static olla_status rule_global_pool(olla_shape_ctx *c)
{
    int rank = olla_shape_in_rank(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (rank < 2 || rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    const olla_value_type *xt = olla_shape_in(c, 0);
    dims[0] = xt->dims[0];
    dims[1] = xt->dims[1];
    for (int i = 2; i < rank; i++) dims[i] = olla_dim_known(1);
    return olla_shape_set_out(c, 0, elem, rank, dims);
}

static olla_status rule_max_unpool(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int nsp = spatial_rank(c, 0);
    if (nsp < 1) return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (olla_shape_has_input(c, 2)) {
        int64_t n = olla_shape_in_dims(c, 2, dims, OLLA_SHAPE_MAX_RANK, NULL);
        int unknown = n != nsp + 2;
        if (unknown)
            for (int i = 0; i < nsp + 2; i++) dims[i] = olla_dim_unknown();
        for (int i = 0; i < nsp + 2; i++)
            if (!olla_dim_is_known(dims[i]) && !dims[i].param) unknown = 1;
        olla_status st = olla_shape_set_out(c, 0, elem, nsp + 2, dims);
        if (unknown)
            olla_shape_set_unknown(c, 0, "output shape is the run-time value of input '%s'",
                                   olla_shape_input_name(c, 2));
        return st;
    }
    window w;
    olla_status st = read_window(c, nsp, -1, &w);
    if (st != OLLA_OK) return st;
    if (!w.k_known) return olla_shape_fail(c, "attribute 'kernel_shape' is missing");
    const olla_value_type *xt = olla_shape_in(c, 0);
    dims[0] = xt->dims[0];
    dims[1] = xt->dims[1];
    for (int i = 0; i < nsp; i++) {
        olla_dim t = olla_dim_mul(c, olla_dim_sub(c, xt->dims[2 + i], olla_dim_known(1)),
                                  olla_dim_known(w.s[i]));
        dims[2 + i] = dim_add_const(c, t, w.k[i] - w.pb[i] - w.pe[i]);
    }
    return olla_shape_set_out(c, 0, elem, nsp + 2, dims);
}

/* MaxRoiPool: [num_rois, C, pooled_h, pooled_w]. */
static olla_status rule_max_roi_pool(olla_shape_ctx *c)
{
    const int64_t *ps = NULL;
    int64_t n = olla_shape_attr_ints(c, "pooled_shape", &ps);
    if (n != 2) return olla_shape_fail(c, "attribute 'pooled_shape' must have 2 values");
    olla_dim dims[4] = {olla_dim_unknown(), olla_dim_unknown(), olla_dim_known(ps[0]),
                        olla_dim_known(ps[1])};
    if (olla_shape_in_rank(c, 1) == 2) dims[0] = olla_shape_in(c, 1)->dims[0];
    if (olla_shape_in_rank(c, 0) >= 2) dims[1] = olla_shape_in(c, 0)->dims[1];
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), 4, dims);
}

/* RoiAlign: [num_rois, C, output_height, output_width]. */
static olla_status rule_roi_align(olla_shape_ctx *c)
{
    olla_dim dims[4] = {olla_dim_unknown(), olla_dim_unknown(),
                        olla_dim_known(olla_shape_attr_int(c, "output_height", 1)),
                        olla_dim_known(olla_shape_attr_int(c, "output_width", 1))};
    if (olla_shape_in_rank(c, 1) == 2) dims[0] = olla_shape_in(c, 1)->dims[0];
    else if (olla_shape_in_rank(c, 2) == 1) dims[0] = olla_shape_in(c, 2)->dims[0];
    if (olla_shape_in_rank(c, 0) >= 2) dims[1] = olla_shape_in(c, 0)->dims[1];
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), 4, dims);
}

/* Col2Im: [N, C*prod(block), L] -> [N, C, image_shape...]. */
static olla_status rule_col2im(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t blk[OLLA_SHAPE_MAX_RANK];
    olla_dim img[OLLA_SHAPE_MAX_RANK];
    int64_t ni = olla_shape_in_dims(c, 1, img, OLLA_SHAPE_MAX_RANK - 2, NULL);
    int64_t nb = olla_shape_in_ints(c, 2, blk, OLLA_SHAPE_MAX_RANK - 2);
    int nsp = (int)ni;
    if (ni < 0) {
        olla_status st = olla_shape_set_out(c, 0, elem, -1, NULL);
        olla_shape_set_unknown(c, 0, "image shape is the run-time value of input '%s'",
                               olla_shape_input_name(c, 1));
        return st;
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    const olla_value_type *xt = olla_shape_in(c, 0);
    int xr = olla_shape_in_rank(c, 0);
    dims[0] = xr == 3 ? xt->dims[0] : olla_dim_unknown();
    dims[1] = olla_dim_unknown();
    if (xr == 3 && nb == nsp) {
        int64_t prod = 1;
        for (int i = 0; i < nsp; i++) {
            if (blk[i] < 1 || blk[i] > WINDOW_MAX || prod > WINDOW_MAX)
                return olla_shape_fail(c, "block shape value %lld is invalid", (long long)blk[i]);
            prod *= blk[i];
        }
        dims[1] = olla_dim_div(c, xt->dims[1], olla_dim_known(prod));
    }
    int img_unknown = 0;
    for (int i = 0; i < nsp; i++) {
        dims[2 + i] = img[i];
        if (!olla_dim_is_known(img[i]) && !img[i].param) img_unknown = 1;
    }
    olla_status st = olla_shape_set_out(c, 0, elem, nsp + 2, dims);
    if (img_unknown)
        olla_shape_set_unknown(c, 0, "image shape is the run-time value of input '%s'",
                               olla_shape_input_name(c, 1));
    else if (nb != nsp)
        olla_shape_set_unknown(c, 0, "block shape is the run-time value of input '%s'",
                               olla_shape_input_name(c, 2));
    return st;
}

static olla_status rule_deform_conv(olla_shape_ctx *c)
{
    return conv_like(c, 0, 1, olla_shape_in_elem(c, 0));
}

const olla_shape_rule_entry olla_shape_rules_conv[] = {
    {"", "Conv", rule_conv},
    {"com.microsoft", "FusedConv", rule_conv},
    {"", "ConvInteger", rule_conv_integer},
    {"", "QLinearConv", rule_qlinear_conv},
    {"", "DeformConv", rule_deform_conv},
    {"", "ConvTranspose", rule_conv_transpose},
    {"", "MaxPool", rule_pool},
    {"", "AveragePool", rule_pool},
    {"", "LpPool", rule_pool},
    {"", "GlobalAveragePool", rule_global_pool},
    {"", "GlobalMaxPool", rule_global_pool},
    {"", "GlobalLpPool", rule_global_pool},
    {"", "MaxUnpool", rule_max_unpool},
    {"", "MaxRoiPool", rule_max_roi_pool},
    {"", "RoiAlign", rule_roi_align},
    {"", "Col2Im", rule_col2im},
    {NULL, NULL, NULL}};
