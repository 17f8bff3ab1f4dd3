/* olla-onnx: node order and tensor addresses in one ILP (eq. 11 of the OLLA
 * paper) solved with CBC, for small graphs.
 *
 * Order, as in the scheduling ILP: binary S[v][t] = 1 when node v has run
 * at or before step t, only inside v's window [asap, alap) (0 before, 1
 * from alap on); one node per step; edge u -> w: S[w][t] <= S[u][t-1].
 * These ordering rows are built by solver/order_ilp.c for both ILPs.
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
#include "solver/olla_joint.h"
#include "solver/olla_order_ilp.h"
#include "solver/olla_place.h"


/* the model's layout: which column holds what */
typedef struct {
    const olla_dag *dag;
    int n, nt;
    int *asap, *alap, *sidx;       /* S[v][t] = sidx[v] + t - asap[v] */
    olla_order_vars w;             /* the three above */
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

/* Frees the layout and clears it. */
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

/* S[v][t] as a column, or OLLA_S_ZERO / OLLA_S_ONE */
static int S(const layout *L, int v, int t)
{
    return olla_order_col(&L->w, v, t);
}

/* adds coef * S[v][t] to row r, or its constant value to *konst */
static void add_s(olla_ilp_matrix *m, const layout *L, int r, int v, int t, double coef, double *konst)
{
    olla_order_add(m, &L->w, r, v, t, coef, konst);
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

/* The windows, the columns (arena, S, addresses, L, pairs) and the pairs
 * of planned tensors that may be live together. */
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
    L->w = (olla_order_vars){L->asap, L->alap, L->sidx};
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

/* The size guard of olla_joint.h: the layout alone, counted. */
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

/* bytes in units of align, rounded up */
static int64_t units(int64_t bytes, int64_t align)
{
    return (bytes + align - 1) / align;
}

/* result passed back from the solve */
typedef struct {
    int found, optimal;
} joint_head;

typedef struct {
    const olla_joint_problem *pb;
    int64_t arena_units;
} joint_args;

/* The result the solver process sends back: joint_head, then the offsets
 * (nt int64, at a multiple of 8 bytes), then the order (n ints). The buffer
 * itself comes from malloc, so every field is aligned for its type. */
typedef struct {
    size_t offsets_at, order_at, len;
} result_layout;

/* where each part of the result lies for n nodes and nt tensors */
static result_layout result_layout_of(int n, int nt)
{
    result_layout r;
    r.offsets_at = (sizeof(joint_head) + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
    r.order_at = r.offsets_at + (size_t)nt * sizeof(int64_t);
    r.len = r.order_at + (size_t)n * sizeof(int);
    return r;
}

/* ---- the model being built and solved ---- */

/* One solve of the joint ILP: the layout, the matrix, the CBC model and its
 * arrays. M is the start's arena in units of the alignment (the big-M). */
typedef struct joint_model {
    const olla_dag *dag;
    const olla_joint_problem *pb;
    int n, nt;
    double M;
    layout L;
    olla_ilp_matrix m;
    Cbc_Model *model;
    int *cstart, *cidx, *step, *first, *last, *sidx;
    double *val, *collb, *colub, *obj, *sval;
} joint_model;

/* the size of tensor e in units of the alignment */
static double size_units(const joint_model *j, int e)
{
    return (double)units(j->dag->bytes[e], j->pb->alignment);
}

/* L columns: at least S[p][t] - S[s][t-1] for each reader s. */
static void lcol_rows(joint_model *j)
{
    const olla_dag *dag = j->dag;
    const layout *L = &j->L;
    olla_ilp_matrix *m = &j->m;
    for (int e = 0; e < j->nt; e++)
        for (int t = 0; t < j->n; t++) {
            int lc = L->lcol[(size_t)e * (size_t)j->n + (size_t)t];
            if (lc < 0)
                continue;
            for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
                int s = dag->sink_list[k];
                if (S(L, s, t - 1) == OLLA_S_ONE)
                    continue;
                int r = olla_ilp_row(m, 0, INFINITY);
                double kk = 0;
                olla_ilp_add(m, r, lc, 1.0);
                add_s(m, L, r, dag->producer[e], t, -1.0, &kk);
                add_s(m, L, r, s, t - 1, 1.0, &kk);
                if (r >= 0)
                    m->rlo[r] = -kk;
            }
        }
}

/* The arena bounds every address and the live sizes of every step. */
static void arena_rows(joint_model *j)
{
    const layout *L = &j->L;
    olla_ilp_matrix *m = &j->m;
    for (int e = 0; e < j->nt; e++) {
        if (L->acol[e] < 0)
            continue;
        int r = olla_ilp_row(m, -INFINITY, -size_units(j, e));
        olla_ilp_add(m, r, L->acol[e], 1.0);
        olla_ilp_add(m, r, 0, -1.0);
    }
    for (int t = 0; t < j->n; t++) {
        int r = olla_ilp_row(m, -INFINITY, 0);
        double kk = 0;
        olla_ilp_add(m, r, 0, -1.0);
        for (int e = 0; e < j->nt; e++)
            if (L->acol[e] >= 0)
                add_live(m, L, r, e, t, size_units(j, e), &kk);
        if (r >= 0)
            m->rhi[r] = -kk;
    }
}

/* Pair q: e below f or f below e, a + b <= 1, and one of them wherever
 * both may be live. */
static void pair_rows(joint_model *j, long q)
{
    const layout *L = &j->L;
    olla_ilp_matrix *m = &j->m;
    double M = j->M;
    int e = L->pe[q], f = L->pf[q];
    int ca = L->pcol + 2 * (int)q, cb = ca + 1;
    double se = size_units(j, e), sf = size_units(j, f);
    int r = olla_ilp_row(m, -INFINITY, M - se); /* A[e] - A[f] + M a <= M - size[e] */
    olla_ilp_add(m, r, L->acol[e], 1.0);
    olla_ilp_add(m, r, L->acol[f], -1.0);
    olla_ilp_add(m, r, ca, M);
    r = olla_ilp_row(m, -INFINITY, M - sf);
    olla_ilp_add(m, r, L->acol[f], 1.0);
    olla_ilp_add(m, r, L->acol[e], -1.0);
    olla_ilp_add(m, r, cb, M);
    r = olla_ilp_row(m, -INFINITY, 1.0);
    olla_ilp_add(m, r, ca, 1.0);
    olla_ilp_add(m, r, cb, 1.0);
    int lo = L->mlo[e] > L->mlo[f] ? L->mlo[e] : L->mlo[f];
    int hi = L->mhi[e] < L->mhi[f] ? L->mhi[e] : L->mhi[f];
    for (int t = lo; t <= hi; t++) {
        if (live_kind(L, e, t) == 0 || live_kind(L, f, t) == 0)
            continue;
        r = olla_ilp_row(m, -INFINITY, 0);
        double kk = 0;
        add_live(m, L, r, e, t, 1.0, &kk);
        add_live(m, L, r, f, t, 1.0, &kk);
        olla_ilp_add(m, r, ca, -1.0);
        olla_ilp_add(m, r, cb, -1.0);
        if (r >= 0)
            m->rhi[r] = 1.0 - kk;
    }
}

/* The whole matrix: the ordering rows of eq. 12, the L rows, the arena
 * rows and the pair rows. */
static olla_status joint_rows(joint_model *j, olla_error *err)
{
    if (!olla_order_rows(&j->m, &j->L.w, j->dag))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
    lcol_rows(j);
    arena_rows(j);
    for (long q = 0; q < j->L.npairs; q++)
        pair_rows(j, q);
    if (j->m.oom)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
    return OLLA_OK;
}

/* ---- CBC ---- */

/* Loads the matrix into a CBC model: column bounds (the arena up to M, each
 * address up to M less its size), integers but the L columns, the limit. */
static olla_status joint_load(joint_model *j, double cbc_limit, olla_error *err)
{
    int nc = (int)j->L.ncols, n = j->n, nt = j->nt;
    j->collb = calloc((size_t)nc + 1, sizeof(double));
    j->colub = malloc(((size_t)nc + 1) * sizeof(double));
    j->obj = calloc((size_t)nc + 1, sizeof(double));
    j->sidx = malloc(((size_t)nc + 1) * sizeof(int));
    j->sval = malloc(((size_t)nc + 1) * sizeof(double));
    j->step = malloc(((size_t)n + 1) * sizeof(int));
    j->first = malloc(((size_t)nt + 1) * sizeof(int));
    j->last = malloc(((size_t)nt + 1) * sizeof(int));
    if (!olla_ilp_columns(&j->m, nc, &j->cstart, &j->cidx, &j->val) || !j->collb || !j->colub || !j->obj || !j->sidx ||
        !j->sval || !j->step || !j->first || !j->last)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the joint ILP");
    for (int c = 0; c < nc; c++)
        j->colub[c] = 1.0;
    j->colub[0] = j->M;
    j->obj[0] = 1.0;
    for (int e = 0; e < nt; e++)
        if (j->L.acol[e] >= 0)
            j->colub[j->L.acol[e]] = j->M - size_units(j, e);
    if (!(j->model = Cbc_newModel()))
        return olla_error_set(err, OLLA_ERR_INTERNAL, "CBC could not create a model");
    Cbc_Model *model = j->model;
    Cbc_loadProblem(model, nc, j->m.nrows, j->cstart, j->cidx, j->val, j->collb, j->colub, j->obj, j->m.rlo, j->m.rhi);
    for (int c = 1; c < nc; c++)
        Cbc_setInteger(model, c);
    /* L columns stay continuous */
    for (size_t i = 0; i < (size_t)nt * (size_t)n; i++)
        if (j->L.lcol[i] >= 0)
            Cbc_setContinuous(model, j->L.lcol[i]);
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, 0);
    if (cbc_limit > 0) {
        Cbc_setParameter(model, "timeMode", "cpu");
        Cbc_setMaximumSeconds(model, cbc_limit);
    }
    return OLLA_OK;
}

/* The warm start, the two-step plan: S from its order, the addresses from
 * its offsets, L from its lifetimes and the pairs from which lies below. */
static olla_status warm_start(joint_model *j, olla_error *err)
{
    const olla_joint_problem *pb = j->pb;
    const layout *L = &j->L;
    int64_t align = pb->alignment;
    for (int t = 0; t < j->n; t++)
        j->step[pb->start_order[t]] = t;
    olla_status st = olla_dag_lifetimes(j->dag, pb->start_order, j->first, j->last, err);
    if (st != OLLA_OK)
        return st;
    int k = 0;
    j->sidx[k] = 0;
    j->sval[k++] = j->M;
    for (int v = 0; v < j->n; v++)
        for (int t = L->asap[v]; t < L->alap[v]; t++) {
            j->sidx[k] = S(L, v, t);
            j->sval[k++] = j->step[v] <= t ? 1.0 : 0.0;
        }
    for (int e = 0; e < j->nt; e++) {
        if (L->acol[e] < 0)
            continue;
        j->sidx[k] = L->acol[e];
        j->sval[k++] = (double)(pb->start_offsets[e] / align);
        for (int t = 0; t < j->n; t++) {
            int lc = L->lcol[(size_t)e * (size_t)j->n + (size_t)t];
            if (lc >= 0) {
                j->sidx[k] = lc;
                j->sval[k++] = j->first[e] <= t && t <= j->last[e] ? 1.0 : 0.0;
            }
        }
    }
    for (long q = 0; q < L->npairs; q++) {
        int e = L->pe[q], f = L->pf[q];
        int64_t oe = pb->start_offsets[e] / align, of = pb->start_offsets[f] / align;
        int below = oe + units(j->dag->bytes[e], align) <= of;
        int above = !below && of + units(j->dag->bytes[f], align) <= oe;
        j->sidx[k] = L->pcol + 2 * (int)q;
        j->sval[k++] = below;
        j->sidx[k] = L->pcol + 2 * (int)q + 1;
        j->sval[k++] = above;
    }
    Cbc_setMIPStartI(j->model, k, j->sidx, j->sval);
    return OLLA_OK;
}

/* Solves and decodes: each node runs at the first step where S is 1
 * (function 1 of the paper); the offsets from the address columns. */
static void joint_decode(joint_model *j, joint_head *head, int64_t *offs, int *order)
{
    const layout *L = &j->L;
    int n = j->n;
    Cbc_solve(j->model);
    head->optimal = Cbc_isProvenOptimal(j->model);
    const double *sol = Cbc_bestSolution(j->model);
    if (!sol)
        return;
    for (int v = 0; v < n; v++) {
        int s = L->alap[v];
        for (int t = L->asap[v]; t < L->alap[v]; t++)
            if (sol[S(L, v, t)] > OLLA_ILP_BINARY_ONE) {
                s = t;
                break;
            }
        j->step[v] = s;
    }
    for (int i = 0; i < n; i++)
        order[i] = -1;
    int ok = 1;
    for (int v = 0; v < n && ok; v++) {
        if (j->step[v] < 0 || j->step[v] >= n || order[j->step[v]] >= 0)
            ok = 0;
        else
            order[j->step[v]] = v;
    }
    for (int e = 0; e < j->nt; e++)
        offs[e] = L->acol[e] >= 0 ? (int64_t)llround(sol[L->acol[e]]) * j->pb->alignment : 0;
    head->found = ok;
}

/* Frees what the solve holds. */
static void joint_model_free(joint_model *j)
{
    if (j->model)
        Cbc_deleteModel(j->model);
    olla_ilp_matrix_free(&j->m);
    layout_free(&j->L);
    void *arrays[] = {j->cstart, j->cidx, j->val,  j->collb, j->colub, j->obj,
                      j->sidx,   j->sval, j->step, j->first, j->last};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

/* The solve, in the child process or in this one (result layout above). */
static olla_status joint_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    const joint_args *a = ctx;
    const olla_dag *dag = a->pb->dag;
    joint_model j = {.dag = dag, .pb = a->pb, .n = dag->n_nodes, .nt = dag->n_tensors, .M = (double)a->arena_units};
    result_layout rl = result_layout_of(j.n, j.nt);
    joint_head *head = out;
    memset(head, 0, sizeof *head);
    olla_status st = layout_build(dag, &j.L, err);
    if (st == OLLA_OK)
        st = joint_rows(&j, err);
    if (st == OLLA_OK)
        st = joint_load(&j, cbc_limit, err);
    if (st == OLLA_OK)
        st = warm_start(&j, err);
    if (st == OLLA_OK)
        joint_decode(&j, head, (int64_t *)((char *)out + rl.offsets_at), (int *)((char *)out + rl.order_at));
    joint_model_free(&j);
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

/* Where olla_joint_solve writes its plan (olla_joint.h). */
typedef struct joint_out {
    int *order;
    int64_t *offsets, *arena;
    int *proven_optimal;
} joint_out;

/* Runs the joint ILP from the valid start (its arena start_arena) and keeps
 * its plan in res when it is valid and strictly smaller; *res->proven_optimal
 * is CBC's proof when the solution decoded to a valid plan. */
static olla_status solve_and_keep(const olla_joint_problem *pb, double time_limit, int64_t start_arena,
                                  const joint_out *res, olla_error *err)
{
    const olla_dag *dag = pb->dag;
    int n = dag->n_nodes, nt = dag->n_tensors;
    int64_t alignment = pb->alignment;
    result_layout rl = result_layout_of(n, nt);
    size_t len = rl.len;
    char *buf = calloc(len + 1, 1);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory starting the joint ILP");
    joint_args a = {pb, start_arena / alignment};
    olla_cbc_outcome outcome = {0};
    olla_status st = olla_cbc_child_run(&(olla_cbc_job){joint_child, &a, buf, len}, time_limit, &outcome, err);
    joint_head head;
    memcpy(&head, buf, sizeof head);
    int trusted = 0; /* the solution decoded to a valid plan */
    if (st == OLLA_OK && outcome.finished && head.found) {
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
                memcpy(res->order, ord, (size_t)n * sizeof(int));
                memcpy(res->offsets, off, (size_t)nt * sizeof(int64_t));
                *res->arena = arena;
            }
        }
        free(ord);
        free(off);
    }
    if (st == OLLA_OK && trusted)
        *res->proven_optimal = head.optimal;
    free(buf);
    return st;
}

/* Checks the start, returns it when its arena is 0 or the graph is above
 * the size guard, else solves (olla_joint.h). */
olla_status olla_joint_solve(const olla_joint_problem *pb, double time_limit, int *order_out, int64_t *offsets_out,
                             int64_t *arena_out, int *proven_optimal, olla_error *err)
{
    const olla_dag *dag = pb->dag;
    const int *start_order = pb->start_order;
    const int64_t *start_offsets = pb->start_offsets;
    int64_t alignment = pb->alignment;
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
    joint_out res = {order_out, offsets_out, arena_out, proven_optimal};
    return solve_and_keep(pb, time_limit, start_arena, &res, err);
}
