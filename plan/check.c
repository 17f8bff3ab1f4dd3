/* olla-onnx: checking a written model's plan, from the file alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/olla_check.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/shapes/olla_shapes.h"
#include "plan/olla_plan_json.h"
#include "plan/olla_verify.h"
#include "util/olla_strmap.h"

static const char *meta(const Onnx__ModelProto *m, const char *key)
{
    for (size_t i = 0; i < m->n_metadata_props; i++)
        if (m->metadata_props[i]->key && strcmp(m->metadata_props[i]->key, key) == 0)
            return m->metadata_props[i]->value ? m->metadata_props[i]->value : "";
    return NULL;
}

/* ---- the declared sizes ---- */

/* Bytes of a declared tensor type under the bindings, -1 when the element
 * type or a dimension is not known (or the size overflows). "int64[1,batch=8]"
 * into text. */
static int64_t declared_bytes(const Onnx__TypeProto *tp, const olla_check_options *opt, char *text, size_t size)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape)
        return -1;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    int bits = olla_elem_type_bits(tp->tensor_type->elem_type);
    const char *et = olla_elem_type_name(tp->tensor_type->elem_type);
    size_t at = (size_t)snprintf(text, size, "%s[", et ? et : "?");
    int64_t count = 1;
    for (size_t d = 0; d < sh->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
        int64_t v = -1;
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            v = dim->dim_value;
        else if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 !olla_dim_param_eval(dim->dim_param, opt->dims, opt->n_dims, &v))
            v = -1;
        if (at < size)
            at += (size_t)snprintf(text + at, size - at, "%s%lld", d ? "," : "", (long long)v);
        if (v < 0 || count < 0 || (v > 0 && count > INT64_MAX / 8 / v))
            count = -1;
        else
            count *= v;
    }
    if (at < size)
        snprintf(text + at, size - at, "]");
    if (bits <= 0 || count < 0)
        return -1;
    return (count * bits + 7) / 8;
}

/* Every tensor the model declares (graph outputs, value_info) and the plan
 * places must get exactly its declared size, rounded up to the alignment. */
olla_status olla_plan_check_declared(const Onnx__GraphProto *g, const olla_stored_plan *sp,
                                     const olla_check_options *opt, const char *file, olla_error *err)
{
    olla_strmap placed;
    if (!olla_strmap_init(&placed, (size_t)sp->n_entries))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
    for (int i = 0; i < sp->n_entries; i++)
        if (!olla_strmap_put(&placed, sp->entries[i].name, i)) {
            olla_strmap_free(&placed);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
        }
    olla_status st = OLLA_OK;
    for (size_t k = 0; st == OLLA_OK && k < g->n_value_info + g->n_output; k++) {
        const Onnx__ValueInfoProto *vi = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
        int at = vi && vi->name ? olla_strmap_get(&placed, vi->name) : -1;
        char text[256];
        int64_t bytes = at >= 0 ? declared_bytes(vi->type, opt, text, sizeof text) : -1;
        if (bytes < 0 || sp->entries[at].bytes == olla_align_up(bytes, sp->alignment))
            continue;
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s: the plan gives '%s' %lld byte%s but the model declares it %s, %lld bytes (%lld with "
                            "the alignment); plan the model again",
                            file, vi->name, (long long)sp->entries[at].bytes, sp->entries[at].bytes == 1 ? "" : "s",
                            text, (long long)bytes,
                            (long long)olla_align_up(bytes, sp->alignment));
    }
    olla_strmap_free(&placed);
    return st;
}

/* ---- the bindings a check uses ---- */

/* 1 when graph input `name` of g declares a dimension whose parameter uses
 * one of the names dims bind (as olla_dim_param_eval reads names). */
static int input_uses_dims(const Onnx__GraphProto *g, const char *name, const olla_dim_binding *dims, int n_dims)
{
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || strcmp(vi->name, name) != 0 || !vi->type ||
            vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type ||
            !vi->type->tensor_type->shape)
            continue;
        const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
        for (size_t d = 0; d < sh->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
            if (!dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || !dim->dim_param)
                continue;
            for (const char *p = dim->dim_param; *p;) {
                size_t len = strcspn(p, "+-*() ");
                for (int i = 0; len && i < n_dims; i++)
                    if (strlen(dims[i].name) == len && strncmp(dims[i].name, p, len) == 0)
                        return 1;
                p += len ? len : 1;
            }
        }
    }
    return 0;
}

/* The options a check runs with, and the arrays (malloc'd, names
 * borrowed) that hold its bindings. */
typedef struct check_bindings {
    olla_check_options co;
    olla_dim_binding *dims;
    olla_input_shape *shapes;
} check_bindings;

/* The bindings a check uses: the ones the plan records, merged with the
 * command line's. A --dim replaces the recorded binding of its name (or is
 * added), the others stay; an --input-shape replaces the recorded shape of
 * its input (or is added); a recorded input shape that depends on a
 * dimension the command line binds is left to that binding. */
static olla_status merged_options(const olla_check_options *opt, const olla_stored_plan *sp, const Onnx__GraphProto *g,
                                  check_bindings *b, const char *file, olla_error *err)
{
    b->co = *opt;
    b->dims = calloc((size_t)(sp->n_dims + opt->n_dims) + 1, sizeof *b->dims);
    b->shapes = calloc((size_t)(sp->n_inputs + opt->n_input_shapes) + 1, sizeof *b->shapes);
    if (!b->dims || !b->shapes)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
    int nd = 0, ns = 0;
    for (int i = 0; i < sp->n_dims; i++) {
        int given = 0;
        for (int j = 0; j < opt->n_dims && !given; j++)
            given = strcmp(opt->dims[j].name, sp->dims[i].name) == 0;
        if (!given)
            b->dims[nd++] = sp->dims[i];
    }
    for (int j = 0; j < opt->n_dims; j++)
        b->dims[nd++] = opt->dims[j];
    for (int i = 0; i < sp->n_inputs; i++) {
        int given = input_uses_dims(g, sp->inputs[i].name, opt->dims, opt->n_dims);
        for (int j = 0; j < opt->n_input_shapes && !given; j++)
            given = strcmp(opt->input_shapes[j].name, sp->inputs[i].name) == 0;
        if (!given)
            b->shapes[ns++] = sp->inputs[i];
    }
    for (int j = 0; j < opt->n_input_shapes; j++)
        b->shapes[ns++] = opt->input_shapes[j];
    b->co.dims = b->dims;
    b->co.n_dims = nd;
    b->co.input_shapes = b->shapes;
    b->co.n_input_shapes = ns;
    return OLLA_OK;
}

/* Appends "name=v" (or "name unbound" when v < 0) to a list in buf. */
static void append(char *buf, size_t size, const char *name, long long v)
{
    size_t at = strlen(buf);
    if (at >= size)
        return;
    if (v >= 0)
        snprintf(buf + at, size - at, "%s%s=%lld", at ? ", " : "", name, v);
    else
        snprintf(buf + at, size - at, "%s%s unbound", at ? ", " : "", name);
}

/* "batch=1" for the plan and "batch=8" for the check, for every --dim whose
 * value differs from the recorded one; empty when they agree. */
static void binding_difference(const olla_check_options *opt, const olla_stored_plan *sp, char *plan_side,
                               char *check_side, size_t size)
{
    plan_side[0] = check_side[0] = '\0';
    for (int i = 0; i < opt->n_dims; i++) {
        int found = -1;
        for (int j = 0; j < sp->n_dims; j++)
            if (strcmp(sp->dims[j].name, opt->dims[i].name) == 0)
                found = j;
        if (found >= 0 && sp->dims[found].value == opt->dims[i].value)
            continue;
        append(plan_side, size, opt->dims[i].name, found >= 0 ? (long long)sp->dims[found].value : -1);
        append(check_side, size, opt->dims[i].name, (long long)opt->dims[i].value);
    }
}

/* A failed check under other bindings than the plan's says so first. */
static olla_status explain_failure(olla_status st, const olla_check_options *opt, const olla_stored_plan *sp,
                                   const char *file, olla_error *err)
{
    char plan_side[256], check_side[256], msg[2 * sizeof err->message];
    if (st != OLLA_ERR_INPUT)
        return st;
    binding_difference(opt, sp, plan_side, check_side, sizeof plan_side);
    const char *orig = err->message;
    size_t fl = strlen(file);
    if (strncmp(orig, file, fl) == 0 && strncmp(orig + fl, ": ", 2) == 0)
        orig += fl + 2;
    if (check_side[0])
        snprintf(msg, sizeof msg, "%s: the plan was made for %s; this check binds %s (%s)", file, plan_side,
                 check_side, orig);
    else if (opt->n_dims == 0 && sp->n_dims == 0 && sp->n_inputs == 0)
        snprintf(msg, sizeof msg, "%s: %s (the plan records no bindings; pass the --dim values it was made with)",
                 file, orig);
    else
        return st;
    olla_error_clear(err);
    return olla_error_set(err, st, "%s", msg);
}

/* The order the plan's runtime executes this file in (the ops it does not
 * run placed where they are needed), recomputed from the file alone with the
 * runtime's view of the graph (eg, built here for non-listed runtimes); it
 * must be the one the plan records, which its offsets are for. */
static olla_status executed_order(const olla_graph *g, const olla_stored_plan *sp, olla_exec_graph *eg, int *have_eg,
                                  int *order, const char *file, olla_error *err)
{
    int n = g->n_ops, n_exec = 0;
    for (int i = 0; i < n; i++)
        order[i] = i; /* the file's own node order */
    if (sp->runtime == OLLA_RUNTIME_LISTED)
        return OLLA_OK;
    int *executed = malloc(((size_t)n + 1) * sizeof(int)), *listing = malloc(((size_t)n + 1) * sizeof(int));
    olla_status st = executed && listing ? olla_exec_graph_build(g, sp->runtime, NULL, eg, err)
                                         : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
    *have_eg = st == OLLA_OK;
    if (st == OLLA_OK) {
        memcpy(listing, order, (size_t)n * sizeof(int));
        st = olla_exec_order_of(eg, sp->runtime, listing, executed, &n_exec, err);
    }
    if (st == OLLA_OK)
        st = olla_exec_complete_order(eg, executed, order, err);
    if (st == OLLA_OK && sp->n_order > 0 && sp->n_order != n)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan's order lists %d nodes, the file has %d", file,
                            sp->n_order, n);
    for (int i = 0; st == OLLA_OK && i < sp->n_order; i++)
        if (sp->order[i] != order[i]) {
            char x[300], y[300];
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s: the plan's order runs node %s at step %d, but %s runs node %s there for this "
                                "file; its offsets are not for the order that runs",
                                file, olla_op_label(g, sp->order[i], x, sizeof x), i, olla_runtime_name(sp->runtime),
                                olla_op_label(g, order[i], y, sizeof y));
        }
    free(executed);
    free(listing);
    return st;
}

/* ---- the check ---- */

/* One check under way: the file, its plan, the bindings, the graph built
 * under them and the plan's layout per graph tensor. */
typedef struct plan_check {
    const olla_model *m;
    const char *file;
    olla_stored_plan sp;
    check_bindings b;
    olla_shape_table *types;
    olla_graph *g;
    int64_t *offset, *bytes; /* per graph tensor: the plan's offset (-1: not placed) and size */
    int *order;              /* per step: the op the runtime runs there */
    int *shares;             /* per graph tensor: the tensor whose buffer it shares, or -1 */
    unsigned char *share;    /* per graph tensor: the plan's share kind */
    olla_error *err;
} plan_check;

/* Frees what the check made, and the plan. */
static void plan_check_free(plan_check *c)
{
    free(c->offset);
    free(c->bytes);
    free(c->order);
    free(c->shares);
    free(c->share);
    olla_graph_free(c->g);
    olla_shape_table_free(c->types);
    free(c->b.dims);
    free(c->b.shapes);
    olla_stored_plan_free(&c->sp);
}

/* The file's olla.arena_bytes agrees with the plan's arena. */
static olla_status check_arena(plan_check *c)
{
    const char *arena_text = meta(c->m->proto, OLLA_META_ARENA);
    char expect[32];
    snprintf(expect, sizeof expect, "%lld", (long long)c->sp.arena_bytes);
    if (!arena_text || strcmp(arena_text, expect) != 0)
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: olla.arena_bytes (%s) differs from the plan's arena_bytes (%s)", c->file,
                              arena_text ? arena_text : "missing", expect);
    return OLLA_OK;
}

/* The graph with its sizes inferred under the check's bindings. */
static olla_status build_graph(plan_check *c)
{
    const olla_check_options *co = &c->b.co;
    olla_shape_options so = {.dims = co->dims,
                             .n_dims = co->n_dims,
                             .strict = co->strict_shapes,
                             .input_shapes = co->input_shapes,
                             .n_input_shapes = co->n_input_shapes,
                             .alignment = c->sp.alignment};
    olla_status st = olla_infer_shapes(c->m->proto, &so, &c->types, c->err);
    if (st != OLLA_OK)
        return st;
    olla_type_source src = olla_shape_type_source(c->types);
    return olla_graph_build(c->m, &src, &c->g, c->err);
}

/* The plan's entries as per-tensor arrays: each names a tensor of the
 * graph, once, and what it shares is one too. */
static olla_status read_entries(plan_check *c)
{
    const olla_graph *g = c->g;
    const olla_stored_plan *sp = &c->sp;
    c->offset = malloc(((size_t)g->n_tensors + 1) * sizeof *c->offset);
    c->bytes = calloc((size_t)g->n_tensors + 1, sizeof *c->bytes);
    c->order = malloc(((size_t)g->n_ops + 1) * sizeof *c->order);
    c->shares = malloc(((size_t)g->n_tensors + 1) * sizeof *c->shares);
    c->share = calloc((size_t)g->n_tensors + 1, 1);
    if (!c->offset || !c->bytes || !c->order || !c->shares || !c->share)
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory checking %s", c->file);
    for (int t = 0; t < g->n_tensors; t++) {
        c->offset[t] = -1;
        c->shares[t] = -1;
    }
    for (int i = 0; i < sp->n_entries; i++) {
        const olla_stored_entry *en = &sp->entries[i];
        int t = olla_strmap_get(&g->by_name, en->name);
        if (t < 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: the plan lists '%s', which is not a tensor of the graph",
                                  c->file, en->name);
        if (c->offset[t] >= 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: the plan lists '%s' twice", c->file, en->name);
        c->offset[t] = en->offset;
        c->bytes[t] = en->bytes;
        c->share[t] = (unsigned char)en->share;
        if (en->shares && (c->shares[t] = olla_strmap_get(&g->by_name, en->shares)) < 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT,
                                  "%s: the plan says '%s' shares '%s', which is not a tensor of the graph", c->file,
                                  en->name, en->shares);
    }
    return OLLA_OK;
}

/* The declared sizes, the order the runtime executes, the layout in that
 * order, and the plan's memory limit. */
static olla_status check_layout(plan_check *c)
{
    const olla_stored_plan *sp = &c->sp;
    olla_error *err = c->err;
    olla_status st = olla_plan_check_declared(c->m->proto->graph, sp, &c->b.co, c->file, err);
    olla_exec_graph eg;
    int have_eg = 0;
    if (st == OLLA_OK)
        st = executed_order(c->g, sp, &eg, &have_eg, c->order, c->file, err);
    olla_runtime_view view = {have_eg ? eg.runs : NULL, have_eg ? eg.reads_as : NULL};
    olla_plan_layout lay = {c->order,      c->offset,   c->bytes,
                            c->share,      c->shares,   sp->arena_bytes,
                            sp->alignment, sp->sharing, have_eg ? &view : NULL};
    int64_t peak = 0;
    if (st == OLLA_OK)
        st = olla_plan_verify(c->g, &lay, &peak, err);
    if (st == OLLA_OK && sp->memory_limit >= 0 && peak > sp->memory_limit)
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s: the plan peaks at %lld bytes in the order %s executes, above its memory limit of %lld "
                            "bytes",
                            c->file, (long long)peak, olla_runtime_name(sp->runtime), (long long)sp->memory_limit);
    if (st == OLLA_OK && sp->memory_limit >= 0 && sp->runtime == OLLA_RUNTIME_LISTED &&
        sp->arena_bytes > sp->memory_limit)
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s: the plan's arena is %lld bytes, above its memory limit of %lld bytes", c->file,
                            (long long)sp->arena_bytes, (long long)sp->memory_limit);
    if (have_eg)
        olla_exec_graph_free(&eg);
    return st;
}

olla_status olla_plan_check(const olla_model *m, const olla_check_options *opt, olla_error *err)
{
    const char *file = m->path;
    const char *plan_text = meta(m->proto, OLLA_META_PLAN);
    if (!plan_text)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: no olla.plan metadata; this model has not been planned", file);
    plan_check c = {.m = m, .file = file, .err = err};
    olla_status st = olla_plan_from_json(plan_text, &c.sp, err);
    if (st != OLLA_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        olla_error_clear(err);
        return olla_error_set(err, st, "%s: %s", file, msg);
    }
    st = merged_options(opt, &c.sp, m->proto->graph, &c.b, file, err);
    if (st == OLLA_OK)
        st = check_arena(&c);
    if (st == OLLA_OK)
        st = build_graph(&c);
    if (st == OLLA_OK)
        st = read_entries(&c);
    if (st == OLLA_OK)
        st = check_layout(&c);
    st = explain_failure(st, &c.b.co, &c.sp, file, err);
    plan_check_free(&c);
    return st;
}
