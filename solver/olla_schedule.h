/* olla-onnx: choosing the order of nodes that minimises the peak of live
 * planned tensor bytes (the tensor lifetime half of OLLA). */
#ifndef OLLA_SCHEDULE_H
#define OLLA_SCHEDULE_H

#include <stdint.h>

#include "passes/olla_dag.h"

typedef struct olla_schedule_options {
    double time_limit; /* seconds for the whole ordering step, <=0 = no limit */
    int use_ilp;       /* 0 = heuristics only */
    int verbosity;     /* 0 quiet; >=2 progress lines on stderr */
} olla_schedule_options;

typedef struct olla_schedule_result {
    int64_t input_order_peak;
    int64_t heuristic_peak;
    int64_t peak_bytes;
    int64_t lower_bound_bytes;
    const char *status; /* "kept" (input order kept), "heuristic", "feasible" (ILP solution not
                           proven), "optimal" (only when peak == lower bound) */
    double seconds;
} olla_schedule_result;

/* Writes to order_out (n_nodes entries) a topological order whose peak is
 * never above input_order's. input_order may be NULL (the stable topological
 * order is used then). */
olla_status olla_schedule(const olla_dag *dag, const int *input_order, const olla_schedule_options *opt,
                          int *order_out, olla_schedule_result *res, olla_error *err);

/* ---- building blocks, also used by tests and benchmarks ---- */

/* Heuristic orders. Each writes a topological order to order. */
olla_status olla_sched_greedy_free(const olla_dag *dag, int *order, olla_error *err);
olla_status olla_sched_least_peak(const olla_dag *dag, int *order, olla_error *err);
olla_status olla_sched_dfs_post(const olla_dag *dag, int *order, olla_error *err);
/* The list schedulers with a deadline (olla_sched_now() seconds, <= 0:
 * none): past it they stop with OLLA_ERR_INTERNAL and no order. */
olla_status olla_sched_greedy_free_until(const olla_dag *dag, double deadline, int *order, olla_error *err);
olla_status olla_sched_least_peak_until(const olla_dag *dag, double deadline, int *order, olla_error *err);
/* Moves and swaps nodes within their windows while the peak drops; order is
 * improved in place. Stops at deadline (seconds since the epoch of
 * olla_sched_now(); <=0 = none). Returns the new peak. */
int64_t olla_sched_local_improve(const olla_dag *dag, int *order, double deadline);
/* The scheduling ILP of the paper (eq. 12) with the reductions: binaries
 * S[v][t] = "v has run by step t" only inside v's window, one node per
 * step, and live-tensor terms only where a tensor may or may not be live.
 * start is a warm start order (may be NULL); lb_hint a known lower bound on
 * the peak (0 if none). On return *found is 1 when order holds a solution
 * decoded from CBC (a topological order), *bound the proven lower bound on
 * the peak of dag (0 if none) and *optimal 1 when CBC proved optimality.
 * time_limit <= 0: none. Returns OLLA_ERR_INTERNAL (nothing found) when the
 * model is too large to build. */
typedef struct olla_ilp_info {
    int found, optimal;
    int64_t bound;
    int n_cols, n_rows;
} olla_ilp_info;
olla_status olla_sched_ilp(const olla_dag *dag, const int *start, int64_t lb_hint, double time_limit, int verbosity,
                           int *order, olla_ilp_info *info, olla_error *err);

/* Monotonic clock in seconds. */
double olla_sched_now(void);

/* Reading the text DAG format of bench/DAGFORMAT.md. */
typedef struct olla_dagfile {
    olla_dag dag;
    char **op_type, **op_domain; /* owned; dag.op_type points here */
} olla_dagfile;

olla_status olla_dagfile_read(const char *path, olla_dagfile *out, olla_error *err);
void olla_dagfile_free(olla_dagfile *f);

#endif
