#include "plan/olla_verify.h"

#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_graph_dag.h"

typedef struct {
    int64_t lo, hi; /* [lo, hi) */
    int last;       /* last live step */
    int tensor;
} live_range;

typedef struct {
    int first, tensor;
} by_first;

static int cmp_first(const void *a, const void *b)
{
    const by_first *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

olla_status olla_plan_verify(const olla_graph *g, const int *order, const int64_t *offset, const int64_t *bytes,
                             int64_t arena_bytes, int64_t alignment, olla_error *err)
{
    const char *file = g->model->path;
    if (alignment < 1)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: plan alignment %lld is not positive", file,
                              (long long)alignment);
    olla_dag dag;
    int *gt = NULL;
    olla_status st = olla_graph_dag(g, 1, &dag, &gt, err);
    if (st != OLLA_OK)
        return st;
    int nt = dag.n_tensors;
    int *first = malloc(((size_t)nt + 1) * sizeof(int));
    int *last = malloc(((size_t)nt + 1) * sizeof(int));
    by_first *idx = malloc(((size_t)nt + 1) * sizeof *idx);
    live_range *act = malloc(((size_t)nt + 1) * sizeof *act);
    if (!first || !last || !idx || !act) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
        goto done;
    }
    if (!olla_dag_is_topological(&dag, order)) {
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the nodes are not in a valid topological order", file);
        goto done;
    }
    /* every planned tensor is in the plan with its true size, and only those */
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        int planned = ten->producer >= 0 && ten->bytes >= 0;
        if (!planned && offset[t] >= 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the plan lists '%s', which is not a planned tensor", file,
                                ten->name);
            goto done;
        }
        if (!planned)
            continue;
        if (offset[t] < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: planned tensor '%s' is missing from the plan", file,
                                ten->name);
            goto done;
        }
        int64_t want = olla_align_up(ten->bytes, alignment);
        if (bytes[t] != want) {
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s: the plan gives '%s' %lld bytes, but it needs %lld (%lld rounded up to %lld)", file,
                                ten->name, (long long)bytes[t], (long long)want, (long long)ten->bytes,
                                (long long)alignment);
            goto done;
        }
        if (offset[t] % alignment != 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: offset %lld of '%s' is not a multiple of the alignment %lld",
                                file, (long long)offset[t], ten->name, (long long)alignment);
            goto done;
        }
        if (offset[t] > arena_bytes || bytes[t] > arena_bytes - offset[t]) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s: '%s' at offset %lld + %lld bytes lies beyond the arena of %lld",
                                file, ten->name, (long long)offset[t], (long long)bytes[t], (long long)arena_bytes);
            goto done;
        }
    }
    /* no two tensors live at the same step overlap: sweep steps, keeping the
     * live ranges sorted by offset (disjoint by construction) */
    if ((st = olla_dag_lifetimes(&dag, order, first, last, err)) != OLLA_OK)
        goto done;
    int n = 0;
    for (int e = 0; e < nt; e++)
        if (offset[gt[e]] >= 0 && bytes[gt[e]] > 0) {
            idx[n].first = first[e];
            idx[n++].tensor = e;
        }
    qsort(idx, (size_t)n, sizeof *idx, cmp_first);
    int na = 0;
    for (int k = 0; k < n; k++) {
        int e = idx[k].tensor, t = gt[e];
        int64_t lo = offset[t], hi = offset[t] + bytes[t];
        int step = first[e];
        /* position of the first range with lo' > lo */
        int L = 0, R = na;
        while (L < R) {
            int mid = (L + R) / 2;
            if (act[mid].lo <= lo)
                L = mid + 1;
            else
                R = mid;
        }
        int pos = L;
        /* predecessor */
        while (pos > 0 && act[pos - 1].hi > lo) {
            if (act[pos - 1].last < step) {
                memmove(&act[pos - 1], &act[pos], (size_t)(na - pos) * sizeof *act);
                na--;
                pos--;
                continue;
            }
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s: '%s' [%lld, %lld) overlaps '%s' [%lld, %lld) while both are live at step %d", file,
                                g->tensors[t].name, (long long)lo, (long long)hi, g->tensors[act[pos - 1].tensor].name,
                                (long long)act[pos - 1].lo, (long long)act[pos - 1].hi, step);
            goto done;
        }
        /* successors */
        while (pos < na && act[pos].lo < hi) {
            if (act[pos].last < step) {
                memmove(&act[pos], &act[pos + 1], (size_t)(na - pos - 1) * sizeof *act);
                na--;
                continue;
            }
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s: '%s' [%lld, %lld) overlaps '%s' [%lld, %lld) while both are live at step %d", file,
                                g->tensors[t].name, (long long)lo, (long long)hi, g->tensors[act[pos].tensor].name,
                                (long long)act[pos].lo, (long long)act[pos].hi, step);
            goto done;
        }
        memmove(&act[pos + 1], &act[pos], (size_t)(na - pos) * sizeof *act);
        act[pos].lo = lo;
        act[pos].hi = hi;
        act[pos].last = last[e];
        act[pos].tensor = t;
        na++;
    }
    st = OLLA_OK;
done:
    free(first);
    free(last);
    free(idx);
    free(act);
    free(gt);
    olla_dag_free(&dag);
    return st;
}
