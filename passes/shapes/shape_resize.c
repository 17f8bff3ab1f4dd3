/* olla-onnx: shape rules for Resize and Upsample.
 * With sizes: out[a] = sizes[a] (or, with keep_aspect_ratio_policy, one scale
 * min/max(sizes[a]/in[a]) applied to every listed axis, rounded half up).
 * With scales: out[a] = floor(in[a] * scales[a]).
 * scales/sizes must be known at inference time (initializer, Constant, or
 * folded shape arithmetic; sizes may hold symbolic dims taken from Shape);
 * otherwise the resized axes are unknown. */
#include <math.h>
#include <string.h>

#include "passes/shapes/olla_shape_dims.h"
#include "passes/shapes/olla_shape_rules.h"

/* Output sizes at or above this are treated as unknown (no int64 overflow). */
#define MAX_OUT 4.0e18

/* Resized shape of input 0. scales (n_scales entries, or -1 when not
 * given), sizes likewise (sizes_known: every entry is a known size); the
 * 'axes' attribute lists the axes they apply to. param_input names the input
 * whose run-time value is missing, or is -1. */
static olla_status resize_out(olla_shape_ctx *c, const double *scales, int64_t n_scales,
                              const olla_dim *sizes, int64_t n_sizes, int sizes_known, int param_input)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 0 || rank > OLLA_SHAPE_MAX_RANK) {
        olla_status st = olla_shape_set_out(c, 0, elem, -1, NULL);
        return st;
    }
    const olla_value_type *x = olla_shape_in(c, 0);
    int64_t axes[OLLA_SHAPE_MAX_RANK];
    const int64_t *av = NULL;
    int64_t n_axes = olla_shape_attr_ints(c, "axes", &av);
    if (n_axes < 0) {
        n_axes = rank;
        for (int i = 0; i < rank; i++) axes[i] = i;
    } else {
        if (n_axes > rank) return olla_shape_fail(c, "attribute 'axes' has more entries than the rank");
        for (int64_t i = 0; i < n_axes; i++)
            if (!olla_shape_axis(av[i], rank, &axes[i]))
                return olla_shape_fail(c, "attribute 'axes' value %lld is out of range for rank %d",
                                       (long long)av[i], rank);
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    if (n_sizes >= 0) {
        if (n_sizes != n_axes)
            return olla_shape_fail(c, "'sizes' has %lld values for %lld axes", (long long)n_sizes,
                                   (long long)n_axes);
        const char *pol = olla_shape_attr_string(c, "keep_aspect_ratio_policy", "stretch");
        if (strcmp(pol, "stretch") == 0) {
            for (int64_t i = 0; i < n_axes; i++) dims[axes[i]] = sizes[i];
        } else {
            int larger = strcmp(pol, "not_smaller") == 0;
            if (!larger && strcmp(pol, "not_larger") != 0)
                return olla_shape_fail(c, "attribute 'keep_aspect_ratio_policy' has the unknown value '%s'", pol);
            double scale = larger ? 0.0 : INFINITY;
            int known = sizes_known;
            for (int64_t i = 0; i < n_axes; i++) {
                olla_dim d = x->dims[axes[i]];
                if (!olla_dim_is_known(d) || d.value == 0) {
                    known = 0;
                    break;
                }
                double s = (double)sizes[i].value / (double)d.value;
                scale = larger ? fmax(scale, s) : fmin(scale, s);
            }
            for (int64_t i = 0; i < n_axes; i++) {
                double v = known ? floor(scale * (double)x->dims[axes[i]].value + 0.5) : -1.0;
                dims[axes[i]] = v >= 0 && v < MAX_OUT ? olla_dim_known((int64_t)v) : olla_dim_unknown();
            }
        }
        int unknown = 0; /* symbolic sizes are fine: bindings resolve them */
        for (int64_t i = 0; i < n_axes; i++)
            if (dims[axes[i]].value < 0 && !dims[axes[i]].param) unknown = 1;
        olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
        if (st == OLLA_OK && unknown && !sizes_known && param_input >= 0)
            olla_shape_set_unknown(c, 0, "output size depends on the run-time value of input '%s'",
                                   olla_shape_input_name(c, param_input));
        return st;
    }
    if (n_scales >= 0) {
        if (n_scales != n_axes)
            return olla_shape_fail(c, "'scales' has %lld values for %lld axes", (long long)n_scales,
                                   (long long)n_axes);
        for (int64_t i = 0; i < n_axes; i++) {
            olla_dim d = x->dims[axes[i]];
            if (!(scales[i] > 0) || scales[i] > MAX_OUT)
                return olla_shape_fail(c, "scale %g is not a positive finite number", scales[i]);
            if (scales[i] == 1.0) continue;
            if (olla_dim_is_known(d)) {
                double v = floor((double)d.value * scales[i]);
                dims[axes[i]] = v < MAX_OUT ? olla_dim_known((int64_t)v) : olla_dim_unknown();
            } else if (scales[i] == floor(scales[i]) && scales[i] < 1e9) {
                dims[axes[i]] = olla_dim_mul(c, d, olla_dim_known((int64_t)scales[i]));
            } else {
                dims[axes[i]] = olla_dim_unknown();
            }
        }
        return olla_shape_set_out(c, 0, elem, rank, dims);
    }
    /* Not known: the resized axes are unknown, the others keep their size. */
    for (int64_t i = 0; i < n_axes; i++) dims[axes[i]] = olla_dim_unknown();
    olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
    if (param_input >= 0)
        olla_shape_set_unknown(c, 0, "output size depends on the run-time value of input '%s'",
                               olla_shape_input_name(c, param_input));
    return st;
}

/* 1 when input i is statically an empty tensor (opset 11-12 pass an empty
 * scales tensor when sizes is used). */
static int static_empty(olla_shape_ctx *c, int i)
{
    const olla_value_type *t = olla_shape_in(c, i);
    return t && t->rank == 1 && olla_dim_is_known(t->dims[0]) && t->dims[0].value == 0;
}

/* Reads input i as floats: the count (-1 when absent, empty or unknown);
 * *pending is set to i when present, non-empty and unknown. */
static int64_t read_scales(olla_shape_ctx *c, int i, double *out, int *pending)
{
    if (!olla_shape_has_input(c, i)) return -1;
    int64_t n = olla_shape_in_floats(c, i, out, OLLA_SHAPE_MAX_RANK);
    if (n < 0 && !static_empty(c, i)) *pending = i;
    return n > 0 ? n : -1;
}

static olla_status rule_resize(olla_shape_ctx *c)
{
    int64_t opset = olla_shape_opset(c);
    double scales[OLLA_SHAPE_MAX_RANK];
    olla_dim sizes[OLLA_SHAPE_MAX_RANK];
    int pending = -1, sizes_known = 0;
    int64_t ns = -1, nz = -1;
    if (opset > 0 && opset < 11) {
        ns = read_scales(c, 1, scales, &pending);
    } else {
        if (olla_shape_has_input(c, 3) && !static_empty(c, 3)) {
            int64_t iv[OLLA_SHAPE_MAX_RANK];
            nz = olla_shape_in_ints(c, 3, iv, OLLA_SHAPE_MAX_RANK);
            for (int64_t i = 0; i < nz; i++) {
                if (iv[i] < 0) return olla_shape_fail(c, "'sizes' has a negative value %lld", (long long)iv[i]);
                sizes[i] = olla_dim_known(iv[i]);
            }
            sizes_known = nz >= 0;
            if (nz < 0) {
                /* Partly known, e.g. Concat(Shape(x)[:2], [h, w]) with a symbolic batch. */
                nz = olla_shape_in_dims(c, 3, sizes, OLLA_SHAPE_MAX_RANK, NULL);
                pending = 3;
            }
            if (nz == 0) nz = -1;
        }
        if (nz < 0 && pending < 0) ns = read_scales(c, 2, scales, &pending);
    }
    return resize_out(c, scales, ns, sizes, nz, sizes_known, pending);
}

static olla_status rule_upsample(olla_shape_ctx *c)
{
    double scales[OLLA_SHAPE_MAX_RANK];
    int64_t ns = -1;
    int pending = -1;
    const float *fv = NULL;
    int64_t na = olla_shape_attr_floats(c, "scales", &fv);
    if (na >= 0) {
        if (na > OLLA_SHAPE_MAX_RANK) return olla_shape_fail(c, "attribute 'scales' is too long");
        for (int64_t i = 0; i < na; i++) scales[i] = fv[i];
        ns = na;
    } else if (olla_shape_has_input(c, 1)) {
        ns = read_scales(c, 1, scales, &pending);
    } else if (olla_shape_attr_has(c, "width_scale") || olla_shape_attr_has(c, "height_scale")) {
        /* Upsample-1: NCHW with height_scale and width_scale. */
        ns = 4;
        scales[0] = scales[1] = 1.0;
        scales[2] = olla_shape_attr_float(c, "height_scale", 1.0);
        scales[3] = olla_shape_attr_float(c, "width_scale", 1.0);
    }
    return resize_out(c, scales, ns > 0 ? ns : -1, NULL, -1, 0, pending);
}

const olla_shape_rule_entry olla_shape_rules_resize[] = {
    {"", "Resize", rule_resize},
    {"", "Upsample", rule_upsample},
    {NULL, NULL, NULL}};
