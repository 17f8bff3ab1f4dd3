/* olla-onnx: fitting a model under a memory limit by recomputation, as a
 * rewrite of the graph (pipeline/olla_pipeline.h, olla_stage_remat).
 *
 * The graph's DAG and the order the runtime executes become a problem for
 * solver/olla_remat.h: each operator's estimated cost
 * (passes/analysis/olla_node_cost.h), whether a copy of it is allowed
 * (passes/runtime/olla_recompute.h, and the graph-level conditions below),
 * the buffers views share, the tensors that must stay the original, the
 * outputs a copy may leave out. The plan found becomes a model: the nodes in
 * the order of the plan's runs, every copy a node with the original's
 * operator and attributes, fresh output names ("<name>.recompute<k>") and
 * value_info like the original's, and every reader of a recomputed version
 * reading the copy's name. Graph inputs, outputs and initializers are
 * untouched.
 *
 * A node may be copied when its operator may (default deny), it holds no
 * subgraph and reads no outer-scope value, the runtime runs it, every output
 * is a tensor of known size, and it reads no value another node writes in
 * place as a side effect (an optimizer's parameters, an accumulator's
 * buffer: any input a non-copyable operator aliases). A tensor stays the
 * original for all its readers when a node reads it through a node the
 * runtime skips (a Cast ONNX Runtime removes) or a subgraph reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_model.h"
#include "passes/analysis/olla_node_cost.h"
#include "passes/runtime/olla_graph_shares.h"
#include "passes/runtime/olla_recompute.h"
#include "pipeline/olla_pipeline.h"
#include "solver/olla_remat.h"
#include "util/olla_grow.h"

#define OOM(m) olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning recomputation for %s", (m)->path)

/* The `operator` attribute of an ATen node into buf (NUL-terminated, cut
 * to size), or NULL when the node has none. */
static const char *aten_operator(const Onnx__NodeProto *node, char *buf, size_t size)
{
    for (size_t a = 0; a < node->n_attribute; a++) {
        const Onnx__AttributeProto *at = node->attribute[a];
        if (at->name && strcmp(at->name, "operator") == 0 && at->has_s) {
            size_t len = at->s.len < size - 1 ? at->s.len : size - 1;
            memcpy(buf, at->s.data, len);
            buf[len] = '\0';
            return buf;
        }
    }
    return NULL;
}

static int holds_subgraph(const Onnx__NodeProto *node)
{
    for (size_t a = 0; a < node->n_attribute; a++)
        if (node->attribute[a]->g || node->attribute[a]->n_graphs)
            return 1;
    return 0;
}

/* A BatchNormalization in training mode (training_mode set, or the running
 * statistics among its outputs as before opset 14) updates state: like
 * BatchNormInternal it may write the statistics into its inputs. */
static int batch_norm_training(const olla_op *o, const Onnx__NodeProto *node)
{
    if (!o->op_type || strcmp(o->op_type, "BatchNormalization") != 0)
        return 0;
    if (node->n_output > 1)
        return 1;
    for (size_t a = 0; a < node->n_attribute; a++) {
        const Onnx__AttributeProto *at = node->attribute[a];
        if (at->name && strcmp(at->name, "training_mode") == 0 && at->i != 0)
            return 1;
    }
    return 0;
}

/* The operator may be copied, and this node holds no subgraph, reads no
 * outer-scope value and is no batch normalization in training mode. */
static int op_recomputable(const olla_graph *g, int op)
{
    const olla_op *o = &g->ops[op];
    const Onnx__NodeProto *node = g->model->proto->graph->node[o->proto_index];
    char name[96];
    return olla_op_recomputable(o->domain, o->op_type, aten_operator(node, name, sizeof name)) &&
           !holds_subgraph(node) && o->n_inputs == o->n_explicit_inputs && !batch_norm_training(o, node);
}

typedef olla_remat_posed problem_arrays;

void olla_remat_posed_free(olla_remat_posed *a)
{
    free(a->cost);
    free(a->copyable);
    free(a->keep);
    free(a->omittable);
    free(a->mutated);
    free(a->buffer);
    memset(a, 0, sizeof *a);
}

static int root_of(const olla_graph_dag_map *map, int t)
{
    while (map->view_of[t] >= 0)
        t = map->view_of[t];
    return t;
}

/* The graph tensors non-copyable nodes write in place as a side effect:
 * inputs they declare views of (their outputs alias them). */
static olla_status mark_mutated(const olla_graph *g, const olla_graph_dag_map *map, problem_arrays *a,
                                olla_error *err)
{
    olla_op_share *shares = NULL;
    int n_shares = 0;
    olla_status st = olla_graph_shares(g, &shares, &n_shares, err);
    if (st != OLLA_OK)
        return st;
    for (int i = 0; i < n_shares; i++) {
        const olla_op *o = &g->ops[shares[i].op];
        if (shares[i].inplace || op_recomputable(g, shares[i].op) || shares[i].input >= o->n_explicit_inputs)
            continue;
        int t = g->input_list[o->first_input + shares[i].input];
        if (t >= 0)
            a->mutated[root_of(map, t)] = 1;
    }
    free(shares);
    return OLLA_OK;
}

olla_status olla_remat_pose(const olla_remat_input *in, olla_remat_posed *a, olla_error *err)
{
    const olla_graph *g = in->g;
    const olla_dag *dag = in->dag;
    const olla_graph_dag_map *map = in->map;
    const olla_runtime_view *view = in->view;
    size_t n1 = (size_t)g->n_ops + 1, nt1 = (size_t)dag->n_tensors + 1;
    memset(a, 0, sizeof *a);
    a->cost = malloc(n1 * sizeof(double));
    a->copyable = calloc(n1, 1);
    a->keep = calloc(nt1, 1);
    a->omittable = calloc(nt1, 1);
    a->mutated = calloc((size_t)g->n_tensors + 1, 1);
    a->buffer = malloc(nt1 * sizeof(int));
    if (!a->cost || !a->copyable || !a->keep || !a->omittable || !a->mutated || !a->buffer)
        return OOM(g->model);
    olla_status st = mark_mutated(g, map, a, err);
    if (st != OLLA_OK)
        return st;
    for (int e = 0; e < dag->n_tensors; e++) {
        int buf = map->buffer[map->graph_tensor[e]];
        a->buffer[e] = buf;
    }
    for (int v = 0; v < g->n_ops; v++) {
        const olla_op *o = &g->ops[v];
        a->cost[v] = olla_node_cost(g, v);
        for (int k = 0; k < o->n_outputs; k++) { /* a view is its input's buffer: no work */
            int t = g->output_list[o->first_output + k];
            if (t >= 0 && map->view_of[t] >= 0)
                a->cost[v] = 0;
        }
        int ok = (!view || !view->runs || view->runs[v]) && op_recomputable(g, v);
        for (int k = 0; ok && k < o->n_inputs; k++) {
            int t = g->input_list[o->first_input + k];
            ok = t < 0 || !a->mutated[root_of(map, t)];
        }
        int required = olla_op_required_outputs(o->domain, o->op_type, o->n_outputs);
        for (int k = 0; k < o->n_outputs; k++) {
            int t = g->output_list[o->first_output + k];
            if (t < 0)
                continue;
            if (g->tensors[t].bytes < 0 || g->tensors[t].type.kind != OLLA_VALUE_TENSOR)
                ok = 0;
            if (k >= required)
                a->omittable[map->dag_tensor[t]] = 1;
        }
        a->copyable[v] = (unsigned char)ok;
        a->total_cost += a->cost[v];
        /* what a skipped node or a subgraph reads stays the original */
        for (int k = 0; k < o->n_inputs; k++) {
            int t = g->input_list[o->first_input + k];
            if (t < 0 || g->tensors[t].producer < 0)
                continue;
            int src = view && view->reads_as ? view->reads_as[t] : t;
            if (k >= o->n_explicit_inputs || src != t) {
                if (map->dag_tensor[src] >= 0)
                    a->keep[map->dag_tensor[src]] = 1;
                if (map->dag_tensor[t] >= 0)
                    a->keep[map->dag_tensor[t]] = 1;
            }
        }
    }
    a->problem = (olla_remat_problem){in->dag, in->order, a->cost, a->copyable, a->buffer, a->keep, a->omittable,
                                      in->limit, in->budget, in->deadline};
    return OLLA_OK;
}

/* ---- the plan as a model ---- */

typedef struct names {
    olla_strmap used;   /* every tensor name of the graph, then every fresh one */
    char **made;        /* fresh strings, owned */
    int n_made;
    size_t cap_made;
} names;

static const char *fresh(names *nm, const char *base, int copy)
{
    size_t len = strlen(base) + 32;
    char *s = malloc(len + 64);
    if (!s)
        return NULL;
    int w = snprintf(s, len, "%s.recompute%d", base, copy);
    while (olla_strmap_find(&nm->used, s, NULL) && (size_t)w < len + 60) {
        s[w++] = '_';
        s[w] = '\0';
    }
    char **q = olla_grow(nm->made, &nm->cap_made, (size_t)nm->n_made + 1, sizeof *q);
    if (!q) {
        free(s);
        return NULL;
    }
    nm->made = q;
    nm->made[nm->n_made++] = s;
    if (!olla_strmap_put(&nm->used, s, 0))
        return NULL;
    return s;
}

static void names_free(names *nm)
{
    for (int i = 0; i < nm->n_made; i++)
        free(nm->made[i]);
    free(nm->made);
    olla_strmap_free(&nm->used);
}

/* The rewrite's arrays: one spec per run, the names each spec points to. */
typedef struct rewrite {
    olla_node_spec *spec;
    const char **slots;     /* input and output names of the specs that change them */
    olla_value_alias *alias;
    int n_alias;
    const char **out_name;  /* per run and output position: the name of that version (original or fresh) */
    int *out_first;         /* per run: where its outputs start in out_name */
} rewrite;

static void rewrite_free(rewrite *w)
{
    free(w->spec);
    free(w->slots);
    free(w->alias);
    free(w->out_name);
    free(w->out_first);
}

/* The DAG input slot of node v that reads DAG tensor d, or -1. */
static int dag_slot(const olla_dag *dag, int v, int d)
{
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++)
        if (dag->in_list[j] == d)
            return j - dag->in_start[v];
    return -1;
}

/* One rewrite under way: the plan, the names made, the arrays built, and
 * which versions some run reads. */
typedef struct rewriting {
    const olla_remat_input *in;
    const olla_remat_problem *p;
    const olla_remat_plan *plan;
    names *nm;
    rewrite *w;
    unsigned char *read; /* per run and output position: 1 when some run reads that version */
    long used_slots;     /* of w->slots, by the specs so far */
    olla_error *err;
} rewriting;

/* The rewrite's arrays, sized for the plan's runs, and x->read. */
static olla_status rewrite_alloc(rewriting *x)
{
    const olla_graph *g = x->in->g;
    const olla_remat_plan *plan = x->plan;
    rewrite *w = x->w;
    olla_error *err = x->err;
    int nr = plan->n_runs;
    long n_out = 0, n_slots = 0;
    for (int r = 0; r < nr; r++) {
        const olla_op *o = &g->ops[plan->node[r]];
        n_out += o->n_outputs;
        n_slots += o->n_explicit_inputs + o->n_outputs;
    }
    memset(w, 0, sizeof *w);
    w->spec = calloc((size_t)nr + 1, sizeof *w->spec);
    w->slots = calloc((size_t)n_slots + 1, sizeof *w->slots);
    w->alias = calloc((size_t)n_out + 1, sizeof *w->alias);
    w->out_name = calloc((size_t)n_out + 1, sizeof *w->out_name);
    w->out_first = malloc(((size_t)nr + 1) * sizeof(int));
    x->read = calloc((size_t)n_out + 1, 1);
    if (!w->spec || !w->slots || !w->alias || !w->out_name || !w->out_first || !x->read)
        return OOM(g->model);
    return OLLA_OK;
}

/* Where each run's outputs start in w->out_name, and which versions some
 * run reads: by run and output slot. */
static void mark_read(rewriting *x)
{
    const olla_graph *g = x->in->g;
    const olla_dag *dag = x->in->dag;
    const olla_graph_dag_map *map = x->in->map;
    const olla_remat_plan *plan = x->plan;
    rewrite *w = x->w;
    int nr = plan->n_runs;
    long k = 0;
    for (int r = 0; r < nr; r++) {
        w->out_first[r] = (int)k;
        k += g->ops[plan->node[r]].n_outputs;
    }
    w->out_first[nr] = (int)k;
    for (int r = 0; r < nr; r++) {
        int v = plan->node[r];
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
            int t = map->graph_tensor[dag->in_list[j]];
            const olla_op *po = &g->ops[plan->node[from]];
            for (int s = 0; s < po->n_outputs; s++)
                if (g->output_list[po->first_output + s] == t)
                    x->read[w->out_first[from] + s] = 1;
        }
    }
}

/* Run r's outputs: the original's names, or fresh ones for a copy (none for
 * an omittable output no run reads); a copy's spec gets them and a fresh
 * node name. */
static olla_status spec_outputs(rewriting *x, int r)
{
    const olla_graph *g = x->in->g;
    const olla_graph_dag_map *map = x->in->map;
    const olla_remat_plan *plan = x->plan;
    rewrite *w = x->w;
    olla_error *err = x->err;
    const olla_op *o = &g->ops[plan->node[r]];
    olla_node_spec *sp = &w->spec[r];
    olla_status st = OLLA_OK;
    const char **outs = &w->slots[x->used_slots];
    for (int s = 0; s < o->n_outputs; s++) {
        int t = g->output_list[o->first_output + s];
        const char *name = t >= 0 ? g->tensors[t].name : "";
        if (plan->copy[r] && t >= 0) {
            int d = map->dag_tensor[t];
            if (!x->read[w->out_first[r] + s] && x->p->omittable[d]) {
                name = "";
            } else if (!(name = fresh(x->nm, g->tensors[t].name, plan->copy[r]))) {
                st = OOM(g->model);
                break;
            } else {
                w->alias[w->n_alias++] = (olla_value_alias){name, g->tensors[t].name};
            }
        }
        outs[s] = name;
        w->out_name[w->out_first[r] + s] = name;
    }
    if (plan->copy[r]) {
        sp->outputs = outs;
        x->used_slots += o->n_outputs;
        const Onnx__NodeProto *src = g->model->proto->graph->node[o->proto_index];
        if (src->name && *src->name && !(sp->name = fresh(x->nm, src->name, plan->copy[r])))
            st = OOM(g->model);
    }
    return st;
}

/* Run r's inputs: the version the plan reads; the spec gets them when one
 * is a copy's output, or when the run is a copy. */
static void spec_inputs(rewriting *x, int r)
{
    const olla_graph *g = x->in->g;
    const olla_dag *dag = x->in->dag;
    const olla_graph_dag_map *map = x->in->map;
    const olla_runtime_view *view = x->in->view;
    const olla_remat_plan *plan = x->plan;
    rewrite *w = x->w;
    int v = plan->node[r];
    const olla_op *o = &g->ops[v];
    const char **ins = &w->slots[x->used_slots];
    int changed = 0;
    for (int s = 0; s < o->n_explicit_inputs; s++) {
        int t = g->input_list[o->first_input + s];
        ins[s] = t >= 0 ? g->tensors[t].name : "";
        if (t < 0 || g->tensors[t].producer < 0)
            continue;
        int src = view && view->reads_as ? view->reads_as[t] : t;
        int d = map->dag_tensor[src], j = d >= 0 ? dag_slot(dag, v, d) : -1;
        if (j < 0)
            continue;
        int from = plan->read_run[plan->read_start[r] + j];
        if (!plan->copy[from])
            continue;
        const olla_op *po = &g->ops[plan->node[from]];
        for (int q = 0; q < po->n_outputs; q++)
            if (g->output_list[po->first_output + q] == src)
                ins[s] = w->out_name[w->out_first[from] + q];
        changed = 1;
    }
    if (changed || plan->copy[r]) {
        w->spec[r].inputs = ins;
        x->used_slots += o->n_explicit_inputs;
    }
}

/* The node specs of the plan's runs into w: every run's source node, a
 * copy's fresh outputs and name, and the versions each run reads. */
static olla_status build_rewrite(const olla_remat_input *in, const olla_remat_problem *p, const olla_remat_plan *plan,
                                 names *nm, rewrite *w, olla_error *err)
{
    rewriting x = {in, p, plan, nm, w, NULL, 0, err};
    olla_status st = rewrite_alloc(&x);
    if (st == OLLA_OK)
        mark_read(&x);
    for (int r = 0; st == OLLA_OK && r < plan->n_runs; r++) {
        w->spec[r].source = in->g->ops[plan->node[r]].proto_index;
        st = spec_outputs(&x, r);
        if (st == OLLA_OK)
            spec_inputs(&x, r);
    }
    free(x.read);
    return st;
}

static olla_status rewrite_model(const olla_remat_input *in, const olla_remat_problem *p, const olla_remat_plan *plan,
                                 olla_model **out, olla_error *err)
{
    const olla_graph *g = in->g;
    names nm;
    memset(&nm, 0, sizeof nm);
    if (!olla_strmap_init(&nm.used, (size_t)g->n_tensors * 2 + 16))
        return OOM(g->model);
    olla_status st = OLLA_OK;
    for (int t = 0; t < g->n_tensors && st == OLLA_OK; t++)
        if (!olla_strmap_put(&nm.used, g->tensors[t].name, 0))
            st = OOM(g->model);
    const Onnx__GraphProto *gp = g->model->proto->graph;
    for (size_t i = 0; i < gp->n_node && st == OLLA_OK; i++)
        if (gp->node[i]->name && *gp->node[i]->name && !olla_strmap_put(&nm.used, gp->node[i]->name, 0))
            st = OOM(g->model);
    rewrite w;
    memset(&w, 0, sizeof w);
    if (st == OLLA_OK)
        st = build_rewrite(in, p, plan, &nm, &w, err);
    if (st == OLLA_OK)
        st = olla_model_rebuild(g->model, w.spec, plan->n_runs, w.alias, w.n_alias, out, err);
    rewrite_free(&w);
    names_free(&nm);
    return st;
}

olla_status olla_stage_remat(const olla_remat_input *in, olla_remat_stage_result *out, olla_error *err)
{
    memset(out, 0, sizeof *out);
    olla_remat_posed a;
    olla_status st = olla_remat_pose(in, &a, err);
    if (st != OLLA_OK) {
        olla_remat_posed_free(&a);
        return st;
    }
    const olla_remat_problem *p = &a.problem;
    out->total_cost = a.total_cost;
    olla_remat_plan plan;
    st = olla_remat_solve(p, in->find_smallest, &plan, &out->res, err);
    if (st == OLLA_OK && out->res.outcome == OLLA_REMAT_FITS) {
        st = olla_remat_plan_check(p, &plan, err);
        out->extra_cost = plan.extra_cost;
        out->copies = plan.n_copies;
        out->recomputed_tensors = plan.n_recomputed;
        out->planned_peak = plan.peak;
        if (st == OLLA_OK && plan.n_copies > 0 && !in->plan_only)
            st = rewrite_model(in, p, &plan, &out->model, err);
    }
    olla_remat_plan_free(&plan);
    olla_remat_posed_free(&a);
    return st;
}
