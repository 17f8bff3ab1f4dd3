/* olla-onnx: the input table of shape inference: the main graph's inputs,
 * initializers and sparse initializers as the model declares them, the
 * shapes --input-shape gives in place of the declared ones (named in the
 * messages of the failures they may cause), and why an input has no size,
 * with the flag that gives it one. */
#include <stdio.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_line.h"

/* ---- the declared values ---- */

/* A dimension declared with a negative value reads as unknown; names it
 * (into buf) so the reason says so. Returns 1 when tp has one. */
int olla_shape__negative_dim(const Onnx__TypeProto *tp, const char *name, const char *what, char *buf, size_t n)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type || !tp->tensor_type->shape)
        return 0;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    for (size_t d = 0; d < sh->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value < 0) {
            snprintf(
                buf, n,
                "'%s': %s declares dimension %zu as %lld, which is negative; declare a size >= 0 or a dim_param%s%s%s",
                name, what, d, (long long)dim->dim_value,
                strcmp(what, "graph input") == 0 ? ", or pass --input-shape " : "",
                strcmp(what, "graph input") == 0 ? name : "", strcmp(what, "graph input") == 0 ? "=D1,D2,..." : "");
            return 1;
        }
    }
    return 0;
}

/* The graph inputs of g into the main scope, with their declared types. */
static olla_status add_inputs(olla_shape_table *t, const Onnx__GraphProto *g)
{
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0])
            continue;
        olla_shape_entry *e = olla_shape__scope_put(t, &t->main, vi->name);
        if (!e || olla_shape__type_from_proto(t, vi->type, &e->type) != OLLA_OK)
            return OLLA_ERR_INTERNAL;
        e->type.source = OLLA_SRC_INPUT;
        char buf[1024];
        if (olla_shape__negative_dim(vi->type, vi->name, "graph input", buf, sizeof buf) &&
            !(e->reason = olla_arena_strdup(&t->arena, buf)))
            return OLLA_ERR_INTERNAL;
    }
    return OLLA_OK;
}

/* The initializers and sparse initializers of g into the main scope. */
static olla_status add_initializers(olla_shape_table *t, const Onnx__GraphProto *g)
{
    for (size_t k = 0; k < g->n_initializer; k++) {
        const Onnx__TensorProto *tp = g->initializer[k];
        if (!tp || !tp->name || !tp->name[0])
            continue;
        olla_shape_entry *e = olla_shape__scope_put(t, &t->main, tp->name);
        if (!e || olla_shape__from_tensor(t, tp, &e->type, &e->value) != OLLA_OK)
            return OLLA_ERR_INTERNAL;
        e->type.source = OLLA_SRC_INITIALIZER;
        e->cnst = tp;
    }
    for (size_t k = 0; k < g->n_sparse_initializer; k++) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[k];
        if (!sp || !sp->values || !sp->values->name || !sp->values->name[0])
            continue;
        olla_shape_entry *e = olla_shape__scope_put(t, &t->main, sp->values->name);
        if (!e)
            return OLLA_ERR_INTERNAL;
        memset(&e->type, 0, sizeof e->type);
        e->type.kind = OLLA_VALUE_SPARSE_TENSOR;
        e->type.elem_type = sp->values->data_type;
        e->type.rank = -1;
        e->type.source = OLLA_SRC_INITIALIZER;
    }
    return OLLA_OK;
}

olla_status olla_shape__main_values(olla_shape_table *t, const Onnx__GraphProto *g)
{
    if (olla_shape__scope_decls(t, &t->main, g) != OLLA_OK || add_inputs(t, g) != OLLA_OK)
        return OLLA_ERR_INTERNAL;
    return add_initializers(t, g);
}

/* ---- --input-shape ---- */

/* 1 when name is a graph input of g. */
static int is_graph_input(const Onnx__GraphProto *g, const char *name)
{
    for (size_t k = 0; k < g->n_input; k++)
        if (g->input[k] && g->input[k]->name && strcmp(g->input[k]->name, name) == 0)
            return 1;
    return 0;
}

/* "x=1,3,640,640" (a dimension -1 stays -1). */
static void override_text(const olla_input_shape *s, char *buf, size_t size)
{
    olla_line l;
    olla_line_init(&l, buf, size);
    if (!olla_line_add(&l, 0, "%s=", s->name))
        return;
    for (int d = 0; d < s->rank; d++)
        if (!olla_line_add(&l, 0, "%s%lld", d ? "," : "", (long long)s->dims[d]))
            return;
}

int olla_shape__input_dim(const Onnx__GraphProto *g, const char *name, int d, int64_t lo, int64_t hi,
                          int64_t *value)
{
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || strcmp(vi->name, name) != 0 || !vi->type ||
            vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type ||
            !vi->type->tensor_type->shape || (size_t)d >= vi->type->tensor_type->shape->n_dim)
            continue;
        const Onnx__TensorShapeProto__Dimension *dim = vi->type->tensor_type->shape->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= lo &&
            dim->dim_value <= hi) {
            *value = dim->dim_value;
            return 1;
        }
    }
    return 0;
}

/* The declared dimension d of graph input `name` when the model fixes it
 * (a dim_value >= 0), else -1. */
static int64_t fixed_dim(const Onnx__GraphProto *g, const char *name, int d)
{
    int64_t v;
    return olla_shape__input_dim(g, name, d, 0, INT64_MAX, &v) ? v : -1;
}

/* An --input-shape that changes a dimension the model fixes: a binding
 * warning naming it. */
static olla_status warn_fixed_dims(olla_shape_table *t, const Onnx__GraphProto *g, const olla_input_shape *s)
{
    char text[512], msg[1024];
    override_text(s, text, sizeof text);
    for (int d = 0; d < s->rank; d++) {
        int64_t fixed = fixed_dim(g, s->name, d);
        if (fixed < 0 || s->dims[d] < 0 || s->dims[d] == fixed)
            continue;
        snprintf(msg, sizeof msg,
                 "--input-shape %s changes dimension %d of graph input '%s' from %lld, which the model fixes, to "
                 "%lld; the plan is made for %lld",
                 text, d, s->name, (long long)fixed, (long long)s->dims[d], (long long)s->dims[d]);
        if (olla_shape__add_warning(t, msg, 1) != OLLA_OK)
            return OLLA_ERR_INTERNAL;
    }
    return OLLA_OK;
}

const char *olla_shape__override_note(const olla_shape_table *t)
{
    return t && t->overrides ? t->overrides : "";
}

/* --input-shape: the given shape replaces graph input s->name's declared one. */
static olla_status apply_input_shape(olla_shape_table *t, const Onnx__GraphProto *g, const olla_input_shape *s,
                                     olla_error *err)
{
    size_t i;
    if (!s->name || !is_graph_input(g, s->name) || !olla_strmap_find(&t->main.map, s->name, &i))
        return olla_error_set(err, OLLA_ERR_USAGE, "--input-shape names '%s', which is not a graph input of the model",
                              s->name ? s->name : "");
    olla_shape_entry *e = &t->main.entries[i];
    if (e->type.source == OLLA_SRC_INITIALIZER)
        return olla_error_set(err, OLLA_ERR_USAGE,
                              "--input-shape names '%s', an initializer; it sets only inputs fed at run time", s->name);
    if (e->type.kind != OLLA_VALUE_TENSOR)
        return olla_error_set(err, OLLA_ERR_USAGE, "--input-shape names '%s', which is not a tensor", s->name);
    if (s->rank < 0 || s->rank > OLLA_SHAPE_MAX_RANK || (e->type.rank >= 0 && e->type.rank != s->rank)) {
        char declared[256];
        olla_shape__format(&e->type, declared, sizeof declared);
        return olla_error_set(err, OLLA_ERR_USAGE, "--input-shape %s has %d dimensions but the model declares %s",
                              s->name, s->rank, declared);
    }
    olla_dim *dims = olla_arena_alloc(&t->arena, sizeof *dims * (size_t)(s->rank ? s->rank : 1));
    if (!dims)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] < -1)
            return olla_error_set(err, OLLA_ERR_USAGE,
                                  "--input-shape %s: dimension %d is %lld; give sizes >= 0, or -1 for unknown", s->name,
                                  d, (long long)s->dims[d]);
        dims[d] = s->dims[d] >= 0 ? olla_dim_known(s->dims[d]) : olla_dim_unknown();
    }
    char declared[256];
    olla_shape__format(&e->type, declared, sizeof declared);
    int changes = e->type.rank != s->rank;
    for (int d = 0; !changes && d < s->rank; d++)
        changes = e->type.dims[d].value != dims[d].value;
    e->type.rank = s->rank;
    e->type.dims = dims;
    e->reason = NULL; /* a negative declared dimension no longer matters */
    if (!changes)     /* the declared shape itself: no override */
        return OLLA_OK;
    /* named, whole, in the messages of the failures the override may cause */
    char text[512], piece[1024], note[400];
    override_text(s, text, sizeof text);
    snprintf(piece, sizeof piece, "--input-shape %s (declared %s)", text, declared);
    olla_line l;
    olla_line_init(&l, note, sizeof note);
    if (!olla_line_add(&l, 0, "%s", t->overrides ? t->overrides : " under") ||
        !olla_line_add(&l, 24, "%s%s", t->overrides ? ", " : " ", piece))
        olla_line_add(&l, 0, "%s", t->overrides ? "" : " under --input-shape");
    if (!(t->overrides = olla_arena_strdup(&t->arena, note)))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    if (warn_fixed_dims(t, g, s) != OLLA_OK)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    return OLLA_OK;
}

/* Every --input-shape of opt, each named once. */
olla_status olla_shape__apply_input_shapes(olla_shape_table *t, const Onnx__GraphProto *g,
                                           const olla_shape_options *opt, olla_error *err)
{
    for (int k = 0; k < opt->n_input_shapes; k++) {
        for (int j = 0; j < k; j++)
            if (opt->input_shapes[j].name && opt->input_shapes[k].name &&
                strcmp(opt->input_shapes[j].name, opt->input_shapes[k].name) == 0)
                return olla_error_set(err, OLLA_ERR_USAGE, "--input-shape %s is given twice",
                                      opt->input_shapes[k].name);
        olla_status st = apply_input_shape(t, g, &opt->input_shapes[k], err);
        if (st != OLLA_OK)
            return st;
    }
    return OLLA_OK;
}

/* ---- inputs without a size ---- */

olla_status olla_shape__input_reasons(olla_shape_table *t)
{
    for (size_t k = 0; k < t->main.n; k++) {
        olla_shape_entry *e = &t->main.entries[k];
        if (olla_value_bytes(&e->type) >= 0 || e->reason)
            continue;
        char buf[2048], declared[256];
        int advice = 0;
        olla_shape__format(&e->type, declared, sizeof declared);
        if (e->type.kind != OLLA_VALUE_TENSOR)
            snprintf(buf, sizeof buf, "'%s' is not a tensor (a sequence, map, optional or sparse value)", e->name);
        else if (e->type.source == OLLA_SRC_INPUT && olla_shape__input_advice(t, e, buf, sizeof buf) > 0)
            advice = 1; /* the advice the main command gives for it */
        else if (!e->type.elem_type)
            snprintf(buf, sizeof buf, "'%s': graph input with no element type; declare it in the model", e->name);
        else
            snprintf(buf, sizeof buf, "'%s': graph input with no complete shape (%s); pass --input-shape %s=D1,D2,...",
                     e->name, declared, e->name);
        if (!(e->reason = olla_arena_strdup(&t->arena, buf)))
            return OLLA_ERR_INTERNAL;
        if (advice) {
            const char **grown = olla_arena_alloc(&t->arena, (t->n_input_reasons + 1) * sizeof *grown);
            if (!grown)
                return OLLA_ERR_INTERNAL;
            if (t->n_input_reasons > 0)
                memcpy(grown, t->input_reasons, t->n_input_reasons * sizeof *grown);
            grown[t->n_input_reasons++] = e->reason;
            t->input_reasons = grown;
        }
    }
    return OLLA_OK;
}
