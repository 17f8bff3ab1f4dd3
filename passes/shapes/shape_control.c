/* olla-onnx: shape rules for control flow (If, Loop, Scan). Bodies are
 * inferred as subgraphs with outer-scope values visible. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

/* Merges two branch types: same rank, dims kept when equal. */
static olla_status set_merged(olla_shape_ctx *c, int i, const olla_value_type *a, const olla_value_type *b)
{
    if (!a || (a->rank < 0 && a->elem_type == 0 && a->kind == OLLA_VALUE_TENSOR))
        return b ? olla_shape_set_out_type(c, i, b) : OLLA_OK;
    if (!b || (b->rank < 0 && b->elem_type == 0 && b->kind == OLLA_VALUE_TENSOR))
        return olla_shape_set_out_type(c, i, a);
    if (a->kind != b->kind) /* e.g. an optional initial value, a sequence from the body: the body wins */
        return olla_shape_set_out_kind(c, i, b->kind, b->elem_type ? b->elem_type : a->elem_type);
    if (a->kind != OLLA_VALUE_TENSOR)
        return olla_shape_set_out_kind(c, i, a->kind, a->elem_type ? a->elem_type : b->elem_type);
    int32_t elem = a->elem_type ? a->elem_type : b->elem_type;
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank)
        return olla_shape_set_out(c, i, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < a->rank; d++)
        dims[d] = olla_dim_equal(a->dims[d], b->dims[d]) ? a->dims[d] : olla_dim_unknown();
    return olla_shape_set_out(c, i, elem, a->rank, dims);
}

/* Carries a subgraph output's reason to output i when it has no size. */
static void sub_reason(olla_shape_ctx *c, int i, const olla_shape_sub_out *o)
{
    if (o && o->reason)
        olla_shape_set_unknown(c, i, "from its subgraph: %s", o->reason);
}

/* The join of a loop-carried type before (a) and after (b) an iteration,
 * in scratch memory. Sets *changed when it is less precise than a. */
static const olla_value_type *join(olla_shape_ctx *c, const olla_value_type *a, const olla_value_type *b, int *changed)
{
    if (!a || !b || a->kind != OLLA_VALUE_TENSOR || b->kind != OLLA_VALUE_TENSOR || a->rank < 0)
        return a;
    olla_value_type *j = olla_shape_scratch(c, sizeof *j);
    if (!j)
        return a;
    *j = *a;
    if (b->rank != a->rank) {
        j->rank = -1;
        j->dims = NULL;
        *changed = 1;
        return j;
    }
    j->dims = olla_shape_scratch(c, sizeof *j->dims * (size_t)(a->rank + 1));
    if (!j->dims)
        return a;
    for (int d = 0; d < a->rank; d++) {
        j->dims[d] = a->dims[d];
        if (!olla_dim_equal(a->dims[d], b->dims[d]) && (a->dims[d].value >= 0 || a->dims[d].param)) {
            j->dims[d] = olla_dim_unknown();
            *changed = 1;
        }
    }
    return j;
}

static olla_status rule_if(olla_shape_ctx *c)
{
    const Onnx__GraphProto *gt = olla_shape_attr_graph(c, "then_branch");
    const Onnx__GraphProto *ge = olla_shape_attr_graph(c, "else_branch");
    if (!gt || !ge)
        return olla_shape_fail(c, "If needs then_branch and else_branch graphs");
    int64_t cond;
    int known = olla_shape_in_ints(c, 0, &cond, 1) == 1;
    const olla_shape_sub_out *to = NULL, *eo = NULL;
    olla_status st = OLLA_OK;
    if (!known || cond)
        st = olla_shape_infer_subgraph_ex(c, gt, NULL, 0, &to);
    if (st == OLLA_OK && (!known || !cond))
        st = olla_shape_infer_subgraph_ex(c, ge, NULL, 0, &eo);
    if (st != OLLA_OK)
        return st;
    int n = olla_shape_n_outputs(c);
    for (int i = 0; i < n && st == OLLA_OK; i++) {
        const olla_shape_sub_out *a = to && (size_t)i < gt->n_output ? &to[i] : NULL;
        const olla_shape_sub_out *b = eo && (size_t)i < ge->n_output ? &eo[i] : NULL;
        if (known) {
            const olla_shape_sub_out *o = cond ? a : b;
            if (!o)
                continue;
            st = olla_shape_set_out_type(c, i, o->type);
            if (st == OLLA_OK && o->value)
                st = olla_shape_set_out_value(c, i, o->value->e, o->value->n);
            sub_reason(c, i, o);
        } else {
            st = set_merged(c, i, a ? a->type : NULL, b ? b->type : NULL);
            sub_reason(c, i, a && a->reason ? a : b);
        }
    }
    return st;
}

/* Type with one more leading (or at axis) dimension. */
static olla_status set_stacked(olla_shape_ctx *c, int i, const olla_value_type *t, olla_dim n, int64_t axis)
{
    if (!t || t->rank < 0 || t->kind != OLLA_VALUE_TENSOR)
        return olla_shape_set_out(c, i, t ? t->elem_type : 0, -1, NULL);
    int r = t->rank + 1;
    int64_t a;
    if (r > OLLA_SHAPE_MAX_RANK || !olla_shape_axis(axis, r, &a))
        return olla_shape_set_out(c, i, t->elem_type, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0, s = 0; d < r; d++)
        dims[d] = d == a ? n : t->dims[s++];
    return olla_shape_set_out(c, i, t->elem_type, r, dims);
}

static olla_status rule_loop(olla_shape_ctx *c)
{
    const Onnx__GraphProto *body = olla_shape_attr_graph(c, "body");
    if (!body)
        return olla_shape_fail(c, "Loop needs a body graph");
    int n_in = olla_shape_n_inputs(c), n_carried = n_in - 2;
    if (n_carried < 0)
        n_carried = 0;
    const olla_value_type **ins = olla_shape_scratch(c, sizeof *ins * (size_t)(n_carried + 3));
    olla_value_type *scalars = olla_shape_scratch(c, sizeof *scalars * 2);
    if (!ins || !scalars)
        return OLLA_ERR_INTERNAL;
    scalars[0].kind = OLLA_VALUE_TENSOR;
    scalars[0].elem_type = OLLA_DT_INT64;
    scalars[0].rank = 0;
    scalars[1] = scalars[0];
    scalars[1].elem_type = OLLA_DT_BOOL;
    ins[0] = &scalars[0];
    ins[1] = &scalars[1];
    for (int k = 0; k < n_carried; k++)
        ins[2 + k] = olla_shape_in(c, 2 + k);
    const olla_shape_sub_out *outs;
    olla_status st = olla_shape_infer_subgraph_ex(c, body, ins, n_carried + 2, &outs);
    /* a carried value whose shape changes across iterations: infer again
     * with the join of both, until nothing changes */
    const char **why = olla_shape_scratch(c, sizeof *why * (size_t)(n_carried + 1));
    if (!why)
        return OLLA_ERR_INTERNAL;
    for (int pass = 0; pass < 3 && st == OLLA_OK; pass++) {
        int changed = 0;
        for (int k = 0; k < n_carried && (size_t)k + 1 < body->n_output; k++) {
            int before = changed;
            ins[2 + k] = join(c, ins[2 + k], outs[1 + k].type, &changed);
            if (changed != before && !why[k])
                why[k] = outs[1 + k].reason; /* the root cause, before the join hides it */
        }
        if (!changed)
            break;
        st = olla_shape_infer_subgraph_ex(c, body, ins, n_carried + 2, &outs);
    }
    if (st != OLLA_OK)
        return st;
    /* trip count: known when M is known and there is no run-time condition */
    int64_t m;
    olla_dim trips = olla_dim_unknown();
    int m_known = olla_shape_has_input(c, 0) && olla_shape_in_ints(c, 0, &m, 1) == 1 && m >= 0;
    if (m_known && !olla_shape_has_input(c, 1))
        trips = olla_dim_known(m);
    int n_out = olla_shape_n_outputs(c);
    for (int i = 0; i < n_out && st == OLLA_OK; i++) {
        size_t bo = (size_t)i + 1; /* body output index (after cond) */
        const olla_value_type *b = bo < body->n_output ? outs[bo].type : NULL;
        if (bo < body->n_output)
            sub_reason(c, i, &outs[bo]);
        if (i < n_carried && why[i])
            olla_shape_set_unknown(c, i, "from its subgraph: %s", why[i]);
        if (i < n_carried) {
            st = set_merged(c, i, ins[2 + i], b);
        } else {
            st = set_stacked(c, i, b, trips, 0);
            if (trips.value < 0)
                olla_shape_set_unknown(c, i, "data-dependent scan output of Loop (the trip count is a run-time value)");
        }
    }
    return st;
}

static olla_status rule_scan(olla_shape_ctx *c)
{
    const Onnx__GraphProto *body = olla_shape_attr_graph(c, "body");
    if (!body)
        return olla_shape_fail(c, "Scan needs a body graph");
    int v8 = olla_shape_opset(c) < 9;
    int first = v8 ? 1 : 0; /* opset 8: sequence_lens first */
    int n_in = olla_shape_n_inputs(c) - first;
    int64_t m = olla_shape_attr_int(c, "num_scan_inputs", 0);
    if (m <= 0 || m > n_in)
        return olla_shape_fail(c, "num_scan_inputs must be between 1 and the number of inputs");
    int n_state = n_in - (int)m;
    const int64_t *in_axes = NULL, *out_axes = NULL;
    int64_t n_in_axes = olla_shape_attr_ints(c, "scan_input_axes", &in_axes);
    int64_t n_out_axes = olla_shape_attr_ints(c, "scan_output_axes", &out_axes);
    const olla_value_type **ins = olla_shape_scratch(c, sizeof *ins * (size_t)(n_in + 1));
    olla_value_type *slices = olla_shape_scratch(c, sizeof *slices * (size_t)(n_in + 1));
    olla_dim *dimbuf = olla_shape_scratch(c, sizeof *dimbuf * (size_t)(n_in + 1) * OLLA_SHAPE_MAX_RANK);
    if (!ins || !slices || !dimbuf)
        return OLLA_ERR_INTERNAL;
    olla_dim seq = olla_dim_unknown(), batch = olla_dim_unknown();
    for (int k = 0; k < n_in; k++) {
        const olla_value_type *t = olla_shape_in(c, first + k);
        ins[k] = NULL;
        if (!t || t->rank < 0) {
            continue;
        }
        /* opset 8 removes the batch dim from everything */
        int drop0 = v8 ? 1 : 0;
        int64_t axis = -1;
        if (k >= n_state) {
            int64_t ax = v8 ? 0 : (n_in_axes > k - n_state ? in_axes[k - n_state] : 0);
            if (!olla_shape_axis(ax, t->rank - drop0, &axis))
                return olla_shape_fail(c, "scan input axis %lld is out of range", (long long)ax);
            axis += drop0;
            if (seq.value < 0 && !seq.param)
                seq = t->dims[axis];
        }
        if (v8 && t->rank > 0 && batch.value < 0 && !batch.param)
            batch = t->dims[0];
        slices[k] = *t;
        slices[k].dims = dimbuf + (size_t)k * OLLA_SHAPE_MAX_RANK;
        int r = 0;
        for (int d = 0; d < t->rank; d++)
            if (!(drop0 && d == 0) && d != axis)
                slices[k].dims[r++] = t->dims[d];
        slices[k].rank = r;
        ins[k] = &slices[k];
    }
    const olla_shape_sub_out *outs;
    olla_status st = olla_shape_infer_subgraph_ex(c, body, ins, n_in, &outs);
    for (int pass = 0; pass < 3 && st == OLLA_OK; pass++) {
        int changed = 0;
        for (int k = 0; k < n_state && (size_t)k < body->n_output; k++)
            ins[k] = join(c, ins[k], outs[k].type, &changed);
        if (!changed)
            break;
        st = olla_shape_infer_subgraph_ex(c, body, ins, n_in, &outs);
    }
    if (st != OLLA_OK)
        return st;
    int n_out = olla_shape_n_outputs(c);
    for (int i = 0; i < n_out && st == OLLA_OK; i++) {
        const olla_value_type *b = (size_t)i < body->n_output ? outs[i].type : NULL;
        if (!b)
            continue;
        sub_reason(c, i, &outs[i]);
        if (i < n_state) {
            if (v8)
                st = set_stacked(c, i, b, batch, 0);
            else
                st = set_merged(c, i, ins[i], b);
        } else if (v8) {
            olla_value_type tmp = *b;
            olla_dim dims[OLLA_SHAPE_MAX_RANK];
            if (b->rank >= 0 && b->rank + 2 <= OLLA_SHAPE_MAX_RANK) {
                dims[0] = batch;
                dims[1] = seq;
                memcpy(dims + 2, b->dims, sizeof *dims * (size_t)b->rank);
                tmp.rank = b->rank + 2;
                tmp.dims = dims;
                st = olla_shape_set_out(c, i, b->elem_type, tmp.rank, dims);
            } else {
                st = olla_shape_set_out(c, i, b->elem_type, -1, NULL);
            }
        } else {
            int64_t ax = n_out_axes > i - n_state ? out_axes[i - n_state] : 0;
            st = set_stacked(c, i, b, seq, ax);
        }
    }
    return st;
}

const olla_shape_rule_entry olla_shape_rules_control[] = {
    {"", "If", rule_if}, {"", "Loop", rule_loop}, {"", "Scan", rule_scan},
    {NULL, NULL, NULL}};
