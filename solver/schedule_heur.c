/* olla-onnx: heuristic orders (list schedulers and depth-first post-orders). */
#include <stdlib.h>
#include <string.h>

#include "solver/olla_schedule.h"
#include "util/olla_clock.h"

/* The deadline is read once every this many nodes ordered (a power of two). */
#define DEADLINE_POLL 256

/* ---- an indexed min-heap of nodes by (k1, k2, tie) ---- */

typedef struct {
    int64_t k1, k2;
    int tie;
} node_key;

typedef struct {
    int n;
    int *heap, *pos; /* pos[v]: index in heap, -1 when absent */
    node_key *key;   /* by node */
} node_heap;

static int key_less(const node_heap *h, int a, int b)
{
    const node_key *x = &h->key[a], *y = &h->key[b];
    if (x->k1 != y->k1)
        return x->k1 < y->k1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2;
    return x->tie < y->tie;
}

static void heap_place(node_heap *h, int i, int v)
{
    h->heap[i] = v;
    h->pos[v] = i;
}

static void heap_up(node_heap *h, int i)
{
    int v = h->heap[i];
    while (i > 0 && key_less(h, v, h->heap[(i - 1) / 2])) {
        heap_place(h, i, h->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_place(h, i, v);
}

static void heap_down(node_heap *h, int i)
{
    int v = h->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && key_less(h, h->heap[c + 1], h->heap[c]))
            c++;
        if (!key_less(h, h->heap[c], v))
            break;
        heap_place(h, i, h->heap[c]);
        i = c;
    }
    heap_place(h, i, v);
}

static void heap_push(node_heap *h, int v)
{
    heap_place(h, h->n++, v);
    heap_up(h, h->n - 1);
}

static int heap_pop(node_heap *h)
{
    int top = h->heap[0];
    h->pos[top] = -1;
    if (--h->n > 0) {
        heap_place(h, 0, h->heap[h->n]);
        heap_down(h, 0);
    }
    return top;
}

/* the key of v (in the heap or not) changed */
static void heap_rekey(node_heap *h, int v)
{
    if (h->pos[v] < 0)
        return;
    heap_up(h, h->pos[v]);
    heap_down(h, h->pos[v]);
}

/* ---- list scheduling, forward and backward ---- */

typedef struct {
    const olla_dag *dag;
    int *pending; /* unplaced neighbours each node waits for: producers' inputs (forward), readers (backward) */
    int *rem;     /* readers of each tensor not yet run (forward) or not yet placed (backward) */
    int64_t *alloc, *freed; /* per node: the two terms of its key */
    node_heap h;
} list_state;

static void list_free(list_state *s)
{
    free(s->pending);
    free(s->rem);
    free(s->alloc);
    free(s->freed);
    free(s->h.heap);
    free(s->h.pos);
    free(s->h.key);
}

static int list_init(list_state *s, const olla_dag *dag)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    memset(s, 0, sizeof *s);
    s->dag = dag;
    s->pending = calloc((size_t)n + 1, sizeof(int));
    s->rem = calloc((size_t)nt + 1, sizeof(int));
    s->alloc = calloc((size_t)n + 1, sizeof(int64_t));
    s->freed = calloc((size_t)n + 1, sizeof(int64_t));
    s->h.heap = malloc(((size_t)n + 1) * sizeof(int));
    s->h.pos = malloc(((size_t)n + 1) * sizeof(int));
    s->h.key = calloc((size_t)n + 1, sizeof(node_key));
    if (!s->pending || !s->rem || !s->alloc || !s->freed || !s->h.heap || !s->h.pos || !s->h.key)
        return 0;
    for (int v = 0; v < n; v++)
        s->h.pos[v] = -1;
    for (int e = 0; e < nt; e++)
        s->rem[e] = dag->sink_start[e + 1] - dag->sink_start[e];
    return 1;
}

/* kind 0: least net allocation first (frees more than it allocates), ties by
 * smaller step peak; kind 1: least step peak first, ties by net allocation.
 * The step peak is the bytes allocated now plus what the node allocates,
 * so it ranks nodes by their allocation. Final ties go to the lowest node
 * id (the input order). */
static void forward_key(list_state *s, int kind, int v)
{
    int64_t net = s->alloc[v] - s->freed[v], step = s->alloc[v];
    s->h.key[v] = (node_key){kind == 0 ? net : step, kind == 0 ? step : net, v};
}

/* the node that is the last unrun reader of e: its key gains e's bytes */
static void forward_last_reader(list_state *s, int kind, int e)
{
    const olla_dag *d = s->dag;
    for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++) {
        int w = d->sink_list[j];
        if (s->pending[w] >= 0) { /* not run yet */
            s->freed[w] += d->bytes[e];
            forward_key(s, kind, w);
            heap_rekey(&s->h, w);
            return;
        }
    }
}

static olla_status list_schedule(const olla_dag *dag, int kind, double deadline, int *order, olla_error *err)
{
    int n = dag->n_nodes;
    list_state s;
    if (!list_init(&s, dag)) {
        list_free(&s);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the list scheduler");
    }
    for (int v = 0; v < n; v++) {
        s.pending[v] = dag->in_start[v + 1] - dag->in_start[v];
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            s.alloc[v] += dag->bytes[e];
            if (!dag->is_output[e] && s.rem[e] == 0)
                s.freed[v] += dag->bytes[e]; /* dead at once */
        }
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int e = dag->in_list[k];
            if (!dag->is_output[e] && s.rem[e] == 1)
                s.freed[v] += dag->bytes[e];
        }
    }
    for (int v = 0; v < n; v++)
        if (s.pending[v] == 0) {
            forward_key(&s, kind, v);
            heap_push(&s.h, v);
        }
    int done = 0;
    while (s.h.n > 0) {
        if ((done & (DEADLINE_POLL - 1)) == 0 && olla_past(deadline)) {
            list_free(&s);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "the list scheduler stopped at the time limit");
        }
        int v = heap_pop(&s.h);
        order[done++] = v;
        s.pending[v] = -1; /* run */
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int e = dag->in_list[k];
            if (--s.rem[e] == 1 && !dag->is_output[e])
                forward_last_reader(&s, kind, e);
        }
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            for (int j = dag->sink_start[e]; j < dag->sink_start[e + 1]; j++) {
                int w = dag->sink_list[j];
                if (--s.pending[w] == 0) {
                    forward_key(&s, kind, w);
                    heap_push(&s.h, w);
                }
            }
        }
    }
    list_free(&s);
    if (done != n)
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d nodes can never run", n - done, n);
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

/* Backward: the order is built from its last step. Before any node is
 * placed the graph outputs are live (they stay live to the end); placing a
 * node w (all its readers placed) at the latest free step ends its
 * outputs' lives there and starts its inputs' (those no placed node reads
 * yet). The node placed is the one that adds least to what is live before
 * it: its new inputs less its live outputs, ties by the bytes it adds to
 * its own step (its new inputs and its outputs nobody reads), then the
 * highest id (the input order, from its end). alloc[w]: w's outputs live
 * after it (read or graph outputs), freed[w]: its inputs not live yet. */
static void backward_key(list_state *s, int w)
{
    const olla_dag *d = s->dag;
    int64_t dead = 0;
    for (int k = d->out_start[w]; k < d->out_start[w + 1]; k++) {
        int e = d->out_list[k];
        if (!d->is_output[e] && d->sink_start[e] == d->sink_start[e + 1])
            dead += d->bytes[e];
    }
    s->h.key[w] = (node_key){s->freed[w] - s->alloc[w], s->freed[w] + dead, -w};
}

/* e has a placed reader now: it is live, and its other readers no longer
 * add it */
static void backward_now_live(list_state *s, int e)
{
    const olla_dag *d = s->dag;
    for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++) {
        int w = d->sink_list[j];
        if (s->pending[w] >= 0) {
            s->freed[w] -= d->bytes[e];
            if (s->h.pos[w] >= 0) {
                backward_key(s, w);
                heap_rekey(&s->h, w);
            }
        }
    }
}

olla_status olla_sched_reverse_until(const olla_dag *dag, double deadline, int *order, olla_error *err)
{
    int n = dag->n_nodes;
    list_state s;
    if (!list_init(&s, dag)) {
        list_free(&s);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the backward list scheduler");
    }
    /* pending[v]: v's readers not placed yet (each reader of each output) */
    for (int v = 0; v < n; v++) {
        for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
            int e = dag->out_list[k];
            s.pending[v] += s.rem[e];
            if (dag->is_output[e] || s.rem[e] > 0)
                s.alloc[v] += dag->bytes[e];
        }
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int e = dag->in_list[k];
            if (!dag->is_output[e])
                s.freed[v] += dag->bytes[e];
        }
    }
    for (int v = n - 1; v >= 0; v--)
        if (s.pending[v] == 0) {
            backward_key(&s, v);
            heap_push(&s.h, v);
        }
    int placed = 0;
    while (s.h.n > 0) {
        if ((placed & (DEADLINE_POLL - 1)) == 0 && olla_past(deadline)) {
            list_free(&s);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "the backward list scheduler stopped at the time limit");
        }
        int w = heap_pop(&s.h);
        order[n - 1 - placed++] = w;
        s.pending[w] = -1; /* placed */
        for (int k = dag->in_start[w]; k < dag->in_start[w + 1]; k++) {
            int e = dag->in_list[k];
            if (s.rem[e]-- == (dag->sink_start[e + 1] - dag->sink_start[e]) && !dag->is_output[e])
                backward_now_live(&s, e); /* w is e's first reader placed */
            int p = dag->producer[e];
            if (--s.pending[p] == 0) {
                backward_key(&s, p);
                heap_push(&s.h, p);
            }
        }
    }
    list_free(&s);
    if (placed != n)
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d nodes can never run", n - placed,
                              n);
    return OLLA_OK;
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
