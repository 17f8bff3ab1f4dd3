/* olla-onnx: lower bounds on the peak live bytes of every order. */
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "passes/olla_analysis.h"

int64_t olla_bound_node_io(const olla_dag *dag)
{
    int64_t best = 0;
    for (int v = 0; v < dag->n_nodes; v++) {
        int64_t s = 0;
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++)
            s += dag->bytes[dag->in_list[k]];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++)
            s += dag->bytes[dag->out_list[k]];
        if (s > best)
            best = s;
    }
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
        int64_t s = 0;
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
    while (net_bfs(f, s, t)) {
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
 * bytes(e) back. Implications become infinite arcs. */
static double bound_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

olla_status olla_bound_closure(const olla_dag *dag, const olla_reach *r, const int64_t *upper, int64_t *bound,
                               int *at, olla_error *err)
{
    return olla_bound_closure_until(dag, r, upper, 0, bound, at, err);
}

/* Each node's cut value is a lower bound on its own, so stopping at the
 * deadline still leaves a valid bound: the largest value computed. */
olla_status olla_bound_closure_until(const olla_dag *dag, const olla_reach *r, const int64_t *upper, double deadline,
                                     int64_t *bound, int *at, olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    int *aidx = malloc(((size_t)nt + 1) * sizeof *aidx);
    int64_t *wout = calloc((size_t)n + 1, sizeof *wout);
    int64_t *cutb = malloc(((size_t)n + 1) * sizeof *cutb);
    int *cand = malloc(((size_t)n + 1) * sizeof *cand);
    if (!aidx || !wout || !cutb || !cand) {
        free(aidx);
        free(wout);
        free(cutb);
        free(cand);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the closure bound");
    }
    int na = 0, m = 0;
    int64_t sum_a = 0;
    for (int e = 0; e < nt; e++) {
        wout[dag->producer[e]] += dag->bytes[e];
        aidx[e] = -1;
        if (dag->bytes[e] > 0 && !dag->is_output[e]) {
            aidx[e] = n + na++;
            m += 2 + (dag->sink_start[e + 1] - dag->sink_start[e]);
        }
        m += dag->sink_start[e + 1] - dag->sink_start[e];
    }
    int S = n + na, T = S + 1;
    m += 2 * n;
    flow_net f;
    int ok = net_init(&f, T + 1, m);
    int *sv = malloc(((size_t)T + 2) * sizeof *sv);
    int *sa = malloc(((size_t)T + 2) * sizeof *sa);
    int *src_arc = malloc(((size_t)n + 1) * sizeof *src_arc);
    int *snk_arc = malloc(((size_t)n + 1) * sizeof *snk_arc);
    if (!ok || !sv || !sa || !src_arc || !snk_arc) {
        net_free(&f);
        free(sv);
        free(sa);
        free(src_arc);
        free(snk_arc);
        free(aidx);
        free(wout);
        free(cutb);
        free(cand);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the closure bound");
    }
    for (int u = 0; u < n; u++) {
        src_arc[u] = net_arc(&f, S, u, 0);
        snk_arc[u] = net_arc(&f, u, T, wout[u]);
    }
    for (int e = 0; e < nt; e++) {
        int p = dag->producer[e];
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++)
            net_arc(&f, dag->sink_list[k], p, FLOW_INF);
        if (aidx[e] >= 0) {
            net_arc(&f, S, aidx[e], dag->bytes[e]);
            sum_a += dag->bytes[e];
            net_arc(&f, aidx[e], p, FLOW_INF);
            for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++)
                net_arc(&f, aidx[e], dag->sink_list[k], FLOW_INF);
        }
    }
    /* visit nodes by their simple cut bound, largest first */
    int stopped = 0;
    for (int v = 0; v < n; v++) {
        if (deadline > 0 && (v & 63) == 0 && bound_now() > deadline) {
            stopped = 1;
            n = v; /* only the nodes seen so far */
            break;
        }
        int64_t s = 0;
        for (int e = 0; e < nt; e++)
            if (dag->bytes[e] > 0 && must_live(dag, r, e, v))
                s += dag->bytes[e];
        cutb[v] = s;
        cand[v] = v;
    }
    for (int i = 1; i < n && !stopped; i++) { /* insertion sort by cutb descending (n is modest) */
        if (deadline > 0 && (i & 255) == 0 && bound_now() > deadline)
            stopped = 1;
        int x = cand[i], j = i;
        while (j > 0 && cutb[cand[j - 1]] < cutb[x]) {
            cand[j] = cand[j - 1];
            j--;
        }
        cand[j] = x;
    }
    int64_t best = 0;
    int best_v = 0;
    for (int i = 0; i < n; i++) {
        int v = cand[i];
        if (cutb[v] > best) {
            best = cutb[v];
            best_v = v;
        }
        if (upper && upper[v] <= best)
            continue;
        if (stopped || (deadline > 0 && bound_now() > deadline)) {
            stopped = 1;
            continue; /* the simple bounds of the rest still count */
        }
        for (int a = 0; a < f.m; a++)
            f.cap[a] = f.base[a];
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++)
            f.cap[src_arc[dag->producer[dag->in_list[k]]]] = FLOW_INF;
        f.cap[snk_arc[v]] = FLOW_INF;
        int64_t cut = net_maxflow(&f, S, T, sv, sa);
        if (cut >= FLOW_INF)
            continue; /* cannot happen on a DAG; skip defensively */
        int64_t val = cut - sum_a + wout[v];
        if (val > best) {
            best = val;
            best_v = v;
        }
    }
    *bound = best;
    if (at)
        *at = best_v;
    net_free(&f);
    free(sv);
    free(sa);
    free(src_arc);
    free(snk_arc);
    free(aidx);
    free(wout);
    free(cutb);
    free(cand);
    return OLLA_OK;
}
