/* olla-onnx: local improvement of an order: move nodes that hold tensors live
 * at the peak step to the other side of it, within their windows, while the
 * (peak, number of steps at the peak) pair drops.
 *
 * A move of one node from step p to step q changes the live bytes only at
 * the steps between them (the nodes outside keep their steps, and so do the
 * first and last steps of every tensor they bound): a short move updates the
 * lifetimes of the tensors the nodes there make or read, sums the live bytes
 * of those steps again, and reads the peak, how many steps reach it and the
 * first of them off a tree over the steps. A long one profiles the whole
 * order again when it is evaluated, as every move did before. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "solver/olla_schedule.h"
#include "util/olla_clock.h"

typedef struct {
    const olla_dag *dag;
    int *order, *step;
    int64_t *delta, *live; /* delta: the live bytes' change at each step (n + 1) */
    int *first, *last;
    long evals_left; /* the work budget, in evaluations of an order; < 0: none */
    /* stale: first/last/delta/live are not those of the order (a long move
     * or a chain move since); tree_stale: the tree is not that of live */
    int stale, tree_stale;
    /* a tree over the steps: the highest live bytes of a range of steps, how
     * many steps of it reach that, and the first of them (leaves from tsize) */
    int tsize;
    int64_t *tmax;
    int *tcount, *tfirst;
    /* the tensors a move touches, marked by stamp */
    int *touched, *tstamp, stamp;
} ls_ctx;

/* A move over more than 1/LONG_MOVE of the steps is left to a profile of
 * the whole order, which then costs no more than the steps between. */
#define LONG_MOVE 8
/* The steps a node at the peak may move to: at most the window's two ends
 * and two midpoints. */
#define MOVE_TARGETS 4
/* The deadline is read once every this many moves (a power of two). */
#define MOVE_DEADLINE_POLL 8

static void tree_pull(ls_ctx *c, int i)
{
    int l = 2 * i, r = 2 * i + 1;
    if (c->tmax[l] >= c->tmax[r]) {
        c->tmax[i] = c->tmax[l];
        c->tfirst[i] = c->tfirst[l];
        c->tcount[i] = c->tcount[l] + (c->tmax[l] == c->tmax[r] ? c->tcount[r] : 0);
    } else {
        c->tmax[i] = c->tmax[r];
        c->tfirst[i] = c->tfirst[r];
        c->tcount[i] = c->tcount[r];
    }
}

static void tree_leaf(ls_ctx *c, int t)
{
    int i = c->tsize + t;
    c->tmax[i] = c->live[t];
    c->tcount[i] = 1;
    c->tfirst[i] = t;
}

/* the whole tree from live */
static void tree_build(ls_ctx *c)
{
    int n = c->dag->n_nodes;
    for (int t = 0; t < n; t++)
        tree_leaf(c, t);
    for (int i = c->tsize + n; i < 2 * c->tsize; i++) {
        c->tmax[i] = INT64_MIN;
        c->tcount[i] = 0;
        c->tfirst[i] = INT_MAX;
    }
    for (int i = c->tsize - 1; i >= 1; i--)
        tree_pull(c, i);
    c->tree_stale = 0;
}

/* the leaves of steps lo..hi from live, then their ancestors */
static void tree_set(ls_ctx *c, int lo, int hi)
{
    for (int t = lo; t <= hi; t++)
        tree_leaf(c, t);
    for (int a = (c->tsize + lo) >> 1, b = (c->tsize + hi) >> 1; a >= 1; a >>= 1, b >>= 1)
        for (int i = a; i <= b; i++)
            tree_pull(c, i);
}

/* first/last/delta/live from the whole order, when they are stale */
static void refresh(ls_ctx *c)
{
    if (!c->stale)
        return;
    olla_dag_profile(c->dag, c->step, c->first, c->last, c->delta, c->live);
    c->stale = 0;
    c->tree_stale = 1;
}

/* The peak of the current order (in-place sharing included), how many steps
 * reach it and the first of them; first/last/live follow the order. Counts
 * one evaluation of the work budget. */
static void evaluate(ls_ctx *c, int64_t *peak, int *count, int *at)
{
    int n = c->dag->n_nodes;
    if (c->evals_left > 0)
        c->evals_left--;
    refresh(c);
    if (!c->tree_stale) {
        int64_t pk = c->tmax[1] > 0 ? c->tmax[1] : 0; /* live bytes are never negative */
        *peak = pk;
        *count = c->tmax[1] == pk ? c->tcount[1] : 0;
        *at = c->tmax[1] == pk ? c->tfirst[1] : 0;
        return;
    }
    int64_t pk = 0;
    for (int t = 0; t < n; t++)
        if (c->live[t] > pk)
            pk = c->live[t];
    int cnt = 0, where = -1;
    for (int t = 0; t < n; t++)
        if (c->live[t] == pk) {
            if (where < 0)
                where = t;
            cnt++;
        }
    *peak = pk;
    *count = cnt;
    *at = where < 0 ? 0 : where;
}

static void add_tensor(ls_ctx *c, int e, int sign)
{
    int64_t b = c->dag->bytes[e];
    c->delta[c->first[e]] += sign * b;
    c->delta[c->last[e] + 1] -= sign * b;
}

/* the in-place writes of node v that apply: their outputs count once */
static void add_inplace(ls_ctx *c, int v, int sign)
{
    const olla_dag *d = c->dag;
    if (d->n_inplace == 0)
        return;
    int s = c->step[v];
    for (int k = d->inplace_start[v]; k < d->inplace_start[v + 1]; k++)
        if (c->last[d->inplace_in[k]] == s) {
            int64_t b = d->bytes[d->inplace_out[k]];
            c->delta[s] -= sign * b;
            c->delta[s + 1] += sign * b;
        }
}

static void lifetime(ls_ctx *c, int e)
{
    const olla_dag *d = c->dag;
    int f = c->step[d->producer[e]], l = f;
    if (d->is_output[e])
        l = d->n_nodes - 1;
    else
        for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++)
            if (c->step[d->sink_list[j]] > l)
                l = c->step[d->sink_list[j]];
    c->first[e] = f;
    c->last[e] = l;
}

static void move_node(ls_ctx *c, int from, int to);

/* Moves the node at step `from` to step `to`; a short move brings the
 * profile and the tree up to date over the steps between, a long one
 * leaves them to the next evaluation. */
static void move_update(ls_ctx *c, int from, int to)
{
    const olla_dag *d = c->dag;
    int lo = from < to ? from : to, hi = from < to ? to : from, nt = 0;
    if (lo == hi)
        return;
    if (c->stale || (long)(hi - lo) * LONG_MOVE > d->n_nodes) {
        move_node(c, from, to);
        c->stale = 1;
        return;
    }
    if (c->tree_stale)
        tree_build(c);
    c->stamp++;
    for (int t = lo; t <= hi; t++) {
        int x = c->order[t];
        for (int pass = 0; pass < 2; pass++) {
            const int *list = pass ? d->out_list : d->in_list;
            int k0 = pass ? d->out_start[x] : d->in_start[x], k1 = pass ? d->out_start[x + 1] : d->in_start[x + 1];
            for (int k = k0; k < k1; k++) {
                int e = list[k];
                if (d->bytes[e] > 0 && c->tstamp[e] != c->stamp) {
                    c->tstamp[e] = c->stamp;
                    c->touched[nt++] = e;
                }
            }
        }
        add_inplace(c, x, -1);
    }
    for (int i = 0; i < nt; i++)
        add_tensor(c, c->touched[i], -1);
    move_node(c, from, to);
    for (int i = 0; i < nt; i++) {
        lifetime(c, c->touched[i]);
        add_tensor(c, c->touched[i], 1);
    }
    int64_t cur = lo > 0 ? c->live[lo - 1] : 0;
    for (int t = lo; t <= hi; t++) {
        add_inplace(c, c->order[t], 1);
        cur += c->delta[t];
        c->live[t] = cur;
    }
    tree_set(c, lo, hi);
}

static void move_node(ls_ctx *c, int from, int to)
{
    int v = c->order[from];
    if (from < to) {
        memmove(c->order + from, c->order + from + 1, (size_t)(to - from) * sizeof(int));
        for (int t = from; t < to; t++)
            c->step[c->order[t]] = t;
    } else if (from > to) {
        memmove(c->order + to + 1, c->order + to, (size_t)(from - to) * sizeof(int));
        for (int t = to + 1; t <= from; t++)
            c->step[c->order[t]] = t;
    }
    c->order[to] = v;
    c->step[v] = to;
}

static void window(const ls_ctx *c, int v, int *lo, int *hi)
{
    const olla_dag *d = c->dag;
    int a = 0, b = d->n_nodes - 1;
    for (int k = d->in_start[v]; k < d->in_start[v + 1]; k++) {
        int s = c->step[d->producer[d->in_list[k]]] + 1;
        if (s > a)
            a = s;
    }
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
        int e = d->out_list[k];
        for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++) {
            int s = c->step[d->sink_list[j]] - 1;
            if (s < b)
                b = s;
        }
    }
    *lo = a;
    *hi = b;
}

#define CHAIN_MAX 16

/* v and, growing from it, the producers whose results only the gathered
 * nodes read and that run before step `before` (INT_MAX: any): chain[0..)
 * (at most CHAIN_MAX, v first), each marked in in_chain. Returns how many. */
static int private_producers(const ls_ctx *c, int v, int before, int *chain, unsigned char *in_chain)
{
    const olla_dag *d = c->dag;
    int nch = 0;
    chain[nch++] = v;
    in_chain[v] = 1;
    for (int grew = 1; grew && nch < CHAIN_MAX;) {
        grew = 0;
        for (int i = 0; i < nch && nch < CHAIN_MAX; i++) {
            int x = chain[i];
            for (int k = d->in_start[x]; k < d->in_start[x + 1] && nch < CHAIN_MAX; k++) {
                int u = d->producer[d->in_list[k]];
                if (in_chain[u] || c->step[u] >= before)
                    continue;
                int only = 1;
                for (int q = d->out_start[u]; q < d->out_start[u + 1] && only; q++) {
                    int e = d->out_list[q];
                    if (d->is_output[e])
                        only = 0;
                    for (int j = d->sink_start[e]; j < d->sink_start[e + 1] && only; j++)
                        if (!in_chain[d->sink_list[j]])
                            only = 0;
                }
                if (only) {
                    chain[nch++] = u;
                    in_chain[u] = 1;
                    grew = 1;
                }
            }
        }
    }
    return nch;
}

/* Moves v, and the nodes before the peak step `at` whose results only the
 * moved nodes read, to just after the peak step, keeping their order. Valid
 * when every reader of v runs after the peak. Returns 0 when not applicable;
 * saved receives the previous order for undo. */
static int chain_move(ls_ctx *c, int v, int at, int *saved, int *tmp, unsigned char *in_chain)
{
    const olla_dag *d = c->dag;
    int n = d->n_nodes;
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
        int e = d->out_list[k];
        for (int j = d->sink_start[e]; j < d->sink_start[e + 1]; j++)
            if (c->step[d->sink_list[j]] <= at)
                return 0;
    }
    int chain[CHAIN_MAX];
    int nch = private_producers(c, v, at, chain, in_chain);
    int ok = nch > 1; /* a single node is covered by the plain moves */
    if (ok) {
        memcpy(saved, c->order, (size_t)n * sizeof(int));
        int m = 0;
        for (int t = 0; t < n; t++) {
            int x = c->order[t];
            if (!in_chain[x])
                tmp[m++] = x;
            if (t == at)
                for (int r = 0; r < n && r <= at; r++)
                    if (in_chain[saved[r]])
                        tmp[m++] = saved[r];
        }
        memcpy(c->order, tmp, (size_t)n * sizeof(int));
        for (int t = 0; t < n; t++)
            c->step[c->order[t]] = t;
    }
    for (int i = 0; i < nch; i++)
        in_chain[chain[i]] = 0;
    return ok;
}

/* The other way: v (at the peak step `at`) and the nodes before it whose
 * results only the moved nodes read (its private producers) move, in their
 * order, to just after the last producer of the moved nodes that stays,
 * where fewer results may be live (an update that needs a result made long
 * before). Returns 0 when not applicable or nothing would move; saved
 * receives the previous order for undo. */
static int chain_move_earlier(ls_ctx *c, int v, int at, int *saved, int *tmp, unsigned char *in_chain)
{
    const olla_dag *d = c->dag;
    int n = d->n_nodes;
    int chain[CHAIN_MAX];
    int nch = private_producers(c, v, INT_MAX, chain, in_chain);
    /* the last step of a producer that stays, and the first of the chain */
    int after = -1, first = at;
    for (int i = 0; i < nch; i++) {
        int x = chain[i];
        if (c->step[x] < first)
            first = c->step[x];
        for (int k = d->in_start[x]; k < d->in_start[x + 1]; k++) {
            int u = d->producer[d->in_list[k]];
            if (!in_chain[u] && c->step[u] > after)
                after = c->step[u];
        }
    }
    int ok = after < at - 1 && after + 1 < first + nch - 1; /* the block would start earlier */
    if (ok) {
        memcpy(saved, c->order, (size_t)n * sizeof(int));
        int m = 0;
        for (int t = 0; t <= after; t++)
            if (!in_chain[saved[t]])
                tmp[m++] = saved[t];
        for (int t = 0; t <= at; t++) /* the chain, in its order */
            if (in_chain[saved[t]])
                tmp[m++] = saved[t];
        for (int t = after + 1; t < n; t++)
            if (!in_chain[saved[t]])
                tmp[m++] = saved[t];
        memcpy(c->order, tmp, (size_t)n * sizeof(int));
        for (int t = 0; t < n; t++)
            c->step[c->order[t]] = t;
    }
    for (int i = 0; i < nch; i++)
        in_chain[chain[i]] = 0;
    return ok;
}

static void undo_chain(ls_ctx *c, const int *saved)
{
    int n = c->dag->n_nodes;
    memcpy(c->order, saved, (size_t)n * sizeof(int));
    for (int t = 0; t < n; t++)
        c->step[c->order[t]] = t;
    c->stale = 1;
}

/* After a chain move: keeps it when the order peaks lower, or as high at
 * fewer steps (updating *peak, *count, *at, and returning 1), else puts the
 * saved order back and returns 0. */
static int keep_or_undo_chain(ls_ctx *c, const int *saved, int64_t *peak, int *count, int *at)
{
    int64_t pk2;
    int cnt2, at2;
    c->stale = 1; /* a chain move rewrites the order */
    evaluate(c, &pk2, &cnt2, &at2);
    if (pk2 < *peak || (pk2 == *peak && cnt2 < *count)) {
        *peak = pk2;
        *count = cnt2;
        *at = at2;
        return 1;
    }
    undo_chain(c, saved);
    return 0;
}

int64_t olla_sched_local_improve(const olla_dag *dag, int *order, olla_limit lim)
{
    return olla_sched_local_improve_moves(dag, order, lim, 1);
}

/* The search's scratch beside its context: the candidates, and a saved
 * order and a mark per node for the chain moves. */
typedef struct {
    int *cand, *saved, *tmp;
    unsigned char *in_chain;
} ls_scratch;

/* Allocates the context's arrays and the scratch for n nodes and nt
 * tensors; 0 when out of memory (ls_free releases what was allocated). */
static int ls_alloc(ls_ctx *c, ls_scratch *x, int n, int nt)
{
    for (c->tsize = 1; c->tsize < n; c->tsize *= 2)
        ;
    c->tmax = malloc((size_t)2 * c->tsize * sizeof(int64_t));
    c->tcount = malloc((size_t)2 * c->tsize * sizeof(int));
    c->tfirst = malloc((size_t)2 * c->tsize * sizeof(int));
    c->touched = malloc(((size_t)nt + 1) * sizeof(int));
    c->tstamp = calloc((size_t)nt + 1, sizeof(int));
    c->step = calloc((size_t)n + 1, sizeof(int));
    c->delta = malloc(((size_t)n + 2) * sizeof(int64_t));
    c->live = malloc(((size_t)n + 1) * sizeof(int64_t));
    c->first = malloc(((size_t)nt + 1) * sizeof(int));
    c->last = malloc(((size_t)nt + 1) * sizeof(int));
    x->cand = malloc(((size_t)2 * nt + n + 1) * sizeof(int));
    x->saved = malloc(((size_t)n + 1) * sizeof(int));
    x->tmp = malloc(((size_t)n + 1) * sizeof(int));
    x->in_chain = calloc((size_t)n + 1, 1);
    return c->step && c->delta && c->live && c->first && c->last && x->cand && x->saved && x->tmp &&
           x->in_chain && c->tmax && c->tcount && c->tfirst && c->touched && c->tstamp;
}

static void ls_free(ls_ctx *c, ls_scratch *x)
{
    free(c->tmax);
    free(c->tcount);
    free(c->tfirst);
    free(c->touched);
    free(c->tstamp);
    free(c->step);
    free(c->delta);
    free(c->live);
    free(c->first);
    free(c->last);
    free(x->cand);
    free(x->saved);
    free(x->tmp);
    free(x->in_chain);
}

/* The candidates at the peak step `at`: the node there, the producers and
 * the last readers of the tensors live there. Returns how many. */
static int peak_candidates(const ls_ctx *c, int at, int *cand)
{
    const olla_dag *dag = c->dag;
    int nc = 0;
    cand[nc++] = c->order[at];
    for (int e = 0; e < dag->n_tensors; e++) {
        if (dag->bytes[e] == 0 || c->first[e] > at || c->last[e] < at)
            continue;
        if (c->first[e] < at)
            cand[nc++] = dag->producer[e];
        if (c->last[e] > at && !dag->is_output[e])
            cand[nc++] = c->order[c->last[e]];
    }
    return nc;
}

/* The best order so far: its peak, how many steps reach it, the first. */
typedef struct {
    int64_t peak;
    int cnt, at;
} ls_best;

/* Tries the moves of node v (to the peak and the ends of its window, then
 * its chains); keeps the first that lowers the peak (or the steps at it).
 * Returns 1 when one was kept. */
static int try_node(ls_ctx *c, ls_scratch *x, int v, ls_best *b, int earlier_blocks)
{
    int p = c->step[v], lo, hi, at = b->at;
    window(c, v, &lo, &hi);
    int targets[MOVE_TARGETS], ntg = 0;
    if (p < at) {
        targets[ntg++] = at < hi ? at : hi;
        targets[ntg++] = hi;
    } else if (p > at) {
        targets[ntg++] = at > lo ? at : lo;
        targets[ntg++] = lo;
    } else {
        targets[ntg++] = lo;
        targets[ntg++] = hi;
        targets[ntg++] = (lo + p) / 2;
        targets[ntg++] = (p + hi + 1) / 2;
    }
    for (int k = 0; k < ntg; k++) {
        int to = targets[k];
        if (to == p || to < lo || to > hi)
            continue;
        move_update(c, p, to);
        int64_t pk2;
        int cnt2, at2;
        evaluate(c, &pk2, &cnt2, &at2);
        if (pk2 < b->peak || (pk2 == b->peak && cnt2 < b->cnt)) {
            *b = (ls_best){pk2, cnt2, at2};
            return 1;
        }
        move_update(c, to, p);
    }
    /* the node at the peak with its private producers, earlier */
    if (earlier_blocks && p == at && chain_move_earlier(c, v, at, x->saved, x->tmp, x->in_chain) &&
        keep_or_undo_chain(c, x->saved, &b->peak, &b->cnt, &b->at))
        return 1;
    /* a producer whose inputs only it reads: move the chain */
    return p < at && chain_move(c, v, at, x->saved, x->tmp, x->in_chain) &&
           keep_or_undo_chain(c, x->saved, &b->peak, &b->cnt, &b->at);
}

int64_t olla_sched_local_improve_moves(const olla_dag *dag, int *order, olla_limit lim, int earlier_blocks)
{
    int n = dag->n_nodes;
    double deadline = lim.deadline;
    ls_ctx c;
    ls_scratch x;
    memset(&c, 0, sizeof c);
    memset(&x, 0, sizeof x);
    c.dag = dag;
    c.order = order;
    c.evals_left = lim.budget > 0 ? lim.budget : -1;
    c.stale = 1;
    ls_best b = {-1, 0, 0};
    if (!ls_alloc(&c, &x, n, dag->n_tensors))
        goto done; /* out of memory: the order is left as it is */
    for (int t = 0; t < n; t++)
        c.step[order[t]] = t;
    evaluate(&c, &b.peak, &b.cnt, &b.at);
    for (int iter = 0; n > 1; iter++) {
        if ((iter & (MOVE_DEADLINE_POLL - 1)) == 0 && olla_past(deadline))
            break;
        int nc = peak_candidates(&c, b.at, x.cand);
        int improved = 0, late = 0;
        for (int i = 0; i < nc && !improved; i++) {
            /* each try is an evaluation of the order: watch the budget and the clock */
            if (c.evals_left == 0 || olla_past(deadline)) {
                late = 1;
                break;
            }
            improved = try_node(&c, &x, x.cand[i], &b, earlier_blocks);
        }
        if (!improved || late)
            break;
    }
done:
    ls_free(&c, &x);
    return b.peak;
}
