/* olla-onnx: choosing the order of nodes that minimises the peak of live
 * planned tensor bytes (the tensor lifetime half of OLLA). */
#ifndef OLLA_SCHEDULE_H
#define OLLA_SCHEDULE_H

#include <stdint.h>

#include "passes/analysis/olla_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "util/olla_clock.h"
#include "util/olla_log.h"

typedef struct olla_schedule_options {
    double time_limit; /* seconds for the whole ordering step, <=0 = no limit */
    int use_ilp;       /* 0 = heuristics only */
    const olla_logger *log; /* NULL: quiet; an OLLA_LOG_DETAIL line a stage */
} olla_schedule_options;

typedef struct olla_schedule_result {
    int64_t input_order_peak;
    int64_t heuristic_peak;
    int64_t peak_bytes;
    int64_t lower_bound_bytes;
    const char *status; /* "kept" (input order kept), "heuristic", "feasible" (ILP solution not
                           proven), "optimal" (only when peak == lower bound) */
    const char *stopped_by; /* "proof" (optimal), "budget" (the work budgets ran out: the same result on
                               any machine) or "time" (the time limit passed: the result may depend on
                               the machine's speed) */
    double seconds;
} olla_schedule_result;

/* Writes to order_out (n_nodes entries) a topological order whose peak is
 * never above input_order's. input_order may be NULL (the stable topological
 * order is used then); OLLA_ERR_INPUT when it is not a topological order.
 * Stages: constructive heuristics and local improvement; lower bounds
 * (per-node minimum cuts, then pairs of unordered nodes); exact reordering
 * of windows around the peak; exact segments between nodes ordered with all
 * others; exact search over sets of nodes run; the ILP when opt->use_ilp.
 * Each stage stops at the time limit and the best order so far is kept. opt
 * may be NULL (no limit, ILP on, quiet). The first order found at the best
 * peak is returned. */
olla_status olla_schedule(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                          int *order_out, olla_schedule_result *res, olla_error *err);

/* Other orders of the returned peak (olla_schedule_alt). */
typedef struct olla_schedule_alternatives {
    int *orders; /* room for max orders of n_nodes */
    int max;
    int n;       /* out: orders written */
} olla_schedule_alternatives;

/* olla_schedule, and into alt the next distinct orders the stages found at
 * the returned peak (at most alt->max, in the order found; none when the
 * input order is kept): orders of equal peak whose lifetimes may pack
 * better (the pipeline judges them by placement). */
olla_status olla_schedule_alt(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                              int *order_out, olla_schedule_alternatives *alt, olla_schedule_result *res,
                              olla_error *err);

/* ---- building blocks, also used by tests and benchmarks ---- */

/* The groups of nodes order runs last, reordered (solver/schedule_tail.c):
 * in the longest tail in which the nodes joined by tensors (one's output
 * read by another, or a planned tensor read by both) form groups of at most
 * 16 nodes, and no node joins two groups, the groups run in reverse order
 * of the latest start of the planned buffers made before the tail that they
 * read, each group's nodes in their order. Deferred weight updates then
 * free their gradients last made first, and those lifetimes nest instead of
 * crossing. Writes the order to out (a topological order whenever order
 * is) and into *groups the number of groups when out differs from order,
 * else 0. The peak may change; the caller compares. */
olla_status olla_sched_nest_tail(const olla_dag *dag, const int *order, int *out, int *groups, olla_error *err);

/* Heuristic orders. Each writes a topological order to order. */
olla_status olla_sched_greedy_free(const olla_dag *dag, int *order, olla_error *err);
olla_status olla_sched_least_peak(const olla_dag *dag, int *order, olla_error *err);
olla_status olla_sched_dfs_post(const olla_dag *dag, int *order, olla_error *err);
/* The list schedulers with a deadline (olla_now() seconds, <= 0:
 * none): past it they stop with OLLA_ERR_INTERNAL and no order. */
olla_status olla_sched_greedy_free_until(const olla_dag *dag, double deadline, int *order, olla_error *err);
olla_status olla_sched_least_peak_until(const olla_dag *dag, double deadline, int *order, olla_error *err);
/* The list scheduler run backward from the end, where every graph output
 * is live: it places last the node that adds least to what is live before
 * it (its inputs not live yet, less its outputs). It sees what must stay
 * live to the end; the forward ones see what is freed. Same deadline rule. */
olla_status olla_sched_reverse_until(const olla_dag *dag, double deadline, int *order, olla_error *err);
/* Moves nodes within their windows (between their last producer and first
 * reader) across the peak step while (peak, steps at the peak) drops; order
 * is improved in place. Besides single nodes it moves chains: a producer
 * with the producers only it needs to after the peak, and the node at the
 * peak with the producers only it needs to just after its last other
 * producer (olla_sched_local_improve_moves with earlier_blocks 0 leaves the
 * second out). The budget counts evaluations of the whole order. Returns
 * the new peak, or -1 when out of memory (order unchanged). */
int64_t olla_sched_local_improve(const olla_dag *dag, int *order, olla_limit lim);
int64_t olla_sched_local_improve_moves(const olla_dag *dag, int *order, olla_limit lim, int earlier_blocks);
/* Exact order by dynamic programming over the sets of nodes already run,
 * looking only for peaks below ub. *outcome: OLLA_DP_FOUND (order and *peak
 * hold an optimal order, peak < ub), OLLA_DP_NONE_BETTER (every order peaks
 * at ub or more), OLLA_DP_GAVE_UP (more than lim.budget sets: a budget
 * <= 0 gives up at once; or past lim.deadline, a olla_now() time; <=0 =
 * none). A set takes one bit per node searched (here every node; in the
 * window and segment searches below only those of the window or segment),
 * and the sets are kept within 256 MB. In the searches below max_states is
 * the budget of all their searches together. */
enum { OLLA_DP_GAVE_UP = 0, OLLA_DP_FOUND = 1, OLLA_DP_NONE_BETTER = 2 };
olla_status olla_sched_exact_dp(const olla_dag *dag, int64_t ub, olla_limit lim, int *order, int64_t *peak,
                                int *outcome, olla_error *err);

/* Large-neighbourhood improvement: around each step at the peak, reorders
 * a window of about 2*half+1 consecutive steps exactly (the search above
 * restricted to the window, everything else fixed) while that removes the
 * peak step, until max_states sets were made; order is improved in place;
 * *peak receives the new peak. */
olla_status olla_sched_window_improve(const olla_dag *dag, int *order, int half, long max_states, double deadline,
                                      int64_t *peak, olla_error *err);

/* Decomposition: a node that is an ancestor or a descendant of every other
 * node runs at the same step in every order and splits the problem; the
 * segments between such nodes are solved separately by the exact search
 * (with the tensors crossing a segment fixed by what ran before it), which
 * is exact for the whole. order (topological) is improved in place.
 * *all_solved is 1 when every segment was solved to optimality, so that the
 * result is optimal. */
olla_status olla_sched_split_solve(const olla_dag *dag, int *order, long max_states, double deadline,
                                   int *n_segments, int *all_solved, olla_error *err);

/* The scheduling ILP of the paper (eq. 12) with the reductions: binaries
 * S[v][t] = "v has run by step t" only inside v's window, one node per
 * step, and live-tensor terms only where a tensor may or may not be live.
 * On return info->found is 1 when order holds a solution decoded from CBC
 * (a topological order), info->bound the proven lower bound on the peak of
 * dag (0 if none) and info->optimal 1 when CBC proved optimality. Returns
 * OLLA_ERR_INTERNAL (nothing found) when the model is too large to build. */
typedef struct olla_ilp_info {
    int found, optimal;
    int64_t bound;
    int n_cols, n_rows;
} olla_ilp_info;
/* What the scheduling ILP solves: start is a warm start order (may be
 * NULL); lb_hint a known lower bound on the peak (0 if none). */
typedef struct olla_sched_ilp_problem {
    const olla_dag *dag;
    const int *start;
    int64_t lb_hint;
} olla_sched_ilp_problem;
/* How: time_limit in seconds (<= 0: none; otherwise CBC runs in a child
 * process killed at the deadline); log may be NULL. */
typedef struct olla_sched_ilp_settings {
    double time_limit;
    const olla_logger *log;
} olla_sched_ilp_settings;
olla_status olla_sched_ilp(const olla_sched_ilp_problem *pb, const olla_sched_ilp_settings *set, int *order,
                           olla_ilp_info *info, olla_error *err);

/* ---- the best order ONNX Runtime can be made to run ---- */

/* The cost of an executed order (n running ops, in the order they run),
 * e.g. its peak in a memory model. */
typedef int64_t (*olla_exec_cost_fn)(void *ctx, const int *executed, int n);

typedef struct olla_ort_search_options {
    long max_evaluations; /* the budget, in cost evaluations; <= 0: 4000, or 12,000,000 / ops
                           * on graphs of over 3,000 ops (at least 200) */
    double deadline;      /* an olla_now() time, a safety net only; <= 0: none */
    int64_t stop_at;      /* stop once a cost <= stop_at is found (a proven lower bound); < 0: never */
    uint64_t seed;        /* of the random restarts */
} olla_ort_search_options;

typedef struct olla_ort_search_result {
    int64_t input_cost;  /* of the order ORT runs for the input listing */
    int64_t target_cost; /* of the order the target-guided choices give (what following the target gets) */
    int64_t best_cost;   /* of the returned listing's executed order; never above input_cost */
    int target_runs;     /* 1: ORT can be made to run the target order itself */
    int kept_input;      /* 1: nothing cheaper than the input's order was found; the input listing is returned */
    long evaluations;
    const char *stopped_by; /* "bound" (stop_at reached), "budget", "deadline", or "converged" (no choice
                               left, or 50 restarts in a row found nothing cheaper) */
    int judged;          /* orders of the best cost given to the problem's judge (0: none) */
    int judge_chose_tie; /* 1: the judge preferred another order of the best cost to the search's own */
    double seconds;
} olla_ort_search_result;

/* What the search below orders and how it judges an order. */
typedef struct olla_ort_problem {
    const olla_exec_graph *eg;
    const int *input_listing; /* a permutation of the n_ops ops: the listing ORT runs first */
    const int *target;        /* an order of the n_ops ops to follow (e.g. the unconstrained optimum); may be NULL */
    olla_exec_cost_fn cost;   /* called once per evaluation with an order of the running ops */
    void *cost_ctx;           /* cost's ctx */
    const int *alt_targets;   /* NULL, or n_alt_targets more orders of the n_ops ops to follow */
    int n_alt_targets;
    olla_exec_cost_fn judge;  /* NULL, or how to choose among orders of the best cost: a score, lower is
                               * better, 0 for one nothing beats, negative when it cannot say */
    void *judge_ctx;
    /* NULL, or the op at which the order last given to cost peaks (-1:
     * unknown), called with cost_ctx: the search then tries first the moves
     * that change which ops run before that op (aimed moves) */
    int (*peak_op)(void *cost_ctx);
} olla_ort_problem;

/* Searches the orders ONNX Runtime's DEFAULT rule can be made to run (its
 * depth-first search with every choice open: which leaf first, which
 * producer first at each expansion) for the cheapest under p->cost, and
 * writes the listing that makes ORT run it (listing_out: n_ops op indices,
 * a topological order of the file, ties broken by the input listing) and
 * that order (executed_out: n_running entries).
 * - Starts: the input listing's own order; then, with a target (an order of
 *   the n_ops ops, e.g. the unconstrained optimum; may be NULL), three
 *   orders whose choices follow it: at every choice the candidate first in
 *   target (by its own position, by its first reader's, by its earliest
 *   ancestor's) is entered first, each improved by a descent on an eighth
 *   of the budget. When ORT can run target itself, the first gives it.
 * - Then descents from the best (first improvement over moves at the best
 *   order's choice points: enter a child before the one entered before it,
 *   or first, or last; with p->peak_op, first the aimed moves: at the four
 *   choice points nearest the roots and the four nearest the peak on the
 *   path from the op at the peak to the roots, the child whose block holds
 *   that op entered first, last, or 1, 2, 4... places earlier or later),
 *   restarted from the best with a few random moves,
 *   until the budget of evaluations is spent, the cost reaches stop_at, the
 *   deadline passes or 50 restarts in a row gain nothing (res->stopped_by
 *   says which). Deterministic for a given seed and budget, unless the
 *   deadline stops it.
 * - Then, with alt_targets (other orders as good as target, e.g. of the
 *   same peak), the three starts each gives, evaluated once after the rest
 *   (no descent): one that costs less becomes the best; up to three that
 *   cost the same as the best (other orders than it) are ties. With a
 *   judge, the best and then the ties are judged (until a score of 0) and
 *   the first of the lowest score is returned: among orders of equal cost,
 *   the judge decides (e.g. by how well their lifetimes pack).
 * The input listing is always a candidate: the result never costs more than
 * the order ORT runs for it, and when nothing cheaper is found the input
 * listing itself is returned (kept_input). input_listing must be a
 * permutation of the ops (OLLA_ERR_INPUT otherwise). */
olla_status olla_schedule_for_ort(const olla_ort_problem *p, const olla_ort_search_options *opt, int *listing_out,
                                  int *executed_out, olla_ort_search_result *res, olla_error *err);

/* Reading the text DAG format of bench/DAGFORMAT.md. */
typedef struct olla_dagfile {
    olla_dag dag;
    char **op_type, **op_domain; /* owned; dag.op_type points here */
} olla_dagfile;

olla_status olla_dagfile_read(const char *path, olla_dagfile *out, olla_error *err);
void olla_dagfile_free(olla_dagfile *f);

#endif
