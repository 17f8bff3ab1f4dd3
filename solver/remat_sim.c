/* olla-onnx: running a graph's base order under a memory limit, freeing
 * tensors when it must and recomputing them when they are read again
 * (remat_sim.h).
 *
 * The state is the set of present tensors (each the version some run
 * wrote) and the bytes they hold. A step of the base order first makes its
 * node's inputs present, recomputing each missing one by a copy of its
 * producer after making that copy's own inputs present (an explicit stack,
 * since chains can be as long as the graph), then runs the node. Before any
 * run writes its outputs, tensors are freed while the present bytes plus
 * the outputs would pass the limit; inputs of runs under way are pinned.
 * After the step, the tensors nothing will need are freed.
 *
 * A tensor may be freed before its last reader (it is eligible) when a copy
 * of its producer is allowed and it is no graph output and not kept; a
 * buffer only with all its views. Whether freeing it now loses it for good
 * is a question of the moment, answered by one invariant: every absent
 * tensor that will be needed can be recomputed from what is present. A
 * tensor is needed when a later step reads it or a needed absent tensor's
 * producer reads it; `need` counts, per tensor, the needed absent tensors
 * whose producer reads it, kept up to date as tensors come and go, so that:
 *   - a tensor nothing needs is freed at the end of the step;
 *   - a needed tensor is freed only when it is eligible and can be
 *     recomputed from what is present, walking back through absent ones
 *     (then it counts as needed-absent, and so do the absent tensors its
 *     recomputation walks through);
 *   - a tensor that cannot be recomputed (a random mask, an optimizer's
 *     output) stays present while anything needs it.
 *
 * The simulation's bytes are an upper bound of the plan's peak: a version
 * is present from its run until it is freed, which is never before its
 * last reader; the plan's DAG counts it to its last reader. So a plan
 * whose simulation stays under the limit peaks under the limit. */
#include "solver/remat_sim.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/olla_grow.h"

#define OOM "out of memory planning recomputation"
/* A preferred tensor's eviction score is scaled down by PREFER_SCALE and
 * then put PREFER_OFFSET below every other score: the preferred go first,
 * in the order of their own scores. */
#define PREFER_SCALE 1e-12
#define PREFER_OFFSET 1e300
/* The outputs of a node marked on the stack; a node with more allocates. */
#define KEEP_ON_STACK 64
/* At most this many in-place writes of one run take over their input. */
#define MAX_INPLACE_TAKES 8
/* The deadline is read once every this many steps simulated (a power of two). */
#define SIM_DEADLINE_POLL 256

void remat_ctx_free(remat_ctx *c)
{
    free(c->pos);
    free(c->use_start);
    free(c->use_pos);
    free(c->last_use);
    free(c->view_start);
    free(c->view_list);
    free(c->eligible);
    free(c->always);
    free(c->gap_start);
    free(c->gap_end);
    memset(c, 0, sizeof *c);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The views of every buffer, as CSR. */
static int views_init(remat_ctx *c)
{
    const int *buf = c->p->buffer;
    c->view_start = calloc((size_t)c->nt + 2, sizeof(int));
    c->view_list = malloc(((size_t)c->nt + 1) * sizeof(int));
    if (!c->view_start || !c->view_list)
        return 0;
    for (int e = 0; e < c->nt; e++)
        if (buf[e] >= 0 && buf[e] != e)
            c->view_start[buf[e] + 1]++;
    for (int e = 0; e < c->nt; e++)
        c->view_start[e + 1] += c->view_start[e];
    int *fill = malloc(((size_t)c->nt + 1) * sizeof(int));
    if (!fill)
        return 0;
    memcpy(fill, c->view_start, (size_t)c->nt * sizeof(int));
    for (int e = 0; e < c->nt; e++)
        if (buf[e] >= 0 && buf[e] != e)
            c->view_list[fill[buf[e]]++] = e;
    free(fill);
    return 1;
}

/* Which tensors may be freed early (see the top of the file). */
static void eligibility(remat_ctx *c)
{
    const olla_remat_problem *p = c->p;
    const olla_dag *dag = c->dag;
    for (int e = 0; e < c->nt; e++) {
        c->always[e] = dag->bytes[e] == 0 && (p->buffer[e] < 0 || p->buffer[e] == e);
        c->eligible[e] = !c->always[e] && olla_remat_may_copy(p, dag->producer[e]);
    }
    for (int e = 0; e < c->nt; e++)
        for (int k = c->view_start[e]; c->eligible[e] && k < c->view_start[e + 1]; k++)
            if (!c->eligible[c->view_list[k]])
                c->eligible[e] = 0;
}

olla_status remat_ctx_init(remat_ctx *c, const olla_remat_problem *p, olla_error *err)
{
    const olla_dag *dag = p->dag;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->dag = dag;
    c->n = dag->n_nodes;
    c->nt = dag->n_tensors;
    size_t n1 = (size_t)c->n + 1, nt1 = (size_t)c->nt + 1;
    c->pos = malloc(n1 * sizeof(int));
    c->use_start = malloc(nt1 * sizeof(int));
    c->use_pos = malloc(((size_t)dag->sink_start[c->nt] + 1) * sizeof(int));
    c->last_use = malloc(nt1 * sizeof(int));
    c->eligible = calloc(nt1, 1);
    c->always = calloc(nt1, 1);
    c->gap_start = malloc(nt1 * sizeof(int));
    c->gap_end = malloc(nt1 * sizeof(int));
    if (!c->pos || !c->use_start || !c->use_pos || !c->last_use || !c->eligible || !c->always || !c->gap_start ||
        !c->gap_end || !views_init(c)) {
        remat_ctx_free(c);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    for (int t = 0; t < c->n; t++) {
        c->pos[p->order[t]] = t;
        c->total_cost += p->cost[p->order[t]];
    }
    for (int e = 0; e < c->nt; e++) {
        int a = dag->sink_start[e], b = dag->sink_start[e + 1];
        c->use_start[e] = a;
        for (int k = a; k < b; k++)
            c->use_pos[k] = c->pos[dag->sink_list[k]];
        qsort(c->use_pos + a, (size_t)(b - a), sizeof(int), cmp_int);
        c->last_use[e] = dag->is_output[e] ? c->n : b > a ? c->use_pos[b - 1] : c->pos[dag->producer[e]];
    }
    c->use_start[c->nt] = dag->sink_start[c->nt];
    eligibility(c);
    /* the widest gap, from the producer's step through the readers' */
    int min_gap = (int)((double)c->n * REMAT_MIN_GAP);
    for (int e = 0; e < c->nt; e++) {
        c->gap_start[e] = c->gap_end[e] = -1;
        int prev = c->pos[dag->producer[e]], best = min_gap > 1 ? min_gap : 2;
        for (int k = c->use_start[e]; c->eligible[e] && k < c->use_start[e + 1]; k++) {
            if (c->use_pos[k] - prev >= best) {
                best = c->use_pos[k] - prev;
                c->gap_start[e] = prev;
                c->gap_end[e] = c->use_pos[k];
            }
            prev = c->use_pos[k];
        }
    }
    return OLLA_OK;
}

/* ---- one simulation ---- */

/* The walks back through absent tensors stop after this many: a longer
 * recomputation counts as lost (not recoverable; infinitely expensive). */
#define REMAT_WALK_LIMIT 256

typedef struct frame {
    int tensor; /* to make present */
    int input;  /* inputs of its producer made present and pinned so far */
} frame;

typedef struct heap_item {
    double score;
    int tensor;
    unsigned stamp;
} heap_item;

typedef struct sim {
    const remat_ctx *c;
    const remat_policy *pol;
    int64_t limit;
    int now;                  /* the base step under way */
    unsigned char *present;
    unsigned char *wanted;    /* per tensor: counted as a needed absent tensor in its inputs' `need` */
    int *version;             /* per tensor: the run whose version is present */
    int *next_use;            /* per tensor: index in use_pos of its first reader at or after now */
    int *need;                /* per tensor: needed absent tensors whose producer reads it */
    int *pin;                 /* per tensor: runs under way that read it */
    int64_t mem;              /* bytes of the present tensors */
    /* what may be freed early (present eligible tensors with bytes, not
     * protected) in a min-heap of scores, evaluated lazily: an entry whose
     * stamp is not its tensor's is stale; a popped score is evaluated again
     * and pushed back when it has risen past the next one */
    struct heap_item *heap;
    long n_heap;
    size_t cap_heap;
    unsigned *stamp;
    unsigned char *in_cand;
    int *stash, n_stash;
    int *touched, n_touched;  /* tensors to look at when the step ends */
    unsigned char *in_touched;
    unsigned *seen;           /* per tensor: the walk that last visited it */
    unsigned walk;
    unsigned *refused;        /* per tensor: the eviction round that found it cannot go */
    unsigned round;
    int *walk_stack;
    int *copies;              /* per node: its copies so far */
    olla_remat_plan *plan;
    size_t cap_runs, cap_reads;
    long n_reads;
    frame *stack;
    int depth;
    long work;
    int failed, oom;
} sim;

/* The index in use_pos of e's first reader at a step after `after`. */
static int reader_after(const sim *s, int e, int after)
{
    const remat_ctx *c = s->c;
    int k = s->next_use[e], end = c->use_start[e + 1];
    while (k < end && c->use_pos[k] <= after)
        k++;
    return k;
}

/* A step after `after` reads e (graph outputs count as read at the end). */
static int read_after(const sim *s, int e, int after)
{
    return s->c->dag->is_output[e] || reader_after(s, e, after) < s->c->use_start[e + 1];
}

/* Needed from the step under way on: read at or after it, or by the
 * producer of a needed absent tensor. */
static int needed(const sim *s, int e)
{
    return s->need[e] > 0 || read_after(s, e, s->now - 1);
}

static void touch(sim *s, int e)
{
    if (!s->in_touched[e]) {
        s->in_touched[e] = 1;
        s->touched[s->n_touched++] = e;
    }
}

/* e is absent: count it as needed in its producer's inputs when it is
 * needed, or stop counting it when it no longer is; chains of absent
 * tensors follow (an explicit stack). */
static void update_wanted(sim *s, int e0)
{
    const olla_dag *dag = s->c->dag;
    int top = 0;
    s->walk_stack[top++] = e0;
    while (top > 0) {
        int e = s->walk_stack[--top];
        int want = !s->present[e] && needed(s, e);
        if (want == s->wanted[e])
            continue;
        s->wanted[e] = (unsigned char)want;
        int u = dag->producer[e];
        for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++) {
            int x = dag->in_list[j];
            s->need[x] += want ? 1 : -1;
            if (!s->present[x])
                s->walk_stack[top++] = x; /* its own need changed */
            else
                touch(s, x); /* rescored, or free to go, at the end of the step */
        }
    }
}

/* Can absent tensor e be recomputed from what is present? Walks back
 * through absent tensors (each once per walk). */
static int recoverable(sim *s, int e0)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    s->walk++;
    int top = 0;
    s->walk_stack[top++] = e0;
    s->seen[e0] = s->walk;
    for (int walked = 0; top > 0; walked++) {
        int e = s->walk_stack[--top];
        if (!c->eligible[e] || walked >= REMAT_WALK_LIMIT)
            return 0;
        int u = dag->producer[e];
        for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++) {
            int x = dag->in_list[j];
            if (s->present[x] || s->seen[x] == s->walk)
                continue;
            s->seen[x] = s->walk;
            s->walk_stack[top++] = x;
        }
        s->work++;
    }
    return 1;
}

/* May present tensor e go now? When nothing needs it, yes; else it must be
 * eligible and recomputable from what stays present (its views too). */
static int may_free(sim *s, int e)
{
    const remat_ctx *c = s->c;
    if (!needed(s, e))
        return 1;
    if (!c->eligible[e])
        return 0;
    s->present[e] = 0; /* as if gone, for the walk */
    int ok = recoverable(s, e);
    for (int k = c->view_start[e]; ok && k < c->view_start[e + 1]; k++) {
        int w = c->view_list[k];
        int was = s->present[w];
        s->present[w] = 0;
        ok = !needed(s, w) || recoverable(s, w);
        s->present[w] = (unsigned char)was;
    }
    s->present[e] = 1;
    return ok;
}

static int is_candidate(const sim *s, int e)
{
    const remat_ctx *c = s->c;
    return c->eligible[e] && c->dag->bytes[e] > 0 && !(s->pol->protect && s->pol->protect[e]);
}

static void heap_push(sim *s, int e);

static void make_present(sim *s, int e, int run)
{
    s->present[e] = 1;
    s->version[e] = run;
    s->mem += s->c->dag->bytes[e];
    s->in_cand[e] = (unsigned char)is_candidate(s, e);
    touch(s, e);
    heap_push(s, e); /* scored again when the step ends */
    if (s->wanted[e])
        update_wanted(s, e);
}

static void free_tensor(sim *s, int e)
{
    const remat_ctx *c = s->c;
    s->present[e] = 0;
    s->mem -= c->dag->bytes[e];
    s->in_cand[e] = 0;
    s->stamp[e]++;
    for (int k = c->view_start[e]; k < c->view_start[e + 1]; k++) {
        int w = c->view_list[k];
        if (s->present[w]) { /* a view dies with its buffer */
            s->present[w] = 0;
            update_wanted(s, w);
        }
    }
    update_wanted(s, e);
}

/* What recomputing e would cost now: its producer and the producers of
 * the absent tensors its recomputation walks back through (each once). */
static double recompute_cost(sim *s, int e0)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    s->walk++;
    int top = 0;
    s->walk_stack[top++] = e0;
    s->seen[e0] = s->walk;
    double cost = 0;
    for (int walked = 0; top > 0; walked++) {
        if (walked >= REMAT_WALK_LIMIT)
            return DBL_MAX;
        int e = s->walk_stack[--top], u = dag->producer[e];
        cost += c->p->cost[u];
        for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++) {
            int x = dag->in_list[j];
            if (s->present[x] || c->always[x] || s->seen[x] == s->walk)
                continue;
            s->seen[x] = s->walk;
            s->walk_stack[top++] = x;
        }
        s->work++;
    }
    return cost;
}

/* The step at which e is next needed: its next reader, or for a tensor
 * held only for recomputations, the next reader of the soonest absent
 * tensor that is recomputed from it; n when none is known. */
static int next_need(const sim *s, int e)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    int k = reader_after(s, e, s->now - 1);
    if (k < c->use_start[e + 1])
        return c->use_pos[k];
    int soonest = c->n;
    for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && s->need[e] > 0; q++) {
        int u = dag->sink_list[q];
        for (int o = dag->out_start[u]; o < dag->out_start[u + 1]; o++) {
            int x = dag->out_list[o];
            if (s->present[x] || !s->wanted[x])
                continue;
            int kx = reader_after(s, x, s->now - 1);
            if (kx < c->use_start[x + 1] && c->use_pos[kx] < soonest)
                soonest = c->use_pos[kx];
        }
    }
    return soonest;
}

/* Lower is freed first. */
static double score(sim *s, int e)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    if (!needed(s, e))
        return -DBL_MAX; /* nothing needs it: free */
    double dist = (double)(next_need(s, e) - s->now) + 1.0, bytes = (double)dag->bytes[e];
    double again = recompute_cost(s, e);
    double v;
    switch (s->pol->score) {
    case REMAT_SCORE_DISTANCE:
        v = 1.0 / (dist * bytes);
        break;
    case REMAT_SCORE_COST_SQUARED:
        v = again / (bytes * dist * dist);
        break;
    default:
        v = again / (bytes * dist);
    }
    if (s->pol->prefer && s->pol->prefer[e])
        v = v * PREFER_SCALE - PREFER_OFFSET;
    return v;
}

static int item_less(const heap_item *a, const heap_item *b)
{
    return a->score < b->score || (a->score == b->score && a->tensor < b->tensor);
}

/* Pushes e with its score now (any older entry of e goes stale). */
static void heap_push(sim *s, int e)
{
    if (!s->in_cand[e])
        return;
    heap_item *h = olla_grow(s->heap, &s->cap_heap, (size_t)s->n_heap + 1, sizeof *h);
    if (!h) {
        s->oom = s->failed = 1;
        return;
    }
    s->heap = h;
    heap_item it = {score(s, e), e, ++s->stamp[e]};
    long i = s->n_heap++;
    while (i > 0 && item_less(&it, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = it;
    s->work++;
}

static heap_item heap_pop(sim *s)
{
    heap_item top = s->heap[0], last = s->heap[--s->n_heap];
    long i = 0, n = s->n_heap;
    for (;;) {
        long l = 2 * i + 1, r = l + 1, m = i;
        const heap_item *best = &last;
        if (l < n && item_less(&s->heap[l], best)) {
            m = l;
            best = &s->heap[l];
        }
        if (r < n && item_less(&s->heap[r], best))
            m = r;
        if (m == i)
            break;
        s->heap[i] = s->heap[m];
        i = m;
    }
    if (n > 0)
        s->heap[i] = last;
    s->work++;
    return top;
}

/* Frees tensors until need more bytes fit; 0 when nothing more can go. */
static int make_room(sim *s, int64_t need)
{
    int ok = 1;
    while (s->mem + need > s->limit && !s->failed) {
        if (s->n_heap == 0) {
            ok = 0;
            break;
        }
        heap_item it = heap_pop(s);
        int e = it.tensor;
        if (it.stamp != s->stamp[e] || !s->in_cand[e])
            continue; /* stale */
        if (s->pin[e]) {
            s->stash[s->n_stash++] = e;
            s->stamp[e]++;
            continue;
        }
        double now = score(s, e);
        if (s->n_heap > 0 && now > it.score && item_less(&s->heap[0], &(heap_item){now, e, 0})) {
            heap_push(s, e);
            continue;
        }
        if (!may_free(s, e)) {
            s->stash[s->n_stash++] = e;
            s->stamp[e]++;
            continue;
        }
        free_tensor(s, e);
    }
    for (int i = 0; i < s->n_stash; i++) /* pinned or refused this time: back in */
        heap_push(s, s->stash[i]);
    s->n_stash = 0;
    return ok;
}

/* Appends a run of node u reading the present versions of its inputs. */
static int add_run(sim *s, int u, int copy)
{
    const olla_dag *dag = s->c->dag;
    olla_remat_plan *pl = s->plan;
    long nin = dag->in_start[u + 1] - dag->in_start[u];
    if (!olla_remat_plan_reserve(pl, &s->cap_runs, &s->cap_reads, (size_t)pl->n_runs + 1,
                                 (size_t)(s->n_reads + nin)))
        return -1;
    int r = pl->n_runs++;
    pl->node[r] = u;
    pl->copy[r] = copy;
    pl->read_start[r] = (int)s->n_reads;
    for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++)
        pl->read_run[s->n_reads++] = s->version[dag->in_list[j]];
    pl->read_start[r + 1] = (int)s->n_reads;
    return r;
}

/* Runs node u (a copy when target >= 0: target is the tensor it is for),
 * its inputs present and pinned. */
static void run_node(sim *s, int u, int target)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    const olla_remat_problem *p = c->p;
    int copy = target >= 0;
    int64_t need = 0;
    /* per output: 1 the version is kept, 2 written and dropped (an output a
     * copy must write that nothing needs), 0 left out */
    int kb = dag->out_start[u], ke = dag->out_start[u + 1];
    unsigned char keep_out[KEEP_ON_STACK], *kept = keep_out;
    if (ke - kb > KEEP_ON_STACK && !(kept = malloc((size_t)(ke - kb)))) {
        s->oom = s->failed = 1;
        return;
    }
    for (int k = kb; k < ke; k++) {
        int e = dag->out_list[k];
        unsigned char h = 1;
        if (copy && e != target) {
            if (!s->present[e] && !c->always[e] && needed(s, e))
                h = 1;
            else if (p->omittable && p->omittable[e])
                h = 0;
            else
                h = 2;
        }
        kept[k - kb] = h;
        if (h)
            need += dag->bytes[e];
    }
    /* in-place writes over an input this run reads last */
    int takes[MAX_INPLACE_TAKES], n_takes = 0;
    for (int q = dag->n_inplace ? dag->inplace_start[u] : 0; dag->n_inplace && q < dag->inplace_start[u + 1]; q++) {
        int in = dag->inplace_in[q], out = dag->inplace_out[q];
        int k = -1;
        for (int j = kb; j < ke; j++)
            if (dag->out_list[j] == out)
                k = j - kb;
        if (k < 0 || kept[k] != 1 || !s->present[in] || s->pin[in] != 1 || dag->is_output[in] || n_takes >= MAX_INPLACE_TAKES)
            continue;
        if (s->need[in] > 0 || read_after(s, in, copy ? s->now - 1 : s->now))
            continue;
        need -= dag->bytes[out];
        takes[n_takes++] = in;
    }
    if (!make_room(s, need)) {
        s->failed = 1;
        if (kept != keep_out)
            free(kept);
        return;
    }
    int r = add_run(s, u, copy ? ++s->copies[u] : 0);
    if (r < 0) {
        s->oom = s->failed = 1;
        if (kept != keep_out)
            free(kept);
        return;
    }
    s->work++;
    if (copy)
        s->plan->extra_cost += p->cost[u];
    for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++)
        touch(s, dag->in_list[j]);
    for (int i = 0; i < n_takes; i++)
        free_tensor(s, takes[i]);
    for (int k = kb; k < ke; k++)
        if (kept[k - kb] == 1)
            make_present(s, dag->out_list[k], r);
    if (kept != keep_out)
        free(kept);
}

static void pin_inputs(sim *s, int u, int delta)
{
    const olla_dag *dag = s->c->dag;
    for (int j = dag->in_start[u]; j < dag->in_start[u + 1]; j++)
        s->pin[dag->in_list[j]] += delta;
}

/* Makes tensor e present by copies of its producer and of whatever it
 * needs that is missing. */
static void recompute(sim *s, int e)
{
    const remat_ctx *c = s->c;
    const olla_dag *dag = c->dag;
    s->depth = 0;
    s->stack[s->depth++] = (frame){e, 0};
    while (s->depth > 0 && !s->failed) {
        frame *f = &s->stack[s->depth - 1];
        int u = dag->producer[f->tensor];
        int nin = dag->in_start[u + 1] - dag->in_start[u];
        if (s->present[f->tensor]) { /* a copy made for another tensor wrote it */
            for (int j = 0; j < f->input; j++)
                s->pin[dag->in_list[dag->in_start[u] + j]]--;
            s->depth--;
            continue;
        }
        if (f->input < nin) {
            int x = dag->in_list[dag->in_start[u] + f->input];
            if (s->present[x]) {
                s->pin[x]++;
                f->input++;
            } else if (!c->eligible[x] || s->depth >= c->nt + 1) {
                s->failed = 1; /* lost for good: the invariant was broken */
            } else {
                s->stack[s->depth++] = (frame){x, 0};
            }
            continue;
        }
        run_node(s, u, f->tensor);
        pin_inputs(s, u, -1);
        s->depth--;
    }
}

/* The step is over: readers at it are past; free what nothing needs. */
static void end_step(sim *s)
{
    const remat_ctx *c = s->c;
    for (int i = 0; i < s->n_touched; i++) {
        int e = s->touched[i];
        while (s->next_use[e] < c->use_start[e + 1] && c->use_pos[s->next_use[e]] <= s->now)
            s->next_use[e]++;
    }
    s->now++; /* needed() now looks from the next step on */
    for (int i = 0; i < s->n_touched; i++) {
        int e = s->touched[i];
        s->in_touched[e] = 0;
        if (s->present[e] && !s->pin[e] && !c->always[e] && !needed(s, e))
            free_tensor(s, e); /* may touch more: the loop reaches them */
        else if (!s->present[e])
            update_wanted(s, e);
        else if (s->pol->drop && s->pol->drop[e] && !s->pin[e] && c->gap_start[e] >= 0 &&
                 c->gap_start[e] <= s->now - 1 && s->now < c->gap_end[e] && may_free(s, e))
            free_tensor(s, e); /* its gap starts: checkpointing frees it until the gap's end */
        else if (s->present[e])
            heap_push(s, e); /* read, made or needed anew: its score moved */
    }
    s->now--;
    s->n_touched = 0;
}

static void sim_free(sim *s)
{
    free(s->present);
    free(s->wanted);
    free(s->version);
    free(s->next_use);
    free(s->need);
    free(s->pin);
    free(s->heap);
    free(s->stamp);
    free(s->in_cand);
    free(s->stash);
    free(s->touched);
    free(s->in_touched);
    free(s->seen);
    free(s->refused);
    free(s->walk_stack);
    free(s->copies);
    free(s->stack);
}

olla_status remat_plan_measure(const olla_remat_problem *p, olla_remat_plan *plan, olla_error *err)
{
    olla_dag d;
    olla_status st = olla_remat_plan_dag(p, plan, &d, NULL, err);
    if (st != OLLA_OK)
        return st;
    int *ident = malloc(((size_t)plan->n_runs + 1) * sizeof(int));
    if (!ident) {
        olla_dag_free(&d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    for (int r = 0; r < plan->n_runs; r++)
        ident[r] = r;
    st = olla_dag_peak(&d, ident, &plan->peak, NULL, NULL, err);
    free(ident);
    olla_dag_free(&d);
    /* the recomputed tensors: distinct tensors read from a copy */
    if (st == OLLA_OK) {
        const olla_dag *dag = p->dag;
        unsigned char *seen = calloc((size_t)dag->n_tensors + 1, 1);
        if (!seen)
            return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
        plan->n_copies = plan->n_recomputed = 0;
        plan->extra_cost = 0;
        for (int r = 0; r < plan->n_runs; r++) {
            int v = plan->node[r];
            plan->n_copies += plan->copy[r] != 0;
            if (plan->copy[r])
                plan->extra_cost += p->cost[v];
            for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
                int from = plan->read_run[plan->read_start[r] + (j - dag->in_start[v])], e = dag->in_list[j];
                if (plan->copy[from] && !seen[e]) {
                    seen[e] = 1;
                    plan->n_recomputed++;
                }
            }
        }
        free(seen);
    }
    return st;
}

olla_status remat_simulate(const remat_ctx *c, const remat_policy *pol, remat_limits lim, olla_remat_plan *plan,
                           int *fits, long *work, olla_error *err)
{
    size_t nt1 = (size_t)c->nt + 1, n1 = (size_t)c->n + 1;
    sim s;
    memset(&s, 0, sizeof s);
    memset(plan, 0, sizeof *plan);
    s.c = c;
    s.pol = pol;
    s.limit = lim.limit;
    s.plan = plan;
    s.present = calloc(nt1, 1);
    s.wanted = calloc(nt1, 1);
    s.version = malloc(nt1 * sizeof(int));
    s.next_use = malloc(nt1 * sizeof(int));
    s.need = calloc(nt1, sizeof(int));
    s.pin = calloc(nt1, sizeof(int));
    s.stamp = calloc(nt1, sizeof(unsigned));
    s.in_cand = calloc(nt1, 1);
    s.stash = malloc(nt1 * sizeof(int));
    s.touched = malloc(nt1 * sizeof(int));
    s.in_touched = calloc(nt1, 1);
    s.seen = calloc(nt1, sizeof(unsigned));
    s.refused = calloc(nt1, sizeof(unsigned));
    s.walk_stack = malloc(((size_t)c->dag->in_start[c->n] + nt1) * sizeof(int));
    s.copies = calloc(n1, sizeof(int));
    s.stack = malloc((nt1 + 1) * sizeof(frame));
    *fits = 0;
    if (!s.present || !s.wanted || !s.version || !s.next_use || !s.need || !s.pin || !s.stamp || !s.in_cand || !s.stash ||
        !s.touched || !s.in_touched || !s.seen || !s.refused || !s.walk_stack || !s.copies || !s.stack) {
        sim_free(&s);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    for (int e = 0; e < c->nt; e++)
        s.next_use[e] = c->use_start[e];
    const olla_dag *dag = c->dag;
    for (int t = 0; t < c->n && !s.failed; t++) {
        int v = c->p->order[t];
        s.now = t;
        /* each input present and pinned; making one present may free one
         * not yet pinned, which is then made present again */
        for (int j = dag->in_start[v]; j < dag->in_start[v + 1] && !s.failed; j++) {
            int x = dag->in_list[j];
            if (!s.present[x])
                recompute(&s, x);
            s.pin[x]++;
        }
        if (!s.failed)
            run_node(&s, v, -1);
        pin_inputs(&s, v, -1);
        end_step(&s);
        if (c->p->deadline > 0 && (t & (SIM_DEADLINE_POLL - 1)) == 0 && olla_past(c->p->deadline))
            s.failed = 1;
    }
    *work = s.work;
    int oom = s.oom, failed = s.failed;
    sim_free(&s);
    if (oom) {
        olla_remat_plan_free(plan);
        return olla_error_set(err, OLLA_ERR_INTERNAL, OOM);
    }
    if (failed) {
        olla_remat_plan_free(plan);
        return OLLA_OK;
    }
    olla_status st = remat_plan_measure(c->p, plan, err);
    if (st != OLLA_OK) {
        olla_remat_plan_free(plan);
        return st;
    }
    *fits = plan->peak <= lim.accept;
    if (!*fits)
        olla_remat_plan_free(plan);
    return OLLA_OK;
}
