/* olla-onnx: ordering and placement as the pipeline runs them. */
#include "lib/olla_stages.h"

#include <stdlib.h>
#include <string.h>

olla_status olla_stage_order(const olla_dag *dag, const int *input_order, const olla_options *opt, int *order,
                             olla_order_result *res, olla_error *err)
{
    memcpy(order, input_order, (size_t)dag->n_nodes * sizeof *order);
    res->peak_bytes = olla_dag_peak(dag, order, NULL, NULL);
    res->lower_bound_bytes = -1;
    res->status = "kept";
    return OLLA_OK;
}

typedef struct {
    int64_t size;
    int first, last, tensor;
} place_item;

static int cmp_size_desc(const void *a, const void *b)
{
    const place_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->tensor - y->tensor;
}

/* Best-fit by decreasing size: each tensor goes at the lowest offset where it
 * fits between the tensors already placed that are live with it. */
olla_status olla_stage_place(const olla_place_input *in, int64_t *offset, olla_place_outcome *out, olla_error *err)
{
    const olla_dag *dag = in->dag;
    int nt = dag->n_tensors;
    place_item *items = malloc(((size_t)nt + 1) * sizeof *items);
    int *placed = malloc(((size_t)nt + 1) * sizeof *placed);
    if (!items || !placed) {
        free(items);
        free(placed);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory placing tensors");
    }
    int n = 0;
    for (int e = 0; e < nt; e++) {
        offset[e] = 0;
        if (dag->bytes[e] > 0) {
            items[n].size = dag->bytes[e];
            items[n].first = in->first[e];
            items[n].last = in->last[e];
            items[n].tensor = e;
            n++;
        }
    }
    qsort(items, (size_t)n, sizeof *items, cmp_size_desc);
    int64_t arena = 0;
    for (int i = 0; i < n; i++) {
        /* conflicting placed items, sorted by offset (insertion sort: small n) */
        int nc = 0;
        for (int j = 0; j < i; j++)
            if (items[j].first <= items[i].last && items[i].first <= items[j].last) {
                int k = nc++;
                while (k > 0 && offset[items[placed[k - 1]].tensor] > offset[items[j].tensor]) {
                    placed[k] = placed[k - 1];
                    k--;
                }
                placed[k] = j;
            }
        int64_t at = 0;
        for (int k = 0; k < nc; k++) {
            int64_t lo = offset[items[placed[k]].tensor], hi = lo + items[placed[k]].size;
            if (lo >= at + items[i].size)
                break;
            if (hi > at)
                at = hi;
        }
        offset[items[i].tensor] = at;
        if (at + items[i].size > arena)
            arena = at + items[i].size;
    }
    free(items);
    free(placed);
    out->arena_bytes = arena;
    out->status = "heuristic";
    return OLLA_OK;
}
