/* olla-onnx: how a runtime orders execution. Given a graph and its listing
 * (the order of graph.node in the file), which operators run and in which
 * order, for three runtimes:
 *
 *   listed        runs every node of graph.node in the listed order (our own
 *                 olla_plan.h users, any runtime that follows the file);
 *   ort           ONNX Runtime's ExecutionOrder::DEFAULT (what
 *                 onnxruntime-node and the default Python session run);
 *   ort-priority  ONNX Runtime's ExecutionOrder::PRIORITY_BASED.
 *
 *     olla_exec_graph eg;
 *     olla_exec_graph_build(g, OLLA_RUNTIME_ORT, listing, &eg, &err);
 *     olla_exec_order_of(&eg, OLLA_RUNTIME_ORT, listing, executed, &n, &err);
 *     olla_exec_listing_for(&eg, wanted, n, reference, listing2, &found, &err);
 *
 * Which nodes ONNX Runtime runs (graph optimizations off; read from ORT's
 * Graph constructor and InsertCastTransformer, and checked with its profiler):
 *   - Every node whose op_type is "Constant" (whatever its domain) becomes an
 *     initializer when the graph is loaded: it never runs, takes no index,
 *     and its output is a constant, not an edge.
 *   - RemoveDuplicateCastTransformer runs at every optimization level, once,
 *     visiting the nodes by index (listing order). For a Cast X with input
 *     type S and output type D, whose output is read by N node inputs:
 *       loss = UnsafeCast(S, D, X);
 *       if loss and some Cast C reading X has UnsafeCast(D', D, C), where D'
 *         is C's output type: nothing happens to X;
 *       every Cast C reading X whose output is not a graph output and whose
 *         output type is S is removed: its readers read X's input instead;
 *       if N > 0, all N readers are Casts (removed or not), X's output is not
 *         a graph output, and not (loss and a kept Cast reader outputs bool):
 *         X is removed and its kept readers read X's input.
 *     UnsafeCast(src, dst, node) is true when either type is outside
 *     bool/int8-64/uint8-64/float16/bfloat16/float/double; signed or float
 *     to unsigned; float to non-float; unsigned to a signed integer of at
 *     most its bits; integer to a float of at most its bits; float16 to
 *     bfloat16 or back; otherwise when src has more bits than dst and the
 *     node's name does not start with "InsertedPrecisionFreeCast_".
 *     So float->double->float and int32->int64->int32 pairs vanish, and a
 *     Cast read only by Casts vanishes (int32->int64->float runs only the
 *     second); a lone Cast, or a Cast of a constant, runs. A removed node
 *     keeps its index. Which Casts vanish does not depend on the listing as
 *     long as it is topological (a node's fate depends only on its
 *     ancestors', which every topological listing visits first). Unknown
 *     element types count as outside the list (nothing is removed for them).
 *   - Not modelled, because they need kernel registrations or ops this
 *     model does not see: Casts inserted around float16 nodes that have no
 *     CPU float16 kernel, DequantizeLinear nodes duplicated for QDQ node
 *     units, and the Shape/Size moves and memory-efficient order of
 *     onnxruntime-training builds (ENABLE_TRAINING).
 *
 * ORT's edges: from the producer of every tensor a node reads, explicit
 * inputs and the outer-scope tensors its subgraphs read (implicit inputs),
 * after the rewiring above; never edges from Constants, graph inputs or
 * initializers. The order:
 *   - DEFAULT: the leaves (running nodes none of whose outputs another node
 *     reads) are pushed on a stack by index, so the leaf with the highest
 *     index is expanded first. Expanding a node marks it visited, pushes it
 *     to be emitted on the way back, then pushes its unvisited producers by
 *     index, ascending, so the producer with the highest index is visited
 *     first; an entry popped after its node was visited is skipped. The
 *     emitted order is a depth-first post-order, producers first. Only the
 *     relative order of running nodes matters.
 *   - PRIORITY_BASED: Kahn's sort; among ready nodes Shape and Size (any
 *     domain) first, then the lower Node::Priority (0 for every node of a
 *     model read from a file; only graphs ORT builds in memory carry other
 *     values), then the lower index.
 *
 * Which orders DEFAULT can be made to run (the listing may be any
 * topological order; the simulation accepts any permutation). Call the
 * block of a node the nodes emitted from its expansion to its emission:
 *   1. A leaf is only ever a root. So the order cuts into one block per
 *      leaf, in the order the leaves run: between two consecutive leaves only
 *      ancestors of the later leaf run, and a leaf's block is the leaf with
 *      every ancestor of it not run before.
 *   2. The block of a node v is v preceded by the blocks of the producers the
 *      search enters from v, one after another. When v is expanded, its
 *      unvisited producers U are explored by falling index. A listing is
 *      topological, so a producer is listed before every node it is an
 *      ancestor of: a producer in U that is an ancestor of another producer
 *      in U is never entered from v but from inside that other producer's
 *      block. Call the others v's maximal producers: the search enters
 *      exactly these from v, and each block is the producer with its
 *      ancestors not run before it.
 *   3. Conversely every order built so, with the leaves in any order and at
 *      every node its maximal producers in any order, is run for some
 *      topological listing: take the index constraints (each entered
 *      producer listed after the one entered next, each leaf listed after
 *      the leaf expanded next, every producer before its consumers) and
 *      sort them topologically. They are never cyclic: list every node
 *      after the blocks of the producers it entered, those blocks one after
 *      another in the order they ran, but each entered producer itself held
 *      back until after all of its siblings' blocks, the siblings in
 *      reverse order of entry; a tensor only flows from an earlier sibling's
 *      block into a later one, never from a sibling itself (it would then be
 *      an ancestor of the later sibling, not maximal), so this listing
 *      satisfies every constraint.
 *   4. The written file lists every op, the ones that do not run included,
 *      in a topological order of the file's own edges. These imply the
 *      runtime's edges (a reader of a removed Cast reads a tensor made
 *      upstream of it), and imply nothing more except for a Cast C removed
 *      below a kept Cast X: C's readers read X's input, yet the file still
 *      lists X before them. Where such edges exist, a candidate the file
 *      forces before another candidate must be entered after it, and an
 *      order whose index constraints then close a cycle cannot be run by any
 *      valid file (the runtime itself would accept an unsorted file; we
 *      write only sorted ones).
 *   So an order runs under ORT exactly when it can be cut as in 1 and 2
 *   (and its constraints are acyclic, under 4); olla_exec_listing_for()
 *   decides it and writes the listing. Orders ORT cannot run, for example:
 *   two leaves interleaved (a node of the later leaf's block, not an
 *   ancestor of the earlier leaf, runs before it); a node that runs while a
 *   block it entered is unfinished; a producer entered from a node before
 *   another producer of that node that it is an ancestor of (the listing
 *   forces the descendant first, and the ancestor then runs inside its
 *   block). */
#ifndef OLLA_EXEC_ORDER_H
#define OLLA_EXEC_ORDER_H

#include <stdint.h>

#include "olla_bindings.h"
#include "olla_error.h"
#include "onnx/olla_graph.h"


/* "listed", "ort", "ort-priority". */
const char *olla_runtime_name(olla_runtime rt);
/* Parses a name above; OLLA_ERR_USAGE naming the choices otherwise. */
olla_status olla_runtime_parse(const char *name, olla_runtime *rt, olla_error *err);

/* The graph as a runtime sees it: which ops run and the edges between the
 * running ones. Ops keep the graph's indices (0 .. n_ops). All arrays are
 * owned. */
typedef struct olla_exec_graph {
    int n_ops;
    int n_running;
    unsigned char *runs;           /* n_ops: 1 when the runtime executes the op */
    unsigned char *first_priority; /* n_ops: Shape or Size (PRIORITY_BASED runs them first) */
    /* The runtime's edges between running ops, deduplicated, CSR over n_ops
     * (empty rows for ops that do not run): producers pred_list[pred_start[v]
     * .. pred_start[v+1]), consumers likewise in succ_*. */
    int *pred_start, *pred_list;
    int *succ_start, *succ_list;
    /* The graph's own producers of every op (running or not, deduplicated):
     * a written listing must put each before the op. */
    int *dep_start, *dep_list;
    /* n_tensors entries (graph tensors): the tensor a reader of each tensor
     * reads after the load-time rewrites (itself, or the input of a removed
     * Cast it came through). NULL when built from edges. */
    int n_tensors;
    int *reads_as;
    /* 1 when the file has edges the runtime does not follow (rule 4): then
     * some depth-first orders cannot be written. */
    int has_file_only_edges;
} olla_exec_graph;

/* Builds the runtime's view of g. listing (n_ops op indices, a topological
 * order of g; NULL = the model's own order) is the order in which load-time
 * rewrites visit the nodes. Errors: OLLA_ERR_INPUT when listing is not a
 * permutation of the ops; OLLA_ERR_INTERNAL when out of memory. */
olla_status olla_exec_graph_build(const olla_graph *g, olla_runtime rt, const int *listing, olla_exec_graph *eg,
                                  olla_error *err);
/* Builds it from plain edges, every op running (tests, and callers with
 * their own graphs): op v reads the ops preds[pred_start[v] ..
 * pred_start[v+1]); first_priority may be NULL. */
olla_status olla_exec_graph_from_edges(int n_ops, const int *pred_start, const int *preds,
                                       const unsigned char *first_priority, olla_exec_graph *eg, olla_error *err);
void olla_exec_graph_free(olla_exec_graph *eg);

/* The order in which runtime rt executes the ops for this listing (n_ops op
 * indices, a permutation): executed receives the running ops (at most
 * n_ops entries), *n_executed their number. For listed, executed is the
 * listing. OLLA_ERR_INPUT when listing is not a permutation, or (listed,
 * ort-priority) not topological. */
olla_status olla_exec_order_of(const olla_exec_graph *eg, olla_runtime rt, const int *listing, int *executed,
                               int *n_executed, olla_error *err);
/* Both steps at once. */
olla_status olla_exec_order(const olla_graph *g, olla_runtime rt, const int *listing, int *executed,
                            int *n_executed, olla_error *err);

/* A complete order of the n_ops ops for an executed order (n_running
 * entries), for memory models that want every op: each op that does not run
 * is placed as late as possible, right before the first op that needs it
 * (the first running reader, through chains of ops that do not run), and
 * ops nobody needs at the end. full receives n_ops entries. It is
 * topological for the graph's own edges when executed is topological for
 * eg's, except where no order can be (rule 4): a Cast removed below a kept
 * Cast that runs after the removed Cast's readers goes after its producer,
 * at the end. */
olla_status olla_exec_complete_order(const olla_exec_graph *eg, const int *executed, int *full, olla_error *err);

/* The scheduling DAG of what the runtime runs (passes/analysis/olla_dag.h),
 * the memory model of an executed order: nodes are the graph's ops (same
 * indices; ops that do not run get no tensors and no edges, so they may go
 * anywhere); tensors are the outputs of running ops, in graph order, sized
 * as olla_graph_dag() sizes them (rounded up to alignment, unknown = 0);
 * each running op reads the tensors it reads after the load-time rewrites.
 * A Constant's output is an initializer there, and a removed Cast's output
 * does not exist. graph_tensor (n_tensors of the DAG, malloc'd) maps each
 * DAG tensor to its graph tensor. eg must come from olla_exec_graph_build. */
struct olla_dag;
olla_status olla_exec_dag(const olla_graph *g, const olla_exec_graph *eg, int64_t alignment, struct olla_dag *dag,
                          int **graph_tensor, olla_error *err);

/* ---- choosing the listing: ORT's depth-first order ---- */

/* The depth-first search of DEFAULT with its choices made by keys: at the
 * roots and at every expansion, among the unvisited candidates that the
 * file's edges do not force before another unvisited candidate, the one with
 * the smallest key is entered first (ties: the lower op index). Every order
 * ORT can be made to run is one such run, with keys = positions in that
 * order; a run is an order ORT can be made to run when its index
 * constraints are acyclic, which olla_exec_dfs_listing() says (always, but
 * for Casts removed below a kept Cast; see rule 4). A workspace: for each
 * set of candidates compared (an op's producers, the leaves) which members
 * the file forces before which, and buffers, reused across runs; memory
 * grows with the ops and edges (and the square of the number of leaves, in
 * bits). */
typedef struct olla_exec_dfs olla_exec_dfs;

olla_status olla_exec_dfs_new(const olla_exec_graph *eg, olla_exec_dfs **out, olla_error *err);
void olla_exec_dfs_free(olla_exec_dfs *d);
/* Runs the search with key (n_ops entries, only running ops' read);
 * executed receives the n_running running ops in the order they run. */
void olla_exec_dfs_run(olla_exec_dfs *d, const int64_t *key, int *executed);
/* Choice points of the last run (nodes that entered two or more children),
 * in the order of their first entry: point p is the expansion of *node (-1
 * for the roots), which entered (*children)[0 .. returned count) in that
 * order. Valid until the next run. */
int olla_exec_dfs_points(const olla_exec_dfs *d);
int olla_exec_dfs_point(const olla_exec_dfs *d, int p, const int **children, int *node);
/* Where the last run entered op v: returns the node that entered it (-1:
 * the roots; -2: v did not run) and sets *point to that node's choice
 * point (-1 when it entered v alone, or v did not run). */
int olla_exec_dfs_entry(const olla_exec_dfs *d, int v, int *point);
/* A listing (n_ops entries) under which ORT runs the order of the last run:
 * a topological sort of the index constraints, ties broken by the position
 * in reference (n_ops entries, a permutation; NULL = op index). *found = 0
 * when the constraints are cyclic: no listing runs that order. */
olla_status olla_exec_dfs_listing(olla_exec_dfs *d, const int *reference, int *listing, int *found,
                                  olla_error *err);

/* For a wanted order of the running ops (n_wanted entries; ops that do not
 * run are ignored), the listing that makes ORT's DEFAULT order run exactly
 * it: *found = 1 and listing (n_ops entries) filled, or *found = 0 when no
 * listing does (the order is not cut as in rules 1-2, or is not a
 * permutation of the running ops). reference as above. */
olla_status olla_exec_listing_for(const olla_exec_graph *eg, const int *wanted, int n_wanted, const int *reference,
                                  int *listing, int *found, olla_error *err);

#endif
