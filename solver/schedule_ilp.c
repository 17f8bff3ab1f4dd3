/* olla-onnx: the scheduling ILP (eq. 12 of the OLLA paper) solved with CBC.
 *
 * Binary S[v][t] = 1 when node v has run at or before step t, created only
 * inside v's window [asap, alap) (0 before, 1 from alap on). One node runs
 * per step, so sum_v S[v][t] = t + 1. Edge u -> w: S[w][t] <= S[u][t-1].
 * These ordering rows are built by solver/order_ilp.c, shared with the
 * joint ILP.
 * Tensor e made by p is live at t when S[p][t] = 1 and some reader s has
 * S[s][t-1] = 0 (a graph output: S[p][t]; unread: S[p][t] - S[p][t-1]).
 * With one reader that is exactly S[p][t] - S[s][t-1]; with several a
 * continuous L[e][t] >= S[p][t] - S[s][t-1] stands for it. The peak row of
 * step t bounds the sum of bytes times liveness. C[v][t] of the paper is
 * S[v][t] - S[v][t-1] and its P variables are the liveness terms.
 *
 * In-place writes (olla_dag.h): candidate k of node v saves the bytes of its
 * output at step t when v runs at t and every other reader of its input has
 * run before. A continuous Y[k][t] <= S[v][t] - S[v][t-1] and
 * Y[k][t] <= S[s][t-1] for each other reader s takes that saving off the peak
 * row of t; minimising the peak raises Y to 1 exactly where the write
 * applies, so the model stays exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Cbc_C_Interface.h>

#include "passes/analysis/olla_analysis.h"
#include "solver/olla_cbc_child.h"
#include "solver/olla_order_ilp.h"
#include "solver/olla_schedule.h"
#include "util/olla_arith.h"
#include "util/olla_log.h"

#define MAX_COLS 100000L /* larger models do not get past the root relaxation in minutes */
/* The search's work budget: branch-and-bound nodes (CBC alone is
 * deterministic, so the result depends on the node limit, not on the
 * machine's speed; the time limit stays as a safety net). */
#define MAX_NODES 5000
/* The most coefficients of the matrix: 4096 doubled 13 times, the largest
 * capacity below 4e7 of the doubling the matrix once had, so that the same
 * models are refused. */
#define MAX_NZ (4096L << 13)
/* CBC's best possible objective is a bound when below BOUND_MAX; it is
 * rounded up after taking off BOUND_SLACK of itself (plus one), CBC's
 * tolerance. */
#define BOUND_MAX 1e18
#define BOUND_SLACK 1e-6

typedef struct {
    int v, step;
    int lvl;
} dec_item;

/* qsort order of dec_item: by step, then level, then node */
static int cmp_dec(const void *a, const void *b)
{
    const dec_item *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->lvl != y->lvl)
        return x->lvl < y->lvl ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* ---- the model being built and solved ---- */

/* One solve of the scheduling ILP: what it solves, the windows and columns,
 * the matrix and the CBC model. Arrays hold one entry per node (n) or per
 * tensor (nt). */
typedef struct sched_ilp {
    const olla_dag *dag;
    const int *start;
    int64_t lb_hint;
    double time_limit;
    const olla_logger *log;
    int n, nt;
    int *asap, *alap, *sidx;    /* the S columns (olla_order_vars) */
    int *mlo, *mhi, *plo, *phi; /* tensor windows */
    int *fwd, *bwd;             /* levels: ties of the decoded order */
    int *peakrow;               /* row of step t's peak */
    double *peakconst;          /* the constant live bytes of step t */
    int *step;                  /* the warm start: step of each node */
    dec_item *dec;
    olla_order_vars w;
    int64_t g;  /* bytes are divided by it */
    long ncols; /* 0 = peak, then S, then L and Y */
    olla_ilp_matrix m;
    double *collb, *colub, *obj, *val, *start_val;
    int *cstart, *cidx, *start_idx;
    Cbc_Model *model;
} sched_ilp;

/* the error of a model past MAX_COLS */
static olla_status too_many_cols(const sched_ilp *s, olla_error *err)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL,
                          "the scheduling ILP of %d nodes would need over %ld columns; the best order found so far "
                          "is used",
                          s->n, MAX_COLS);
}

/* the error of an allocation that failed */
static olla_status out_of_memory(olla_error *err)
{
    return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling ILP");
}

/* Allocates the per-node and per-tensor arrays; 0 when out of memory. */
static int sched_alloc(sched_ilp *s)
{
    size_t n = (size_t)s->n, nt = (size_t)s->nt;
    s->m.max_nz = MAX_NZ;
    s->asap = malloc(n * sizeof(int));
    s->alap = malloc(n * sizeof(int));
    s->sidx = malloc((n + 1) * sizeof(int));
    s->mlo = malloc((nt + 1) * sizeof(int));
    s->mhi = malloc((nt + 1) * sizeof(int));
    s->plo = malloc((nt + 1) * sizeof(int));
    s->phi = malloc((nt + 1) * sizeof(int));
    s->peakrow = malloc(n * sizeof(int));
    s->peakconst = calloc(n, sizeof(double));
    s->step = malloc(n * sizeof(int));
    s->dec = malloc(n * sizeof(dec_item));
    s->fwd = malloc(n * sizeof(int));
    s->bwd = malloc(n * sizeof(int));
    s->w = (olla_order_vars){s->asap, s->alap, s->sidx};
    return s->asap && s->alap && s->sidx && s->mlo && s->mhi && s->plo && s->phi && s->peakrow && s->peakconst &&
           s->step && s->dec && s->fwd && s->bwd;
}

/* Frees what the solve holds. */
static void sched_free(sched_ilp *s)
{
    if (s->model)
        Cbc_deleteModel(s->model);
    olla_ilp_matrix_free(&s->m);
    void *arrays[] = {s->asap,    s->alap,      s->sidx, s->mlo,       s->mhi,    s->plo,  s->phi,
                      s->peakrow, s->peakconst, s->step, s->dec,       s->fwd,    s->bwd,  s->collb,
                      s->colub,   s->obj,       s->val,  s->start_val, s->cstart, s->cidx, s->start_idx};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

/* ---- windows and columns ---- */

/* A node's window holds at least the steps between its positions in two
 * orders (the start and a stable topological order): when those alone pass
 * MAX_COLS, the windows are not counted. Uses asap and step as scratch. */
static olla_status start_too_wide(sched_ilp *s, olla_error *err)
{
    int n = s->n;
    if (s->start && olla_dag_stable_topo(s->dag, s->step, err) == OLLA_OK) {
        long at_least = 1;
        for (int t = 0; t < n; t++)
            s->asap[s->start[t]] = t;
        for (int t = 0; t < n; t++)
            at_least += labs((long)s->asap[s->step[t]] - t);
        if (at_least > MAX_COLS)
            return too_many_cols(s, err);
    }
    olla_error_clear(err);
    return OLLA_OK;
}

/* The node and tensor windows, the levels, the byte scale g and the S
 * columns (column 0 is the peak). */
static olla_status sched_windows(sched_ilp *s, olla_error *err)
{
    const olla_dag *dag = s->dag;
    olla_status st = olla_windows_build(dag, s->asap, s->alap, err);
    if (st != OLLA_OK)
        return st;
    olla_tensor_windows(dag, s->asap, s->alap, s->mlo, s->mhi, s->plo, s->phi);
    if ((st = olla_levels(dag, s->fwd, s->bwd, err)) != OLLA_OK)
        return st;
    /* scale bytes by their gcd to keep coefficients small */
    s->g = 0;
    for (int e = 0; e < s->nt; e++)
        if (dag->bytes[e] > 0)
            s->g = olla_gcd64(dag->bytes[e], s->g);
    if (s->g == 0)
        s->g = 1;
    s->ncols = 1;
    for (int v = 0; v < s->n; v++) {
        s->sidx[v] = (int)s->ncols;
        s->ncols += s->alap[v] - s->asap[v];
        if (s->ncols > MAX_COLS)
            return too_many_cols(s, err);
    }
    return OLLA_OK;
}

/* order[] by step, ties broken by level then node (dec holds the steps). */
static void order_by_step(sched_ilp *s, int *order)
{
    for (int v = 0; v < s->n; v++) {
        s->dec[v].v = v;
        s->dec[v].lvl = s->fwd[v];
    }
    qsort(s->dec, (size_t)s->n, sizeof *s->dec, cmp_dec);
    for (int i = 0; i < s->n; i++)
        order[i] = s->dec[i].v;
}

/* Every window is one step: the order is forced, and its peak is the bound. */
static olla_status forced_order(sched_ilp *s, int *order, olla_ilp_info *info, olla_error *err)
{
    for (int v = 0; v < s->n; v++)
        s->dec[v].step = s->asap[v];
    order_by_step(s, order);
    info->found = olla_dag_is_topological(s->dag, order);
    info->optimal = info->found;
    info->bound = 0;
    olla_status st = OLLA_OK;
    if (info->found && (st = olla_dag_peak(s->dag, order, &info->bound, NULL, NULL, err)) != OLLA_OK)
        info->found = info->optimal = 0;
    return st;
}

/* ---- the peak rows ---- */

/* The liveness of tensor e with several readers at step t into the peak row
 * r (see the opening comment): a term in S, or an L column with a row per
 * reader. Returns 0 when the model would pass MAX_COLS. */
static int multi_reader_term(sched_ilp *s, int e, int t, double b)
{
    const olla_dag *dag = s->dag;
    olla_ilp_matrix *m = &s->m;
    int p = dag->producer[e], r = s->peakrow[t];
    if (olla_order_col(&s->w, p, t) == OLLA_S_ZERO)
        return 1;
    int any_zero = 0, n_var = 0;
    for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
        int cs = olla_order_col(&s->w, dag->sink_list[k], t - 1);
        if (cs == OLLA_S_ZERO)
            any_zero = 1;
        else if (cs >= 0)
            n_var++;
    }
    if (any_zero) { /* live exactly when p has run */
        olla_order_add(m, &s->w, r, p, t, b, &s->peakconst[t]);
        return 1;
    }
    if (n_var == 0) /* every reader ran before t */
        return 1;
    if (s->ncols + 1 > MAX_COLS)
        return 0;
    int lc = (int)s->ncols++;
    olla_ilp_add(m, r, lc, b);
    for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
        int sk = dag->sink_list[k];
        if (olla_order_col(&s->w, sk, t - 1) == OLLA_S_ONE)
            continue;
        int rr = olla_ilp_row(m, 0, INFINITY); /* L - S[p][t] + S[s][t-1] >= 0 */
        double kk = 0;
        olla_ilp_add(m, rr, lc, 1.0);
        olla_order_add(m, &s->w, rr, p, t, -1.0, &kk);
        olla_order_add(m, &s->w, rr, sk, t - 1, 1.0, &kk);
        if (rr >= 0)
            m->rlo[rr] = -kk;
    }
    return 1;
}

/* The liveness terms of every tensor in the peak rows. Returns 0 when the
 * model would pass MAX_COLS. */
static int liveness_terms(sched_ilp *s)
{
    const olla_dag *dag = s->dag;
    for (int e = 0; e < s->nt; e++) {
        double b = (double)(dag->bytes[e] / s->g);
        if (dag->bytes[e] == 0)
            continue;
        int p = dag->producer[e];
        int ns = dag->sink_start[e + 1] - dag->sink_start[e];
        for (int t = s->mlo[e]; t <= s->mhi[e]; t++) {
            int r = s->peakrow[t];
            double *kc = &s->peakconst[t];
            if (t >= s->plo[e] && t <= s->phi[e]) {
                *kc += b;
            } else if (dag->is_output[e]) {
                olla_order_add(&s->m, &s->w, r, p, t, b, kc);
            } else if (ns == 0) {
                olla_order_add(&s->m, &s->w, r, p, t, b, kc);
                olla_order_add(&s->m, &s->w, r, p, t - 1, -b, kc);
            } else if (ns == 1) {
                olla_order_add(&s->m, &s->w, r, p, t, b, kc);
                olla_order_add(&s->m, &s->w, r, dag->sink_list[dag->sink_start[e]], t - 1, -b, kc);
            } else if (!multi_reader_term(s, e, t, b)) {
                return 0;
            }
        }
    }
    return 1;
}

/* The rows of in-place candidate k of node v at step t: Y <= S[v][t] -
 * S[v][t-1] and Y <= S[s][t-1] for each other reader s of its input. */
static void inplace_rows(sched_ilp *s, int v, int k, int t, int y)
{
    const olla_dag *dag = s->dag;
    olla_ilp_matrix *m = &s->m;
    int e = dag->inplace_in[k];
    double kk = 0;
    int r = olla_ilp_row(m, -INFINITY, 0); /* Y - S[v][t] + S[v][t-1] <= 0 */
    olla_ilp_add(m, r, y, 1.0);
    olla_order_add(m, &s->w, r, v, t, -1.0, &kk);
    olla_order_add(m, &s->w, r, v, t - 1, 1.0, &kk);
    if (r >= 0)
        m->rhi[r] = -kk;
    for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
        int sk = dag->sink_list[q];
        if (sk == v || olla_order_col(&s->w, sk, t - 1) == OLLA_S_ONE)
            continue;
        r = olla_ilp_row(m, -INFINITY, 0); /* Y - S[s][t-1] <= 0 */
        olla_ilp_add(m, r, y, 1.0);
        olla_ilp_add(m, r, olla_order_col(&s->w, sk, t - 1), -1.0);
    }
}

/* The in-place savings of every candidate into the peak rows (see the
 * opening comment). Returns 0 when the model would pass MAX_COLS. */
static int inplace_terms(sched_ilp *s)
{
    const olla_dag *dag = s->dag;
    for (int v = 0; dag->n_inplace > 0 && v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++) {
            int e = dag->inplace_in[k];
            double b = (double)(dag->bytes[dag->inplace_out[k]] / s->g);
            for (int t = s->asap[v]; t <= s->alap[v]; t++) {
                int possible = 1;
                for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && possible; q++)
                    possible = dag->sink_list[q] == v || olla_order_col(&s->w, dag->sink_list[q], t - 1) != -1;
                if (!possible)
                    continue;
                if (s->ncols + 1 > MAX_COLS)
                    return 0;
                int y = (int)s->ncols++;
                olla_ilp_add(&s->m, s->peakrow[t], y, -b);
                inplace_rows(s, v, k, t, y);
            }
        }
    return 1;
}

/* The whole matrix: the peak rows (row t), the ordering rows of eq. 12,
 * the liveness and in-place terms, then the peak rows' constants. */
static olla_status sched_rows(sched_ilp *s, olla_error *err)
{
    for (int t = 0; t < s->n; t++) {
        s->peakrow[t] = olla_ilp_row(&s->m, -INFINITY, 0.0);
        olla_ilp_add(&s->m, s->peakrow[t], 0, -1.0);
    }
    if (!olla_order_rows(&s->m, &s->w, s->dag))
        return out_of_memory(err);
    if (!liveness_terms(s) || !inplace_terms(s))
        return too_many_cols(s, err);
    for (int t = 0; t < s->n; t++)
        if (s->peakrow[t] >= 0)
            s->m.rhi[s->peakrow[t]] = -s->peakconst[t];
    if (s->m.oom)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "the scheduling ILP is too large to build (%ld columns)",
                              s->ncols);
    return OLLA_OK;
}

/* ---- CBC ---- */

/* The warm start: S[v][t] = 1 from the start's step of v on. */
static void mip_start(sched_ilp *s)
{
    const int *start = s->start;
    if (!start || !olla_dag_is_topological(s->dag, start))
        return;
    for (int t = 0; t < s->n; t++)
        s->step[start[t]] = t;
    int k = 0;
    for (int v = 0; v < s->n; v++)
        for (int t = s->asap[v]; t < s->alap[v]; t++) {
            s->start_idx[k] = olla_order_col(&s->w, v, t);
            s->start_val[k] = s->step[v] <= t ? 1.0 : 0.0;
            k++;
        }
    Cbc_setMIPStartI(s->model, k, s->start_idx, s->start_val);
}

/* Loads the matrix into a CBC model with the column bounds (S binary, the
 * peak from lb_hint), the objective, the limits and the warm start. */
static olla_status sched_load(sched_ilp *s, olla_ilp_info *info, olla_error *err)
{
    int nc = (int)s->ncols;
    s->collb = calloc((size_t)nc, sizeof(double));
    s->colub = malloc((size_t)nc * sizeof(double));
    s->obj = calloc((size_t)nc, sizeof(double));
    s->start_idx = malloc((size_t)nc * sizeof(int));
    s->start_val = malloc((size_t)nc * sizeof(double));
    if (!olla_ilp_columns(&s->m, nc, &s->cstart, &s->cidx, &s->val) || !s->collb || !s->colub || !s->obj ||
        !s->start_idx || !s->start_val)
        return out_of_memory(err);
    for (int c = 0; c < nc; c++)
        s->colub[c] = 1.0;
    s->colub[0] = INFINITY;
    s->collb[0] = (double)(s->lb_hint / s->g);
    s->obj[0] = 1.0;
    if (!(s->model = Cbc_newModel()))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "CBC could not create a model");
    Cbc_Model *model = s->model;
    Cbc_loadProblem(model, nc, s->m.nrows, s->cstart, s->cidx, s->val, s->collb, s->colub, s->obj, s->m.rlo, s->m.rhi);
    for (int v = 0; v < s->n; v++)
        for (int t = s->asap[v]; t < s->alap[v]; t++)
            Cbc_setInteger(model, olla_order_col(&s->w, v, t));
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, olla_log_wants(s->log, OLLA_LOG_SOLVER_OUTPUT) ? 1 : 0);
    if (s->time_limit > 0) {
        Cbc_setParameter(model, "timeMode", "cpu");
        Cbc_setMaximumSeconds(model, s->time_limit);
    }
    Cbc_setMaximumNodes(model, MAX_NODES);
    info->n_cols = nc;
    info->n_rows = s->m.nrows;
    mip_start(s);
    return OLLA_OK;
}

/* Solves, reads the proven bound, and decodes the order: each node runs at
 * the first step where S is 1 (function 1 of the paper), ties broken by
 * level. */
static void sched_solve(sched_ilp *s, int *order, olla_ilp_info *info)
{
    Cbc_Model *model = s->model;
    olla_log(s->log, OLLA_LOG_DETAIL, "olla: scheduling ILP: %d columns, %d rows, %ld nonzeros", (int)s->ncols,
             s->m.nrows, s->m.n);
    Cbc_solve(model);
    const double *sol = Cbc_bestSolution(model);
    double bp = Cbc_getBestPossibleObjValue(model);
    if (isfinite(bp) && bp > 0 && bp < BOUND_MAX && !Cbc_isProvenInfeasible(model)) {
        double lb = ceil(bp - BOUND_SLACK * (fabs(bp) + 1.0));
        if (lb > 0)
            info->bound = (int64_t)lb * s->g;
    }
    info->optimal = Cbc_isProvenOptimal(model);
    if (!sol)
        return;
    for (int v = 0; v < s->n; v++) {
        int at = s->alap[v];
        for (int t = s->asap[v]; t < s->alap[v]; t++)
            if (sol[olla_order_col(&s->w, v, t)] > OLLA_ILP_BINARY_ONE) {
                at = t;
                break;
            }
        s->dec[v].step = at;
    }
    order_by_step(s, order);
    info->found = olla_dag_is_topological(s->dag, order);
}

/* One solve in this process: cbc_limit is CBC's own time limit (<= 0: none). */
static olla_status ilp_solve(const olla_sched_ilp_problem *pb, double cbc_limit, const olla_logger *log, int *order,
                             olla_ilp_info *info, olla_error *err)
{
    memset(info, 0, sizeof *info);
    if (pb->dag->n_nodes == 0)
        return OLLA_OK;
    sched_ilp s = {.dag = pb->dag, .start = pb->start, .lb_hint = pb->lb_hint, .time_limit = cbc_limit, .log = log};
    s.n = s.dag->n_nodes;
    s.nt = s.dag->n_tensors;
    olla_status st = sched_alloc(&s) ? OLLA_OK : out_of_memory(err);
    if (st == OLLA_OK)
        st = start_too_wide(&s, err);
    if (st == OLLA_OK)
        st = sched_windows(&s, err);
    if (st == OLLA_OK && s.ncols == 1) { /* every window is one step */
        st = forced_order(&s, order, info, err);
    } else if (st == OLLA_OK) {
        st = sched_rows(&s, err);
        if (st == OLLA_OK)
            st = sched_load(&s, info, err);
        if (st == OLLA_OK)
            sched_solve(&s, order, info);
    }
    sched_free(&s);
    return st;
}

/* ---- in a child process ---- */

typedef struct {
    const olla_sched_ilp_problem *pb;
    const olla_logger *log;
} ilp_args;

/* result layout: olla_ilp_info, then the order */
static olla_status ilp_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    const ilp_args *a = ctx;
    olla_ilp_info *info = out;
    int *order = (int *)((char *)out + sizeof(olla_ilp_info));
    return ilp_solve(a->pb, cbc_limit, a->log, order, info, err);
}

/* With a time limit CBC runs in a child process killed at the deadline
 * (solver/olla_cbc_child.h). */
olla_status olla_sched_ilp(const olla_sched_ilp_problem *pb, const olla_sched_ilp_settings *set, int *order,
                           olla_ilp_info *info, olla_error *err)
{
    memset(info, 0, sizeof *info);
    const olla_logger *log = set->log;
    if (set->time_limit <= 0)
        return ilp_solve(pb, 0, log, order, info, err);
    int n = pb->dag->n_nodes;
    size_t len = sizeof(olla_ilp_info) + (size_t)n * sizeof(int);
    char *buf = calloc(len, 1);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory starting the ILP solver");
    ilp_args a = {pb, log};
    olla_cbc_outcome out = {0};
    olla_status st = olla_cbc_child_run(&(olla_cbc_job){ilp_child, &a, buf, len}, set->time_limit, &out, err);
    if (st != OLLA_OK || !out.finished) {
        free(buf);
        if (st == OLLA_OK && out.crash_signal)
            olla_log(log, OLLA_LOG_DETAIL, "olla: CBC crashed (signal %d); the scheduling ILP is skipped",
                     out.crash_signal);
        else if (st == OLLA_OK)
            olla_log(log, OLLA_LOG_DETAIL, "olla: ILP stopped at the time limit without a result");
        return st;
    }
    memcpy(info, buf, sizeof *info);
    if (info->found) {
        memcpy(order, buf + sizeof(olla_ilp_info), (size_t)n * sizeof(int));
        info->found = olla_dag_is_topological(pb->dag, order);
    }
    free(buf);
    return OLLA_OK;
}
