/* olla-onnx: the graph with the early-update control edges added so far: a
 * topological order of it kept up to date as edges come, and the ancestors
 * of the current update found lazily (for analysis_updates.c).
 *
 * The anchors must keep the graph acyclic: an anchor is never an ancestor
 * of its update in the graph with the edges added before it. That is
 * decided on a topological order of that graph, kept up to date as edges
 * come (Pearce and Kelly's dynamic order: an edge u -> a with a before u
 * reorders only the nodes between them that it reaches), and a walk from
 * the update up its ancestors, in decreasing position, that goes no lower
 * than the positions asked about. The order starts by forward level, where
 * an update and its anchor lie close, so both stay local. Memory is linear. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/updates_internal.h"
#include "util/olla_bits.h"

/* frees the order's arrays */
void olla_upd_order_free(olla_upd_order *t)
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
int olla_upd_order_init(olla_upd_order *t, const olla_dag *dag, const int *fwd)
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
static void anc_push(olla_upd_order *t, int u)
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
static int anc_next(olla_upd_order *t, int lo)
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
static void anc_expand(olla_upd_order *t, int u)
{
    const olla_dag *dag = t->dag;
    for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++)
        anc_push(t, dag->producer[dag->in_list[k]]);
    for (int x = t->xp_head[u]; x >= 0; x = t->xp_next[x])
        anc_push(t, t->x_from[x]);
}

/* a fresh ancestor search for update v */
static void anc_start(olla_upd_order *t, int v)
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
int olla_upd_order_has(olla_upd_order *t, int v, int x)
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
static int topo_reach(olla_upd_order *t, int from, int dir, int lo, int hi, int *out)
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
void olla_upd_order_add(olla_upd_order *t, int u, int a)
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
 * olla_upd_order_add */
static void topo_live(olla_upd_order *t)
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

/* a fresh ancestor search for update v, the order made live first */
void olla_upd_order_ask(olla_upd_order *t, int v)
{
    topo_live(t);
    anc_start(t, v);
}
