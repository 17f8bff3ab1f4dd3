/* olla-onnx: fitting a graph under a memory limit by recomputing tensors
 * (rematerialization).
 *
 * A plan with recomputation is a sequence of runs. Every node of the DAG
 * runs once as itself (its original run) and any number of times as a copy.
 * A copy of node v computes the same outputs as v from the same inputs, as
 * new versions of v's tensors; each run reads, for every input tensor, one
 * version of it: the original's or a copy's. A version lives, as every
 * tensor does (olla_dag.h), from the run that makes it to its last reader,
 * so an activation that is recomputed for its late readers is freed after
 * its early ones. The plan's memory is the peak of the DAG of its runs
 * (olla_remat_plan_dag), sharing included: a view is its input's buffer, an
 * in-place write takes its input's buffer when the run is that version's
 * last reader.
 *
 * Which tensors may be recomputed: a copy must be a deterministic function
 * of its inputs (copyable), and a tensor is recomputed only where every
 * input its producer needs is still there when the copy runs, or is itself
 * recomputable. A node that makes a graph output or a kept tensor
 * (olla_remat_problem.keep) runs once: the original stays.
 *
 * The search (remat.c): the graph's own order is the base; running it with
 * the limit in force, whenever the next run would pass the limit the tensor
 * whose loss costs least (the cost of recomputing it and its missing inputs,
 * per byte and per step until its next use) is freed, and a freed tensor is
 * recomputed, with whatever chain of freed inputs it needs, right before its
 * next reader. A portfolio of such policies (cost models, and checkpoint
 * sets in the way of Chen et al.'s segments) is run and the cheapest plan
 * improved by a local search that keeps tensors the plan recomputes at a
 * high price. Small graphs are solved exactly by an integer program
 * (remat_ilp.c) that chooses the order, the lifetimes and the copies
 * together. */
#ifndef OLLA_REMAT_H
#define OLLA_REMAT_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "passes/analysis/olla_dag.h"
#include "util/olla_clock.h"

typedef struct olla_remat_problem {
    const olla_dag *dag;            /* the memory model: sizes, views (0 bytes, readers read the root), in place */
    const int *order;               /* n_nodes: a topological order of the nodes, the base of the search */
    const double *cost;             /* per node: the cost of running it once (>= 0; a view costs 0) */
    const unsigned char *copyable;  /* per node: 1 when a copy gives bit-identical outputs, with no side effect */
    const int *buffer;              /* per DAG tensor: the DAG tensor holding its bytes (itself when it owns a
                                       buffer, a view's root), or -1 (no arena memory) */
    const unsigned char *keep;      /* per DAG tensor, may be NULL: 1 = never recomputed (its readers all read
                                       the original), such as a tensor read through a node the runtime skips */
    const unsigned char *omittable; /* per DAG tensor, may be NULL: 1 = a copy of its producer may leave it out
                                       (an optional output); else every copy writes it */
    int64_t limit;                  /* the peak to stay under */
    long budget;                    /* work units of the search (runs simulated); <= 0: the default */
    double deadline;                /* a safety net (olla_now()); <= 0: none */
} olla_remat_problem;

typedef struct olla_remat_plan {
    int n_runs;
    int *node;       /* per run: its DAG node */
    int *copy;       /* per run: 0 for the node's original run, k >= 1 for its k-th copy */
    int *read_start; /* n_runs + 1: run r's reads are read_run[read_start[r] .. read_start[r+1]) */
    int *read_run;   /* one per DAG input of the run's node, in dag->in_list order: the run whose
                        version of that tensor it reads */
    int64_t peak;      /* the peak of the plan's DAG */
    double extra_cost; /* the summed cost of the copies */
    int n_copies;      /* runs that are copies */
    int n_recomputed;  /* distinct DAG tensors of which a copy's version is read */
} olla_remat_plan;

void olla_remat_plan_free(olla_remat_plan *plan);

/* Room in plan for `runs` runs (read_start: runs + 1 entries) and `reads`
 * reads, the arrays' capacities kept in *cap_runs and *cap_reads (0 for
 * arrays not yet made). 0 when out of memory: the plan stays valid, its
 * arrays at least as large as the capacities say. */
int olla_remat_plan_reserve(olla_remat_plan *plan, size_t *cap_runs, size_t *cap_reads, size_t runs, size_t reads);

/* The DAG of a plan's runs: node r is run r; its tensors are the versions
 * each run writes (run r's k-th output is the version of the k-th output of
 * its node), read as the plan says; the original runs' versions of graph
 * outputs stay graph outputs; an output a copy leaves out (omittable, read by
 * no run) has 0 bytes; each run keeps its node's in-place candidates.
 * version_of (may be NULL) receives, per run, the index of its first
 * version (n_runs + 1 entries). Its peak under the identity order is the
 * plan's. */
olla_status olla_remat_plan_dag(const olla_remat_problem *p, const olla_remat_plan *plan, olla_dag *out,
                                int *version_of, olla_error *err);

/* Checks that a plan is a plan of the problem: every node has exactly one
 * original run, copies only of copyable nodes, every read of a version
 * written by an earlier run of the tensor's producer, no read of a recomputed
 * version of a kept tensor or a graph output. OLLA_ERR_INTERNAL naming the
 * first fault. */
olla_status olla_remat_plan_check(const olla_remat_problem *p, const olla_remat_plan *plan, olla_error *err);

/* 1 when node v may have copies: it is copyable, and none of its outputs is
 * a graph output or kept (a copy would write a version nobody may read). */
int olla_remat_may_copy(const olla_remat_problem *p, int v);

/* The plan that recomputes nothing: the base order as it is. */
olla_status olla_remat_plan_identity(const olla_remat_problem *p, olla_remat_plan *out, olla_error *err);

typedef enum olla_remat_outcome {
    OLLA_REMAT_FITS = 0,     /* a plan at or under the limit was found */
    OLLA_REMAT_NOT_FOUND = 1 /* none was found (the limit is below the smallest peak found) */
} olla_remat_outcome;

typedef struct olla_remat_result {
    olla_remat_outcome outcome;
    int64_t lower_bound;     /* no plan, at any cost, peaks below this (olla_remat_peak_bound) */
    int64_t smallest_peak;   /* the smallest peak the search reaches (when asked for, else -1) */
    double cost_bound;       /* no plan under the limit costs less than this in copies (0 when unknown) */
    int optimal;             /* 1: the plan's extra cost is proven the least (cost_bound == extra_cost) */
    const char *method;      /* "none" (nothing recomputed), "greedy", "search", "ilp" */
    long work;               /* work units spent */
    int stopped_by_time;     /* 1 when the deadline cut the search short */
} olla_remat_result;

/* A proven lower bound on the peak of every plan of the problem, whatever
 * it recomputes: the most any one node needs at once (its inputs and
 * outputs, sharing as the DAG allows), and the graph outputs, all live at
 * the last step, with the inputs of a node that can run last. */
int64_t olla_remat_peak_bound(const olla_remat_problem *p);

/* The cheapest plan found under p->limit. On OLLA_REMAT_NOT_FOUND the plan is
 * empty. find_smallest: also search the smallest peak reachable at any cost
 * (bisection over the limit) into res->smallest_peak. */
olla_status olla_remat_solve(const olla_remat_problem *p, int find_smallest, olla_remat_plan *plan,
                             olla_remat_result *res, olla_error *err);

/* What the exact integer program found: found is 1 when the plan holds
 * the solution, optimal 1 when CBC proved it, cost_bound CBC's bound on
 * the extra cost. */
typedef struct olla_remat_ilp_result {
    int found, optimal;
    double cost_bound;
} olla_remat_ilp_result;

/* The exact integer program (remat_ilp.c): the order, the lifetimes and
 * the copies together, for graphs of at most OLLA_REMAT_ILP_MAX_NODES nodes.
 * Steps: every node once, plus up to max_copies copies. start (may be NULL)
 * is a plan to start from; time_limit in seconds (<= 0: none). The integer
 * program counts a tensor from the step that makes it to its last reader
 * and lets no in-place write share a buffer: with in-place candidates its
 * plans are valid but not proven (optimal is 0). */
#define OLLA_REMAT_ILP_MAX_NODES 24
olla_status olla_remat_ilp(const olla_remat_problem *p, const olla_remat_plan *start, int max_copies, double time_limit,
                           olla_remat_plan *plan, olla_remat_ilp_result *result, olla_error *err);

#endif
