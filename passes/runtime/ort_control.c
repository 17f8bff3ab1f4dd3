/* olla-onnx: the models of the subgraphs ONNX Runtime's If, Loop and Scan
 * run (olla_ort_memory.h, "Control flow", states the rules; ort_session.c
 * replays their executions).
 *
 * For every node holding subgraphs, each subgraph gets a graph of its own
 * (olla_graph_build_subgraph, typed from the shape tables' record of the
 * subgraph's values as inferred in its node's context), a model of its own,
 * the order ORT runs it in, and one planning pass over that order, kept for
 * every execution. What the node itself decides is read here: which branch
 * an If runs, how many iterations a Loop or a Scan makes, which outputs have
 * a static shape (allocated before the subgraph runs), which Scan inputs and
 * outputs go through transposed temporaries. Whatever cannot be told from
 * the file (a trip count known only at run time, an output the subgraph
 * passes through from its inputs, Scan of opset 8...) leaves a note that
 * names the node, and the subgraphs are then not counted at all. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/runtime/ort_memory_internal.h"
#include "passes/shapes/olla_shapes.h"

/* More iterations than this are not replayed. */
#define MAX_TRIPS 100000

static void note(olla_ort_memory *m, int op, const char *fmt, ...)
{
    if (m->cf_note[0])
        return;
    char label[200], why[sizeof m->cf_note - sizeof label - 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(m->cf_note, sizeof m->cf_note, "%s: %s", olla_op_label(m->g, op, label, sizeof label), why);
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
            return n->attribute[i];
    return NULL;
}

/* Element k of an ints attribute, dflt when absent or short. */
static int64_t attr_ints_at(const Onnx__NodeProto *n, const char *name, size_t k, int64_t dflt)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a && k < a->n_ints ? a->ints[k] : dflt;
}

static int64_t attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a ? a->i : dflt;
}

static const char *input_name(const olla_graph *g, int op, int k)
{
    if (k >= g->ops[op].n_explicit_inputs)
        return NULL;
    int t = g->input_list[g->ops[op].first_input + k];
    return t >= 0 ? g->tensors[t].name : NULL;
}

/* 1 when every dim of t's declared shape is a value (the shape ORT's kernels
 * see as static). */
static int static_shape(const olla_value_type *t)
{
    if (t->rank < 0)
        return 0;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d].value < 0)
            return 0;
    return 1;
}

/* Whether graph output i of the subgraph model c is computed by a node of
 * the subgraph that runs. */
static int computed_output(const olla_ort_memory *c, int i)
{
    int t = c->g->graph_outputs[i];
    return !olla_ort_is_preexisting(c, t);
}

/* An If branch's output that is a constant of the branch with a static
 * shape: the If allocates its output before the branch runs, and the
 * branch's frame copies the constant into it. */
static int constant_into_given(const olla_ort_memory *c, const ort_cf *cf, int b, int i)
{
    const olla_tensor *t = &c->g->tensors[c->g->graph_outputs[i]];
    return cf->kind == CF_IF && cf->body_static[b][i] && !t->is_outer && (t->is_initializer || t->producer >= 0);
}

static olla_status oom(olla_error *err)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory modelling the subgraphs ONNX Runtime runs");
}

/* The model of subgraph sg (attribute attr_name of op) as body b of cf.
 * Leaves a note (and returns OLLA_OK) when it cannot be modelled. */
static olla_status body_new(olla_ort_memory *m, int op, const char *attr_name, const Onnx__GraphProto *sg, ort_cf *cf,
                            int b, olla_error *err)
{
    olla_shape_table *sized = (olla_shape_table *)m->opt.sized_types;
    olla_shape_table *declared = (olla_shape_table *)m->opt.declared_types;
    if (!olla_shape_has_graph(sized, sg) || !olla_shape_has_graph(declared, sg)) {
        note(m, op, "its subgraph '%s' was left out of shape inference (nested too deeply or too much work)", attr_name);
        return OLLA_OK;
    }
    olla_shape_graph_source ss = {sized, sg}, ds = {declared, sg};
    olla_type_source s1 = olla_shape_type_source_in(&ss), s2 = olla_shape_type_source_in(&ds);
    olla_graph *gs = NULL, *gd = NULL;
    olla_error e = {0};
    olla_status st = olla_graph_build_subgraph(m->g->model, sg, &s1, &gs, &e);
    if (st == OLLA_OK)
        st = olla_graph_build_subgraph(m->g->model, sg, &s2, &gd, &e);
    if (st == OLLA_OK && !(cf->body_static[b] = calloc((size_t)gd->n_graph_outputs + 1, 1)))
        st = oom(&e);
    for (int i = 0; st == OLLA_OK && i < gd->n_graph_outputs; i++)
        cf->body_static[b][i] = (unsigned char)static_shape(&gd->tensors[gd->graph_outputs[i]].type);
    olla_ort_memory *c = NULL;
    if (st == OLLA_OK) {
        olla_ort_memory_options opt = m->opt;
        opt.copy_outputs = 0;
        st = olla_ort__memory_new(gs, gd, &opt, 1, &c, &e);
    }
    olla_graph_free(gd);
    if (st != OLLA_OK) {
        olla_graph_free(gs);
        if (st == OLLA_ERR_INTERNAL)
            return olla_error_set(err, st, "%s", e.message);
        note(m, op, "its subgraph '%s': %s", attr_name, e.message);
        return OLLA_OK;
    }
    c->own_sized = gs;
    c->loop_body = cf->kind == CF_LOOP;
    cf->body[b] = c;
    if (c->cf_note[0]) {
        note(m, op, "in its subgraph '%s', %s", attr_name, c->cf_note);
        return OLLA_OK;
    }
    int n = gs->n_ops, n_exec = 0;
    int *listing = malloc(((size_t)n + 1) * sizeof(int));
    cf->order[b] = malloc(((size_t)n + 1) * sizeof(int));
    if (!listing || !cf->order[b]) {
        free(listing);
        return oom(err);
    }
    for (int i = 0; i < n; i++)
        listing[gs->ops[i].proto_index] = i;
    st = olla_exec_order(gs, OLLA_RUNTIME_ORT, listing, cf->order[b], &n_exec, &e);
    free(listing);
    cf->n_order[b] = n_exec;
    olla_ort_memory_result r;
    if (st == OLLA_OK)
        st = olla_ort_memory_eval(c, cf->order[b], n_exec, &r, &e);
    if (st == OLLA_ERR_INTERNAL)
        return olla_error_set(err, st, "%s", e.message);
    if (st != OLLA_OK) {
        note(m, op, "its subgraph '%s': %s", attr_name, e.message);
        return OLLA_OK;
    }
    if (c->cf_note[0]) {
        note(m, op, "in its subgraph '%s', %s", attr_name, c->cf_note);
        return OLLA_OK;
    }
    cf->peak[b] = r.peak_bytes;
    for (int i = 0; i < gs->n_graph_outputs; i++)
        if (!computed_output(c, i) && !(cf->kind == CF_LOOP && i == 0) && !constant_into_given(c, cf, b, i)) {
            note(m, op, "its subgraph '%s' passes output '%s' through from its inputs, which is not modelled",
                 attr_name, gs->tensors[gs->graph_outputs[i]].name);
            return OLLA_OK;
        }
    return OLLA_OK;
}

/* The body's outputs and inputs against the node's. */
static int counts_match(olla_ort_memory *m, int op, const ort_cf *cf, int n_in, int n_out)
{
    for (int b = 0; b < cf->n_bodies; b++) {
        if (!cf->body[b])
            continue;
        const olla_graph *cg = cf->body[b]->g;
        if ((n_in >= 0 && cg->n_graph_inputs != n_in) || cg->n_graph_outputs != n_out) {
            note(m, op, "its subgraph has %d inputs and %d outputs where the node needs %d and %d",
                 cg->n_graph_inputs, cg->n_graph_outputs, n_in, n_out);
            return 0;
        }
    }
    return 1;
}

static int known(const olla_ort_memory *m, const Onnx__GraphProto *g, const char *name, int64_t *v)
{
    return name && olla_shape_known_scalar(m->opt.sized_types, g, name, v);
}

/* If: the branch the condition selects (the only one modelled), else the
 * one that holds more. */
static void describe_if(olla_ort_memory *m, int op, ort_cf *cf)
{
    if (cf->body[0] && cf->body[1])
        cf->branch = cf->peak[1] > cf->peak[0] ? 1 : 0;
    if (counts_match(m, op, cf, -1, m->g->ops[op].n_outputs))
        memcpy(cf->out_static, cf->body_static[cf->branch], (size_t)m->g->ops[op].n_outputs);
}

/* Whether the body's condition output is its condition input (or a
 * constant): then the trip count alone ends the loop. */
static int body_keeps_condition(const olla_ort_memory *m, const ort_cf *cf, int64_t *constant)
{
    const olla_graph *cg = cf->body[0]->g;
    if (cg->n_graph_inputs < 2 || cg->n_graph_outputs < 1)
        return 0;
    int out = cg->graph_outputs[0], in = cg->graph_inputs[1], p = cg->tensors[out].producer;
    *constant = -1;
    if (out == in)
        return 1;
    if (p >= 0 && strcmp(cg->ops[p].op_type, "Identity") == 0 && cg->ops[p].n_explicit_inputs == 1 &&
        cg->input_list[cg->ops[p].first_input] == in)
        return 1;
    return known(m, cg->proto, cg->tensors[out].name, constant);
}

static void describe_loop(olla_ort_memory *m, int op, ort_cf *cf)
{
    const olla_graph *g = m->g;
    const char *trip = input_name(g, op, 0), *cond = input_name(g, op, 1);
    int64_t trips, go = 1, body_cond;
    cf->n_state = g->ops[op].n_explicit_inputs - 2;
    if (cf->n_state < 0 || !counts_match(m, op, cf, 2 + cf->n_state, 1 + g->ops[op].n_outputs))
        return;
    if (!trip) {
        note(m, op, "the Loop has no trip count: it stops on a condition computed at run time, which is not modelled");
        return;
    }
    if (!known(m, g->proto, trip, &trips)) {
        note(m, op, "the Loop's trip count '%s' is known only at run time, which is not modelled", trip);
        return;
    }
    if (cond && !known(m, g->proto, cond, &go)) {
        note(m, op, "the Loop's condition '%s' is known only at run time, which is not modelled", cond);
        return;
    }
    if (!body_keeps_condition(m, cf, &body_cond)) {
        note(m, op, "the Loop's body computes its condition '%s' at run time, which is not modelled",
             cf->body[0]->g->tensors[cf->body[0]->g->graph_outputs[0]].name);
        return;
    }
    cf->trips = !go || trips <= 0 ? 0 : body_cond == 0 ? 1 : trips;
    if (cf->trips > MAX_TRIPS)
        note(m, op, "the Loop runs %lld iterations; more than %d are not replayed", (long long)cf->trips, MAX_TRIPS);
}

static void describe_scan(olla_ort_memory *m, int op, ort_cf *cf, const Onnx__NodeProto *node)
{
    const olla_graph *g = m->g;
    if (olla_model_opset(g->model->proto, "") < 9) {
        note(m, op, "Scan of opset 8 (with a batch dimension and sequence lengths) is not modelled");
        return;
    }
    cf->n_scan_in = (int)attr_int(node, "num_scan_inputs", 0);
    cf->n_state = g->ops[op].n_explicit_inputs - cf->n_scan_in;
    int n_out = g->ops[op].n_outputs, n_scan_out = n_out - cf->n_state;
    if (cf->n_scan_in < 1 || cf->n_state < 0 || n_scan_out < 0 ||
        !counts_match(m, op, cf, g->ops[op].n_explicit_inputs, n_out))
        return;
    cf->in_temp = calloc((size_t)cf->n_scan_in + 1, sizeof *cf->in_temp);
    cf->out_temp = calloc((size_t)n_scan_out + 1, 1);
    if (!cf->in_temp || !cf->out_temp) {
        note(m, op, "out of memory");
        return;
    }
    cf->trips = -1;
    for (int j = 0; j < cf->n_scan_in; j++) {
        int t = g->input_list[g->ops[op].first_input + cf->n_state + j];
        const olla_value_type *ty = t >= 0 ? &g->tensors[t].type : NULL;
        int64_t axis = attr_ints_at(node, "scan_input_axes", (size_t)j, 0);
        if (!ty || ty->rank < 1 || axis < -ty->rank || axis >= ty->rank || ty->dims[axis < 0 ? axis + ty->rank : axis].value < 0) {
            note(m, op, "the length of the sequence Scan input %d holds is not known", j);
            return;
        }
        if (axis < 0)
            axis += ty->rank;
        cf->trips = ty->dims[axis].value;
        cf->in_temp[j] = axis != 0 ? g->tensors[t].bytes : 0;
    }
    for (int j = 0; j < n_scan_out; j++)
        cf->out_temp[j] = attr_ints_at(node, "scan_output_axes", (size_t)j, 0) != 0;
    memcpy(cf->out_static, cf->body_static[0], (size_t)n_out);
    if (cf->trips > MAX_TRIPS)
        note(m, op, "the Scan runs %lld iterations; more than %d are not replayed", (long long)cf->trips, MAX_TRIPS);
}

static void cf_free(ort_cf *cf)
{
    if (!cf)
        return;
    for (int b = 0; b < 2; b++) {
        olla_ort_memory_free(cf->body[b]);
        free(cf->order[b]);
        free(cf->body_static[b]);
    }
    free(cf->out_static);
    free(cf->in_temp);
    free(cf->out_temp);
    free(cf);
}

void olla_ort__control_free(olla_ort_memory *m)
{
    if (!m->cf)
        return;
    for (int op = 0; op < m->g->n_ops; op++)
        cf_free(m->cf[op]);
    free(m->cf);
    m->cf = NULL;
}

/* The control flow of op, or NULL with a note when it cannot be modelled. */
static olla_status describe_op(olla_ort_memory *m, int op, ort_cf **out, olla_error *err)
{
    *out = NULL;
    const olla_op *o = &m->g->ops[op];
    const Onnx__NodeProto *node = olla_graph_node_proto(m->g, op);
    int dflt = !o->domain[0] || strcmp(o->domain, "ai.onnx") == 0;
    int kind = !dflt ? 0 : strcmp(o->op_type, "If") == 0 ? CF_IF : strcmp(o->op_type, "Loop") == 0 ? CF_LOOP
                                                            : strcmp(o->op_type, "Scan") == 0 ? CF_SCAN : 0;
    if (!kind) {
        note(m, op, "it holds subgraphs, and how ONNX Runtime runs them is not modelled (only If, Loop and Scan are)");
        return OLLA_OK;
    }
    ort_cf *cf = calloc(1, sizeof *cf);
    if (!cf || !(cf->out_static = calloc((size_t)o->n_outputs + 1, 1))) {
        cf_free(cf);
        return oom(err);
    }
    cf->kind = kind;
    cf->n_bodies = kind == CF_IF ? 2 : 1;
    static const char *const names[3][2] = {{"then_branch", "else_branch"}, {"body", NULL}, {"body", NULL}};
    olla_status st = OLLA_OK;
    int64_t cond;
    int only = -1; /* an If whose condition is a constant: the branch it selects */
    if (kind == CF_IF && known(m, m->g->proto, input_name(m->g, op, 0), &cond))
        only = cf->branch = cond ? 0 : 1;
    for (int b = 0; st == OLLA_OK && b < cf->n_bodies && !m->cf_note[0]; b++) {
        if (only >= 0 && b != only)
            continue;
        const Onnx__AttributeProto *a = attr(node, names[kind - 1][b]);
        if (!a || !a->g)
            note(m, op, "it has no '%s' subgraph", names[kind - 1][b]);
        else
            st = body_new(m, op, names[kind - 1][b], a->g, cf, b, err);
    }
    if (st == OLLA_OK && !m->cf_note[0]) {
        if (kind == CF_IF)
            describe_if(m, op, cf);
        else if (kind == CF_LOOP)
            describe_loop(m, op, cf);
        else
            describe_scan(m, op, cf, node);
    }
    if (st != OLLA_OK || m->cf_note[0]) {
        cf_free(cf);
        return st;
    }
    *out = cf;
    return OLLA_OK;
}

olla_status olla_ort__control_new(olla_ort_memory *m, const olla_graph *declared, olla_error *err)
{
    (void)declared;
    m->cf = calloc((size_t)m->g->n_ops + 1, sizeof *m->cf);
    if (!m->cf)
        return oom(err);
    for (int op = 0; op < m->g->n_ops && !m->cf_note[0]; op++) {
        if (m->op_kind[op] != OP_SUBGRAPH)
            continue;
        olla_status st = describe_op(m, op, &m->cf[op], err);
        if (st != OLLA_OK)
            return st;
        m->n_cf += m->cf[op] != NULL;
    }
    return OLLA_OK;
}
