/* olla-onnx: the ordering step: bounds, heuristics, local improvement,
 * exact searches and the ILP, keeping the best order found and never a
 * worse one than the input order. It stops as soon as the best order meets
 * the lower bound: the order is then optimal.
 *
 * Every stage works on graphs of any size with costs that grow gently: the
 * analyses take linear memory, and each search has a work budget sized by
 * the graph (so the same graph gets the same order on a quiet and a busy
 * machine); the time limit is only a safety net. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_clock.h"
#include "solver/olla_schedule.h"

/* Work budgets. Sizes are in elements of the graph (nodes, tensors and
 * edges), a rough cost of one evaluation of a whole order; the bounds count
 * the arcs their minimum cuts scan. */
#define LOCAL_WORK 40000000L    /* per local improvement: evaluations x size */
#define CLOSURE_WORK 400000000L /* the closure bound: arcs scanned */
#define PAIR_WORK 200000000L    /* per pair-bound pass: arcs scanned */
#define DP_WORK 100000000L     /* per exact search: states x candidates */
#define DP_MAX_STATES 2000000L
#define WINDOW_STATES 150000L  /* per window size, all windows together */
/* A local improvement gets at least this many evaluations whatever the
 * graph's size. */
#define LOCAL_MIN_EVALUATIONS 200
/* The pair bound tries the nodes at this many of the highest steps. */
#define PAIR_TRIES 8
/* The exact reordering of windows around the peak: half-widths from the
 * first, doubling, up to the last. */
#define WINDOW_HALF_FIRST 8
#define WINDOW_HALF_LAST 32
/* A start's name in the -v lines: "least-peak+early+local" and the like. */
#define START_NAME_BYTES 64
/* The ILP is not started with less time than this left. */
#define ILP_MIN_SECONDS 0.05

typedef struct {
    const olla_dag *dag;
    const olla_schedule_options *opt;
    double t0, deadline;
    int n;
    int *best; /* the best order so far */
    int64_t best_peak;
    int source; /* 0 input, 1 heuristic, 2 ilp */
    int64_t lb; /* the best lower bound so far */
    int *work;  /* scratch order */
    olla_schedule_alternatives *alt; /* NULL, or the other orders at best_peak */
    olla_dag aug; /* the graph with early-update edges (aug.n_nodes 0: none) */
    int pairs_in_vain; /* a pair-bound pass spent its whole budget and raised nothing */
} sched;

static long graph_size(const olla_dag *dag)
{
    return (long)dag->n_nodes + dag->n_tensors + (dag->n_tensors ? dag->sink_start[dag->n_tensors] : 0) + 1;
}

static olla_limit work_limit(const sched *s, long work, long at_least)
{
    long b = work / graph_size(s->dag);
    return (olla_limit){b > at_least ? b : at_least, s->deadline};
}

/* states of one exact search over ncand nodes */
static long state_budget(int ncand)
{
    long b = DP_WORK / (ncand > 0 ? ncand : 1);
    return b < DP_MAX_STATES ? b : DP_MAX_STATES;
}

static int proven(const sched *s)
{
    return s->best_peak <= s->lb;
}

static int time_left(const sched *s)
{
    return !olla_past(s->deadline);
}

static void say(const sched *s, const char *what, int64_t value)
{
    olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: %-30s %lld (%.3f s)", what, (long long)value, olla_now() - s->t0);
}

static void raise_lb(sched *s, int64_t b, const char *what)
{
    if (b > s->lb) {
        s->lb = b;
        say(s, what, b);
    }
}

/* Keeps order among the alternatives when it is another order than the
 * best and those kept, and there is room. */
static void keep_alternative(sched *s, const int *order)
{
    size_t bytes = (size_t)s->n * sizeof(int);
    olla_schedule_alternatives *alt = s->alt;
    if (!alt || alt->n >= alt->max || !memcmp(order, s->best, bytes))
        return;
    for (int k = 0; k < alt->n; k++)
        if (!memcmp(order, alt->orders + (size_t)k * (size_t)s->n, bytes))
            return;
    memcpy(alt->orders + (size_t)alt->n++ * (size_t)s->n, order, bytes);
}

static void offer(sched *s, const int *order, int source, const char *name)
{
    if (!olla_dag_is_topological(s->dag, order))
        return;
    int64_t pk = 0;
    olla_error oom = {0};
    if (olla_dag_peak(s->dag, order, &pk, NULL, NULL, &oom) != OLLA_OK)
        return; /* out of memory: the candidate is not kept */
    olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: order %-24s peak %lld (%.3f s)", name, (long long)pk,
             olla_now() - s->t0);
    if (pk < s->best_peak) {
        s->best_peak = pk;
        s->source = source;
        if (s->alt)
            s->alt->n = 0; /* they were at the old peak */
        memcpy(s->best, order, (size_t)s->n * sizeof(int));
    } else if (pk == s->best_peak) {
        keep_alternative(s, order);
    }
}

/* ---- heuristics ---- */

typedef olla_status (*heur_fn)(const olla_dag *, double, int *, olla_error *);

static olla_status dfs_post(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    (void)deadline; /* linear time */
    return olla_sched_dfs_post(dag, order, err);
}

static olla_status reverse_sched(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    return olla_sched_reverse_until(dag, deadline, order, err);
}

enum { N_START = 7 };

/* The starts of one family (forward or backward heuristics), on the graph
 * and on the graph with early-update edges, each offered and then improved
 * locally, the best first. starts: N_START orders of n + 1. */
static void starts_of(sched *s, const heur_fn *heur, const char *const *heur_name, int nh, int *starts,
                      olla_error *err)
{
    int n = s->n, ns = 0, have_aug = s->aug.n_nodes > 0;
    int64_t sp[N_START];
    int sg[N_START], sh[N_START];
    for (int g = 0; g < (have_aug ? 2 : 1) && !proven(s); g++) {
        const olla_dag *gd = g == 0 ? s->dag : &s->aug;
        for (int h = 0; h < nh && ns < N_START && !proven(s); h++) {
            int *o = starts + (size_t)ns * ((size_t)n + 1);
            if (heur[h](gd, s->deadline, o, err) != OLLA_OK) {
                olla_error_clear(err);
                continue;
            }
            char name[START_NAME_BYTES];
            snprintf(name, sizeof name, "%s%s", heur_name[h], g ? "+early" : "");
            offer(s, o, 1, name);
            if (olla_dag_peak(s->dag, o, &sp[ns], NULL, NULL, err) != OLLA_OK) {
                olla_error_clear(err);
                continue;
            }
            sh[ns] = h;
            sg[ns++] = g;
        }
    }
    for (int round = 0; round < ns && !proven(s) && time_left(s); round++) {
        int pick = -1;
        for (int i = 0; i < ns; i++)
            if (sp[i] >= 0 && (pick < 0 || sp[i] < sp[pick]))
                pick = i;
        if (pick < 0)
            break;
        int *o = starts + (size_t)pick * ((size_t)n + 1);
        olla_sched_local_improve(sg[pick] ? &s->aug : s->dag, o, work_limit(s, LOCAL_WORK, LOCAL_MIN_EVALUATIONS));
        char name[START_NAME_BYTES];
        snprintf(name, sizeof name, "%s%s+local", heur_name[sh[pick]], sg[pick] ? "+early" : "");
        offer(s, o, 1, name);
        sp[pick] = -1;
    }
}

/* Constructive heuristics and local improvement: the input order and the
 * forward list schedulers first, then the backward one, which is kept only
 * where it is strictly better (on equal peaks the forward orders' lifetimes
 * nest more and place more easily). */
static void heuristics(sched *s, olla_error *err)
{
    static const heur_fn fwd[] = {olla_sched_greedy_free_until, olla_sched_least_peak_until, dfs_post};
    static const char *const fwd_name[] = {"forward", "least-peak", "dfs-post"};
    static const heur_fn bwd[] = {reverse_sched};
    static const char *const bwd_name[] = {"reverse"};
    int n = s->n;
    int *starts = malloc((size_t)N_START * ((size_t)n + 1) * sizeof(int));
    if (!starts)
        return; /* out of memory: the input order stays */
    int *ef = NULL, *et = NULL, ne = 0;
    if (olla_early_update_edges(s->dag, &ef, &et, &ne, err) != OLLA_OK ||
        (ne > 0 && olla_dag_add_edges(s->dag, ef, et, ne, &s->aug, err) != OLLA_OK)) {
        olla_error_clear(err); /* control edges are an optional speed-up */
        memset(&s->aug, 0, sizeof s->aug);
    }
    free(ef);
    free(et);
    /* the input order improved locally is a start of its own */
    memcpy(starts, s->best, (size_t)n * sizeof(int));
    if (!proven(s) && time_left(s)) {
        olla_sched_local_improve(s->dag, starts, work_limit(s, LOCAL_WORK, LOCAL_MIN_EVALUATIONS));
        offer(s, starts, 1, "input+local");
    }
    starts_of(s, fwd, fwd_name, (int)(sizeof fwd / sizeof fwd[0]), starts, err);
    starts_of(s, bwd, bwd_name, (int)(sizeof bwd / sizeof bwd[0]), starts, err);
    free(starts);
    /* the best so far, also without the earlier moves of blocks: another
     * local optimum */
    for (int blocks = 0; blocks < 2 && !proven(s) && time_left(s); blocks++) {
        memcpy(s->work, s->best, (size_t)n * sizeof(int));
        olla_sched_local_improve_moves(s->dag, s->work, work_limit(s, LOCAL_WORK, LOCAL_MIN_EVALUATIONS), blocks);
        offer(s, s->work, 1, blocks ? "best+local" : "best+local-singles");
    }
}

/* ---- bounds ---- */

/* The per-node closure bound, where the best order is above the bound so
 * far, then pairs. */
static void closure_bounds(sched *s, olla_error *err)
{
    int n = s->n;
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live), *upper = malloc(((size_t)n + 1) * sizeof *upper);
    int64_t ub = 0;
    if (live && upper && olla_dag_peak(s->dag, s->best, &ub, live, NULL, err) == OLLA_OK) {
        for (int t = 0; t < n; t++)
            upper[s->best[t]] = live[t];
        int64_t cb = s->lb;
        if (olla_bound_closure(s->dag, upper, (olla_limit){CLOSURE_WORK, s->deadline}, &cb, NULL, err) == OLLA_OK)
            raise_lb(s, cb, "closure bound");
    }
    olla_error_clear(err);
    free(live);
    free(upper);
}

/* pairs only raise the bound; a budget of minimum cuts bounds their work.
 * Once a pass has spent its whole budget and raised nothing, the passes
 * after a better order are skipped: on every graph measured such a graph's
 * later passes raised nothing either, at the same cost each
 * (bench/RESULTS.md: 0.23-0.34 s a pass on the AdamW LLM steps). */
static void pair_bound(sched *s, olla_error *err)
{
    int64_t pb = s->lb;
    long spent = 0;
    if (!proven(s) && !s->pairs_in_vain &&
        olla_bound_pairs(s->dag, s->best, s->best_peak, PAIR_TRIES, (olla_limit){PAIR_WORK, s->deadline}, &pb, &spent,
                         err) == OLLA_OK) {
        s->pairs_in_vain = pb <= s->lb && spent >= PAIR_WORK;
        raise_lb(s, pb, "pair bound");
        if (s->pairs_in_vain)
            olla_log(s->opt->log, OLLA_LOG_DETAIL,
                     "olla: pair bound: its budget (%ld arcs) spent without raising the bound; not run again (%.3f s)",
                     (long)PAIR_WORK, olla_now() - s->t0);
    }
    olla_error_clear(err);
}

/* ---- exact searches ---- */

/* exact reordering of windows around the peak */
static void windows(sched *s, olla_error *err)
{
    for (int half = WINDOW_HALF_FIRST; half <= WINDOW_HALF_LAST && !proven(s) && time_left(s); half *= 2) {
        memcpy(s->work, s->best, (size_t)s->n * sizeof(int));
        int64_t wpk = 0;
        if (olla_sched_window_improve(s->dag, s->work, half, WINDOW_STATES, s->deadline, &wpk, err) !=
            OLLA_OK) {
            olla_error_clear(err); /* an optional improvement; the best order so far stays */
            continue;
        }
        olla_sched_local_improve(s->dag, s->work, work_limit(s, LOCAL_WORK, LOCAL_MIN_EVALUATIONS));
        char name[START_NAME_BYTES];
        snprintf(name, sizeof name, "window%d+local", half);
        int64_t before = s->best_peak;
        offer(s, s->work, 1, name);
        if (s->best_peak < before)
            pair_bound(s, err);
    }
}

/* segments between nodes ordered with all others, solved exactly; 1 when
 * the graph is one segment (the whole search again) */
static int segments(sched *s, olla_error *err)
{
    int nseg = 0, solved = 0;
    memcpy(s->work, s->best, (size_t)s->n * sizeof(int));
    if (olla_sched_split_solve(s->dag, s->work, state_budget(s->n), s->deadline, &nseg, &solved, err) == OLLA_OK) {
        offer(s, s->work, 1, "segments");
        if (solved)
            raise_lb(s, s->best_peak, "segments solved");
    }
    olla_error_clear(err);
    olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: %d segments, %s (%.3f s)", nseg,
             solved ? "all solved" : "not all solved", olla_now() - s->t0);
    return nseg == 1 && solved == 0;
}

/* exact search over sets of nodes run, for orders below the best peak */
static void exact(sched *s)
{
    int64_t dpk = 0;
    int outcome = OLLA_DP_GAVE_UP;
    olla_error derr = {0};
    if (olla_sched_exact_dp(s->dag, s->best_peak, (olla_limit){state_budget(s->n), s->deadline}, s->work, &dpk,
                            &outcome, &derr) == OLLA_OK) {
        if (outcome == OLLA_DP_FOUND) {
            offer(s, s->work, 1, "exact");
            raise_lb(s, dpk, "exact search");
        } else if (outcome == OLLA_DP_NONE_BETTER) {
            raise_lb(s, s->best_peak, "exact search");
        }
    }
    olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: exact search: %s (%.3f s)",
             outcome == OLLA_DP_FOUND         ? "best order found"
             : outcome == OLLA_DP_NONE_BETTER ? "no better order exists"
                                              : "gave up (its budget of states)",
             olla_now() - s->t0);
}

/* the ILP, warm-started with the best order and given the bound */
static void ilp(sched *s)
{
    double left = s->deadline > 0 ? olla_deadline_left(s->deadline) : 0; /* CBC counts CPU seconds */
    if (s->deadline > 0 && left <= ILP_MIN_SECONDS)
        return;
    olla_ilp_info info;
    olla_error ierr = {0};
    if (olla_sched_ilp(&(olla_sched_ilp_problem){s->dag, s->best, s->lb},
                       &(olla_sched_ilp_settings){s->deadline > 0 ? left : 0, s->opt->log}, s->work, &info,
                       &ierr) == OLLA_OK) {
        if (info.found)
            offer(s, s->work, 2, "ilp");
        raise_lb(s, info.bound, "ilp bound");
    } else {
        olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: the scheduling ILP is skipped: %s", ierr.message);
    }
}

/* ---- the driver ---- */

static olla_status start(sched *s, const int *input_order, olla_error *err)
{
    if (input_order) {
        if (!olla_dag_is_topological(s->dag, input_order))
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "the input order of %d nodes is not a topological order; give each node once, "
                                  "after the producers of its inputs",
                                  s->n);
        memcpy(s->best, input_order, (size_t)s->n * sizeof(int));
    } else {
        olla_status st = olla_dag_stable_topo(s->dag, s->best, err);
        if (st != OLLA_OK)
            return st;
    }
    return olla_dag_peak(s->dag, s->best, &s->best_peak, NULL, NULL, err);
}

static void finish(sched *s, olla_schedule_result *res)
{
    if (s->lb > s->best_peak)
        s->lb = s->best_peak; /* cannot happen with exact bounds; keep the report consistent */
    res->peak_bytes = s->best_peak;
    res->lower_bound_bytes = s->lb;
    if (s->alt && s->source == 0)
        s->alt->n = 0; /* a kept input order stays */
    /* what ended the search: a proof, the work budgets, or the time limit
     * (which cut a stage short only if it passed) */
    res->stopped_by = proven(s) ? "proof" : !time_left(s) ? "time" : "budget";
    if (res->heuristic_peak == 0)
        res->heuristic_peak = s->best_peak;
    if (proven(s))
        res->status = "optimal";
    else
        res->status = s->source == 2 ? "feasible" : s->source == 1 ? "heuristic" : "kept";
}

/* every stage in turn, each only while the order is not proven optimal */
static void stages(sched *s, olla_schedule_result *res, olla_error *err)
{
    raise_lb(s, olla_bound_node_io(s->dag), "bound: one node's tensors");
    raise_lb(s, olla_bound_outputs(s->dag, NULL), "bound: outputs at the end");
    if (!proven(s))
        heuristics(s, err);
    res->heuristic_peak = s->best_peak;
    if (!proven(s) && time_left(s))
        closure_bounds(s, err);
    if (!proven(s) && time_left(s))
        pair_bound(s, err);
    olla_log(s->opt->log, OLLA_LOG_DETAIL, "olla: heuristic peak %lld, lower bound %lld (%.3f s)",
             (long long)s->best_peak, (long long)s->lb, olla_now() - s->t0);
    if (!proven(s) && time_left(s))
        windows(s, err);
    int whole = !proven(s) && time_left(s) && segments(s, err);
    if (!proven(s) && time_left(s) && !whole)
        exact(s);
    if (s->opt->use_ilp && !proven(s))
        ilp(s);
}

olla_status olla_schedule(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                          int *order_out, olla_schedule_result *res, olla_error *err)
{
    return olla_schedule_alt(dag, input_order, opt, order_out, NULL, res, err);
}

olla_status olla_schedule_alt(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                              int *order_out, olla_schedule_alternatives *alt, olla_schedule_result *res,
                              olla_error *err)
{
    double t0 = olla_now();
    if (!dag || !order_out || !res)
        return olla_error_set(err, OLLA_ERR_USAGE, "olla_schedule needs a graph, an output order and a result");
    static const olla_schedule_options dflt = {0, 1, NULL};
    if (!opt)
        opt = &dflt;
    sched s;
    memset(&s, 0, sizeof s);
    s.dag = dag;
    s.opt = opt;
    s.t0 = t0;
    s.deadline = opt->time_limit > 0 ? t0 + opt->time_limit : 0;
    s.n = dag->n_nodes;
    s.alt = alt;
    if (alt)
        alt->n = 0;
    memset(res, 0, sizeof *res);
    res->status = "kept";
    s.work = malloc(((size_t)s.n + 1) * sizeof(int));
    s.best = malloc(((size_t)s.n + 1) * sizeof(int));
    olla_status st = OLLA_OK;
    if (!s.work || !s.best)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the ordering step (%d nodes)", s.n);
    else
        st = start(&s, input_order, err);
    if (st == OLLA_OK) {
        res->input_order_peak = s.best_peak;
        if (s.n > 0)
            stages(&s, res, err);
        memcpy(order_out, s.best, (size_t)s.n * sizeof(int));
        if (!olla_dag_is_topological(dag, order_out))
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "the ordering step produced an invalid order; please report");
        else
            finish(&s, res);
    }
    res->seconds = olla_now() - t0;
    olla_dag_free(&s.aug);
    free(s.work);
    free(s.best);
    return st;
}
