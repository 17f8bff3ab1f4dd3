/* olla-onnx: ordering and placement as the pipeline runs them. */
#include "pipeline/olla_stages.h"

#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "solver/olla_schedule.h"

/* Share of the time limit the ordering may use; placement gets the rest. */
#define ORDER_TIME_SHARE 0.6

olla_status olla_stage_order(const olla_dag *dag, const int *input_order, const olla_options *opt, int *order,
                             olla_order_result *res, olla_error *err)
{
    if (opt->keep_order) {
        memcpy(order, input_order, (size_t)dag->n_nodes * sizeof *order);
        res->heuristic_peak_bytes = res->peak_bytes = 0;
        res->lower_bound_bytes = -1;
        res->status = "kept";
        olla_status st = olla_dag_peak(dag, order, &res->peak_bytes, NULL, NULL, err);
        res->heuristic_peak_bytes = res->peak_bytes;
        return st;
    }
    olla_schedule_options so;
    memset(&so, 0, sizeof so);
    so.time_limit = opt->time_limit > 0 ? opt->time_limit * ORDER_TIME_SHARE : 0;
    so.use_ilp = 1;
    so.verbosity = opt->verbosity;
    olla_schedule_result sr;
    olla_status st = olla_schedule(dag, input_order, &so, order, &sr, err);
    if (st != OLLA_OK)
        return st;
    res->peak_bytes = sr.peak_bytes;
    res->heuristic_peak_bytes = sr.heuristic_peak;
    res->lower_bound_bytes = sr.lower_bound_bytes > 0 ? sr.lower_bound_bytes : -1;
    res->status = sr.status;
    return OLLA_OK;
}

typedef struct {
    int first, tensor;
} alloc_key;

static int by_first_step(const void *a, const void *b)
{
    const alloc_key *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

olla_status olla_stage_place(const olla_place_input *in, int64_t *offset, olla_place_outcome *out, olla_error *err)
{
    const olla_dag *dag = in->dag;
    int nt = dag->n_tensors;
    olla_buffer *bufs = malloc(((size_t)nt + 1) * sizeof *bufs);
    int *which = malloc(((size_t)nt + 1) * sizeof *which);
    if (!bufs || !which) {
        free(bufs);
        free(which);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory placing tensors");
    }
    /* buffers in allocation order (by first step, then tensor), the order a
     * runtime requests them and the order --lifetimes writes */
    alloc_key *keys = malloc(((size_t)nt + 1) * sizeof *keys);
    if (!keys) {
        free(bufs);
        free(which);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory placing tensors");
    }
    size_t n = 0;
    for (int e = 0; e < nt; e++) {
        offset[e] = 0;
        if (dag->bytes[e] > 0) {
            keys[n].first = in->first[e];
            keys[n++].tensor = e;
        }
    }
    qsort(keys, n, sizeof *keys, by_first_step);
    for (size_t i = 0; i < n; i++) {
        int e = which[i] = keys[i].tensor;
        bufs[i].lower = in->first[e];
        bufs[i].upper = (int64_t)in->last[e] + 1;
        bufs[i].size = dag->bytes[e];
        bufs[i].offset = 0;
    }
    free(keys);
    olla_place_options po;
    memset(&po, 0, sizeof po);
    po.alignment = in->alignment;
    po.time_limit = in->time_limit;
    po.verbosity = in->opt->verbosity > 1 ? 1 : 0;
    olla_place_result pr;
    olla_status st = olla_place(bufs, n, &po, &pr, err);
    if (st == OLLA_OK) {
        for (size_t i = 0; i < n; i++)
            offset[which[i]] = bufs[i].offset;
        out->arena_bytes = pr.arena_bytes;
        out->status = olla_place_status_name(pr.status);
    }
    free(bufs);
    free(which);
    return st;
}
