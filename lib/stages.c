/* olla-onnx: ordering and placement as the pipeline runs them. */
#include "lib/olla_stages.h"

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
        res->peak_bytes = olla_dag_peak(dag, order, NULL, NULL);
        res->lower_bound_bytes = -1;
        res->status = "kept";
        return OLLA_OK;
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
    res->lower_bound_bytes = sr.lower_bound_bytes > 0 ? sr.lower_bound_bytes : -1;
    res->status = sr.status;
    return OLLA_OK;
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
    size_t n = 0;
    for (int e = 0; e < nt; e++) {
        offset[e] = 0;
        if (dag->bytes[e] <= 0)
            continue;
        bufs[n].lower = in->first[e];
        bufs[n].upper = (int64_t)in->last[e] + 1;
        bufs[n].size = dag->bytes[e];
        bufs[n].offset = 0;
        which[n++] = e;
    }
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
