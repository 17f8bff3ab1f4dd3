/* olla-onnx: exact ordering by dynamic programming over the sets of nodes
 * already run (predecessor-closed sets), layer by layer. The live bytes while
 * a node runs depend only on that set, so the best peak reaching a set is
 * all that needs to be remembered. Sets whose peak already reaches the upper
 * bound are dropped, so the search either finds a better order, proves that
 * none exists, or gives up at the state limit. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_clock.h"
#include "solver/olla_schedule.h"
#include "util/olla_bits.h"

typedef struct {
    int words;
    long n, cap;
    uint64_t *keys;
    int64_t *best, *cur;
    int *parent, *node;
    long *slot; /* hash table of indices, size hcap */
    long hcap;
} layer;

static void layer_free(layer *l)
{
    free(l->keys);
    free(l->best);
    free(l->cur);
    free(l->parent);
    free(l->node);
    free(l->slot);
    memset(l, 0, sizeof *l);
}

/* every bit of the key moves the low bits the table indexes by (a
 * multiply alone leaves the low bits blind to the high ones) */
static uint64_t hash_key(const uint64_t *k, int w)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < w; i++) {
        h ^= k[i];
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    h ^= h >> 30;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static int layer_grow(layer *l)
{
    long nc = l->cap ? 2 * l->cap : 256;
    uint64_t *k = realloc(l->keys, (size_t)nc * (size_t)l->words * sizeof *k);
    if (k)
        l->keys = k;
    int64_t *b = realloc(l->best, (size_t)nc * sizeof *b);
    if (b)
        l->best = b;
    int64_t *c = realloc(l->cur, (size_t)nc * sizeof *c);
    if (c)
        l->cur = c;
    int *p = realloc(l->parent, (size_t)nc * sizeof *p);
    if (p)
        l->parent = p;
    int *nd = realloc(l->node, (size_t)nc * sizeof *nd);
    if (nd)
        l->node = nd;
    if (!k || !b || !c || !p || !nd)
        return 0;
    l->cap = nc;
    /* rehash */
    long hc = 4 * nc;
    long *s = malloc((size_t)hc * sizeof *s);
    if (!s)
        return 0;
    for (long i = 0; i < hc; i++)
        s[i] = -1;
    for (long i = 0; i < l->n; i++) {
        long h = (long)(hash_key(l->keys + i * l->words, l->words) % (uint64_t)hc);
        while (s[h] >= 0)
            h = (h + 1) % hc;
        s[h] = i;
    }
    free(l->slot);
    l->slot = s;
    l->hcap = hc;
    return 1;
}

/* inserts or improves a state; returns 0 on out of memory */
static int layer_put(layer *l, const uint64_t *key, int64_t best, int64_t cur, int parent, int node)
{
    if (l->n + 1 > l->cap && !layer_grow(l))
        return 0;
    long h = (long)(hash_key(key, l->words) % (uint64_t)l->hcap);
    while (l->slot[h] >= 0) {
        long i = l->slot[h];
        if (memcmp(l->keys + i * l->words, key, (size_t)l->words * sizeof *key) == 0) {
            if (best < l->best[i]) {
                l->best[i] = best;
                l->parent[i] = parent;
                l->node[i] = node;
            }
            return 1;
        }
        h = (h + 1) % l->hcap;
    }
    long i = l->n++;
    memcpy(l->keys + i * l->words, key, (size_t)l->words * sizeof *key);
    l->best[i] = best;
    l->cur[i] = cur;
    l->parent[i] = parent;
    l->node[i] = node;
    l->slot[h] = i;
    return 1;
}

/* The search runs over the nodes of cand only; every other node has run
 * (it is before position lo of the order, step[] giving each node's
 * position) or has not, and stays so. A state's key
 * holds one bit per candidate, so a state of a window of 65 nodes takes
 * two words whatever the graph's size. */
typedef struct {
    const olla_dag *dag;
    const int *step; /* n_nodes: positions in the order; those below lo ran before the search */
    int lo;
    const int *loc;       /* n_nodes: index in cand, -1 for nodes outside it */
    const int64_t *outb, *deadb;
} dp_scope;

/* 1 when node x has run in state s */
static int has_run(const dp_scope *d, const uint64_t *s, int x)
{
    int i = d->loc[x];
    return i >= 0 ? olla_bit_get(s, (size_t)i) : d->step[x] < d->lo;
}

static int ready_in(const dp_scope *d, const uint64_t *s, int v)
{
    const olla_dag *dag = d->dag;
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++)
        if (!has_run(d, s, dag->producer[dag->in_list[j]]))
            return 0;
    return 1;
}

/* bytes freed right after v runs when the state s has run before it */
static int64_t freed_by(const dp_scope *d, const uint64_t *s, int v)
{
    const olla_dag *dag = d->dag;
    int64_t freed = d->deadb[v];
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
        int e = dag->in_list[j];
        if (dag->is_output[e])
            continue;
        int all = 1;
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && all; q++) {
            int x = dag->sink_list[q];
            if (x != v && !has_run(d, s, x))
                all = 0;
        }
        if (all)
            freed += dag->bytes[e];
    }
    return freed;
}

/* bytes an in-place write saves at v's step when the state s has run
 * before it: each candidate of v whose input has no reader left but v */
static int64_t inplace_saving(const dp_scope *d, const uint64_t *s, int v)
{
    const olla_dag *dag = d->dag;
    int64_t save = 0;
    for (int k = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && k < dag->inplace_start[v + 1]; k++) {
        int e = dag->inplace_in[k], all = 1;
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && all; q++)
            all = dag->sink_list[q] == v || has_run(d, s, dag->sink_list[q]);
        if (all)
            save += dag->bytes[dag->inplace_out[k]];
    }
    return save;
}

/* States of one search are kept within this many bytes. */
#define DP_MEMORY (256L << 20)

/* Expands state i of layer a into layer b; returns 0 on out of memory.
 * A ready node that frees at least what it allocates and whose step stays
 * within the peak so far can run first in some best continuation (moving
 * it forward only shrinks the steps it jumps over), so it is the only move
 * tried. ready: scratch of ncand entries. */
static int expand(const dp_scope *d, const int *cand, int ncand, layer *a, long i, layer *b, int64_t ub,
                  uint64_t *key, int *ready, long *added)
{
    int W = a->words, nready = 0;
    const uint64_t *s = a->keys + i * W;
    for (int w = 0; w < W; w++) /* the candidates not run yet whose producers have run */
        for (uint64_t open = ~s[w]; open; open &= open - 1) {
            int c = w * 64 + __builtin_ctzll(open);
            if (c >= ncand)
                break;
            int v = cand[c];
            if (!ready_in(d, s, v))
                continue;
            if (a->cur[i] + d->outb[v] <= a->best[i] && freed_by(d, s, v) >= d->outb[v]) {
                ready[0] = c;
                nready = 1;
                goto moves;
            }
            ready[nready++] = c;
        }
moves:
    for (int r = 0; r < nready; r++) {
        int c = ready[r], v = cand[c];
        int64_t live = a->cur[i] + d->outb[v], step_live = live - inplace_saving(d, s, v);
        int64_t best = step_live > a->best[i] ? step_live : a->best[i];
        if (best >= ub)
            continue;
        memcpy(key, s, (size_t)W * sizeof *key);
        olla_bit_set(key, (size_t)c);
        long before = b->n;
        if (!layer_put(b, key, best, live - freed_by(d, s, v), (int)i, v))
            return 0;
        *added += b->n - before;
    }
    return 1;
}

/* Runs the layered search from the nodes before position lo (step: every
 * node's position; bytes allocated init_cur) over
 * the nodes in cand only, ncand layers deep; the peak counts only the steps
 * of cand. loc: n_nodes entries, all -1 (restored on return). The states
 * made are taken off *states_left (the budget of every search sharing it);
 * the search gives up when it would pass it. On OLLA_DP_FOUND out[] holds
 * cand in the best order. */
static olla_status dp_core(const olla_dag *dag, const int64_t *outb, const int64_t *deadb, int *loc,
                           const int *step, int lo, int64_t init_cur, const int *cand, int ncand, int64_t ub,
                           long *states_left, double deadline, int *out, int64_t *peak, int *outcome,
                           olla_error *err)
{
    int W = (int)olla_bits_words((size_t)ncand);
    *outcome = OLLA_DP_GAVE_UP;
    *peak = 0;
    if (ncand == 0) {
        *outcome = OLLA_DP_FOUND;
        return OLLA_OK;
    }
    long mem_states = DP_MEMORY / ((long)W * 8 + 40);
    long max_states = *states_left < mem_states ? *states_left : mem_states;
    layer *L = calloc((size_t)ncand + 1, sizeof *L);
    uint64_t *key = calloc((size_t)W, sizeof *key);
    int *ready = malloc((size_t)ncand * sizeof *ready);
    if (!L || !key || !ready) {
        free(L);
        free(key);
        free(ready);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
    }
    long total = 1;
    for (int c = 0; c < ncand; c++)
        loc[cand[c]] = c;
    dp_scope d = {dag, step, lo, loc, outb, deadb};
    for (int k = 0; k <= ncand; k++)
        L[k].words = W;
    olla_status st = OLLA_OK;
    if (!layer_put(&L[0], key, 0, init_cur, -1, -1)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
        goto done;
    }
    for (int k = 0; k < ncand; k++) {
        layer *a = &L[k], *b = &L[k + 1];
        for (long i = 0; i < a->n; i++) {
            if ((i & 255) == 0 && olla_past(deadline))
                goto done; /* gave up */
            if (!expand(&d, cand, ncand, a, i, b, ub, key, ready, &total)) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
                goto done;
            }
            if (total > max_states)
                goto done; /* gave up */
        }
        /* only parents and nodes of a finished layer are needed again */
        free(a->keys);
        free(a->best);
        free(a->cur);
        free(a->slot);
        a->keys = NULL;
        a->best = a->cur = NULL;
        a->slot = NULL;
        if (b->n == 0) {
            *outcome = OLLA_DP_NONE_BETTER;
            goto done;
        }
    }
    *outcome = OLLA_DP_FOUND;
    *peak = L[ncand].best[0];
    {
        long i = 0;
        for (int k = ncand; k > 0; k--) {
            out[k - 1] = L[k].node[i];
            i = L[k].parent[i];
        }
    }
done:
    *states_left -= total < *states_left ? total : *states_left;
    for (int c = 0; c < ncand; c++)
        loc[cand[c]] = -1;
    for (int k = 0; k <= ncand; k++)
        layer_free(&L[k]);
    free(L);
    free(key);
    free(ready);
    return st;
}

/* What every search over the graph shares: the bytes each node allocates
 * and frees at once, the node -> candidate map, the positions in the order
 * and the bytes crossing each step boundary (allocated before it, needed
 * from it on: cross[t], t = 0 .. n). */
typedef struct {
    int64_t *outb, *deadb, *cross;
    int *loc, *step;
} dp_work;

static void dp_work_free(dp_work *w)
{
    free(w->outb);
    free(w->deadb);
    free(w->loc);
    free(w->step);
    free(w->cross);
}

static int dp_work_init(dp_work *w, const olla_dag *dag)
{
    int n = dag->n_nodes;
    w->outb = calloc((size_t)n + 1, sizeof *w->outb);
    w->deadb = calloc((size_t)n + 1, sizeof *w->deadb);
    w->loc = malloc(((size_t)n + 1) * sizeof *w->loc);
    w->step = calloc((size_t)n + 1, sizeof *w->step);
    w->cross = calloc((size_t)n + 2, sizeof *w->cross);
    if (!w->outb || !w->deadb || !w->loc || !w->step || !w->cross)
        return 0;
    for (int v = 0; v < n; v++)
        w->loc[v] = -1;
    for (int e = 0; e < dag->n_tensors; e++) {
        int p = dag->producer[e];
        w->outb[p] += dag->bytes[e];
        if (!dag->is_output[e] && dag->sink_start[e] == dag->sink_start[e + 1])
            w->deadb[p] += dag->bytes[e];
    }
    return 1;
}

olla_status olla_sched_exact_dp(const olla_dag *dag, int64_t ub, long max_states, double deadline, int *order,
                                int64_t *peak, int *outcome, olla_error *err)
{
    int n = dag->n_nodes;
    int *cand = malloc(((size_t)n + 1) * sizeof *cand);
    dp_work w = {0};
    olla_status st;
    if (!cand || !dp_work_init(&w, dag)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
    } else {
        for (int v = 0; v < n; v++)
            cand[v] = v;
        st = dp_core(dag, w.outb, w.deadb, w.loc, w.step, 0, 0, cand, n, ub, &max_states, deadline, order, peak,
                     outcome, err);
    }
    dp_work_free(&w);
    free(cand);
    return st;
}

/* w->step from order, and w->cross[t]: the bytes of tensors made before
 * step t and needed at or after it (read then or later, or graph outputs);
 * one pass over the tensors */
static void positions(const olla_dag *dag, dp_work *w, const int *order)
{
    int n = dag->n_nodes;
    for (int t = 0; t < n; t++)
        w->step[order[t]] = t;
    memset(w->cross, 0, ((size_t)n + 2) * sizeof *w->cross);
    for (int e = 0; e < dag->n_tensors; e++) {
        int first = w->step[dag->producer[e]], last = first;
        if (dag->is_output[e])
            last = n;
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
            if (w->step[dag->sink_list[q]] > last)
                last = w->step[dag->sink_list[q]];
        if (last > first) { /* crosses the boundaries first + 1 .. last */
            w->cross[first + 1] += dag->bytes[e];
            w->cross[last + 1] -= dag->bytes[e];
        }
    }
    for (int t = 1; t <= n; t++)
        w->cross[t] += w->cross[t - 1];
}

olla_status olla_sched_window_improve(const olla_dag *dag, int *order, int half, long max_states, double deadline,
                                      int64_t *peak_out, olla_error *err)
{
    int n = dag->n_nodes;
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live);
    int *sub = malloc(((size_t)n + 1) * sizeof *sub);
    dp_work w = {0};
    int64_t peak = 0;
    olla_status st = OLLA_OK;
    if (!live || !sub || !dp_work_init(&w, dag))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reordering windows (%d nodes)", n);
    else
        st = olla_dag_peak(dag, order, &peak, live, NULL, err);
    if (st != OLLA_OK || n < 2)
        goto done;
    for (int round = 0; round < 4 * n && max_states > 0; round++) {
        if (olla_past(deadline))
            break;
        int improved = 0;
        positions(dag, &w, order);
        /* every step at the peak, in turn, with windows centred, before and after */
        for (int p = 0; p < n && !improved; p++) {
            if (live[p] != peak)
                continue;
            for (int shape = 0; shape < 3 && !improved && max_states > 0; shape++) {
                int lo = shape == 0 ? p - half : shape == 1 ? p - 2 * half : p;
                int hi = shape == 0 ? p + half : shape == 1 ? p : p + 2 * half;
                if (lo < 0)
                    lo = 0;
                if (hi > n - 1)
                    hi = n - 1;
                int64_t wpk = 0;
                int outcome = OLLA_DP_GAVE_UP;
                if ((st = dp_core(dag, w.outb, w.deadb, w.loc, w.step, lo, w.cross[lo], order + lo, hi - lo + 1, peak,
                                  &max_states, deadline, sub, &wpk, &outcome, err)) != OLLA_OK)
                    goto done;
                if (outcome == OLLA_DP_FOUND) {
                    memcpy(order + lo, sub, (size_t)(hi - lo + 1) * sizeof *sub);
                    improved = 1;
                }
                if (olla_past(deadline))
                    break;
            }
        }
        if (!improved)
            break;
        if ((st = olla_dag_peak(dag, order, &peak, live, NULL, err)) != OLLA_OK)
            goto done;
    }
done:
    dp_work_free(&w);
    free(live);
    free(sub);
    *peak_out = peak;
    return st;
}

olla_status olla_sched_split_solve(const olla_dag *dag, int *order, long max_states, double deadline,
                                   int *n_segments, int *all_solved, olla_error *err)
{
    int n = dag->n_nodes;
    *n_segments = 0;
    *all_solved = 0;
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live);
    int *sub = malloc(((size_t)n + 1) * sizeof *sub);
    unsigned char *cut = calloc((size_t)n + 1, 1);
    dp_work w = {0};
    olla_status st = OLLA_OK;
    if (!live || !sub || !cut || !dp_work_init(&w, dag))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory splitting the ordering problem");
    /* a node ordered with every other node sits at the same step in every
     * order, and the sets run before and after it are fixed */
    if (st == OLLA_OK)
        st = olla_order_cuts(dag, order, cut, err);
    int solved = 1;
    int64_t peak = 0;
    if (st == OLLA_OK)
        st = olla_dag_peak(dag, order, &peak, live, NULL, err);
    /* each segment keeps its nodes, so the bytes crossing into it are the
     * same in the order as it is reordered */
    if (st == OLLA_OK)
        positions(dag, &w, order);
    for (int lo = 0; lo < n && st == OLLA_OK;) {
        if (cut[order[lo]]) {
            lo++;
            continue;
        }
        int hi = lo;
        while (hi + 1 < n && !cut[order[hi + 1]])
            hi++;
        (*n_segments)++;
        int64_t seg_max = 0, pk = 0;
        for (int t = lo; t <= hi; t++)
            if (live[t] > seg_max)
                seg_max = live[t];
        int outcome = OLLA_DP_GAVE_UP;
        if (hi > lo) {
            st = dp_core(dag, w.outb, w.deadb, w.loc, w.step, lo, w.cross[lo], order + lo, hi - lo + 1, seg_max + 1,
                         &max_states, deadline, sub, &pk, &outcome, err);
            if (st != OLLA_OK)
                break;
            if (outcome == OLLA_DP_FOUND)
                memcpy(order + lo, sub, (size_t)(hi - lo + 1) * sizeof *sub);
            else
                solved = 0;
        }
        lo = hi + 1;
    }
    *all_solved = st == OLLA_OK && solved;
    dp_work_free(&w);
    free(live);
    free(sub);
    free(cut);
    return st;
}
