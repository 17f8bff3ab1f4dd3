/* olla-onnx: shape rules for reductions (Reduce*, ArgMax, ArgMin). Axes come
 * from an attribute or, from opset 13 (ReduceSum) or 18 (the others), from
 * an input. Small integer ReduceSum/ReduceProd/ReduceMax/ReduceMin fold. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

/* Marks in red the axes a Reduce* reduces: from the axes attribute before
 * opset 13 (ReduceSum) or 18 (the others), from input 1 since; none given:
 * every axis. *settled is 1 when the output is set here already (run-time
 * axes, or noop_with_empty_axes with none), with the status returned. */
static olla_status reduce_axes(olla_shape_ctx *c, const olla_value_type *x, int32_t elem, int64_t keep, int *red,
                               int *settled)
{
    int r = x->rank;
    const char *op = olla_shape_op(c);
    int64_t since = strcmp(op, "ReduceSum") == 0 ? 13 : 18;
    int64_t axes[OLLA_SHAPE_MAX_RANK], n = -1;
    *settled = 0;
    if (olla_shape_opset(c) < since) {
        const int64_t *v;
        n = olla_shape_attr_ints(c, "axes", &v);
        if (n > OLLA_SHAPE_MAX_RANK)
            return olla_shape_fail(c, "too many axes");
        for (int64_t k = 0; k < n; k++)
            axes[k] = v[k];
    } else if (olla_shape_has_input(c, 1)) {
        n = olla_shape_in_ints(c, 1, axes, OLLA_SHAPE_MAX_RANK);
        if (n < 0) {
            /* run-time axes: rank known only when keepdims */
            *settled = 1;
            olla_shape_set_unknown(c, 0, "the axes are the run-time value of input '%s'", olla_shape_input_name(c, 1));
            const olla_value_type *at = olla_shape_in(c, 1);
            int64_t len = at && at->rank == 1 ? at->dims[0].value : -1;
            return olla_shape_set_out(c, 0, elem, keep ? r : (len >= 0 && len <= r ? (int)(r - len) : -1), NULL);
        }
    }
    if (n <= 0) {
        if (olla_shape_attr_int(c, "noop_with_empty_axes", 0) && olla_shape_opset(c) >= since) {
            *settled = 1;
            olla_status st = olla_shape_set_out(c, 0, elem, r, x->dims);
            const olla_shape_value *v = olla_shape_in_value(c, 0);
            return st == OLLA_OK && v ? olla_shape_set_out_value(c, 0, v->e, v->n) : st;
        }
        for (int d = 0; d < r; d++)
            red[d] = 1;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t a;
        if (!olla_shape_axis(axes[k], r, &a))
            return olla_shape_fail(c, "axis %lld is out of range for rank %d", (long long)axes[k], r);
        red[a] = 1;
    }
    return OLLA_OK;
}

/* The running result a of a folded reduction (kind 1 sum, 2 product, 3 max,
 * 4 min) combined with the next element s; symbolic sums and products stay
 * symbolic. */
static olla_sval reduce_combine(olla_shape_ctx *c, int kind, olla_sval a, olla_sval s)
{
    if (a.state == OLLA_SV_KNOWN && s.state == OLLA_SV_KNOWN) {
        int64_t val = kind == 1   ? (int64_t)((uint64_t)a.i + (uint64_t)s.i)
                      : kind == 2 ? (int64_t)((uint64_t)a.i * (uint64_t)s.i)
                      : kind == 3 ? (a.i > s.i ? a.i : s.i)
                                  : (a.i < s.i ? a.i : s.i);
        double f = kind == 1   ? a.f + s.f
                   : kind == 2 ? a.f * s.f
                   : kind == 3 ? (a.f > s.f ? a.f : s.f)
                               : (a.f < s.f ? a.f : s.f);
        a.i = val;
        a.f = f;
        return a;
    }
    if ((kind == 1 || kind == 2) && a.state != OLLA_SV_UNKNOWN && s.state != OLLA_SV_UNKNOWN &&
        (a.state != OLLA_SV_KNOWN || a.i >= 0) && (s.state != OLLA_SV_KNOWN || s.i >= 0)) {
        olla_dim da = {a.state == OLLA_SV_KNOWN ? a.i : -1, a.state == OLLA_SV_SYMBOLIC ? a.sym : NULL};
        olla_dim ds = {s.state == OLLA_SV_KNOWN ? s.i : -1, s.state == OLLA_SV_SYMBOLIC ? s.sym : NULL};
        olla_dim rd = kind == 1 ? olla_dim_add(c, da, ds) : olla_dim_mul(c, da, ds);
        olla_sval u = {OLLA_SV_UNKNOWN, 0, 0, NULL};
        if (rd.value >= 0) {
            u.state = OLLA_SV_KNOWN;
            u.i = rd.value;
            u.f = (double)rd.value;
        } else if (rd.param) {
            u.state = OLLA_SV_SYMBOLIC;
            u.sym = rd.param;
        }
        return u;
    }
    a.state = OLLA_SV_UNKNOWN;
    return a;
}

/* Folds a small integer ReduceSum/ReduceProd/ReduceMax/ReduceMin over input
 * 0's value (x, axes red) into the output's value (o dims). */
static olla_status reduce_fold(olla_shape_ctx *c, const olla_value_type *x, const int *red, const olla_dim *dims, int o)
{
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    const char *op = olla_shape_op(c);
    int kind = strcmp(op, "ReduceSum") == 0 ? 1 : strcmp(op, "ReduceProd") == 0 ? 2
             : strcmp(op, "ReduceMax") == 0 ? 3 : strcmp(op, "ReduceMin") == 0 ? 4 : 0;
    if (!v || !kind)
        return OLLA_OK;
    int64_t total = 1;
    for (int d = 0; d < o; d++) {
        if (dims[d].value < 0 || dims[d].value > OLLA_SHAPE_MAX_VALUE)
            return OLLA_OK;
        total *= dims[d].value;
        if (total > OLLA_SHAPE_MAX_VALUE)
            return OLLA_OK;
    }
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(total + 1));
    int *init = olla_shape_scratch(c, sizeof *init * (size_t)(total + 1));
    if (!res || !init)
        return OLLA_ERR_INTERNAL;
    for (int64_t k = 0; k < v->n; k++) {
        /* output index of input element k */
        int64_t rem = k, out = 0, stride = 1;
        for (int d = x->rank - 1; d >= 0; d--) {
            int64_t coord = rem % x->dims[d].value;
            rem /= x->dims[d].value;
            if (!red[d]) {
                out += coord * stride;
                stride *= x->dims[d].value;
            }
        }
        if (!init[out]) {
            res[out] = v->e[k];
            init[out] = 1;
            continue;
        }
        res[out] = reduce_combine(c, kind, res[out], v->e[k]);
    }
    for (int64_t k = 0; k < total; k++)
        if (!init[k])
            return OLLA_OK; /* empty reduction: leave unevaluated */
    return olla_shape_set_out_value(c, 0, res, total);
}

/* Reduce* (arg 0) and ArgMax/ArgMin (arg 1, one axis attribute): the
 * reduced axes removed, or kept as 1 with keepdims. */
static olla_status reduce_common(olla_shape_ctx *c, int32_t elem, int arg)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    int r = x->rank;
    int64_t keep = olla_shape_attr_int(c, "keepdims", 1);
    int red[OLLA_SHAPE_MAX_RANK] = {0};
    if (arg) {
        int64_t a;
        if (!olla_shape_axis(olla_shape_attr_int(c, "axis", 0), r, &a))
            return olla_shape_fail(c, "axis is out of range for rank %d", r);
        red[a] = 1;
    } else {
        int settled;
        olla_status st = reduce_axes(c, x, elem, keep, red, &settled);
        if (st != OLLA_OK || settled)
            return st;
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int o = 0;
    for (int d = 0; d < r; d++) {
        if (!red[d])
            dims[o++] = x->dims[d];
        else if (keep)
            dims[o++] = olla_dim_known(1);
    }
    olla_status st = olla_shape_set_out(c, 0, elem, o, dims);
    if (st != OLLA_OK || arg)
        return st;
    return reduce_fold(c, x, red, dims, o);
}

static olla_status rule_reduce(olla_shape_ctx *c)
{
    return reduce_common(c, olla_shape_in_elem(c, 0), 0);
}

static olla_status rule_arg(olla_shape_ctx *c)
{
    return reduce_common(c, OLLA_DT_INT64, 1);
}

const olla_shape_rule_entry olla_shape_rules_reduce[] = {
    {"", "ReduceSum", rule_reduce}, {"", "ReduceMean", rule_reduce}, {"", "ReduceMax", rule_reduce},
    {"", "ReduceMin", rule_reduce}, {"", "ReduceProd", rule_reduce}, {"", "ReduceL1", rule_reduce},
    {"", "ReduceL2", rule_reduce}, {"", "ReduceLogSum", rule_reduce}, {"", "ReduceLogSumExp", rule_reduce},
    {"", "ReduceSumSquare", rule_reduce}, {"", "ArgMax", rule_arg}, {"", "ArgMin", rule_arg},
    {NULL, NULL, NULL}};
