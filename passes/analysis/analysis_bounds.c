/* olla-onnx: lower bounds on the peak live bytes of every order. */
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_clock.h"

/* The most an in-place write can save at v's step: the outputs of v's
 * candidates whose input can die at v (with r: no other reader of it is a
 * descendant of v; without r: every candidate). */
static int64_t inplace_saving_max(const olla_dag *dag, const olla_reach *r, int v)
{
    int64_t save = 0;
    for (int k = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && k < dag->inplace_start[v + 1]; k++) {
        int e = dag->inplace_in[k], possible = 1;
        for (int q = dag->sink_start[e]; r && q < dag->sink_start[e + 1] && possible; q++)
            possible = !olla_reach_before(r, v, dag->sink_list[q]);
        if (possible)
            save += dag->bytes[dag->inplace_out[k]];
    }
    return save;
}

int64_t olla_bound_node_io(const olla_dag *dag)
{
    int64_t best = 0;
    for (int v = 0; v < dag->n_nodes; v++) {
        int64_t s = -inplace_saving_max(dag, NULL, v);
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++)
            s += dag->bytes[dag->in_list[k]];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
            s += dag->bytes[dag->out_list[k]];
        if (s > best)
            best = s;
    }
    return best;
}

/* The bytes of w's tensors that are no graph outputs, all live at w's
 * step: its inputs and outputs, less the most its writes in place save. */
static int64_t own_bytes(const olla_dag *dag, int w)
{
    int64_t x = -inplace_saving_max(dag, NULL, w);
    for (int k = dag->out_start[w]; k < dag->out_start[w + 1]; k++)
        if (!dag->is_output[dag->out_list[k]])
            x += dag->bytes[dag->out_list[k]];
    for (int k = dag->in_start[w]; k < dag->in_start[w + 1]; k++)
        if (!dag->is_output[dag->in_list[k]])
            x += dag->bytes[dag->in_list[k]];
    return x;
}

static int is_sink(const olla_dag *dag, int w)
{
    for (int k = dag->out_start[w]; k < dag->out_start[w + 1]; k++)
        if (dag->sink_start[dag->out_list[k]] != dag->sink_start[dag->out_list[k] + 1])
            return 0;
    return 1;
}

typedef struct {
    int64_t key;
    int v;
} keyed_node;

static int by_key_desc(const void *a, const void *b)
{
    const keyed_node *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* Adds w and its ancestors not marked yet to the marked set; returns the
 * bytes of the graph outputs they make. */
static int64_t mark_up(const olla_dag *dag, int w, unsigned char *mark, int *stack)
{
    int64_t out = 0;
    int sp = 0;
    if (mark[w])
        return 0;
    mark[w] = 1;
    stack[sp++] = w;
    while (sp > 0) {
        int u = stack[--sp];
        for (int k = dag->out_start[u]; k < dag->out_start[u + 1]; k++)
            if (dag->is_output[dag->out_list[k]])
                out += dag->bytes[dag->out_list[k]];
        for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
            int p = dag->producer[dag->in_list[k]];
            if (!mark[p]) {
                mark[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    return out;
}

int64_t olla_bound_outputs(const olla_dag *dag, int *last)
{
    int n = dag->n_nodes;
    int64_t out = 0, end = -1;
    int at = -1;
    for (int e = 0; e < dag->n_tensors; e++)
        if (dag->is_output[e])
            out += dag->bytes[e];
    for (int w = 0; w < n; w++) /* the last step: every output, and a node nobody reads */
        if (is_sink(dag, w)) {
            int64_t x = own_bytes(dag, w);
            if (end < 0 || out + x < end) {
                end = out + x;
                at = w;
            }
        }
    int64_t best = end > 0 ? end : 0;
    /* Any set B of nodes: at the step of the one that runs last, the graph
     * outputs B and its ancestors made are all live, with that node's own
     * bytes. Taking B = the nodes whose own bytes reach each value in turn
     * (the best B for that least value), the ancestors only grow. */
    keyed_node *kn = malloc(((size_t)n + 1) * sizeof *kn);
    unsigned char *mark = calloc((size_t)n + 1, 1);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (kn && mark && stack) {
        for (int w = 0; w < n; w++)
            kn[w] = (keyed_node){own_bytes(dag, w), w};
        qsort(kn, (size_t)n, sizeof *kn, by_key_desc);
        int64_t made = 0;
        for (int i = 0; i < n; i++) {
            made += mark_up(dag, kn[i].v, mark, stack);
            if (made + kn[i].key > best) {
                best = made + kn[i].key;
                at = kn[i].v;
            }
        }
    }
    free(kn);
    free(mark);
    free(stack);
    if (last)
        *last = at;
    return best;
}

/* Tensor e is live at v's step in every order when its producer is v or an
 * ancestor of v and it is a graph output or read by v or a descendant. */
static int must_live(const olla_dag *dag, const olla_reach *r, int e, int v)
{
    int p = dag->producer[e];
    if (p != v && !olla_reach_before(r, p, v))
        return 0;
    if (p == v || dag->is_output[e])
        return 1;
    for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
        int s = dag->sink_list[k];
        if (s == v || olla_reach_before(r, v, s))
            return 1;
    }
    return 0;
}

int64_t olla_bound_cut(const olla_dag *dag, const olla_reach *r, int *at)
{
    int64_t best = 0;
    int best_v = 0;
    for (int v = 0; v < dag->n_nodes; v++) {
        int64_t s = -inplace_saving_max(dag, r, v);
        for (int e = 0; e < dag->n_tensors; e++)
            if (dag->bytes[e] > 0 && must_live(dag, r, e, v))
                s += dag->bytes[e];
        if (s > best) {
            best = s;
            best_v = v;
        }
    }
    if (at)
        *at = best_v;
    return best;
}

/* ---- minimum cut (Dinic) for the per-node closure bound ---- */

#define FLOW_INF ((int64_t)1 << 60)

typedef struct {
    int n, m, cap_m;
    long work; /* arcs scanned so far: the unit of the bounds' work budgets */
    int *head, *next, *to;
    int64_t *cap, *base;
    int *level, *iter, *queue;
} flow_net;

static int net_init(flow_net *f, int n, int m_hint)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->cap_m = 2 * m_hint + 2;
    f->head = malloc((size_t)n * sizeof(int));
    f->level = malloc((size_t)n * sizeof(int));
    f->iter = malloc((size_t)n * sizeof(int));
    f->queue = malloc((size_t)n * sizeof(int));
    f->next = malloc((size_t)f->cap_m * sizeof(int));
    f->to = malloc((size_t)f->cap_m * sizeof(int));
    f->cap = malloc((size_t)f->cap_m * sizeof(int64_t));
    f->base = malloc((size_t)f->cap_m * sizeof(int64_t));
    if (!f->head || !f->level || !f->iter || !f->queue || !f->next || !f->to || !f->cap || !f->base)
        return 0;
    for (int i = 0; i < n; i++)
        f->head[i] = -1;
    return 1;
}

static void net_free(flow_net *f)
{
    free(f->head);
    free(f->level);
    free(f->iter);
    free(f->queue);
    free(f->next);
    free(f->to);
    free(f->cap);
    free(f->base);
}

/* returns the arc index, or -1 when the arc table is full */
static int net_arc(flow_net *f, int a, int b, int64_t c)
{
    if (f->m + 2 > f->cap_m)
        return -1;
    int i = f->m;
    f->to[i] = b;
    f->base[i] = c;
    f->next[i] = f->head[a];
    f->head[a] = i;
    f->to[i + 1] = a;
    f->base[i + 1] = 0;
    f->next[i + 1] = f->head[b];
    f->head[b] = i + 1;
    f->m += 2;
    return i;
}

static int net_bfs(flow_net *f, int s, int t)
{
    for (int i = 0; i < f->n; i++)
        f->level[i] = -1;
    int qh = 0, qt = 0;
    f->queue[qt++] = s;
    f->level[s] = 0;
    while (qh < qt) {
        int u = f->queue[qh++];
        for (int a = f->head[u]; a >= 0; a = f->next[a])
            if (f->cap[a] > 0 && f->level[f->to[a]] < 0) {
                f->level[f->to[a]] = f->level[u] + 1;
                f->queue[qt++] = f->to[a];
            }
    }
    return f->level[t] >= 0;
}

/* iterative blocking-flow search along the level graph */
static int64_t net_push(flow_net *f, int s, int t, int *stack_v, int *stack_a)
{
    int64_t total = 0;
    for (;;) {
        int depth = 0;
        int u = s;
        for (;;) {
            if (u == t) {
                int64_t c = FLOW_INF;
                for (int i = 0; i < depth; i++)
                    if (f->cap[stack_a[i]] < c)
                        c = f->cap[stack_a[i]];
                for (int i = 0; i < depth; i++) {
                    f->cap[stack_a[i]] -= c;
                    f->cap[stack_a[i] ^ 1] += c;
                }
                total += c;
                if (c >= FLOW_INF)
                    return FLOW_INF;
                depth = 0;
                u = s;
                continue;
            }
            int a = f->iter[u];
            while (a >= 0 && !(f->cap[a] > 0 && f->level[f->to[a]] == f->level[u] + 1))
                a = f->next[a];
            f->iter[u] = a;
            if (a >= 0) {
                stack_v[depth] = u;
                stack_a[depth] = a;
                depth++;
                u = f->to[a];
            } else {
                if (depth == 0)
                    return total;
                f->level[u] = -1; /* dead end */
                depth--;
                u = stack_v[depth];
                f->iter[u] = f->next[f->iter[u]];
            }
        }
    }
}

static int64_t net_maxflow(flow_net *f, int s, int t, int *stack_v, int *stack_a)
{
    int64_t flow = 0;
    f->work += f->m; /* the capacities' reset */
    while ((f->work += 2L * f->m, net_bfs(f, s, t))) { /* a level pass and a blocking-flow pass */
        for (int i = 0; i < f->n; i++)
            f->iter[i] = f->head[i];
        int64_t add = net_push(f, s, t, stack_v, stack_a);
        if (add >= FLOW_INF)
            return FLOW_INF;
        flow += add;
    }
    return flow;
}

/* Closure model: node u "ran before v" (source side) costs the bytes of its
 * outputs; helper a_e (source side = every reader of e ran before v) gains
 * bytes(e) back; helper b_k of in-place candidate k of v (source side =
 * every other reader of its input ran before v) gains the bytes of its
 * output back. Implications become infinite arcs.
 *
 * v's ancestors ran before v in every set and v's descendants did not:
 * they are fixed, their share of the value is a constant, and the network
 * holds only the nodes unordered with v (and the helpers that touch them).
 * A maximum flow's phases grow with the depth of its network: over the
 * whole graph that is the graph's depth, here only the depth among the
 * nodes v leaves free, so an evaluation costs a few linear passes. */
typedef struct {
    const olla_dag *dag;
    flow_net f;     /* sized for the whole graph; each evaluation uses a part */
    int *loc;       /* node -> its network node (free nodes), while evaluating */
    int *fixed;     /* node -> stamp * 2 + 1 ran before v, stamp * 2 + 2 after */
    int stamp;
    int *queue, *sv, *sa;
    int64_t *wout;
    /* an evaluation whose value cannot pass this stops before its flow
     * and returns an upper bound on the value instead (INT64_MIN: never) */
    int64_t floor;
} closure;

static void closure_free(closure *c)
{
    net_free(&c->f);
    free(c->loc);
    free(c->fixed);
    free(c->queue);
    free(c->sv);
    free(c->sa);
    free(c->wout);
}

static int closure_init(closure *c, const olla_dag *dag)
{
    int n = dag->n_nodes, nt = dag->n_tensors, nk = dag->n_inplace;
    memset(c, 0, sizeof *c);
    c->dag = dag;
    long m = 2L * n + 2;
    for (int e = 0; e < nt; e++)
        m += 2L * (dag->sink_start[e + 1] - dag->sink_start[e]) + 2;
    for (int k = 0; k < nk; k++)
        m += 1 + dag->sink_start[dag->inplace_in[k] + 1] - dag->sink_start[dag->inplace_in[k]];
    int nodes = n + nt + nk + 2;
    if (m > INT32_MAX / 2 || !net_init(&c->f, nodes, (int)m))
        return 0;
    c->loc = malloc(((size_t)n + 1) * sizeof *c->loc);
    c->fixed = calloc((size_t)n + 1, sizeof *c->fixed);
    c->queue = malloc(((size_t)n + 1) * sizeof *c->queue);
    c->sv = malloc(((size_t)nodes + 1) * sizeof *c->sv);
    c->sa = malloc(((size_t)nodes + 1) * sizeof *c->sa);
    c->wout = calloc((size_t)n + 1, sizeof *c->wout);
    if (!c->loc || !c->fixed || !c->queue || !c->sv || !c->sa || !c->wout)
        return 0;
    for (int e = 0; e < nt; e++)
        c->wout[dag->producer[e]] += dag->bytes[e];
    c->floor = INT64_MIN;
    return 1;
}

enum { FREE = 0, BEFORE = 1, AFTER = 2 };
/* the network's nodes: source, sink, the free nodes, the helpers */
enum { NET_SOURCE = 0, NET_SINK = 1, NET_FIRST = 2 };

static int side_of(const closure *c, int u)
{
    int f = c->fixed[u];
    return f == 2 * c->stamp + 1 ? BEFORE : f == 2 * c->stamp + 2 ? AFTER : FREE;
}

/* Fixes `from` (with self) and its ancestors (dir BEFORE) or descendants
 * (dir AFTER); returns 0 when a node would be fixed both ways. */
static int fix_walk(closure *c, int from, int self, int dir)
{
    const olla_dag *dag = c->dag;
    int head = 0, tail = 0, want = 2 * c->stamp + dir;
    if (self) {
        if (side_of(c, from) == (dir == BEFORE ? AFTER : BEFORE))
            return 0;
        c->fixed[from] = want;
    }
    c->queue[tail++] = from;
    while (head < tail) {
        int u = c->queue[head++];
        if (dir == BEFORE) {
            for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
                int p = dag->producer[dag->in_list[k]], sd = side_of(c, p);
                if (sd == AFTER)
                    return 0;
                if (sd == FREE) {
                    c->fixed[p] = want;
                    c->queue[tail++] = p;
                }
            }
            continue;
        }
        for (int k = dag->out_start[u]; k < dag->out_start[u + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
                int r = dag->sink_list[q], sd = side_of(c, r);
                if (sd == BEFORE)
                    return 0;
                if (sd == FREE) {
                    c->fixed[r] = want;
                    c->queue[tail++] = r;
                }
            }
        }
    }
    return 1;
}

/* A gain (a tensor's or an in-place write's): `bytes` when the nodes of
 * list, but skip, and p (-1: none) all ran before v. */
typedef struct gain {
    int64_t bytes;
    int p;
    const int *list;
    int len;
    int skip; /* a reader that does not count, or -1 */
} gain;

/* The helper nodes of the network built so far: the next node's number and
 * the capacity of their arcs from the source. */
typedef struct helpers {
    int node;
    int64_t sum;
} helpers;

/* A gain helper for gain gn: gains its bytes when its free nodes all ran
 * before v. Returns the constant gain when every one is fixed before v, 0
 * when one is fixed after it (or a helper was added). */
static int64_t gain_helper(closure *c, const gain *gn, helpers *hl)
{
    int64_t bytes = gn->bytes;
    int p = gn->p, len = gn->len, skip = gn->skip;
    const int *list = gn->list;
    int any_free = p >= 0 && side_of(c, p) == FREE;
    if (p >= 0 && side_of(c, p) == AFTER)
        return 0;
    for (int q = 0; q < len; q++) {
        if (list[q] == skip)
            continue;
        int sd = side_of(c, list[q]);
        if (sd == AFTER)
            return 0;
        any_free |= sd == FREE;
    }
    if (!any_free)
        return bytes;
    int h = hl->node++;
    net_arc(&c->f, NET_SOURCE, h, bytes);
    hl->sum += bytes;
    if (p >= 0 && side_of(c, p) == FREE)
        net_arc(&c->f, h, c->loc[p], FLOW_INF);
    for (int q = 0; q < len; q++)
        if (list[q] != skip && side_of(c, list[q]) == FREE)
            net_arc(&c->f, h, c->loc[list[q]], FLOW_INF);
    return 0;
}

/* Least live bytes at v's step over the sets that can run before v, with
 * node before_v forced to run before v and node after_v after it (-1: none).
 * Returns -1 when the constraints cannot be met. When side is given, side[u]
 * is set to 1 for the nodes of a best set. */
static int64_t closure_eval(closure *c, int v, int before_v, int after_v, unsigned char *side)
{
    const olla_dag *dag = c->dag;
    flow_net *f = &c->f;
    int n = dag->n_nodes;
    c->stamp++;
    f->work += (long)n + dag->n_tensors + dag->sink_start[dag->n_tensors]; /* the passes below */
    if (!fix_walk(c, v, 1, AFTER) || (after_v >= 0 && !fix_walk(c, after_v, 1, AFTER)) ||
        !fix_walk(c, v, 0, BEFORE) || (before_v >= 0 && !fix_walk(c, before_v, 1, BEFORE)))
        return -1;
    int nf = 0;
    for (int u = 0; u < n; u++)
        if (side_of(c, u) == FREE)
            c->loc[u] = NET_FIRST + nf++;
    int most = NET_FIRST + nf + dag->n_tensors + (dag->n_inplace ? dag->inplace_start[v + 1] - dag->inplace_start[v] : 0);
    for (int i = 0; i < most; i++)
        f->head[i] = -1;
    f->m = 0;
    helpers hl = {NET_FIRST + nf, 0};
    int64_t konst = c->wout[v];
    for (int u = 0; u < n; u++) {
        int sd = side_of(c, u);
        if (sd == BEFORE)
            konst += c->wout[u];
        else if (sd == FREE)
            net_arc(f, c->loc[u], NET_SINK, c->wout[u]);
    }
    for (int e = 0; e < dag->n_tensors; e++) {
        int p = dag->producer[e];
        const int *rd = dag->sink_list + dag->sink_start[e];
        int nr = dag->sink_start[e + 1] - dag->sink_start[e];
        if (side_of(c, p) == FREE) /* a free reader of a free producer follows it */
            for (int q = 0; q < nr; q++)
                if (side_of(c, rd[q]) == FREE)
                    net_arc(f, c->loc[rd[q]], c->loc[p], FLOW_INF);
        if (dag->bytes[e] > 0 && !dag->is_output[e])
            konst -= gain_helper(c, &(gain){dag->bytes[e], p, rd, nr, -1}, &hl);
    }
    for (int k = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && k < dag->inplace_start[v + 1]; k++) {
        int e = dag->inplace_in[k];
        gain gn = {dag->bytes[dag->inplace_out[k]], -1, dag->sink_list + dag->sink_start[e],
                   dag->sink_start[e + 1] - dag->sink_start[e], v};
        konst -= gain_helper(c, &gn, &hl);
    }
    f->n = hl.node;
    /* every free node after v is a set of value konst: the value is at most
     * that, and a value that cannot pass the floor needs no flow */
    if (!side && konst <= c->floor)
        return konst;
    for (int a = 0; a < f->m; a++)
        f->cap[a] = f->base[a];
    int64_t cut = net_maxflow(f, NET_SOURCE, NET_SINK, c->sv, c->sa);
    if (side)
        for (int u = 0; u < n; u++) {
            int sd = side_of(c, u);
            side[u] = sd == BEFORE || (sd == FREE && f->level[c->loc[u]] >= 0);
        }
    return konst + cut - hl.sum;
}

typedef struct {
    int64_t upper;
    int v;
} ranked_node;

static int by_upper_desc(const void *a, const void *b)
{
    const ranked_node *x = a, *y = b;
    if (x->upper != y->upper)
        return x->upper > y->upper ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* nodes by upper (the live bytes at their step in some order) descending,
 * ties by id; without upper every node in id order. 0 when out of memory. */
static int by_upper(const int64_t *upper, int *cand, int n)
{
    for (int v = 0; v < n; v++)
        cand[v] = v;
    if (!upper || n < 2)
        return 1;
    ranked_node *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return 0;
    for (int v = 0; v < n; v++)
        r[v] = (ranked_node){upper[v], v};
    qsort(r, (size_t)n, sizeof *r, by_upper_desc);
    for (int i = 0; i < n; i++)
        cand[i] = r[i].v;
    free(r);
    return 1;
}

/* With upper, the walk ends after this many nodes in a row that raise
 * nothing: the nodes at the top of the order's profile decide. */
#define CLOSURE_IDLE 32

olla_status olla_bound_closure(const olla_dag *dag, const int64_t *upper, olla_limit lim, int64_t *bound, int *at,
                               olla_error *err)
{
    int n = dag->n_nodes;
    int *cand = malloc(((size_t)n + 1) * sizeof *cand);
    closure c;
    memset(&c, 0, sizeof c);
    if (!cand || !closure_init(&c, dag) || !by_upper(upper, cand, n)) {
        free(cand);
        closure_free(&c);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the closure bound");
    }
    /* each node's value is a bound on its own: stopping early (budget,
     * deadline) leaves a valid bound */
    int64_t best = *bound > 0 ? *bound : 0;
    int best_v = -1, idle = 0;
    for (int i = 0; i < n && (lim.budget <= 0 || c.f.work < lim.budget); i++) {
        int v = cand[i];
        if (upper && (upper[v] <= best || idle >= CLOSURE_IDLE))
            break; /* sorted: no later node can raise the bound, or the highest did not */
        if ((i & 15) == 0 && olla_past(lim.deadline))
            break;
        c.floor = best; /* only a value above the bound so far matters */
        int64_t val = closure_eval(&c, v, -1, -1, NULL);
        idle++;
        if (val > best) {
            best = val;
            best_v = v;
            idle = 0;
        }
    }
    *bound = best;
    if (at)
        *at = best_v;
    closure_free(&c);
    free(cand);
    return OLLA_OK;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* one minimum cut of the pair bound; *left: the work budget left (< 0:
 * none, 0: used up) */
static int64_t pair_eval(closure *c, long *left, int v, int before_v, int after_v, unsigned char *side)
{
    long before = c->f.work;
    int64_t val = closure_eval(c, v, before_v, after_v, side);
    if (*left > 0)
        *left = *left > c->f.work - before ? *left - (c->f.work - before) : 0;
    return val;
}

/* mark[u] = stamp for every ancestor and descendant u of v (and v): the
 * nodes ordered with v. queue: n_nodes entries. */
static void mark_ordered(const olla_dag *dag, int v, int stamp, int *mark, int *queue)
{
    for (int dir = 0; dir < 2; dir++) {
        int head = 0, tail = 0;
        queue[tail++] = v;
        mark[v] = stamp;
        while (head < tail) {
            int u = queue[head++];
            if (dir == 0) { /* ancestors: producers of the inputs */
                for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
                    int p = dag->producer[dag->in_list[k]];
                    if (mark[p] != stamp) {
                        mark[p] = stamp;
                        queue[tail++] = p;
                    }
                }
                continue;
            }
            for (int k = dag->out_start[u]; k < dag->out_start[u + 1]; k++) { /* descendants */
                int e = dag->out_list[k];
                for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
                    int s = dag->sink_list[q];
                    if (mark[s] != stamp) {
                        mark[s] = stamp;
                        queue[tail++] = s;
                    }
                }
            }
        }
        if (dir == 0) /* the second walk starts from v again */
            mark[v] = stamp;
    }
}

/* The pair bound for v against the node u it is not ordered with; side:
 * v's best set. Raises *lb. */
static void pair_with(closure *c, long *left, int v, int64_t mcv, int u, const unsigned char *side, int64_t *lb)
{
    /* the case matching v's best set first: the same value for v */
    int u_before = side[u];
    int64_t b1 = u_before ? pair_eval(c, left, u, -1, v, NULL) : pair_eval(c, left, u, v, -1, NULL);
    if (b1 >= 0 && b1 <= *lb)
        return;
    int64_t opt1 = b1 < 0 ? -1 : max64(mcv > 0 ? mcv : 0, b1);
    int64_t a2 = u_before ? pair_eval(c, left, v, -1, u, NULL) : pair_eval(c, left, v, u, -1, NULL);
    int64_t b2 = u_before ? pair_eval(c, left, u, v, -1, NULL) : pair_eval(c, left, u, -1, v, NULL);
    int64_t opt2 = (a2 < 0 || b2 < 0) ? -1 : max64(a2, b2);
    int64_t pair;
    if (opt1 < 0 && opt2 < 0)
        return;
    else if (opt1 < 0)
        pair = opt2;
    else if (opt2 < 0)
        pair = opt1;
    else
        pair = opt1 < opt2 ? opt1 : opt2;
    if (pair > *lb)
        *lb = pair;
}

olla_status olla_bound_pairs(const olla_dag *dag, const int *order, int64_t ub, int tries, olla_limit lim,
                             int64_t *bound, long *spent, olla_error *err)
{
    int n = dag->n_nodes;
    double deadline = lim.deadline;
    long left = lim.budget > 0 ? lim.budget : -1; /* 0 when used up */
    int *cand = malloc(((size_t)n + 1) * sizeof *cand);
    unsigned char *side = malloc((size_t)n + 1);
    int64_t *upper = malloc(((size_t)n + 1) * sizeof *upper);
    int *step = malloc(((size_t)n + 1) * sizeof *step);
    int *mark = malloc(((size_t)n + 1) * sizeof *mark), *queue = malloc(((size_t)n + 1) * sizeof *queue);
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live);
    closure c;
    memset(&c, 0, sizeof c);
    int64_t ub_order = 0;
    olla_status st = OLLA_OK;
    if (!cand || !side || !upper || !step || !mark || !queue || !live || !closure_init(&c, dag))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the pair bound");
    else
        st = olla_dag_peak(dag, order, &ub_order, live, NULL, err);
    if (st == OLLA_OK) {
        for (int t = 0; t < n; t++) {
            upper[order[t]] = live[t];
            step[order[t]] = t;
            mark[t] = -1;
        }
        if (!by_upper(upper, cand, n))
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the pair bound");
    }
    if (st != OLLA_OK)
        goto done;
    int64_t lb = *bound;
    /* For v and a node u it is not ordered with: either u runs before v or
     * after; the peak is at least the smaller, over the two cases, of the
     * larger of the two constrained per-node values. The nodes at the
     * highest steps of order first. */
    for (int i = 0; i < n && i < tries && lb < ub; i++) {
        int v = cand[i];
        if (upper[v] <= lb || left == 0 || olla_past(deadline))
            break;
        int64_t mcv = pair_eval(&c, &left, v, -1, -1, side);
        if (mcv < 0)
            continue;
        if (mcv > lb)
            lb = mcv;
        mark_ordered(dag, v, i, mark, queue);
        /* partners by distance from v in the order: near ones matter most */
        int sv = step[v];
        for (int d = 1; d < n && lb < ub; d++) {
            if (left == 0 || ((d & 31) == 0 && olla_past(deadline)))
                break;
            for (int sgn = 0; sgn < 2 && left != 0; sgn++) {
                int su = sgn ? sv + d : sv - d;
                if (su >= 0 && su < n && mark[order[su]] != i)
                    pair_with(&c, &left, v, mcv, order[su], side, &lb);
            }
        }
    }
    *bound = lb;
done:
    if (spent)
        *spent = lim.budget > 0 ? lim.budget - left : 0;
    closure_free(&c);
    free(cand);
    free(side);
    free(upper);
    free(step);
    free(mark);
    free(queue);
    free(live);
    return st;
}
