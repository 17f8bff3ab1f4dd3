/* olla-onnx: the shape-inference engine. Builds the table of value types of
 * a model: graph inputs and initializers (passes/shapes/shape_inputs.c),
 * then every node in a topological order, each through its rule
 * (passes/shapes/shape_*.c), merged with value_info
 * (passes/shapes/shape_declared.c), in the scopes of
 * passes/shapes/shape_scope.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"
#include "util/olla_line.h"
#include "util/olla_grow.h"

#define MAX_DEPTH 64

/* ---- the table ---- */

olla_status olla_shape__add_warning(olla_shape_table *t, const char *msg, int binding)
{
    char **w = olla_grow(t->warnings, &t->cap_warnings, t->n_warnings + 1, sizeof *w);
    if (!w)
        return OLLA_ERR_INTERNAL;
    t->warnings = w;
    unsigned char *f = olla_grow(t->warning_binding, &t->cap_warning_binding, t->n_warnings + 1, 1);
    if (!f)
        return OLLA_ERR_INTERNAL;
    t->warning_binding = f;
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

const char *olla_shape__unknown_reason(olla_shape_table *t, olla_shape_ctx *c, int i, int has_rule,
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
    olla_shape_rule_fn *grown = olla_grow(t->rule_fns, &t->cap_rule_fns, t->n_rule_fns + 1, sizeof *grown);
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
        if ((st = olla_shape__store_output(t, scope, &c, i, rule != NULL)) != OLLA_OK) {
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

/* The inputs of subgraph g (the types given in in_types[0..n_in), else the
 * declared ones) and its initializers into its scope s. */
static olla_status sub_values(olla_shape_ctx *c, const Onnx__GraphProto *g, const olla_value_type *const *in_types,
                              int n_in, olla_shape_scope *s)
{
    olla_shape_table *t = c->t;
    olla_status st = olla_shape__scope_decls(t, s, g);
    for (size_t k = 0; st == OLLA_OK && k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0])
            continue;
        olla_shape_entry *e = olla_shape__scope_put(t, s, vi->name);
        if (!e)
            return OLLA_ERR_INTERNAL;
        if ((int)k < n_in && in_types && in_types[k])
            st = olla_shape__copy_type(t, &e->type, in_types[k]);
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
        olla_shape_entry *e = olla_shape__scope_put(t, s, tp->name);
        if (!e)
            return OLLA_ERR_INTERNAL;
        st = olla_shape__from_tensor(t, tp, &e->type, &e->value);
        e->type.source = OLLA_SRC_INITIALIZER;
        e->cnst = tp;
    }
    return st;
}

/* The outputs of subgraph g as inferred in its scope s, copied into the
 * node's scratch: types into slots, and outs pointing to them, with their
 * values and reasons. */
static olla_status sub_outputs(olla_shape_ctx *c, const Onnx__GraphProto *g, olla_shape_scope *s,
                               olla_value_type *slots, olla_shape_sub_out *outs)
{
    for (size_t k = 0; k < g->n_output; k++) {
        const Onnx__ValueInfoProto *vi = g->output[k];
        const olla_shape_entry *e = vi && vi->name ? olla_shape__find(s, vi->name) : NULL;
        if (!e)
            continue;
        slots[k] = e->type;
        if (e->type.rank > 0) {
            slots[k].dims = olla_arena_alloc(&c->scratch, sizeof *slots[k].dims * (size_t)e->type.rank);
            if (!slots[k].dims)
                return OLLA_ERR_INTERNAL;
            memcpy(slots[k].dims, e->type.dims, sizeof *slots[k].dims * (size_t)e->type.rank);
        }
        /* values and reasons live in the table arena */
        outs[k].value = e->value.e ? &e->value : NULL;
        if (outs[k].value) {
            olla_shape_value *v = olla_arena_alloc(&c->scratch, sizeof *v);
            if (!v)
                return OLLA_ERR_INTERNAL;
            *v = e->value;
            outs[k].value = v;
        }
        outs[k].reason = olla_value_bytes(&e->type) < 0 ? e->reason : NULL;
    }
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
    if (sub_values(c, g, in_types, n_in, &s) != OLLA_OK) {
        olla_shape__scope_free(&s);
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    }
    t->depth++;
    olla_status st = olla_shape__run_graph(t, &s, g, c->err);
    t->depth--;
    if (st == OLLA_OK)
        st = sub_outputs(c, g, &s, slots, outs);
    if (st == OLLA_OK && olla_shape__keep_scope(t, c->scope ? c->scope->graph : NULL, &s) != OLLA_OK)
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

/* ---- the table: building and freeing ---- */

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

/* Lists entry idx of the main scope once; listed[0..*cap) marks the ones listed. */
static olla_status add_listed(olla_shape_table *t, unsigned char **listed, size_t *cap, size_t idx)
{
    if (idx >= *cap) {
        size_t old = *cap;
        unsigned char *l = olla_grow(*listed, cap, idx + 1, 1);
        if (!l)
            return OLLA_ERR_INTERNAL;
        memset(l + old, 0, *cap - old);
        *listed = l;
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

/* The listing order: graph inputs, initializers, sparse initializers, then
 * node outputs in node order, each name once. */
static olla_status list_order(olla_shape_table *t, const Onnx__GraphProto *g)
{
    t->order = malloc((t->main.n + 1) * sizeof *t->order);
    unsigned char *listed = NULL;
    size_t cap = 0;
    if (!t->order)
        return OLLA_ERR_INTERNAL;
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
                    return OLLA_ERR_INTERNAL;
                }
            }
        }
    }
    free(listed);
    return OLLA_OK;
}

/* Names from the model may hold newlines or terminal escapes: every reason
 * of the main graph becomes one plain line. */
static olla_status plain_reasons(olla_shape_table *t)
{
    for (size_t i = 0; i < t->main.n; i++) {
        const char *r = t->main.entries[i].reason, *p = r;
        while (p && *p && (unsigned char)*p >= 0x20 && *p != 0x7f)
            p++;
        if (!p || !*p)
            continue;
        char *clean = olla_arena_strdup(&t->arena, r);
        if (!clean)
            return OLLA_ERR_INTERNAL;
        for (char *q = clean; *q; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                *q = '?';
        t->main.entries[i].reason = clean;
    }
    return OLLA_OK;
}

/* The settings of opt (may be NULL) into t: alignment, value_info ignored,
 * strictness, and the --dim bindings. */
static olla_status table_options(olla_shape_table *t, const olla_shape_options *opt, olla_error *err)
{
    t->align = opt && opt->alignment > 1 ? opt->alignment : 1;
    if (!opt)
        return OLLA_OK;
    t->ignore_vi = opt->ignore_value_info;
    t->strict = opt->strict;
    if (opt->n_dims <= 0 || !opt->dims)
        return OLLA_OK;
    t->bind = calloc((size_t)opt->n_dims, sizeof *t->bind);
    if (!t->bind)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    for (int k = 0; k < opt->n_dims; k++) {
        if (!opt->dims[k].name || opt->dims[k].value < 0)
            return olla_error_set(err, OLLA_ERR_USAGE, "dimension binding %d needs a name and a value >= 0", k + 1);
        t->bind[k].name = olla_shape__intern(t, opt->dims[k].name);
        t->bind[k].value = opt->dims[k].value;
        if (!t->bind[k].name)
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    }
    t->n_bind = opt->n_dims;
    return OLLA_OK;
}

/* The phases after the options: the input table, the nodes, the listing. */
static olla_status infer_main(olla_shape_table *t, const Onnx__GraphProto *g, const olla_shape_options *opt,
                              olla_error *err)
{
    olla_status st;
    if (!t->ignore_vi && (st = olla_shape__check_duplicate_decls(t, g, err)) != OLLA_OK)
        return st;
    if (olla_shape__main_values(t, g) != OLLA_OK)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    if (opt && (st = olla_shape__apply_input_shapes(t, g, opt, err)) != OLLA_OK)
        return st;
    if (olla_shape__input_reasons(t) != OLLA_OK)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    if ((st = olla_shape__run_graph(t, &t->main, g, err)) != OLLA_OK)
        return st;
    if (list_order(t, g) != OLLA_OK)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    order_warnings(t);
    if (plain_reasons(t) != OLLA_OK)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    return OLLA_OK;
}

olla_status olla_infer_shapes(const Onnx__ModelProto *model, const olla_shape_options *opt, olla_shape_table **out,
                              olla_error *err)
{
    *out = NULL;
    if (!model || !model->graph)
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "shape inference: the model has no graph; give a complete ONNX model");
    const Onnx__GraphProto *g = model->graph;
    olla_shape_table *t = calloc(1, sizeof *t);
    if (!t)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory during shape inference");
    t->model = model;
    t->main.graph = g;
    /* subgraphs may be inferred several times (loop bodies until stable,
     * nesting): bound the total work */
    t->max_visits = 200000 + 16 * (size_t)g->n_node;
    olla_status st = table_options(t, opt, err);
    if (st == OLLA_OK)
        st = infer_main(t, g, opt, err);
    if (st != OLLA_OK) {
        olla_shape_table_free(t);
        return st;
    }
    *out = t;
    return OLLA_OK;
}

/* ---- the table's contents ---- */

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
