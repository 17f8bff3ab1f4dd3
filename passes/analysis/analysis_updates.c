/* olla-onnx: control edges that pull weight-update nodes early (the anchor
 * search of the OLLA paper, generalised to ONNX training graphs). */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_bits.h"

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
    if (lo > hi)
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

/* ---- the anchor search ---- */

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
} anchor_ctx;

/* The paper asks for a level above the update's; that only stands for "not
 * an ancestor of the update", tested exactly on the graph with the edges
 * added so far, which admits more anchors and keeps the graph acyclic. */
static int usable(const anchor_ctx *c, int snk)
{
    return snk != c->update && !anc_has(c->topo, c->update, snk);
}
static void open_frame(anchor_ctx *c, int *sp, int v)
{
    c->stamp[v] = c->cur;
    c->memo_node[v] = -1;
    c->memo_level[v] = -1;
    c->stack[(*sp)++] = (cand_frame){v, c->dag->out_start[v], -1, -1, -1};
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
        while (!pushed && f->k < dag->out_start[f->v + 1]) {
            int e = dag->out_list[f->k];
            if (f->s < 0)
                f->s = dag->sink_start[e];
            if (f->s >= dag->sink_start[e + 1]) {
                f->k++;
                f->s = -1;
                continue;
            }
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

olla_status olla_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err)
{
    int n = dag->n_nodes;
    *from = *to = NULL;
    *count = 0;
    int *fwd = malloc(((size_t)n + 1) * sizeof(int));
    int *bwd = malloc(((size_t)n + 1) * sizeof(int));
    int *mn = malloc(((size_t)n + 1) * sizeof(int));
    int *ml = malloc(((size_t)n + 1) * sizeof(int));
    int *stamp = calloc((size_t)n + 1, sizeof(int));
    int *front = malloc(((size_t)n + 1) * sizeof(int));
    int *next = malloc(((size_t)n + 1) * sizeof(int));
    int *seen = calloc((size_t)n + 1, sizeof(int));
    int *ef = malloc(((size_t)n + 1) * sizeof(int));
    int *et = malloc(((size_t)n + 1) * sizeof(int));
    cand_frame *stack = malloc(((size_t)n + 1) * sizeof *stack);
    topo_state topo;
    memset(&topo, 0, sizeof topo);
    olla_status st = OLLA_OK;
    if (!fwd || !bwd || !mn || !ml || !stamp || !front || !next || !seen || !ef || !et || !stack) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory finding weight-update control edges");
        goto done;
    }
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    if (!topo_init(&topo, dag, fwd)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory finding weight-update control edges");
        goto done;
    }
    anchor_ctx c = {dag, &topo, bwd, 0, mn, ml, stamp, 0, stack};
    int ne = 0;
    for (int v = 0; v < n; v++) {
        if (!is_update(dag, v))
            continue;
        c.cur++; /* fresh memo per update node: usable() differs */
        c.update = v;
        anc_start(&topo, v);
        int nf = 1, anchor = -1, best_lvl = -1;
        front[0] = v;
        seen[v] = c.cur;
        while (anchor < 0 && nf > 0) {
            int nn = 0;
            for (int i = 0; i < nf; i++) {
                int u = front[i];
                for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
                    int p = dag->producer[dag->in_list[k]];
                    if (seen[p] != c.cur) {
                        seen[p] = c.cur;
                        next[nn++] = p;
                    }
                }
            }
            for (int i = 0; i < nn; i++) {
                int cc, lv;
                find_candidate(&c, next[i], &cc, &lv);
                if (cc >= 0 && cc != v && lv > best_lvl) {
                    best_lvl = lv;
                    anchor = cc;
                }
            }
            memcpy(front, next, (size_t)nn * sizeof(int));
            nf = nn;
        }
        if (anchor >= 0) {
            ef[ne] = v;
            et[ne] = anchor;
            ne++;
            topo_add(&topo, v, anchor);
        }
    }
    *from = ef;
    *to = et;
    *count = ne;
    ef = et = NULL;
done:
    topo_free(&topo);
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
