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

/* The command line's bindings when it gives any (--dim or --input-shape),
 * else the ones the plan records. */
static olla_check_options effective_options(const olla_check_options *opt, const olla_stored_plan *sp)
{
    olla_check_options co = *opt;
    if (opt->n_dims == 0 && opt->n_input_shapes == 0) {
        co.dims = sp->dims;
        co.n_dims = sp->n_dims;
        co.input_shapes = sp->inputs;
        co.n_input_shapes = sp->n_inputs;
    }
    return co;
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

olla_status olla_plan_check(const olla_model *m, const olla_check_options *opt, olla_error *err)
{
    const char *file = m->path;
    const char *plan_text = meta(m->proto, OLLA_META_PLAN);
    const char *arena_text = meta(m->proto, OLLA_META_ARENA);
    if (!plan_text)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: no olla.plan metadata; this model has not been planned", file);
    olla_stored_plan sp;
    olla_status st = olla_plan_from_json(plan_text, &sp, err);
    if (st != OLLA_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        olla_error_clear(err);
        return olla_error_set(err, st, "%s: %s", file, msg);
    }
    olla_check_options co = effective_options(opt, &sp);
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    int64_t *offset = NULL, *bytes = NULL;
    int *order = NULL, *shares = NULL;
    unsigned char *share = NULL;
    char expect[32];
    snprintf(expect, sizeof expect, "%lld", (long long)sp.arena_bytes);
    if (!arena_text || strcmp(arena_text, expect) != 0) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: olla.arena_bytes (%s) differs from the plan's arena_bytes (%s)",
                            file, arena_text ? arena_text : "missing", expect);
        goto done;
    }
    olla_shape_options so = {.dims = co.dims, .n_dims = co.n_dims, .strict = co.strict_shapes,
                             .input_shapes = co.input_shapes, .n_input_shapes = co.n_input_shapes};
    if ((st = olla_infer_shapes(m->proto, &so, &types, err)) != OLLA_OK)
        goto done;
    olla_type_source src = olla_shape_type_source(types);
    if ((st = olla_graph_build(m, &src, &g, err)) != OLLA_OK)
        goto done;
    offset = malloc(((size_t)g->n_tensors + 1) * sizeof *offset);
    bytes = calloc((size_t)g->n_tensors + 1, sizeof *bytes);
    order = malloc(((size_t)g->n_ops + 1) * sizeof *order);
    shares = malloc(((size_t)g->n_tensors + 1) * sizeof *shares);
    share = calloc((size_t)g->n_tensors + 1, 1);
    if (!offset || !bytes || !order || !shares || !share) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking %s", file);
        goto done;
    }
    for (int t = 0; t < g->n_tensors; t++) {
        offset[t] = -1;
        shares[t] = -1;
    }
    for (int i = 0; i < sp.n_entries; i++) {
        int t = olla_strmap_get(&g->by_name, sp.entries[i].name);
        if (t < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan lists '%s', which is not a tensor of the graph", file,
                                sp.entries[i].name);
            goto done;
        }
        if (offset[t] >= 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan lists '%s' twice", file, sp.entries[i].name);
            goto done;
        }
        offset[t] = sp.entries[i].offset;
        bytes[t] = sp.entries[i].bytes;
        share[t] = (unsigned char)sp.entries[i].share;
        if (sp.entries[i].shares && (shares[t] = olla_strmap_get(&g->by_name, sp.entries[i].shares)) < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan says '%s' shares '%s', which is not a tensor of the graph",
                                file, sp.entries[i].name, sp.entries[i].shares);
            goto done;
        }
    }
    st = olla_plan_check_declared(m->proto->graph, &sp, &co, file, err);
    olla_exec_graph eg;
    int have_eg = 0;
    if (st == OLLA_OK)
        st = executed_order(g, &sp, &eg, &have_eg, order, file, err);
    olla_runtime_view view = {have_eg ? eg.runs : NULL, have_eg ? eg.reads_as : NULL};
    olla_plan_layout lay = {order, offset, bytes, share, shares, sp.arena_bytes, sp.alignment, sp.sharing,
                            have_eg ? &view : NULL};
    int64_t peak = 0;
    if (st == OLLA_OK)
        st = olla_plan_verify(g, &lay, &peak, err);
    if (st == OLLA_OK && sp.memory_limit >= 0 && peak > sp.memory_limit)
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s: the plan peaks at %lld bytes in the order %s executes, above its memory limit of %lld "
                            "bytes",
                            file, (long long)peak, olla_runtime_name(sp.runtime), (long long)sp.memory_limit);
    if (st == OLLA_OK && sp.memory_limit >= 0 && sp.runtime == OLLA_RUNTIME_LISTED && sp.arena_bytes > sp.memory_limit)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan's arena is %lld bytes, above its memory limit of %lld bytes",
                            file, (long long)sp.arena_bytes, (long long)sp.memory_limit);
    if (have_eg)
        olla_exec_graph_free(&eg);
done:
    st = explain_failure(st, &co, &sp, file, err);
    free(offset);
    free(bytes);
    free(order);
    free(shares);
    free(share);
    olla_graph_free(g);
    olla_shape_table_free(types);
    olla_stored_plan_free(&sp);
    return st;
}
