/* olla-onnx: control edges that pull weight-update nodes early (the anchor
 * search of the OLLA paper, generalised to ONNX training graphs). */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_bits.h"
#include "util/olla_grow.h"

static const char *const update_ops[] = {
    "InPlaceAccumulatorV2", "InPlaceAccumulator", "AdamWOptimizer", "AdamOptimizer", "SGDOptimizerV2",
    "SGDOptimizer",         "LambOptimizer",      "Adagrad",        "Adam",          "Momentum",
};

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
static int is_update(const olla_dag *dag, int v)
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

/* ---- the graph with the control edges added so far ----
 *
 * The anchors must keep the graph acyclic: an anchor is never an ancestor
 * of its update in the graph with the edges added before it. That is
 * decided on a topological order of that graph, kept up to date as edges
 * come (Pearce and Kelly's dynamic order: an edge u -> a with a before u
 * reorders only the nodes between them that it reaches), and a walk from
 * the update up its ancestors, in decreasing position, that goes no lower
 * than the positions asked about. The order starts by forward level, where
 * an update and its anchor lie close, so both stay local. Memory is linear. */

typedef struct {
    const olla_dag *dag;
    int n;
    int *pos, *at;           /* node -> position, position -> node */
    int *xp_head, *xs_head;  /* added edges into / out of each node: lists */
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
} topo_state;

static void topo_free(topo_state *t)
{
    free(t->pos);
    free(t->at);
    free(t->xp_head);
    free(t->xs_head);
    free(t->x_from);
    free(t->x_to);
    free(t->xp_next);
    free(t->xs_next);
    free(t->pending);
    free(t->pushed);
    free(t->moved);
    free(t->seen);
    free(t->mark);
    free(t->fw);
    free(t->bw);
    free(t->slots);
    free(t->stack);
}

typedef struct {
    int lvl, v;
} lvl_node;

static int by_level(const void *a, const void *b)
{
    const lvl_node *x = a, *y = b;
    if (x->lvl != y->lvl)
        return x->lvl < y->lvl ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

static int topo_init(topo_state *t, const olla_dag *dag, const int *fwd)
{
    int n = dag->n_nodes;
    size_t sz = (size_t)n + 1;
    memset(t, 0, sizeof *t);
    t->dag = dag;
    t->n = n;
    t->pos = malloc(sz * sizeof(int));
    t->at = malloc(sz * sizeof(int));
    t->xp_head = malloc(sz * sizeof(int));
    t->xs_head = malloc(sz * sizeof(int));
    t->x_from = malloc(sz * sizeof(int));
    t->x_to = malloc(sz * sizeof(int));
    t->xp_next = malloc(sz * sizeof(int));
    t->xs_next = malloc(sz * sizeof(int));
    size_t words = olla_bits_words((size_t)n) + 1;
    t->pending = calloc(words, sizeof(uint64_t));
    t->moved = calloc(words, sizeof(uint64_t));
    t->pushed = malloc(sz * sizeof(int));
    t->seen = calloc(sz, sizeof(int));
    t->mark = calloc(sz, sizeof(int));
    t->fw = malloc(sz * sizeof(int));
    t->bw = malloc(sz * sizeof(int));
    t->slots = malloc(sz * sizeof(int));
    t->stack = malloc(sz * sizeof(int));
    lvl_node *ln = malloc(sz * sizeof *ln);
    if (!t->pos || !t->at || !t->xp_head || !t->xs_head || !t->x_from || !t->x_to || !t->xp_next || !t->xs_next ||
        !t->pending || !t->moved || !t->pushed || !t->seen || !t->mark || !t->fw || !t->bw || !t->slots || !t->stack || !ln) {
        free(ln);
        return 0;
    }
    for (int v = 0; v < n; v++) {
        ln[v] = (lvl_node){fwd[v], v};
        t->xp_head[v] = t->xs_head[v] = -1;
    }
    qsort(ln, (size_t)n, sizeof *ln, by_level); /* every edge goes up a level */
    for (int i = 0; i < n; i++) {
        t->at[i] = ln[i].v;
        t->pos[ln[i].v] = i;
    }
    free(ln);
    return 1;
}

/* ---- ancestors of the current update, found lazily ---- */

static void anc_push(topo_state *t, int u)
{
    if (t->seen[u] == t->stamp)
        return;
    t->seen[u] = t->stamp;
    int p = t->pos[u];
    olla_bit_set(t->pending, (size_t)p);
    t->pushed[t->npushed++] = p;
}

/* the highest pending position at or above lo (-1: none); positions above
 * it are known empty from then on */
static int anc_next(topo_state *t, int lo)
{
    while (t->top >= lo) {
        size_t w = olla_bit_word((size_t)t->top);
        uint64_t bits = t->pending[w] & olla_bits_through((size_t)t->top);
        if (bits) {
            int p = (int)olla_bit_highest(w, bits);
            if (p < lo)
                return -1;
            t->top = p;
            return p;
        }
        t->top = (int)olla_bit_index(w, 0) - 1;
    }
    return -1;
}

/* the predecessors of u in the graph with the added edges, pushed */
static void anc_expand(topo_state *t, int u)
{
    const olla_dag *dag = t->dag;
    for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++)
        anc_push(t, dag->producer[dag->in_list[k]]);
    for (int x = t->xp_head[u]; x >= 0; x = t->xp_next[x])
        anc_push(t, t->x_from[x]);
}

static void anc_start(topo_state *t, int v)
{
    for (int i = 0; i < t->npushed; i++)
        t->pending[olla_bit_word((size_t)t->pushed[i])] = 0;
    t->npushed = 0;
    t->stamp++;
    t->top = t->pos[v] - 1;
    t->seen[v] = t->stamp; /* v itself is not its own ancestor; marked to stop walks */
    anc_expand(t, v);
}

/* 1 when x is a proper ancestor of the current update v: every ancestor
 * lies on a path of rising positions, so expanding all found ancestors at
 * or above x's position finds x if it is one */
static int anc_has(topo_state *t, int v, int x)
{
    if (x == v || t->pos[x] > t->pos[v])
        return 0;
    for (int p; (p = anc_next(t, t->pos[x])) >= 0;) {
        olla_bit_clear(t->pending, (size_t)p);
        anc_expand(t, t->at[p]);
    }
    return t->seen[x] == t->stamp;
}

/* ---- the dynamic order ---- */

/* nodes reached from `from` in direction dir (1 successors, 0 predecessors)
 * whose positions stay within [lo, hi]; into out, returns their number */
static int topo_reach(topo_state *t, int from, int dir, int lo, int hi, int *out)
{
    const olla_dag *dag = t->dag;
    int n_out = 0, sp = 0;
    t->mark[from] = t->mstamp;
    t->stack[sp++] = from;
    while (sp > 0) {
        int u = t->stack[--sp];
        out[n_out++] = u;
#define VISIT(w)                                                                                    \
    do {                                                                                            \
        int w_ = (w);                                                                               \
        if (t->mark[w_] != t->mstamp && t->pos[w_] >= lo && t->pos[w_] <= hi) {                     \
            t->mark[w_] = t->mstamp;                                                                \
            t->stack[sp++] = w_;                                                                    \
        }                                                                                           \
    } while (0)
        if (dir) {
            for (int k = dag->out_start[u]; k < dag->out_start[u + 1]; k++) {
                int e = dag->out_list[k];
                for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
                    VISIT(dag->sink_list[q]);
            }
            for (int x = t->xs_head[u]; x >= 0; x = t->xs_next[x])
                VISIT(t->x_to[x]);
        } else {
            for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++)
                VISIT(dag->producer[dag->in_list[k]]);
            for (int x = t->xp_head[u]; x >= 0; x = t->xp_next[x])
                VISIT(t->x_from[x]);
        }
#undef VISIT
    }
    return n_out;
}

/* adds the edge u -> a (a is no ancestor of u) and keeps the order
 * topological: when a lies before u, the nodes a reaches up to u's
 * position move after those that reach u down to a's position */
static void topo_add(topo_state *t, int u, int a)
{
    int x = t->nx++;
    t->x_from[x] = u;
    t->x_to[x] = a;
    t->xp_next[x] = t->xp_head[a];
    t->xp_head[a] = x;
    t->xs_next[x] = t->xs_head[u];
    t->xs_head[u] = x;
    int lo = t->pos[a], hi = t->pos[u];
    if (!t->live || lo > hi)
        return;
    t->mstamp++;
    int nf = topo_reach(t, a, 1, lo, hi, t->fw);
    t->mstamp++;
    int nb = topo_reach(t, u, 0, lo, hi, t->bw);
    /* the positions they hold, in order, read off a bit per position; the
     * backward set (marked by the last walk) takes the lowest of them */
    for (int i = 0; i < nf; i++)
        olla_bit_set(t->moved, (size_t)t->pos[t->fw[i]]);
    for (int i = 0; i < nb; i++)
        olla_bit_set(t->moved, (size_t)t->pos[t->bw[i]]);
    int k = 0, ib = 0, jf = 0;
    for (size_t w = olla_bit_word((size_t)lo); w <= olla_bit_word((size_t)hi); w++)
        for (uint64_t bits = t->moved[w]; bits; bits &= bits - 1) {
            int p = (int)olla_bit_lowest(w, bits), y = t->at[p];
            t->slots[k++] = p;
            if (t->mark[y] == t->mstamp)
                t->bw[ib++] = y; /* now in order of position */
            else
                t->fw[jf++] = y;
        }
    for (size_t w = olla_bit_word((size_t)lo); w <= olla_bit_word((size_t)hi); w++)
        t->moved[w] = 0;
    for (int i = 0; i < nb; i++)
        t->at[t->slots[i]] = t->bw[i];
    for (int j = 0; j < nf; j++)
        t->at[t->slots[nb + j]] = t->fw[j];
    for (k = 0; k < nb + nf; k++)
        t->pos[t->at[t->slots[k]]] = t->slots[k];
}

/* the order made live: a topological order of the graph with the edges
 * added so far (Kahn's, from the sources), from then on kept up to date by
 * topo_add */
static void topo_live(topo_state *t)
{
    const olla_dag *dag = t->dag;
    int n = t->n, *indeg = t->fw, *queue = t->at, nq = 0;
    if (t->live)
        return;
    t->live = 1;
    for (int v = 0; v < n; v++) {
        indeg[v] = dag->in_start[v + 1] - dag->in_start[v];
        for (int x = t->xp_head[v]; x >= 0; x = t->xp_next[x])
            indeg[v]++;
        if (indeg[v] == 0)
            queue[nq++] = v;
    }
    for (int i = 0; i < nq; i++) {
        int u = queue[i];
        t->pos[u] = i;
        for (int k = dag->out_start[u]; k < dag->out_start[u + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
                if (--indeg[dag->sink_list[q]] == 0)
                    queue[nq++] = dag->sink_list[q];
        }
        for (int x = t->xs_head[u]; x >= 0; x = t->xs_next[x])
            if (--indeg[t->x_to[x]] == 0)
                queue[nq++] = t->x_to[x];
    }
}

/* ---- the updates each node reaches, as ranges ----
 *
 * The walk below asks two things of every node it meets: is it an ancestor
 * of the update (in the graph with the edges added so far), and could its
 * descendants hold a candidate above the best found so far. Both are
 * answered from the updates a node reaches in the graph as given. The
 * updates are ranked in the order a depth-first search finishes them
 * (deepest reader first), so that the updates a node reaches mostly form
 * one range of ranks [lo, hi], less a few holes (ranks inside it that it
 * does not reach; a node with more than RANK_HOLES is "unknown").
 *
 * The ancestors of the update are the ancestors of a small set Z of
 * updates: the update itself and, again and again, every update whose added
 * edge points at an ancestor. A known node is an ancestor when a rank of Z
 * lies in its range and is not one of its holes (unknown nodes ask the lazy
 * ancestor search above). A node that is no ancestor reaches only updates
 * outside Z. So the best candidate below a node s is at most the highest
 * level among: the known nodes whose range lies in a gap between ranks of
 * Z inside s's range (a query on a merge-sort tree of the ranges), the
 * known nodes the tree misses (no ancestor, yet their range meets Z at
 * holes; found per update from the ranks of Z), and s's descendants that
 * reach no update or are unknown (kept per node). Candidates are only ever
 * met as readers: nodes with no predecessor are left out, and so, when one
 * node t reaches every update, are the nodes that descend from no ancestor
 * of t. None of this changes an answer of the walk: it only leaves out
 * subtrees that cannot beat the best found, and tests ancestry exactly.
 *
 * Cost: the summary is built once (n log n); per update, Z is the union of
 * the persistent trees of the updates found (below), the walk's answer for
 * a node is first sought at its bound's level alone, and chains of first
 * readers are gone down in jumps. On the GPT-2 steps the whole grows about
 * 2.1 times per doubling of the layers. What still grows faster: on LLaMA
 * steps the search opens subtrees whose range meets the gaps of Z but that
 * do not reach the candidate (ranges know nothing of reachability), about
 * 3.5 times per doubling; and nodes with more than RANK_HOLES holes (half
 * of the corpus transformer's) ask the lazy ancestor search. */

enum { RANK_HOLES = 4 }; /* holes kept per node */

typedef struct {
    int n_upd;
    int *rank;               /* node -> rank among the updates, -1: no update */
    int *lo, *hi;            /* the ranks a node reaches lie in [lo, hi]; lo > hi: none */
    signed char *nh;         /* ranks of [lo, hi] it does not reach (its holes); -1: too many */
    int *holes;              /* RANK_HOLES per node, rising */
    unsigned char *in_region; /* 1: the range bound may be used at this node */
    int *nu, *ix;            /* highest level of a descendant that reaches no update / has too many holes */
    /* the merge-sort tree: points (ranges of nodes that can be candidates)
     * sorted by lo; level k holds blocks of 2^k points sorted by hi, with the
     * running highest level of each block */
    int np, levels;
    int *pt_lo, *tree_hi, *tree_top;
    int *hole_start, *hole_node; /* per rank: the points with that hole */
    /* the first reader of each node (as the walk lists them; -1: none), where
     * it sits (output k, reader slot s), and 2^l steps along first readers */
    int *first_k, *first_s, *up, up_levels;
} reach_sum;

static void reach_free(reach_sum *r)
{
    free(r->rank);
    free(r->lo);
    free(r->hi);
    free(r->nh);
    free(r->holes);
    free(r->in_region);
    free(r->nu);
    free(r->ix);
    free(r->pt_lo);
    free(r->tree_hi);
    free(r->tree_top);
    free(r->hole_start);
    free(r->hole_node);
    free(r->first_k);
    free(r->first_s);
    free(r->up);
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* post[] receives the nodes in the order a depth-first search finishes them
 * (a reverse topological order), the readers of a node taken deepest first
 * (highest backward level), so that the updates below a long chain are
 * finished before those beside it; updates are ranked in that order. rd:
 * scratch of the graph's reader slots; scratch: three arrays of n + 1. */
static void reach_postorder(const olla_dag *dag, reach_sum *r, const int *bwd, int *post, uint64_t *rd,
                            int *const scratch[3])
{
    int *rd_start = scratch[0], *stk = scratch[1], *pos = scratch[2];
    int n = dag->n_nodes, np = 0, nr = 0, m = 0;
    signed char *seen = r->nh; /* scratch until the ranges are made */
    memset(seen, 0, (size_t)n + 1);
    for (int y = 0; y < n; y++) { /* each key: the level (highest first), then the reader */
        rd_start[y] = m;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++, m++)
                rd[m] = (uint64_t)(INT32_MAX - bwd[dag->sink_list[q]]) << 32 | (uint64_t)(unsigned)dag->sink_list[q];
        }
        qsort(rd + rd_start[y], (size_t)(m - rd_start[y]), sizeof *rd, by_u64);
    }
    rd_start[n] = m;
    for (int root = 0; root < n; root++) {
        if (seen[root])
            continue;
        int sp = 0;
        seen[root] = 1;
        stk[sp] = root, pos[sp++] = rd_start[root];
        while (sp > 0) {
            int y = stk[sp - 1];
            while (pos[sp - 1] < rd_start[y + 1] && seen[(uint32_t)rd[pos[sp - 1]]])
                pos[sp - 1]++;
            if (pos[sp - 1] < rd_start[y + 1]) {
                int w = (int)(uint32_t)rd[pos[sp - 1]++];
                seen[w] = 1;
                stk[sp] = w, pos[sp++] = rd_start[w];
                continue;
            }
            post[np++] = y;
            r->rank[y] = is_update(dag, y) ? nr++ : -1;
            sp--;
        }
    }
    r->n_upd = nr;
}

typedef struct {
    int lo, hi, node; /* a reader's range (node: the reader, -1: the node's own rank) */
} rank_range;

static int by_lo(const void *a, const void *b)
{
    const rank_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* 1 when rank h is one of node w's holes */
static int is_hole(const reach_sum *r, int w, int h)
{
    for (int i = 0; w >= 0 && i < r->nh[w]; i++)
        if (r->holes[(size_t)w * RANK_HOLES + i] == h)
            return 1;
    return 0;
}

/* y's holes from its readers' ranges parts[0..np) sorted by lo: the ranks
 * between them, and their holes no other reader fills; -1: too many */
static int reach_holes(reach_sum *r, int y, const rank_range *parts, int np)
{
    int nh = 0, *out = r->holes + (size_t)y * RANK_HOLES, top = parts[0].hi;
    for (int i = 1; i < np; i++) {
        for (int h = top + 1; h < parts[i].lo; h++) {
            if (nh == RANK_HOLES)
                return -1;
            out[nh++] = h;
        }
        top = parts[i].hi > top ? parts[i].hi : top;
    }
    for (int i = 0; i < np; i++)
        for (int k = 0; parts[i].node >= 0 && k < r->nh[parts[i].node]; k++) {
            int h = r->holes[(size_t)parts[i].node * RANK_HOLES + k], filled = 0;
            for (int j = 0; !filled && j < np; j++)
                filled = parts[j].lo <= h && h <= parts[j].hi && !is_hole(r, parts[j].node, h);
            for (int j = 0; !filled && j < nh; j++)
                filled = out[j] == h; /* already counted */
            if (filled)
                continue;
            if (nh == RANK_HOLES || np > 64)
                return -1;
            out[nh++] = h;
        }
    for (int i = 1; i < nh; i++) /* rising */
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return nh;
}

/* lo, hi, holes, nu and ix of node y from those of its readers */
static void reach_node(const olla_dag *dag, reach_sum *r, const int *bwd, int y, rank_range *parts)
{
    int np = 0, known = 1, nu = -1, ix = -1;
    if (r->rank[y] >= 0)
        parts[np++] = (rank_range){r->rank[y], r->rank[y], -1};
    for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
        int e = dag->out_list[k];
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
            int w = dag->sink_list[q];
            if (r->lo[w] <= r->hi[w])
                parts[np++] = (rank_range){r->lo[w], r->hi[w], w};
            else if (bwd[w] > nu)
                nu = bwd[w];
            if (r->nh[w] < 0) {
                known = 0;
                ix = bwd[w] > ix ? bwd[w] : ix;
            }
            nu = r->nu[w] > nu ? r->nu[w] : nu;
            ix = r->ix[w] > ix ? r->ix[w] : ix;
        }
    }
    if (np > 1)
        qsort(parts, (size_t)np, sizeof *parts, by_lo);
    int lo = np ? parts[0].lo : 1, hi = np ? parts[0].hi : 0;
    for (int i = 1; i < np; i++)
        hi = parts[i].hi > hi ? parts[i].hi : hi;
    r->lo[y] = lo, r->hi[y] = hi, r->nu[y] = nu, r->ix[y] = ix;
    r->nh[y] = (signed char)(!known ? -1 : np ? reach_holes(r, y, parts, np) : 0);
}

/* the ranges y's ranks fall into between its holes (nh >= 0, lo <= hi):
 * nh + 1 of them into out */
static int reach_pieces(const reach_sum *r, int y, rank_range *out)
{
    int np = 0, from = r->lo[y];
    for (int i = 0; i < r->nh[y]; i++) {
        int h = r->holes[(size_t)y * RANK_HOLES + i];
        if (h > from)
            out[np++] = (rank_range){from, h - 1, y};
        from = h + 1;
    }
    out[np++] = (rank_range){from, r->hi[y], y};
    return np;
}

/* in_region: when a node t reaches every update (exactly), the nodes that
 * descend from t's ancestors (the latest such t by forward level); else all.
 * Uses stack (n nodes) as scratch. */
static void reach_region(const olla_dag *dag, reach_sum *r, const int *fwd, int *stack)
{
    int n = dag->n_nodes, t = -1, sp = 0;
    for (int y = 0; y < n; y++)
        if (r->n_upd > 0 && r->nh[y] == 0 && r->lo[y] == 0 && r->hi[y] == r->n_upd - 1 && (t < 0 || fwd[y] > fwd[t]))
            t = y;
    memset(r->in_region, t < 0, (size_t)n + 1);
    if (t < 0)
        return;
    unsigned char *up = r->in_region; /* 2: an ancestor of t; then 1: in the region */
    up[t] = 2;
    stack[sp++] = t;
    while (sp > 0) {
        int y = stack[--sp];
        for (int k = dag->in_start[y]; k < dag->in_start[y + 1]; k++) {
            int p = dag->producer[dag->in_list[k]];
            if (up[p] != 2)
                up[p] = 2, stack[sp++] = p;
        }
    }
    for (int y = 0; y < n; y++)
        if (up[y] == 2)
            stack[sp++] = y;
    while (sp > 0) {
        int y = stack[--sp];
        up[y] = 1;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
                if (up[dag->sink_list[q]] == 0)
                    up[dag->sink_list[q]] = 3, stack[sp++] = dag->sink_list[q];
        }
    }
}

typedef struct {
    int lo, hi, level;
} rank_point;

/* 1 when y is a point of the tree: in the region, with a predecessor, at
 * least one update reached and few holes */
static int reach_point(const olla_dag *dag, const reach_sum *r, int y)
{
    return r->in_region[y] && r->nh[y] >= 0 && r->lo[y] <= r->hi[y] && dag->in_start[y] < dag->in_start[y + 1];
}

/* holes_at: for each rank, the points that have it as a hole (a point with
 * a hole in Z and no other rank in Z is no ancestor, yet its range meets Z:
 * the tree misses it, so the search adds it by hand) */
static int reach_holes_at(const olla_dag *dag, reach_sum *r)
{
    int n = dag->n_nodes, m = 0;
    r->hole_start = calloc((size_t)r->n_upd + 2, sizeof(int));
    if (!r->hole_start)
        return 0;
    for (int y = 0; y < n; y++)
        for (int i = 0; reach_point(dag, r, y) && i < r->nh[y]; i++, m++)
            r->hole_start[r->holes[(size_t)y * RANK_HOLES + i] + 1]++;
    for (int k = 0; k < r->n_upd; k++)
        r->hole_start[k + 1] += r->hole_start[k];
    r->hole_node = malloc(((size_t)m + 1) * sizeof(int));
    int *fill = malloc(((size_t)r->n_upd + 1) * sizeof(int));
    if (!r->hole_node || !fill) {
        free(fill);
        return 0;
    }
    memcpy(fill, r->hole_start, (size_t)r->n_upd * sizeof(int));
    for (int y = 0; y < n; y++)
        for (int i = 0; reach_point(dag, r, y) && i < r->nh[y]; i++)
            r->hole_node[fill[r->holes[(size_t)y * RANK_HOLES + i]]++] = y;
    free(fill);
    return 1;
}

static int by_point_lo(const void *a, const void *b)
{
    const rank_point *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* the merge-sort tree over the points */
static int reach_tree(const olla_dag *dag, reach_sum *r, const int *bwd)
{
    int n = dag->n_nodes, np = 0;
    size_t most = (size_t)n * (RANK_HOLES + 1) + 1;
    rank_point *pt = malloc(most * sizeof *pt), *tmp = malloc(most * sizeof *tmp);
    if (!pt || !tmp) {
        free(pt);
        free(tmp);
        return 0;
    }
    for (int y = 0; y < n; y++)
        if (reach_point(dag, r, y)) /* a node with holes by its whole range: see holes_at */
            pt[np++] = (rank_point){r->lo[y], r->hi[y], bwd[y]};
    qsort(pt, (size_t)np, sizeof *pt, by_point_lo);
    int levels = 1;
    while ((1 << (levels - 1)) < np)
        levels++;
    r->np = np, r->levels = levels;
    r->pt_lo = malloc(((size_t)np + 1) * sizeof(int));
    r->tree_hi = malloc(((size_t)np * (size_t)levels + 1) * sizeof(int));
    r->tree_top = malloc(((size_t)np * (size_t)levels + 1) * sizeof(int));
    if (!r->pt_lo || !r->tree_hi || !r->tree_top) {
        free(pt);
        free(tmp);
        return 0;
    }
    for (int i = 0; i < np; i++)
        r->pt_lo[i] = pt[i].lo;
    for (int k = 0; k < levels; k++) {
        int width = 1 << k;
        for (int s = 0; s < np; s += width) { /* block [s, e) sorted by hi (merging the halves) */
            int e = s + width < np ? s + width : np, m = s + width / 2 < e ? s + width / 2 : e;
            int a = s, b = m, o = s;
            while (k > 0 && (a < m || b < e))
                tmp[o++] = b >= e || (a < m && pt[a].hi <= pt[b].hi) ? pt[a++] : pt[b++];
            if (k > 0)
                memcpy(pt + s, tmp + s, (size_t)(e - s) * sizeof *pt);
            for (int i = s; i < e; i++) {
                r->tree_hi[(size_t)k * np + i] = pt[i].hi;
                int prev = i > s ? r->tree_top[(size_t)k * np + i - 1] : -1;
                r->tree_top[(size_t)k * np + i] = pt[i].level > prev ? pt[i].level : prev;
            }
        }
    }
    free(pt);
    free(tmp);
    return 1;
}

/* the highest level among the points whose range lies in [a, b] (-1: none) */
static int reach_query(const reach_sum *r, int a, int b)
{
    if (a > b || r->np == 0)
        return -1;
    int lo = 0, hi = r->np; /* the first point with pt_lo >= a */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->pt_lo[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    int best = -1;
    for (int i = lo; i < r->np;) {
        int k = i == 0 ? r->levels - 1 : __builtin_ctz((unsigned)i);
        if (k > r->levels - 1)
            k = r->levels - 1;
        int e = i + (1 << k) < r->np ? i + (1 << k) : r->np;
        const int *h = r->tree_hi + (size_t)k * r->np;
        int l = i, u = e; /* the first entry of the block with hi > b */
        while (l < u) {
            int mid = l + (u - l) / 2;
            if (h[mid] <= b)
                l = mid + 1;
            else
                u = mid;
        }
        if (l > i && r->tree_top[(size_t)k * r->np + l - 1] > best)
            best = r->tree_top[(size_t)k * r->np + l - 1];
        i = e;
    }
    return best;
}

/* first readers and their jumps (0: out of memory) */
static int reach_first(const olla_dag *dag, reach_sum *r)
{
    int n = dag->n_nodes, lv = 1;
    while ((1 << lv) < n)
        lv++;
    r->up_levels = lv;
    r->first_k = malloc(((size_t)n + 1) * sizeof(int));
    r->first_s = malloc(((size_t)n + 1) * sizeof(int));
    r->up = malloc(((size_t)n * (size_t)lv + 1) * sizeof(int));
    if (!r->first_k || !r->first_s || !r->up)
        return 0;
    for (int y = 0; y < n; y++) {
        r->up[y] = -1;
        for (int k = dag->out_start[y]; r->up[y] < 0 && k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            if (dag->sink_start[e] < dag->sink_start[e + 1])
                r->up[y] = dag->sink_list[dag->sink_start[e]], r->first_k[y] = k, r->first_s[y] = dag->sink_start[e];
        }
    }
    for (int l = 1; l < lv; l++)
        for (int y = 0; y < n; y++) {
            int h = r->up[(size_t)(l - 1) * n + y];
            r->up[(size_t)l * n + y] = h < 0 ? -1 : r->up[(size_t)(l - 1) * n + h];
        }
    return 1;
}

/* the summary of dag: ranks, ranges, region and tree (0: out of memory) */
static int reach_build(const olla_dag *dag, const int *fwd, const int *bwd, reach_sum *r)
{
    int n = dag->n_nodes;
    size_t sz = (size_t)n + 1, ne = (size_t)dag->sink_start[dag->n_tensors] + 2;
    memset(r, 0, sizeof *r);
    r->rank = malloc(sz * sizeof(int));
    r->lo = malloc(sz * sizeof(int));
    r->hi = malloc(sz * sizeof(int));
    r->nh = malloc(sz);
    r->holes = malloc(sz * RANK_HOLES * sizeof(int));
    r->in_region = malloc(sz);
    r->nu = malloc(sz * sizeof(int));
    r->ix = malloc(sz * sizeof(int));
    int *post = malloc(sz * sizeof(int)), *sv = malloc(sz * sizeof(int)), *sk = malloc(sz * sizeof(int));
    int *ss = malloc(sz * sizeof(int));
    rank_range *parts = malloc(ne * sizeof *parts);
    uint64_t *rd = malloc(ne * sizeof *rd);
    int ok = r->rank && r->lo && r->hi && r->nh && r->holes && r->in_region && r->nu && r->ix && post && sv && sk && ss && parts && rd;
    if (ok) {
        int *const scratch[3] = {sk, sv, ss};
        reach_postorder(dag, r, bwd, post, rd, scratch);
        for (int i = 0; i < n; i++)
            reach_node(dag, r, bwd, post[i], parts);
        reach_region(dag, r, fwd, sv);
        ok = reach_tree(dag, r, bwd) && reach_holes_at(dag, r) && reach_first(dag, r);
    }
    free(post);
    free(sv);
    free(sk);
    free(ss);
    free(parts);
    free(rd);
    return ok;
}

/* ---- the added edges by the range of their target ----
 *
 * Z grows by stabbing: for a rank r of Z, every added edge whose target's
 * range holds r brings its update into Z. The edges with an exact target
 * sit in a tree over lo (a list per lo, by hi from the highest), each tree
 * node keeping the highest hi of the edges still unused below it, so that
 * a stab costs a logarithm per edge it returns. Edges used up in one update
 * are restored before the next. The few edges whose target is not exact
 * are asked one by one. */

typedef struct {
    int size;                 /* leaves: a power of two at least the number of ranks */
    int *top;                 /* 2 * size: the highest hi of an unused edge below */
    int **list, *len, *first; /* per lo: entries by hi descending; the first unused */
    size_t *cap;
    int *entry_edge, *entry_hi, n_entries; /* an entry: a piece of an edge's target */
    int *touched, n_touched;  /* the lo whose first moved in this update */
    int *loose, n_loose;      /* the edges whose target is not exact */
} edge_index;

static void edge_index_free(edge_index *x)
{
    for (int i = 0; x->list && i < x->size; i++)
        free(x->list[i]);
    free(x->list);
    free(x->top);
    free(x->len);
    free(x->first);
    free(x->cap);
    free(x->entry_edge);
    free(x->entry_hi);
    free(x->touched);
    free(x->loose);
}

/* an empty index for n_ranks ranks and up to n_edges edges (0: out of memory) */
static int edge_index_init(edge_index *x, int n_ranks, int n_edges)
{
    memset(x, 0, sizeof *x);
    x->size = 1;
    while (x->size < n_ranks)
        x->size *= 2;
    size_t sz = (size_t)x->size, ne = (size_t)n_edges + 1, nent = ne * (RANK_HOLES + 1);
    x->top = malloc(2 * sz * sizeof(int));
    x->list = calloc(sz, sizeof(int *));
    x->len = calloc(sz, sizeof(int));
    x->first = calloc(sz, sizeof(int));
    x->cap = calloc(sz, sizeof(size_t));
    x->entry_edge = malloc(nent * sizeof(int));
    x->entry_hi = malloc(nent * sizeof(int));
    x->touched = malloc(sz * sizeof(int));
    x->loose = malloc(ne * sizeof(int));
    if (!x->top || !x->list || !x->len || !x->first || !x->cap || !x->entry_edge || !x->entry_hi || !x->touched || !x->loose)
        return 0;
    for (size_t i = 0; i < 2 * sz; i++)
        x->top[i] = -1;
    return 1;
}

/* the tree above leaf lo, from its list */
static void edge_index_fix(edge_index *x, int lo)
{
    int i = x->size + lo;
    x->top[i] = x->first[lo] < x->len[lo] ? x->entry_hi[x->list[lo][x->first[lo]]] : -1;
    for (i /= 2; i >= 1; i /= 2)
        x->top[i] = x->top[2 * i] > x->top[2 * i + 1] ? x->top[2 * i] : x->top[2 * i + 1];
}

/* edge k, whose target reaches every rank of [lo, hi] (0: out of memory) */
static int edge_index_add(edge_index *x, int k, int lo, int hi)
{
    int id = x->n_entries++;
    x->entry_edge[id] = k;
    x->entry_hi[id] = hi;
    int *l = olla_grow(x->list[lo], &x->cap[lo], (size_t)x->len[lo] + 1, sizeof(int));
    if (!l)
        return 0;
    x->list[lo] = l;
    int j = x->len[lo]++;
    for (; j > 0 && x->entry_hi[l[j - 1]] < hi; j--)
        l[j] = l[j - 1];
    l[j] = id;
    edge_index_fix(x, lo);
    return 1;
}

/* an unused edge whose target's range holds rank r, now used (-1: none) */
static int edge_index_take(edge_index *x, int r)
{
    int i = 1, lo = 0, hi = x->size - 1; /* the leftmost leaf at or below r with top >= r */
    if (x->top[1] < r)
        return -1;
    while (i < x->size) {
        int mid = lo + (hi - lo) / 2;
        if (x->top[2 * i] >= r)
            i = 2 * i, hi = mid;
        else if (mid + 1 <= r && x->top[2 * i + 1] >= r)
            i = 2 * i + 1, lo = mid + 1;
        else
            return -1;
    }
    if (lo > r)
        return -1;
    int k = x->entry_edge[x->list[lo][x->first[lo]]];
    if (x->first[lo]++ == 0)
        x->touched[x->n_touched++] = lo;
    edge_index_fix(x, lo);
    return k;
}

/* every edge unused again */
static void edge_index_restore(edge_index *x)
{
    for (int i = 0; i < x->n_touched; i++) {
        x->first[x->touched[i]] = 0;
        edge_index_fix(x, x->touched[i]);
    }
    x->n_touched = 0;
}

/* ---- Z, a persistent set of ranks ----
 *
 * Z of an update holds the Z of every update in it as that update found it
 * (those reached it then and reach it still, the graph only gaining edges),
 * so Z is kept per update as a persistent segment tree over the ranks: an
 * update's Z is its own rank joined with the trees of the updates it meets,
 * sharing their nodes. A tree node keeps the number of ranks below it, the
 * first and the last, and the highest tree answer (reach_query) for a gap
 * between two consecutive ranks below it, so that the bound of a range
 * costs a few queries whatever the size of Z. */

typedef struct {
    int l, r, cnt, first, last, inner;
} zs_node;

typedef struct {
    zs_node *node; /* node 0: the empty set */
    size_t cap;
    int n, size, oom; /* nodes used; ranks [0, size), a power of two; out of memory */
    const reach_sum *sum;
} zset;

/* an empty pool for the ranks of sum (0: out of memory) */
static int zs_init(zset *z, const reach_sum *sum)
{
    memset(z, 0, sizeof *z);
    z->sum = sum;
    z->size = 1;
    while (z->size < sum->n_upd)
        z->size *= 2;
    z->node = olla_grow(NULL, &z->cap, 1024, sizeof *z->node);
    if (!z->node)
        return 0;
    z->node[0] = (zs_node){0, 0, 0, -1, -1, -1};
    z->n = 1;
    return 1;
}

/* the summary of a then b (ranks of a before those of b) into out */
static void zs_join(const zset *z, const zs_node *a, const zs_node *b, zs_node *out)
{
    if (a->cnt == 0 || b->cnt == 0) {
        *out = a->cnt ? *a : *b;
        return;
    }
    int q = reach_query(z->sum, a->last + 1, b->first - 1);
    out->cnt = a->cnt + b->cnt;
    out->first = a->first;
    out->last = b->last;
    out->inner = a->inner > b->inner ? a->inner : b->inner;
    out->inner = q > out->inner ? q : out->inner;
}

/* a new node over children l and r (a leaf of rank `leaf` when l = r = 0
 * and leaf >= 0); 0 when out of memory */
static int zs_make(zset *z, int l, int r, int leaf)
{
    zs_node *p = olla_grow(z->node, &z->cap, (size_t)z->n + 1, sizeof *z->node);
    if (!p) {
        z->oom = 1;
        return 0;
    }
    z->node = p;
    int id = z->n++;
    if (leaf >= 0) {
        p[id] = (zs_node){0, 0, 1, leaf, leaf, -1};
    } else {
        zs_join(z, &p[l], &p[r], &p[id]);
        p[id].l = l, p[id].r = r;
    }
    return id;
}

/* the union of trees a and b over the ranks [lo, hi] */
static int zs_union(zset *z, int a, int b, int lo, int hi)
{
    if (a == 0 || a == b)
        return b;
    if (b == 0 || lo == hi)
        return a;
    int mid = lo + (hi - lo) / 2;
    int l = zs_union(z, z->node[a].l, z->node[b].l, lo, mid);
    int r = zs_union(z, z->node[a].r, z->node[b].r, mid + 1, hi);
    if (l == z->node[a].l && r == z->node[a].r)
        return a;
    if (l == z->node[b].l && r == z->node[b].r)
        return b;
    return zs_make(z, l, r, -1);
}

/* tree t with rank k added, over the ranks [lo, hi] */
static int zs_add(zset *z, int t, int k, int lo, int hi)
{
    if (lo == hi)
        return t ? t : zs_make(z, 0, 0, k);
    int mid = lo + (hi - lo) / 2, l = z->node[t].l, r = z->node[t].r;
    if (k <= mid)
        l = zs_add(z, l, k, lo, mid);
    else
        r = zs_add(z, r, k, mid + 1, hi);
    return zs_make(z, l, r, -1);
}

/* the summary of tree t's ranks in [qlo, qhi] (t over [lo, hi]) */
static zs_node zs_fold(const zset *z, int t, int lo, int hi, int qlo, int qhi)
{
    if (t == 0 || qhi < z->node[t].first || z->node[t].last < qlo)
        return z->node[0];
    if (qlo <= z->node[t].first && z->node[t].last <= qhi)
        return z->node[t];
    int mid = lo + (hi - lo) / 2;
    zs_node a = zs_fold(z, z->node[t].l, lo, mid, qlo, qhi), b = zs_fold(z, z->node[t].r, mid + 1, hi, qlo, qhi), out;
    zs_join(z, &a, &b, &out);
    return out;
}

/* the number of tree t's ranks in [qlo, qhi] (t over [lo, hi]) */
static int zs_count(const zset *z, int t, int lo, int hi, int qlo, int qhi)
{
    if (t == 0 || qhi < z->node[t].first || z->node[t].last < qlo)
        return 0;
    if (qlo <= z->node[t].first && z->node[t].last <= qhi)
        return z->node[t].cnt;
    int mid = lo + (hi - lo) / 2;
    return zs_count(z, z->node[t].l, lo, mid, qlo, qhi) + zs_count(z, z->node[t].r, mid + 1, hi, qlo, qhi);
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
 * the ranges above only let it skip what cannot change its answer. */

typedef struct {
    int v, k, s;       /* node, position in its outputs and in that output's readers */
    int best, best_lvl;
} cand_frame;

typedef struct {
    const olla_dag *dag;
    topo_state *topo;
    const int *bwd;
    int update;
    int *memo_node, *memo_level;
    int *stamp, cur;
    cand_frame *stack; /* n_nodes frames: a node is on it at most once */
    const reach_sum *sum;
    int *edge_from, *edge_to; /* the edges added so far */
    int n_edges;
    edge_index *index;
    zset *zs;
    int z_root;                 /* Z of the current update */
    int *snap_root, *snap_time; /* per update done: its Z, and the number of edges then */
    int *todo, *pushed;         /* updates found for Z, not joined yet; stamped when found */
    int asked; /* the lazy ancestor search has started for this update */
    int *t_seen, t_cur; /* nodes met by the current target search */
    int *extra, n_extra, *x_seen; /* the points the tree misses in this update */
} anchor_ctx;

/* the number of ranks of Z in [lo, hi] */
static int z_count(const anchor_ctx *c, int lo, int hi)
{
    return lo > hi ? 0 : zs_count(c->zs, c->z_root, 0, c->zs->size - 1, lo, hi);
}

/* 1 when a rank of Z lies in y's range and is none of its holes */
static int z_meets(const anchor_ctx *c, int y)
{
    const reach_sum *r = c->sum;
    int in = z_count(c, r->lo[y], r->hi[y]);
    for (int i = 0; in > 0 && i < r->nh[y]; i++) {
        int h = r->holes[(size_t)y * RANK_HOLES + i];
        in -= z_count(c, h, h);
    }
    return in > 0;
}

/* 1 when y is the update or one of its ancestors in the graph with the
 * edges added so far (known nodes by Z, the others by the lazy search) */
static int in_ancestry(anchor_ctx *c, int y)
{
    const reach_sum *r = c->sum;
    if (y == c->update)
        return 1;
    if (r->nh[y] >= 0)
        return z_meets(c, y);
    if (!c->asked) { /* the first question of this update */
        topo_live(c->topo);
        anc_start(c->topo, c->update);
        c->asked = 1;
    }
    return anc_has(c->topo, c->update, y);
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
    zset *z = c->zs;
    const reach_sum *r = c->sum;
    edge_index *x = c->index;
    int top = z->size - 1, n = 0;
    c->z_root = zs_add(z, 0, r->rank[c->update], 0, top);
    for (int k; (k = edge_index_take(x, r->rank[c->update])) >= 0;)
        z_found(c, c->edge_from[k], &n);
    edge_index_restore(x);
    for (int i = 0; i < x->n_loose; i++)
        if (in_ancestry(c, c->edge_to[x->loose[i]]))
            z_found(c, c->edge_from[x->loose[i]], &n);
    while (n > 0) {
        int u = c->todo[--n];
        if (z_count(c, r->rank[u], r->rank[u]) > 0)
            continue;
        c->z_root = zs_union(z, c->z_root, c->snap_root[u], 0, top);
        for (int k = c->snap_time[u]; k < c->n_edges; k++) {
            int src = c->edge_from[k], to = c->edge_to[k];
            if (r->nh[to] >= 0 && z_count(c, r->rank[src], r->rank[src]) == 0 && z_meets(c, to))
                z_found(c, src, &n);
        }
    }
}

/* the ranks of tree t into out (when points have holes) */
static void zs_ranks(const zset *z, int t, int *out, int *n)
{
    if (t == 0)
        return;
    if (z->node[t].l == 0 && z->node[t].r == 0) {
        out[(*n)++] = z->node[t].first;
        return;
    }
    zs_ranks(z, z->node[t].l, out, n);
    zs_ranks(z, z->node[t].r, out, n);
}

/* the points no ancestor of the update whose range meets Z at holes only */
static void z_extras(anchor_ctx *c)
{
    const reach_sum *r = c->sum;
    int nr = 0;
    c->n_extra = 0;
    if (r->hole_start[r->n_upd] == 0)
        return; /* no point has holes */
    zs_ranks(c->zs, c->z_root, c->todo, &nr);
    for (int i = 0; i < nr; i++) {
        int rk = c->todo[i];
        for (int k = r->hole_start[rk]; k < r->hole_start[rk + 1]; k++) {
            int w = r->hole_node[k];
            if (c->x_seen[w] != c->cur) {
                c->x_seen[w] = c->cur;
                if (!z_meets(c, w))
                    c->extra[c->n_extra++] = w;
            }
        }
    }
}

/* At least the highest level of a candidate among s's descendants (s an
 * ancestor of the update); it may stop early once it exceeds need. */
static int bound(anchor_ctx *c, int s, int need)
{
    const reach_sum *r = c->sum;
    if (!r->in_region[s])
        return c->bwd[s] - 1;
    int ub = r->nu[s] > r->ix[s] ? r->nu[s] : r->ix[s], lo = r->lo[s], hi = r->hi[s], q;
    for (int i = 0; ub <= need && i < c->n_extra; i++) {
        int w = c->extra[i];
        if (lo <= r->lo[w] && r->hi[w] <= hi && c->bwd[w] > ub)
            ub = c->bwd[w];
    }
    if (ub > need || lo > hi)
        return ub;
    zs_node f = zs_fold(c->zs, c->z_root, 0, c->zs->size - 1, lo, hi);
    if (f.cnt == 0) {
        q = reach_query(r, lo, hi);
        return q > ub ? q : ub;
    }
    ub = f.inner > ub ? f.inner : ub;
    if (ub <= need) {
        q = reach_query(r, lo, f.first - 1);
        ub = q > ub ? q : ub;
    }
    if (ub <= need) {
        q = reach_query(r, f.last + 1, hi);
        ub = q > ub ? q : ub;
    }
    return ub;
}

/* The paper asks for a level above the update's; that only stands for "not
 * an ancestor of the update", tested exactly on the graph with the edges
 * added so far, which admits more anchors and keeps the graph acyclic. */
static int usable(anchor_ctx *c, int snk)
{
    return snk != c->update && !in_ancestry(c, snk);
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
 * already had its first reader searched) */
static int chain_ok(anchor_ctx *c, int w, int T)
{
    return c->bwd[w] > T && c->t_seen[w] != c->t_cur && !usable(c, w) && bound(c, w, T - 1) >= T;
}

/* F^j(y) along first readers */
static int chain_at(const reach_sum *r, int y, int j, int n)
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
    const reach_sum *r = c->sum;
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
    z_extras(c);
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
                    cc = target_search(c, next[i], lv = T, &T);
                if (cc < 0 && T > best_lvl) /* still unsure: the walk itself */
                    find_candidate(c, next[i], &cc, &lv);
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
    const reach_sum *r = c->sum;
    int k = c->n_edges++;
    rank_range piece[RANK_HOLES + 1];
    c->edge_from[k] = v;
    c->edge_to[k] = anchor;
    topo_add(c->topo, v, anchor);
    if (r->nh[anchor] < 0) {
        c->index->loose[c->index->n_loose++] = k;
        return 1;
    }
    for (int i = 0, np = r->lo[anchor] <= r->hi[anchor] ? reach_pieces(r, anchor, piece) : 0; i < np; i++)
        if (!edge_index_add(c->index, k, piece[i].lo, piece[i].hi))
            return 0;
    return 1;
}

olla_status olla_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err)
{
    int n = dag->n_nodes;
    size_t sz = (size_t)n + 1;
    *from = *to = NULL;
    *count = 0;
    int *fwd = malloc(sz * sizeof(int)), *bwd = malloc(sz * sizeof(int)), *mn = malloc(sz * sizeof(int));
    int *ml = malloc(sz * sizeof(int)), *stamp = calloc(sz, sizeof(int)), *front = malloc(sz * sizeof(int));
    int *next = malloc(sz * sizeof(int)), *seen = calloc(sz, sizeof(int)), *ef = malloc(sz * sizeof(int));
    int *et = malloc(sz * sizeof(int)), *sr = calloc(sz, sizeof(int)), *st_ = calloc(sz, sizeof(int));
    int *todo = malloc(sz * sizeof(int)), *pushed = calloc(sz, sizeof(int)), *ts = calloc(sz, sizeof(int));
    int *xe = malloc(sz * sizeof(int)), *xs = calloc(sz, sizeof(int));
    cand_frame *stack = malloc(sz * sizeof *stack);
    topo_state topo;
    reach_sum sum;
    edge_index index;
    zset zs;
    memset(&topo, 0, sizeof topo);
    memset(&sum, 0, sizeof sum);
    memset(&index, 0, sizeof index);
    memset(&zs, 0, sizeof zs);
    olla_status st = OLLA_OK;
    if (!fwd || !bwd || !mn || !ml || !stamp || !front || !next || !seen || !ef || !et || !sr || !st_ || !todo ||
        !pushed || !ts || !xe || !xs || !stack)
        goto oom;
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    if (!topo_init(&topo, dag, fwd) || !reach_build(dag, fwd, bwd, &sum) || !edge_index_init(&index, sum.n_upd, n) ||
        !zs_init(&zs, &sum))
        goto oom;
    static const anchor_ctx zero;
    anchor_ctx c = zero;
    c.dag = dag, c.topo = &topo, c.bwd = bwd, c.memo_node = mn, c.memo_level = ml, c.stamp = stamp, c.stack = stack;
    c.sum = &sum, c.edge_from = ef, c.edge_to = et, c.index = &index, c.zs = &zs, c.snap_root = sr;
    c.snap_time = st_, c.todo = todo, c.pushed = pushed, c.t_seen = ts, c.extra = xe, c.x_seen = xs;
    for (int v = 0; v < n; v++) {
        if (!is_update(dag, v))
            continue;
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
    topo_free(&topo);
    reach_free(&sum);
    edge_index_free(&index);
    free(zs.node);
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
    free(xe);
    free(xs);
    free(stack);
    return st;
}

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
