/* olla-onnx: the scheduling ILP (eq. 12 of the OLLA paper) solved with CBC.
 *
 * Binary S[v][t] = 1 when node v has run at or before step t, created only
 * inside v's window [asap, alap) (0 before, 1 from alap on). One node runs
 * per step, so sum_v S[v][t] = t + 1. Edge u -> w: S[w][t] <= S[u][t-1].
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
#include "solver/olla_ilp_matrix.h"
#include "solver/olla_schedule.h"
#include "util/olla_log.h"
#include "util/olla_arith.h"

#define MAX_COLS 100000L /* larger models do not get past the root relaxation in minutes */
/* The search's work budget: branch-and-bound nodes (CBC alone is
 * deterministic, so the result depends on the node limit, not on the
 * machine's speed; the time limit stays as a safety net). */
#define MAX_NODES 5000
#define MAX_NZ 40000000L


typedef struct {
    const int *asap, *alap, *sidx;
} win;

/* S[v][t] as a column index, or -1 for constant 0, -2 for constant 1 */
static int S(const win *w, int v, int t)
{
    if (t < w->asap[v])
        return -1;
    if (t >= w->alap[v])
        return -2;
    return w->sidx[v] + (t - w->asap[v]);
}

/* adds coef * S[v][t] to row r, or its constant value to *konst */
static void add_s(olla_ilp_matrix *m, const win *w, int r, int v, int t, double coef, double *konst)
{
    int c = S(w, v, t);
    if (c == -2)
        *konst += coef;
    else if (c >= 0)
        olla_ilp_add(m, r, c, coef);
}

/* v[0..n) sorted by key[v] ascending (counting sort: keys are steps in
 * [0, n)); 0 when out of memory */
static int sort_by_step(int *v, int n, const int *key)
{
    int *count = calloc((size_t)n + 1, sizeof(int)), *tmp = malloc((size_t)n * sizeof(int));
    if (!count || !tmp) {
        free(count);
        free(tmp);
        return 0;
    }
    for (int i = 0; i < n; i++)
        count[key[v[i]] + 1]++;
    for (int k = 1; k <= n; k++)
        count[k] += count[k - 1];
    for (int i = 0; i < n; i++)
        tmp[count[key[v[i]]]++] = v[i];
    memcpy(v, tmp, (size_t)n * sizeof(int));
    free(count);
    free(tmp);
    return 1;
}

typedef struct {
    int v, step;
    int lvl;
} dec_item;

static int cmp_dec(const void *a, const void *b)
{
    const dec_item *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->lvl != y->lvl)
        return x->lvl < y->lvl ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* The in-place savings of every candidate into the peak rows (see the
 * opening comment). Returns 0 when the model would pass MAX_COLS. */
static int add_inplace_terms(olla_ilp_matrix *m, const win *w, const olla_dag *dag, const int *peakrow, int64_t g,
                             long *ncols)
{
    for (int v = 0; dag->n_inplace > 0 && v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++) {
            int e = dag->inplace_in[k];
            double b = (double)(dag->bytes[dag->inplace_out[k]] / g);
            for (int t = w->asap[v]; t <= w->alap[v]; t++) {
                int possible = 1;
                for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && possible; q++)
                    possible = dag->sink_list[q] == v || S(w, dag->sink_list[q], t - 1) != -1;
                if (!possible)
                    continue;
                if (*ncols + 1 > MAX_COLS)
                    return 0;
                int y = (int)(*ncols)++;
                olla_ilp_add(m, peakrow[t], y, -b);
                double kk = 0;
                int r = olla_ilp_row(m, -INFINITY, 0); /* Y - S[v][t] + S[v][t-1] <= 0 */
                olla_ilp_add(m, r, y, 1.0);
                add_s(m, w, r, v, t, -1.0, &kk);
                add_s(m, w, r, v, t - 1, 1.0, &kk);
                if (r >= 0)
                    m->rhi[r] = -kk;
                for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
                    int sk = dag->sink_list[q];
                    if (sk == v || S(w, sk, t - 1) == -2)
                        continue;
                    r = olla_ilp_row(m, -INFINITY, 0); /* Y - S[s][t-1] <= 0 */
                    olla_ilp_add(m, r, y, 1.0);
                    olla_ilp_add(m, r, S(w, sk, t - 1), -1.0);
                }
            }
        }
    return 1;
}

static olla_status ilp_solve(const olla_dag *dag, const int *start, int64_t lb_hint, double time_limit,
                             const olla_logger *log, int *order, olla_ilp_info *info, olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    memset(info, 0, sizeof *info);
    if (n == 0)
        return OLLA_OK;
    olla_status st = OLLA_OK;
    int *asap = malloc((size_t)n * sizeof(int)), *alap = malloc((size_t)n * sizeof(int));
    int *sidx = malloc(((size_t)n + 1) * sizeof(int));
    int *mlo = malloc(((size_t)nt + 1) * sizeof(int)), *mhi = malloc(((size_t)nt + 1) * sizeof(int));
    int *plo = malloc(((size_t)nt + 1) * sizeof(int)), *phi = malloc(((size_t)nt + 1) * sizeof(int));
    int *peakrow = malloc((size_t)n * sizeof(int));
    double *peakconst = calloc((size_t)n, sizeof(double));
    int *step = malloc((size_t)n * sizeof(int));
    dec_item *dec = malloc((size_t)n * sizeof(dec_item));
    int *fwd = malloc((size_t)n * sizeof(int)), *bwd = malloc((size_t)n * sizeof(int));
    olla_ilp_matrix m = {0};
    m.max_nz = MAX_NZ;
    double *collb = NULL, *colub = NULL, *obj = NULL, *val = NULL, *start_val = NULL;
    int *cstart = NULL, *cidx = NULL, *start_idx = NULL;
    Cbc_Model *model = NULL;
    if (!asap || !alap || !sidx || !mlo || !mhi || !plo || !phi || !peakrow || !peakconst || !step || !dec || !fwd ||
        !bwd) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling ILP");
        goto done;
    }
    /* a node's window holds at least the steps between its positions in two
     * orders: when those alone pass the limit, the windows are not counted */
    if (start && olla_dag_stable_topo(dag, step, err) == OLLA_OK) {
        long at_least = 1;
        for (int t = 0; t < n; t++)
            asap[start[t]] = t;
        for (int t = 0; t < n; t++)
            at_least += labs((long)asap[step[t]] - t);
        if (at_least > MAX_COLS) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL,
                                "the scheduling ILP of %d nodes would need over %ld columns; the best order found so "
                                "far is used",
                                n, MAX_COLS);
            goto done;
        }
    }
    olla_error_clear(err);
    if ((st = olla_windows_build(dag, asap, alap, err)) != OLLA_OK)
        goto done;
    olla_tensor_windows(dag, asap, alap, mlo, mhi, plo, phi);
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    /* scale bytes by their gcd to keep coefficients small */
    int64_t g = 0;
    for (int e = 0; e < nt; e++)
        if (dag->bytes[e] > 0)
            g = olla_gcd64(dag->bytes[e], g);
    if (g == 0)
        g = 1;
    /* columns: 0 = peak, then S, then L */
    long ncols = 1;
    for (int v = 0; v < n; v++) {
        sidx[v] = (int)ncols;
        ncols += alap[v] - asap[v];
        if (ncols > MAX_COLS)
            break;
    }
    if (ncols > MAX_COLS) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL,
                            "the scheduling ILP of %d nodes would need over %ld columns; the best order found so "
                            "far is used",
                            n, MAX_COLS);
        goto done;
    }
    win w = {asap, alap, sidx};
    if (ncols == 1) { /* every window is one step: the order is forced */
        for (int v = 0; v < n; v++) {
            dec[v].v = v;
            dec[v].step = asap[v];
            dec[v].lvl = fwd[v];
        }
        qsort(dec, (size_t)n, sizeof *dec, cmp_dec);
        for (int i = 0; i < n; i++)
            order[i] = dec[i].v;
        info->found = olla_dag_is_topological(dag, order);
        info->optimal = info->found;
        info->bound = 0;
        if (info->found && (st = olla_dag_peak(dag, order, &info->bound, NULL, NULL, err)) != OLLA_OK)
            info->found = info->optimal = 0;
        goto done;
    }
    /* peak rows first: row t */
    for (int t = 0; t < n; t++) {
        peakrow[t] = olla_ilp_row(&m, -INFINITY, 0.0);
        olla_ilp_add(&m, peakrow[t], 0, -1.0);
    }
    /* one node per step: sum_v S[v][t] = t + 1, where S is 1 for the nodes
     * whose window ended by t and a column for those whose window holds t
     * (by_start: the nodes by asap) */
    {
        int *by_start = malloc((size_t)n * sizeof(int)), *done_by = calloc((size_t)n + 1, sizeof(int));
        int *open = malloc((size_t)n * sizeof(int)), nopen = 0;
        for (int v = 0; by_start && v < n; v++)
            by_start[v] = v;
        if (!by_start || !done_by || !open || !sort_by_step(by_start, n, asap)) {
            free(by_start);
            free(done_by);
            free(open);
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling ILP");
            goto done;
        }
        for (int v = 0; v < n; v++)
            done_by[alap[v]]++;
        for (int t = 1; t < n; t++)
            done_by[t] += done_by[t - 1]; /* nodes with alap <= t */
        int first_open = 0; /* by_start[0 .. first_open) have asap <= t */
        for (int t = 0; t < n; t++) {
            while (first_open < n && asap[by_start[first_open]] <= t)
                open[nopen++] = by_start[first_open++];
            int r = olla_ilp_row(&m, 0, 0);
            int keep = 0;
            for (int i = 0; i < nopen; i++) { /* the windows holding t as columns; drop the ended ones */
                int v = open[i];
                if (t < alap[v]) {
                    olla_ilp_add(&m, r, S(&w, v, t), 1.0);
                    open[keep++] = v;
                }
            }
            nopen = keep;
            m.rlo[r] = m.rhi[r] = (double)(t + 1) - (double)done_by[t];
        }
        free(open);
        free(by_start);
        free(done_by);
    }
    /* monotone */
    for (int v = 0; v < n; v++)
        for (int t = asap[v]; t + 1 < alap[v]; t++) {
            int r = olla_ilp_row(&m, -INFINITY, 0);
            olla_ilp_add(&m, r, S(&w, v, t), 1.0);
            olla_ilp_add(&m, r, S(&w, v, t + 1), -1.0);
        }
    /* precedence over direct edges (dedup with a stamp per consumer) */
    {
        int *stamp = malloc((size_t)n * sizeof(int));
        if (!stamp) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling ILP");
            goto done;
        }
        for (int v = 0; v < n; v++)
            stamp[v] = -1;
        for (int wv = 0; wv < n; wv++)
            for (int k = dag->in_start[wv]; k < dag->in_start[wv + 1]; k++) {
                int u = dag->producer[dag->in_list[k]];
                if (stamp[u] == wv)
                    continue;
                stamp[u] = wv;
                int lo = asap[wv] > asap[u] + 1 ? asap[wv] : asap[u] + 1;
                int hi = alap[wv] - 1 < alap[u] ? alap[wv] - 1 : alap[u];
                for (int t = lo; t <= hi; t++) {
                    int r = olla_ilp_row(&m, -INFINITY, 0);
                    olla_ilp_add(&m, r, S(&w, wv, t), 1.0);
                    olla_ilp_add(&m, r, S(&w, u, t - 1), -1.0);
                }
            }
        free(stamp);
    }
    /* liveness terms in the peak rows */
    for (int e = 0; e < nt; e++) {
        double b = (double)(dag->bytes[e] / g);
        if (dag->bytes[e] == 0)
            continue;
        int p = dag->producer[e];
        int ns = dag->sink_start[e + 1] - dag->sink_start[e];
        for (int t = mlo[e]; t <= mhi[e]; t++) {
            int r = peakrow[t];
            if (t >= plo[e] && t <= phi[e]) {
                peakconst[t] += b;
                continue;
            }
            if (dag->is_output[e]) {
                add_s(&m, &w, r, p, t, b, &peakconst[t]);
            } else if (ns == 0) {
                add_s(&m, &w, r, p, t, b, &peakconst[t]);
                add_s(&m, &w, r, p, t - 1, -b, &peakconst[t]);
            } else if (ns == 1) {
                add_s(&m, &w, r, p, t, b, &peakconst[t]);
                add_s(&m, &w, r, dag->sink_list[dag->sink_start[e]], t - 1, -b, &peakconst[t]);
            } else {
                int cp = S(&w, p, t);
                if (cp == -1)
                    continue;
                int any_zero = 0, n_var = 0;
                for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
                    int cs = S(&w, dag->sink_list[k], t - 1);
                    if (cs == -1)
                        any_zero = 1;
                    else if (cs >= 0)
                        n_var++;
                }
                if (any_zero) { /* live exactly when p has run */
                    add_s(&m, &w, r, p, t, b, &peakconst[t]);
                    continue;
                }
                if (n_var == 0) /* every reader ran before t */
                    continue;
                if (ncols + 1 > MAX_COLS) {
                    st = olla_error_set(err, OLLA_ERR_INTERNAL,
                                        "the scheduling ILP of %d nodes would need over %ld columns; the best order "
                                        "found so far is used",
                                        n, MAX_COLS);
                    goto done;
                }
                int lc = (int)ncols++;
                olla_ilp_add(&m, r, lc, b);
                for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
                    int s = dag->sink_list[k];
                    if (S(&w, s, t - 1) == -2)
                        continue;
                    int rr = olla_ilp_row(&m, 0, INFINITY); /* L - S[p][t] + S[s][t-1] >= 0 */
                    double kk = 0;
                    olla_ilp_add(&m, rr, lc, 1.0);
                    add_s(&m, &w, rr, p, t, -1.0, &kk);
                    add_s(&m, &w, rr, s, t - 1, 1.0, &kk);
                    if (rr >= 0)
                        m.rlo[rr] = -kk;
                }
            }
        }
    }
    if (!add_inplace_terms(&m, &w, dag, peakrow, g, &ncols)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL,
                            "the scheduling ILP of %d nodes would need over %ld columns; the best order found so far "
                            "is used",
                            n, MAX_COLS);
        goto done;
    }
    for (int t = 0; t < n; t++)
        if (peakrow[t] >= 0)
            m.rhi[peakrow[t]] = -peakconst[t];
    if (m.oom) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "the scheduling ILP is too large to build (%ld columns)", ncols);
        goto done;
    }
    /* column-major arrays for Cbc_loadProblem */
    int nc = (int)ncols;
    collb = calloc((size_t)nc, sizeof(double));
    colub = malloc((size_t)nc * sizeof(double));
    obj = calloc((size_t)nc, sizeof(double));
    start_idx = malloc((size_t)nc * sizeof(int));
    start_val = malloc((size_t)nc * sizeof(double));
    if (!olla_ilp_columns(&m, nc, &cstart, &cidx, &val) || !collb || !colub || !obj || !start_idx || !start_val) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling ILP");
        goto done;
    }
    for (int c = 0; c < nc; c++)
        colub[c] = 1.0;
    colub[0] = INFINITY;
    collb[0] = (double)(lb_hint / g);
    obj[0] = 1.0;
    model = Cbc_newModel();
    if (!model) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "CBC could not create a model");
        goto done;
    }
    Cbc_loadProblem(model, nc, m.nrows, cstart, cidx, val, collb, colub, obj, m.rlo, m.rhi);
    for (int v = 0; v < n; v++)
        for (int t = asap[v]; t < alap[v]; t++)
            Cbc_setInteger(model, S(&w, v, t));
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, olla_log_wants(log, OLLA_LOG_SOLVER_OUTPUT) ? 1 : 0);
    if (time_limit > 0) {
        Cbc_setParameter(model, "timeMode", "elapsed");
        Cbc_setMaximumSeconds(model, time_limit);
    }
    Cbc_setMaximumNodes(model, MAX_NODES);
    info->n_cols = nc;
    info->n_rows = m.nrows;
    if (start && olla_dag_is_topological(dag, start)) {
        for (int t = 0; t < n; t++)
            step[start[t]] = t;
        int k = 0;
        for (int v = 0; v < n; v++)
            for (int t = asap[v]; t < alap[v]; t++) {
                start_idx[k] = S(&w, v, t);
                start_val[k] = step[v] <= t ? 1.0 : 0.0;
                k++;
            }
        Cbc_setMIPStartI(model, k, start_idx, start_val);
    }
    olla_log(log, OLLA_LOG_DETAIL, "olla: scheduling ILP: %d columns, %d rows, %ld nonzeros", nc, m.nrows, m.n);
    Cbc_solve(model);
    const double *sol = Cbc_bestSolution(model);
    double bp = Cbc_getBestPossibleObjValue(model);
    if (isfinite(bp) && bp > 0 && bp < 1e18 && !Cbc_isProvenInfeasible(model)) {
        double lb = ceil(bp - 1e-6 * (fabs(bp) + 1.0));
        if (lb > 0)
            info->bound = (int64_t)lb * g;
    }
    info->optimal = Cbc_isProvenOptimal(model);
    if (sol) {
        /* decode: each node runs at the first step where S is 1 (function 1 of
         * the paper), ties broken by level */
        for (int v = 0; v < n; v++) {
            int s = alap[v];
            for (int t = asap[v]; t < alap[v]; t++)
                if (sol[S(&w, v, t)] > 0.5) {
                    s = t;
                    break;
                }
            dec[v].v = v;
            dec[v].step = s;
            dec[v].lvl = fwd[v];
        }
        qsort(dec, (size_t)n, sizeof *dec, cmp_dec);
        for (int i = 0; i < n; i++)
            order[i] = dec[i].v;
        info->found = olla_dag_is_topological(dag, order);
    }
done:
    if (model)
        Cbc_deleteModel(model);
    olla_ilp_matrix_free(&m);
    free(asap);
    free(alap);
    free(sidx);
    free(mlo);
    free(mhi);
    free(plo);
    free(phi);
    free(peakrow);
    free(peakconst);
    free(step);
    free(dec);
    free(fwd);
    free(bwd);
    free(collb);
    free(colub);
    free(obj);
    free(val);
    free(start_val);
    free(cstart);
    free(cidx);
    free(start_idx);
    return st;
}

typedef struct {
    const olla_dag *dag;
    const int *start;
    int64_t lb_hint;
    const olla_logger *log;
} ilp_args;

/* result layout: olla_ilp_info, then the order */
static olla_status ilp_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    const ilp_args *a = ctx;
    olla_ilp_info *info = out;
    int *order = (int *)((char *)out + sizeof(olla_ilp_info));
    return ilp_solve(a->dag, a->start, a->lb_hint, cbc_limit, a->log, order, info, err);
}

/* With a time limit CBC runs in a child process killed at the deadline
 * (solver/olla_cbc_child.h). */
olla_status olla_sched_ilp(const olla_dag *dag, const int *start, int64_t lb_hint, double time_limit,
                           const olla_logger *log, int *order, olla_ilp_info *info, olla_error *err)
{
    memset(info, 0, sizeof *info);
    if (time_limit <= 0)
        return ilp_solve(dag, start, lb_hint, 0, log, order, info, err);
    int n = dag->n_nodes;
    size_t len = sizeof(olla_ilp_info) + (size_t)n * sizeof(int);
    char *buf = calloc(len, 1);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory starting the ILP solver");
    ilp_args a = {dag, start, lb_hint, log};
    int finished = 0, crash = 0;
    olla_status st = olla_cbc_child_run(ilp_child, &a, buf, len, time_limit, &finished, &crash, err);
    if (st != OLLA_OK || !finished) {
        free(buf);
        if (st == OLLA_OK && crash)
            olla_log(log, OLLA_LOG_DETAIL, "olla: CBC crashed (signal %d); the scheduling ILP is skipped", crash);
        else if (st == OLLA_OK)
            olla_log(log, OLLA_LOG_DETAIL, "olla: ILP stopped at the time limit without a result");
        return st;
    }
    memcpy(info, buf, sizeof *info);
    if (info->found) {
        memcpy(order, buf + sizeof(olla_ilp_info), (size_t)n * sizeof(int));
        info->found = olla_dag_is_topological(dag, order);
    }
    free(buf);
    return OLLA_OK;
}
