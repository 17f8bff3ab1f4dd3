/* olla-onnx: the paper's address ILP (13) solved with CBC through its C API.
 * Offsets A_i are integers in [0, ub - S_i]; one binary per pair of buffers
 * live at the same time chooses which one lies below; the big-M is the
 * heuristic arena ub, the smallest value valid for every pair. The solver is
 * warm-started from the heuristic placement and its proven bound is read
 * back. The returned placement is re-packed in the ILP's offset order, so it
 * is valid even if the solver's values are slightly off. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <coin/Cbc_C_Interface.h>

#include "solver/olla_cbc_child.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"
#include "util/olla_grow.h"

/* Beyond this many overlapping pairs the ILP is not attempted: CBC then
 * spends seconds in its root LP, beyond the time limit it was given. */
#define OLLA_PLACE_ILP_MAX_PAIRS 3000
/* Work units charged per CBC node, and CBC's safety-net time without a
 * time limit. */
#define OLLA_PLACE_ILP_NODE_UNITS 4096
#define OLLA_PLACE_ILP_SECONDS 60.0
/* At most this many CBC nodes whatever the budget (CBC takes an int), and
 * never less than this many seconds for a solve. */
#define OLLA_PLACE_ILP_MAX_NODES 1000000
#define OLLA_PLACE_ILP_MIN_SECONDS 0.01

typedef struct pair {
    int i, j;
} pair;

/* The solve's result: the bound, whether there is a solution, then the n
 * offsets A_i. */
typedef struct addr_head {
    double best_possible;
    int has_solution;
    int node_limit, seconds_limit; /* what stopped CBC, if anything */
    int nodes;
} addr_head;

typedef struct addr_args {
    Cbc_Model *m;
    size_t n;
} addr_args;

/* The solve: CBC's bound, what stopped it and its solution into out. */
static olla_status addr_child(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    (void)err;
    const addr_args *a = ctx;
    if (cbc_limit > 0)
        Cbc_setMaximumSeconds(a->m, cbc_limit);
    Cbc_solve(a->m);
    addr_head h = {Cbc_getBestPossibleObjValue(a->m), 0, Cbc_isNodeLimitReached(a->m),
                   Cbc_isSecondsLimitReached(a->m), Cbc_getNodeCount(a->m)};
    const double *x = Cbc_bestSolution(a->m);
    if (x) {
        h.has_solution = 1;
        memcpy((char *)out + sizeof h, x, a->n * sizeof(double));
    }
    memcpy(out, &h, sizeof h);
    return OLLA_OK;
}

/* Each buffer, in order of off, rests on the highest buffer below it that is
 * live at the same time. */
static int64_t repack(const olla_pitem *it, size_t n, const int64_t *off, int64_t *out)
{
    olla_pkey *keys = malloc((n + 1) * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < n; i++)
        keys[i] = (olla_pkey){off[i], 0, (int)i};
    olla_place_sort_keys(keys, n);
    for (size_t a = 0; a < n; a++) {
        int i = keys[a].idx;
        int64_t h = 0;
        for (size_t b = 0; b < a; b++) {
            int j = keys[b].idx;
            if (it[j].lower < it[i].upper && it[i].lower < it[j].upper &&
                out[j] + it[j].size > h)
                h = out[j] + it[j].size;
        }
        out[i] = h;
    }
    free(keys);
    return olla_place_items_arena(it, out, n);
}

/* One solve of the address ILP: the problem, the overlapping pairs, the
 * model and its warm start (start and idx: one entry per column). */
typedef struct addr_ilp {
    const olla_place_ilp_problem *pb;
    pair *pairs;
    size_t np, cap;
    double *start;
    int *idx;
    Cbc_Model *m;
} addr_ilp;

/* The pairs of buffers live at the same time. Returns 1, 0 when there are
 * more than OLLA_PLACE_ILP_MAX_PAIRS (the ILP is not attempted), -1 when
 * out of memory. */
static int overlapping_pairs(addr_ilp *a)
{
    const olla_pitem *it = a->pb->it;
    size_t n = a->pb->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (!(it[i].lower < it[j].upper && it[j].lower < it[i].upper))
                continue;
            if (a->np == OLLA_PLACE_ILP_MAX_PAIRS)
                return 0; /* too large: keep the warm start */
            pair *g = olla_grow(a->pairs, &a->cap, a->np + 1, sizeof *g);
            if (!g)
                return -1;
            a->pairs = g;
            a->pairs[a->np++] = (pair){(int)i, (int)j};
        }
    return 1;
}

/* The columns (A_i, the peak, one y per pair) and the rows: A_i + S_i <=
 * peak, and for each pair i below j or j below i. */
static void addr_model(addr_ilp *a)
{
    const olla_place_ilp_problem *pb = a->pb;
    const olla_pitem *it = pb->it;
    size_t n = pb->n;
    Cbc_Model *m = a->m;
    double M = (double)pb->ub;
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "A%zu", i);
        Cbc_addCol(m, name, 0.0, (double)(pb->ub - it[i].size), 0.0, 1, 0, NULL, NULL);
    }
    int peak = (int)n;
    Cbc_addCol(m, "peak", (double)pb->lb, (double)pb->ub, 1.0, 0, 0, NULL, NULL);
    for (size_t p = 0; p < a->np; p++) {
        snprintf(name, sizeof name, "y%d_%d", a->pairs[p].i, a->pairs[p].j);
        Cbc_addCol(m, name, 0.0, 1.0, 0.0, 1, 0, NULL, NULL);
    }
    for (size_t i = 0; i < n; i++) { /* A_i + S_i <= peak */
        int cols[2] = {(int)i, peak};
        double co[2] = {1.0, -1.0};
        snprintf(name, sizeof name, "peak%zu", i);
        Cbc_addRow(m, name, 2, cols, co, 'L', -(double)it[i].size);
    }
    for (size_t p = 0; p < a->np; p++) {
        int i = a->pairs[p].i, j = a->pairs[p].j, y = (int)(n + 1 + p);
        /* y = 1: i below j, A_i + S_i <= A_j ; y = 0: j below i */
        int cols[3] = {i, j, y};
        double below[3] = {1.0, -1.0, M};
        snprintf(name, sizeof name, "b%zu", p);
        Cbc_addRow(m, name, 3, cols, below, 'L', M - (double)it[i].size);
        double above[3] = {-1.0, 1.0, -M};
        snprintf(name, sizeof name, "a%zu", p);
        Cbc_addRow(m, name, 3, cols, above, 'L', -(double)it[j].size);
    }
}

/* The warm start (the offsets warm, the arena ub) and CBC's settings: the
 * gap, no preprocessing, a node limit from w's budget and w's deadline.
 * Returns the seconds to give the solve. */
static double addr_settings(addr_ilp *a, const olla_pwork *w)
{
    const olla_place_ilp_problem *pb = a->pb;
    size_t n = pb->n;
    Cbc_Model *m = a->m;
    for (size_t i = 0; i < n; i++) {
        a->idx[i] = (int)i;
        a->start[i] = (double)pb->warm[i];
    }
    a->idx[n] = (int)n;
    a->start[n] = (double)pb->ub;
    for (size_t p = 0; p < a->np; p++) {
        int i = a->pairs[p].i, j = a->pairs[p].j;
        a->idx[n + 1 + p] = (int)(n + 1 + p);
        a->start[n + 1 + p] = pb->warm[i] + pb->it[i].size <= pb->warm[j] ? 1.0 : 0.0;
    }
    Cbc_setMIPStartI(m, (int)(n + 1 + a->np), a->idx, a->start);
    Cbc_setAllowableGap(m, 0.999);
    /* CBC 2.10 can crash in CglPreProcess::postProcess when a time limit
     * stops it; the model is small and plain, so preprocessing is off. */
    Cbc_setParameter(m, "preprocess", "off");
    Cbc_setParameter(m, "timeMode", "cpu");
    /* the budget: a node limit (deterministic); the time only as a safety net */
    long long nodes = olla_pwork_left(w) / OLLA_PLACE_ILP_NODE_UNITS;
    Cbc_setMaximumNodes(m, nodes > OLLA_PLACE_ILP_MAX_NODES ? OLLA_PLACE_ILP_MAX_NODES
                           : nodes < 1                      ? 1
                                                            : (int)nodes);
    double seconds = w->deadline > 0 ? olla_deadline_left(w->deadline) : OLLA_PLACE_ILP_SECONDS;
    return seconds < OLLA_PLACE_ILP_MIN_SECONDS ? OLLA_PLACE_ILP_MIN_SECONDS : seconds;
}

/* What the solve tells: what stopped it and its work into w, its proven
 * bound into *bound, and its solution, re-packed, into off and *arena when
 * smaller. */
static void addr_result(const addr_ilp *a, const addr_head *h, const double *x, olla_pwork *w, int64_t *off,
                        int64_t *arena, int64_t *bound)
{
    const olla_place_ilp_problem *pb = a->pb;
    size_t n = pb->n;
    if (h->seconds_limit)
        w->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
    else if (h->node_limit)
        w->stopped |= 1 << OLLA_PLACE_STOPPED_BUDGET;
    w->used += (long long)h->nodes * OLLA_PLACE_ILP_NODE_UNITS;
    double bp = h->best_possible;
    if (isfinite(bp) && bp > (double)pb->lb) {
        int64_t b = (int64_t)ceil(bp - 1e-6);
        if (b > *bound)
            *bound = b;
    }
    if (!x)
        return;
    int64_t *rounded = malloc((n + 1) * sizeof *rounded), *sol = malloc((n + 1) * sizeof *sol);
    if (rounded && sol) {
        for (size_t i = 0; i < n; i++)
            rounded[i] = (int64_t)llround(x[i]);
        int64_t got = repack(pb->it, n, rounded, sol);
        if (got >= 0 && got < *arena) {
            *arena = got;
            memcpy(off, sol, n * sizeof *off);
        }
    }
    free(rounded);
    free(sol);
}

/* Pairs, model, solve, result (place_internal.h). */
olla_status olla_place_ilp(const olla_place_ilp_problem *pb, olla_pwork *w, const olla_logger *log, int64_t *off,
                           int64_t *arena, int64_t *bound, olla_error *err)
{
    size_t n = pb->n;
    memcpy(off, pb->warm, n * sizeof *off);
    *arena = pb->ub;
    *bound = pb->lb;
    if (olla_pwork_left(w) < OLLA_PLACE_ILP_NODE_UNITS) { /* not one node's worth left */
        w->stopped |= 1 << OLLA_PLACE_STOPPED_BUDGET;
        return OLLA_OK;
    }
    addr_ilp a = {.pb = pb};
    int got = overlapping_pairs(&a);
    if (got <= 0) {
        free(a.pairs);
        return got == 0 ? OLLA_OK : olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
    }
    size_t ncol = n + 1 + a.np;
    a.start = malloc(ncol * sizeof *a.start);
    a.idx = malloc(ncol * sizeof *a.idx);
    a.m = Cbc_newModel();
    size_t len = sizeof(addr_head) + n * sizeof(double);
    char *res = a.start && a.idx && a.m ? calloc(len, 1) : NULL;
    olla_status st = OLLA_OK;
    if (!res) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
        goto done;
    }
    Cbc_setLogLevel(a.m, olla_log_wants(log, OLLA_LOG_SOLVER_OUTPUT) ? 1 : 0);
    addr_model(&a);
    double seconds = addr_settings(&a, w);
    /* with a time limit CBC runs in a child process killed at the deadline:
     * its root LP does not check the limit, and a crash inside it is not
     * fatal here */
    addr_args args = {a.m, n};
    olla_cbc_outcome outcome = {0};
    st = olla_cbc_child_run(&(olla_cbc_job){addr_child, &args, res, len}, seconds, &outcome, err);
    if (st != OLLA_OK)
        goto done;
    if (outcome.crash_signal)
        olla_log(log, OLLA_LOG_DETAIL, "place: CBC crashed (signal %d); the address ILP is skipped",
                 outcome.crash_signal);
    if (outcome.finished) {
        addr_head h;
        memcpy(&h, res, sizeof h);
        addr_result(&a, &h, h.has_solution ? (const double *)(res + sizeof h) : NULL, w, off, arena, bound);
    } else {
        w->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
    }
    if (*bound > *arena)
        *bound = *arena;
    olla_log(log, OLLA_LOG_DETAIL, "place: address ILP with %zu pairs: arena %lld, bound %lld", a.np, (long long)*arena,
             (long long)*bound);
done:
    free(res);
    if (a.m)
        Cbc_deleteModel(a.m);
    free(a.pairs);
    free(a.start);
    free(a.idx);
    return st;
}
