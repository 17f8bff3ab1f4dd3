/* olla-onnx: the declared types of a model (value_info and graph outputs)
 * against the inferred ones: declarations that contradict each other are an
 * input error; a declaration that disagrees with the inference wins, with a
 * warning that names the binding when one causes it (or an error with
 * --strict-shapes); one that agrees fills what the inference left open. */
#include <stdio.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"

/* ---- types ---- */

olla_status olla_shape__copy_type(olla_shape_table *t, olla_value_type *dst, const olla_value_type *src)
{
    *dst = *src;
    dst->dims = NULL;
    if (src->rank > 0 && src->dims) {
        dst->dims = olla_arena_alloc(&t->arena, sizeof *dst->dims * (size_t)src->rank);
        if (!dst->dims)
            return OLLA_ERR_INTERNAL;
        memcpy(dst->dims, src->dims, sizeof *dst->dims * (size_t)src->rank);
    }
    return OLLA_OK;
}

/* ---- declarations against each other ---- */

/* 1 when two declared types of one value contradict each other. */
static int decls_clash(const Onnx__TypeProto *a, const Onnx__TypeProto *b)
{
    if (!a || !b || a->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        b->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !a->tensor_type || !b->tensor_type)
        return 0;
    const Onnx__TypeProto__Tensor *x = a->tensor_type, *y = b->tensor_type;
    if (x->elem_type && y->elem_type && x->elem_type != y->elem_type)
        return 1;
    if (!x->shape || !y->shape)
        return 0;
    if (x->shape->n_dim != y->shape->n_dim)
        return 1;
    for (size_t d = 0; d < x->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *p = x->shape->dim[d], *q = y->shape->dim[d];
        if (p && q && p->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            q->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && p->dim_value != q->dim_value)
            return 1;
    }
    return 0;
}

/* A value declared twice in the main graph (value_info and graph output, or
 * twice in one list) with contradicting types cannot be planned safely. */
olla_status olla_shape__check_duplicate_decls(olla_shape_table *t, const Onnx__GraphProto *g, olla_error *err)
{
    olla_strmap first = {0};
    olla_status st = OLLA_OK;
    size_t n = g->n_value_info + g->n_output;
    for (size_t k = 0; st == OLLA_OK && k < n; k++) {
        const Onnx__ValueInfoProto *vi = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
        size_t j;
        if (!vi || !vi->name || !vi->name[0] || !vi->type)
            continue;
        if (!olla_strmap_find(&first, vi->name, &j)) {
            if (!olla_strmap_put(&first, vi->name, k))
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
            continue;
        }
        const Onnx__ValueInfoProto *prev = j < g->n_value_info ? g->value_info[j] : g->output[j - g->n_value_info];
        if (!decls_clash(prev->type, vi->type))
            continue;
        olla_value_type a, b;
        char ta[256] = "?", tb[256] = "?";
        if (olla_shape__type_from_proto(t, prev->type, &a) == OLLA_OK)
            olla_shape__format(&a, ta, sizeof ta);
        if (olla_shape__type_from_proto(t, vi->type, &b) == OLLA_OK)
            olla_shape__format(&b, tb, sizeof tb);
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "'%s' is declared twice with different types (%s in %s, %s in %s); keep one declaration",
                            vi->name, ta, j < g->n_value_info ? "value_info" : "the graph outputs", tb,
                            k < g->n_value_info ? "value_info" : "the graph outputs");
    }
    olla_strmap_free(&first);
    return st;
}

/* ---- a declaration against the inference ---- */

static int knows_nothing(const olla_value_type *t)
{
    return t->kind == OLLA_VALUE_TENSOR && t->elem_type == 0 && t->rank < 0;
}

static int types_conflict(const olla_value_type *a, const olla_value_type *b)
{
    if (knows_nothing(a) || knows_nothing(b))
        return 0;
    if (a->kind != b->kind)
        return 1;
    if (a->elem_type && b->elem_type && a->elem_type != b->elem_type)
        return 1;
    if (a->rank >= 0 && b->rank >= 0) {
        if (a->rank != b->rank)
            return 1;
        for (int d = 0; d < a->rank; d++)
            if (a->dims[d].value >= 0 && b->dims[d].value >= 0 && a->dims[d].value != b->dims[d].value)
                return 1;
    }
    return 0;
}

/* " under --dim A=640" when a --dim binding gave a dimension of the
 * declaration (proto, a dim_param there) the value that differs from the
 * inferred one; else " under --input-shape ..." when input shapes were
 * overridden and a dimension differs; else "". Returns 1 when the bindings
 * are the likely cause. */
static int binding_cause(const olla_shape_table *t, const Onnx__TypeProto *proto, const olla_value_type *inf,
                         const olla_value_type *decl, char *buf, size_t size)
{
    buf[0] = '\0';
    const Onnx__TensorShapeProto *sh =
        proto && proto->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && proto->tensor_type
            ? proto->tensor_type->shape
            : NULL;
    size_t at = 0;
    for (int d = 0; sh && d < decl->rank && d < inf->rank && (size_t)d < sh->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
        if (!dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || !dim->dim_param ||
            decl->dims[d].value < 0 || inf->dims[d].value < 0 || decl->dims[d].value == inf->dims[d].value)
            continue;
        for (int k = 0; k < t->n_bind; k++) {
            size_t len = strlen(t->bind[k].name);
            const char *hit = len ? strstr(dim->dim_param, t->bind[k].name) : NULL;
            /* a whole name of the parameter, as olla_dim_param_eval reads it */
            while (hit &&
                   ((hit > dim->dim_param && !strchr("+-*() ", hit[-1])) || (hit[len] && !strchr("+-*() ", hit[len]))))
                hit = strstr(hit + 1, t->bind[k].name);
            if (!hit)
                continue;
            char piece[600];
            int n = snprintf(piece, sizeof piece, "%s--dim %s=%lld", at ? " " : " under ", t->bind[k].name,
                             (long long)t->bind[k].value);
            if (n > 0 && (size_t)n < sizeof piece && at + (size_t)n < size && !strstr(buf, piece + 1)) {
                memcpy(buf + at, piece, (size_t)n + 1);
                at += (size_t)n;
            }
        }
    }
    if (at)
        return 1;
    int dims_differ = 0;
    for (int d = 0; decl->rank == inf->rank && d < decl->rank; d++)
        dims_differ |= decl->dims[d].value >= 0 && inf->dims[d].value >= 0 && decl->dims[d].value != inf->dims[d].value;
    if (t->overrides && dims_differ) { /* a binding changes sizes, never element types */
        snprintf(buf, size, "%s", t->overrides);
        return 1;
    }
    return 0;
}

/* A disagreement between the inferred type of output i and its declaration.
 * The declaration wins: its element type and its known dimensions are kept,
 * its unknown parts are filled from the inference. When the declaration has
 * no complete size and its rank contradicts the inference there is nothing
 * to trust: an input error. With strict set, every disagreement is one. */
static olla_status merge_conflict(olla_shape_ctx *c, int i, const olla_value_type *inf, const olla_shape_decl *declared,
                                  olla_value_type *out)
{
    olla_shape_table *t = c->t;
    const olla_value_type *decl = declared->type;
    const Onnx__TypeProto *decl_proto = declared->proto;
    char a[256], b[256], under[640];
    const char *name = c->node->output[i];
    olla_shape__format(inf, a, sizeof a);
    olla_shape__format(decl, b, sizeof b);
    int64_t inf_bytes = olla_value_bytes(inf), decl_bytes = olla_value_bytes(decl);
    int rank_clash = inf->rank >= 0 && decl->rank >= 0 && inf->rank != decl->rank;
    int bound = binding_cause(t, decl_proto, inf, decl, under, sizeof under);
    if ((t->strict && (!bound || rank_clash)) || (rank_clash && decl_bytes < 0))
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "'%s' (node '%s', %s): inferred %s but the model declares %s%s; fix the declaration "
                              "(value_info or graph output)%s",
                              name, olla_shape_node_name(c), olla_shape_op(c), a, b,
                              t->strict ? "" : ", and the declaration has no complete size to use instead",
                              t->strict ? " or drop --strict-shapes" : "");
    olla_status st = olla_shape__copy_type(t, out, decl);
    if (st != OLLA_OK)
        return st;
    if (!out->elem_type)
        out->elem_type = inf->elem_type;
    if (out->rank < 0 && inf->rank >= 0) {
        st = olla_shape__copy_type(t, out, inf);
        out->elem_type = decl->elem_type ? decl->elem_type : inf->elem_type;
    } else if (!rank_clash && inf->rank >= 0)
        for (int d = 0; d < out->rank; d++)
            if (out->dims[d].value < 0 && inf->dims[d].value >= 0)
                out->dims[d] = inf->dims[d];
    out->source = OLLA_SRC_VALUE_INFO;
    char used[256], sizes[128] = "", msg[2048];
    olla_shape__format(out, used, sizeof used);
    int64_t out_bytes = olla_value_bytes(out);
    int64_t gap = out_bytes > inf_bytes ? out_bytes - inf_bytes : inf_bytes - out_bytes;
    if (t->strict && (inf_bytes < 0 || out_bytes < 0))
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "'%s' (node '%s', %s):%s inferred %s but the model declares %s; check the binding, fix "
                              "the declaration (value_info or graph output), or drop --strict-shapes",
                              name, olla_shape_node_name(c), olla_shape_op(c), under, a, b);
    if (t->strict) /* under the bindings: named, with both sizes */
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "'%s' (node '%s', %s):%s the model declares %s, %lld bytes, where the inferred %s has "
                              "%lld; check the binding, fix the declaration (value_info or graph output), or drop "
                              "--strict-shapes",
                              name, olla_shape_node_name(c), olla_shape_op(c), under, used, (long long)out_bytes, a,
                              (long long)inf_bytes);
    if (bound && inf_bytes >= 0 && out_bytes >= 0 && gap > t->align) {
        /* the bindings make the declaration disagree: the plan holds the declared size */
        snprintf(msg, sizeof msg,
                 "'%s' (node '%s', %s):%s the model declares %s, %lld bytes, where the inferred %s has %lld; the "
                 "declared size is planned: check the binding",
                 name, olla_shape_node_name(c), olla_shape_op(c), under, used, (long long)out_bytes, a,
                 (long long)inf_bytes);
        return st == OLLA_OK && olla_shape__add_warning(t, msg, 1) != OLLA_OK ? OLLA_ERR_INTERNAL : st;
    }
    if (inf_bytes >= 0 && out_bytes >= 0 && inf_bytes != out_bytes)
        snprintf(sizes, sizeof sizes, " (%lld byte%s where the inferred type has %lld)", (long long)out_bytes,
                 out_bytes == 1 ? "" : "s", (long long)inf_bytes);
    snprintf(msg, sizeof msg, "'%s' (node '%s', %s): inferred %s but the model declares %s; using %s as declared%s",
             name, olla_shape_node_name(c), olla_shape_op(c), a, b, used, sizes);
    if (st == OLLA_OK && olla_shape__add_warning(t, msg, 0) != OLLA_OK)
        return OLLA_ERR_INTERNAL;
    return st;
}

/* Merges the inferred type of output i of c's node (inf, may be NULL) with
 * its declaration into out (dims in the table arena). Sets *keep_value when
 * the inferred value stays valid. A disagreement is a warning, or an error
 * in c->err. */
static olla_status merge_types(olla_shape_ctx *c, int i, const olla_value_type *inf, const olla_shape_decl *declared,
                               olla_value_type *out, int *keep_value)
{
    olla_shape_table *t = c->t;
    const olla_value_type *decl = declared->type;
    *keep_value = 0;
    if (!inf && !decl) {
        memset(out, 0, sizeof *out);
        out->rank = -1;
        return OLLA_OK;
    }
    if (!decl) {
        *keep_value = 1;
        olla_status st = olla_shape__copy_type(t, out, inf);
        out->source = OLLA_SRC_INFERRED;
        return st;
    }
    if (!inf) {
        olla_status st = olla_shape__copy_type(t, out, decl);
        out->source = OLLA_SRC_VALUE_INFO;
        return st;
    }
    if (types_conflict(inf, decl))
        return merge_conflict(c, i, inf, declared, out);
    /* compatible: take the most precise of each */
    const olla_value_type *base = inf->rank >= 0 ? inf : decl;
    olla_status st = olla_shape__copy_type(t, out, base);
    if (st != OLLA_OK)
        return st;
    int same = base == inf;
    if (!out->elem_type && decl->elem_type) {
        out->elem_type = decl->elem_type;
        same = 0;
    }
    if (inf->rank >= 0 && decl->rank >= 0) {
        for (int d = 0; d < out->rank; d++) {
            olla_dim di = inf->dims[d], dd = decl->dims[d];
            if (di.value >= 0)
                continue;
            /* a symbolic inferred dim is kept over a different declared name:
             * it is derived from the graph inputs, so --dim bindings resolve it */
            if (dd.value >= 0 || (dd.param && !di.param)) {
                out->dims[d] = dd;
                same = 0;
            }
        }
    }
    out->source = same ? OLLA_SRC_INFERRED : OLLA_SRC_VALUE_INFO;
    *keep_value = same;
    return OLLA_OK;
}

/* ---- storing a node's output ---- */

olla_status olla_shape__store_output(olla_shape_table *t, olla_shape_scope *scope, olla_shape_ctx *c, int i,
                                     int has_rule)
{
    const char *name = c->node->output[i];
    size_t di;
    olla_value_type decl;
    olla_shape_decl declared = {NULL, NULL};
    if (olla_strmap_find(&scope->decl, name, &di)) {
        if (olla_shape__type_from_proto(t, scope->decls[di]->type, &decl) != OLLA_OK)
            return OLLA_ERR_INTERNAL;
        if (decl.kind != OLLA_VALUE_TENSOR || decl.elem_type || decl.rank >= 0) {
            declared.type = &decl;
            declared.proto = scope->decls[di]->type;
        }
    }
    const olla_value_type *inf = c->out_set[i] ? &c->out[i] : NULL;
    olla_value_type merged;
    int keep_value;
    olla_status mst = merge_types(c, i, inf, &declared, &merged, &keep_value);
    if (mst != OLLA_OK)
        return mst;
    olla_shape_entry *e = olla_shape__scope_put(t, scope, name);
    if (!e)
        return OLLA_ERR_INTERNAL;
    e->type = merged;
    e->value.e = NULL;
    e->value.n = 0;
    e->cnst = NULL;
    e->reason = NULL;
    e->producer = c->node;
    if (keep_value && c->out_val[i].e) {
        olla_sval *v = olla_arena_alloc(&t->arena, sizeof *v * (size_t)(c->out_val[i].n ? c->out_val[i].n : 1));
        if (!v)
            return OLLA_ERR_INTERNAL;
        memcpy(v, c->out_val[i].e, sizeof *v * (size_t)c->out_val[i].n);
        e->value.e = v;
        e->value.n = c->out_val[i].n;
    }
    if (olla_value_bytes(&e->type) < 0) {
        char buf[1024];
        if (olla_strmap_find(&scope->decl, name, &di) &&
            olla_shape__negative_dim(scope->decls[di]->type, name, "its value_info", buf, sizeof buf))
            e->reason = olla_arena_strdup(&t->arena, buf);
        else
            e->reason = olla_shape__unknown_reason(t, c, i, has_rule, &e->type);
        if (!e->reason)
            return OLLA_ERR_INTERNAL;
    }
    return OLLA_OK;
}
