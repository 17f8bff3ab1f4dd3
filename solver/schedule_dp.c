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
#include "util/olla_arith.h"
#include "util/olla_bits.h"
#include "util/olla_grow.h"

/* Hash slots per state a layer can hold (a load of at most a quarter). */
#define DP_SLOTS_PER_STATE 4
/* The bytes of a state besides its key, as the memory limit counts them. */
#define DP_STATE_BYTES 40
/* The deadline is read once every this many states expanded (a power of two). */
#define DP_DEADLINE_POLL 256
/* The windows reordered around the peak: at most this many rounds per node. */
#define WINDOW_ROUNDS_PER_NODE 4
/* The windows tried at a step p at the peak, h being the half-width:
 * [p - h, p + h], [p - 2h, p] and [p, p + 2h]. */
enum { WINDOW_CENTRED, WINDOW_BEFORE, WINDOW_AFTER, WINDOW_SHAPES };

typedef struct {
    int words;
    long n;
    size_t cap; /* of keys (words each), best, cur, parent and node */
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

/* Room for one more state in each array of l (they grow alike), and the
 * hash table rebuilt at DP_SLOTS_PER_STATE slots per state of the new
 * capacity; 0 when out of memory. */
static int layer_grow(layer *l)
{
    size_t need = (size_t)l->n + 1, cap = l->cap, cap_best = cap, cap_cur = cap, cap_parent = cap, cap_node = cap;
    uint64_t *k = olla_grow(l->keys, &cap, need, (size_t)l->words * sizeof *k);
    if (k)
        l->keys = k;
    int64_t *b = k ? olla_grow(l->best, &cap_best, need, sizeof *b) : NULL;
    if (b)
        l->best = b;
    int64_t *c = b ? olla_grow(l->cur, &cap_cur, need, sizeof *c) : NULL;
    if (c)
        l->cur = c;
    int *p = c ? olla_grow(l->parent, &cap_parent, need, sizeof *p) : NULL;
    if (p)
        l->parent = p;
    int *nd = p ? olla_grow(l->node, &cap_node, need, sizeof *nd) : NULL;
    if (!nd)
        return 0;
    l->node = nd;
    l->cap = cap; /* the five grew alike */
    long hc = DP_SLOTS_PER_STATE * (long)cap;
    long *s = malloc((size_t)hc * sizeof *s);
    if (!s)
        return 0;
    for (long i = 0; i < hc; i++)
        s[i] = -1;
    for (long i = 0; i < l->n; i++) {
        long h = (long)(olla_hash_words(l->keys + i * l->words, (size_t)l->words) % (uint64_t)hc);
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
    if ((size_t)l->n + 1 > l->cap && !layer_grow(l))
        return 0;
    long h = (long)(olla_hash_words(key, (size_t)l->words) % (uint64_t)l->hcap);
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
    int *loc; /* n_nodes: index in cand, -1 for nodes outside it (each search sets and restores it) */
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

/* One exact search (the state dp_core and its phases share): the problem
 * (the scope, the candidates searched, the bytes allocated before them, the
 * bound), the budget every search of one call shares, the layers of states,
 * and the answer. */
typedef struct dp_search {
    dp_scope d;
    const int *cand; /* the nodes searched, ncand of them */
    int ncand;
    int64_t init_cur; /* bytes allocated before the search */
    int64_t ub;       /* only peaks below ub are looked for */
    olla_limit *lim;  /* budget: the states left to every search sharing it; and the deadline */
    long max_states;  /* the most states this search may make (its budget, its memory) */
    long total;       /* states made so far */
    int words;        /* of a state's key */
    layer *L;         /* ncand + 1 layers: L[k] the states after k candidates ran */
    uint64_t *key;    /* scratch: one key */
    int *ready;       /* scratch: ncand entries */
    int64_t peak;     /* on OLLA_DP_FOUND: the best peak */
    int outcome;      /* OLLA_DP_* */
} dp_search;

/* Expands state i of layer k into layer k + 1; returns 0 on out of memory.
 * A ready node that frees at least what it allocates and whose step stays
 * within the peak so far can run first in some best continuation (moving
 * it forward only shrinks the steps it jumps over), so it is the only move
 * tried. */
static int expand(dp_search *x, int k, long i)
{
    const dp_scope *d = &x->d;
    const int *cand = x->cand;
    layer *a = &x->L[k], *b = &x->L[k + 1];
    int W = a->words, nready = 0, *ready = x->ready;
    uint64_t *key = x->key;
    const uint64_t *s = a->keys + i * W;
    for (int w = 0; w < W; w++) /* the candidates not run yet whose producers have run */
        for (uint64_t open = ~s[w]; open; open &= open - 1) {
            int c = (int)olla_bit_lowest((size_t)w, open);
            if (c >= x->ncand)
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
        if (best >= x->ub)
            continue;
        memcpy(key, s, (size_t)W * sizeof *key);
        olla_bit_set(key, (size_t)c);
        long before = b->n;
        if (!layer_put(b, key, best, live - freed_by(d, s, v), (int)i, v))
            return 0;
        x->total += b->n - before;
    }
    return 1;
}

/* The layers, the scratch and the first state (nothing run, init_cur
 * bytes allocated); the candidates get their places in d.loc. 0 when out
 * of memory (x->total stays 0 when nothing was allocated). */
static int dp_tables_new(dp_search *x)
{
    int W = (int)olla_bits_words((size_t)x->ncand);
    long mem_states = DP_MEMORY / ((long)W * (long)sizeof(uint64_t) + DP_STATE_BYTES);
    x->max_states = x->lim->budget < mem_states ? x->lim->budget : mem_states;
    x->words = W;
    x->L = calloc((size_t)x->ncand + 1, sizeof *x->L);
    x->key = calloc((size_t)W, sizeof *x->key);
    x->ready = malloc((size_t)x->ncand * sizeof *x->ready);
    if (!x->L || !x->key || !x->ready)
        return 0;
    x->total = 1;
    for (int c = 0; c < x->ncand; c++)
        x->d.loc[x->cand[c]] = c;
    for (int k = 0; k <= x->ncand; k++)
        x->L[k].words = W;
    return layer_put(&x->L[0], x->key, 0, x->init_cur, -1, -1);
}

/* Takes the states made off the shared budget, gives d.loc back its -1s
 * and frees the tables. */
static void dp_tables_free(dp_search *x)
{
    long *left = &x->lim->budget;
    *left -= x->total < *left ? x->total : *left;
    for (int c = 0; c < x->ncand; c++)
        x->d.loc[x->cand[c]] = -1;
    for (int k = 0; x->L && k <= x->ncand; k++)
        layer_free(&x->L[k]);
    free(x->L);
    free(x->key);
    free(x->ready);
    x->L = NULL;
    x->key = NULL;
    x->ready = NULL;
}

/* Fills the layers one after another until the last (x->outcome
 * OLLA_DP_FOUND, x->peak its best), an empty one (OLLA_DP_NONE_BETTER), or
 * the budget or the deadline (OLLA_DP_GAVE_UP); 0 when out of memory. */
static int dp_layers(dp_search *x)
{
    for (int k = 0; k < x->ncand; k++) {
        layer *a = &x->L[k];
        for (long i = 0; i < a->n; i++) {
            if ((i & (DP_DEADLINE_POLL - 1)) == 0 && olla_past(x->lim->deadline))
                return 1; /* gave up */
            if (!expand(x, k, i))
                return 0;
            if (x->total > x->max_states)
                return 1; /* gave up */
        }
        /* only parents and nodes of a finished layer are needed again */
        free(a->keys);
        free(a->best);
        free(a->cur);
        free(a->slot);
        a->keys = NULL;
        a->best = a->cur = NULL;
        a->slot = NULL;
        if (x->L[k + 1].n == 0) {
            x->outcome = OLLA_DP_NONE_BETTER;
            return 1;
        }
    }
    x->outcome = OLLA_DP_FOUND;
    x->peak = x->L[x->ncand].best[0];
    return 1;
}

/* The best order into out[], from the last layer's state back through the
 * parents. */
static void dp_trace(const dp_search *x, int *out)
{
    long i = 0;
    for (int k = x->ncand; k > 0; k--) {
        out[k - 1] = x->L[k].node[i];
        i = x->L[k].parent[i];
    }
}

/* Runs the layered search x describes: from the nodes before position lo
 * (d.step: every node's position; bytes allocated init_cur) over the nodes
 * in cand only, ncand layers deep; the peak counts only the steps of cand.
 * d.loc: n_nodes entries, all -1 (restored on return). The states made are
 * taken off lim->budget (the budget of every search sharing it); the search
 * gives up when it would pass it. On OLLA_DP_FOUND out[] holds cand in the
 * best order. */
static olla_status dp_core(dp_search *x, int *out, olla_error *err)
{
    x->outcome = OLLA_DP_GAVE_UP;
    x->peak = 0;
    x->total = 0;
    if (x->ncand == 0) {
        x->outcome = OLLA_DP_FOUND;
        return OLLA_OK;
    }
    olla_status st = OLLA_OK;
    if (!dp_tables_new(x) || !dp_layers(x))
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
    else if (x->outcome == OLLA_DP_FOUND)
        dp_trace(x, out);
    dp_tables_free(x);
    return st;
}

/* What every search over the graph shares: the bytes each node allocates
 * and frees at once, the node -> candidate map, the positions in the order
 * and the bytes crossing each step boundary (allocated before it, needed
 * from it on: cross[t], t = 0 .. n). */
typedef struct dp_work {
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

/* The search over the nodes cand[0 .. ncand) of the order whose positions
 * and bytes w holds, from its position lo on, for peaks below ub. */
static dp_search search_of(const olla_dag *dag, dp_work *w, int lo, const int *cand, int ncand, int64_t ub,
                           olla_limit *lim)
{
    return (dp_search){.d = {dag, w->step, lo, w->loc, w->outb, w->deadb},
                       .cand = cand,
                       .ncand = ncand,
                       .init_cur = w->cross[lo],
                       .ub = ub,
                       .lim = lim};
}

olla_status olla_sched_exact_dp(const olla_dag *dag, int64_t ub, olla_limit lim, int *order, int64_t *peak,
                                int *outcome, olla_error *err)
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
        dp_search x = search_of(dag, &w, 0, cand, n, ub, &lim);
        st = dp_core(&x, order, err);
        *peak = x.peak;
        *outcome = x.outcome;
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
    olla_limit lim = {max_states, deadline};
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
    for (int round = 0; round < WINDOW_ROUNDS_PER_NODE * n && lim.budget > 0; round++) {
        if (olla_past(deadline))
            break;
        int improved = 0;
        positions(dag, &w, order);
        /* every step at the peak, in turn, with windows centred, before and after */
        for (int p = 0; p < n && !improved; p++) {
            if (live[p] != peak)
                continue;
            for (int shape = WINDOW_CENTRED; shape < WINDOW_SHAPES && !improved && lim.budget > 0; shape++) {
                int lo = shape == WINDOW_CENTRED ? p - half : shape == WINDOW_BEFORE ? p - 2 * half : p;
                int hi = shape == WINDOW_CENTRED ? p + half : shape == WINDOW_BEFORE ? p : p + 2 * half;
                if (lo < 0)
                    lo = 0;
                if (hi > n - 1)
                    hi = n - 1;
                dp_search x = search_of(dag, &w, lo, order + lo, hi - lo + 1, peak, &lim);
                if ((st = dp_core(&x, sub, err)) != OLLA_OK)
                    goto done;
                if (x.outcome == OLLA_DP_FOUND) {
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
    olla_limit lim = {max_states, deadline};
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
        int64_t seg_max = 0;
        for (int t = lo; t <= hi; t++)
            if (live[t] > seg_max)
                seg_max = live[t];
        if (hi > lo) {
            dp_search x = search_of(dag, &w, lo, order + lo, hi - lo + 1, seg_max + 1, &lim);
            st = dp_core(&x, sub, err);
            if (st != OLLA_OK)
                break;
            if (x.outcome == OLLA_DP_FOUND)
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
