/* olla-onnx: control edges that pull weight-update nodes early (the anchor
 * search of the OLLA paper, generalised to ONNX training graphs). The
 * search is here; what it builds on lives beside it (updates_internal.h):
 * the dynamic order and lazy ancestor search of the graph with the edges
 * added so far (updates_order.c), the updates each node reaches as runs of
 * ranks, the range tree and the reachability labels (updates_reach.c), the
 * added edges by their target's runs (updates_index.c) and Z, a persistent
 * set of ranks (updates_zset.c). */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "passes/analysis/updates_internal.h"

static const char *const update_ops[] = {
    "InPlaceAccumulatorV2", "InPlaceAccumulator", "AdamWOptimizer", "AdamOptimizer", "SGDOptimizerV2",
    "SGDOptimizer",         "LambOptimizer",      "Adagrad",        "Adam",          "Momentum",
};

/* 1 when v's operator is an optimizer or accumulator */
static int is_update_op(const olla_dag *dag, int v)
{
    if (!dag->op_type || !dag->op_type[v])
        return 0;
    for (size_t i = 0; i < sizeof update_ops / sizeof update_ops[0]; i++)
        if (strcmp(dag->op_type[v], update_ops[i]) == 0)
            return 1;
    return 0;
}

/* A node is treated as a weight update when it is an optimizer or gradient
 * accumulator operator, or when nothing reads its results and one of them is
 * a graph output computed from other nodes' results (p_new = p - lr * g). */
int olla_upd_is_update(const olla_dag *dag, int v)
{
    if (is_update_op(dag, v))
        return 1;
    if (dag->in_start[v] == dag->in_start[v + 1])
        return 0;
    int has_output = 0;
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
        int e = dag->out_list[k];
        if (dag->sink_start[e] != dag->sink_start[e + 1])
            return 0;
        if (dag->is_output[e])
            has_output = 1;
    }
    return has_output;
}


/* ---- the anchor search ----
 *
 * What the walk computes, for update v with A its ancestors (v included) in
 * the graph with the edges added so far: the rounds are v's predecessors,
 * one step further up each time, in the order first met; the answer for a
 * node u of a round is the node of highest backward level among u's
 * descendants outside A (every such node of that level is reached through
 * ancestors only), the first of them in the depth-first order from u
 * (readers as listed); a round's best is its first node of highest answer,
 * and the first round with an answer gives the anchor. The walk is kept as
 * written (tests/unit/test_analysis_updates.c holds it as the reference);
 * the runs of ranks and the labels (updates_reach.c) only let it skip what
 * cannot change its answer, and ancestry is tested exactly.
 *
 * A node's answer is first sought at its bound's level T alone (the target
 * search, in the walk's order): a subtree is opened only when the range
 * bound says it may hold a candidate of level T and the labels say a node
 * of level T that is no ancestor may descend from it. Chains of first
 * readers are gone down in jumps. Cost: the summary is built once
 * (n log n); per update, Z is the union of the persistent trees of the
 * updates found, and a target search opens about the nodes on the way to
 * its answer. On the GPT-2 and LLaMA steps the whole grows about 2.1 times
 * per doubling of the layers (bench/updates_bench.c). What can still grow
 * faster: Z is asked again about the edges added since each update it
 * joins was done, and a target search that finds nothing falls back to the
 * walk after eight levels. */

typedef struct {
    int v, k, s;       /* node, position in its outputs and in that output's readers */
    int best, best_lvl;
} cand_frame;

typedef struct {
    const olla_dag *dag;
    olla_upd_order *topo;
    const int *bwd;
    int update;
    int *memo_node, *memo_level;
    int *stamp, cur;
    cand_frame *stack; /* n_nodes frames: a node is on it at most once */
    const olla_upd_reach *sum;
    int *edge_from, *edge_to; /* the edges added so far */
    int n_edges;
    olla_upd_index *index;
    olla_upd_zset *zs;
    int z_root;                 /* Z of the current update */
    int *snap_root, *snap_time; /* per update done: its Z, and the number of edges then */
    int *todo, *pushed;         /* updates found for Z, not joined yet; stamped when found */
    int asked; /* the lazy ancestor search has started for this update */
    int *t_seen, t_cur; /* nodes met by the current target search */
    int *u_stamp;             /* usable() asked of the node in this update (cur) */
    unsigned char *u_val;     /* and its answer */
    olla_upd_stats *stats;
} anchor_ctx;

/* 1 when Z holds a rank in [lo, hi] */
static int z_any(const anchor_ctx *c, int lo, int hi)
{
    return olla_upd_zset_any(c->zs, c->z_root, lo, hi);
}

/* 1 when a rank of Z lies in one of y's runs (y known) */
static int z_meets(const anchor_ctx *c, int y)
{
    int one[2];
    const int *run = c->sum->nr[y] > 0 ? olla_upd_reach_pairs(c->sum, y, one) : NULL;
    for (int i = 0; run && i < c->sum->nr[y]; i++)
        if (z_any(c, run[2 * i], run[2 * i + 1]))
            return 1;
    return 0;
}

/* 1 when y is the update or one of its ancestors in the graph with the
 * edges added so far (known nodes by Z, the others by the lazy search) */
static int in_ancestry(anchor_ctx *c, int y)
{
    const olla_upd_reach *r = c->sum;
    if (y == c->update)
        return 1;
    if (r->nr[y] >= 0)
        return z_meets(c, y);
    if (!c->asked) { /* the first question of this update */
        olla_upd_order_ask(c->topo, c->update);
        c->asked = 1;
        c->stats->lazy++;
    }
    return olla_upd_order_has(c->topo, c->update, y);
}

/* update u found for Z (once per update) */
static void z_found(anchor_ctx *c, int u, int *n)
{
    if (c->pushed[u] != c->cur) {
        c->pushed[u] = c->cur;
        c->todo[(*n)++] = u;
    }
}

/* Z of the current update: its own rank; the updates whose added edge
 * points at a node that reaches it (a stab of the index) or whose target is
 * loose and an ancestor; then for each update found, not in Z yet, its own
 * Z joins, and the edges added since it was made are asked whether their
 * target meets Z (the older ones were asked then). */
static void z_build(anchor_ctx *c)
{
    olla_upd_zset *z = c->zs;
    const olla_upd_reach *r = c->sum;
    olla_upd_index *x = c->index;
    int n = 0;
    c->z_root = olla_upd_zset_add(z, 0, r->rank[c->update]);
    for (int k; (k = olla_upd_index_take(x, r->rank[c->update])) >= 0;)
        z_found(c, c->edge_from[k], &n);
    olla_upd_index_restore(x);
    for (int i = 0; i < x->n_loose; i++)
        if (in_ancestry(c, c->edge_to[x->loose[i]]))
            z_found(c, c->edge_from[x->loose[i]], &n);
    while (n > 0) {
        int u = c->todo[--n];
        if (z_any(c, r->rank[u], r->rank[u]))
            continue;
        c->z_root = olla_upd_zset_union(z, c->z_root, c->snap_root[u]);
        for (int k = c->snap_time[u]; k < c->n_edges; k++) {
            int src = c->edge_from[k], to = c->edge_to[k];
            if (r->nr[to] >= 0 && !z_any(c, r->rank[src], r->rank[src]) && z_meets(c, to))
                z_found(c, src, &n);
        }
    }
}

/* At least the highest level of a candidate among s's descendants (s an
 * ancestor of the update); it may stop early once it exceeds need. */
static int bound(anchor_ctx *c, int s, int need)
{
    const olla_upd_reach *r = c->sum;
    if (!r->in_region[s])
        return c->bwd[s] - 1;
    int ub = r->nu[s] > r->ix[s] ? r->nu[s] : r->ix[s], lo = r->lo[s], hi = r->hi[s], q;
    if (ub > need || lo > hi)
        return ub;
    olla_upd_znode f = olla_upd_zset_fold(c->zs, c->z_root, lo, hi);
    if (f.cnt == 0) {
        q = olla_upd_reach_query(r, lo, hi);
        return q > ub ? q : ub;
    }
    ub = f.inner > ub ? f.inner : ub;
    if (ub <= need) {
        q = olla_upd_reach_query(r, lo, f.first - 1);
        ub = q > ub ? q : ub;
    }
    if (ub <= need) {
        q = olla_upd_reach_query(r, f.last + 1, hi);
        ub = q > ub ? q : ub;
    }
    return ub;
}

/* The paper asks for a level above the update's; that only stands for "not
 * an ancestor of the update", tested exactly on the graph with the edges
 * added so far, which admits more anchors and keeps the graph acyclic. */
static int usable(anchor_ctx *c, int snk)
{
    if (c->u_stamp[snk] != c->cur) { /* Z is complete: the answer holds for this update */
        c->u_stamp[snk] = c->cur;
        c->u_val[snk] = snk != c->update && !in_ancestry(c, snk);
    }
    return c->u_val[snk];
}

enum { LEVEL_SCAN = 8 }; /* nodes of one level a label test looks at, at most */

/* 0 when no node of level T that descends from s can be a candidate (none
 * within s's label is no ancestor of the update); 1 when one may be */
static int level_met(anchor_ctx *c, int s, int T)
{
    const olla_upd_reach *r = c->sum;
    int a, b;
    olla_upd_reach_level(r, s, T, &a, &b);
    if (b - a > LEVEL_SCAN)
        return 1;
    for (int i = a; i < b; i++) {
        int x = r->lvl_node[i];
        if (r->low[x] >= r->low[s] && usable(c, x))
            return 1;
    }
    return 0;
}
/* Moves a frame to its next reader (f->s indexes sink_list): 0 when the
 * node's results have no reader left. */
static int next_reader(const olla_dag *dag, cand_frame *f)
{
    while (f->k < dag->out_start[f->v + 1]) {
        int e = dag->out_list[f->k];
        if (f->s < 0)
            f->s = dag->sink_start[e];
        if (f->s < dag->sink_start[e + 1])
            return 1;
        f->k++;
        f->s = -1;
    }
    return 0;
}

/* a frame for v on the walk's stack, its answer not known yet */
static void open_frame(anchor_ctx *c, int *sp, int v)
{
    c->stamp[v] = c->cur;
    c->memo_node[v] = -1;
    c->memo_level[v] = -1;
    c->stack[(*sp)++] = (cand_frame){v, c->dag->out_start[v], -1, -1, -1};
}

/* 1 when the target search at level T pushes w, met as a first reader:
 * each part holds for w only if it holds for every node before it on the
 * chain of first readers (levels fall, ancestors of ancestors are
 * ancestors, the bound only falls down the graph, and a node searched
 * already had its first reader searched, and a label holds the labels of
 * the nodes below it) */
static int chain_ok(anchor_ctx *c, int w, int T)
{
    return c->bwd[w] > T && c->t_seen[w] != c->t_cur && !usable(c, w) && bound(c, w, T - 1) >= T &&
           level_met(c, w, T);
}

/* F^j(y) along first readers */
static int chain_at(const olla_upd_reach *r, int y, int j, int n)
{
    for (int l = 0; j > 0; l++, j >>= 1)
        if (j & 1)
            y = r->up[(size_t)l * n + y];
    return y;
}

/* pushes y (searched at level T) and the chain of first readers the
 * search would go down from it without a choice: y past its first reader,
 * the middle of the chain as one frame (k = -2, s nodes from v, opened as
 * the search comes back), the end of the chain from its start */
static void chain_push(anchor_ctx *c, int *sp, int y, int T)
{
    const olla_upd_reach *r = c->sum;
    int n = c->dag->n_nodes, cur = y, len = 0;
    for (int l = r->up_levels - 1; l >= 0; l--) {
        int w = r->up[(size_t)l * n + cur];
        if (w >= 0 && chain_ok(c, w, T))
            cur = w, len += 1 << l;
    }
    if (len == 0) {
        c->stack[(*sp)++] = (cand_frame){y, c->dag->out_start[y], -1, -1, -1};
        return;
    }
    c->stack[(*sp)++] = (cand_frame){y, r->first_k[y], r->first_s[y] + 1, -1, -1};
    if (len > 1)
        c->stack[(*sp)++] = (cand_frame){r->up[y], -2, len - 1, -1, -1};
    c->t_seen[cur] = c->t_cur;
    c->stack[(*sp)++] = (cand_frame){cur, c->dag->out_start[cur], -1, -1, -1};
}

/* The first node of level T met by the walk from u (in its order: readers
 * as listed, depth first, through ancestors of the update) that is no
 * ancestor of the update; -1: none. When T is at least the walk's best
 * level below u, a node found is the walk's own answer for u: the subtrees
 * left out (bound below T, or already walked in this search) hold no
 * candidate of level T. Chains of first readers are gone down in jumps.
 * When none is found, *below receives a level no candidate below u exceeds
 * (the highest of the candidates met below T and of the bounds of the
 * subtrees left out), the level to search next. */
static int target_search(anchor_ctx *c, int u, int T, int *below)
{
    const olla_dag *dag = c->dag;
    int sp = 0;
    *below = -1;
    c->t_cur++;
    c->t_seen[u] = c->t_cur;
    chain_push(c, &sp, u, T);
    while (sp > 0) {
        cand_frame *f = &c->stack[sp - 1];
        if (f->k == -2) { /* the last node of a chain's middle, back in turn */
            int y = chain_at(c->sum, f->v, --f->s, dag->n_nodes);
            if (f->s == 0)
                sp--;
            c->t_seen[y] = c->t_cur;
            c->stack[sp++] = (cand_frame){y, c->sum->first_k[y], c->sum->first_s[y] + 1, -1, -1};
            continue;
        }
        int pushed = 0;
        while (!pushed && next_reader(dag, f)) {
            int snk = dag->sink_list[f->s++], b;
            if (c->t_seen[snk] == c->t_cur)
                continue;
            if (usable(c, snk)) {
                if (c->bwd[snk] == T)
                    return snk;
                *below = c->bwd[snk] < T && c->bwd[snk] > *below ? c->bwd[snk] : *below;
                continue;
            }
            if (c->bwd[snk] <= *below + 1)
                continue; /* nothing below it can raise *below */
            c->t_seen[snk] = c->t_cur;
            b = bound(c, snk, T - 1); /* exact when below T */
            if (c->bwd[snk] > T && b >= T && !level_met(c, snk, T)) {
                b = T - 1; /* nothing of level T below it */
                c->stats->label_skips++;
            }
            if (c->bwd[snk] > T && b >= T) {
                chain_push(c, &sp, snk, T);
                pushed = 1;
            } else { /* left out: nothing below it above its bound, its level less one, or T - 1 */
                b = b < c->bwd[snk] - 1 ? b : c->bwd[snk] - 1;
                b = b < T - 1 ? b : T - 1;
                *below = b > *below ? b : *below;
            }
        }
        if (!pushed)
            sp--;
    }
    return -1;
}

/* FindCandidate: the sink with the highest backward level among the readers
 * of v's results whose forward level exceeds min_fwd, looking through readers
 * that are not deep enough yet. Results are memoised per update node. A
 * depth-first walk with an explicit stack: chains can be as long as the
 * graph, far deeper than the call stack allows. */
static void find_candidate(anchor_ctx *c, int v0, int *cand, int *level)
{
    if (c->stamp[v0] == c->cur) {
        *cand = c->memo_node[v0];
        *level = c->memo_level[v0];
        return;
    }
    const olla_dag *dag = c->dag;
    int sp = 0, ret_node = -1, ret_lvl = -1, returning = 0;
    open_frame(c, &sp, v0);
    while (sp > 0) {
        cand_frame *f = &c->stack[sp - 1];
        if (returning) { /* a reader looked through has its answer */
            if (ret_lvl > f->best_lvl) {
                f->best_lvl = ret_lvl;
                f->best = ret_node;
            }
            returning = 0;
            f->s++;
        }
        int pushed = 0;
        while (!pushed && next_reader(dag, f)) {
            int snk = dag->sink_list[f->s];
            if (c->bwd[snk] <= f->best_lvl) {
                f->s++;
            } else if (usable(c, snk)) {
                f->best_lvl = c->bwd[snk];
                f->best = snk;
                f->s++;
            } else if (c->stamp[snk] == c->cur) {
                if (c->memo_level[snk] > f->best_lvl) {
                    f->best_lvl = c->memo_level[snk];
                    f->best = c->memo_node[snk];
                }
                f->s++;
            } else if (bound(c, snk, f->best_lvl) <= f->best_lvl) {
                f->s++; /* nothing below it can do better */
            } else {
                open_frame(c, &sp, snk);
                pushed = 1;
            }
        }
        if (pushed)
            continue;
        c->memo_node[f->v] = f->best;
        c->memo_level[f->v] = f->best_lvl;
        ret_node = f->best;
        ret_lvl = f->best_lvl;
        returning = 1;
        sp--;
    }
    *cand = ret_node;
    *level = ret_lvl;
}

/* The anchor of update v (-1: none): the rounds of v's predecessors, one
 * more step up each time, until one finds a candidate; in a round, the best
 * candidate below its nodes, the first met among equals. front, next and
 * seen: n_nodes each. */
static int anchor_of(anchor_ctx *c, int v, int *front, int *next, int *seen)
{
    const olla_dag *dag = c->dag;
    c->cur++; /* fresh memo per update node: usable() differs */
    c->update = v;
    c->asked = 0;
    z_build(c);
    c->snap_root[v] = c->z_root;
    c->snap_time[v] = c->n_edges;
    int nf = 1, anchor = -1, best_lvl = -1;
    front[0] = v;
    seen[v] = c->cur;
    while (anchor < 0 && nf > 0) {
        int nn = 0;
        for (int i = 0; i < nf; i++) {
            int u = front[i];
            for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
                int p = dag->producer[dag->in_list[k]];
                if (seen[p] != c->cur) {
                    seen[p] = c->cur;
                    next[nn++] = p;
                }
            }
        }
        for (int i = 0; i < nn; i++) {
            int cc = -1, lv = -1;
            if (c->stamp[next[i]] == c->cur) {
                find_candidate(c, next[i], &cc, &lv); /* known */
            } else {
                int T = bound(c, next[i], INT32_MAX), tries = 0;
                while (cc < 0 && T > best_lvl && tries++ < 8) /* the bound, then lower levels */
                    cc = target_search(c, next[i], lv = T, &T), c->stats->searches++;
                if (cc < 0 && T > best_lvl) /* still unsure: the walk itself */
                    find_candidate(c, next[i], &cc, &lv), c->stats->walks++;
            }
            if (cc >= 0 && cc != v && lv > best_lvl) {
                best_lvl = lv;
                anchor = cc;
            }
        }
        memcpy(front, next, (size_t)nn * sizeof(int));
        nf = nn;
    }
    return anchor;
}

/* the edge v -> anchor added: to the order, and to the index by the pieces
 * of the anchor's range (or as loose); 0 when out of memory */
static int edge_added(anchor_ctx *c, int v, int anchor)
{
    const olla_upd_reach *r = c->sum;
    int k = c->n_edges++;
    olla_upd_range run[OLLA_UPD_RUNS];
    c->edge_from[k] = v;
    c->edge_to[k] = anchor;
    olla_upd_order_add(c->topo, v, anchor);
    if (r->nr[anchor] < 0) {
        c->index->loose[c->index->n_loose++] = k;
        return 1;
    }
    for (int i = 0, nr = olla_upd_reach_runs(r, anchor, run); i < nr; i++)
        if (!olla_upd_index_add(c->index, k, run[i].lo, run[i].hi))
            return 0;
    return 1;
}

/* The edges with what finding them took into *stats (see updates_internal.h). */
olla_status olla_upd_edges(const olla_dag *dag, int **from, int **to, int *count, olla_upd_stats *stats,
                           olla_error *err)
{
    int n = dag->n_nodes;
    size_t sz = (size_t)n + 1;
    *from = *to = NULL;
    *count = 0;
    memset(stats, 0, sizeof *stats);
    int *fwd = malloc(sz * sizeof(int)), *bwd = malloc(sz * sizeof(int)), *mn = malloc(sz * sizeof(int));
    int *ml = malloc(sz * sizeof(int)), *stamp = calloc(sz, sizeof(int)), *front = malloc(sz * sizeof(int));
    int *next = malloc(sz * sizeof(int)), *seen = calloc(sz, sizeof(int)), *ef = malloc(sz * sizeof(int));
    int *et = malloc(sz * sizeof(int)), *sr = calloc(sz, sizeof(int)), *st_ = calloc(sz, sizeof(int));
    int *todo = malloc(sz * sizeof(int)), *pushed = calloc(sz, sizeof(int)), *ts = calloc(sz, sizeof(int));
    int *us = calloc(sz, sizeof(int));
    unsigned char *uv = malloc(sz);
    cand_frame *stack = malloc(sz * sizeof *stack);
    olla_upd_order topo;
    olla_upd_reach sum;
    olla_upd_index index;
    olla_upd_zset zs;
    memset(&topo, 0, sizeof topo);
    memset(&sum, 0, sizeof sum);
    memset(&index, 0, sizeof index);
    memset(&zs, 0, sizeof zs);
    olla_status st = OLLA_OK;
    if (!fwd || !bwd || !mn || !ml || !stamp || !front || !next || !seen || !ef || !et || !sr || !st_ || !todo ||
        !pushed || !ts || !us || !uv || !stack)
        goto oom;
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    if (!olla_upd_order_init(&topo, dag, fwd) || !olla_upd_reach_build(dag, fwd, bwd, &sum) ||
        !olla_upd_index_init(&index, sum.n_upd, n) || !olla_upd_zset_init(&zs, &sum))
        goto oom;
    static const anchor_ctx zero;
    anchor_ctx c = zero;
    c.dag = dag, c.topo = &topo, c.bwd = bwd, c.memo_node = mn, c.memo_level = ml, c.stamp = stamp, c.stack = stack;
    c.sum = &sum, c.edge_from = ef, c.edge_to = et, c.index = &index, c.zs = &zs, c.snap_root = sr;
    c.snap_time = st_, c.todo = todo, c.pushed = pushed, c.t_seen = ts, c.u_stamp = us, c.u_val = uv;
    c.stats = stats;
    for (int v = 0; v < n; v++) {
        stats->split += sum.nr[v] > 1;
        stats->unknown += sum.nr[v] < 0;
        if (!olla_upd_is_update(dag, v))
            continue;
        stats->updates++;
        int anchor = anchor_of(&c, v, front, next, seen);
        if (zs.oom || (anchor >= 0 && !edge_added(&c, v, anchor)))
            goto oom;
    }
    *from = ef;
    *to = et;
    *count = c.n_edges;
    ef = et = NULL;
    goto done;
oom:
    st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory finding weight-update control edges");
done:
    olla_upd_order_free(&topo);
    olla_upd_reach_free(&sum);
    olla_upd_index_free(&index);
    olla_upd_zset_free(&zs);
    free(fwd);
    free(bwd);
    free(mn);
    free(ml);
    free(stamp);
    free(front);
    free(next);
    free(seen);
    free(ef);
    free(et);
    free(sr);
    free(st_);
    free(todo);
    free(pushed);
    free(ts);
    free(us);
    free(uv);
    free(stack);
    return st;
}

/* the edges (olla_analysis.h) */
olla_status olla_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err)
{
    olla_upd_stats stats;
    return olla_upd_edges(dag, from, to, count, &stats, err);
}

/* dag with the edges added as zero-byte tensors (olla_analysis.h) */
olla_status olla_dag_add_edges(const olla_dag *dag, const int *from, const int *to, int count, olla_dag *out,
                               olla_error *err)
{
    olla_dag_builder *b = olla_dag_builder_new(dag->n_nodes, dag->n_tensors + count);
    if (!b)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory adding control edges");
    for (int e = 0; e < dag->n_tensors; e++) {
        olla_dag_builder_tensor(b, dag->producer[e], dag->bytes[e], dag->is_output[e]);
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++)
            olla_dag_builder_use(b, dag->sink_list[k], e);
    }
    for (int i = 0; i < count; i++) {
        int e = olla_dag_builder_tensor(b, from[i], 0, 0);
        olla_dag_builder_use(b, to[i], e);
    }
    for (int v = 0; dag->n_inplace > 0 && v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++)
            olla_dag_builder_inplace(b, v, dag->inplace_in[k], dag->inplace_out[k]);
    olla_status st = olla_dag_build(b, dag->n_nodes, out, err);
    if (st == OLLA_OK) {
        out->op_type = dag->op_type;
        out->op_domain = dag->op_domain;
    }
    return st;
}

