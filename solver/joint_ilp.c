/* olla-onnx: node order and tensor addresses in one ILP (eq. 11 of the OLLA
 * paper) solved with CBC, for small graphs.
 *
 * Order, as in the scheduling ILP: binary S[v][t] = 1 when node v has run
 * at or before step t, only inside v's window [asap, alap) (0 before, 1
 * from alap on); one node per step; edge u -> w: S[w][t] <= S[u][t-1].
 * Liveness of tensor e made by p at step t (olla_dag_lifetimes exactly):
 * a graph output S[p][t]; unread S[p][t] - S[p][t-1]; one reader s
 * S[p][t] - S[s][t-1]; several readers a continuous L[e][t] at least
 * S[p][t] - S[s][t-1] for each. Outside the tensor's window it is 0, inside
 * its sure window 1.
 * Addresses, in units of the alignment: integer A[e] in [0, M - size[e]]
 * with M the warm start's arena. For each pair of planned tensors that may
 * be live together, binaries a (e below f) and b (f below e), a + b <= 1:
 *   A[e] + size[e] - A[f] <= M (1 - a),  A[f] + size[f] - A[e] <= M (1 - b),
 *   live[e][t] + live[f][t] - 1 <= a + b  at every step both may be live.
 * Objective: the arena Z with A[e] + size[e] <= Z, and also Z at least the
 * live sizes of every step (a valid cut that tightens the relaxation). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Cbc_C_Interface.h>

#include "passes/analysis/olla_analysis.h"
#include "solver/olla_cbc_child.h"
#include "solver/olla_ilp_matrix.h"
#include "solver/olla_joint.h"
#include "solver/olla_place.h"


/* the model's layout: which column holds what */
typedef struct {
    const olla_dag *dag;
    int n, nt;
    int *asap, *alap, *sidx;       /* S[v][t] = sidx[v] + t - asap[v] */
    int *mlo, *mhi, *plo, *phi;    /* tensor windows */
    int *acol;                     /* address column per planned tensor, else -1 */
    int *lcol;                     /* nt * n: L[e][t] column or -1 */
    int *pe, *pf;                  /* pairs; columns pcol + 2k (a), pcol + 2k + 1 (b) */
    long npairs;
    int pcol;
    long ncols;
    olla_reach reach;
    int have_reach;
} layout;

static void layout_free(layout *L)
{
    free(L->asap);
    free(L->alap);
    free(L->sidx);
    free(L->mlo);
    free(L->mhi);
    free(L->plo);
    free(L->phi);
    free(L->acol);
    free(L->lcol);
    free(L->pe);
    free(L->pf);
    if (L->have_reach)
        olla_reach_free(&L->reach);
    memset(L, 0, sizeof *L);
}

/* S[v][t] as a column, or -1 for constant 0, -2 for constant 1 */
static int S(const layout *L, int v, int t)
{
    if (t < L->asap[v])
        return -1;
    if (t >= L->alap[v])
        return -2;
    return L->sidx[v] + (t - L->asap[v]);
}

static void add_s(olla_ilp_matrix *m, const layout *L, int r, int v, int t, double coef, double *konst)
{
    int c = S(L, v, t);
    if (c == -2)
        *konst += coef;
    else if (c >= 0)
        olla_ilp_add(m, r, c, coef);
}

/* Kind of live[e][t]: 0 always 0, 1 always 1, 2 an expression in S or an L column */
static int live_kind(const layout *L, int e, int t)
{
    const olla_dag *d = L->dag;
    if (t < L->mlo[e] || t > L->mhi[e])
        return 0;
    if (t >= L->plo[e] && t <= L->phi[e])
        return 1;
    int p = d->producer[e];
    if (S(L, p, t) == -1)
        return 0;
    return 2;
}

/* For a tensor with several readers at a step of kind 2: 1 when it needs an
 * L column, 0 when live is S[p][t] (some reader cannot have run), -1 when
 * it is dead (every reader surely ran before t). */
static int multi_mode(const layout *L, int e, int t)
{
    const olla_dag *d = L->dag;
    int any_zero = 0, n_var = 0;
    for (int k = d->sink_start[e]; k < d->sink_start[e + 1]; k++) {
        int cs = S(L, d->sink_list[k], t - 1);
        if (cs == -1)
            any_zero = 1;
        else if (cs >= 0)
            n_var++;
    }
    if (any_zero)
        return 0;
    return n_var ? 1 : -1;
}

/* adds coef * live[e][t] to row r */
static void add_live(olla_ilp_matrix *m, const layout *L, int r, int e, int t, double coef, double *konst)
{
    const olla_dag *d = L->dag;
    int kind = live_kind(L, e, t);
    if (kind == 0)
        return;
    if (kind == 1) {
        *konst += coef;
        return;
    }
    int p = d->producer[e];
    int ns = d->sink_start[e + 1] - d->sink_start[e];
    if (d->is_output[e]) {
        add_s(m, L, r, p, t, coef, konst);
    } else if (ns == 0) {
        add_s(m, L, r, p, t, coef, konst);
        add_s(m, L, r, p, t - 1, -coef, konst);
    } else if (ns == 1) {
        add_s(m, L, r, p, t, coef, konst);
        add_s(m, L, r, d->sink_list[d->sink_start[e]], t - 1, -coef, konst);
    } else if (L->lcol[(size_t)e * (size_t)L->n + (size_t)t] >= 0) {
        olla_ilp_add(m, r, L->lcol[(size_t)e * (size_t)L->n + (size_t)t], coef);
    } else if (multi_mode(L, e, t) == 0) {
        add_s(m, L, r, p, t, coef, konst);
    }
}

static olla_status layout_build(const olla_dag *dag, layout *L, olla_error *err)
{
    memset(L, 0, sizeof *L);
    int n = dag->n_nodes, nt = dag->n_tensors;
    L->dag = dag;
    L->n = n;
    L->nt = nt;
    olla_status st = olla_reach_build(dag, &L->reach, err);
    if (st != OLLA_OK)
        return st;
    L->have_reach = 1;
    L->asap = malloc(((size_t)n + 1) * sizeof(int));
    L->alap = malloc(((size_t)n + 1) * sizeof(int));
    L->sidx = malloc(((size_t)n + 1) * sizeof(int));
    L->mlo = malloc(((size_t)nt + 1) * sizeof(int));
    L->mhi = malloc(((size_t)nt + 1) * sizeof(int));
    L->plo = malloc(((size_t)nt + 1) * sizeof(int));
    L->phi = malloc(((size_t)nt + 1) * sizeof(int));
    L->acol = malloc(((size_t)nt + 1) * sizeof(int));
    L->lcol = malloc(((size_t)nt * (size_t)n + 1) * sizeof(int));
    if (!L->asap || !L->alap || !L->sidx || !L->mlo || !L->mhi || !L->plo || !L->phi || !L->acol || !L->lcol)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
    olla_windows(&L->reach, L->asap, L->alap);
    olla_tensor_windows(dag, L->asap, L->alap, L->mlo, L->mhi, L->plo, L->phi);
    long nc = 1; /* column 0: the arena */
    for (int v = 0; v < n; v++) {
        L->sidx[v] = (int)nc;
        nc += L->alap[v] - L->asap[v];
    }
    long nplanned = 0;
    for (int e = 0; e < nt; e++) {
        L->acol[e] = dag->bytes[e] > 0 ? (int)nc++ : -1;
        nplanned += dag->bytes[e] > 0;
        for (int t = 0; t < n; t++) {
            int c = -1;
            if (dag->bytes[e] > 0 && !dag->is_output[e] &&
                dag->sink_start[e + 1] - dag->sink_start[e] > 1 && live_kind(L, e, t) == 2 &&
                multi_mode(L, e, t) == 1)
                c = (int)nc++;
            L->lcol[(size_t)e * (size_t)n + (size_t)t] = c;
        }
    }
    long maxpairs = nplanned * (nplanned - 1) / 2;
    L->pe = malloc(((size_t)maxpairs + 1) * sizeof(int));
    L->pf = malloc(((size_t)maxpairs + 1) * sizeof(int));
    if (!L->pe || !L->pf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
    L->pcol = (int)nc;
    for (int e = 0; e < nt; e++) {
        if (dag->bytes[e] <= 0)
            continue;
        for (int f = e + 1; f < nt; f++) {
            if (dag->bytes[f] <= 0 || olla_tensors_disjoint(dag, &L->reach, e, f))
                continue;
            int lo = L->mlo[e] > L->mlo[f] ? L->mlo[e] : L->mlo[f];
            int hi = L->mhi[e] < L->mhi[f] ? L->mhi[e] : L->mhi[f];
            if (lo > hi)
                continue;
            L->pe[L->npairs] = e;
            L->pf[L->npairs++] = f;
        }
    }
    nc += 2 * L->npairs;
    L->ncols = nc;
    return OLLA_OK;
}

olla_status olla_joint_columns(const olla_dag *dag, long *cols, int *fits, olla_error *err)
{
    *cols = 0;
    *fits = 0;
    if (dag->n_nodes > OLLA_JOINT_MAX_NODES) {
        *cols = -1;
        return OLLA_OK;
    }
    layout L;
    olla_status st = layout_build(dag, &L, err);
    if (st == OLLA_OK) {
        *cols = L.ncols;
        *fits = L.ncols <= OLLA_JOINT_MAX_COLS;
    }
    layout_free(&L);
    return st;
}

static int64_t units(int64_t bytes, int64_t align)
{
    return (bytes + align - 1) / align;
}

/* result passed back from the solve */
typedef struct {
    int found, optimal;
} joint_head;

typedef struct {
    const olla_dag *dag;
    const int *start_order;
    const int64_t *start_offsets;
    int64_t align, arena_units;
} joint_args;

/* The result the solver process sends back: joint_head, then the offsets
 * (nt int64, at a multiple of 8 bytes), then the order (n ints). The buffer
 * itself comes from malloc, so every field is aligned for its type. */
typedef struct {
    size_t offsets_at, order_at, len;
} result_layout;

static result_layout result_layout_of(int n, int nt)
{
    result_layout r;
    r.offsets_at = (sizeof(joint_head) + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
    r.order_at = r.offsets_at + (size_t)nt * sizeof(int64_t);
    r.len = r.order_at + (size_t)n * sizeof(int);
    return r;
}

static olla_status joint_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    const joint_args *a = ctx;
    const olla_dag *dag = a->dag;
    int n = dag->n_nodes, nt = dag->n_tensors;
    result_layout rl = result_layout_of(n, nt);
    joint_head *head = out;
    int64_t *offs = (int64_t *)((char *)out + rl.offsets_at);
    int *order = (int *)((char *)out + rl.order_at);
    memset(head, 0, sizeof *head);
    double M = (double)a->arena_units;
    layout L;
    olla_ilp_matrix m = {0};
    Cbc_Model *model = NULL;
    int *cstart = NULL, *cidx = NULL, *step = NULL, *first = NULL, *last = NULL, *sidx = NULL;
    double *val = NULL, *collb = NULL, *colub = NULL, *obj = NULL, *sval = NULL;
    olla_status st = layout_build(dag, &L, err);
    if (st != OLLA_OK)
        goto done;
    /* one node per step */
    for (int t = 0; t < n; t++) {
        int r = olla_ilp_row(&m, 0, 0);
        double k = 0;
        for (int v = 0; v < n; v++)
            if (t >= L.asap[v])
                add_s(&m, &L, r, v, t, 1.0, &k);
        if (r >= 0)
            m.rlo[r] = m.rhi[r] = (double)(t + 1) - k;
    }
    /* monotone */
    for (int v = 0; v < n; v++)
        for (int t = L.asap[v]; t + 1 < L.alap[v]; t++) {
            int r = olla_ilp_row(&m, -INFINITY, 0);
            olla_ilp_add(&m, r, S(&L, v, t), 1.0);
            olla_ilp_add(&m, r, S(&L, v, t + 1), -1.0);
        }
    /* precedence over direct edges */
    for (int w = 0; w < n; w++)
        for (int k = dag->in_start[w]; k < dag->in_start[w + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            int lo = L.asap[w] > L.asap[u] + 1 ? L.asap[w] : L.asap[u] + 1;
            int hi = L.alap[w] - 1 < L.alap[u] ? L.alap[w] - 1 : L.alap[u];
            for (int t = lo; t <= hi; t++) {
                int r = olla_ilp_row(&m, -INFINITY, 0);
                double kk = 0;
                add_s(&m, &L, r, w, t, 1.0, &kk);
                add_s(&m, &L, r, u, t - 1, -1.0, &kk);
                if (r >= 0)
                    m.rhi[r] = -kk;
            }
        }
    /* L columns: at least S[p][t] - S[s][t-1] for each reader */
    for (int e = 0; e < nt; e++)
        for (int t = 0; t < n; t++) {
            int lc = L.lcol[(size_t)e * (size_t)n + (size_t)t];
            if (lc < 0)
                continue;
            for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
                int s = dag->sink_list[k];
                if (S(&L, s, t - 1) == -2)
                    continue;
                int r = olla_ilp_row(&m, 0, INFINITY);
                double kk = 0;
                olla_ilp_add(&m, r, lc, 1.0);
                add_s(&m, &L, r, dag->producer[e], t, -1.0, &kk);
                add_s(&m, &L, r, s, t - 1, 1.0, &kk);
                if (r >= 0)
                    m.rlo[r] = -kk;
            }
        }
    /* the arena bounds every address and the live sizes of every step */
    for (int e = 0; e < nt; e++) {
        if (L.acol[e] < 0)
            continue;
        int r = olla_ilp_row(&m, -INFINITY, -(double)units(dag->bytes[e], a->align));
        olla_ilp_add(&m, r, L.acol[e], 1.0);
        olla_ilp_add(&m, r, 0, -1.0);
    }
    for (int t = 0; t < n; t++) {
        int r = olla_ilp_row(&m, -INFINITY, 0);
        double kk = 0;
        olla_ilp_add(&m, r, 0, -1.0);
        for (int e = 0; e < nt; e++)
            if (L.acol[e] >= 0)
                add_live(&m, &L, r, e, t, (double)units(dag->bytes[e], a->align), &kk);
        if (r >= 0)
            m.rhi[r] = -kk;
    }
    /* pairs */
    for (long q = 0; q < L.npairs; q++) {
        int e = L.pe[q], f = L.pf[q];
        int ca = L.pcol + 2 * (int)q, cb = ca + 1;
        double se = (double)units(dag->bytes[e], a->align), sf = (double)units(dag->bytes[f], a->align);
        int r = olla_ilp_row(&m, -INFINITY, M - se); /* A[e] - A[f] + M a <= M - size[e] */
        olla_ilp_add(&m, r, L.acol[e], 1.0);
        olla_ilp_add(&m, r, L.acol[f], -1.0);
        olla_ilp_add(&m, r, ca, M);
        r = olla_ilp_row(&m, -INFINITY, M - sf);
        olla_ilp_add(&m, r, L.acol[f], 1.0);
        olla_ilp_add(&m, r, L.acol[e], -1.0);
        olla_ilp_add(&m, r, cb, M);
        r = olla_ilp_row(&m, -INFINITY, 1.0);
        olla_ilp_add(&m, r, ca, 1.0);
        olla_ilp_add(&m, r, cb, 1.0);
        int lo = L.mlo[e] > L.mlo[f] ? L.mlo[e] : L.mlo[f];
        int hi = L.mhi[e] < L.mhi[f] ? L.mhi[e] : L.mhi[f];
        for (int t = lo; t <= hi; t++) {
            if (live_kind(&L, e, t) == 0 || live_kind(&L, f, t) == 0)
                continue;
            r = olla_ilp_row(&m, -INFINITY, 0);
            double kk = 0;
            add_live(&m, &L, r, e, t, 1.0, &kk);
            add_live(&m, &L, r, f, t, 1.0, &kk);
            olla_ilp_add(&m, r, ca, -1.0);
            olla_ilp_add(&m, r, cb, -1.0);
            if (r >= 0)
                m.rhi[r] = 1.0 - kk;
        }
    }
    if (m.oom) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
        goto done;
    }
    int nc = (int)L.ncols;
    collb = calloc((size_t)nc + 1, sizeof(double));
    colub = malloc(((size_t)nc + 1) * sizeof(double));
    obj = calloc((size_t)nc + 1, sizeof(double));
    sidx = malloc(((size_t)nc + 1) * sizeof(int));
    sval = malloc(((size_t)nc + 1) * sizeof(double));
    step = malloc(((size_t)n + 1) * sizeof(int));
    first = malloc(((size_t)nt + 1) * sizeof(int));
    last = malloc(((size_t)nt + 1) * sizeof(int));
    if (!olla_ilp_columns(&m, nc, &cstart, &cidx, &val) || !collb || !colub || !obj || !sidx || !sval || !step || !first ||
        !last) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
        goto done;
    }
    for (int c = 0; c < nc; c++)
        colub[c] = 1.0;
    colub[0] = M;
    obj[0] = 1.0;
    for (int e = 0; e < nt; e++)
        if (L.acol[e] >= 0)
            colub[L.acol[e]] = M - (double)units(dag->bytes[e], a->align);
    model = Cbc_newModel();
    if (!model) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "CBC could not create a model");
        goto done;
    }
    Cbc_loadProblem(model, nc, m.nrows, cstart, cidx, val, collb, colub, obj, m.rlo, m.rhi);
    for (int c = 1; c < nc; c++)
        Cbc_setInteger(model, c);
    /* L columns stay continuous */
    for (size_t i = 0; i < (size_t)nt * (size_t)n; i++)
        if (L.lcol[i] >= 0)
            Cbc_setContinuous(model, L.lcol[i]);
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, 0);
    if (cbc_limit > 0) {
        Cbc_setParameter(model, "timeMode", "elapsed");
        Cbc_setMaximumSeconds(model, cbc_limit);
    }
    /* warm start: the two-step plan */
    for (int t = 0; t < n; t++)
        step[a->start_order[t]] = t;
    if ((st = olla_dag_lifetimes(dag, a->start_order, first, last, err)) != OLLA_OK)
        goto done;
    int k = 0;
    sidx[k] = 0;
    sval[k++] = M;
    for (int v = 0; v < n; v++)
        for (int t = L.asap[v]; t < L.alap[v]; t++) {
            sidx[k] = S(&L, v, t);
            sval[k++] = step[v] <= t ? 1.0 : 0.0;
        }
    for (int e = 0; e < nt; e++) {
        if (L.acol[e] < 0)
            continue;
        sidx[k] = L.acol[e];
        sval[k++] = (double)(a->start_offsets[e] / a->align);
        for (int t = 0; t < n; t++) {
            int lc = L.lcol[(size_t)e * (size_t)n + (size_t)t];
            if (lc >= 0) {
                sidx[k] = lc;
                sval[k++] = first[e] <= t && t <= last[e] ? 1.0 : 0.0;
            }
        }
    }
    for (long q = 0; q < L.npairs; q++) {
        int e = L.pe[q], f = L.pf[q];
        int64_t oe = a->start_offsets[e] / a->align, of = a->start_offsets[f] / a->align;
        int below = oe + units(dag->bytes[e], a->align) <= of;
        int above = !below && of + units(dag->bytes[f], a->align) <= oe;
        sidx[k] = L.pcol + 2 * (int)q;
        sval[k++] = below;
        sidx[k] = L.pcol + 2 * (int)q + 1;
        sval[k++] = above;
    }
    Cbc_setMIPStartI(model, k, sidx, sval);
    Cbc_solve(model);
    head->optimal = Cbc_isProvenOptimal(model);
    const double *sol = Cbc_bestSolution(model);
    if (sol) {
        /* each node runs at the first step where S is 1 (function 1 of the paper) */
        for (int v = 0; v < n; v++) {
            int s = L.alap[v];
            for (int t = L.asap[v]; t < L.alap[v]; t++)
                if (sol[S(&L, v, t)] > 0.5) {
                    s = t;
                    break;
                }
            step[v] = s;
        }
        for (int i = 0; i < n; i++)
            order[i] = -1;
        int ok = 1;
        for (int v = 0; v < n && ok; v++) {
            if (step[v] < 0 || step[v] >= n || order[step[v]] >= 0)
                ok = 0;
            else
                order[step[v]] = v;
        }
        for (int e = 0; e < nt; e++)
            offs[e] = L.acol[e] >= 0 ? (int64_t)llround(sol[L.acol[e]]) * a->align : 0;
        head->found = ok;
    }
done:
    if (model)
        Cbc_deleteModel(model);
    olla_ilp_matrix_free(&m);
    layout_free(&L);
    free(cstart);
    free(cidx);
    free(val);
    free(collb);
    free(colub);
    free(obj);
    free(sidx);
    free(sval);
    free(step);
    free(first);
    free(last);
    return st;
}

/* Checks order and offsets as a plan under dag's liveness; *arena receives
 * its arena. Returns 1 when valid. */
static int plan_valid(const olla_dag *dag, const int *order, const int64_t *offs, int64_t align, int64_t *arena,
                      olla_error *why)
{
    int nt = dag->n_tensors;
    if (!olla_dag_is_topological(dag, order)) {
        olla_error_set(why, OLLA_ERR_INPUT, "the order is not a topological order of the graph");
        return 0;
    }
    int *first = malloc(((size_t)nt + 1) * sizeof(int)), *last = malloc(((size_t)nt + 1) * sizeof(int));
    olla_buffer *b = malloc(((size_t)nt + 1) * sizeof *b);
    if (!first || !last || !b) {
        free(first);
        free(last);
        free(b);
        olla_error_set(why, OLLA_ERR_INTERNAL, "out of memory checking a plan");
        return 0;
    }
    if (olla_dag_lifetimes(dag, order, first, last, why) != OLLA_OK) {
        free(first);
        free(last);
        free(b);
        return 0;
    }
    size_t k = 0;
    int64_t top = 0;
    for (int e = 0; e < nt; e++) {
        if (dag->bytes[e] <= 0)
            continue;
        b[k].lower = first[e];
        b[k].upper = (int64_t)last[e] + 1;
        b[k].size = dag->bytes[e];
        b[k].offset = offs[e];
        int64_t end = offs[e] + units(dag->bytes[e], align) * align;
        if (end > top)
            top = end;
        k++;
    }
    int ok = olla_place_validate(b, k, top, align, why) == OLLA_OK;
    free(first);
    free(last);
    free(b);
    *arena = top;
    return ok;
}

olla_status olla_joint_solve(const olla_dag *dag, const int *start_order, const int64_t *start_offsets,
                             int64_t alignment, double time_limit, int *order_out, int64_t *offsets_out,
                             int64_t *arena_out, int *proven_optimal, olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    *proven_optimal = 0;
    *arena_out = 0;
    if (alignment < 1)
        return olla_error_set(err, OLLA_ERR_USAGE, "joint ILP: alignment %lld is not positive; use 1 or more",
                              (long long)alignment);
    if (!start_order || !start_offsets)
        return olla_error_set(err, OLLA_ERR_USAGE, "joint ILP: the two-step plan to start from is missing");
    int64_t start_arena = 0;
    olla_error why = {0};
    for (int e = 0; e < nt; e++)
        if (dag->bytes[e] > 0 && (start_offsets[e] < 0 || start_offsets[e] % alignment != 0))
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "joint ILP: start offset %lld of tensor %d is not a non-negative multiple of "
                                  "the alignment %lld; pass the two-step plan's offsets",
                                  (long long)start_offsets[e], e, (long long)alignment);
    if (!plan_valid(dag, start_order, start_offsets, alignment, &start_arena, &why))
        return olla_error_set(err, why.code == OLLA_ERR_INTERNAL ? OLLA_ERR_INTERNAL : OLLA_ERR_INPUT,
                              "joint ILP: the start plan is not valid: %s; pass the two-step plan", why.message);
    memcpy(order_out, start_order, (size_t)n * sizeof(int));
    for (int e = 0; e < nt; e++)
        offsets_out[e] = dag->bytes[e] > 0 ? start_offsets[e] : 0;
    *arena_out = start_arena;
    if (start_arena == 0) {
        *proven_optimal = 1;
        return OLLA_OK;
    }
    long cols = 0;
    int fits = 0;
    olla_status st = olla_joint_columns(dag, &cols, &fits, err);
    if (st != OLLA_OK || !fits)
        return st;
    result_layout rl = result_layout_of(n, nt);
    size_t len = rl.len;
    char *buf = calloc(len + 1, 1);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory starting the joint ILP");
    joint_args a = {dag, start_order, start_offsets, alignment, start_arena / alignment};
    int finished = 0;
    st = olla_cbc_child_run(joint_child, &a, buf, len, time_limit, &finished, NULL, err);
    joint_head head;
    memcpy(&head, buf, sizeof head);
    int trusted = 0; /* the solution decoded to a valid plan */
    if (st == OLLA_OK && finished && head.found) {
        int *ord = malloc(((size_t)n + 1) * sizeof(int));
        int64_t *off = malloc(((size_t)nt + 1) * sizeof(int64_t));
        if (!ord || !off) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading the joint ILP result");
        } else {
            memcpy(ord, buf + rl.order_at, (size_t)n * sizeof(int));
            memcpy(off, buf + rl.offsets_at, (size_t)nt * sizeof(int64_t));
            int64_t arena = 0;
            olla_error w2 = {0};
            trusted = plan_valid(dag, ord, off, alignment, &arena, &w2);
            if (trusted && arena < start_arena) {
                memcpy(order_out, ord, (size_t)n * sizeof(int));
                memcpy(offsets_out, off, (size_t)nt * sizeof(int64_t));
                *arena_out = arena;
            }
        }
        free(ord);
        free(off);
    }
    if (st == OLLA_OK && trusted)
        *proven_optimal = head.optimal;
    free(buf);
    return st;
}
