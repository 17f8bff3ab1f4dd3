/* olla-onnx: ordering and placement as the pipeline runs them. */
#include "pipeline/olla_pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "solver/olla_schedule.h"

/* Share of the time limit the ordering may use; placement gets the rest. */
#define ORDER_TIME_SHARE 0.6

/* The order's last groups of nodes nested (olla_sched_nest_tail), kept
 * when the peak stays at most *peak (which then receives the new one): in a
 * runtime that follows the listing only, since ONNX Runtime runs an order
 * of its own. */
static olla_status nest_tail(const olla_dag *dag, int *order, int64_t *peak, const olla_logger *log, olla_error *err)
{
    int *nested = malloc(((size_t)dag->n_nodes + 1) * sizeof *nested), groups = 0;
    if (!nested)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory nesting the order's tail (%d nodes)",
                              dag->n_nodes);
    int64_t nested_peak = 0;
    olla_status st = olla_sched_nest_tail(dag, order, nested, &groups, err);
    if (st == OLLA_OK && groups > 0)
        st = olla_dag_peak(dag, nested, &nested_peak, NULL, NULL, err);
    if (st == OLLA_OK && groups > 0) {
        int kept = nested_peak <= *peak;
        if (kept) {
            memcpy(order, nested, (size_t)dag->n_nodes * sizeof *order);
            *peak = nested_peak;
        }
        olla_log(log, OLLA_LOG_DETAIL,
                 "olla: the last %d groups of nodes in reverse order of what they free: peak %lld, %s", groups,
                 (long long)nested_peak, kept ? "kept" : "not kept");
    }
    free(nested);
    return st;
}

olla_status olla_stage_order(const olla_dag *dag, const int *input_order, const olla_options *opt, int *order,
                             olla_order_result *res, olla_error *err)
{
    res->n_alternatives = 0;
    if (opt->keep_order) {
        memcpy(order, input_order, (size_t)dag->n_nodes * sizeof *order);
        res->heuristic_peak_bytes = res->peak_bytes = 0;
        res->lower_bound_bytes = -1;
        res->status = "kept";
        res->stopped_by = "kept";
        olla_status st = olla_dag_peak(dag, order, &res->peak_bytes, NULL, NULL, err);
        res->heuristic_peak_bytes = res->peak_bytes;
        return st;
    }
    olla_schedule_options so;
    memset(&so, 0, sizeof so);
    so.time_limit = opt->time_limit > 0 ? opt->time_limit * ORDER_TIME_SHARE : 0;
    so.use_ilp = 1;
    olla_logger log = olla_options_logger(opt, OLLA_LOG_SOLVER_OUTPUT);
    so.log = &log;
    olla_schedule_result sr;
    olla_schedule_alternatives alt = {res->alternatives, res->alternatives ? res->max_alternatives : 0, 0};
    olla_status st = olla_schedule_alt(dag, input_order, &so, order, &alt, &sr, err);
    if (st != OLLA_OK)
        return st;
    if (opt->runtime == OLLA_RUNTIME_LISTED && (st = nest_tail(dag, order, &sr.peak_bytes, &log, err)) != OLLA_OK)
        return st;
    res->peak_bytes = sr.peak_bytes;
    res->heuristic_peak_bytes = sr.heuristic_peak;
    res->lower_bound_bytes = sr.lower_bound_bytes > 0 ? sr.lower_bound_bytes : -1;
    res->status = sr.status;
    res->stopped_by = sr.stopped_by;
    res->n_alternatives = alt.n;
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

/* holder[e]: the owner of e's buffer along the applied in-place writes (an
 * output written over its input continues the input's buffer); the owner's
 * buf_first/buf_last span every tensor of the buffer. */
static void buffers_of(const olla_place_input *in, int *holder, int *buf_first, int *buf_last)
{
    const olla_dag *dag = in->dag;
    for (int e = 0; e < dag->n_tensors; e++) {
        holder[e] = e;
        buf_first[e] = in->first[e];
        buf_last[e] = in->last[e];
    }
    if (!in->applied || dag->n_inplace == 0)
        return;
    /* in step order, so that a chain of writes reaches its first owner */
    for (int v = 0; v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++)
            if (in->applied[k])
                holder[dag->inplace_out[k]] = dag->inplace_in[k];
    for (int e = 0; e < dag->n_tensors; e++) {
        int h = e;
        while (holder[h] != h)
            h = holder[h];
        holder[e] = h;
    }
    for (int e = 0; e < dag->n_tensors; e++) {
        int h = holder[e];
        if (in->first[e] < buf_first[h])
            buf_first[h] = in->first[e];
        if (in->last[e] > buf_last[h])
            buf_last[h] = in->last[e];
    }
}

/* The buffers to place (bufs, keys: the owner tensor of each), in
 * allocation order (by first step, then tensor), the order a runtime
 * requests them and the order --lifetimes writes; returns how many. */
static size_t buffers_to_place(const olla_place_input *in, int *holder, int *buf_first, int *buf_last,
                               olla_buffer *bufs, alloc_key *keys)
{
    const olla_dag *dag = in->dag;
    buffers_of(in, holder, buf_first, buf_last);
    size_t n = 0;
    for (int e = 0; e < dag->n_tensors; e++) {
        if (dag->bytes[e] > 0 && holder[e] == e) {
            keys[n].first = buf_first[e];
            keys[n++].tensor = e;
        }
    }
    qsort(keys, n, sizeof *keys, by_first_step);
    for (size_t i = 0; i < n; i++) {
        int e = keys[i].tensor;
        bufs[i] = (olla_buffer){buf_first[e], (int64_t)buf_last[e] + 1, dag->bytes[e], 0};
    }
    return n;
}

/* What the placement fills, per DAG tensor (olla_stage_place). */
typedef struct stage_arrays {
    int64_t *offset;
    int *holder, *buf_first, *buf_last;
} stage_arrays;

/* olla_stage_place, or with heuristics_only olla_stage_place_heuristic. */
static olla_status place_buffers(const olla_place_input *in, int heuristics_only, const stage_arrays *a,
                                 olla_place_outcome *out, olla_error *err)
{
    int64_t *offset = a->offset;
    int *holder = a->holder;
    const olla_dag *dag = in->dag;
    int nt = dag->n_tensors;
    olla_buffer *bufs = malloc(((size_t)nt + 1) * sizeof *bufs);
    alloc_key *keys = malloc(((size_t)nt + 1) * sizeof *keys);
    if (!bufs || !keys) {
        free(bufs);
        free(keys);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory placing tensors");
    }
    for (int e = 0; e < nt; e++)
        offset[e] = 0;
    size_t n = buffers_to_place(in, holder, a->buf_first, a->buf_last, bufs, keys);
    olla_place_options po;
    memset(&po, 0, sizeof po);
    po.alignment = in->alignment;
    po.time_limit = heuristics_only ? 0 : in->time_limit; /* the heuristics: no clock, the same on any machine */
    po.work_limit = in->work_limit > 0 ? in->work_limit : OLLA_PLACEMENT_DEFAULT_WORK;
    olla_logger log = olla_options_logger(in->opt, OLLA_LOG_DETAIL); /* CBC's own log only for the order */
    po.log = heuristics_only ? NULL : &log;
    olla_place_result pr;
    olla_status st = heuristics_only ? olla_place_heuristics(bufs, n, &po, &pr, err) : olla_place(bufs, n, &po, &pr, err);
    if (st == OLLA_OK) {
        for (size_t i = 0; i < n; i++)
            offset[keys[i].tensor] = bufs[i].offset;
        for (int e = 0; e < nt; e++)
            offset[e] = dag->bytes[e] > 0 ? offset[holder[e]] : 0;
        out->arena_bytes = pr.arena_bytes;
        out->status = olla_place_status_name(pr.status);
        out->stopped_by = olla_place_stop_name(pr.stopped_by);
        out->work = pr.work;
    }
    free(bufs);
    free(keys);
    return st;
}

olla_status olla_stage_place(const olla_place_input *in, int64_t *offset, int *holder, int *buf_first, int *buf_last,
                             olla_place_outcome *out, olla_error *err)
{
    return place_buffers(in, 0, &(stage_arrays){offset, holder, buf_first, buf_last}, out, err);
}

olla_status olla_stage_place_heuristic(const olla_place_input *in, int64_t *offset, int *holder, int *buf_first,
                                       int *buf_last, olla_place_outcome *out, olla_error *err)
{
    return place_buffers(in, 1, &(stage_arrays){offset, holder, buf_first, buf_last}, out, err);
}
