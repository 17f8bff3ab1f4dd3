/* olla-onnx: plans with recomputation (olla_remat.h): the DAG of a plan's
 * runs, the check every plan passes, the plan that recomputes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_remat.h"
#include "solver/remat_sim.h"
#include "util/olla_grow.h"

/* The most tensor versions a plan's graph may have (indices stay ints). */
#define REMAT_MAX_VERSIONS (1L << 30)

void olla_remat_plan_free(olla_remat_plan *plan)
{
    if (!plan)
        return;
    free(plan->node);
    free(plan->copy);
    free(plan->read_start);
    free(plan->read_run);
    memset(plan, 0, sizeof *plan);
}

int olla_remat_plan_reserve(olla_remat_plan *plan, size_t *cap_runs, size_t *cap_reads, size_t runs, size_t reads)
{
    if (!plan->node || runs + 1 > *cap_runs) {
        size_t c_node = *cap_runs, c_copy = *cap_runs, c_start = *cap_runs;
        int *node = olla_grow(plan->node, &c_node, runs + 1, sizeof(int));
        if (node)
            plan->node = node;
        int *copy = node ? olla_grow(plan->copy, &c_copy, runs + 1, sizeof(int)) : NULL;
        if (copy)
            plan->copy = copy;
        int *start = copy ? olla_grow(plan->read_start, &c_start, runs + 1, sizeof(int)) : NULL;
        if (!start)
            return 0;
        plan->read_start = start;
        *cap_runs = c_node; /* the three grew alike */
    }
    int *read = olla_grow(plan->read_run, cap_reads, reads, sizeof(int));
    if (!read)
        return 0;
    plan->read_run = read;
    return 1;
}

int olla_remat_may_copy(const olla_remat_problem *p, int v)
{
    const olla_dag *dag = p->dag;
    if (!p->copyable[v])
        return 0;
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
        int e = dag->out_list[k];
        if (dag->is_output[e] || (p->keep && p->keep[e]))
            return 0;
    }
    return 1;
}

/* Position of every tensor among its producer's outputs. */
static int *output_positions(const olla_dag *dag)
{
    int *pos = malloc(((size_t)dag->n_tensors + 1) * sizeof(int));
    if (!pos)
        return NULL;
    for (int v = 0; v < dag->n_nodes; v++)
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
            pos[dag->out_list[k]] = k - dag->out_start[v];
    return pos;
}

olla_status olla_remat_plan_dag(const olla_remat_problem *p, const olla_remat_plan *plan, olla_dag *out,
                                int *version_of, olla_error *err)
{
    const olla_dag *dag = p->dag;
    int nr = plan->n_runs;
    int *first = malloc(((size_t)nr + 1) * sizeof(int)), *opos = output_positions(dag);
    long n_versions = 0;
    for (int r = 0; first && r < nr; r++) {
        first[r] = (int)n_versions;
        n_versions += dag->out_start[plan->node[r] + 1] - dag->out_start[plan->node[r]];
    }
    unsigned char *read = calloc((size_t)n_versions + 1, 1);
    olla_dag_builder *b = olla_dag_builder_new(nr, (int)n_versions);
    if (!first || !opos || !read || !b || n_versions > REMAT_MAX_VERSIONS) {
        free(first);
        free(opos);
        free(read);
        olla_dag_builder_free(b);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the plan with recomputation");
    }
    first[nr] = (int)n_versions;
    for (int r = 0; r < nr; r++) {
        int v = plan->node[r];
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int e = dag->in_list[j], from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
            read[first[from] + opos[e]] = 1;
        }
    }
    for (int r = 0; r < nr; r++) {
        int v = plan->node[r];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            int left_out = plan->copy[r] && p->omittable && p->omittable[e] && !read[first[r] + k - dag->out_start[v]];
            olla_dag_builder_tensor(b, r, left_out ? 0 : dag->bytes[e], !plan->copy[r] && dag->is_output[e]);
        }
    }
    for (int r = 0; r < nr; r++) {
        int v = plan->node[r];
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
            olla_dag_builder_use(b, r, first[from] + opos[dag->in_list[j]]);
        }
        for (int c = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && c < dag->inplace_start[v + 1];
             c++) {
            int in = dag->inplace_in[c], o = dag->inplace_out[c];
            for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
                if (dag->in_list[j] != in)
                    continue;
                int from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
                int vin = first[from] + opos[in], vout = first[r] + opos[o];
                int left_out = plan->copy[r] && p->omittable && p->omittable[o] && !read[vout];
                if (!left_out && !(plan->copy[from] == 0 && dag->is_output[in]))
                    olla_dag_builder_inplace(b, r, vin, vout);
            }
        }
    }
    if (version_of)
        memcpy(version_of, first, ((size_t)nr + 1) * sizeof(int));
    free(first);
    free(opos);
    free(read);
    return olla_dag_build(b, nr, out, err);
}

static olla_status fault(olla_error *err, const char *what, int run, int node)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the plan with recomputation %s (run %d, node %d)",
                          what, run, node);
}

/* The run whose version of the buffer the version of view e written by
 * run `from` shows (through the view it reads, or the buffer itself); -1
 * when it reads neither. */
static int view_base(const olla_remat_problem *p, const olla_remat_plan *plan, int from, int e)
{
    const olla_dag *dag = p->dag;
    int root = p->buffer[e];
    for (int hops = 0; hops < plan->n_runs; hops++) {
        int w = plan->node[from], next = -1, via = -1;
        for (int j = dag->in_start[w]; j < dag->in_start[w + 1]; j++) {
            int x = dag->in_list[j], rr = plan->read_run[plan->read_start[from] + (j - dag->in_start[w])];
            if (x == root)
                return rr;
            if (p->buffer[x] == root && x != e) {
                next = rr;
                via = x;
            }
        }
        if (next < 0)
            return -1;
        from = next;
        e = via;
    }
    return -1;
}

olla_status olla_remat_plan_check(const olla_remat_problem *p, const olla_remat_plan *plan, olla_error *err)
{
    const olla_dag *dag = p->dag;
    int n = dag->n_nodes;
    int *originals = calloc((size_t)n + 1, sizeof(int));
    if (!originals)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking the plan with recomputation");
    olla_status st = OLLA_OK;
    for (int r = 0; st == OLLA_OK && r < plan->n_runs; r++) {
        int v = plan->node[r];
        if (v < 0 || v >= n) {
            st = fault(err, "runs a node that does not exist", r, v);
            break;
        }
        if (plan->copy[r] == 0)
            originals[v]++;
        else if (!olla_remat_may_copy(p, v))
            st = fault(err, "copies a node that may not run twice", r, v);
        if (plan->read_start[r + 1] - plan->read_start[r] != dag->in_start[v + 1] - dag->in_start[v])
            st = fault(err, "reads a wrong number of inputs", r, v);
        for (int j = dag->in_start[v]; st == OLLA_OK && j < dag->in_start[v + 1]; j++) {
            int e = dag->in_list[j], from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
            if (from < 0 || from >= r || plan->node[from] != dag->producer[e])
                st = fault(err, "reads a version no earlier run of its producer wrote", r, v);
            else if (plan->copy[from] && ((p->keep && p->keep[e]) || dag->is_output[e]))
                st = fault(err, "reads a recomputed version of a tensor that must stay the original", r, v);
        }
        /* a view read with its buffer shows the version of the buffer read */
        for (int j = dag->in_start[v]; st == OLLA_OK && j < dag->in_start[v + 1]; j++) {
            int e = dag->in_list[j], root = p->buffer[e];
            if (root < 0 || root == e)
                continue;
            for (int q = dag->in_start[v]; q < dag->in_start[v + 1]; q++)
                if (dag->in_list[q] == root &&
                    view_base(p, plan, plan->read_run[plan->read_start[r] + (j - dag->in_start[v])], e) !=
                        plan->read_run[plan->read_start[r] + (q - dag->in_start[v])])
                    st = fault(err, "reads a view of another version of its buffer than the one it reads", r, v);
        }
    }
    for (int v = 0; st == OLLA_OK && v < n; v++)
        if (originals[v] != 1)
            st = fault(err, originals[v] ? "runs a node twice as itself" : "never runs a node", -1, v);
    free(originals);
    return st;
}

olla_status olla_remat_plan_identity(const olla_remat_problem *p, olla_remat_plan *out, olla_error *err)
{
    const olla_dag *dag = p->dag;
    int n = dag->n_nodes;
    memset(out, 0, sizeof *out);
    int *run_of = malloc(((size_t)n + 1) * sizeof(int));
    out->node = malloc(((size_t)n + 1) * sizeof(int));
    out->copy = calloc((size_t)n + 1, sizeof(int));
    out->read_start = malloc(((size_t)n + 1) * sizeof(int));
    out->read_run = malloc(((size_t)dag->in_start[n] + 1) * sizeof(int));
    if (!run_of || !out->node || !out->copy || !out->read_start || !out->read_run) {
        free(run_of);
        olla_remat_plan_free(out);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the plan with recomputation");
    }
    for (int t = 0; t < n; t++)
        run_of[p->order[t]] = t;
    int k = 0;
    for (int t = 0; t < n; t++) {
        int v = p->order[t];
        out->node[t] = v;
        out->read_start[t] = k;
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++)
            out->read_run[k++] = run_of[dag->producer[dag->in_list[j]]];
    }
    out->read_start[n] = k;
    out->n_runs = n;
    free(run_of);
    olla_dag plan_dag;
    olla_status st = olla_remat_plan_dag(p, out, &plan_dag, NULL, err);
    if (st == OLLA_OK) {
        int *ident = malloc(((size_t)n + 1) * sizeof(int));
        if (!ident) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the plan with recomputation");
        } else {
            for (int t = 0; t < n; t++)
                ident[t] = t;
            st = olla_dag_peak(&plan_dag, ident, &out->peak, NULL, NULL, err);
            free(ident);
        }
        olla_dag_free(&plan_dag);
    }
    if (st != OLLA_OK)
        olla_remat_plan_free(out);
    return st;
}

/* ---- a plan from a sequence of runs ---- */

typedef struct replay {
    const olla_remat_problem *p;
    olla_remat_plan *plan;
    size_t cap, cap_reads;
    int n_reads;
    int *cur;      /* per tensor: the run of its latest version, -1 none */
    int *base;     /* per view tensor: the run of the buffer version its latest version shows */
    int *copies;   /* per node */
} replay;

/* The buffer version a view's latest version shows is stale. */
static int stale(const replay *y, int e)
{
    const int *buf = y->p->buffer;
    return buf[e] >= 0 && buf[e] != e && y->cur[e] >= 0 && y->base[e] != y->cur[buf[e]];
}

static int emit(replay *y, int v, olla_error *err)
{
    const olla_dag *dag = y->p->dag;
    olla_remat_plan *pl = y->plan;
    int nin = dag->in_start[v + 1] - dag->in_start[v];
    if (!olla_remat_plan_reserve(pl, &y->cap, &y->cap_reads, (size_t)pl->n_runs + 1,
                                 (size_t)y->n_reads + (size_t)nin)) {
        olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory decoding a plan with recomputation");
        return 0;
    }
    int r = pl->n_runs++;
    pl->node[r] = v;
    pl->copy[r] = y->copies[v]++;
    pl->read_start[r] = y->n_reads;
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
        int e = dag->in_list[j];
        if (y->cur[e] < 0) {
            olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: a run of node %d reads a tensor no earlier run "
                                                   "wrote", v);
            return 0;
        }
        pl->read_run[y->n_reads++] = y->cur[e];
    }
    pl->read_start[r + 1] = y->n_reads;
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
        int o = dag->out_list[k], b = y->p->buffer[o];
        y->cur[o] = r;
        if (b >= 0 && b != o) { /* the input it views: the buffer itself, or another view of it */
            y->base[o] = y->cur[b];
            for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
                int x = dag->in_list[j];
                if (x != b && y->p->buffer[x] == b)
                    y->base[o] = y->base[x];
            }
        }
    }
    return 1;
}

/* Runs the producers of the stale views v reads (and of the views those
 * read), deepest first, then v. */
static int emit_fresh(replay *y, int v, olla_error *err)
{
    const olla_dag *dag = y->p->dag;
    for (int pass = 0; pass < dag->n_nodes + 1; pass++) {
        int again = -1;
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1] && again < 0; j++)
            if (stale(y, dag->in_list[j]))
                again = dag->in_list[j];
        if (again < 0)
            return emit(y, v, err);
        /* the producer of the stale view, once its own inputs are fresh */
        int w = dag->producer[again];
        for (int depth = 0; depth < dag->n_nodes; depth++) {
            int deeper = -1;
            for (int j = dag->in_start[w]; j < dag->in_start[w + 1] && deeper < 0; j++)
                if (stale(y, dag->in_list[j]))
                    deeper = dag->in_list[j];
            if (deeper < 0)
                break;
            w = dag->producer[deeper];
        }
        if (!emit(y, w, err))
            return 0;
    }
    olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: views could not be made fresh for node %d", v);
    return 0;
}

olla_status remat_plan_from_runs(const olla_remat_problem *p, const int *nodes, int n, olla_remat_plan *plan,
                                 olla_error *err)
{
    const olla_dag *dag = p->dag;
    replay y;
    memset(&y, 0, sizeof y);
    memset(plan, 0, sizeof *plan);
    y.p = p;
    y.plan = plan;
    y.cur = malloc(((size_t)dag->n_tensors + 1) * sizeof(int));
    y.base = malloc(((size_t)dag->n_tensors + 1) * sizeof(int));
    y.copies = calloc((size_t)dag->n_nodes + 1, sizeof(int));
    olla_status st = OLLA_OK;
    if (!y.cur || !y.base || !y.copies) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory decoding a plan with recomputation");
    } else {
        for (int e = 0; e < dag->n_tensors; e++)
            y.cur[e] = y.base[e] = -1;
        for (int i = 0; i < n && st == OLLA_OK; i++)
            if (!emit_fresh(&y, nodes[i], err))
                st = err->code ? err->code : OLLA_ERR_INTERNAL;
        for (int v = 0; v < dag->n_nodes && st == OLLA_OK; v++)
            if (!y.copies[v])
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the runs never run node %d", v);
    }
    if (st == OLLA_OK && !plan->read_start) { /* an empty graph */
        plan->read_start = calloc(1, sizeof(int));
        if (!plan->read_start)
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory decoding a plan with recomputation");
    }
    if (st == OLLA_OK)
        st = remat_plan_measure(p, plan, err);
    free(y.cur);
    free(y.base);
    free(y.copies);
    if (st != OLLA_OK)
        olla_remat_plan_free(plan);
    return st;
}
