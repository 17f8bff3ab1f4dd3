/* olla-onnx: structural analyses of the scheduling DAG used to shrink the
 * ordering problem: levels, ancestor/descendant bitsets, time windows,
 * control edges for early weight updates, and lower bounds on the peak. */
#ifndef OLLA_ANALYSIS_H
#define OLLA_ANALYSIS_H

#include <stdint.h>

#include "passes/analysis/olla_dag.h"
#include "util/olla_clock.h"

/* Longest path (in edges) from a source node (fwd) and to a sink node (bwd). */
olla_status olla_levels(const olla_dag *dag, int *fwd, int *bwd, olla_error *err);

/* Transitive closure as bitsets: row v of anc holds the proper ancestors of
 * v, row v of desc its proper descendants. It takes n^2/4 bytes: for small
 * graphs only (the joint ILP's, tests); the ordering step uses the
 * analyses below it, whose memory grows linearly. */
typedef struct olla_reach {
    int n, words;
    uint64_t *anc, *desc;
    int *n_anc, *n_desc;
} olla_reach;

/* Refuses (OLLA_ERR_INTERNAL) graphs above OLLA_REACH_MAX_NODES nodes, whose
 * bitsets would take gigabytes. */
#define OLLA_REACH_MAX_NODES 60000
olla_status olla_reach_build(const olla_dag *dag, olla_reach *r, olla_error *err);
void olla_reach_free(olla_reach *r);
/* 1 when u is a proper ancestor of v (u must run before v). */
int olla_reach_before(const olla_reach *r, int u, int v);
/* 1 when u and v are ordered either way (or equal). */
int olla_reach_comparable(const olla_reach *r, int u, int v);
/* The number of proper ancestors and descendants of every node, without
 * the closure: passes over the graph with a row of 1,024 bits per node,
 * each counting the ancestors (descendants) among 1,024 nodes. Time grows
 * as nodes x edges / 64, memory as nodes. */
olla_status olla_reach_counts(const olla_dag *dag, int *n_anc, int *n_desc, olla_error *err);
/* The nodes ordered with every other node (an ancestor or a descendant of
 * each), which run at the same step in every order: cut[v] = 1 for those,
 * found from one topological order in linear time. */
olla_status olla_order_cuts(const olla_dag *dag, const int *order, unsigned char *cut, olla_error *err);
/* The precedence test: 1 when tensors a and b can never be live together in
 * any order (every consumer of a runs before b's producer, and a is not an
 * input of a node that outputs b, or the symmetric case). */
int olla_tensors_disjoint(const olla_dag *dag, const olla_reach *r, int a, int b);

/* Time windows with one node per step: node v runs at a step in
 * [asap[v], alap[v]] = [#ancestors, n-1-#descendants] in every order.
 * olla_windows_build counts them with olla_reach_counts. */
void olla_windows(const olla_reach *r, int *asap, int *alap);
olla_status olla_windows_build(const olla_dag *dag, int *asap, int *alap, olla_error *err);
/* Per tensor e: mul = [asap(producer), latest step it can still be needed],
 * pres = [alap(producer), earliest step its last use can run] (empty when
 * pres_lo > pres_hi): e is live on every step of pres in every order. */
void olla_tensor_windows(const olla_dag *dag, const int *asap, const int *alap, int *mul_lo, int *mul_hi,
                         int *pres_lo, int *pres_hi);

/* Control edges that make weight updates run early: pairs (from[i], to[i])
 * meaning from must run before to. *count receives their number; from and to
 * are malloc'ed (free them). Recognises p_new = Sub(p, Mul(lr, g)) style
 * updates whose result is a graph output, ONNX Runtime's gradient
 * accumulators and optimizer nodes (through dag->op_type). */
olla_status olla_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err);
/* Copy of dag plus zero-byte control edges (new tensors appended after the
 * existing ones, so tensor ids are kept). */
olla_status olla_dag_add_edges(const olla_dag *dag, const int *from, const int *to, int count, olla_dag *out,
                               olla_error *err);

/* Lower bounds on the peak of every order. The largest inputs+outputs of one
 * node. */
int64_t olla_bound_node_io(const olla_dag *dag);
/* Graph outputs stay live to the end. For any set B of nodes, at the step
 * of the one that runs last, every graph output made by B and its
 * ancestors is live, with that node's other tensors (its inputs and
 * outputs that are no graph outputs, less what its writes in place can
 * save); the least over B's nodes of those bytes is then live on top. The
 * largest such bound over every B (found in one sweep, B growing by the
 * nodes' own bytes); B = every node gives the last step: all the outputs
 * and the least any node nobody reads adds. *last (optional) receives the
 * node of the best B with the least own bytes (-1 in an empty graph).
 * Linear but for a sort. */
int64_t olla_bound_outputs(const olla_dag *dag, int *last);
/* For each node v, the bytes live at v's step in every order: tensors made by
 * v or its ancestors and read by v or its descendants (or graph outputs).
 * Returns the largest; *at (optional) receives the node. Needs the closure. */
int64_t olla_bound_cut(const olla_dag *dag, const olla_reach *r, int *at);
/* Exact per node: the least bytes live at v's step over every set of nodes
 * that can run before v (a predecessor-closed set holding v's ancestors and
 * none of its descendants), found as a minimum cut over the whole graph.
 * The peak of every order is at least this for every v. *bound: in, a
 * valid bound (0 if none); out, the largest of it and the values found.
 * upper (optional, n_nodes) gives for each node the live bytes at its step
 * in some order, an upper bound on its value: nodes are visited by upper
 * descending and the walk ends at the first whose upper is at or below the
 * bound, or after 32 in a row that raise nothing (without upper every node
 * is visited). lim: a budget of work (arcs
 * scanned by the minimum cuts: each costs a few passes over the graph per
 * augmenting phase) and a deadline; the bound is valid whenever it stops. *at
 * (optional) receives the node of the largest value found (-1: none
 * raised the bound). */
olla_status olla_bound_closure(const olla_dag *dag, const int64_t *upper, olla_limit lim, int64_t *bound, int *at,
                               olla_error *err);

/* Strengthens *bound (in: a valid bound, out: a better or equal one) with
 * pairs: for each of the `tries` nodes v at the highest steps of order (a
 * topological order) and each node u unordered with v (found by a walk from
 * v), either u runs before v or after it, and the peak is at least the
 * smaller over the two cases of the larger of the two constrained per-node
 * values. Stops once the bound reaches ub, or when the limit's budget of
 * work (as in olla_bound_closure) or its deadline runs out; the bound is
 * valid whenever it stops. *spent (optional) receives the work done (0
 * without a budget). */
olla_status olla_bound_pairs(const olla_dag *dag, const int *order, int64_t ub, int tries, olla_limit lim,
                             int64_t *bound, long *spent, olla_error *err);

#endif
