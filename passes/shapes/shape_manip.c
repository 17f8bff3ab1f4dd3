/* olla-onnx: shape rules for shape manipulation and data movement: Shape,
 * Size, Reshape, Expand, Squeeze, Unsqueeze, Flatten, Concat, Split, Slice,
 * Gather*, Transpose, Tile, Pad, ConstantOfShape, Constant, Range, Cast,
 * CastLike, Identity, EyeLike, Trilu, OneHot, Scatter*, CumSum,
 * ReverseSequence, DepthToSpace, SpaceToDepth, Compress. Small integer values
 * are folded so that shape arithmetic (Shape -> Gather -> Concat -> Reshape)
 * yields static or symbolic shapes. */
#include <math.h>
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

#define BIG_END (INT64_MAX / 4)

static int is_float_type(int32_t t)
{
    return t == OLLA_DT_FLOAT || t == OLLA_DT_DOUBLE || t == OLLA_DT_FLOAT16 || t == OLLA_DT_BFLOAT16;
}

/* Integer list from an attribute (opset < since) or an input (>= since). */
static int64_t ints_attr_or_input(olla_shape_ctx *c, const char *attr, int input, int64_t since, int64_t *out,
                                  int64_t max, int *known)
{
    *known = 1;
    if (olla_shape_opset(c) < since) {
        const int64_t *v;
        int64_t n = olla_shape_attr_ints(c, attr, &v);
        if (n > max)
            n = max;
        for (int64_t k = 0; k < n; k++)
            out[k] = v[k];
        return n;
    }
    if (!olla_shape_has_input(c, input))
        return -1;
    int64_t n = olla_shape_in_ints(c, input, out, max);
    if (n < 0)
        *known = 0;
    return n;
}

static int64_t static_count(const olla_value_type *t)
{
    if (!t || t->rank < 0)
        return -1;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d].value < 0 || t->dims[d].value > OLLA_SHAPE_MAX_VALUE)
            return -1;
        n *= t->dims[d].value;
        if (n > OLLA_SHAPE_MAX_VALUE)
            return -1;
    }
    return n;
}

/* Records that output 0 depends on the run-time value of input i. */
static void runtime_input(olla_shape_ctx *c, int i)
{
    olla_shape_set_unknown(c, 0, "depends on the run-time value of input '%s'",
                           olla_shape_has_input(c, i) ? olla_shape_input_name(c, i) : "?");
}

/* Output 0 would have more dims than the table holds: unknown rank. */
static olla_status too_many_dims(olla_shape_ctx *c, int32_t elem)
{
    olla_shape_set_unknown(c, 0, "the result has more than %d dimensions, which is not supported", OLLA_SHAPE_MAX_RANK);
    return olla_shape_set_out(c, 0, elem, -1, NULL);
}

/* Length of 1-D input i from its static shape, or -1. */
static int64_t in_len(const olla_shape_ctx *c, int i)
{
    const olla_value_type *t = olla_shape_in(c, i);
    if (!t || t->rank > 1 || t->rank < 0)
        return -1;
    return t->rank == 0 ? 1 : t->dims[0].value;
}

/* Same elements, new shape (Reshape, Squeeze, Unsqueeze, Flatten, Identity). */
static olla_status keep_value(olla_shape_ctx *c, int out, int in)
{
    const olla_shape_value *v = olla_shape_in_value(c, in);
    return v ? olla_shape_set_out_value(c, out, v->e, v->n) : OLLA_OK;
}

/* ---- Shape, Size ---- */

static olla_status rule_shape(olla_shape_ctx *c)
{
    int r = olla_shape_in_rank(c, 0);
    if (r < 0) {
        olla_dim u = olla_dim_unknown();
        return olla_shape_set_out(c, 0, OLLA_DT_INT64, 1, &u);
    }
    int64_t start = olla_shape_attr_int(c, "start", 0), end = olla_shape_attr_int(c, "end", r);
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t n = end > start ? end - start : 0;
    olla_dim d = olla_dim_known(n);
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 1, &d);
    olla_sval e[OLLA_SHAPE_MAX_RANK];
    const olla_value_type *x = olla_shape_in(c, 0);
    for (int64_t k = 0; k < n; k++)
        e[k] = olla_sval_of_dim(x->dims[start + k]);
    return st == OLLA_OK ? olla_shape_set_out_value(c, 0, e, n) : st;
}

static olla_status rule_size(olla_shape_ctx *c)
{
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 0, NULL);
    if (st != OLLA_OK || !olla_shape_in(c, 0))
        return st;
    olla_sval e = olla_sval_of_dim(olla_shape_numel(c, olla_shape_in(c, 0)));
    return olla_shape_set_out_value(c, 0, &e, 1);
}

/* ---- Reshape ---- */

static olla_status rule_reshape(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    olla_sval *tv = NULL;
    int64_t n = -1;
    if (olla_shape_opset(c) < 5) {
        const int64_t *s;
        n = olla_shape_attr_ints(c, "shape", &s);
        if (n > OLLA_SHAPE_MAX_RANK)
            return too_many_dims(c, elem);
        if (n >= 0) {
            tv = olla_shape_scratch(c, sizeof *tv * (size_t)(n + 1));
            if (!tv)
                return OLLA_ERR_INTERNAL;
            for (int64_t k = 0; k < n; k++)
                tv[k] = olla_sval_int(s[k]);
        }
    } else {
        const olla_shape_value *v = olla_shape_in_value(c, 1);
        if (v) {
            n = v->n;
            tv = (olla_sval *)v->e;
        } else {
            const olla_value_type *st = olla_shape_in(c, 1);
            runtime_input(c, 1);
            if (st && st->rank == 1 && st->dims[0].value >= 0 && st->dims[0].value <= OLLA_SHAPE_MAX_RANK)
                return olla_shape_set_out(c, 0, elem, (int)st->dims[0].value, NULL);
            return olla_shape_set_out(c, 0, elem, -1, NULL);
        }
    }
    if (n < 0 || n > OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int allowzero = (int)olla_shape_attr_int(c, "allowzero", 0);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int infer = -1;
    for (int64_t k = 0; k < n; k++) {
        olla_sval s = tv[k];
        if (s.state == OLLA_SV_KNOWN && s.i == -1) {
            if (infer >= 0)
                return olla_shape_fail(c, "more than one -1 in the target shape");
            infer = (int)k;
            dims[k] = olla_dim_unknown();
        } else if (s.state == OLLA_SV_KNOWN && s.i == 0 && !allowzero) {
            dims[k] = x && x->rank > k ? x->dims[k] : olla_dim_unknown();
        } else if (s.state == OLLA_SV_KNOWN && s.i < -1) {
            return olla_shape_fail(c, "target shape entry %lld is invalid", (long long)s.i);
        } else {
            dims[k] = olla_dim_of_sval(s);
        }
    }
    if (infer >= 0 && x) {
        olla_dim rest = olla_dim_known(1);
        for (int64_t k = 0; k < n; k++)
            if (k != infer)
                rest = olla_dim_mul(c, rest, dims[k]);
        olla_dim total = olla_shape_numel(c, x);
        if (total.value >= 0 && rest.value > 0 && total.value % rest.value != 0)
            return olla_shape_fail(c, "cannot reshape %lld elements into the target shape", (long long)total.value);
        dims[infer] = olla_dim_div(c, total, rest);
    }
    olla_status st = olla_shape_set_out(c, 0, elem, (int)n, dims);
    return st == OLLA_OK ? keep_value(c, 0, 0) : st;
}

/* ---- Expand ---- */

static olla_status rule_expand(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    const olla_shape_value *v = olla_shape_in_value(c, 1);
    if (!v || !x || x->rank < 0) {
        const olla_value_type *s = olla_shape_in(c, 1);
        if (!v)
            runtime_input(c, 1);
        if (s && s->rank == 1 && s->dims[0].value >= 0 && x && x->rank >= 0) {
            int64_t r = s->dims[0].value > x->rank ? s->dims[0].value : x->rank;
            if (r <= OLLA_SHAPE_MAX_RANK)
                return olla_shape_set_out(c, 0, elem, (int)r, NULL);
        }
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    }
    if (v->n > OLLA_SHAPE_MAX_RANK)
        return too_many_dims(c, elem);
    int r = (int)(v->n > x->rank ? v->n : x->rank);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int ix = d - (r - x->rank), is = d - (r - (int)v->n);
        olla_dim a = ix >= 0 ? x->dims[ix] : olla_dim_known(1);
        olla_dim b = is >= 0 ? olla_dim_of_sval(v->e[is]) : olla_dim_known(1);
        if (a.value == 1)
            dims[d] = b;
        else if (b.value == 1)
            dims[d] = a;
        else if (a.value >= 0 && b.value >= 0 && a.value != b.value)
            return olla_shape_fail(c, "cannot expand dimension %lld to %lld", (long long)a.value, (long long)b.value);
        else if (a.value >= 0)
            dims[d] = a;
        else if (b.value >= 0)
            dims[d] = b;
        else if (olla_dim_equal(a, b))
            dims[d] = a;
        else
            dims[d] = olla_dim_unknown();
    }
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    const olla_shape_value *xv = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !xv)
        return st;
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, r, dims, OLLA_SRC_INFERRED};
    int64_t n = static_count(&ot);
    if (n < 0)
        return OLLA_OK;
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(n + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    for (int64_t k = 0; k < n; k++)
        e[k] = xv->e[olla_shape_bcast_index(x, &ot, k)];
    return olla_shape_set_out_value(c, 0, e, n);
}

/* ---- Squeeze, Unsqueeze, Flatten ---- */

static olla_status rule_squeeze(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t axes[OLLA_SHAPE_MAX_RANK];
    int known;
    int64_t n = ints_attr_or_input(c, "axes", 1, 13, axes, OLLA_SHAPE_MAX_RANK, &known);
    if (!known)
        runtime_input(c, 1);
    if (!x || x->rank < 0 || !known) {
        int64_t len = known ? -1 : in_len(c, 1);
        return olla_shape_set_out(c, 0, elem, x && x->rank >= len && len >= 0 ? (int)(x->rank - len) : -1, NULL);
    }
    int drop[OLLA_SHAPE_MAX_RANK] = {0};
    if (n < 0) {
        for (int d = 0; d < x->rank; d++) {
            if (x->dims[d].value < 0)
                return olla_shape_set_out(c, 0, elem, -1, NULL);
            drop[d] = x->dims[d].value == 1;
        }
    } else {
        for (int64_t k = 0; k < n; k++) {
            int64_t a;
            if (!olla_shape_axis(axes[k], x->rank, &a))
                return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axes[k], x->rank);
            if (x->dims[a].value >= 0 && x->dims[a].value != 1)
                return olla_shape_fail(c, "cannot squeeze axis %lld of size %lld", (long long)a,
                                       (long long)x->dims[a].value);
            drop[a] = 1;
        }
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!drop[d])
            dims[r++] = x->dims[d];
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    return st == OLLA_OK ? keep_value(c, 0, 0) : st;
}

static olla_status rule_unsqueeze(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t axes[OLLA_SHAPE_MAX_RANK];
    int known;
    int64_t n = ints_attr_or_input(c, "axes", 1, 13, axes, OLLA_SHAPE_MAX_RANK, &known);
    if (!known)
        runtime_input(c, 1);
    if (!x || x->rank < 0 || !known || n < 0) {
        int64_t len = known ? -1 : in_len(c, 1);
        return olla_shape_set_out(c, 0, elem,
                                  x && x->rank >= 0 && len >= 0 && x->rank + len <= OLLA_SHAPE_MAX_RANK
                                      ? (int)(x->rank + len)
                                      : -1,
                                  NULL);
    }
    int r = x->rank + (int)n;
    if (r > OLLA_SHAPE_MAX_RANK)
        return olla_shape_fail(c, "result rank %d is too large", r);
    int ins[OLLA_SHAPE_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        int64_t a;
        if (!olla_shape_axis(axes[k], r, &a) || ins[a])
            return olla_shape_fail(c, "axis %lld is out of range or repeated", (long long)axes[k]);
        ins[a] = 1;
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0, s = 0; d < r; d++)
        dims[d] = ins[d] ? olla_dim_known(1) : x->dims[s++];
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    return st == OLLA_OK ? keep_value(c, 0, 0) : st;
}

static olla_status rule_flatten(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    olla_dim dims[2];
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, 2, NULL);
    int64_t axis = olla_shape_attr_int(c, "axis", 1), a;
    if (axis == x->rank)
        a = axis;
    else if (!olla_shape_axis(axis, x->rank, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    dims[0] = olla_dim_known(1);
    dims[1] = olla_dim_known(1);
    for (int d = 0; d < x->rank; d++)
        dims[d < a ? 0 : 1] = olla_dim_mul(c, dims[d < a ? 0 : 1], x->dims[d]);
    olla_status st = olla_shape_set_out(c, 0, elem, 2, dims);
    return st == OLLA_OK ? keep_value(c, 0, 0) : st;
}

/* ---- Concat ---- */

static olla_status rule_concat(olla_shape_ctx *c)
{
    int n_in = olla_shape_n_inputs(c), r = -1;
    int32_t elem = 0;
    for (int k = 0; k < n_in; k++) {
        if (!elem)
            elem = olla_shape_in_elem(c, k);
        if (r < 0)
            r = olla_shape_in_rank(c, k);
    }
    if (r < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int64_t axis = olla_shape_attr_int(c, "axis", olla_shape_opset(c) < 4 ? 1 : 0), a;
    if (!olla_shape_axis(axis, r, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, r);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < r; d++)
        dims[d] = d == a ? olla_dim_known(0) : olla_dim_unknown();
    for (int k = 0; k < n_in; k++) {
        const olla_value_type *t = olla_shape_in(c, k);
        if (!t)
            continue;
        if (t->rank < 0) {
            dims[a] = olla_dim_unknown();
            continue;
        }
        if (t->rank != r)
            return olla_shape_fail(c, "inputs have ranks %d and %d", r, t->rank);
        for (int d = 0; d < r; d++) {
            if (d == a) {
                if (dims[a].value >= 0 || dims[a].param)
                    dims[a] = olla_dim_add(c, dims[a], t->dims[d]);
            } else if (dims[d].value < 0 && (t->dims[d].value >= 0 || !dims[d].param)) {
                dims[d] = t->dims[d];
            }
        }
    }
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    if (st != OLLA_OK)
        return st;
    /* fold */
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, r, dims, OLLA_SRC_INFERRED};
    int64_t total = static_count(&ot);
    if (total < 0)
        return OLLA_OK;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < a)
            outer *= dims[d].value;
        else if (d > a)
            inner *= dims[d].value;
    }
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(total + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    int64_t at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int k = 0; k < n_in; k++) {
            if (!olla_shape_has_input(c, k))
                continue;
            const olla_shape_value *v = olla_shape_in_value(c, k);
            const olla_value_type *t = olla_shape_in(c, k);
            if (!v || t->dims[a].value < 0)
                return OLLA_OK;
            int64_t chunk = t->dims[a].value * inner;
            if (at + chunk > total || (o + 1) * chunk > v->n)
                return OLLA_OK;
            memcpy(e + at, v->e + o * chunk, sizeof *e * (size_t)chunk);
            at += chunk;
        }
    return at == total ? olla_shape_set_out_value(c, 0, e, total) : OLLA_OK;
}

/* ---- Split ---- */

static olla_status rule_split(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int n_out = olla_shape_n_outputs(c);
    if (!x || x->rank < 0) {
        for (int i = 0; i < n_out; i++)
            olla_shape_set_out(c, i, elem, -1, NULL);
        return OLLA_OK;
    }
    int64_t axis = olla_shape_attr_int(c, "axis", 0), a;
    if (!olla_shape_axis(axis, x->rank, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    int64_t sizes[256];
    int known = 1;
    int64_t ns = -1;
    if (olla_shape_opset(c) < 13) {
        const int64_t *v;
        ns = olla_shape_attr_ints(c, "split", &v);
        if (ns < 0 && olla_shape_opset(c) < 2 && olla_shape_has_input(c, 1))
            ns = olla_shape_in_ints(c, 1, sizes, 256), known = ns >= 0;
        else
            for (int64_t k = 0; k < ns && k < 256; k++)
                sizes[k] = v[k];
    } else if (olla_shape_has_input(c, 1)) {
        ns = olla_shape_in_ints(c, 1, sizes, 256);
        known = ns >= 0;
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
    olla_dim whole = x->dims[a];
    for (int i = 0; i < n_out; i++) {
        olla_dim d = olla_dim_unknown();
        if (!known) {
            d = olla_dim_unknown();
            olla_shape_set_unknown(c, i, "split sizes are the run-time value of input '%s'",
                                   olla_shape_input_name(c, 1));
        } else if (ns >= 0) {
            if (ns != n_out)
                return olla_shape_fail(c, "split has %lld entries for %d outputs", (long long)ns, n_out);
            d = olla_dim_known(sizes[i]);
        } else if (olla_shape_attr_has(c, "num_outputs")) {
            int64_t k = olla_shape_attr_int(c, "num_outputs", n_out);
            if (k <= 0)
                return olla_shape_fail(c, "num_outputs must be positive");
            olla_dim chunk = olla_dim_ceil_div(c, whole, olla_dim_known(k));
            if (whole.value >= 0 && chunk.value >= 0) {
                int64_t left = whole.value - chunk.value * i;
                d = olla_dim_known(left < chunk.value ? (left > 0 ? left : 0) : chunk.value);
            } else if (i < n_out - 1) {
                d = chunk;
            }
        } else {
            if (whole.value >= 0 && whole.value % n_out != 0)
                return olla_shape_fail(c, "dimension %lld cannot be split evenly into %d outputs",
                                       (long long)whole.value, n_out);
            d = olla_dim_div(c, whole, olla_dim_known(n_out));
        }
        dims[a] = d;
        olla_status st = olla_shape_set_out(c, i, elem, x->rank, dims);
        if (st != OLLA_OK)
            return st;
    }
    return OLLA_OK;
}

/* ---- Slice ---- */

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The bounds of a Slice as given: each list and its length (na and nst -1
 * when absent). */
typedef struct slice_bounds {
    int64_t starts[OLLA_SHAPE_MAX_RANK], ends[OLLA_SHAPE_MAX_RANK], axes[OLLA_SHAPE_MAX_RANK],
        steps[OLLA_SHAPE_MAX_RANK];
    int64_t ns, ne, na, nst;
} slice_bounds;

/* What a Slice does to each axis of its input: the output dimension, the
 * first index taken and the step (start -1: a symbolic axis), and whether
 * it is sliced at all. */
typedef struct slice_axes {
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int64_t start[OLLA_SHAPE_MAX_RANK], step[OLLA_SHAPE_MAX_RANK];
    int sliced[OLLA_SHAPE_MAX_RANK];
} slice_axes;

/* Reads the bounds of a Slice over a rank-r input: attributes before opset
 * 10, inputs from then on. *known is 0 when an input is a run-time value. */
static olla_status slice_read(olla_shape_ctx *c, int r, slice_bounds *b, int *known)
{
    b->na = b->nst = -1;
    *known = 1;
    if (olla_shape_opset(c) < 10) {
        const int64_t *s, *e, *ax;
        b->ns = olla_shape_attr_ints(c, "starts", &s);
        b->ne = olla_shape_attr_ints(c, "ends", &e);
        b->na = olla_shape_attr_ints(c, "axes", &ax);
        if (b->ns < 0 || b->ne < 0 || b->ns > r || b->ne > r || b->na > r)
            return olla_shape_fail(c, "starts and ends are required with at most one entry per axis");
        for (int64_t k = 0; k < b->ns; k++) {
            b->starts[k] = s[k];
            b->ends[k] = e[k];
        }
        for (int64_t k = 0; k < b->na; k++)
            b->axes[k] = ax[k];
        return OLLA_OK;
    }
    b->ns = olla_shape_in_ints(c, 1, b->starts, OLLA_SHAPE_MAX_RANK);
    b->ne = olla_shape_in_ints(c, 2, b->ends, OLLA_SHAPE_MAX_RANK);
    if (olla_shape_has_input(c, 3)) {
        b->na = olla_shape_in_ints(c, 3, b->axes, OLLA_SHAPE_MAX_RANK);
        *known &= b->na >= 0;
    }
    if (olla_shape_has_input(c, 4)) {
        b->nst = olla_shape_in_ints(c, 4, b->steps, OLLA_SHAPE_MAX_RANK);
        *known &= b->nst >= 0;
    }
    *known &= b->ns >= 0 && b->ne >= 0;
    return OLLA_OK;
}

/* A Slice whose bounds are run-time values: the rank kept, the sliced axes
 * unknown (every axis when the axes are not known either). */
static olla_status slice_unknown(olla_shape_ctx *c, const olla_value_type *x, int32_t elem)
{
    int r = x->rank;
    olla_shape_set_unknown(c, 0, "the slice bounds are run-time values");
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int64_t ax2[OLLA_SHAPE_MAX_RANK];
    int64_t n2 = olla_shape_has_input(c, 3) ? olla_shape_in_ints(c, 3, ax2, OLLA_SHAPE_MAX_RANK) : -1;
    for (int d = 0; d < r; d++)
        dims[d] = n2 >= 0 ? x->dims[d] : olla_dim_unknown();
    for (int64_t k = 0; k < n2; k++) {
        int64_t a;
        if (olla_shape_axis(ax2[k], r, &a))
            dims[a] = olla_dim_unknown();
    }
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* The length of the slice from s to e (exclusive) by step over a known
 * dimension n, the bounds clamped as ONNX says; *first the index it starts at. */
static int64_t slice_len(int64_t n, int64_t s, int64_t e, int64_t step, int64_t *first)
{
    if (s < 0)
        s += n;
    if (e < 0)
        e += n;
    if (step > 0) {
        s = clampi(s, 0, n);
        e = clampi(e, 0, n);
    } else {
        s = clampi(s, 0, n - 1);
        e = clampi(e, -1, n - 1);
    }
    *first = s;
    if (step > 0)
        return e > s ? (e - s - 1) / step + 1 : 0;
    return s > e ? (step == INT64_MIN ? 1 : (s - e - 1) / (-step) + 1) : 0;
}

/* Each axis of x under the bounds b, into ax. */
static olla_status slice_apply(olla_shape_ctx *c, const olla_value_type *x, const slice_bounds *b, slice_axes *ax)
{
    int r = x->rank;
    memcpy(ax->dims, x->dims, sizeof *ax->dims * (size_t)r);
    for (int d = 0; d < r; d++) {
        ax->start[d] = 0;
        ax->step[d] = 1;
        ax->sliced[d] = 0;
    }
    for (int64_t k = 0; k < b->ns; k++) {
        int64_t a;
        if (!olla_shape_axis(b->na >= 0 ? b->axes[k] : k, r, &a))
            return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)(b->na >= 0 ? b->axes[k] : k),
                                   r);
        int64_t step = b->nst >= 0 ? b->steps[k] : 1;
        if (step == 0)
            return olla_shape_fail(c, "step 0 is not allowed");
        ax->sliced[a] = 1;
        olla_dim dim = x->dims[a];
        int64_t s = b->starts[k], e = b->ends[k];
        if (dim.value < 0) {
            /* symbolic: the common whole-range and offset cases */
            if (step == 1 && s >= 0 && e >= BIG_END)
                ax->dims[a] = olla_dim_sub(c, dim, olla_dim_known(s));
            else if (step == 1 && s < 0 && e >= BIG_END)
                ax->dims[a] = olla_dim_known(-s);
            else
                ax->dims[a] = olla_dim_unknown();
            ax->start[a] = -1;
            continue;
        }
        ax->dims[a] = olla_dim_known(slice_len(dim.value, s, e, step, &ax->start[a]));
        ax->step[a] = step;
    }
    return OLLA_OK;
}

/* The output's values from x's (input 0's value), when both are small and
 * every sliced axis is known. */
static olla_status slice_values(olla_shape_ctx *c, const olla_value_type *x, int32_t elem, slice_axes *ax)
{
    int r = x->rank;
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (!v)
        return OLLA_OK;
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, r, ax->dims, OLLA_SRC_INFERRED};
    int64_t total = static_count(&ot);
    if (total < 0 || static_count(x) < 0)
        return OLLA_OK;
    for (int d = 0; d < r; d++)
        if (ax->sliced[d] && ax->start[d] < 0)
            return OLLA_OK;
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(total + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    for (int64_t k = 0; k < total; k++) {
        int64_t rem = k, src = 0, stride = 1;
        for (int d = r - 1; d >= 0; d--) {
            int64_t coord = rem % ax->dims[d].value;
            rem /= ax->dims[d].value;
            src += (ax->start[d] + coord * ax->step[d]) * stride;
            stride *= x->dims[d].value;
        }
        e[k] = v->e[src];
    }
    return olla_shape_set_out_value(c, 0, e, total);
}

/* Slice: starts, ends, axes and steps from attributes (before opset 10) or
 * inputs; small constant inputs are sliced too. */
static olla_status rule_slice(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    slice_bounds b;
    int known;
    olla_status st = slice_read(c, x->rank, &b, &known);
    if (st != OLLA_OK)
        return st;
    if (!known)
        return slice_unknown(c, x, elem);
    if (b.ns != b.ne || (b.na >= 0 && b.na != b.ns) || (b.nst >= 0 && b.nst != b.ns))
        return olla_shape_fail(c, "starts, ends, axes and steps must have the same length");
    slice_axes ax;
    st = slice_apply(c, x, &b, &ax);
    if (st == OLLA_OK)
        st = olla_shape_set_out(c, 0, elem, x->rank, ax.dims);
    return st == OLLA_OK ? slice_values(c, x, elem, &ax) : st;
}

/* ---- Gather family ---- */

static olla_status rule_gather(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0), *ix = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || !ix || x->rank < 0 || ix->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int64_t axis = olla_shape_attr_int(c, "axis", 0), a;
    if (!olla_shape_axis(axis, x->rank, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    int r = x->rank - 1 + ix->rank;
    if (r > OLLA_SHAPE_MAX_RANK)
        return olla_shape_fail(c, "result rank %d is too large", r);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int k = 0;
    for (int d = 0; d < a; d++)
        dims[k++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++)
        dims[k++] = ix->dims[d];
    for (int d = (int)a + 1; d < x->rank; d++)
        dims[k++] = x->dims[d];
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    const olla_shape_value *xv = olla_shape_in_value(c, 0), *iv = olla_shape_in_value(c, 1);
    if (st != OLLA_OK || !xv || !iv)
        return st;
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, r, dims, OLLA_SRC_INFERRED};
    int64_t total = static_count(&ot);
    if (total < 0 || static_count(x) < 0)
        return OLLA_OK;
    int64_t outer = 1, inner = 1, na = x->dims[a].value;
    for (int d = 0; d < x->rank; d++) {
        if (d < a)
            outer *= x->dims[d].value;
        else if (d > a)
            inner *= x->dims[d].value;
    }
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(total + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    int64_t at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < iv->n; j++) {
            if (iv->e[j].state != OLLA_SV_KNOWN)
                return OLLA_OK;
            int64_t idx = iv->e[j].i < 0 ? iv->e[j].i + na : iv->e[j].i;
            if (idx < 0 || idx >= na)
                return olla_shape_fail(c, "index %lld is out of range for a dimension of %lld",
                                       (long long)iv->e[j].i, (long long)na);
            for (int64_t q = 0; q < inner; q++)
                e[at++] = xv->e[(o * na + idx) * inner + q];
        }
    return at == total ? olla_shape_set_out_value(c, 0, e, total) : OLLA_OK;
}

/* Output has the shape of input 1 (indices) and the type of input 0. */
static olla_status rule_gather_elements(olla_shape_ctx *c)
{
    const olla_value_type *ix = olla_shape_in(c, 1);
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), ix ? ix->rank : -1, ix ? ix->dims : NULL);
}

static olla_status rule_gather_nd(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0), *ix = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || !ix || x->rank < 0 || ix->rank < 1 || ix->dims[ix->rank - 1].value < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int64_t b = olla_shape_attr_int(c, "batch_dims", 0), last = ix->dims[ix->rank - 1].value;
    int r = (int)(ix->rank - 1 + x->rank - last - b);
    if (r < 0 || r > OLLA_SHAPE_MAX_RANK || b < 0 || b + last > x->rank)
        return olla_shape_fail(c, "indices do not fit the data rank");
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int k = 0;
    for (int d = 0; d < ix->rank - 1; d++)
        dims[k++] = ix->dims[d];
    for (int64_t d = b + last; d < x->rank; d++)
        dims[k++] = x->dims[d];
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* ---- Transpose, Tile, Pad ---- */

static olla_status rule_transpose(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    const int64_t *perm;
    int64_t n = olla_shape_attr_ints(c, "perm", &perm);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int seen[OLLA_SHAPE_MAX_RANK] = {0};
    if (n >= 0 && n != x->rank)
        return olla_shape_fail(c, "perm has %lld entries for rank %d", (long long)n, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t p = n >= 0 ? perm[d] : x->rank - 1 - d, a;
        if (!olla_shape_axis(p, x->rank, &a) || seen[a]++)
            return olla_shape_fail(c, "perm is not a permutation of 0..%d", x->rank - 1);
        dims[d] = x->dims[a];
    }
    return olla_shape_set_out(c, 0, elem, x->rank, dims);
}

static olla_status rule_tile(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int64_t rep[OLLA_SHAPE_MAX_RANK];
    int64_t n = olla_shape_in_ints(c, 1, rep, OLLA_SHAPE_MAX_RANK);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (olla_shape_opset(c) < 6) {
        int64_t t, ax;
        if (olla_shape_in_ints(c, 1, &t, 1) != 1 || olla_shape_in_ints(c, 2, &ax, 1) != 1 ||
            !olla_shape_axis(ax, x->rank, &ax))
            return olla_shape_set_out(c, 0, elem, x->rank, NULL);
        memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
        dims[ax] = olla_dim_mul(c, dims[ax], olla_dim_known(t));
        return olla_shape_set_out(c, 0, elem, x->rank, dims);
    }
    if (n < 0) {
        runtime_input(c, 1);
        return olla_shape_set_out(c, 0, elem, x->rank, NULL);
    }
    if (n != x->rank)
        return olla_shape_fail(c, "repeats has %lld entries for rank %d", (long long)n, x->rank);
    for (int d = 0; d < x->rank; d++)
        dims[d] = olla_dim_mul(c, x->dims[d], olla_dim_known(rep[d]));
    return olla_shape_set_out(c, 0, elem, x->rank, dims);
}

static olla_status rule_pad(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int r = x->rank;
    int64_t pads[2 * OLLA_SHAPE_MAX_RANK], axes[OLLA_SHAPE_MAX_RANK];
    int64_t np, na = -1;
    if (olla_shape_opset(c) < 11) {
        const int64_t *p;
        np = olla_shape_attr_ints(c, "pads", &p);
        if (np < 0)
            np = olla_shape_attr_ints(c, "paddings", &p);
        if (np > 2 * r)
            np = -2;
        for (int64_t k = 0; k >= 0 && k < np; k++)
            pads[k] = p[k];
    } else {
        np = olla_shape_in_ints(c, 1, pads, 2 * OLLA_SHAPE_MAX_RANK);
        if (olla_shape_has_input(c, 3)) {
            na = olla_shape_in_ints(c, 3, axes, OLLA_SHAPE_MAX_RANK);
            if (na < 0) {
                runtime_input(c, 3);
                return olla_shape_set_out(c, 0, elem, r, NULL);
            }
        }
    }
    if (np == -1) {
        runtime_input(c, 1);
        return olla_shape_set_out(c, 0, elem, r, NULL);
    }
    int64_t nax = na >= 0 ? na : r;
    if (np != 2 * nax)
        return olla_shape_fail(c, "pads has %lld entries for %lld axes", (long long)np, (long long)nax);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)r);
    for (int64_t k = 0; k < nax; k++) {
        int64_t a = k;
        if (na >= 0 && !olla_shape_axis(axes[k], r, &a))
            return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axes[k], r);
        int64_t p0 = pads[k], p1 = pads[k + nax];
        if (p0 > INT64_MAX / 4 || p0 < -INT64_MAX / 4 || p1 > INT64_MAX / 4 || p1 < -INT64_MAX / 4)
            return olla_shape_fail(c, "pad %lld/%lld is out of range", (long long)p0, (long long)p1);
        int64_t add = p0 + p1;
        olla_dim d = x->dims[a];
        if (d.value >= 0)
            dims[a] = d.value <= INT64_MAX / 2 && d.value + add >= 0 ? olla_dim_known(d.value + add) : olla_dim_unknown();
        else if (add >= 0)
            dims[a] = olla_dim_add(c, d, olla_dim_known(add));
        else
            dims[a] = olla_dim_unknown();
    }
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* ---- constants and generators ---- */

static olla_status rule_constant(olla_shape_ctx *c)
{
    const Onnx__AttributeProto *a;
    if ((a = olla_shape_attr(c, "value")) && a->t)
        return olla_shape_set_out_tensor(c, 0, a->t);
    if (olla_shape_attr(c, "sparse_value"))
        return olla_shape_set_out_kind(c, 0, OLLA_VALUE_SPARSE_TENSOR, 0);
    if (olla_shape_attr_has(c, "value_int")) {
        olla_sval e = olla_sval_int(olla_shape_attr_int(c, "value_int", 0));
        olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 0, NULL);
        return st == OLLA_OK ? olla_shape_set_out_value(c, 0, &e, 1) : st;
    }
    if (olla_shape_attr_has(c, "value_float")) {
        double f = olla_shape_attr_float(c, "value_float", 0);
        olla_sval e = {OLLA_SV_KNOWN, olla_shape_f2i(f), f, NULL};
        olla_status st = olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 0, NULL);
        return st == OLLA_OK && isfinite(f) && fabs(f) < 9e18 ? olla_shape_set_out_value(c, 0, &e, 1) : st;
    }
    const int64_t *iv;
    const float *fv;
    const ProtobufCBinaryData *sv;
    int64_t n;
    if ((n = olla_shape_attr_ints(c, "value_ints", &iv)) >= 0) {
        olla_dim d = olla_dim_known(n);
        olla_status st = olla_shape_set_out(c, 0, OLLA_DT_INT64, 1, &d);
        if (st != OLLA_OK || n > OLLA_SHAPE_MAX_VALUE)
            return st;
        olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(n + 1));
        if (!e)
            return OLLA_ERR_INTERNAL;
        for (int64_t k = 0; k < n; k++)
            e[k] = olla_sval_int(iv[k]);
        return olla_shape_set_out_value(c, 0, e, n);
    }
    if ((n = olla_shape_attr_floats(c, "value_floats", &fv)) >= 0) {
        olla_dim d = olla_dim_known(n);
        return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 1, &d);
    }
    if (olla_shape_attr_has(c, "value_string"))
        return olla_shape_set_out(c, 0, OLLA_DT_STRING, 0, NULL);
    if ((n = olla_shape_attr_strings(c, "value_strings", &sv)) >= 0) {
        olla_dim d = olla_dim_known(n);
        return olla_shape_set_out(c, 0, OLLA_DT_STRING, 1, &d);
    }
    return olla_shape_fail(c, "Constant has no value attribute");
}

static olla_status rule_constant_of_shape(olla_shape_ctx *c)
{
    const Onnx__TensorProto *val = olla_shape_attr_tensor(c, "value");
    int32_t elem = val ? val->data_type : OLLA_DT_FLOAT;
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (!v) {
        const olla_value_type *s = olla_shape_in(c, 0);
        runtime_input(c, 0);
        if (s && s->rank == 1 && s->dims[0].value >= 0 && s->dims[0].value <= OLLA_SHAPE_MAX_RANK)
            return olla_shape_set_out(c, 0, elem, (int)s->dims[0].value, NULL);
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    }
    if (v->n > OLLA_SHAPE_MAX_RANK)
        return too_many_dims(c, elem);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int64_t k = 0; k < v->n; k++) {
        if (v->e[k].state == OLLA_SV_KNOWN && v->e[k].i < 0)
            return olla_shape_fail(c, "negative dimension %lld", (long long)v->e[k].i);
        dims[k] = olla_dim_of_sval(v->e[k]);
    }
    olla_status st = olla_shape_set_out(c, 0, elem, (int)v->n, dims);
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, (int)v->n, dims, OLLA_SRC_INFERRED};
    int64_t total = static_count(&ot);
    if (st != OLLA_OK || total < 0)
        return st;
    olla_sval fill = olla_sval_int(0);
    if (val && !olla_shape_tensor_scalar(val, &fill))
        return OLLA_OK;
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(total + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    for (int64_t k = 0; k < total; k++)
        e[k] = fill;
    return olla_shape_set_out_value(c, 0, e, total);
}

static olla_status rule_range(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    double s, l, d;
    if (olla_shape_in_floats(c, 0, &s, 1) != 1 || olla_shape_in_floats(c, 1, &l, 1) != 1 ||
        olla_shape_in_floats(c, 2, &d, 1) != 1) {
        olla_dim u = olla_dim_unknown();
        olla_status st = olla_shape_set_out(c, 0, elem, 1, &u);
        olla_shape_set_unknown(c, 0, "the length of Range depends on run-time start, limit or delta");
        return st;
    }
    if (d == 0)
        return olla_shape_fail(c, "delta is 0");
    double cnt = ceil((l - s) / d);
    if (!(cnt < 9e18))
        return olla_shape_fail(c, "the Range has too many elements");
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    olla_dim dim = olla_dim_known(n);
    olla_status st = olla_shape_set_out(c, 0, elem, 1, &dim);
    if (st != OLLA_OK || n > OLLA_SHAPE_MAX_VALUE)
        return st;
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(n + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    for (int64_t k = 0; k < n; k++) {
        double f = s + (double)k * d;
        e[k].state = OLLA_SV_KNOWN;
        e[k].f = f;
        e[k].i = olla_shape_f2i(f);
    }
    return olla_shape_set_out_value(c, 0, e, n);
}

/* ---- type conversion and pass-through ---- */

static olla_status cast_to(olla_shape_ctx *c, int32_t to)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x)
        return OLLA_OK;
    olla_status st = olla_shape_set_out(c, 0, to, x->rank, x->dims);
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !v)
        return st;
    olla_sval *e = olla_shape_scratch(c, sizeof *e * (size_t)(v->n + 1));
    if (!e)
        return OLLA_ERR_INTERNAL;
    int from_f = is_float_type(x->elem_type), to_f = is_float_type(to);
    for (int64_t k = 0; k < v->n; k++) {
        olla_sval s = v->e[k];
        if (s.state == OLLA_SV_KNOWN) {
            if (to == OLLA_DT_BOOL)
                s = olla_sval_int(from_f ? s.f != 0 : s.i != 0);
            else if (to_f)
                s.f = from_f ? s.f : (double)s.i;
            else if (from_f)
                s = olla_sval_int(olla_shape_f2i(s.f));
        } else if (s.state == OLLA_SV_SYMBOLIC && (to_f || to == OLLA_DT_BOOL)) {
            s = olla_sval_unknown();
        }
        e[k] = s;
    }
    return olla_shape_set_out_value(c, 0, e, v->n);
}

static olla_status rule_cast(olla_shape_ctx *c)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, "to");
    if (!a)
        return olla_shape_fail(c, "Cast needs the attribute 'to'");
    int64_t to = 0;
    if (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
        /* opset 1 named the type */
        const char *s = olla_shape_attr_string(c, "to", "");
        static const char *names[] = {"", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                      "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
        for (int k = 1; k < (int)(sizeof names / sizeof names[0]); k++)
            if (strcmp(s, names[k]) == 0)
                to = k;
        if (!to)
            return olla_shape_fail(c, "unknown type name '%s' in 'to'", s);
    } else {
        to = olla_shape_attr_int(c, "to", 0);
        if (to <= 0 || to > 64)
            return olla_shape_fail(c, "'to' = %lld is not an element type", (long long)to);
    }
    return cast_to(c, (int32_t)to);
}

static olla_status rule_cast_like(olla_shape_ctx *c)
{
    return cast_to(c, olla_shape_in_elem(c, 1));
}

static olla_status rule_identity(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    return st == OLLA_OK ? keep_value(c, 0, 0) : st;
}

/* Output 0 has input 0's type (Trilu, CumSum, Scatter*, ReverseSequence). */
static olla_status rule_same(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

static olla_status rule_eye_like(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = (int32_t)olla_shape_attr_int(c, "dtype", olla_shape_in_elem(c, 0));
    return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, x ? x->dims : NULL);
}

static olla_status rule_one_hot(olla_shape_ctx *c)
{
    const olla_value_type *ix = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 2);
    if (!ix || ix->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int r = ix->rank + 1;
    int64_t axis = olla_shape_attr_int(c, "axis", -1), a;
    if (!olla_shape_axis(axis, r, &a))
        return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axis, r);
    double depth;
    olla_dim dd = olla_shape_in_floats(c, 1, &depth, 1) == 1 ? olla_dim_known(olla_shape_f2i(depth)) : olla_dim_unknown();
    if (dd.value < 0)
        runtime_input(c, 1);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0, s = 0; d < r; d++)
        dims[d] = d == a ? dd : ix->dims[s++];
    return olla_shape_set_out(c, 0, elem, r, dims);
}

static olla_status depth_space(olla_shape_ctx *c, int to_space)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank != 4)
        return olla_shape_set_out(c, 0, elem, x && x->rank >= 0 ? x->rank : -1, NULL);
    int64_t b = olla_shape_attr_int(c, "blocksize", 0);
    if (b <= 0 || b > (1 << 20))
        return olla_shape_fail(c, "blocksize must be between 1 and 2^20");
    olla_dim bb = olla_dim_known(b * b), bd = olla_dim_known(b), dims[4];
    dims[0] = x->dims[0];
    if (to_space) {
        dims[1] = olla_dim_div(c, x->dims[1], bb);
        dims[2] = olla_dim_mul(c, x->dims[2], bd);
        dims[3] = olla_dim_mul(c, x->dims[3], bd);
    } else {
        dims[1] = olla_dim_mul(c, x->dims[1], bb);
        dims[2] = olla_dim_div(c, x->dims[2], bd);
        dims[3] = olla_dim_div(c, x->dims[3], bd);
    }
    return olla_shape_set_out(c, 0, elem, 4, dims);
}

static olla_status rule_depth_to_space(olla_shape_ctx *c) { return depth_space(c, 1); }
static olla_status rule_space_to_depth(olla_shape_ctx *c) { return depth_space(c, 0); }

static olla_status rule_compress(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    const olla_shape_value *cv = olla_shape_in_value(c, 1);
    int has_axis = olla_shape_attr_has(c, "axis");
    int r = has_axis ? (x ? x->rank : -1) : 1;
    if (r < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int64_t a = 0;
    if (has_axis) {
        if (!olla_shape_axis(olla_shape_attr_int(c, "axis", 0), r, &a))
            return olla_shape_fail(c, "axis is out of range for rank %d", r);
        memcpy(dims, x->dims, sizeof *dims * (size_t)r);
    }
    dims[a] = olla_dim_unknown();
    int64_t limit = has_axis ? x->dims[a].value : (x ? static_count(x) : -1);
    if (cv && limit >= 0) {
        int64_t cnt = 0;
        for (int64_t k = 0; k < cv->n && k < limit; k++) {
            if (cv->e[k].state != OLLA_SV_KNOWN) {
                cnt = -1;
                break;
            }
            cnt += cv->e[k].i != 0;
        }
        if (cnt >= 0)
            dims[a] = olla_dim_known(cnt);
    }
    olla_status st = olla_shape_set_out(c, 0, elem, r, dims);
    if (dims[a].value < 0)
        olla_shape_set_unknown(c, 0, "data-dependent output of Compress (the condition is only known at run time)");
    return st;
}

const olla_shape_rule_entry olla_shape_rules_manip[] = {
    {"", "Shape", rule_shape}, {"", "Size", rule_size}, {"", "Reshape", rule_reshape},
    {"", "Expand", rule_expand}, {"", "Squeeze", rule_squeeze}, {"", "Unsqueeze", rule_unsqueeze},
    {"", "Flatten", rule_flatten}, {"", "Concat", rule_concat}, {"", "Split", rule_split},
    {"", "Slice", rule_slice}, {"", "Gather", rule_gather}, {"", "GatherElements", rule_gather_elements},
    {"", "GatherND", rule_gather_nd}, {"", "Transpose", rule_transpose}, {"", "Tile", rule_tile},
    {"", "Pad", rule_pad}, {"", "Constant", rule_constant}, {"", "ConstantOfShape", rule_constant_of_shape},
    {"", "Range", rule_range}, {"", "Cast", rule_cast}, {"", "CastLike", rule_cast_like},
    {"", "Identity", rule_identity}, {"", "EyeLike", rule_eye_like}, {"", "Trilu", rule_same},
    {"", "OneHot", rule_one_hot}, {"", "Scatter", rule_same}, {"", "ScatterElements", rule_same},
    {"", "ScatterND", rule_same}, {"", "CumSum", rule_same}, {"", "ReverseSequence", rule_same},
    {"", "DepthToSpace", rule_depth_to_space}, {"", "SpaceToDepth", rule_space_to_depth},
    {"", "Compress", rule_compress},
    {NULL, NULL, NULL}};
