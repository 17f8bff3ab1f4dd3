/* olla-onnx: building our graph from a loaded model. */
#include "onnx/olla_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/olla_grow.h"

/* A growing list of tensor or operator indices. */
typedef struct {
    int *v;
    int n;
    size_t cap;
} int_vec;

/* Appends x; 0 when out of memory. */
static int vec_push(int_vec *a, int x)
{
    int *p = olla_grow(a->v, &a->cap, (size_t)a->n + 1, sizeof *p);
    if (!p)
        return 0;
    a->v = p;
    a->v[a->n++] = x;
    return 1;
}

/* 1 when reads[k] is a tensor this operator has not read at an earlier
 * position, so each consumer is counted once per tensor. */
static int first_read(const int *reads, int k)
{
    if (reads[k] < 0)
        return 0;
    for (int j = 0; j < k; j++)
        if (reads[j] == reads[k])
            return 0;
    return 1;
}

const char *olla_op_label(const olla_graph *g, int op, char *buf, int buflen)
{
    const olla_op *o = &g->ops[op];
    if (o->name && o->name[0])
        snprintf(buf, (size_t)buflen, "'%s' (%s)", o->name, o->op_type);
    else
        snprintf(buf, (size_t)buflen, "#%d (%s)", o->proto_index, o->op_type);
    return buf;
}

void olla_graph_free(olla_graph *g)
{
    if (!g)
        return;
    free(g->ops);
    free(g->tensors);
    free(g->input_list);
    free(g->output_list);
    free(g->consumer_list);
    free(g->graph_inputs);
    free(g->graph_outputs);
    olla_strmap_free(&g->by_name);
    free(g);
}

/* The state of one build: the graph so far, its tensors while they grow,
 * and the index lists that become the graph's. A phase that fails returns 0
 * with the error in err, or with oom set (the message is written once, at
 * the end). */
typedef struct {
    olla_graph *g;
    olla_tensor *t;
    int n;
    size_t cap;
    olla_error *err;
    const char *file; /* the model's path, for messages */
    int oom;
    int outer_ok; /* a subgraph built on its own: names from enclosing graphs become outer tensors */
    int_vec inputs, outputs;   /* of every operator, in operator order (input_list, output_list) */
    int_vec ginputs, goutputs; /* the graph's inputs and outputs */
    int_vec freev;             /* scratch: the outer names one operator's subgraphs read */
} builder;

/* A new tensor named name; its index, or -1 when out of memory (b->oom). */
static int add_tensor(builder *b, const char *name)
{
    olla_tensor *p = olla_grow(b->t, &b->cap, (size_t)b->n + 1, sizeof *p);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->t = p;
    olla_tensor *t = &b->t[b->n];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->producer = -1;
    t->bytes = -1;
    t->type.rank = -1;
    if (!olla_strmap_put(&b->g->by_name, name, b->n)) {
        b->oom = 1;
        return -1;
    }
    return b->n++;
}

/* The tensor a name read in the graph refers to; in a subgraph built on its
 * own, a name no value of the graph defines is a value of an enclosing graph.
 * -1 when unknown (or out of memory: b->oom). */
static int read_tensor(builder *b, const char *name)
{
    int ti = olla_strmap_get(&b->g->by_name, name);
    if (ti >= 0 || !b->outer_ok)
        return ti;
    if ((ti = add_tensor(b, name)) >= 0)
        b->t[ti].is_input = b->t[ti].is_outer = 1;
    return ti;
}

const Onnx__NodeProto *olla_graph_node_proto(const olla_graph *g, int op)
{
    return g->proto->node[g->ops[op].proto_index];
}

/* Names a subgraph reads from enclosing scopes, at any depth, into `free_names`
 * (duplicates allowed). `local` holds names defined in the subgraph. */
static int collect_free(const Onnx__GraphProto *sg, int_vec *free_idx, const olla_strmap *outer, builder *b);

static int collect_attr_graphs(const Onnx__NodeProto *node, int_vec *free_idx, const olla_strmap *outer, builder *b)
{
    for (size_t a = 0; a < node->n_attribute; a++) {
        const Onnx__AttributeProto *at = node->attribute[a];
        if (at->g && !collect_free(at->g, free_idx, outer, b))
            return 0;
        for (size_t k = 0; k < at->n_graphs; k++)
            if (!collect_free(at->graphs[k], free_idx, outer, b))
                return 0;
    }
    return 1;
}

/* Resolves names not defined inside sg: the ones in the main graph's scope
 * (outer) become indices in free_idx; others are errors. Nested subgraphs see
 * every enclosing scope, so a name is free here unless sg (or a subgraph in
 * between) defines it. */
typedef struct scope {
    olla_strmap names;
    const struct scope *parent;
} scope;

static int scope_has(const scope *s, const char *name)
{
    for (; s; s = s->parent)
        if (olla_strmap_get(&s->names, name) >= 0)
            return 1;
    return 0;
}

static int collect_in_scope(const Onnx__GraphProto *sg, const scope *parent, int_vec *free_idx,
                            const olla_strmap *outer, builder *b);

static int use_name(const char *name, const scope *sc, int_vec *free_idx, const olla_strmap *outer, builder *b,
                    const char *where)
{
    if (!name || !name[0] || scope_has(sc, name))
        return 1;
    int idx = b->outer_ok ? read_tensor(b, name) : olla_strmap_get(outer, name);
    if (idx < 0) {
        if (!b->oom)
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: subgraph node %s reads '%s', which nothing in scope produces",
                           b->g->model->path, where, name);
        return 0;
    }
    if (!vec_push(free_idx, idx)) {
        b->oom = 1;
        return 0;
    }
    return 1;
}

static int collect_in_scope(const Onnx__GraphProto *sg, const scope *parent, int_vec *free_idx,
                            const olla_strmap *outer, builder *b)
{
    scope sc;
    sc.parent = parent;
    if (!olla_strmap_init(&sc.names, sg->n_node * 2 + sg->n_input + sg->n_initializer + 8)) {
        b->oom = 1;
        return 0;
    }
    int ok = 1;
    for (size_t i = 0; ok && i < sg->n_input; i++)
        if (sg->input[i]->name)
            ok = olla_strmap_put(&sc.names, sg->input[i]->name, 1);
    for (size_t i = 0; ok && i < sg->n_initializer; i++)
        if (sg->initializer[i]->name)
            ok = olla_strmap_put(&sc.names, sg->initializer[i]->name, 1);
    for (size_t i = 0; ok && i < sg->n_sparse_initializer; i++)
        if (sg->sparse_initializer[i]->values && sg->sparse_initializer[i]->values->name)
            ok = olla_strmap_put(&sc.names, sg->sparse_initializer[i]->values->name, 1);
    for (size_t i = 0; ok && i < sg->n_node; i++)
        for (size_t k = 0; ok && k < sg->node[i]->n_output; k++)
            if (sg->node[i]->output[k] && sg->node[i]->output[k][0])
                ok = olla_strmap_put(&sc.names, sg->node[i]->output[k], 1);
    if (!ok)
        b->oom = 1;
    for (size_t i = 0; ok && i < sg->n_node; i++) {
        const Onnx__NodeProto *node = sg->node[i];
        char where[256];
        snprintf(where, sizeof where, "'%s' (%s)", node->name ? node->name : "", node->op_type ? node->op_type : "");
        for (size_t k = 0; ok && k < node->n_input; k++)
            ok = use_name(node->input[k], &sc, free_idx, outer, b, where);
        for (size_t a = 0; ok && a < node->n_attribute; a++) {
            const Onnx__AttributeProto *at = node->attribute[a];
            if (at->g)
                ok = collect_in_scope(at->g, &sc, free_idx, outer, b);
            for (size_t k = 0; ok && k < at->n_graphs; k++)
                ok = collect_in_scope(at->graphs[k], &sc, free_idx, outer, b);
        }
    }
    for (size_t i = 0; ok && i < sg->n_output; i++)
        ok = use_name(sg->output[i]->name, &sc, free_idx, outer, b, "output");
    olla_strmap_free(&sc.names);
    return ok;
}

static int collect_free(const Onnx__GraphProto *sg, int_vec *free_idx, const olla_strmap *outer, builder *b)
{
    return collect_in_scope(sg, NULL, free_idx, outer, b);
}

static void set_type(builder *b, int ti, const olla_type_source *types)
{
    olla_tensor *t = &b->t[ti];
    const olla_value_type *vt = types && types->lookup ? types->lookup(types->ctx, t->name) : NULL;
    if (vt) {
        t->type = *vt;
        if (vt->kind != OLLA_VALUE_TENSOR) {
            t->bytes = -1;
            t->unknown_reason = "not a tensor (sequence, map, optional or sparse values are not planned)";
            return;
        }
        int64_t bytes = olla_value_bytes(vt);
        if (bytes == -2) {
            t->bytes = -1;
            t->unknown_reason = "its size in bytes overflows 64 bits";
            return;
        }
        t->bytes = bytes;
    }
    if (t->bytes < 0) {
        const char *why = types && types->unknown_reason ? types->unknown_reason(types->ctx, t->name) : NULL;
        t->unknown_reason = why ? why : "no shape or type is known for it";
    }
}

/* Sets *on_cycle to an operator on a cycle, or -1 when the operators can be
 * ordered. Kahn's sort marks what can run; walking back from a node that
 * cannot, through producers that cannot either, must come back to a node
 * already seen, which lies on a cycle. Returns 0 when out of memory. */
static int find_cycle(const olla_graph *g, int *on_cycle)
{
    int n = g->n_ops;
    int *waiting = calloc((size_t)n + 1, sizeof(int)), *ready = malloc(((size_t)n + 1) * sizeof(int));
    if (!waiting || !ready) {
        free(waiting);
        free(ready);
        return 0;
    }
    int n_ready = 0, done = 0;
    for (int v = 0; v < n; v++) {
        for (int i = 0; i < g->ops[v].n_inputs; i++) {
            int t = g->input_list[g->ops[v].first_input + i];
            waiting[v] += t >= 0 && g->tensors[t].producer >= 0 && first_read(g->input_list + g->ops[v].first_input, i);
        }
        if (!waiting[v])
            ready[n_ready++] = v;
    }
    while (n_ready > 0) {
        const olla_op *o = &g->ops[ready[--n_ready]];
        done++;
        for (int k = 0; k < o->n_outputs; k++) {
            int t = g->output_list[o->first_output + k];
            for (int c = 0; t >= 0 && c < g->tensors[t].n_consumers; c++) {
                int w = g->consumer_list[g->tensors[t].first_consumer + c];
                if (--waiting[w] == 0)
                    ready[n_ready++] = w;
            }
        }
    }
    *on_cycle = -1;
    if (done < n) {
        int v = 0;
        while (!waiting[v])
            v++;
        /* ready[] now marks the nodes met on the walk back */
        memset(ready, 0, ((size_t)n + 1) * sizeof(int));
        while (!ready[v]) {
            ready[v] = 1;
            const olla_op *o = &g->ops[v];
            for (int i = 0; i < o->n_inputs; i++) {
                int t = g->input_list[o->first_input + i];
                if (t >= 0 && g->tensors[t].producer >= 0 && waiting[g->tensors[t].producer]) {
                    v = g->tensors[t].producer;
                    break;
                }
            }
        }
        *on_cycle = v;
    }
    free(waiting);
    free(ready);
    return 1;
}

/* ---- the phases of a build ---- */

/* The caller-owned values: graph inputs, then initializers (an initializer
 * may also be a graph input: a default value). */
static int add_values(builder *b, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *name = gp->input[i]->name;
        if (!name || !name[0]) {
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: graph input %zu has no name", b->file, i);
            return 0;
        }
        int ti = olla_strmap_get(&b->g->by_name, name);
        if (ti >= 0) {
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: graph input '%s' is listed twice", b->file, name);
            return 0;
        }
        ti = add_tensor(b, name);
        if (ti < 0 || !vec_push(&b->ginputs, ti))
            return !(b->oom = 1);
        b->t[ti].is_input = 1;
    }
    for (size_t i = 0; i < gp->n_initializer + gp->n_sparse_initializer; i++) {
        const char *name = i < gp->n_initializer ? gp->initializer[i]->name
                           : gp->sparse_initializer[i - gp->n_initializer]->values
                               ? gp->sparse_initializer[i - gp->n_initializer]->values->name
                               : NULL;
        if (!name || !name[0]) {
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: initializer %zu has no name", b->file, i);
            return 0;
        }
        int ti = olla_strmap_get(&b->g->by_name, name);
        if (ti >= 0 && b->t[ti].is_initializer) {
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: initializer '%s' is defined twice", b->file, name);
            return 0;
        }
        if (ti < 0 && (ti = add_tensor(b, name)) < 0)
            return 0;
        b->t[ti].is_initializer = 1; /* an initializer may also be a graph input (a default value) */
    }
    return 1;
}

/* Output k of operator i, named name: a new tensor it produces; a name
 * already defined is an error naming both. */
static int add_op_output(builder *b, int i, const char *name)
{
    olla_graph *g = b->g;
    int ti = -1;
    if (name && name[0]) {
        int prev = olla_strmap_get(&g->by_name, name);
        if (prev >= 0) {
            char l1[300], l2[300];
            olla_tensor *pt = &b->t[prev];
            if (pt->producer >= 0)
                olla_error_set(b->err, OLLA_ERR_INPUT, "%s: tensor '%s' is produced twice, by node %s and by node %s",
                               b->file, name, olla_op_label(g, pt->producer, l1, sizeof l1),
                               olla_op_label(g, i, l2, sizeof l2));
            else
                olla_error_set(b->err, OLLA_ERR_INPUT, "%s: tensor '%s' is produced by node %s but is also a graph %s",
                               b->file, name, olla_op_label(g, i, l2, sizeof l2),
                               pt->is_input ? "input" : "initializer");
            return 0;
        }
        if ((ti = add_tensor(b, name)) < 0)
            return 0;
        b->t[ti].producer = i;
        b->t[ti].is_constant = (unsigned char)(strcmp(g->ops[i].op_type, "Constant") == 0);
    }
    if (!vec_push(&b->outputs, ti))
        return !(b->oom = 1);
    return 1;
}

/* The operators, in the graph's order, and the tensors they produce. */
static int add_ops(builder *b, const Onnx__GraphProto *gp)
{
    olla_graph *g = b->g;
    g->n_ops = (int)gp->n_node;
    g->ops = calloc((size_t)g->n_ops + 1, sizeof *g->ops);
    if (!g->ops)
        return !(b->oom = 1);
    for (int i = 0; i < g->n_ops; i++) {
        const Onnx__NodeProto *node = gp->node[i];
        olla_op *op = &g->ops[i];
        op->name = node->name ? node->name : "";
        op->op_type = node->op_type ? node->op_type : "";
        op->domain = node->domain ? node->domain : "";
        op->proto_index = i;
        if (!op->op_type[0]) {
            olla_error_set(b->err, OLLA_ERR_INPUT, "%s: node #%d has no op_type", b->file, i);
            return 0;
        }
        op->first_output = b->outputs.n;
        op->n_outputs = (int)node->n_output;
        for (size_t k = 0; k < node->n_output; k++)
            if (!add_op_output(b, i, node->output[k]))
                return 0;
    }
    return 1;
}

/* The inputs of operator i: its explicit ones, then the outer-scope tensors
 * its subgraphs read (each once). */
static int add_op_inputs(builder *b, int i, const Onnx__NodeProto *node)
{
    olla_graph *g = b->g;
    olla_op *op = &g->ops[i];
    int_vec *inputs = &b->inputs;
    op->first_input = inputs->n;
    for (size_t k = 0; k < node->n_input; k++) {
        const char *name = node->input[k];
        int ti = -1;
        if (name && name[0]) {
            ti = read_tensor(b, name);
            if (ti < 0 && b->oom)
                return 0;
            if (ti < 0) {
                char l[300];
                olla_error_set(b->err, OLLA_ERR_INPUT,
                               "%s: node %s reads '%s', which no node, graph input or initializer produces", b->file,
                               olla_op_label(g, i, l, sizeof l), name);
                return 0;
            }
        }
        if (!vec_push(inputs, ti))
            return !(b->oom = 1);
    }
    op->n_explicit_inputs = (int)node->n_input;
    b->freev.n = 0;
    if (!collect_attr_graphs(node, &b->freev, &g->by_name, b))
        return 0;
    for (int k = 0; k < b->freev.n; k++) {
        int dup = 0;
        for (int j = op->first_input; j < inputs->n && !dup; j++)
            dup = inputs->v[j] == b->freev.v[k];
        if (!dup && !vec_push(inputs, b->freev.v[k]))
            return !(b->oom = 1);
    }
    op->n_inputs = inputs->n - op->first_input;
    return 1;
}

/* The graph's outputs, each a tensor of the graph. */
static int add_graph_outputs(builder *b, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i]->name;
        int ti = name ? read_tensor(b, name) : -1;
        if (ti < 0 && b->oom)
            return 0;
        if (ti < 0) {
            olla_error_set(b->err, OLLA_ERR_INPUT,
                           "%s: graph output '%s' is not produced by any node, input or initializer", b->file,
                           name ? name : "");
            return 0;
        }
        b->t[ti].is_output = 1;
        if (!vec_push(&b->goutputs, ti))
            return !(b->oom = 1);
    }
    return !b->oom;
}

/* The tensors and index lists move into the graph; each tensor gets its
 * consumers (an operator reading a tensor twice counts once). */
static int link_consumers(builder *b)
{
    olla_graph *g = b->g;
    const int_vec *inputs = &b->inputs;
    g->tensors = b->t;
    g->n_tensors = b->n;
    b->t = NULL;
    g->consumer_list = malloc(((size_t)inputs->n + 1) * sizeof(int));
    if (!g->consumer_list)
        return !(b->oom = 1);
    for (int i = 0; i < g->n_ops; i++) {
        const olla_op *op = &g->ops[i];
        for (int k = 0; k < op->n_inputs; k++)
            if (first_read(inputs->v + op->first_input, k))
                g->tensors[inputs->v[op->first_input + k]].n_consumers++;
    }
    int acc = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        g->tensors[t].first_consumer = acc;
        acc += g->tensors[t].n_consumers;
        g->tensors[t].n_consumers = 0;
    }
    for (int i = 0; i < g->n_ops; i++) {
        const olla_op *op = &g->ops[i];
        for (int k = 0; k < op->n_inputs; k++)
            if (first_read(inputs->v + op->first_input, k)) {
                olla_tensor *t = &g->tensors[inputs->v[op->first_input + k]];
                g->consumer_list[t->first_consumer + t->n_consumers++] = i;
            }
    }
    g->input_list = b->inputs.v;
    g->output_list = b->outputs.v;
    g->graph_inputs = b->ginputs.v;
    g->n_graph_inputs = b->ginputs.n;
    g->graph_outputs = b->goutputs.v;
    g->n_graph_outputs = b->goutputs.n;
    b->inputs.v = b->outputs.v = b->ginputs.v = b->goutputs.v = NULL;
    return 1;
}

/* Every tensor's type and size from the type source; then no cycle. */
static int type_and_check(builder *b, const olla_type_source *types)
{
    olla_graph *g = b->g;
    for (int t = 0; t < g->n_tensors; t++) {
        b->t = g->tensors;
        set_type(b, t, types);
    }
    b->t = NULL;
    int on_cycle = -1;
    if (!find_cycle(g, &on_cycle))
        return !(b->oom = 1);
    if (on_cycle >= 0) {
        char l[300];
        olla_error_set(b->err, OLLA_ERR_INPUT, "%s: the graph has a cycle through node %s", b->file,
                       olla_op_label(g, on_cycle, l, sizeof l));
        return 0;
    }
    return 1;
}

/* Builds graph gp of model: values, operators, inputs, graph outputs,
 * consumers, types, cycle check. */
static olla_status build(const olla_model *model, const Onnx__GraphProto *gp, int outer_ok,
                         const olla_type_source *types, olla_graph **out, olla_error *err)
{
    *out = NULL;
    olla_graph *g = calloc(1, sizeof *g);
    builder b;
    memset(&b, 0, sizeof b);
    b.file = model->path;
    if (!g)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the graph of %s", b.file);
    g->model = model;
    g->proto = gp;
    b.g = g;
    b.err = err;
    b.outer_ok = outer_ok;
    if (!olla_strmap_init(&g->by_name, gp->n_node * 2 + gp->n_input + gp->n_initializer + 8)) {
        olla_graph_free(g); /* out of memory before any phase: the status alone, no message */
        return err->code ? err->code : OLLA_ERR_INTERNAL;
    }
    int ok = add_values(&b, gp) && add_ops(&b, gp);
    for (int i = 0; ok && i < g->n_ops; i++)
        ok = add_op_inputs(&b, i, gp->node[i]);
    ok = ok && add_graph_outputs(&b, gp) && link_consumers(&b) && type_and_check(&b, types);
    free(b.freev.v);
    if (ok) {
        *out = g;
        return OLLA_OK;
    }
    if (b.oom)
        olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the graph of %s", b.file);
    free(b.t);
    free(b.inputs.v);
    free(b.outputs.v);
    free(b.ginputs.v);
    free(b.goutputs.v);
    olla_graph_free(g);
    return err->code ? err->code : OLLA_ERR_INTERNAL;
}

olla_status olla_graph_build(const olla_model *model, const olla_type_source *types, olla_graph **out,
                             olla_error *err)
{
    return build(model, model->proto->graph, 0, types, out, err);
}

olla_status olla_graph_build_subgraph(const olla_model *model, const Onnx__GraphProto *sg, const olla_type_source *types,
                                      olla_graph **out, olla_error *err)
{
    return build(model, sg, 1, types, out, err);
}
