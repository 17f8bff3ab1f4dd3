/* olla-onnx: the shape-inference engine. Builds the table of value types of
 * a model: graph inputs and initializers, then every node in a topological
 * order, each through its rule (passes/shapes/shape_*.c), merged with value_info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_line.h"
#include "util/olla_grow.h"

#define MAX_DEPTH 64

/* ---- scopes (lookup and release: passes/shapes/shape_scope.c) ---- */

/* Adds (or replaces) name in scope; returns the entry or NULL on OOM. */
static olla_shape_entry *scope_put(olla_shape_table *t, olla_shape_scope *s, const char *name, size_t *index)
{
    size_t i;
    const char *key = olla_shape__intern(t, name);
    if (!key)
        return NULL;
    if (olla_strmap_find(&s->map, key, &i)) {
        if (index)
            *index = i;
        return &s->entries[i];
    }
    olla_shape_entry *e = olla_grow(s->entries, &s->cap, s->n + 1, sizeof *e);
    if (!e)
        return NULL;
    s->entries = e;
    i = s->n++;
    memset(&s->entries[i], 0, sizeof s->entries[i]);
    s->entries[i].name = key;
    s->entries[i].type.rank = -1;
    if (!olla_strmap_put(&s->map, key, i))
        return NULL;
    if (index)
        *index = i;
    return &s->entries[i];
}

static olla_status scope_decls(olla_shape_table *t, olla_shape_scope *s, const Onnx__GraphProto *g)
{
    if (t->ignore_vi)
        return OLLA_OK;
    size_t n = g->n_value_info + g->n_output;
    s->decls = calloc(n ? n : 1, sizeof *s->decls);
    if (!s->decls)
        return OLLA_ERR_INTERNAL;
    for (size_t k = 0; k < n; k++) {
        const Onnx__ValueInfoProto *vi = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
        if (!vi || !vi->name || !vi->name[0] || !vi->type)
            continue;
        s->decls[s->n_decls] = vi;
        if (!olla_strmap_put(&s->decl, vi->name, s->n_decls))
            return OLLA_ERR_INTERNAL;
        s->n_decls++;
    }
    return OLLA_OK;
}

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
static olla_status check_duplicate_decls(olla_shape_table *t, const Onnx__GraphProto *g, olla_error *err)
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

static olla_status copy_type(olla_shape_table *t, olla_value_type *dst, const olla_value_type *src)
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

/* binding: 1 when the bindings given cause it (listed first) */
static olla_status add_warning(olla_shape_table *t, const char *msg, int binding)
{
    if (t->n_warnings == t->cap_warnings) {
        size_t cap = t->cap_warnings ? t->cap_warnings * 2 : 16;
        char **w = realloc(t->warnings, cap * sizeof *w);
        if (!w)
            return OLLA_ERR_INTERNAL;
        t->warnings = w;
        unsigned char *f = realloc(t->warning_binding, cap);
        if (!f)
            return OLLA_ERR_INTERNAL;
        t->warning_binding = f;
        t->cap_warnings = cap;
    }
    t->warning_binding[t->n_warnings] = (unsigned char)(binding != 0);
    char *copy = olla_arena_strdup(&t->arena, msg);
    if (!copy)
        return OLLA_ERR_INTERNAL;
    for (char *p = copy; *p; p++) /* names may hold newlines or escapes: one plain line */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    t->warnings[t->n_warnings++] = copy;
    return OLLA_OK;
}

/* ---- reasons ---- */

/* A dimension parameter's names are what lies between + - * ( ) and
 * spaces, as olla_dim_param_eval reads them: "/" belongs to a name
 * ("/decoder/Unsqueeze_output_0_dim_0"), never splits it. */
static int is_ident_char(char ch)
{
    return ch && !strchr("*+-() ", ch);
}

/* Appends the symbolic names used by t's dims to buf (deduplicated). */
static void symbol_names(const olla_value_type *t, char *names, size_t size, char *dims_flag, size_t flag_size)
{
    size_t at = strlen(names), fat = strlen(dims_flag);
    for (int d = 0; d < t->rank; d++) {
        const char *p = t->dims[d].value < 0 ? t->dims[d].param : NULL;
        while (p && *p) {
            while (*p && !is_ident_char(*p))
                p++;
            const char *s = p;
            while (is_ident_char(*p))
                p++;
            size_t len = (size_t)(p - s);
            if (!len || (s[0] >= '0' && s[0] <= '9'))
                continue;
            /* already listed? */
            int dup = 0;
            for (const char *q = names; *q;) {
                const char *e = strchr(q, ',');
                size_t ql = e ? (size_t)(e - q) : strlen(q);
                if (ql == len + 0 && strncmp(q, s, len) == 0)
                    dup = 1;
                if (!e)
                    break;
                q = e + 1;
            }
            if (dup)
                continue;
            int w = snprintf(names + at, size > at ? size - at : 0, "%s%.*s", at ? "," : "", (int)len, s);
            if (w > 0)
                at += (size_t)w;
            w = snprintf(dims_flag + fat, flag_size > fat ? flag_size - fat : 0, " --dim %.*s=N", (int)len, s);
            if (w > 0)
                fat += (size_t)w;
            if (at >= size || fat >= flag_size)
                return;
        }
    }
}

/* 1 when reason is the one of a graph input of the main graph with open
 * dimensions (input_reasons), which the sizes it leaves open carry on. */
static int is_input_reason(const olla_shape_table *t, const char *reason)
{
    for (size_t k = 0; k < t->n_input_reasons; k++)
        if (t->input_reasons[k] == reason)
            return 1;
    return 0;
}

static const char *unknown_reason(olla_shape_table *t, olla_shape_ctx *c, int i, int has_rule,
                                  const olla_value_type *ty)
{
    char buf[2048];
    const char *name = c->node->output[i];
    const char *op = olla_shape_op(c), *node = olla_shape_node_name(c);
    if (ty->kind != OLLA_VALUE_TENSOR) {
        snprintf(buf, sizeof buf, "'%s' is not a tensor (a sequence, map, optional or sparse value)", name);
        return olla_arena_strdup(&t->arena, buf);
    }
    /* a size that waits on a graph input with open dimensions: that input's
     * advice (a declaration's own symbolic names would not size it) */
    for (int k = 0; k < c->n_in; k++)
        if (c->in[k] && c->in[k]->reason && olla_value_bytes(&c->in[k]->type) < 0 &&
            is_input_reason(t, c->in[k]->reason))
            return c->in[k]->reason;
    int any_unknown = ty->rank < 0 || ty->elem_type == 0;
    for (int d = 0; d < ty->rank; d++)
        if (ty->dims[d].value < 0 && !ty->dims[d].param)
            any_unknown = 1;
    if (!any_unknown) {
        char names[512] = "", flags[512] = "";
        symbol_names(ty, names, sizeof names, flags, sizeof flags);
        if (names[0]) {
            snprintf(buf, sizeof buf, "'%s' has symbolic dims %s; pass%s", name, names, flags);
            return olla_arena_strdup(&t->arena, buf);
        }
        if (olla_elem_type_bits(ty->elem_type) == 0) {
            snprintf(buf, sizeof buf, "'%s' has element type %s, which has no fixed size", name,
                     olla_elem_type_name(ty->elem_type) ? olla_elem_type_name(ty->elem_type) : "?");
            return olla_arena_strdup(&t->arena, buf);
        }
    }
    if (c->out_reason[i]) {
        snprintf(buf, sizeof buf, "'%s': %s (node '%s', %s)", name, c->out_reason[i], node, op);
        return olla_arena_strdup(&t->arena, buf);
    }
    if (!has_rule) {
        if (strcmp(c->domain, "org.pytorch.aten") == 0 || strcmp(op, "ATen") == 0)
            snprintf(buf, sizeof buf, "'%s' is an output of ATen node '%s', whose shapes come only from value_info",
                     name, node);
        else
            snprintf(buf, sizeof buf, "'%s': unsupported operator %s%s%s at node '%s'; declare its shape in value_info",
                     name, c->domain[0] ? c->domain : "", c->domain[0] ? ":" : "", op, node);
        return olla_arena_strdup(&t->arena, buf);
    }
    for (int k = 0; k < c->n_in; k++)
        if (c->in[k] && c->in[k]->reason && olla_value_bytes(&c->in[k]->type) < 0)
            return c->in[k]->reason;
    snprintf(buf, sizeof buf, "'%s': the %s rule could not determine its size at node '%s'", name, op, node);
    return olla_arena_strdup(&t->arena, buf);
}

/* ---- merging with value_info ---- */

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
            ? proto->tensor_type->shape : NULL;
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
            while (hit && ((hit > dim->dim_param && !strchr("+-*() ", hit[-1])) ||
                           (hit[len] && !strchr("+-*() ", hit[len]))))
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
static olla_status merge_conflict(olla_shape_table *t, olla_shape_ctx *c, int i, const olla_value_type *inf,
                                  const olla_value_type *decl, const Onnx__TypeProto *decl_proto, olla_value_type *out)
{
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
    olla_status st = copy_type(t, out, decl);
    if (st != OLLA_OK)
        return st;
    if (!out->elem_type)
        out->elem_type = inf->elem_type;
    if (out->rank < 0 && inf->rank >= 0) {
        st = copy_type(t, out, inf);
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
        return st == OLLA_OK && add_warning(t, msg, 1) != OLLA_OK ? OLLA_ERR_INTERNAL : st;
    }
    if (inf_bytes >= 0 && out_bytes >= 0 && inf_bytes != out_bytes)
        snprintf(sizes, sizeof sizes, " (%lld byte%s where the inferred type has %lld)", (long long)out_bytes,
                 out_bytes == 1 ? "" : "s", (long long)inf_bytes);
    snprintf(msg, sizeof msg, "'%s' (node '%s', %s): inferred %s but the model declares %s; using %s as declared%s",
             name, olla_shape_node_name(c), olla_shape_op(c), a, b, used, sizes);
    if (st == OLLA_OK && add_warning(t, msg, 0) != OLLA_OK)
        return OLLA_ERR_INTERNAL;
    return st;
}

/* Merges inferred (may be NULL) with declared (may be NULL) into out (dims
 * in the table arena). Sets *keep_value when the inferred value stays
 * valid. */
static olla_status merge_types(olla_shape_table *t, olla_shape_ctx *c, int i, const olla_value_type *inf,
                               const olla_value_type *decl, const Onnx__TypeProto *decl_proto, olla_value_type *out,
                               int *keep_value)
{
    *keep_value = 0;
    if (!inf && !decl) {
        memset(out, 0, sizeof *out);
        out->rank = -1;
        return OLLA_OK;
    }
    if (!decl) {
        *keep_value = 1;
        olla_status st = copy_type(t, out, inf);
        out->source = OLLA_SRC_INFERRED;
        return st;
    }
    if (!inf) {
        olla_status st = copy_type(t, out, decl);
        out->source = OLLA_SRC_VALUE_INFO;
        return st;
    }
    if (types_conflict(inf, decl))
        return merge_conflict(t, c, i, inf, decl, decl_proto, out);
    /* compatible: take the most precise of each */
    const olla_value_type *base = inf->rank >= 0 ? inf : decl;
    olla_status st = copy_type(t, out, base);
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

/* ---- nodes ---- */

static int64_t opset_of(const olla_shape_table *t, const char *domain)
{
    const Onnx__ModelProto *m = t->model;
    for (size_t k = 0; k < m->n_opset_import; k++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[k];
        if (!o)
            continue;
        const char *d = o->domain ? o->domain : "";
        if (strcmp(d, "ai.onnx") == 0)
            d = "";
        if (strcmp(d, domain) == 0)
            return o->version;
    }
    return 0;
}

static olla_shape_rule_fn rule_for(olla_shape_table *t, const char *domain, const char *op)
{
    char key[512];
    size_t i, ld = strlen(domain), lo = strlen(op);
    if (ld + lo + 2 > sizeof key)
        return olla_shape_find_rule(domain, op);
    memcpy(key, domain, ld);
    key[ld] = '\x1f';
    memcpy(key + ld + 1, op, lo + 1);
    if (olla_strmap_find(&t->rules, key, &i))
        return t->rule_fns[i];
    olla_shape_rule_fn fn = olla_shape_find_rule(domain, op);
    olla_shape_rule_fn *grown = realloc(t->rule_fns, (t->n_rule_fns + 1) * sizeof *grown);
    char *copy = olla_arena_strdup(&t->arena, key);
    if (!grown || !copy) {
        if (grown)
            t->rule_fns = grown;
        return fn;
    }
    t->rule_fns = grown;
    t->rule_fns[t->n_rule_fns] = fn;
    if (olla_strmap_put(&t->rules, copy, t->n_rule_fns))
        t->n_rule_fns++;
    return fn;
}

/* A dimension declared with a negative value reads as unknown; names it
 * (into buf) so the reason says so. Returns 1 when tp has one. */
static int negative_dim(const Onnx__TypeProto *tp, const char *name, const char *what, char *buf, size_t n)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape)
        return 0;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    for (size_t d = 0; d < sh->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value < 0) {
            snprintf(buf, n, "'%s': %s declares dimension %zu as %lld, which is negative; declare a size >= 0 or a dim_param%s%s%s",
                     name, what, d, (long long)dim->dim_value, strcmp(what, "graph input") == 0 ? ", or pass --input-shape " : "",
                     strcmp(what, "graph input") == 0 ? name : "", strcmp(what, "graph input") == 0 ? "=D1,D2,..." : "");
            return 1;
        }
    }
    return 0;
}

static olla_status store_output(olla_shape_table *t, olla_shape_scope *scope, olla_shape_ctx *c, int i,
                                int has_rule)
{
    const char *name = c->node->output[i];
    size_t di;
    olla_value_type decl, *declp = NULL;
    if (olla_strmap_find(&scope->decl, name, &di)) {
        if (olla_shape__type_from_proto(t, scope->decls[di]->type, &decl) != OLLA_OK)
            return OLLA_ERR_INTERNAL;
        if (decl.kind != OLLA_VALUE_TENSOR || decl.elem_type || decl.rank >= 0)
            declp = &decl;
    }
    const olla_value_type *inf = c->out_set[i] ? &c->out[i] : NULL;
    olla_value_type merged;
    int keep_value;
    olla_status mst =
        merge_types(t, c, i, inf, declp, declp ? scope->decls[di]->type : NULL, &merged, &keep_value);
    if (mst != OLLA_OK)
        return mst;
    olla_shape_entry *e = scope_put(t, scope, name, NULL);
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
        if (olla_strmap_find(&scope->decl, name, &di) && negative_dim(scope->decls[di]->type, name, "its value_info", buf, sizeof buf))
            e->reason = olla_arena_strdup(&t->arena, buf);
        else
            e->reason = unknown_reason(t, c, i, has_rule, &e->type);
        if (!e->reason)
            return OLLA_ERR_INTERNAL;
    }
    return OLLA_OK;
}

static olla_status process_node(olla_shape_table *t, olla_shape_scope *scope, const Onnx__NodeProto *node,
                                olla_error *err)
{
    olla_shape_ctx c;
    memset(&c, 0, sizeof c);
    t->visits++;
    c.t = t;
    c.scope = scope;
    c.node = node;
    c.scratch = t->spare; /* reuse the last node's memory */
    t->spare.head = NULL;
    c.err = err;
    c.domain = node->domain && strcmp(node->domain, "ai.onnx") != 0 ? node->domain : "";
    c.opset = opset_of(t, c.domain);
    c.n_in = (int)node->n_input;
    c.n_out = (int)node->n_output;
    olla_status st = OLLA_OK;
    c.in = olla_arena_alloc(&c.scratch, sizeof *c.in * (size_t)(c.n_in + 1));
    c.out = olla_arena_alloc(&c.scratch, sizeof *c.out * (size_t)(c.n_out + 1));
    c.out_set = olla_arena_alloc(&c.scratch, sizeof *c.out_set * (size_t)(c.n_out + 1));
    c.out_val = olla_arena_alloc(&c.scratch, sizeof *c.out_val * (size_t)(c.n_out + 1));
    c.out_reason = olla_arena_alloc(&c.scratch, sizeof *c.out_reason * (size_t)(c.n_out + 1));
    if (!c.in || !c.out || !c.out_set || !c.out_val || !c.out_reason) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
        goto done;
    }
    for (int k = 0; k < c.n_in; k++) {
        const char *name = node->input[k];
        if (!name || !name[0])
            continue;
        c.in[k] = olla_shape__find(scope, name);
        if (!c.in[k]) {
            olla_shape_entry *m = olla_arena_alloc(&c.scratch, sizeof *m);
            char buf[512];
            snprintf(buf, sizeof buf, "'%s' is used by node '%s' but not produced by any node, input or initializer",
                     name, olla_shape_node_name(&c));
            if (!m || !(m->reason = olla_arena_strdup(&t->arena, buf))) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
                goto done;
            }
            m->name = name;
            m->type.rank = -1;
            c.in[k] = m;
        }
    }
    olla_shape_rule_fn rule = rule_for(t, c.domain, olla_shape_op(&c));
    if (rule) {
        st = rule(&c);
        if (st == OLLA_OK && err->code != OLLA_OK)
            st = err->code;
        if (st != OLLA_OK) {
            if (err->code == OLLA_OK)
                olla_error_set(err, st, "node '%s' (%s): shape inference failed (out of memory)",
                               olla_shape_node_name(&c), olla_shape_op(&c));
            goto done;
        }
    }
    /* Storing outputs may grow the scope's entry array: keep the inputs in
     * stable copies (their dims and values live in the arena). */
    for (int k = 0; k < c.n_in; k++) {
        if (!c.in[k])
            continue;
        olla_shape_entry *copy = olla_arena_alloc(&c.scratch, sizeof *copy);
        if (!copy) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
            goto done;
        }
        *copy = *c.in[k];
        c.in[k] = copy;
    }
    for (int i = 0; i < c.n_out; i++) {
        if (!olla_shape_has_output(&c, i))
            continue;
        if ((st = store_output(t, scope, &c, i, rule != NULL)) != OLLA_OK) {
            st = err->code != OLLA_OK ? err->code
                                      : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
            goto done;
        }
    }
    if (c.n_out > 0 && olla_shape_has_output(&c, 0) && strcmp(olla_shape_op(&c), "Constant") == 0 &&
        !c.domain[0]) {
        const Onnx__AttributeProto *a = olla_shape_attr(&c, "value");
        olla_shape_entry *e = olla_shape__find(scope, node->output[0]);
        if (a && a->t && e)
            e->cnst = a->t;
    }
done:
    if (!t->spare.head) {
        olla_arena_reset(&c.scratch);
        t->spare = c.scratch;
    } else {
        olla_arena_free(&c.scratch);
    }
    return st;
}

/* ---- topological processing ---- */

typedef void (*name_fn)(const char *name, void *ud);

/* Calls fn for every input of node and, recursively, of its subgraphs
 * (outer-scope references). */
static void for_each_dep(const Onnx__NodeProto *node, name_fn fn, void *ud, int depth);

void olla_shape__for_each_dep(const Onnx__NodeProto *node, void (*fn)(const char *name, void *ud), void *ud)
{
    for_each_dep(node, fn, ud, 0);
}

static void for_each_dep(const Onnx__NodeProto *node, name_fn fn, void *ud, int depth)
{
    for (size_t k = 0; k < node->n_input; k++)
        if (node->input[k] && node->input[k][0])
            fn(node->input[k], ud);
    if (depth > MAX_DEPTH)
        return;
    for (size_t a = 0; a < node->n_attribute; a++) {
        const Onnx__AttributeProto *at = node->attribute[a];
        if (!at)
            continue;
        size_t ng = at->n_graphs + (at->g ? 1 : 0);
        for (size_t gi = 0; gi < ng; gi++) {
            const Onnx__GraphProto *g = gi < at->n_graphs ? at->graphs[gi] : at->g;
            if (!g)
                continue;
            for (size_t n = 0; n < g->n_node; n++)
                if (g->node[n])
                    for_each_dep(g->node[n], fn, ud, depth + 1);
        }
    }
}

typedef struct {
    const olla_strmap *producer;
    size_t self;
    size_t *edges; /* NULL: count only */
    size_t n;
} dep_walk;

static void count_dep(const char *name, void *ud)
{
    dep_walk *w = ud;
    size_t p;
    if (olla_strmap_find(w->producer, name, &p) && p != w->self) {
        if (w->edges)
            w->edges[w->n] = p;
        w->n++;
    }
}

olla_status olla_shape__run_graph(olla_shape_table *t, olla_shape_scope *scope, const Onnx__GraphProto *g,
                                  olla_error *err)
{
    size_t n = g->n_node;
    if (n == 0)
        return OLLA_OK;
    olla_strmap producer = {0};
    size_t *indeg = calloc(n, sizeof *indeg), *start = calloc(n + 1, sizeof *start);
    size_t *queue = calloc(n, sizeof *queue), *edges = NULL, *adj = NULL, *fill = NULL;
    unsigned char *done = calloc(n, 1);
    olla_status st = OLLA_OK;
    if (!indeg || !start || !queue || !done)
        goto oom;
    for (size_t k = 0; k < n; k++) {
        const Onnx__NodeProto *node = g->node[k];
        if (!node) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "graph '%s': node %zu is empty; fix the model",
                                g->name ? g->name : "", k);
            goto out;
        }
        for (size_t o = 0; o < node->n_output; o++)
            if (node->output[o] && node->output[o][0] && !olla_strmap_put(&producer, node->output[o], k))
                goto oom;
    }
    /* dependency edges: consumer k depends on producer p; adjacency p -> k */
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        dep_walk w = {&producer, k, NULL, 0};
        for_each_dep(g->node[k], count_dep, &w, 0);
        indeg[k] = w.n;
        total += w.n;
    }
    edges = malloc((total ? total : 1) * sizeof *edges);
    adj = malloc((total ? total : 1) * sizeof *adj);
    fill = calloc(n + 1, sizeof *fill);
    if (!edges || !adj || !fill)
        goto oom;
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        dep_walk w = {&producer, k, edges + at, 0};
        for_each_dep(g->node[k], count_dep, &w, 0);
        at += w.n;
    }
    /* count out-degree per producer */
    at = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t e = 0; e < indeg[k]; e++)
            start[edges[at++] + 1]++;
    for (size_t k = 0; k < n; k++)
        start[k + 1] += start[k];
    at = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t e = 0; e < indeg[k]; e++) {
            size_t p = edges[at++];
            adj[start[p] + fill[p]++] = k;
        }
    size_t head = 0, tail = 0;
    for (size_t k = 0; k < n; k++)
        if (indeg[k] == 0)
            queue[tail++] = k;
    size_t next_leftover = 0;
    for (size_t processed = 0; processed < n; processed++) {
        size_t k;
        if (head < tail) {
            k = queue[head++];
        } else {
            /* a cycle: take the first unprocessed node in file order */
            while (done[next_leftover])
                next_leftover++;
            k = next_leftover;
        }
        done[k] = 1;
        st = process_node(t, scope, g->node[k], err);
        if (st != OLLA_OK)
            goto out;
        for (size_t e = start[k]; e < start[k + 1]; e++) {
            size_t m = adj[e];
            if (indeg[m] > 0 && --indeg[m] == 0 && !done[m])
                queue[tail++] = m;
        }
    }
    goto out;
oom:
    st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
out:
    olla_strmap_free(&producer);
    free(indeg);
    free(start);
    free(queue);
    free(edges);
    free(adj);
    free(fill);
    free(done);
    return st;
}

/* ---- subgraphs ---- */

/* Keeps s (moved out: s is left empty) as the last inference of its graph,
 * replacing an earlier one. */
static olla_status keep_scope(olla_shape_table *t, const Onnx__GraphProto *parent, olla_shape_scope *s)
{
    olla_shape_kept *k = NULL;
    for (size_t i = 0; i < t->n_kept && !k; i++)
        if (t->kept[i].scope.graph == s->graph)
            k = &t->kept[i];
    if (!k) {
        olla_shape_kept *p = olla_grow(t->kept, &t->cap_kept, t->n_kept + 1, sizeof *p);
        if (!p)
            return OLLA_ERR_INTERNAL;
        t->kept = p;
        k = &t->kept[t->n_kept++];
        memset(k, 0, sizeof *k);
    }
    olla_shape__scope_free(&k->scope);
    k->parent = parent;
    k->scope = *s;
    k->scope.parent = NULL;
    memset(s, 0, sizeof *s);
    return OLLA_OK;
}

olla_status olla_shape_infer_subgraph_ex(olla_shape_ctx *c, const Onnx__GraphProto *g,
                                         const olla_value_type *const *in_types, int n_in,
                                         const olla_shape_sub_out **out)
{
    olla_shape_table *t = c->t;
    *out = NULL;
    if (!g)
        return OLLA_OK;
    olla_shape_sub_out *outs = olla_arena_alloc(&c->scratch, sizeof *outs * (g->n_output + 1));
    olla_value_type *slots = olla_arena_alloc(&c->scratch, sizeof *slots * (g->n_output + 1));
    if (!outs || !slots)
        return OLLA_ERR_INTERNAL;
    for (size_t k = 0; k < g->n_output; k++) {
        slots[k].rank = -1;
        outs[k].type = &slots[k];
    }
    *out = outs;
    if (t->depth >= MAX_DEPTH || t->visits + g->n_node > t->max_visits) {
        /* outputs stay unknown: too deep, or the work budget is spent */
        for (size_t k = 0; k < g->n_output; k++)
            outs[k].reason = "the subgraph was not inferred (nested too deeply or too much work)";
        return OLLA_OK;
    }
    olla_shape_scope s;
    memset(&s, 0, sizeof s);
    s.parent = c->scope;
    s.graph = g;
    olla_status st = scope_decls(t, &s, g);
    for (size_t k = 0; st == OLLA_OK && k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0])
            continue;
        olla_shape_entry *e = scope_put(t, &s, vi->name, NULL);
        if (!e) {
            st = OLLA_ERR_INTERNAL;
            break;
        }
        if ((int)k < n_in && in_types && in_types[k])
            st = copy_type(t, &e->type, in_types[k]);
        else
            st = olla_shape__type_from_proto(t, vi->type, &e->type);
        e->type.source = OLLA_SRC_INPUT;
        if (st == OLLA_OK && olla_value_bytes(&e->type) < 0) {
            char buf[512];
            snprintf(buf, sizeof buf, "'%s' is a subgraph input of node '%s' whose size is not known", vi->name,
                     olla_shape_node_name(c));
            e->reason = olla_arena_strdup(&t->arena, buf);
        }
    }
    for (size_t k = 0; st == OLLA_OK && k < g->n_initializer; k++) {
        const Onnx__TensorProto *tp = g->initializer[k];
        if (!tp || !tp->name)
            continue;
        olla_shape_entry *e = scope_put(t, &s, tp->name, NULL);
        if (!e) {
            st = OLLA_ERR_INTERNAL;
            break;
        }
        st = olla_shape__from_tensor(t, tp, &e->type, &e->value);
        e->type.source = OLLA_SRC_INITIALIZER;
        e->cnst = tp;
    }
    if (st != OLLA_OK) {
        olla_shape__scope_free(&s);
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    }
    t->depth++;
    st = olla_shape__run_graph(t, &s, g, c->err);
    t->depth--;
    for (size_t k = 0; st == OLLA_OK && k < g->n_output; k++) {
        const Onnx__ValueInfoProto *vi = g->output[k];
        const olla_shape_entry *e = vi && vi->name ? olla_shape__find(&s, vi->name) : NULL;
        if (!e)
            continue;
        slots[k] = e->type;
        if (e->type.rank > 0) {
            slots[k].dims = olla_arena_alloc(&c->scratch, sizeof *slots[k].dims * (size_t)e->type.rank);
            if (!slots[k].dims) {
                st = OLLA_ERR_INTERNAL;
                break;
            }
            memcpy(slots[k].dims, e->type.dims, sizeof *slots[k].dims * (size_t)e->type.rank);
        }
        /* values and reasons live in the table arena */
        outs[k].value = e->value.e ? &e->value : NULL;
        if (outs[k].value) {
            olla_shape_value *v = olla_arena_alloc(&c->scratch, sizeof *v);
            if (!v) {
                st = OLLA_ERR_INTERNAL;
                break;
            }
            *v = e->value;
            outs[k].value = v;
        }
        outs[k].reason = olla_value_bytes(&e->type) < 0 ? e->reason : NULL;
    }
    if (st == OLLA_OK && keep_scope(t, c->scope ? c->scope->graph : NULL, &s) != OLLA_OK)
        st = olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    olla_shape__scope_free(&s);
    return st;
}

olla_status olla_shape_infer_subgraph(olla_shape_ctx *c, const Onnx__GraphProto *g,
                                      const olla_value_type *const *in_types, int n_in,
                                      const olla_value_type ***out_types)
{
    const olla_shape_sub_out *outs;
    *out_types = NULL;
    olla_status st = olla_shape_infer_subgraph_ex(c, g, in_types, n_in, &outs);
    if (st != OLLA_OK || !outs)
        return st;
    const olla_value_type **types = olla_arena_alloc(&c->scratch, sizeof *types * (g->n_output + 1));
    if (!types)
        return OLLA_ERR_INTERNAL;
    for (size_t k = 0; k < g->n_output; k++)
        types[k] = outs[k].type;
    *out_types = types;
    return OLLA_OK;
}

/* ---- public API ---- */

void olla_shape_table_free(olla_shape_table *t)
{
    if (!t)
        return;
    olla_shape__scope_free(&t->main);
    for (size_t i = 0; i < t->n_kept; i++)
        olla_shape__scope_free(&t->kept[i].scope);
    free(t->kept);
    olla_strmap_free(&t->strings);
    olla_strmap_free(&t->rules);
    free(t->rule_fns);
    free(t->order);
    free(t->warnings);
    free(t->warning_binding);
    free(t->bind);
    olla_arena_free(&t->spare);
    olla_arena_free(&t->arena);
    free(t);
}

static olla_status add_listed(olla_shape_table *t, unsigned char **listed, size_t *cap, size_t idx)
{
    if (idx >= *cap) {
        size_t nc = (idx + 1) * 2;
        unsigned char *l = realloc(*listed, nc);
        if (!l)
            return OLLA_ERR_INTERNAL;
        memset(l + *cap, 0, nc - *cap);
        *listed = l;
        *cap = nc;
    }
    if ((*listed)[idx])
        return OLLA_OK;
    (*listed)[idx] = 1;
    t->order[t->n_order++] = idx;
    return OLLA_OK;
}

/* The warnings the bindings cause first, each group in the order found. */
static void order_warnings(olla_shape_table *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n_warnings; i++) {
        if (!t->warning_binding[i])
            continue;
        char *w = t->warnings[i];
        memmove(t->warnings + k + 1, t->warnings + k, (i - k) * sizeof *t->warnings);
        memmove(t->warning_binding + k + 1, t->warning_binding + k, i - k);
        t->warnings[k] = w;
        t->warning_binding[k++] = 1;
    }
}

size_t olla_shape_binding_warning_count(const olla_shape_table *t)
{
    size_t k = 0;
    while (t && k < t->n_warnings && t->warning_binding[k])
        k++;
    return k;
}

/* ---- graph inputs ---- */

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

/* The declared dimension d of graph input `name` when the model fixes it
 * (a dim_value >= 0), else -1. */
static int64_t fixed_dim(const Onnx__GraphProto *g, const char *name, int d)
{
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || strcmp(vi->name, name) != 0 || !vi->type ||
            vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type ||
            !vi->type->tensor_type->shape || (size_t)d >= vi->type->tensor_type->shape->n_dim)
            continue;
        const Onnx__TensorShapeProto__Dimension *dim = vi->type->tensor_type->shape->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0)
            return dim->dim_value;
    }
    return -1;
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
        if (add_warning(t, msg, 1) != OLLA_OK)
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
    if (!changes) /* the declared shape itself: no override */
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

static olla_status apply_input_shapes(olla_shape_table *t, const Onnx__GraphProto *g, const olla_shape_options *opt,
                                      olla_error *err)
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

/* Why a graph input has no size, naming the flag that gives it one. */
static olla_status input_reasons(olla_shape_table *t)
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

olla_status olla_infer_shapes(const Onnx__ModelProto *model, const olla_shape_options *opt, olla_shape_table **out,
                              olla_error *err)
{
    *out = NULL;
    if (!model || !model->graph)
        return olla_error_set(err, OLLA_ERR_INPUT, "shape inference: the model has no graph; give a complete ONNX model");
    const Onnx__GraphProto *g = model->graph;
    olla_shape_table *t = calloc(1, sizeof *t);
    if (!t)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    t->model = model;
    t->main.graph = g;
    /* subgraphs may be inferred several times (loop bodies until stable,
     * nesting): bound the total work */
    t->max_visits = 200000 + 16 * (size_t)g->n_node;
    olla_status st = OLLA_OK;
    t->align = opt && opt->alignment > 1 ? opt->alignment : 1;
    if (opt) {
        t->ignore_vi = opt->ignore_value_info;
        t->strict = opt->strict;
        if (opt->n_dims > 0 && opt->dims) {
            t->bind = calloc((size_t)opt->n_dims, sizeof *t->bind);
            if (!t->bind)
                goto oom;
            for (int k = 0; k < opt->n_dims; k++) {
                if (!opt->dims[k].name || opt->dims[k].value < 0) {
                    olla_shape_table_free(t);
                    return olla_error_set(err, OLLA_ERR_USAGE,
                                          "dimension binding %d needs a name and a value >= 0", k + 1);
                }
                t->bind[k].name = olla_shape__intern(t, opt->dims[k].name);
                t->bind[k].value = opt->dims[k].value;
                if (!t->bind[k].name)
                    goto oom;
            }
            t->n_bind = opt->n_dims;
        }
    }
    if (!t->ignore_vi && (st = check_duplicate_decls(t, g, err)) != OLLA_OK) {
        olla_shape_table_free(t);
        return st;
    }
    if (scope_decls(t, &t->main, g) != OLLA_OK)
        goto oom;
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0])
            continue;
        olla_shape_entry *e = scope_put(t, &t->main, vi->name, NULL);
        if (!e || olla_shape__type_from_proto(t, vi->type, &e->type) != OLLA_OK)
            goto oom;
        e->type.source = OLLA_SRC_INPUT;
        char buf[1024];
        if (negative_dim(vi->type, vi->name, "graph input", buf, sizeof buf) && !(e->reason = olla_arena_strdup(&t->arena, buf)))
            goto oom;
    }
    for (size_t k = 0; k < g->n_initializer; k++) {
        const Onnx__TensorProto *tp = g->initializer[k];
        if (!tp || !tp->name || !tp->name[0])
            continue;
        olla_shape_entry *e = scope_put(t, &t->main, tp->name, NULL);
        if (!e || olla_shape__from_tensor(t, tp, &e->type, &e->value) != OLLA_OK)
            goto oom;
        e->type.source = OLLA_SRC_INITIALIZER;
        e->cnst = tp;
    }
    for (size_t k = 0; k < g->n_sparse_initializer; k++) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[k];
        if (!sp || !sp->values || !sp->values->name || !sp->values->name[0])
            continue;
        olla_shape_entry *e = scope_put(t, &t->main, sp->values->name, NULL);
        if (!e)
            goto oom;
        memset(&e->type, 0, sizeof e->type);
        e->type.kind = OLLA_VALUE_SPARSE_TENSOR;
        e->type.elem_type = sp->values->data_type;
        e->type.rank = -1;
        e->type.source = OLLA_SRC_INITIALIZER;
    }
    if (opt && (st = apply_input_shapes(t, g, opt, err)) != OLLA_OK) {
        olla_shape_table_free(t);
        return st;
    }
    if (input_reasons(t) != OLLA_OK)
        goto oom;
    st = olla_shape__run_graph(t, &t->main, g, err);
    if (st != OLLA_OK) {
        olla_shape_table_free(t);
        return st;
    }
    /* listing order: inputs, initializers, node outputs in node order */
    t->order = malloc((t->main.n + 1) * sizeof *t->order);
    unsigned char *listed = NULL;
    size_t cap = 0;
    if (!t->order)
        goto oom;
    /* passes: graph inputs, initializers, sparse initializers, node outputs */
    for (int pass = 0; pass < 4; pass++) {
        size_t cnt = pass == 0 ? g->n_input : pass == 1 ? g->n_initializer : pass == 2 ? g->n_sparse_initializer : g->n_node;
        for (size_t k = 0; k < cnt; k++) {
            size_t n_names = pass == 3 ? g->node[k]->n_output : 1;
            for (size_t o = 0; o < n_names; o++) {
                const char *name = NULL;
                if (pass == 0)
                    name = g->input[k] ? g->input[k]->name : NULL;
                else if (pass == 1)
                    name = g->initializer[k] ? g->initializer[k]->name : NULL;
                else if (pass == 2)
                    name = g->sparse_initializer[k] && g->sparse_initializer[k]->values
                               ? g->sparse_initializer[k]->values->name
                               : NULL;
                else
                    name = g->node[k]->output[o];
                size_t idx;
                if (!name || !name[0] || !olla_strmap_find(&t->main.map, name, &idx))
                    continue;
                if (add_listed(t, &listed, &cap, idx) != OLLA_OK) {
                    free(listed);
                    goto oom;
                }
            }
        }
    }
    free(listed);
    order_warnings(t);
    /* names from the model may hold newlines or terminal escapes; every
     * reason stays one plain line */
    for (size_t i = 0; i < t->main.n; i++) {
        const char *r = t->main.entries[i].reason, *p = r;
        while (p && *p && (unsigned char)*p >= 0x20 && *p != 0x7f)
            p++;
        if (!p || !*p)
            continue;
        char *clean = olla_arena_strdup(&t->arena, r);
        if (!clean)
            goto oom;
        for (char *q = clean; *q; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                *q = '?';
        t->main.entries[i].reason = clean;
    }
    *out = t;
    return OLLA_OK;
oom:
    olla_shape_table_free(t);
    return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
}

const olla_value_type *olla_shape_lookup(const olla_shape_table *t, const char *name)
{
    size_t i;
    if (!t || !name || !olla_strmap_find(&t->main.map, name, &i))
        return NULL;
    return &t->main.entries[i].type;
}

const char *olla_shape_unknown_reason(const olla_shape_table *t, const char *name)
{
    size_t i;
    if (!t || !name || !olla_strmap_find(&t->main.map, name, &i))
        return NULL;
    const olla_shape_entry *e = &t->main.entries[i];
    if (olla_value_bytes(&e->type) >= 0)
        return NULL;
    return e->reason ? e->reason : "size unknown";
}

size_t olla_shape_count(const olla_shape_table *t) { return t ? t->n_order : 0; }

const char *olla_shape_name_at(const olla_shape_table *t, size_t i)
{
    return t && i < t->n_order ? t->main.entries[t->order[i]].name : NULL;
}

const olla_value_type *olla_shape_at(const olla_shape_table *t, size_t i)
{
    return t && i < t->n_order ? &t->main.entries[t->order[i]].type : NULL;
}

size_t olla_shape_warning_count(const olla_shape_table *t) { return t ? t->n_warnings : 0; }

const char *olla_shape_warning_at(const olla_shape_table *t, size_t i)
{
    return t && i < t->n_warnings ? t->warnings[i] : NULL;
}

static const olla_value_type *type_source_lookup(void *ctx, const char *name)
{
    return olla_shape_lookup(ctx, name);
}

static const char *type_source_reason(void *ctx, const char *name)
{
    return olla_shape_unknown_reason(ctx, name);
}

olla_type_source olla_shape_type_source(olla_shape_table *t)
{
    olla_type_source s = {type_source_lookup, type_source_reason, t};
    return s;
}

/* ---- the values of subgraphs ---- */

static const olla_shape_kept *kept_of(const olla_shape_table *t, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < t->n_kept; i++)
        if (t->kept[i].scope.graph == g)
            return &t->kept[i];
    return NULL;
}

/* The entry of name as seen from graph g: g's own values, then those of the
 * graphs around it, up to the main graph. */
static const olla_shape_entry *entry_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    size_t i;
    if (!t || !name)
        return NULL;
    for (int depth = 0; g && g != t->main.graph && depth < 64; depth++) {
        const olla_shape_kept *k = kept_of(t, g);
        if (!k)
            return NULL;
        if (olla_strmap_find(&k->scope.map, name, &i))
            return &k->scope.entries[i];
        g = k->parent;
    }
    return olla_strmap_find(&t->main.map, name, &i) ? &t->main.entries[i] : NULL;
}

int olla_shape_has_graph(const olla_shape_table *t, const Onnx__GraphProto *g)
{
    return t && g && (g == t->main.graph || kept_of(t, g) != NULL);
}

const olla_value_type *olla_shape_lookup_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    return e ? &e->type : NULL;
}

const char *olla_shape_unknown_reason_in(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    if (!e || olla_value_bytes(&e->type) >= 0)
        return NULL;
    return e->reason ? e->reason : "size unknown";
}

int olla_shape_known_scalar(const olla_shape_table *t, const Onnx__GraphProto *g, const char *name, int64_t *value)
{
    const olla_shape_entry *e = entry_in(t, g, name);
    if (!e || !e->value.e || e->value.n != 1 || e->value.e[0].state != OLLA_SV_KNOWN)
        return 0;
    *value = e->value.e[0].i;
    return 1;
}

static const olla_value_type *graph_source_lookup(void *ctx, const char *name)
{
    const olla_shape_graph_source *s = ctx;
    return olla_shape_lookup_in(s->t, s->g, name);
}

static const char *graph_source_reason(void *ctx, const char *name)
{
    const olla_shape_graph_source *s = ctx;
    return olla_shape_unknown_reason_in(s->t, s->g, name);
}

olla_type_source olla_shape_type_source_in(olla_shape_graph_source *s)
{
    olla_type_source src = {graph_source_lookup, graph_source_reason, s};
    return src;
}
