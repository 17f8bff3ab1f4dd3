/* olla-onnx: shape rules for signal processing: DFT, STFT, the window
 * generators and MelWeightMatrix. Sizes that come from scalar inputs need
 * those inputs' values (constants or folded shape arithmetic). */
#include "passes/shapes/olla_shape_dims.h"
#include "passes/shapes/olla_shape_rules.h"

/* Scalar integer value of input i, or -1 when absent or unknown. */
static int64_t scalar_int(olla_shape_ctx *c, int i)
{
    int64_t v[1];
    if (!olla_shape_has_input(c, i)) return -1;
    return olla_shape_in_ints(c, i, v, 1) == 1 ? v[0] : -1;
}

/* DFT: the last axis (real 1 / complex 2) becomes complex (2), or real (1)
 * for an inverse one-sided transform; the transformed axis becomes
 * dft_length, n/2+1 (one-sided forward) or 2*(n-1) (one-sided inverse). */
static olla_status rule_dft(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 2 || rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    int inverse = (int)olla_shape_attr_int(c, "inverse", 0);
    int onesided = (int)olla_shape_attr_int(c, "onesided", 0);
    int64_t axis;
    int axis_known = 1;
    if (olla_shape_opset(c) >= 20) {
        axis = -2;
        if (olla_shape_has_input(c, 2)) {
            axis = scalar_int(c, 2);
            if (axis == -1) {
                int64_t v[1];
                if (olla_shape_in_ints(c, 2, v, 1) != 1) axis_known = 0;
            }
        }
    } else {
        axis = olla_shape_attr_int(c, "axis", 1);
    }
    int64_t a = 0;
    if (axis_known) {
        if (axis < 0) axis += rank;
        if (axis < 0 || axis > rank - 2)
            return olla_shape_fail(c, "DFT axis %lld is out of range for rank %d", (long long)axis, rank);
        a = axis;
    }
    int64_t dft_len = scalar_int(c, 1);
    int len_pending = olla_shape_has_input(c, 1) && dft_len < 0;
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    dims[rank - 1] = olla_dim_known(inverse && onesided ? 1 : 2);
    int resized = onesided || olla_shape_has_input(c, 1);
    if (resized && !axis_known) {
        for (int i = 0; i < rank - 1; i++) dims[i] = olla_dim_unknown();
    } else if (resized) {
        olla_dim n = dft_len >= 0 ? olla_dim_known(dft_len) : x->dims[a];
        if (len_pending) n = olla_dim_unknown();
        if (onesided && !inverse)
            n = olla_dim_add(c, olla_dim_div(c, n, olla_dim_known(2)), olla_dim_known(1));
        else if (onesided && inverse && dft_len < 0)
            n = olla_dim_mul(c, olla_dim_sub(c, n, olla_dim_known(1)), olla_dim_known(2));
        dims[a] = n;
    }
    olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
    if (st == OLLA_OK && resized && !axis_known)
        olla_shape_set_unknown(c, 0, "DFT axis is the run-time value of input '%s'",
                               olla_shape_input_name(c, 2));
    else if (st == OLLA_OK && len_pending)
        olla_shape_set_unknown(c, 0, "DFT length is the run-time value of input '%s'",
                               olla_shape_input_name(c, 1));
    return st;
}

/* STFT: [batch, frames, bins, 2]. */
static olla_status rule_stft(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t step = scalar_int(c, 1);
    int64_t frame = scalar_int(c, 3);
    if (frame < 0 && !olla_shape_has_input(c, 3) && olla_shape_in_rank(c, 2) == 1 &&
        olla_dim_is_known(olla_shape_in(c, 2)->dims[0]))
        frame = olla_shape_in(c, 2)->dims[0].value;
    int onesided = (int)olla_shape_attr_int(c, "onesided", 1);
    olla_dim dims[4] = {olla_dim_unknown(), olla_dim_unknown(), olla_dim_unknown(), olla_dim_known(2)};
    const olla_value_type *x = olla_shape_in(c, 0);
    if (olla_shape_in_rank(c, 0) >= 2) dims[0] = x->dims[0];
    if (frame > 0) dims[2] = olla_dim_known(onesided ? frame / 2 + 1 : frame);
    if (frame > 0 && step > 0 && olla_shape_in_rank(c, 0) >= 2) {
        olla_dim span = olla_dim_sub(c, x->dims[1], olla_dim_known(frame));
        dims[1] = olla_dim_add(c, olla_dim_div(c, span, olla_dim_known(step)), olla_dim_known(1));
    }
    olla_status st = olla_shape_set_out(c, 0, elem, 4, dims);
    if (st == OLLA_OK && (step <= 0 || frame <= 0))
        olla_shape_set_unknown(c, 0, "STFT frame step or length is a run-time value");
    return st;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size]. */
static olla_status rule_window(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "output_datatype", OLLA_DT_FLOAT);
    olla_dim d = olla_dim_unknown();
    if (olla_shape_in_dims(c, 0, &d, 1, NULL) != 1) d = olla_dim_unknown();
    olla_status st = olla_shape_set_out(c, 0, elem, 1, &d);
    if (st == OLLA_OK && !olla_dim_is_known(d) && !d.param)
        olla_shape_set_unknown(c, 0, "window size is the run-time value of input '%s'",
                               olla_shape_input_name(c, 0));
    return st;
}

/* MelWeightMatrix: [dft_length/2 + 1, num_mel_bins]. */
static olla_status rule_mel(olla_shape_ctx *c)
{
    int32_t elem = (int32_t)olla_shape_attr_int(c, "output_datatype", OLLA_DT_FLOAT);
    int64_t bins = scalar_int(c, 0), len = scalar_int(c, 1);
    olla_dim d[2] = {len >= 0 ? olla_dim_known(len / 2 + 1) : olla_dim_unknown(),
                     bins >= 0 ? olla_dim_known(bins) : olla_dim_unknown()};
    olla_status st = olla_shape_set_out(c, 0, elem, 2, d);
    if (st == OLLA_OK && (bins < 0 || len < 0))
        olla_shape_set_unknown(c, 0, "mel matrix size depends on the run-time values of '%s' and '%s'",
                               olla_shape_input_name(c, 0), olla_shape_input_name(c, 1));
    return st;
}

const olla_shape_rule_entry olla_shape_rules_signal[] = {
    {"", "DFT", rule_dft},
    {"", "STFT", rule_stft},
    {"", "HannWindow", rule_window},
    {"", "HammingWindow", rule_window},
    {"", "BlackmanWindow", rule_window},
    {"", "MelWeightMatrix", rule_mel},
    {NULL, NULL, NULL}};
