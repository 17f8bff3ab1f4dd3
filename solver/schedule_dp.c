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

static uint64_t hash_key(const uint64_t *k, int w)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < w; i++) {
        h ^= k[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
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

#define HAS(k, v) (((k)[(v) >> 6] >> ((v)&63)) & 1u)

static int ready_in(const olla_dag *dag, const uint64_t *s, int v)
{
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++)
        if (!HAS(s, dag->producer[dag->in_list[j]]))
            return 0;
    return 1;
}

/* bytes freed right after v runs when the set s has run before it */
static int64_t freed_by(const olla_dag *dag, const uint64_t *s, int v, const int64_t *deadb)
{
    int64_t freed = deadb[v];
    for (int j = dag->in_start[v]; j < dag->in_start[v + 1]; j++) {
        int e = dag->in_list[j];
        if (dag->is_output[e])
            continue;
        int all = 1;
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && all; q++) {
            int x = dag->sink_list[q];
            if (x != v && !HAS(s, x))
                all = 0;
        }
        if (all)
            freed += dag->bytes[e];
    }
    return freed;
}

/* bytes an in-place write saves at v's step when the set s has run before
 * it: each candidate of v whose input has no reader left but v */
static int64_t inplace_saving(const olla_dag *dag, const uint64_t *s, int v)
{
    int64_t save = 0;
    for (int k = dag->n_inplace ? dag->inplace_start[v] : 0; dag->n_inplace && k < dag->inplace_start[v + 1]; k++) {
        int e = dag->inplace_in[k], all = 1;
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1] && all; q++)
            all = dag->sink_list[q] == v || HAS(s, dag->sink_list[q]);
        if (all)
            save += dag->bytes[dag->inplace_out[k]];
    }
    return save;
}

/* Runs the layered search from the set init (bytes allocated init_cur) over
 * the nodes in cand only, ncand layers deep; the peak counts only the steps
 * of cand. On OLLA_DP_FOUND out[] holds cand in the best order. */
static olla_status dp_core(const olla_dag *dag, const uint64_t *init, int64_t init_cur, const int *cand, int ncand,
                           int64_t ub, long max_states, double deadline, int *out, int64_t *peak, int *outcome,
                           olla_error *err)
{
    int n = dag->n_nodes, W = (n + 63) / 64;
    *outcome = OLLA_DP_GAVE_UP;
    *peak = 0;
    if (ncand == 0) {
        *outcome = OLLA_DP_FOUND;
        return OLLA_OK;
    }
    layer *L = calloc((size_t)ncand + 1, sizeof *L);
    uint64_t *key = malloc((size_t)W * sizeof *key);
    int64_t *outb = calloc((size_t)n, sizeof *outb), *deadb = calloc((size_t)n, sizeof *deadb);
    if (!L || !key || !outb || !deadb) {
        free(L);
        free(key);
        free(outb);
        free(deadb);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
    }
    for (int e = 0; e < dag->n_tensors; e++) {
        int p = dag->producer[e];
        outb[p] += dag->bytes[e];
        if (!dag->is_output[e] && dag->sink_start[e] == dag->sink_start[e + 1])
            deadb[p] += dag->bytes[e];
    }
    for (int k = 0; k <= ncand; k++)
        L[k].words = W;
    olla_status st = OLLA_OK;
    memcpy(key, init, (size_t)W * sizeof *key);
    if (!layer_put(&L[0], key, 0, init_cur, -1, -1)) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
        goto done;
    }
    long total = 1;
    for (int k = 0; k < ncand; k++) {
        layer *a = &L[k], *b = &L[k + 1];
        for (long i = 0; i < a->n; i++) {
            const uint64_t *s = a->keys + i * W;
            if ((i & 255) == 0 && olla_past(deadline))
                goto done; /* gave up */
            /* A ready node that frees at least what it allocates and whose
             * step stays within the peak so far can run first in some best
             * continuation (moving it forward only shrinks the steps it
             * jumps over), so it is the only move tried. */
            int forced = -1;
            for (int c = 0; c < ncand && forced < 0; c++) {
                int v = cand[c];
                if (HAS(s, v) || !ready_in(dag, s, v))
                    continue;
                if (a->cur[i] + outb[v] <= a->best[i] && freed_by(dag, s, v, deadb) >= outb[v])
                    forced = c;
            }
            for (int c = forced < 0 ? 0 : forced; c < (forced < 0 ? ncand : forced + 1); c++) {
                int v = cand[c];
                if (HAS(s, v))
                    continue;
                if (forced < 0 && (HAS(s, v) || !ready_in(dag, s, v)))
                    continue;
                int64_t live = a->cur[i] + outb[v], step_live = live - inplace_saving(dag, s, v);
                int64_t best = step_live > a->best[i] ? step_live : a->best[i];
                if (best >= ub)
                    continue;
                int64_t freed = freed_by(dag, s, v, deadb);
                memcpy(key, s, (size_t)W * sizeof *key);
                key[v >> 6] |= (uint64_t)1 << (v & 63);
                long before = b->n;
                if (!layer_put(b, key, best, live - freed, (int)i, v)) {
                    st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
                    goto done;
                }
                total += b->n - before;
                if (total > max_states)
                    goto done; /* gave up */

            }
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
    for (int k = 0; k <= ncand; k++)
        layer_free(&L[k]);
    free(L);
    free(key);
    free(outb);
    free(deadb);
    return st;
}

olla_status olla_sched_exact_dp(const olla_dag *dag, int64_t ub, long max_states, double deadline, int *order,
                                int64_t *peak, int *outcome, olla_error *err)
{
    int n = dag->n_nodes, W = (n + 63) / 64;
    uint64_t *init = calloc((size_t)W + 1, sizeof *init);
    int *cand = malloc(((size_t)n + 1) * sizeof *cand);
    if (!init || !cand) {
        free(init);
        free(cand);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the exact scheduler");
    }
    for (int v = 0; v < n; v++)
        cand[v] = v;
    olla_status st = dp_core(dag, init, 0, cand, n, ub, max_states, deadline, order, peak, outcome, err);
    free(init);
    free(cand);
    return st;
}

/* bytes allocated after the first `len` nodes of order ran */
static int64_t allocated_after(const olla_dag *dag, const int *order, int len, const uint64_t *set)
{
    int64_t cur = 0;
    for (int e = 0; e < dag->n_tensors; e++) {
        if (!HAS(set, dag->producer[e]))
            continue;
        if (dag->is_output[e]) {
            cur += dag->bytes[e];
            continue;
        }
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
            if (!HAS(set, dag->sink_list[q])) {
                cur += dag->bytes[e];
                break;
            }
    }
    (void)order;
    (void)len;
    return cur;
}

olla_status olla_sched_window_improve(const olla_dag *dag, int *order, int half, long max_states, double deadline,
                                      int64_t *peak_out, olla_error *err)
{
    int n = dag->n_nodes, W = (n + 63) / 64;
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live);
    uint64_t *set = calloc((size_t)W + 1, sizeof *set);
    int *sub = malloc(((size_t)n + 1) * sizeof *sub);
    int64_t peak = 0;
    olla_status st = OLLA_OK;
    if (!live || !set || !sub)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reordering windows (%d nodes)", n);
    else
        st = olla_dag_peak(dag, order, &peak, live, NULL, err);
    if (st != OLLA_OK || n < 2)
        goto done;
    for (int round = 0; round < 4 * n; round++) {
        if (olla_past(deadline))
            break;
        int improved = 0;
        /* every step at the peak, in turn, with windows centred, before and after */
        for (int p = 0; p < n && !improved; p++) {
            if (live[p] != peak)
                continue;
            for (int shape = 0; shape < 3 && !improved; shape++) {
                int lo = shape == 0 ? p - half : shape == 1 ? p - 2 * half : p;
                int hi = shape == 0 ? p + half : shape == 1 ? p : p + 2 * half;
                if (lo < 0)
                    lo = 0;
                if (hi > n - 1)
                    hi = n - 1;
                memset(set, 0, (size_t)W * sizeof *set);
                for (int t = 0; t < lo; t++)
                    set[order[t] >> 6] |= (uint64_t)1 << (order[t] & 63);
                int64_t cur = allocated_after(dag, order, lo, set);
                int64_t wpk = 0;
                int outcome = OLLA_DP_GAVE_UP;
                if ((st = dp_core(dag, set, cur, order + lo, hi - lo + 1, peak, max_states, deadline, sub, &wpk,
                                  &outcome, err)) != OLLA_OK)
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
    free(live);
    free(set);
    free(sub);
    *peak_out = peak;
    return st;
}

olla_status olla_sched_split_solve(const olla_dag *dag, const olla_reach *r, int *order, long max_states,
                                   double deadline, int *n_segments, int *all_solved, olla_error *err)
{
    int n = dag->n_nodes, W = (n + 63) / 64;
    *n_segments = 0;
    *all_solved = 0;
    int64_t *live = malloc(((size_t)n + 1) * sizeof *live);
    uint64_t *set = calloc((size_t)W + 1, sizeof *set);
    int *sub = malloc(((size_t)n + 1) * sizeof *sub);
    unsigned char *cut = calloc((size_t)n + 1, 1);
    if (!live || !set || !sub || !cut) {
        free(live);
        free(set);
        free(sub);
        free(cut);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory splitting the ordering problem");
    }
    /* a node ordered with every other node sits at the same step in every
     * order, and the sets run before and after it are fixed */
    for (int v = 0; v < n; v++)
        cut[v] = r->n_anc[v] + r->n_desc[v] == n - 1;
    int solved = 1;
    int64_t peak = 0;
    olla_status st = olla_dag_peak(dag, order, &peak, live, NULL, err);
    for (int lo = 0; lo < n && st == OLLA_OK;) {
        if (cut[order[lo]]) {
            set[order[lo] >> 6] |= (uint64_t)1 << (order[lo] & 63);
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
        int64_t cur = allocated_after(dag, order, lo, set), pk = 0;
        int outcome = OLLA_DP_GAVE_UP;
        if (hi > lo) {
            st = dp_core(dag, set, cur, order + lo, hi - lo + 1, seg_max + 1, max_states, deadline, sub, &pk,
                         &outcome, err);
            if (st != OLLA_OK)
                break;
            if (outcome == OLLA_DP_FOUND)
                memcpy(order + lo, sub, (size_t)(hi - lo + 1) * sizeof *sub);
            else
                solved = 0;
        }
        for (int t = lo; t <= hi; t++)
            set[order[t] >> 6] |= (uint64_t)1 << (order[t] & 63);
        lo = hi + 1;
    }
    *all_solved = st == OLLA_OK && solved;
    free(live);
    free(set);
    free(sub);
    free(cut);
    return st;
}
