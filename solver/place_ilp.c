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

olla_status olla_place_ilp(const olla_pitem *it, size_t n, const int64_t *warm, int64_t ub,
                           int64_t lb, olla_pwork *w, int64_t *off, int64_t *arena,
                           int64_t *bound, const olla_logger *log, olla_error *err)
{
    memcpy(off, warm, n * sizeof *off);
    *arena = ub;
    *bound = lb;
    size_t np = 0, cap = 64;
    pair *pairs = malloc(cap * sizeof *pairs);
    if (!pairs)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (!(it[i].lower < it[j].upper && it[j].lower < it[i].upper))
                continue;
            if (np == OLLA_PLACE_ILP_MAX_PAIRS) {
                free(pairs);
                return OLLA_OK; /* too large: keep the warm start */
            }
            if (np == cap) {
                pair *g = realloc(pairs, 2 * cap * sizeof *g);
                if (!g) {
                    free(pairs);
                    return olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
                }
                pairs = g;
                cap *= 2;
            }
            pairs[np++] = (pair){(int)i, (int)j};
        }
    size_t ncol = n + 1 + np;
    double *start = malloc(ncol * sizeof *start);
    int *idx = malloc(ncol * sizeof *idx);
    int64_t *sol = malloc((n + 1) * sizeof *sol);
    Cbc_Model *m = Cbc_newModel();
    if (!start || !idx || !sol || !m) {
        free(pairs);
        free(start);
        free(idx);
        free(sol);
        if (m)
            Cbc_deleteModel(m);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
    }
    Cbc_setLogLevel(m, olla_log_wants(log, OLLA_LOG_SOLVER_OUTPUT) ? 1 : 0);
    double M = (double)ub;
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "A%zu", i);
        Cbc_addCol(m, name, 0.0, (double)(ub - it[i].size), 0.0, 1, 0, NULL, NULL);
    }
    int peak = (int)n;
    Cbc_addCol(m, "peak", (double)lb, (double)ub, 1.0, 0, 0, NULL, NULL);
    for (size_t p = 0; p < np; p++) {
        snprintf(name, sizeof name, "y%d_%d", pairs[p].i, pairs[p].j);
        Cbc_addCol(m, name, 0.0, 1.0, 0.0, 1, 0, NULL, NULL);
    }
    for (size_t i = 0; i < n; i++) { /* A_i + S_i <= peak */
        int cols[2] = {(int)i, peak};
        double co[2] = {1.0, -1.0};
        snprintf(name, sizeof name, "peak%zu", i);
        Cbc_addRow(m, name, 2, cols, co, 'L', -(double)it[i].size);
    }
    for (size_t p = 0; p < np; p++) {
        int i = pairs[p].i, j = pairs[p].j, y = (int)(n + 1 + p);
        /* y = 1: i below j, A_i + S_i <= A_j ; y = 0: j below i */
        int cols[3] = {i, j, y};
        double below[3] = {1.0, -1.0, M};
        snprintf(name, sizeof name, "b%zu", p);
        Cbc_addRow(m, name, 3, cols, below, 'L', M - (double)it[i].size);
        double above[3] = {-1.0, 1.0, -M};
        snprintf(name, sizeof name, "a%zu", p);
        Cbc_addRow(m, name, 3, cols, above, 'L', -(double)it[j].size);
    }
    for (size_t i = 0; i < n; i++) {
        idx[i] = (int)i;
        start[i] = (double)warm[i];
    }
    idx[n] = peak;
    start[n] = (double)ub;
    for (size_t p = 0; p < np; p++) {
        int i = pairs[p].i, j = pairs[p].j;
        idx[n + 1 + p] = (int)(n + 1 + p);
        start[n + 1 + p] = warm[i] + it[i].size <= warm[j] ? 1.0 : 0.0;
    }
    Cbc_setMIPStartI(m, (int)ncol, idx, start);
    Cbc_setAllowableGap(m, 0.999);
    /* CBC 2.10 can crash in CglPreProcess::postProcess when a time limit
     * stops it; the model is small and plain, so preprocessing is off. */
    Cbc_setParameter(m, "preprocess", "off");
    Cbc_setParameter(m, "timeMode", "elapsed");
    /* the budget: a node limit (deterministic); the time only as a safety net */
    long long nodes = olla_pwork_left(w) / OLLA_PLACE_ILP_NODE_UNITS;
    Cbc_setMaximumNodes(m, nodes > OLLA_PLACE_ILP_MAX_NODES ? OLLA_PLACE_ILP_MAX_NODES
                           : nodes < 1                      ? 1
                                                            : (int)nodes);
    double seconds = w->deadline > 0 ? w->deadline - olla_now() : OLLA_PLACE_ILP_SECONDS;
    if (seconds < OLLA_PLACE_ILP_MIN_SECONDS)
        seconds = OLLA_PLACE_ILP_MIN_SECONDS;
    /* with a time limit CBC runs in a child process killed at the deadline:
     * its root LP does not check the limit, and a crash inside it is not
     * fatal here */
    size_t len = sizeof(addr_head) + n * sizeof(double);
    char *res = calloc(len, 1);
    addr_args args = {m, n};
    int finished = 0, crash = 0;
    olla_status st = res ? olla_cbc_child_run(addr_child, &args, res, len, seconds, &finished, &crash, err)
                         : olla_error_set(err, OLLA_ERR_INTERNAL, "address ILP: out of memory");
    if (st != OLLA_OK)
        goto done;
    if (crash)
        olla_log(log, OLLA_LOG_DETAIL, "place: CBC crashed (signal %d); the address ILP is skipped", crash);
    addr_head h = {NAN, 0, 0, 0, 0};
    if (finished)
        memcpy(&h, res, sizeof h);
    if (!finished || h.seconds_limit)
        w->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
    else if (h.node_limit)
        w->stopped |= 1 << OLLA_PLACE_STOPPED_BUDGET;
    if (finished)
        w->used += (long long)h.nodes * OLLA_PLACE_ILP_NODE_UNITS;
    double bp = h.best_possible;
    if (isfinite(bp) && bp > (double)lb) {
        int64_t b = (int64_t)ceil(bp - 1e-6);
        if (b > *bound)
            *bound = b;
    }
    const double *x = h.has_solution ? (const double *)(res + sizeof h) : NULL;
    if (x) {
        for (size_t i = 0; i < n; i++)
            start[i] = x[i];
        int64_t *rounded = malloc((n + 1) * sizeof *rounded);
        if (rounded) {
            for (size_t i = 0; i < n; i++)
                rounded[i] = (int64_t)llround(start[i]);
            int64_t a = repack(it, n, rounded, sol);
            if (a >= 0 && a < *arena) {
                *arena = a;
                memcpy(off, sol, n * sizeof *off);
            }
            free(rounded);
        }
    }
    if (*bound > *arena)
        *bound = *arena;
    olla_log(log, OLLA_LOG_DETAIL, "place: address ILP with %zu pairs: arena %lld, bound %lld", np,
             (long long)*arena, (long long)*bound);
done:
    free(res);
    Cbc_deleteModel(m);
    free(pairs);
    free(start);
    free(idx);
    free(sol);
    return st;
}
