/* olla-onnx: the ordering step: heuristics, local improvement, lower bounds
 * and the ILP, keeping the best order found and never a worse one than the
 * input order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_clock.h"
#include "solver/olla_schedule.h"

typedef struct {
    const olla_dag *dag;
    double t0;
    int *best;
    int64_t best_peak;
    int source; /* 0 input, 1 heuristic, 2 ilp */
    int verbosity;
} keeper;

/* Work budgets, so that the same graph gets the same order on a quiet and a
 * busy machine: the time limit is only a safety net. Sizes are in elements
 * of the graph (nodes, tensors and edges), a rough cost of one evaluation of
 * a whole order. */
#define LOCAL_WORK 40000000L /* per local improvement: evaluations x size */
#define PAIR_WORK 4000000L   /* per pair-bound pass: minimum cuts x size */

static long graph_size(const olla_dag *dag)
{
    return (long)dag->n_nodes + dag->n_tensors + (dag->n_tensors ? dag->sink_start[dag->n_tensors] : 0) + 1;
}

static olla_limit work_limit(const olla_dag *dag, long work, long at_least, double deadline)
{
    long b = work / graph_size(dag);
    return (olla_limit){b > at_least ? b : at_least, deadline};
}

static void offer(keeper *k, const int *order, int source, const char *name)
{
    if (!olla_dag_is_topological(k->dag, order))
        return;
    int64_t pk = 0;
    olla_error oom = {0};
    if (olla_dag_peak(k->dag, order, &pk, NULL, NULL, &oom) != OLLA_OK)
        return; /* out of memory: the candidate is not kept */
    if (k->verbosity >= 2)
        fprintf(stderr, "olla: order %-22s peak %lld (%.3f s)\n", name, (long long)pk, olla_now() - k->t0);
    if (pk < k->best_peak) {
        k->best_peak = pk;
        k->source = source;
        memcpy(k->best, order, (size_t)k->dag->n_nodes * sizeof(int));
    }
}

/* states of the exact search kept within a few hundred MB */
static long state_budget(int n)
{
    long per = (long)((n + 63) / 64) * 8 + 40;
    long cap = (256L << 20) / per;
    return cap < 2000000L ? cap : 2000000L;
}

/* pairs only raise the bound; a budget of minimum cuts bounds their work */
static void raise_by_pairs(const olla_dag *dag, const olla_reach *reach, const keeper *k, double deadline,
                           int64_t *lb, olla_error *err)
{
    olla_limit lim = work_limit(dag, PAIR_WORK, 16, deadline);
    if (*lb < k->best_peak && olla_bound_pairs(dag, reach, k->best, k->best_peak, 8, lim, lb, err) != OLLA_OK)
        olla_error_clear(err);
}

/* Reachability takes n^2/4 bytes; beyond this many nodes neither the
 * closure bound nor the ILP (which needs it too) is attempted. */
#define OLLA_SCHED_REACH_MAX_NODES 20000

typedef olla_status (*heur_fn)(const olla_dag *, double, int *, olla_error *);

static olla_status dfs_post(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    (void)deadline; /* linear time */
    return olla_sched_dfs_post(dag, order, err);
}

olla_status olla_schedule(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                          int *order_out, olla_schedule_result *res, olla_error *err)
{
    double t0 = olla_now();
    if (!dag || !order_out || !res)
        return olla_error_set(err, OLLA_ERR_USAGE, "olla_schedule needs a graph, an output order and a result");
    olla_schedule_options dflt = {0, 1, 0};
    if (!opt)
        opt = &dflt;
    double deadline = opt->time_limit > 0 ? t0 + opt->time_limit : 0;
    int n = dag->n_nodes;
    memset(res, 0, sizeof *res);
    res->status = "kept";
    int *work = malloc(((size_t)n + 1) * sizeof(int));
    int *best = malloc(((size_t)n + 1) * sizeof(int));
    int64_t *live = malloc(((size_t)n + 1) * sizeof(int64_t));
    int64_t *upper = malloc(((size_t)n + 1) * sizeof(int64_t));
    olla_dag aug;
    memset(&aug, 0, sizeof aug);
    olla_reach reach;
    memset(&reach, 0, sizeof reach);
    int *ef = NULL, *et = NULL, ne = 0;
    int64_t lb = 0, ub = 0;
    olla_status st = OLLA_OK;
    if (!work || !best || !live || !upper) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the ordering step (%d nodes)", n);
        goto done;
    }
    if (input_order) {
        if (!olla_dag_is_topological(dag, input_order)) {
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "the input order of %d nodes is not a topological order; give each node once, "
                                "after the producers of its inputs",
                                n);
            goto done;
        }
        memcpy(best, input_order, (size_t)n * sizeof(int));
    } else {
        st = olla_dag_stable_topo(dag, best, err);
        if (st != OLLA_OK)
            goto done;
    }
    keeper k = {dag, t0, best, 0, 0, opt->verbosity};
    if ((st = olla_dag_peak(dag, best, &k.best_peak, NULL, NULL, err)) != OLLA_OK)
        goto done;
    res->input_order_peak = k.best_peak;
    if (n == 0)
        goto finish;

    /* constructive heuristics, on the graph and on the graph with
     * early-update edges, then local improvement from the best starts, each
     * with a share of the time left */
    static const heur_fn heur[] = {olla_sched_greedy_free_until, olla_sched_least_peak_until, dfs_post};
    static const char *const heur_name[] = {"greedy-free", "least-peak", "dfs-post"};
    enum { N_START = 7 };
    int *starts = malloc((size_t)N_START * ((size_t)n + 1) * sizeof(int));
    int64_t sp[N_START];
    int sg[N_START], ns = 0;
    if (!starts) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the ordering step (%d nodes)", n);
        goto done;
    }
    memcpy(starts, best, (size_t)n * sizeof(int));
    sp[0] = k.best_peak;
    sg[0] = 0;
    ns = 1;
    if (olla_early_update_edges(dag, &ef, &et, &ne, err) != OLLA_OK ||
        (ne > 0 && olla_dag_add_edges(dag, ef, et, ne, &aug, err) != OLLA_OK)) {
        olla_error_clear(err); /* control edges are an optional speed-up */
        ne = 0;
    }
    for (int g = 0; g < (ne > 0 ? 2 : 1); g++) {
        const olla_dag *gd = g == 0 ? dag : &aug;
        for (size_t h = 0; h < sizeof heur / sizeof heur[0] && ns < N_START; h++) {
            int *o = starts + (size_t)ns * ((size_t)n + 1);
            if (heur[h](gd, deadline, o, err) != OLLA_OK) {
                olla_error_clear(err);
                continue;
            }
            char name[64];
            snprintf(name, sizeof name, "%s%s", heur_name[h], g ? "+early" : "");
            offer(&k, o, 1, name);
            if (olla_dag_peak(dag, o, &sp[ns], NULL, NULL, err) != OLLA_OK) {
                olla_error_clear(err);
                continue;
            }
            sg[ns] = g;
            ns++;
        }
    }
    for (int round = 0; round < ns; round++) {
        int pick = -1;
        for (int i = 0; i < ns; i++)
            if (sp[i] >= 0 && (pick < 0 || sp[i] < sp[pick]))
                pick = i;
        if (pick < 0)
            break;
        if (olla_past(deadline))
            break;
        int *o = starts + (size_t)pick * ((size_t)n + 1);
        olla_sched_local_improve(sg[pick] ? &aug : dag, o, work_limit(dag, LOCAL_WORK, 200, deadline));
        char name[64];
        snprintf(name, sizeof name, "start%d+local", pick);
        offer(&k, o, 1, name);
        sp[pick] = -1;
    }
    free(starts);
    if (!olla_past(deadline)) {
        memcpy(work, best, (size_t)n * sizeof(int));
        olla_sched_local_improve(dag, work, work_limit(dag, LOCAL_WORK, 200, deadline));
        offer(&k, work, 1, "best+local");
    }
    res->heuristic_peak = k.best_peak;

    /* lower bounds */
    lb = olla_bound_node_io(dag);
    int small = n <= OLLA_SCHED_REACH_MAX_NODES;
    int have_reach =
        small && !olla_past(deadline) && olla_reach_build(dag, &reach, err) == OLLA_OK;
    olla_error_clear(err);
    if (have_reach && olla_dag_peak(dag, best, &ub, live, NULL, err) == OLLA_OK) {
        for (int t = 0; t < n; t++)
            upper[best[t]] = live[t];
        int64_t cb = 0;
        if (olla_bound_closure(dag, &reach, upper, deadline, &cb, NULL, err) == OLLA_OK && cb > lb)
            lb = cb;
        olla_error_clear(err);
        raise_by_pairs(dag, &reach, &k, deadline, &lb, err);
    }
    if (opt->verbosity >= 2)
        fprintf(stderr, "olla: heuristic peak %lld, lower bound %lld (%.3f s)\n", (long long)k.best_peak,
                (long long)lb, olla_now() - t0);

    /* exact reordering of windows around the peak */
    static const int halves[] = {8, 16, 32};
    for (size_t h = 0; h < sizeof halves / sizeof halves[0] && k.best_peak > lb; h++) {
        if (olla_past(deadline))
            break;
        memcpy(work, best, (size_t)n * sizeof(int));
        int64_t wpk = 0;
        if (olla_sched_window_improve(dag, work, halves[h], state_budget(n) / 8, deadline, &wpk, err) != OLLA_OK) {
            olla_error_clear(err); /* an optional improvement; the best order so far stays */
            continue;
        }
        olla_sched_local_improve(dag, work, work_limit(dag, LOCAL_WORK, 200, deadline));
        char name[64];
        snprintf(name, sizeof name, "window%d+local", halves[h]);
        int64_t before = k.best_peak;
        offer(&k, work, 1, name);
        if (have_reach && k.best_peak < before && k.best_peak > lb)
            raise_by_pairs(dag, &reach, &k, deadline, &lb, err);
    }

    /* segments between nodes ordered with all others, solved exactly */
    if (have_reach && k.best_peak > lb && !olla_past(deadline)) {
        int nseg = 0, solved = 0;
        memcpy(work, best, (size_t)n * sizeof(int));
        if (olla_sched_split_solve(dag, &reach, work, state_budget(n), deadline, &nseg, &solved, err) == OLLA_OK) {
            offer(&k, work, 1, "segments");
            if (solved)
                lb = k.best_peak;
        }
        olla_error_clear(err);
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: %d segments, %s (%.3f s)\n", nseg, solved ? "all solved" : "not all solved",
                    olla_now() - t0);
    }

    /* exact search over sets of nodes run, for orders below the best peak */
    if (k.best_peak > lb && !olla_past(deadline)) {
        int64_t dpk = 0;
        int outcome = OLLA_DP_GAVE_UP;
        olla_error derr = {0};
        if (olla_sched_exact_dp(dag, k.best_peak, state_budget(n), deadline, work, &dpk, &outcome, &derr) == OLLA_OK) {
            if (outcome == OLLA_DP_FOUND) {
                offer(&k, work, 1, "exact");
                if (dpk > lb)
                    lb = dpk;
            } else if (outcome == OLLA_DP_NONE_BETTER) {
                lb = k.best_peak;
            }
        }
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: exact search: %s (%.3f s)\n",
                    outcome == OLLA_DP_FOUND         ? "best order found"
                    : outcome == OLLA_DP_NONE_BETTER ? "no better order exists"
                                                     : "gave up",
                    olla_now() - t0);
    }

    /* the ILP, warm-started with the best order */
    if (opt->use_ilp && small && k.best_peak > lb) {
        double left = deadline > 0 ? deadline - olla_now() : 0;
        if (deadline <= 0 || left > 0.05) {
            olla_ilp_info info;
            olla_error ierr = {0};
            if (olla_sched_ilp(dag, best, lb, deadline > 0 ? left : 0, opt->verbosity, work, &info, &ierr) ==
                OLLA_OK) {
                if (info.found)
                    offer(&k, work, 2, "ilp");
                if (info.bound > lb)
                    lb = info.bound;
            } else if (opt->verbosity >= 2) {
                fprintf(stderr, "olla: ILP skipped: %s\n", ierr.message);
            }
        }
    }
    if (lb > k.best_peak)
        lb = k.best_peak; /* cannot happen with exact bounds; keep the report consistent */

finish:
    memcpy(order_out, best, (size_t)n * sizeof(int));
    if (!olla_dag_is_topological(dag, order_out)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "the ordering step produced an invalid order; please report");
        goto done;
    }
    res->peak_bytes = k.best_peak;
    res->lower_bound_bytes = lb;
    /* what ended the search: a proof, the work budgets, or the time limit
     * (which cut a stage short only if it passed) */
    res->stopped_by = k.best_peak == lb ? "proof" : deadline > 0 && olla_now() > deadline ? "time" : "budget";
    if (res->heuristic_peak == 0)
        res->heuristic_peak = k.best_peak;
    if (k.best_peak == res->lower_bound_bytes)
        res->status = "optimal";
    else if (k.source == 2)
        res->status = "feasible";
    else if (k.source == 1)
        res->status = "heuristic";
    else
        res->status = "kept";
done:
    res->seconds = olla_now() - t0;
    olla_dag_free(&aug);
    olla_reach_free(&reach);
    free(ef);
    free(et);
    free(work);
    free(best);
    free(live);
    free(upper);
    return st;
}
