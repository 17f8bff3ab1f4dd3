/* olla-onnx: the per-node context given to shape rules, and the shape and
 * value helpers rules share (broadcasting, axes, element counts, constant
 * tensors); the arithmetic of dimensions is in passes/shapes/dim_expr.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_line.h"

/* ---- node ---- */

const char *olla_shape_op(const olla_shape_ctx *c)
{
    if (c->op_override)
        return c->op_override;
    return c->node->op_type ? c->node->op_type : "";
}

olla_status olla_shape_delegate(olla_shape_ctx *c, const char *domain, const char *op, int64_t opset)
{
    olla_shape_rule_fn fn = olla_shape_find_rule(domain, op);
    if (!fn)
        return OLLA_OK;
    const char *saved_op = c->op_override, *saved_domain = c->domain;
    int64_t saved_opset = c->opset;
    c->op_override = op;
    c->domain = domain;
    c->opset = opset;
    olla_status st = fn(c);
    c->op_override = saved_op;
    c->domain = saved_domain;
    c->opset = saved_opset;
    return st;
}
const char *olla_shape_domain(const olla_shape_ctx *c) { return c->domain; }
int64_t olla_shape_opset(const olla_shape_ctx *c) { return c->opset; }
int olla_shape_n_inputs(const olla_shape_ctx *c) { return c->n_in; }
int olla_shape_n_outputs(const olla_shape_ctx *c) { return c->n_out; }

const char *olla_shape_node_name(const olla_shape_ctx *c)
{
    if (c->node->name && c->node->name[0])
        return c->node->name;
    if (c->node->n_output && c->node->output[0])
        return c->node->output[0];
    return "";
}

int olla_shape_has_input(const olla_shape_ctx *c, int i)
{
    return i >= 0 && i < c->n_in && c->node->input[i] && c->node->input[i][0];
}

int olla_shape_has_output(const olla_shape_ctx *c, int i)
{
    return i >= 0 && i < c->n_out && c->node->output[i] && c->node->output[i][0];
}

const char *olla_shape_input_name(const olla_shape_ctx *c, int i)
{
    return i >= 0 && i < c->n_in ? c->node->input[i] : NULL;
}

const char *olla_shape_output_name(const olla_shape_ctx *c, int i)
{
    return i >= 0 && i < c->n_out ? c->node->output[i] : NULL;
}

const olla_value_type *olla_shape_in(const olla_shape_ctx *c, int i)
{
    if (i < 0 || i >= c->n_in || !c->in[i])
        return NULL;
    return &c->in[i]->type;
}

int olla_shape_in_rank(const olla_shape_ctx *c, int i)
{
    const olla_value_type *t = olla_shape_in(c, i);
    return t && t->kind == OLLA_VALUE_TENSOR ? t->rank : -1;
}

int32_t olla_shape_in_elem(const olla_shape_ctx *c, int i)
{
    const olla_value_type *t = olla_shape_in(c, i);
    return t ? t->elem_type : 0;
}

const olla_shape_value *olla_shape_in_value(const olla_shape_ctx *c, int i)
{
    if (i < 0 || i >= c->n_in || !c->in[i] || !c->in[i]->value.e)
        return NULL;
    return &c->in[i]->value;
}

int64_t olla_shape_in_ints(const olla_shape_ctx *c, int i, int64_t *out, int64_t max)
{
    const olla_shape_value *v = olla_shape_in_value(c, i);
    if (!v || v->n > max)
        return -1;
    for (int64_t k = 0; k < v->n; k++) {
        if (v->e[k].state != OLLA_SV_KNOWN)
            return -1;
        out[k] = v->e[k].i;
    }
    return v->n;
}

int64_t olla_shape_in_floats(const olla_shape_ctx *c, int i, double *out, int64_t max)
{
    const olla_shape_value *v = olla_shape_in_value(c, i);
    if (!v || v->n > max)
        return -1;
    for (int64_t k = 0; k < v->n; k++) {
        if (v->e[k].state != OLLA_SV_KNOWN)
            return -1;
        out[k] = v->e[k].f;
    }
    return v->n;
}

const Onnx__TensorProto *olla_shape_in_const(const olla_shape_ctx *c, int i)
{
    if (i < 0 || i >= c->n_in || !c->in[i])
        return NULL;
    return c->in[i]->cnst;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *olla_shape_attr(const olla_shape_ctx *c, const char *name)
{
    for (size_t k = 0; k < c->node->n_attribute; k++) {
        const Onnx__AttributeProto *a = c->node->attribute[k];
        if (a && a->name && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

int olla_shape_attr_has(const olla_shape_ctx *c, const char *name)
{
    return olla_shape_attr(c, name) != NULL;
}

static int attr_wrong(olla_shape_ctx *c, const Onnx__AttributeProto *a, Onnx__AttributeProto__AttributeType want,
                      const char *what)
{
    if (!a->has_type || a->type == want)
        return 0;
    olla_error_set(c->err, OLLA_ERR_INPUT,
                   "node '%s' (%s): attribute '%s' should be %s (type %d found); fix the model",
                   olla_shape_node_name(c), olla_shape_op(c), a->name, what, (int)a->type);
    return 1;
}

int64_t olla_shape_attr_int(olla_shape_ctx *c, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an int"))
        return dflt;
    return a->i;
}

double olla_shape_attr_float(olla_shape_ctx *c, const char *name, double dflt)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a float"))
        return dflt;
    return a->f;
}

const char *olla_shape_attr_string(olla_shape_ctx *c, const char *name, const char *dflt)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "a string"))
        return dflt;
    char *s = olla_arena_strndup(&c->scratch, a->s.data ? (const char *)a->s.data : "", a->s.data ? a->s.len : 0);
    return s ? s : dflt;
}

int64_t olla_shape_attr_ints(olla_shape_ctx *c, const char *name, const int64_t **out)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    *out = NULL;
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "a list of ints"))
        return -1;
    *out = a->ints;
    return (int64_t)a->n_ints;
}

int64_t olla_shape_attr_floats(olla_shape_ctx *c, const char *name, const float **out)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    *out = NULL;
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, "a list of floats"))
        return -1;
    *out = a->floats;
    return (int64_t)a->n_floats;
}

int64_t olla_shape_attr_strings(olla_shape_ctx *c, const char *name, const ProtobufCBinaryData **out)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    *out = NULL;
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, "a list of strings"))
        return -1;
    *out = a->strings;
    return (int64_t)a->n_strings;
}

const Onnx__TensorProto *olla_shape_attr_tensor(olla_shape_ctx *c, const char *name)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR, "a tensor"))
        return NULL;
    return a->t;
}

const Onnx__GraphProto *olla_shape_attr_graph(olla_shape_ctx *c, const char *name)
{
    const Onnx__AttributeProto *a = olla_shape_attr(c, name);
    if (!a || attr_wrong(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH, "a graph"))
        return NULL;
    return a->g;
}

/* ---- outputs ---- */

olla_status olla_shape_set_out(olla_shape_ctx *c, int i, int32_t elem_type, int rank, const olla_dim *dims)
{
    if (!olla_shape_has_output(c, i))
        return OLLA_OK;
    olla_value_type *o = &c->out[i];
    memset(o, 0, sizeof *o);
    o->kind = OLLA_VALUE_TENSOR;
    o->elem_type = elem_type;
    o->source = OLLA_SRC_INFERRED;
    o->rank = rank > OLLA_SHAPE_MAX_RANK ? -1 : rank;
    if (o->rank >= 0) {
        o->dims = olla_arena_alloc(&c->scratch, sizeof *o->dims * (size_t)(o->rank + 1));
        if (!o->dims)
            return OLLA_ERR_INTERNAL;
        const olla_dim unknown = olla_dim_unknown();
        for (int d = 0; d < o->rank; d++) {
            o->dims[d] = dims ? dims[d] : unknown;
            if (o->dims[d].value < 0)
                o->dims[d].value = -1;
        }
    }
    c->out_set[i] = 1;
    c->out_val[i].e = NULL;
    c->out_val[i].n = 0;
    return OLLA_OK;
}

olla_status olla_shape_set_out_type(olla_shape_ctx *c, int i, const olla_value_type *t)
{
    if (!t || !olla_shape_has_output(c, i))
        return OLLA_OK;
    olla_status st = olla_shape_set_out(c, i, t->elem_type, t->kind == OLLA_VALUE_TENSOR ? t->rank : -1, t->dims);
    if (st == OLLA_OK)
        c->out[i].kind = t->kind;
    return st;
}

olla_status olla_shape_pass(olla_shape_ctx *c, int i, int j)
{
    return olla_shape_set_out_type(c, i, olla_shape_in(c, j));
}

olla_status olla_shape_set_out_kind(olla_shape_ctx *c, int i, olla_value_kind kind, int32_t elem_type)
{
    olla_status st = olla_shape_set_out(c, i, elem_type, -1, NULL);
    if (st == OLLA_OK && olla_shape_has_output(c, i))
        c->out[i].kind = kind;
    return st;
}

olla_status olla_shape_set_out_value(olla_shape_ctx *c, int i, const olla_sval *e, int64_t n)
{
    if (!olla_shape_has_output(c, i) || !c->out_set[i] || n > OLLA_SHAPE_MAX_VALUE || n < 0)
        return OLLA_OK;
    const olla_value_type *o = &c->out[i];
    if (o->rank < 0)
        return OLLA_OK;
    int64_t k = 1;
    for (int d = 0; d < o->rank; d++) {
        if (o->dims[d].value < 0 || o->dims[d].value > OLLA_SHAPE_MAX_VALUE)
            return OLLA_OK;
        k *= o->dims[d].value;
        if (k > OLLA_SHAPE_MAX_VALUE)
            return OLLA_OK;
    }
    if (k != n)
        return OLLA_OK;
    olla_sval *copy = olla_arena_alloc(&c->scratch, sizeof *copy * (size_t)(n ? n : 1));
    if (!copy)
        return OLLA_ERR_INTERNAL;
    if (n)
        memcpy(copy, e, sizeof *copy * (size_t)n);
    c->out_val[i].e = copy;
    c->out_val[i].n = n;
    return OLLA_OK;
}

void olla_shape_set_unknown(olla_shape_ctx *c, int i, const char *fmt, ...)
{
    if (!olla_shape_has_output(c, i))
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->out_reason[i] = olla_arena_strdup(&c->scratch, buf);
}

olla_status olla_shape_fail(olla_shape_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* under --input-shape the override may be the cause: named, whole, before the advice */
    const char *note = olla_shape__override_note(c->t);
    static const char fix[] = "; fix the model", check[] = ": check the override, or fix the model";
    char msg[sizeof c->err->message];
    olla_line l;
    olla_line_init(&l, msg, sizeof msg);
    size_t reserve = sizeof check + strlen(note) + 16;
    if (!olla_line_add(&l, reserve, "node '%s' (%s): %s", olla_shape_node_name(c), olla_shape_op(c), buf))
        olla_line_add(&l, reserve, "a node (%s): %s", olla_shape_op(c), buf);
    if (note[0] && olla_line_add(&l, sizeof check, "; this is%s", note))
        olla_line_add(&l, 0, "%s", check);
    else
        olla_line_add(&l, 0, "%s", fix);
    return olla_error_set(c->err, OLLA_ERR_INPUT, "%s", msg);
}

void *olla_shape_scratch(olla_shape_ctx *c, size_t bytes)
{
    return olla_arena_alloc(&c->scratch, bytes);
}

const char *olla_shape_intern(olla_shape_ctx *c, const char *s)
{
    return olla_shape__intern(c->t, s);
}

/* ---- shape values ---- */

olla_sval olla_sval_unknown(void)
{
    olla_sval s = {OLLA_SV_UNKNOWN, 0, 0, NULL};
    return s;
}

olla_sval olla_sval_int(int64_t v)
{
    olla_sval s = {OLLA_SV_KNOWN, v, (double)v, NULL};
    return s;
}

olla_sval olla_sval_of_dim(olla_dim d)
{
    if (d.value >= 0)
        return olla_sval_int(d.value);
    olla_sval s = olla_sval_unknown();
    if (d.param) {
        s.state = OLLA_SV_SYMBOLIC;
        s.sym = d.param;
    }
    return s;
}

olla_dim olla_dim_of_sval(olla_sval s)
{
    olla_dim d = {-1, NULL};
    if (s.state == OLLA_SV_KNOWN && s.i >= 0)
        d.value = s.i;
    else if (s.state == OLLA_SV_SYMBOLIC)
        d.param = s.sym;
    return d;
}

/* ---- shapes ---- */

int olla_shape_broadcast(olla_shape_ctx *c, const int *idx, int n, int *rank, olla_dim *dims)
{
    int r = 0;
    *rank = -1;
    for (int k = 0; k < n; k++) {
        if (!olla_shape_has_input(c, idx[k]))
            continue;
        int rk = olla_shape_in_rank(c, idx[k]);
        if (rk < 0)
            return 0;
        if (rk > r)
            r = rk;
    }
    if (r > OLLA_SHAPE_MAX_RANK)
        return 0;
    for (int d = 0; d < r; d++) {
        olla_dim res = olla_dim_known(1);
        int have_unknown = 0;
        for (int k = 0; k < n; k++) {
            if (!olla_shape_has_input(c, idx[k]))
                continue;
            const olla_value_type *t = olla_shape_in(c, idx[k]);
            int id = d - (r - t->rank);
            if (id < 0)
                continue;
            olla_dim x = t->dims[id];
            if (x.value == 1)
                continue;
            if (x.value >= 0) {
                if (res.value > 1 && res.value != x.value)
                    return -1;
                res = x;
            } else if (x.param) {
                if (res.value > 1)
                    continue; /* the symbol must be 1 or equal */
                if (res.value == 1)
                    res = x;
                else if (res.param && !olla_dim_equal(res, x))
                    have_unknown = 1;
            } else {
                have_unknown = 1;
            }
        }
        if (have_unknown && !(res.value > 1))
            res = olla_dim_unknown();
        dims[d] = res;
    }
    *rank = r;
    return 0;
}

int olla_shape_axis(int64_t axis, int rank, int64_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

olla_dim olla_shape_numel(olla_shape_ctx *c, const olla_value_type *t)
{
    if (!t || t->rank < 0)
        return olla_dim_unknown();
    olla_dim n = olla_dim_known(1);
    for (int d = 0; d < t->rank; d++) {
        n = olla_dim_mul(c, n, t->dims[d]);
        if (n.value < 0 && !n.param)
            return n;
    }
    return n;
}

olla_status olla_shape_set_out_tensor(olla_shape_ctx *c, int i, const Onnx__TensorProto *tp)
{
    if (!tp || !olla_shape_has_output(c, i))
        return OLLA_OK;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (tp->n_dims > OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, i, tp->data_type, -1, NULL);
    for (size_t d = 0; d < tp->n_dims; d++)
        dims[d] = olla_dim_known(tp->dims[d]);
    olla_status st = olla_shape_set_out(c, i, tp->data_type, (int)tp->n_dims, dims);
    int64_t n = 0;
    olla_sval *e = st == OLLA_OK ? olla_shape__tensor_values(&c->scratch, tp, &n) : NULL;
    if (e)
        st = olla_shape_set_out_value(c, i, e, n);
    return st;
}

int64_t olla_shape_bcast_index(const olla_value_type *in, const olla_value_type *out, int64_t flat)
{
    int64_t idx = 0, stride = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int64_t od = out->dims[d].value;
        int64_t coord = od > 0 ? flat % od : 0;
        flat = od > 0 ? flat / od : 0;
        int id = d - (out->rank - in->rank);
        if (id < 0)
            continue;
        int64_t n = in->dims[id].value;
        if (n != 1)
            idx += coord * stride;
        stride *= n;
    }
    return idx;
}

int olla_shape_tensor_scalar(const Onnx__TensorProto *tp, olla_sval *out)
{
    olla_arena a = {0};
    int64_t n = 0;
    olla_sval *e = tp ? olla_shape__tensor_values(&a, tp, &n) : NULL;
    int ok = e && n >= 1;
    if (ok)
        *out = e[0];
    olla_arena_free(&a);
    return ok;
}

const olla_value_type *olla_shape_producer_input(const olla_shape_ctx *c, int i, int j)
{
    if (i < 0 || i >= c->n_in || !c->in[i] || !c->in[i]->producer)
        return NULL;
    const Onnx__NodeProto *p = c->in[i]->producer;
    if (j < 0 || (size_t)j >= p->n_input || !p->input[j] || !p->input[j][0])
        return NULL;
    const olla_shape_entry *e = olla_shape__find(c->scope, p->input[j]);
    return e ? &e->type : NULL;
}

const char *olla_shape_producer_op(const olla_shape_ctx *c, int i)
{
    if (i < 0 || i >= c->n_in || !c->in[i] || !c->in[i]->producer)
        return NULL;
    return c->in[i]->producer->op_type;
}

int64_t olla_shape_f2i(double f)
{
    if (!(f == f))
        return 0;
    if (f >= 9e18)
        return (int64_t)9e18;
    if (f <= -9e18)
        return -(int64_t)9e18;
    return (int64_t)f;
}
