/* olla-onnx: the exact program for recomputation (olla_remat.h), in the
 * spirit of Checkmate and MODeL: the order, the lifetimes and the copies
 * chosen together.
 *
 * Steps t = 0 .. T-1, at most one run each, used from the first on.
 *   C[v][t]  node v runs at step t (its first run is the original, the
 *            others copies); v runs at least once, exactly once when it may
 *            not be copied or makes a graph output or a kept tensor.
 *   P[e][t]  tensor e is present at step t, made at an earlier step and
 *            kept: P[e][t] <= P[e][t-1] + C[producer(e)][t-1]; a graph
 *            output, made once, is present from then on.
 *   reading  C[v][t] <= P[e][t] for every input e of v.
 *   memory   sum_e bytes(e) P[e][t] + sum_v bytes of v's outputs C[v][t] <= limit.
 *   cost     minimise sum_v cost(v) sum_t C[v][t].
 * A step's live tensors in olla_dag.h's sense are among those the program
 * counts (a tensor no later step reads may still be counted), and in-place
 * writes are not counted as sharing, so a solution's plan peaks at or under
 * the program's memory. The plan is decoded by remat_plan_from_runs (each
 * read of the latest version; a view is run again when its buffer was).
 *
 * How many steps: in a cheapest plan every copy's output is read, and a
 * run reads one version of each input, so node v runs at most
 * R(v) = sum over its readers c of R(c) times the outputs of v that c
 * reads (1 for a node run once). T = sum_v R(v) makes the program exact;
 * when that passes n + max_copies, T is cut there and the result is the
 * cheapest plan with at most max_copies copies, not a proof. With
 * in-place candidates the program is a valid upper model, not a proof. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Cbc_C_Interface.h>

#include "solver/olla_cbc_child.h"
#include "solver/olla_ilp_matrix.h"
#include "solver/remat_sim.h"
#include "util/olla_arith.h"

/* Beyond this many columns the program is not attempted. */
#define REMAT_ILP_MAX_COLS 8000
#define REMAT_ILP_MAX_NODES_CBC 20000
/* CBC's best possible objective is a bound when below this (its infinity
 * is larger). */
#define REMAT_ILP_NO_BOUND 1e300

typedef struct prog {
    const olla_remat_problem *p;
    int n, nt, T;
    int *c_first;  /* per node: column of C[v][asap[v]] */
    int *asap;     /* per node: its number of ancestors */
    int *p_first;  /* per tensor: column of P[e][asap(producer)+1] */
    int ncols;
    int64_t scale; /* bytes are divided by it */
} prog;

/* C[v][t] as a column, or -1 before v's level */
static int col_c(const prog *g, int v, int t)
{
    return t < g->asap[v] ? -1 : g->c_first[v] + (t - g->asap[v]);
}

/* P[e][t] as a column, or -1 outside its steps */
static int col_p(const prog *g, int e, int t)
{
    int from = g->asap[g->p->dag->producer[e]] + 1;
    return t < from || t >= g->T ? -1 : g->p_first[e] + (t - from);
}

/* Nodes that run exactly once. */
static int run_once(const olla_remat_problem *p, int v)
{
    return !olla_remat_may_copy(p, v);
}

/* Levels and the steps bound (see the top of the file). *exact is 0 when
 * the cut applied. */
static int steps_and_levels(const olla_remat_problem *p, int max_copies, int *asap, int *exact)
{
    const olla_dag *dag = p->dag;
    int n = dag->n_nodes;
    double *runs = malloc(((size_t)n + 1) * sizeof(double));
    if (!runs)
        return -1;
    for (int t = 0; t < n; t++) {
        int v = p->order[t];
        asap[v] = 0;
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int u = dag->producer[dag->in_list[j]];
            if (asap[u] + 1 > asap[v])
                asap[v] = asap[u] + 1;
        }
    }
    double total = 0;
    for (int t = n - 1; t >= 0; t--) {
        int v = p->order[t];
        double r = 0;
        if (!run_once(p, v))
            for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
                int e = dag->out_list[k];
                for (int s = dag->sink_start[e]; s < dag->sink_start[e + 1]; s++)
                    r += runs[dag->sink_list[s]];
            }
        runs[v] = r > 1 ? r : 1;
        total += runs[v];
    }
    free(runs);
    *exact = total <= (double)(n + max_copies);
    return *exact ? (int)total : n + max_copies;
}

typedef struct ilp_args {
    const prog *g;
    Cbc_Model *m;
} ilp_args;

/* result: [0] found, [1] optimal, then the bound as a double, then T node
 * indices (-1: an idle step) */
static olla_status ilp_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    (void)err;
    const ilp_args *a = ctx;
    const prog *g = a->g;
    if (cbc_limit > 0) {
        Cbc_setParameter(a->m, "timeMode", "cpu");
        Cbc_setMaximumSeconds(a->m, cbc_limit);
    }
    Cbc_solve(a->m);
    int *head = out;
    double *bound = (double *)((char *)out + 2 * sizeof(int));
    int *steps = (int *)((char *)out + 2 * sizeof(int) + sizeof(double));
    const double *x = Cbc_bestSolution(a->m);
    head[0] = x != NULL;
    head[1] = Cbc_isProvenOptimal(a->m);
    double bp = Cbc_getBestPossibleObjValue(a->m);
    *bound = isfinite(bp) && bp < REMAT_ILP_NO_BOUND ? bp : 0;
    for (int t = 0; t < g->T; t++) {
        steps[t] = -1;
        for (int v = 0; x && v < g->n; v++) {
            int c = col_c(g, v, t);
            if (c >= 0 && x[c] > OLLA_ILP_BINARY_ONE)
                steps[t] = v;
        }
    }
    return OLLA_OK;
}

/* The rows of the program into m; column bounds and objective into lb, ub, obj. */
static void build_rows(const prog *g, olla_ilp_matrix *m, double *ub, double *obj)
{
    const olla_remat_problem *p = g->p;
    const olla_dag *dag = p->dag;
    int n = g->n, T = g->T;
    for (int c = 0; c < g->ncols; c++)
        ub[c] = 1.0;
    /* one run a step, steps used from the first on */
    for (int t = 0; t < T; t++) {
        int r = olla_ilp_row(m, -INFINITY, 1.0);
        for (int v = 0; v < n; v++)
            if (col_c(g, v, t) >= 0)
                olla_ilp_add(m, r, col_c(g, v, t), 1.0);
        if (t + 1 < T) {
            int q = olla_ilp_row(m, 0.0, INFINITY);
            for (int v = 0; v < n; v++) {
                if (col_c(g, v, t) >= 0)
                    olla_ilp_add(m, q, col_c(g, v, t), 1.0);
                if (col_c(g, v, t + 1) >= 0)
                    olla_ilp_add(m, q, col_c(g, v, t + 1), -1.0);
            }
        }
    }
    /* every node runs, some exactly once; the cost */
    for (int v = 0; v < n; v++) {
        int once = run_once(p, v);
        int r = olla_ilp_row(m, 1.0, once ? 1.0 : INFINITY);
        for (int t = g->asap[v]; t < T; t++) {
            olla_ilp_add(m, r, col_c(g, v, t), 1.0);
            obj[col_c(g, v, t)] = p->cost[v];
        }
    }
    /* presence */
    for (int e = 0; e < g->nt; e++) {
        int u = dag->producer[e];
        for (int t = g->asap[u] + 1; t < T; t++) {
            int r = dag->is_output[e] ? olla_ilp_row(m, 0.0, 0.0) : olla_ilp_row(m, -INFINITY, 0.0);
            olla_ilp_add(m, r, col_p(g, e, t), 1.0);
            if (col_p(g, e, t - 1) >= 0)
                olla_ilp_add(m, r, col_p(g, e, t - 1), -1.0);
            olla_ilp_add(m, r, col_c(g, u, t - 1), -1.0);
        }
    }
    /* reading */
    for (int v = 0; v < n; v++)
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int e = dag->in_list[j];
            for (int t = g->asap[v]; t < T; t++) {
                int r = olla_ilp_row(m, -INFINITY, 0.0);
                olla_ilp_add(m, r, col_c(g, v, t), 1.0);
                if (col_p(g, e, t) >= 0)
                    olla_ilp_add(m, r, col_p(g, e, t), -1.0);
            }
        }
    /* memory */
    for (int t = 0; t < T; t++) {
        int r = olla_ilp_row(m, -INFINITY, (double)(p->limit / g->scale));
        for (int e = 0; e < g->nt; e++)
            if (dag->bytes[e] > 0 && col_p(g, e, t) >= 0)
                olla_ilp_add(m, r, col_p(g, e, t), (double)(dag->bytes[e] / g->scale));
        for (int v = 0; v < n; v++) {
            int64_t out = 0;
            for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
                out += dag->bytes[dag->out_list[k]];
            if (out > 0 && col_c(g, v, t) >= 0)
                olla_ilp_add(m, r, col_c(g, v, t), (double)(out / g->scale));
        }
    }
}

/* The start: the plan's runs at steps 0.., its versions present from the
 * run after the one that made them to their last reader. */
static int start_values(const prog *g, const olla_remat_plan *plan, int *idx, double *val)
{
    const olla_dag *dag = g->p->dag;
    if (!plan || plan->n_runs > g->T)
        return 0;
    double *x = calloc((size_t)g->ncols + 1, sizeof(double));
    if (!x)
        return 0;
    for (int r = 0; r < plan->n_runs; r++) {
        int v = plan->node[r];
        if (r < g->asap[v]) {
            free(x);
            return 0;
        }
        x[col_c(g, v, r)] = 1.0;
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
            int e = dag->in_list[j], from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])];
            for (int t = from + 1; t <= r; t++)
                if (col_p(g, e, t) >= 0)
                    x[col_p(g, e, t)] = 1.0;
        }
    }
    for (int e = 0; e < g->nt; e++) /* graph outputs: from their run to the end */
        if (dag->is_output[e])
            for (int r = 0; r < plan->n_runs; r++)
                if (plan->node[r] == dag->producer[e] && !plan->copy[r])
                    for (int t = r + 1; t < g->T; t++)
                        x[col_p(g, e, t)] = 1.0;
    for (int c = 0; c < g->ncols; c++) {
        idx[c] = c;
        val[c] = x[c];
    }
    free(x);
    return g->ncols;
}

/* The columns: the steps bound, C[v][t] from v's level on, P[e][t] from
 * the step after its producer's level; the byte scale. Returns 0 when out
 * of memory; g->T <= 0 or g->ncols past REMAT_ILP_MAX_COLS when the
 * program is not attempted. *exact as in steps_and_levels. */
static int prog_build(prog *g, const olla_remat_problem *p, int max_copies, int *exact)
{
    const olla_dag *dag = p->dag;
    memset(g, 0, sizeof *g);
    g->p = p;
    g->n = dag->n_nodes;
    g->nt = dag->n_tensors;
    g->asap = malloc(((size_t)g->n + 1) * sizeof(int));
    g->c_first = malloc(((size_t)g->n + 1) * sizeof(int));
    g->p_first = malloc(((size_t)g->nt + 1) * sizeof(int));
    if (!g->asap || !g->c_first || !g->p_first)
        return 0;
    g->T = steps_and_levels(p, max_copies, g->asap, exact);
    long cols = 0;
    for (int v = 0; v < g->n; v++) {
        g->c_first[v] = (int)cols;
        cols += g->T - g->asap[v] > 0 ? g->T - g->asap[v] : 0;
    }
    for (int e = 0; e < g->nt; e++) {
        g->p_first[e] = (int)cols;
        int from = g->asap[dag->producer[e]] + 1;
        cols += g->T - from > 0 ? g->T - from : 0;
    }
    g->scale = 0;
    for (int e = 0; e < g->nt; e++)
        g->scale = olla_gcd64(g->scale, dag->bytes[e]);
    g->scale = g->scale > 0 ? g->scale : 1;
    g->ncols = cols > REMAT_ILP_MAX_COLS ? REMAT_ILP_MAX_COLS + 1 : (int)cols;
    return 1;
}

/* Frees the column layout. */
static void prog_free(prog *g)
{
    free(g->asap);
    free(g->c_first);
    free(g->p_first);
}

/* The program in CBC: its matrix and arrays, the model, the result buffer
 * (see ilp_child). */
typedef struct cbc_prog {
    olla_ilp_matrix m;
    double *ub, *lb, *obj, *val, *sval;
    int *cstart, *cidx, *sidx;
    char *res;
    size_t len;
    Cbc_Model *model;
} cbc_prog;

/* Frees the model, the matrix and the arrays. */
static void cbc_prog_free(cbc_prog *c)
{
    if (c->model)
        Cbc_deleteModel(c->model);
    olla_ilp_matrix_free(&c->m);
    void *arrays[] = {c->ub, c->lb, c->obj, c->val, c->cstart, c->cidx, c->sidx, c->sval, c->res};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

/* Builds the rows, loads them into a CBC model with its settings and the
 * warm start from start (may be NULL). */
static olla_status cbc_prog_load(cbc_prog *c, const prog *g, const olla_remat_plan *start, olla_error *err)
{
    size_t cols = (size_t)g->ncols;
    c->ub = malloc(cols * sizeof(double));
    c->lb = calloc(cols, sizeof(double));
    c->obj = calloc(cols, sizeof(double));
    c->sidx = malloc(cols * sizeof(int));
    c->sval = malloc(cols * sizeof(double));
    c->len = 2 * sizeof(int) + sizeof(double) + (size_t)g->T * sizeof(int);
    c->res = calloc(c->len, 1);
    if (!c->ub || !c->lb || !c->obj || !c->sidx || !c->sval || !c->res)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the recomputation program");
    build_rows(g, &c->m, c->ub, c->obj);
    if (c->m.oom || !olla_ilp_columns(&c->m, g->ncols, &c->cstart, &c->cidx, &c->val))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the recomputation program");
    if (!(c->model = Cbc_newModel()))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "CBC could not create a model");
    Cbc_Model *model = c->model;
    Cbc_loadProblem(model, g->ncols, c->m.nrows, c->cstart, c->cidx, c->val, c->lb, c->ub, c->obj, c->m.rlo, c->m.rhi);
    for (int col = 0; col < g->ncols; col++)
        Cbc_setInteger(model, col);
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, 0);
    Cbc_setMaximumNodes(model, REMAT_ILP_MAX_NODES_CBC);
    Cbc_setAllowableGap(model, 0.0);
    Cbc_setAllowableFractionGap(model, 0.0);
    int k = start_values(g, start, c->sidx, c->sval);
    if (k > 0)
        Cbc_setMIPStartI(model, k, c->sidx, c->sval);
    return OLLA_OK;
}

/* The plan of the solved program (c->res): its runs in step order, kept
 * when it decodes and meets the limit. */
static olla_status decode(const prog *g, const cbc_prog *c, int exact, olla_remat_plan *plan, olla_remat_ilp_result *r,
                          olla_error *err)
{
    const olla_remat_problem *p = g->p;
    int *steps = (int *)(c->res + 2 * sizeof(int) + sizeof(double));
    int *seq = malloc((size_t)g->T * sizeof(int)), ns = 0;
    if (!seq)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory decoding the recomputation program");
    for (int t = 0; t < g->T; t++)
        if (steps[t] >= 0)
            seq[ns++] = steps[t];
    olla_error derr = {0};
    if (remat_plan_from_runs(p, seq, ns, plan, &derr) == OLLA_OK) {
        if (plan->peak <= p->limit) {
            double base = 0;
            for (int v = 0; v < g->n; v++)
                base += p->cost[v];
            r->found = 1;
            r->optimal = exact && ((int *)c->res)[1] && p->dag->n_inplace == 0;
            double b = *(double *)(c->res + 2 * sizeof(int)) - base;
            r->cost_bound = b > 0 ? b : 0;
        } else {
            olla_remat_plan_free(plan);
        }
    }
    free(seq);
    return OLLA_OK;
}

/* Builds, solves (in a child process with a time limit) and decodes the
 * program (olla_remat.h). */
olla_status olla_remat_ilp(const olla_remat_problem *p, const olla_remat_plan *start, int max_copies, double time_limit,
                           olla_remat_plan *plan, olla_remat_ilp_result *r, olla_error *err)
{
    const olla_dag *dag = p->dag;
    r->found = r->optimal = 0;
    r->cost_bound = 0;
    memset(plan, 0, sizeof *plan);
    if (dag->n_nodes > OLLA_REMAT_ILP_MAX_NODES || dag->n_nodes == 0)
        return OLLA_OK;
    prog g;
    int exact = 0;
    if (!prog_build(&g, p, max_copies, &exact)) {
        prog_free(&g);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the recomputation program");
    }
    if (g.T <= 0 || g.ncols > REMAT_ILP_MAX_COLS) {
        prog_free(&g);
        return OLLA_OK;
    }
    cbc_prog c = {0};
    olla_status st = cbc_prog_load(&c, &g, start, err);
    olla_cbc_outcome outcome = {0};
    ilp_args a = {&g, c.model};
    if (st == OLLA_OK)
        st = olla_cbc_child_run(&(olla_cbc_job){ilp_child, &a, c.res, c.len}, time_limit, &outcome, err);
    if (st == OLLA_OK && outcome.finished && ((int *)c.res)[0])
        st = decode(&g, &c, exact, plan, r, err);
    cbc_prog_free(&c);
    prog_free(&g);
    return st;
}
