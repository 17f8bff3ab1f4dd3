/* olla-onnx: the parts of the early-update edge search (analysis_updates.c)
 * that live in their own files: the dynamic order of the graph with the
 * edges added so far (updates_order.c), the updates each node reaches as
 * runs of ranks (updates_reach.c), the added edges by the ranks of their
 * target (updates_index.c) and Z, a persistent set of ranks
 * (updates_zset.c). Not public. */
#ifndef OLLA_UPDATES_INTERNAL_H
#define OLLA_UPDATES_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "passes/analysis/olla_dag.h"

/* What finding the edges took (for tests and benchmarks). */
typedef struct {
    long updates;     /* updates met */
    long searches;    /* target searches (a node's answer sought at one level) */
    long label_skips; /* subtrees they left out by the labels alone */
    long walks;       /* answers that took the walk itself */
    long lazy;        /* updates that asked the lazy ancestor search */
    long split;       /* nodes whose updates form more than one run (and are known) */
    long unknown;     /* nodes with more runs than kept */
} olla_upd_stats;

/* olla_early_update_edges, what it took into *stats */
olla_status olla_upd_edges(const olla_dag *dag, int **from, int **to, int *count, olla_upd_stats *stats,
                           olla_error *err);

/* 1 when node v is a weight update (an optimizer or accumulator operator,
 * or p_new = p - lr * g: no reader, a graph output computed from others). */
int olla_upd_is_update(const olla_dag *dag, int v);

/* ---- the graph with the control edges added so far (updates_order.c) ---- */

typedef struct {
    const olla_dag *dag;
    int n;
    int *pos, *at;          /* node -> position, position -> node */
    int *xp_head, *xs_head; /* added edges into / out of each node: lists */
    int *x_from, *x_to, *xp_next, *xs_next, nx;
    /* the ancestors of the current update: the positions found and not
     * expanded yet as bits (every one below `top`), the found nodes marked,
     * and the positions set, to clear them for the next update */
    uint64_t *pending;
    int top, *pushed, npushed, *seen, stamp;
    /* the reordering's scratch: its positions as bits */
    uint64_t *moved;
    int *mark, mstamp, *fw, *bw, *slots, *stack;
    /* 0 while nobody asked: the edges are recorded and the order is made
     * again for them on the first question (most graphs never ask) */
    int live;
} olla_upd_order;

/* the order by forward level fwd (0: out of memory) */
int olla_upd_order_init(olla_upd_order *t, const olla_dag *dag, const int *fwd);
void olla_upd_order_free(olla_upd_order *t);
/* adds the edge u -> a (a is no ancestor of u), keeping the order topological */
void olla_upd_order_add(olla_upd_order *t, int u, int a);
/* a fresh ancestor search for update v (the order made live first) */
void olla_upd_order_ask(olla_upd_order *t, int v);
/* 1 when x is a proper ancestor of the update v of the last ask */
int olla_upd_order_has(olla_upd_order *t, int v, int x);

/* ---- the updates each node reaches (updates_reach.c) ---- */

enum { OLLA_UPD_RUNS = 5 }; /* runs of consecutive ranks kept per node */

typedef struct {
    int lo, hi, node; /* ranks [lo, hi] (node: whose, -1: a node's own rank) */
} olla_upd_range;

typedef struct {
    int n_upd;
    int *rank;                /* node -> rank among the updates, -1: no update */
    int *lo, *hi;             /* the ranks a node reaches lie in [lo, hi]; lo > hi: none */
    signed char *nr;          /* the runs of ranks it reaches; -1: more than OLLA_UPD_RUNS */
    int *run_at;              /* nodes of several runs: where their (lo, hi) pairs start in runs */
    int *runs, n_runs;        /* the pairs of those nodes, each node's rising and apart */
    size_t runs_cap;
    unsigned char *in_region; /* 1: the range bound may be used at this node */
    int *nu, *ix;             /* highest level of a descendant that reaches no update / has too many runs */
    /* the merge-sort tree: points (a run of each node that can be a
     * candidate) sorted by lo; level k holds blocks of 2^k points sorted by
     * hi, with the running highest level of each block */
    int np, levels;
    int *pt_lo, *tree_hi, *tree_top;
    /* the first reader of each node (as the walk lists them; -1: none), where
     * it sits (output k, reader slot s), and 2^l steps along first readers */
    int *first_k, *first_s, *up, up_levels;
    /* reachability labels: post, a node's place in the depth-first
     * postorder that ranks the updates, and low, the lowest post among its
     * descendants and itself (x descends from s only if low[s] <= low[x]
     * and post[x] <= post[s]); the nodes by backward level, each level by
     * post, level l at lvl_node[lvl_start[l] .. lvl_start[l + 1]) */
    int *post, *low, *lvl_start, *lvl_node, max_lvl;
} olla_upd_reach;

/* the summary of dag (0: out of memory) */
int olla_upd_reach_build(const olla_dag *dag, const int *fwd, const int *bwd, olla_upd_reach *r);
void olla_upd_reach_free(olla_upd_reach *r);
/* the highest level among the points whose run lies in [a, b] (-1: none) */
int olla_upd_reach_query(const olla_upd_reach *r, int a, int b);
/* the runs of node y (nr[y] >= 0) into out; their number */
int olla_upd_reach_runs(const olla_upd_reach *r, int y, olla_upd_range *out);
/* the nr[y] >= 1 runs of node y as (lo, hi) pairs: its pairs in runs, or
 * its one run [lo, hi] written into one */
static inline const int *olla_upd_reach_pairs(const olla_upd_reach *r, int y, int one[2])
{
    if (r->nr[y] > 1)
        return r->runs + r->run_at[y];
    one[0] = r->lo[y], one[1] = r->hi[y];
    return one;
}
/* the nodes of level l whose post lies in s's label, as [*a, *b) of lvl_node */
void olla_upd_reach_level(const olla_upd_reach *r, int s, int l, int *a, int *b);

/* ---- the added edges by the ranks of their target (updates_index.c) ---- */

typedef struct {
    int size;                 /* leaves: a power of two at least the number of ranks */
    int *top;                 /* 2 * size: the highest hi of an unused edge below */
    int **list, *len, *first; /* per lo: entries by hi descending; the first unused */
    size_t *cap;
    int *entry_edge, *entry_hi, n_entries; /* an entry: a run of an edge's target */
    int *touched, n_touched; /* the lo whose first moved in this update */
    int *loose, n_loose;     /* the edges whose target is not exact */
} olla_upd_index;

/* an empty index for n_ranks ranks and up to n_edges edges (0: out of memory) */
int olla_upd_index_init(olla_upd_index *x, int n_ranks, int n_edges);
void olla_upd_index_free(olla_upd_index *x);
/* edge k, whose target reaches every rank of [lo, hi] (0: out of memory) */
int olla_upd_index_add(olla_upd_index *x, int k, int lo, int hi);
/* an unused edge whose target's range holds rank r, now used (-1: none) */
int olla_upd_index_take(olla_upd_index *x, int r);
/* every edge unused again */
void olla_upd_index_restore(olla_upd_index *x);

/* ---- Z, a persistent set of ranks (updates_zset.c) ---- */

typedef struct {
    int l, r, cnt, first, last, inner;
} olla_upd_znode;

typedef struct {
    olla_upd_znode *node; /* node 0: the empty set */
    size_t cap;
    int n, size, oom; /* nodes used; ranks [0, size), a power of two; out of memory */
    const olla_upd_reach *sum;
} olla_upd_zset;

/* an empty pool for the ranks of sum (0: out of memory) */
int olla_upd_zset_init(olla_upd_zset *z, const olla_upd_reach *sum);
void olla_upd_zset_free(olla_upd_zset *z);
/* tree t with rank k added (a new root; z->oom when out of memory) */
int olla_upd_zset_add(olla_upd_zset *z, int t, int k);
/* the union of trees a and b */
int olla_upd_zset_union(olla_upd_zset *z, int a, int b);
/* the summary of tree t's ranks in [qlo, qhi]: count, first, last and the
 * highest tree answer for a gap between two of them */
olla_upd_znode olla_upd_zset_fold(const olla_upd_zset *z, int t, int qlo, int qhi);
/* 1 when tree t holds a rank in [qlo, qhi] */
int olla_upd_zset_any(const olla_upd_zset *z, int t, int qlo, int qhi);

#endif
