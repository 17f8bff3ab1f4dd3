/* olla-onnx: the early-update edges added so far, by the ranks of their
 * target's runs (for analysis_updates.c).
 *
 * Z grows by stabbing: for a rank r of Z, every added edge whose target's
 * runs hold r brings its update into Z. The edges with an exact target
 * sit in a tree over lo (a list per lo, by hi from the highest), each tree
 * node keeping the highest hi of the edges still unused below it, so that
 * a stab costs a logarithm per edge it returns. Edges used up in one update
 * are restored before the next. The few edges whose target is not exact
 * (more runs than kept) are asked one by one. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/updates_internal.h"
#include "util/olla_grow.h"

/* frees the index */
void olla_upd_index_free(olla_upd_index *x)
{
    for (int i = 0; x->list && i < x->size; i++)
        free(x->list[i]);
    free(x->list);
    free(x->top);
    free(x->len);
    free(x->first);
    free(x->cap);
    free(x->entry_edge);
    free(x->entry_hi);
    free(x->touched);
    free(x->loose);
}

/* an empty index for n_ranks ranks and up to n_edges edges (0: out of memory) */
int olla_upd_index_init(olla_upd_index *x, int n_ranks, int n_edges)
{
    memset(x, 0, sizeof *x);
    x->size = 1;
    while (x->size < n_ranks)
        x->size *= 2;
    size_t sz = (size_t)x->size, ne = (size_t)n_edges + 1, nent = ne * OLLA_UPD_RUNS;
    x->top = malloc(2 * sz * sizeof(int));
    x->list = calloc(sz, sizeof(int *));
    x->len = calloc(sz, sizeof(int));
    x->first = calloc(sz, sizeof(int));
    x->cap = calloc(sz, sizeof(size_t));
    x->entry_edge = malloc(nent * sizeof(int));
    x->entry_hi = malloc(nent * sizeof(int));
    x->touched = malloc(sz * sizeof(int));
    x->loose = malloc(ne * sizeof(int));
    if (!x->top || !x->list || !x->len || !x->first || !x->cap || !x->entry_edge || !x->entry_hi || !x->touched || !x->loose)
        return 0;
    for (size_t i = 0; i < 2 * sz; i++)
        x->top[i] = -1;
    return 1;
}

/* the tree above leaf lo, from its list */
static void index_fix(olla_upd_index *x, int lo)
{
    int i = x->size + lo;
    x->top[i] = x->first[lo] < x->len[lo] ? x->entry_hi[x->list[lo][x->first[lo]]] : -1;
    for (i /= 2; i >= 1; i /= 2)
        x->top[i] = x->top[2 * i] > x->top[2 * i + 1] ? x->top[2 * i] : x->top[2 * i + 1];
}

/* edge k, whose target reaches every rank of [lo, hi] (0: out of memory) */
int olla_upd_index_add(olla_upd_index *x, int k, int lo, int hi)
{
    int id = x->n_entries++;
    x->entry_edge[id] = k;
    x->entry_hi[id] = hi;
    int *l = olla_grow(x->list[lo], &x->cap[lo], (size_t)x->len[lo] + 1, sizeof(int));
    if (!l)
        return 0;
    x->list[lo] = l;
    int j = x->len[lo]++;
    for (; j > 0 && x->entry_hi[l[j - 1]] < hi; j--)
        l[j] = l[j - 1];
    l[j] = id;
    index_fix(x, lo);
    return 1;
}

/* an unused edge whose target's range holds rank r, now used (-1: none) */
int olla_upd_index_take(olla_upd_index *x, int r)
{
    int i = 1, lo = 0, hi = x->size - 1; /* the leftmost leaf at or below r with top >= r */
    if (x->top[1] < r)
        return -1;
    while (i < x->size) {
        int mid = lo + (hi - lo) / 2;
        if (x->top[2 * i] >= r)
            i = 2 * i, hi = mid;
        else if (mid + 1 <= r && x->top[2 * i + 1] >= r)
            i = 2 * i + 1, lo = mid + 1;
        else
            return -1;
    }
    if (lo > r)
        return -1;
    int k = x->entry_edge[x->list[lo][x->first[lo]]];
    if (x->first[lo]++ == 0)
        x->touched[x->n_touched++] = lo;
    index_fix(x, lo);
    return k;
}

/* every edge unused again */
void olla_upd_index_restore(olla_upd_index *x)
{
    for (int i = 0; i < x->n_touched; i++) {
        x->first[x->touched[i]] = 0;
        index_fix(x, x->touched[i]);
    }
    x->n_touched = 0;
}
