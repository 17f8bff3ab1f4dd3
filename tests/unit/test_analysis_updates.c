/* The early-update control edges (passes/analysis/analysis_updates.c and
 * the updates_*.c files beside it) against the walk they were first written
 * as, kept here word for word as the reference: on random training steps (a
 * forward pass, a loss, a backward pass reading the forward's results, some
 * transposed, weight gradients, optimizer chains of several kinds, node
 * numbers in the exporter's order or shuffled) and on random graphs, the
 * edge lists must be the same, edge for edge and in the same order; and the
 * search's paths (target searches, labels, runs, the walk, the lazy
 * ancestor search) must each be taken. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "passes/analysis/olla_analysis.h"
#include "passes/analysis/updates_internal.h"
#include "util/olla_bits.h"

/* ---- the reference: the walk as it stood at b30b7ee ---- */

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

/* frees the order's arrays */
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

/* by level, then by node number */
static int by_level(const void *a, const void *b)
{
    const lvl_node *x = a, *y = b;
    if (x->lvl != y->lvl)
        return x->lvl < y->lvl ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* the order by forward level, and the scratch */
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

/* u found as an ancestor, to be expanded */
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

/* a fresh ancestor search for update v */
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
/* a frame for v on the walk's stack, its answer not known yet */
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

/* the edges, in the order the walk adds them */
static olla_status ref_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err)
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

/* ---- random graphs ---- */

enum { MAXN = 3000, MAXT = 6000 };

/* a graph under construction: tensors with their producer, reads, types */
typedef struct {
    int n, nt, nr;
    int prod[MAXT];
    unsigned char out[MAXT];
    int read_node[4 * MAXT], read_tensor[4 * MAXT];
    const char *type[MAXN];
} spec;

/* a new node of type `type` with one result; returns that result */
static int sp_node(spec *s, const char *type)
{
    int v = s->n++, e = s->nt++;
    s->type[v] = type;
    s->prod[e] = v;
    s->out[e] = 0;
    return e;
}

/* the node that made tensor e reads tensor r too */
static void sp_read(spec *s, int reader_tensor, int r)
{
    if (r < 0 || s->nr >= 4 * MAXT)
        return;
    s->read_node[s->nr] = s->prod[reader_tensor];
    s->read_tensor[s->nr++] = r;
}

/* a node of type `type` reading a and b (b < 0: none) */
static int sp_op(spec *s, const char *type, int a, int b)
{
    int e = sp_node(s, type);
    sp_read(s, e, a);
    sp_read(s, e, b);
    return e;
}

/* the optimizer of one parameter from its gradient g: plain SGD by type,
 * p - lr * g by pattern, an Adam-like chain of moments, or an accumulator */
static void sp_update(spec *s, uint64_t *rng, int g, int lr)
{
    int kind = (int)olla_test_rng_range(rng, 0, 4);
    int e;
    if (kind == 0) {
        e = sp_op(s, "SGDOptimizer", g, lr);
    } else if (kind == 1) {
        e = sp_op(s, "Sub", sp_op(s, "Mul", g, lr), -1);
    } else if (kind == 2) {
        int m = sp_op(s, "Mul", g, -1), v = sp_op(s, "Mul", g, g);
        int steps = (int)olla_test_rng_range(rng, 0, 4);
        for (int i = 0; i < steps; i++)
            m = sp_op(s, i % 2 ? "Add" : "Div", m, olla_test_rng_range(rng, 0, 1) ? v : lr);
        e = sp_op(s, "Sub", sp_op(s, "Mul", m, lr), v);
    } else if (kind == 3) {
        e = sp_op(s, "AdamWOptimizer", g, lr);
    } else {
        e = sp_op(s, "InPlaceAccumulatorV2", g, -1);
    }
    s->out[e] = 1;
}

/* one forward layer over x: a few operators, a mask read again by the
 * backward pass, now and then a residual; act[] receives what the backward
 * pass reads, *width their number; returns the layer's output */
static int sp_layer(spec *s, uint64_t *rng, int x, int early, int *act, int *mask, int *width)
{
    int w = (int)olla_test_rng_range(rng, 1, 4);
    *mask = olla_test_rng_range(rng, 0, 2) ? sp_op(s, "Div", early, -1) : -1;
    int y = x;
    for (int i = 0; i < w; i++) {
        act[i] = y;
        y = sp_op(s, i == 0 ? "MatMul" : "Add", y, i == w - 1 ? *mask : -1);
    }
    if (olla_test_rng_range(rng, 0, 3) == 0)
        y = sp_op(s, "Add", y, x);
    *width = w;
    return y;
}

/* A training step: layers of the forward pass, a loss, the backward pass
 * layer by layer (reading the forward's activations and masks), the weight
 * gradients, and one optimizer chain per parameter after all of it. */
static void train_spec(spec *s, uint64_t *rng, int layers)
{
    int act[64][4], width[64], mask[64], params[256], np = 0;
    int x = sp_node(s, "Gather"), early = sp_op(s, "Bernoulli", x, -1);
    int lr = olla_test_rng_range(rng, 0, 1) ? sp_node(s, "Constant") : -1;
    x = sp_op(s, "Add", x, early);
    for (int k = 0; k < layers; k++)
        x = sp_layer(s, rng, x, early, act[k], &mask[k], &width[k]);
    int loss = sp_op(s, "SoftmaxCrossEntropyLoss", x, -1);
    int gb = sp_op(s, "SoftmaxCrossEntropyLossGrad", loss, -1);
    for (int k = layers - 1; k >= 0; k--) {
        for (int i = width[k] - 1; i >= 0 && np < 250; i--) {
            int a = act[k][i];
            if (olla_test_rng_range(rng, 0, 2) == 0) /* a saved activation transposed by the backward pass */
                a = sp_op(s, "Transpose", a, -1);
            int gw = sp_op(s, "MatMul", gb, a);
            if (olla_test_rng_range(rng, 0, 3) == 0)
                gw = sp_op(s, "Transpose", gw, -1);
            params[np++] = gw;
            gb = sp_op(s, i ? "AddGrad" : "MatMulGrad", gb, mask[k] >= 0 && i == width[k] - 1 ? mask[k] : -1);
        }
    }
    params[np++] = gb;
    for (int i = 0; i < np; i++)
        sp_update(s, rng, params[i], lr);
}

/* Arbitrary graphs: each node reads earlier results with probability
 * density/100; some nodes typed as optimizers, some results graph outputs. */
static void random_spec(spec *s, uint64_t *rng, int n, int density)
{
    for (int v = 0; v < n; v++) {
        int typed = olla_test_rng_range(rng, 1, 8) == 1;
        int outs = (int)olla_test_rng_range(rng, 1, 2);
        int e = sp_node(s, typed ? "SGDOptimizer" : "Gemm");
        s->out[e] = olla_test_rng_range(rng, 1, 4) == 1;
        for (int j = 1; j < outs; j++) {
            s->prod[s->nt] = v;
            s->out[s->nt++] = olla_test_rng_range(rng, 1, 4) == 1;
        }
        for (int t = 0; t < s->nt && s->prod[t] < v; t++)
            if (olla_test_rng_range(rng, 1, 100) <= density)
                sp_read(s, e, t);
    }
}

/* The spec as a DAG, nodes renumbered: `how` 0 keeps the order made, 1
 * shuffles every number, 2 shuffles the numbers of the last half's nodes
 * whose type starts with S, A or I (the optimizers among them), 3 reverses
 * them. Reads are given in a random order. */
static int spec_dag(spec *s, uint64_t *rng, int how, olla_dag *dag, const char **types)
{
    int perm[MAXN], idx[MAXN], ni = 0;
    for (int v = 0; v < s->n; v++)
        perm[v] = how == 3 ? s->n - 1 - v : v;
    for (int v = 0; v < s->n; v++)
        if (how == 1 || (how == 2 && s->type[v] && strchr("SAI", s->type[v][0]) && v > s->n / 2))
            idx[ni++] = v;
    for (int i = ni - 1; i > 0; i--) {
        int j = (int)olla_test_rng_range(rng, 0, i), t = perm[idx[i]];
        perm[idx[i]] = perm[idx[j]];
        perm[idx[j]] = t;
    }
    for (int i = s->nr - 1; i > 0; i--) {
        int j = (int)olla_test_rng_range(rng, 0, i), a = s->read_node[i], b = s->read_tensor[i];
        s->read_node[i] = s->read_node[j];
        s->read_tensor[i] = s->read_tensor[j];
        s->read_node[j] = a;
        s->read_tensor[j] = b;
    }
    olla_dag_builder *b = olla_dag_builder_new(s->n, s->nt);
    if (!b)
        return 0;
    for (int e = 0; e < s->nt; e++)
        olla_dag_builder_tensor(b, perm[s->prod[e]], 1 + e % 7, s->out[e]);
    for (int i = 0; i < s->nr; i++)
        if (s->prod[s->read_tensor[i]] != s->read_node[i])
            olla_dag_builder_use(b, perm[s->read_node[i]], s->read_tensor[i]);
    for (int v = 0; v < s->n; v++)
        types[perm[v]] = s->type[v];
    olla_error err = {0};
    if (olla_dag_build(b, s->n, dag, &err) != OLLA_OK)
        return 0;
    dag->op_type = types;
    return 1;
}

/* ---- the tests ---- */

/* what the library's search took, summed over the graphs of a test */
static olla_upd_stats took;

/* the library's edges against the reference's on one graph; 1 when equal */
static int same_edges(const olla_dag *dag, int *edges, int *updates)
{
    int *from = NULL, *to = NULL, cnt = -1, *rf = NULL, *rt = NULL, rc = -1;
    olla_error err = {0};
    olla_upd_stats st;
    OLLA_CHECK(olla_upd_edges(dag, &from, &to, &cnt, &st, &err) == OLLA_OK);
    took.updates += st.updates, took.searches += st.searches, took.label_skips += st.label_skips;
    took.walks += st.walks, took.lazy += st.lazy, took.split += st.split, took.unknown += st.unknown;
    OLLA_CHECK(ref_early_update_edges(dag, &rf, &rt, &rc, &err) == OLLA_OK);
    int same = cnt == rc;
    for (int i = 0; same && i < cnt; i++)
        same = from[i] == rf[i] && to[i] == rt[i];
    *edges += cnt;
    for (int v = 0; v < dag->n_nodes; v++)
        *updates += is_update(dag, v);
    free(from);
    free(to);
    free(rf);
    free(rt);
    return same;
}

OLLA_TEST(test_training_steps_match_the_walk)
{
    memset(&took, 0, sizeof took);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    int cases = olla_test_quick() ? 300 : 2000, differ = 0, edges = 0, updates = 0;
    for (int c = 0; c < cases; c++) {
        static spec s;
        memset(&s, 0, sizeof s);
        train_spec(&s, &rng, (int)olla_test_rng_range(&rng, 1, c % 10 == 0 ? 40 : 10));
        olla_dag dag;
        const char *types[MAXN];
        OLLA_CHECK(spec_dag(&s, &rng, c % 4, &dag, types));
        if (!same_edges(&dag, &edges, &updates)) {
            if (differ++ < 5)
                fprintf(stderr, "training step %d (%d nodes): the edges differ from the walk's\n", c, dag.n_nodes);
        }
        olla_dag_free(&dag);
    }
    OLLA_CHECK_EQ_I64(differ, 0);
    OLLA_CHECK(edges > cases); /* the steps have updates that get edges */
    OLLA_CHECK(updates > edges);
    OLLA_CHECK_EQ_I64(took.updates, updates);
    /* the paths taken: target searches that the labels cut short, nodes
     * whose updates form several runs, and the walk itself */
    fprintf(stderr, "training steps: %ld searches, %ld subtrees left out by the labels, %ld walks, %ld split and %ld "
                    "unknown nodes, %ld lazy ancestor searches\n",
            took.searches, took.label_skips, took.walks, took.split, took.unknown, took.lazy);
    OLLA_CHECK(took.searches > cases);
    OLLA_CHECK(took.label_skips > cases / 10);
    OLLA_CHECK(took.split > cases / 10);
    OLLA_CHECK(took.walks > 0);
}

OLLA_TEST(test_random_graphs_match_the_walk)
{
    memset(&took, 0, sizeof took);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int cases = olla_test_quick() ? 600 : 4000, differ = 0, edges = 0, updates = 0;
    for (int c = 0; c < cases; c++) {
        static spec s;
        memset(&s, 0, sizeof s);
        random_spec(&s, &rng, (int)olla_test_rng_range(&rng, 2, c % 8 == 0 ? 200 : 40),
                    (int)olla_test_rng_range(&rng, 1, 30));
        olla_dag dag;
        const char *types[MAXN];
        OLLA_CHECK(spec_dag(&s, &rng, c % 4, &dag, types));
        if (!same_edges(&dag, &edges, &updates)) {
            if (differ++ < 5)
                fprintf(stderr, "random graph %d (%d nodes): the edges differ from the walk's\n", c, dag.n_nodes);
        }
        olla_dag_free(&dag);
    }
    OLLA_CHECK_EQ_I64(differ, 0);
    OLLA_CHECK(edges > cases / 2);
    fprintf(stderr, "random graphs: %ld searches, %ld subtrees left out by the labels, %ld walks, %ld split and %ld "
                    "unknown nodes, %ld lazy ancestor searches\n",
            took.searches, took.label_skips, took.walks, took.split, took.unknown, took.lazy);
    OLLA_CHECK(took.label_skips > 0);
    OLLA_CHECK(took.unknown > 0); /* the lazy ancestor search is tested too */
    OLLA_CHECK(took.lazy > 0);
}

OLLA_TEST_MAIN(OLLA_T(test_training_steps_match_the_walk), OLLA_T(test_random_graphs_match_the_walk))
