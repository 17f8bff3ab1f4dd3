/* olla-onnx: heuristic orders (list schedulers and depth-first post-orders). */
#include <stdlib.h>
#include <string.h>

#include "solver/olla_schedule.h"
#include "util/olla_clock.h"

typedef struct {
    const olla_dag *dag;
    int *indeg;     /* unfinished producers per node (counted per input tensor) */
    int *rem;       /* readers of each tensor not yet run */
    int *ready;     /* ready list */
    int n_ready;
    int64_t cur;    /* bytes allocated and not yet freed */
} sim_state;

static int sim_init(sim_state *s, const olla_dag *dag)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    memset(s, 0, sizeof *s);
    s->dag = dag;
    s->indeg = calloc((size_t)n + 1, sizeof(int));
    s->rem = calloc((size_t)nt + 1, sizeof(int));
    s->ready = malloc(((size_t)n + 1) * sizeof(int));
    if (!s->indeg || !s->rem || !s->ready)
        return 0;
    for (int v = 0; v < n; v++)
        s->indeg[v] = dag->in_start[v + 1] - dag->in_start[v];
    for (int e = 0; e < nt; e++)
        s->rem[e] = dag->sink_start[e + 1] - dag->sink_start[e];
    for (int v = 0; v < n; v++)
        if (s->indeg[v] == 0)
            s->ready[s->n_ready++] = v;
    return 1;
}

static void sim_free(sim_state *s)
{
    free(s->indeg);
    free(s->rem);
    free(s->ready);
}

/* bytes v allocates, and bytes freed right after it runs */
static void sim_effect(const sim_state *s, int v, int64_t *alloc, int64_t *freed)
{
    const olla_dag *d = s->dag;
    int64_t a = 0, f = 0;
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
        int e = d->out_list[k];
        a += d->bytes[e];
        if (!d->is_output[e] && d->sink_start[e] == d->sink_start[e + 1])
            f += d->bytes[e];
    }
    for (int k = d->in_start[v]; k < d->in_start[v + 1]; k++) {
        int e = d->in_list[k];
        if (!d->is_output[e] && s->rem[e] == 1)
            f += d->bytes[e];
    }
    *alloc = a;
    *freed = f;
}

static void sim_run(sim_state *s, int idx)
{
    const olla_dag *d = s->dag;
    int v = s->ready[idx];
    s->ready[idx] = s->ready[--s->n_ready];
    int64_t a, f;
    sim_effect(s, v, &a, &f);
    s->cur += a - f;
    for (int k = d->in_start[v]; k < d->in_start[v + 1]; k++)
        s->rem[d->in_list[k]]--;
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
        int e = d->out_list[k];
        for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++) {
            int w = d->sink_list[j];
            if (--s->indeg[w] == 0)
                s->ready[s->n_ready++] = w;
        }
    }
}

/* kind 0: least net allocation first (frees more than it allocates), ties by
 * smaller step peak; kind 1: least step peak first, ties by net allocation.
 * Final ties go to the lowest node id (the input order). */
static olla_status list_schedule(const olla_dag *dag, int kind, double deadline, int *order, olla_error *err)
{
    sim_state s;
    if (!sim_init(&s, dag)) {
        sim_free(&s);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the list scheduler");
    }
    int done = 0;
    while (s.n_ready > 0) {
        /* each step scans the ready list: on wide graphs the whole run can
         * take long, so it gives up at the deadline */
        if ((done & 255) == 0 && olla_past(deadline)) {
            sim_free(&s);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "the list scheduler stopped at the time limit");
        }
        int best = -1;
        int64_t b1 = 0, b2 = 0;
        for (int i = 0; i < s.n_ready; i++) {
            int64_t a, f;
            sim_effect(&s, s.ready[i], &a, &f);
            int64_t net = a - f, stepk = s.cur + a;
            int64_t k1 = kind == 0 ? net : stepk, k2 = kind == 0 ? stepk : net;
            if (best < 0 || k1 < b1 || (k1 == b1 && (k2 < b2 || (k2 == b2 && s.ready[i] < s.ready[best])))) {
                best = i;
                b1 = k1;
                b2 = k2;
            }
        }
        order[done++] = s.ready[best];
        sim_run(&s, best);
    }
    sim_free(&s);
    if (done != dag->n_nodes)
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d nodes can never run",
                              dag->n_nodes - done, dag->n_nodes);
    return OLLA_OK;
}

olla_status olla_sched_greedy_free(const olla_dag *dag, int *order, olla_error *err)
{
    return list_schedule(dag, 0, 0, order, err);
}

olla_status olla_sched_least_peak(const olla_dag *dag, int *order, olla_error *err)
{
    return list_schedule(dag, 1, 0, order, err);
}

olla_status olla_sched_greedy_free_until(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    return list_schedule(dag, 0, deadline, order, err);
}

olla_status olla_sched_least_peak_until(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    return list_schedule(dag, 1, deadline, order, err);
}

/* Post-order of a depth-first walk over predecessors, started from the nodes
 * nobody depends on in input order: each node runs right after the last of
 * the subgraphs it needs, so producers sit close to their readers. */
olla_status olla_sched_dfs_post(const olla_dag *dag, int *order, olla_error *err)
{
    int n = dag->n_nodes;
    unsigned char *state = calloc((size_t)n + 1, 1);
    int *stk = malloc(((size_t)n + 1) * sizeof(int));
    int *it = malloc(((size_t)n + 1) * sizeof(int));
    int *has_succ = calloc((size_t)n + 1, sizeof(int));
    if (!state || !stk || !it || !has_succ) {
        free(state);
        free(stk);
        free(it);
        free(has_succ);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the depth-first scheduler");
    }
    for (int e = 0; e < dag->n_tensors; e++)
        if (dag->sink_start[e + 1] > dag->sink_start[e])
            has_succ[dag->producer[e]] = 1;
    int done = 0;
    olla_status st = OLLA_OK;
    for (int pass = 0; pass < 2 && st == OLLA_OK; pass++) {
        for (int r = 0; r < n && st == OLLA_OK; r++) {
            /* roots first; a second pass catches anything left (cycles) */
            if (state[r] || (pass == 0 && has_succ[r]))
                continue;
            int sp = 0;
            stk[sp] = r;
            it[sp] = dag->in_start[r];
            state[r] = 1;
            sp++;
            while (sp > 0) {
                int v = stk[sp - 1];
                if (it[sp - 1] < dag->in_start[v + 1]) {
                    int u = dag->producer[dag->in_list[it[sp - 1]++]];
                    if (state[u] == 1) {
                        st = olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle through node %d", u);
                        break;
                    }
                    if (state[u] == 0) {
                        state[u] = 1;
                        stk[sp] = u;
                        it[sp] = dag->in_start[u];
                        sp++;
                    }
                } else {
                    state[v] = 2;
                    order[done++] = v;
                    sp--;
                }
            }
        }
    }
    free(state);
    free(stk);
    free(it);
    free(has_succ);
    if (st == OLLA_OK && done != n)
        st = olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d nodes can never run", n - done, n);
    return st;
}
