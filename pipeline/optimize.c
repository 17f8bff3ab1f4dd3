/* olla-onnx: the planning pipeline. One run of olla_optimize() goes
 *
 *   shapes -> graph -> checks -> buffer shares -> DAG -> input order
 *   -> order -> placement of buffers -> (joint ILP) -> plan -> check
 *
 * and every stage hands the next plain arrays, kept together in one run
 * struct. The DAG carries the runtime's buffer sharing (olla_graph_dag.h)
 * unless opt->sharing is OLLA_SHARING_NONE; the input order's peak is also
 * measured without sharing, for the report. */
#include "olla.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/runtime/olla_graph_shares.h"
#include "passes/shapes/olla_shapes.h"
#include "pipeline/olla_pipeline.h"
#include "plan/olla_verify.h"
#include "solver/olla_joint.h"
#include "solver/olla_online_alloc.h"
#include "util/olla_clock.h"

void olla_options_init(olla_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->time_limit = 30.0;
    opt->alignment = 64;
    opt->verbosity = 1;
    opt->sharing = OLLA_SHARING_RUNTIME;
    opt->runtime = OLLA_RUNTIME_ORT;
}

olla_logger olla_options_logger(const olla_options *opt, int max_level)
{
    olla_logger lg = {opt->log, opt->log_ctx, opt->verbosity < max_level ? opt->verbosity : max_level};
    return lg;
}

void olla_plan_free(olla_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->n_dims; i++)
        free((char *)plan->dims[i].name);
    free(plan->dims);
    for (int i = 0; i < plan->n_inputs; i++) {
        free((char *)plan->inputs[i].name);
        free((int64_t *)plan->inputs[i].dims);
    }
    free(plan->inputs);
    free(plan->order);
    free(plan->listing);
    free(plan->entries);
    free(plan->live_input);
    free(plan->live_planned);
    free(plan->step_index);
    olla_model_destroy(plan->rewritten);
    free(plan);
}

void olla_report_clear(olla_report *r)
{
    for (int i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    for (int i = 0; r->unknown_reasons && i < r->n_unknown; i++)
        free(r->unknown_reasons[i]);
    free(r->unknown_names);
    free(r->unknown_reasons);
    memset(r, 0, sizeof *r);
}

/* One run of the pipeline: what each stage hands the next. */
typedef struct run {
    const olla_model *m;
    const olla_options *opt;
    olla_report *rep;
    olla_error *err;
    double t0;
    int64_t align;
    olla_shape_table *types;
    olla_graph *g;
    olla_exec_graph eg; /* the graph as the runtime runs it (non-listed runtimes) */
    int have_eg;
    olla_dag dag; /* under the sharing rules, of what the runtime runs */
    olla_graph_dag_map map;
    int *input_order, *order;        /* n_nodes; order: planned, then the one the runtime executes */
    int *input_executed;             /* n_nodes: the order the runtime executes for the input */
    int *best_order;                 /* n_nodes: the planned order, kept when the runtime's replaces it */
    int *alternatives;               /* ORDER_ALTERNATIVES x n_nodes: other orders of the planned peak */
    int n_alternatives;
    olla_order_judge *judge;         /* NULL, or what judged them (its placement of a packed order) */
    int *listing;                    /* n_nodes: the graph.node order to write */
    int *first, *last;               /* per DAG tensor, under order */
    int *holder, *buf_first, *buf_last; /* per DAG tensor: its buffer's owner and that buffer's lifetime */
    unsigned char *applied;          /* per in-place candidate, under order */
    int64_t *offset;                 /* per DAG tensor */
    olla_plan *plan;
    int64_t peak_cap;                /* the runtime's order must peak at most this; < 0: no cap */
    int done;                        /* the plan is complete (made for a rewritten model) */
} run;

/* Orders of the best peak the ordering hands on beside the best, for the
 * judge of equal peaks (pipeline/order_choice.c). */
#define ORDER_ALTERNATIVES 6

static olla_status oom(run *r)
{
    return olla_error_set(r->err, OLLA_ERR_INTERNAL, "out of memory planning %s", r->m->path);
}

static void progress(const run *r, const char *phase, int64_t best, int64_t bound)
{
    if (r->opt->progress)
        r->opt->progress(r->opt->progress_ctx, phase, olla_now() - r->t0, best, bound);
}

/* The report's shape warnings, counts and unknown tensors. */
static olla_status report_graph(run *r)
{
    olla_report *rep = r->rep;
    const olla_graph *g = r->g;
    rep->n_binding_warnings = (int)olla_shape_binding_warning_count(r->types);
    if ((rep->n_warnings = (int)olla_shape_warning_count(r->types)) > 0) {
        if (!(rep->warnings = calloc((size_t)rep->n_warnings, sizeof(char *))))
            return oom(r);
        for (int i = 0; i < rep->n_warnings; i++)
            if (!(rep->warnings[i] = strdup(olla_shape_warning_at(r->types, (size_t)i))))
                return oom(r);
    }
    rep->nodes = g->n_ops;
    rep->tensors = g->n_tensors;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (olla_tensor_is_held(g, t)) { /* graph inputs, initializers and Constants */
            if (ten->bytes > 0) /* saturating: inputs may declare anything */
                rep->constant_bytes =
                    ten->bytes > INT64_MAX - rep->constant_bytes ? INT64_MAX : rep->constant_bytes + ten->bytes;
        } else if (ten->bytes >= 0) {
            rep->planned_tensors++;
        } else {
            rep->n_unknown++;
        }
    }
    if (!rep->n_unknown)
        return OLLA_OK;
    rep->unknown_names = calloc((size_t)rep->n_unknown, sizeof(char *));
    rep->unknown_reasons = calloc((size_t)rep->n_unknown, sizeof(char *));
    if (!rep->unknown_names || !rep->unknown_reasons)
        return oom(r);
    int k = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (!olla_tensor_is_held(g, t) && g->tensors[t].bytes < 0) {
            rep->unknown_names[k] = g->tensors[t].name;
            /* the reason lives in the shape table, freed before the report */
            const char *why = g->tensors[t].unknown_reason;
            if (!(rep->unknown_reasons[k++] = strdup(why ? why : "unknown")))
                return oom(r);
        }
    return OLLA_OK;
}

/* shapes, graph and the checks a graph must pass before planning */
static olla_status build_graph(run *r)
{
    progress(r, "shapes", -1, -1);
    olla_shape_options so = {.dims = r->opt->dims, .n_dims = r->opt->n_dims, .strict = r->opt->strict_shapes,
                             .input_shapes = r->opt->input_shapes, .n_input_shapes = r->opt->n_input_shapes,
                             .alignment = r->align};
    olla_status st = olla_infer_shapes(r->m->proto, &so, &r->types, r->err);
    if (st != OLLA_OK)
        return st;
    progress(r, "graph", -1, -1);
    olla_type_source src = olla_shape_type_source(r->types);
    if ((st = olla_graph_build(r->m, &src, &r->g, r->err)) != OLLA_OK)
        return st;
    if ((st = olla_pipeline_check_graph(r->g, r->types, r->opt->allow_unknown_sizes, r->align, r->err)) != OLLA_OK)
        return st;
    return report_graph(r);
}

/* What users get today: the input order served by an online caching
 * allocator (512-byte rounding, best fit, split and coalesce, a new segment
 * when nothing fits), every tensor in a block of its own. */
static olla_status simulate_online(run *r, const olla_dag *dag, const olla_graph_dag_map *map)
{
    olla_status st = olla_dag_lifetimes(dag, r->input_order, r->first, r->last, r->err);
    if (st != OLLA_OK)
        return st;
    olla_buffer *bufs = malloc(((size_t)dag->n_tensors + 1) * sizeof *bufs);
    if (!bufs)
        return oom(r);
    size_t n = 0;
    for (int e = 0; e < dag->n_tensors; e++) {
        int64_t bytes = r->g->tensors[map->graph_tensor[e]].bytes;
        if (bytes > 0 && dag->bytes[e] > 0) /* a buffer of its own (none: a Constant, a view of one) */
            bufs[n++] = (olla_buffer){r->first[e], (int64_t)r->last[e] + 1, bytes, 0};
    }
    int64_t reserved = 0, in_use = 0;
    st = olla_online_alloc_simulate(bufs, n, &reserved, &in_use, r->err);
    free(bufs);
    if (st != OLLA_OK)
        return st;
    r->rep->input_order_online_arena_bytes = reserved;
    r->rep->input_order_fragmentation = reserved > 0 ? (double)(reserved - in_use) / (double)reserved : 0.0;
    return OLLA_OK;
}

/* The shares of a memory model: under the sharing rules every one the
 * rules declare; without them only the views of tensors held outside the
 * plan (graph inputs, initializers, Constants), which are never copies.
 * *shares is malloc'd. */
static olla_status model_shares(run *r, int runtime_sharing, olla_op_share **shares, int *n_shares)
{
    olla_status st = olla_graph_shares(r->g, shares, n_shares, r->err);
    if (st == OLLA_OK && !runtime_sharing)
        *n_shares = olla_graph_shares_held_views(r->g, *shares, *n_shares);
    return st;
}

/* The input order's figures without sharing: its peak and what an online
 * allocator reserves for it, every tensor a buffer of its own but for what
 * is held outside the plan (Constants, and the views of graph inputs,
 * initializers and Constants, which are never copies). The DAG without
 * shares has the same nodes. */
static olla_status input_order_unshared(run *r)
{
    olla_dag plain = {0};
    olla_graph_dag_map pmap;
    olla_op_share *shares = NULL;
    int n_shares = 0;
    olla_status st = model_shares(r, 0, &shares, &n_shares);
    if (st == OLLA_OK)
        st = olla_graph_dag(r->g, r->align, &(olla_dag_sharing){shares, n_shares, NULL}, &plain, &pmap, r->err);
    free(shares);
    if (st != OLLA_OK)
        return st;
    if (st != OLLA_OK)
        return st;
    st = olla_dag_peak(&plain, r->input_order, &r->rep->input_order_peak_bytes, NULL, NULL, r->err);
    if (st == OLLA_OK)
        st = simulate_online(r, &plain, &pmap);
    olla_graph_dag_map_free(&pmap);
    olla_dag_free(&plain);
    return st;
}

static olla_status alloc_arrays(run *r)
{
    size_t n = (size_t)r->g->n_ops + 1, nt = (size_t)r->g->n_tensors + 1;
    r->input_order = malloc(n * sizeof(int));
    r->order = malloc(n * sizeof(int));
    r->input_executed = malloc(n * sizeof(int));
    r->listing = malloc(n * sizeof(int));
    r->alternatives = malloc(ORDER_ALTERNATIVES * n * sizeof(int));
    r->first = malloc(nt * sizeof(int));
    r->last = malloc(nt * sizeof(int));
    r->holder = malloc(nt * sizeof(int));
    r->buf_first = malloc(nt * sizeof(int));
    r->buf_last = malloc(nt * sizeof(int));
    r->offset = malloc(nt * sizeof(int64_t));
    r->applied = calloc(nt, 1);
    r->plan = calloc(1, sizeof *r->plan);
    if (r->plan) {
        r->plan->live_input = malloc(n * sizeof(int64_t));
        r->plan->live_planned = malloc(n * sizeof(int64_t));
        r->plan->step_index = malloc(n * sizeof(int));
    }
    if (!r->input_order || !r->order || !r->input_executed || !r->listing || !r->alternatives || !r->first || !r->last || !r->holder || !r->buf_first || !r->buf_last ||
        !r->offset || !r->applied || !r->plan || !r->plan->live_input || !r->plan->live_planned ||
        !r->plan->step_index)
        return oom(r);
    return OLLA_OK;
}

/* the DAG under the sharing rules, the input order and its figures */
static olla_status build_dag(run *r)
{
    olla_op_share *shares = NULL;
    int n_shares = 0;
    olla_status st = OLLA_OK;
    olla_runtime_view view = {NULL, NULL};
    if (r->opt->runtime != OLLA_RUNTIME_LISTED) {
        st = olla_exec_graph_build(r->g, r->opt->runtime, NULL, &r->eg, r->err);
        r->have_eg = st == OLLA_OK;
        view = (olla_runtime_view){r->eg.runs, r->eg.reads_as};
    }
    if (st == OLLA_OK)
        st = model_shares(r, r->opt->sharing == OLLA_SHARING_RUNTIME, &shares, &n_shares);
    if (st == OLLA_OK)
        st = olla_graph_dag(r->g, r->align, &(olla_dag_sharing){shares, n_shares, r->have_eg ? &view : NULL}, &r->dag,
                            &r->map, r->err);
    free(shares);
    if (st == OLLA_OK)
        st = alloc_arrays(r);
    if (st == OLLA_OK)
        st = olla_dag_stable_topo(&r->dag, r->input_order, r->err);
    if (st == OLLA_OK)
        st = olla_dag_peak(&r->dag, r->input_order, &r->rep->input_order_shared_peak_bytes, r->plan->live_input,
                           NULL, r->err);
    if (st == OLLA_OK)
        st = input_order_unshared(r);
    return st;
}

static olla_status order_stage(run *r)
{
    progress(r, "ordering", r->rep->input_order_shared_peak_bytes, -1);
    double ts = olla_now();
    olla_order_result ores;
    ores.alternatives = r->alternatives;
    ores.max_alternatives = ORDER_ALTERNATIVES;
    olla_status st = olla_stage_order(&r->dag, r->input_order, r->opt, r->order, &ores, r->err);
    if (st != OLLA_OK)
        return st;
    r->n_alternatives = ores.n_alternatives;
    r->rep->schedule_seconds = olla_now() - ts;
    r->rep->peak_bytes = ores.peak_bytes;
    r->rep->heuristic_peak_bytes = ores.heuristic_peak_bytes;
    r->rep->lower_bound_bytes = ores.lower_bound_bytes;
    r->rep->schedule_status = ores.status;
    r->rep->schedule_stopped_by = ores.stopped_by;
    r->plan->lower_bound = ores.lower_bound_bytes;
    int64_t peak = 0;
    return olla_dag_peak(&r->dag, r->order, &peak, r->plan->live_planned, NULL, r->err);
}

/* The runtime executes what is written: the listing that steers it and the
 * order it then runs, which the plan is made for (pipeline/runtime_stage.c). */
static olla_status runtime_stage(run *r)
{
    olla_report *rep = r->rep;
    const olla_options *opt = r->opt;
    int n = r->g->n_ops;
    int *executed = malloc(((size_t)n + 1) * sizeof(int));
    if (!executed)
        return oom(r);
    olla_runtime_input in = {r->g,         r->types,         r->have_eg ? &r->eg : NULL,
                             &r->dag,      opt->runtime,     r->order,
                             opt->keep_order, 0, opt->time_limit > 0 ? r->t0 + opt->time_limit : 0, r->peak_cap,
                             r->input_executed, r->alternatives, r->n_alternatives, NULL};
    memcpy(r->input_executed, r->input_order, (size_t)n * sizeof(int)); /* listed: the input's order */
    olla_runtime_outcome out;
    olla_status st = r->n_alternatives > 0 ? olla_order_judge_new(&r->dag, r->align, opt, &r->judge, r->err) : OLLA_OK;
    in.judge = r->judge;
    if (st == OLLA_OK)
        st = olla_stage_runtime(&in, r->listing, executed, &out, r->err);
    if (st == OLLA_OK && out.judged > 0) {
        olla_logger log = olla_options_logger(opt, OLLA_LOG_DETAIL);
        olla_log(&log, OLLA_LOG_DETAIL, "olla: %d order%s of equal %s judged by the placement heuristics' arena: %s",
                 out.judged, out.judged > 1 ? "s" : "", opt->runtime == OLLA_RUNTIME_ORT ? "cost" : "peak",
                 out.chose_other ? "another than the first kept" : "the first kept");
    }
    if (st == OLLA_OK && (r->best_order = malloc(((size_t)n + 1) * sizeof(int))))
        memcpy(r->best_order, r->order, (size_t)n * sizeof(int));
    if (st == OLLA_OK) {
        memcpy(r->order, executed, (size_t)n * sizeof(int));
        rep->unconstrained_peak_bytes = rep->peak_bytes;
        rep->input_executed_peak_bytes =
            opt->runtime == OLLA_RUNTIME_LISTED ? rep->input_order_shared_peak_bytes : out.input_executed_peak_bytes;
        rep->input_ort_allocated_bytes = out.input_ort_allocated_bytes;
        rep->ort_allocated_bytes = out.ort_allocated_bytes;
        memcpy(rep->ort_settings, out.settings, sizeof rep->ort_settings);
        rep->input_ort_default_allocated_bytes = out.settings[OLLA_ORT_DEFAULTS].input_first_run_bytes;
        rep->ort_default_allocated_bytes = out.settings[OLLA_ORT_DEFAULTS].first_run_bytes;
        rep->input_ort_default_steady_bytes = out.settings[OLLA_ORT_DEFAULTS].input_steady_bytes;
        rep->ort_default_steady_bytes = out.settings[OLLA_ORT_DEFAULTS].steady_bytes;
        rep->runtime_search = out.search;
        rep->held_more_setting = out.held_more_setting;
        rep->held_more_steady = out.held_more_steady;
        rep->held_more_input_bytes = out.held_more_input_bytes;
        rep->held_more_bytes = out.held_more_bytes;
        rep->arena_searched = out.arena_searched;
        snprintf(rep->ort_model_note, sizeof rep->ort_model_note, "%s", out.ort_model_note);
        st = olla_dag_peak(&r->dag, r->order, &rep->peak_bytes, r->plan->live_planned, NULL, r->err);
        rep->executed_peak_bytes = rep->peak_bytes;
        if (rep->peak_bytes != rep->unconstrained_peak_bytes && !strcmp(rep->schedule_status, "optimal"))
            rep->schedule_status = "feasible"; /* the best the runtime can be made to run, not proven */
    }
    free(executed);
    return st;
}

/* lifetimes and applied in-place writes under r->order */
static olla_status follow_order(run *r)
{
    int n = r->dag.n_nodes;
    int *step = malloc(((size_t)n + 1) * sizeof(int));
    if (!step)
        return oom(r);
    for (int t = 0; t < n; t++)
        step[r->order[t]] = t;
    olla_status st = olla_dag_lifetimes(&r->dag, r->order, r->first, r->last, r->err);
    if (st == OLLA_OK)
        olla_dag_inplace_applied(&r->dag, step, r->last, r->applied);
    free(step);
    return st;
}

static olla_status place_stage(run *r)
{
    progress(r, "placement", r->rep->peak_bytes, r->rep->lower_bound_bytes);
    olla_status st = follow_order(r);
    if (st != OLLA_OK)
        return st;
    const olla_options *opt = r->opt;
    /* a fixed work budget; the time left is only a safety net */
    double left = opt->time_limit > 0 ? opt->time_limit - (olla_now() - r->t0) : 0;
    olla_place_input pin = {&r->dag, r->first, r->last, r->applied, r->align,
                            opt->time_limit > 0 ? (left > 0.1 ? left : 0.1) : 0, opt->placement_work, opt};
    olla_place_outcome pout;
    if (olla_order_judge_placed(r->judge, r->order, r->offset, r->holder, r->buf_first, r->buf_last, &pout)) {
        olla_logger log = olla_options_logger(opt, OLLA_LOG_DETAIL);
        olla_log(&log, OLLA_LOG_DETAIL, "place: the heuristics placed the order at its peak while judging it: arena %lld",
                 (long long)pout.arena_bytes);
    } else {
        st = olla_stage_place(&pin, r->offset, r->holder, r->buf_first, r->buf_last, &pout, r->err);
    }
    if (st != OLLA_OK)
        return st;
    r->rep->arena_bytes = pout.arena_bytes;
    r->rep->placement_status = pout.status;
    r->rep->placement_stopped_by = pout.stopped_by;
    r->rep->placement_work = pout.work;
    return OLLA_OK;
}

/* Why the joint ILP cannot run, or NULL when it can. */
static const char *joint_skip_reason(const run *r, long *cols)
{
    static char why[160];
    int fits = 0;
    olla_error jerr = {0};
    if (r->opt->keep_order)
        return "--keep-order fixes the order";
    if (r->opt->runtime != OLLA_RUNTIME_LISTED)
        return "the runtime orders execution itself (--runtime listed follows the file)";
    if (r->dag.n_inplace > 0)
        return "in-place writes depend on the order, and the joint ILP places tensors without them";
    if (r->rep->lower_bound_bytes >= 0 && r->rep->arena_bytes <= r->rep->lower_bound_bytes)
        return "the arena already equals the lower bound on the peak";
    if (olla_joint_columns(&r->dag, cols, &fits, &jerr) != OLLA_OK || !fits) {
        if (*cols < 0)
            snprintf(why, sizeof why, "%d nodes, above its limit of %d", r->dag.n_nodes, OLLA_JOINT_MAX_NODES);
        else
            snprintf(why, sizeof why, "%ld columns, above its limit of %ld", *cols, OLLA_JOINT_MAX_COLS);
        return why;
    }
    if (r->opt->time_limit > 0 && r->opt->time_limit - (olla_now() - r->t0) < 0.2)
        return "the time limit is used up";
    return NULL;
}

/* --joint: order and addresses in one ILP, from the two-step plan. Kept only
 * when its arena is strictly smaller; a failure leaves the two-step plan. */
static olla_status try_joint(run *r)
{
    long cols = 0;
    const char *skip = joint_skip_reason(r, &cols);
    if (skip) {
        olla_logger log = olla_options_logger(r->opt, OLLA_LOG_DETAIL);
        olla_log(&log, OLLA_LOG_DETAIL, "olla: joint ILP skipped: %s; the two-step plan is kept", skip);
        return OLLA_OK;
    }
    int n = r->dag.n_nodes, nt = r->dag.n_tensors;
    double left = r->opt->time_limit > 0 ? olla_deadline_left(r->t0 + r->opt->time_limit) : 0; /* CPU seconds for CBC */
    int *jorder = malloc(((size_t)n + 1) * sizeof(int));
    int64_t *joff = malloc(((size_t)nt + 1) * sizeof(int64_t));
    int64_t jarena = 0;
    int proven = 0;
    olla_error jerr = {0};
    olla_status st = OLLA_OK;
    if (!jorder || !joff) {
        st = oom(r);
    } else if (olla_joint_solve(&(olla_joint_problem){&r->dag, r->order, r->offset, r->align}, left, jorder, joff,
                                &jarena, &proven, &jerr) != OLLA_OK) {
        olla_logger log = olla_options_logger(r->opt, OLLA_LOG_WARNING);
        olla_log(&log, OLLA_LOG_WARNING, "olla-onnx: warning: joint ILP failed (%s); the two-step plan is kept",
                 jerr.message);
    } else if (jarena < r->rep->arena_bytes) {
        memcpy(r->order, jorder, (size_t)n * sizeof(int));
        memcpy(r->listing, jorder, (size_t)n * sizeof(int));
        memcpy(r->offset, joff, (size_t)nt * sizeof(int64_t));
        st = follow_order(r);
        for (int e = 0; st == OLLA_OK && e < nt; e++) {
            r->holder[e] = e;
            r->buf_first[e] = r->first[e];
            r->buf_last[e] = r->last[e];
        }
        if (st == OLLA_OK)
            st = olla_dag_peak(&r->dag, r->order, &r->rep->peak_bytes, r->plan->live_planned, NULL, r->err);
        r->rep->arena_bytes = jarena;
        r->rep->joint_used = 1;
        /* the report's statuses keep their four values; joint_used tells */
        r->rep->schedule_status = proven ? "optimal" : "feasible";
        r->rep->placement_status = proven ? "optimal" : "feasible";
    }
    free(jorder);
    free(joff);
    return st;
}

/* 1 when the runtime runs op: not a Constant, nor an op it drops (eg) */
static int op_runs(const run *r, int op)
{
    return r->have_eg ? r->eg.runs[op] : !olla_op_is_constant(r->g, op);
}

/* Live bytes at the steps of order at which an op runs, into live (the
 * steps counted in *n_steps); step_index (optional, per position) the step
 * of each position. */
static olla_status running_profile(run *r, const int *order, int64_t *live, int *n_steps, int *step_index)
{
    int n = r->g->n_ops, k = 0;
    int64_t peak = 0;
    olla_status st = olla_dag_peak(&r->dag, order, &peak, live, NULL, r->err);
    for (int s = 0; st == OLLA_OK && s < n; s++) {
        if (step_index)
            step_index[s] = k > 0 && !op_runs(r, order[s]) ? k - 1 : k;
        if (op_runs(r, order[s]))
            live[k++] = live[s];
    }
    *n_steps = k;
    return st;
}

/* The picture's input curve and figure: the order the runtime executes for
 * the input, over the steps at which an op runs (before any recomputation:
 * a plan for a rewritten model keeps them). */
static olla_status input_profile(run *r)
{
    r->plan->input_peak_bytes = r->rep->input_executed_peak_bytes;
    return running_profile(r, r->input_executed, r->plan->live_input, &r->plan->n_input_steps, NULL);
}

/* ... and the plan's: the order the runtime executes for it, where each of
 * its positions falls among the steps, and the summary's planned peak. */
static olla_status planned_profile(run *r)
{
    r->plan->peak_bytes = r->rep->peak_bytes;
    return running_profile(r, r->order, r->plan->live_planned, &r->plan->n_steps, r->plan->step_index);
}

/* The entry of a planned tensor: offset of its buffer, and the share it
 * makes (a view of its input, or written over the input it takes). */
static void fill_entry(run *r, olla_plan_entry *pe, int t, const int *entry_of)
{
    const olla_graph *g = r->g;
    int e = r->map.dag_tensor[t], buf = r->map.buffer[t];
    pe->tensor = t;
    pe->name = g->tensors[t].name;
    pe->offset = r->offset[buf];
    pe->bytes = olla_align_up(g->tensors[t].bytes, r->align);
    pe->share = OLLA_BUFFER_OWN;
    pe->shares = -1;
    pe->first_step = r->first[e];
    pe->last_step = r->last[e];
    if (r->map.view_of[t] >= 0) {
        pe->share = OLLA_BUFFER_VIEW;
        pe->shares = entry_of[r->map.view_of[t]];
        r->rep->views++;
    } else if (r->holder[e] != e) {
        pe->share = OLLA_BUFFER_INPLACE;
        pe->shares = entry_of[r->map.inplace_from[t]];
        r->rep->inplace++;
    } else {
        pe->first_step = r->buf_first[e];
        pe->last_step = r->buf_last[e];
    }
}

/* the plan, in allocation order: the outputs of each node in planned order */
static olla_status make_plan(run *r)
{
    const olla_graph *g = r->g;
    olla_plan *plan = r->plan;
    int *entry_of = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    plan->entries = malloc(((size_t)g->n_tensors + 1) * sizeof *plan->entries);
    if (!entry_of || !plan->entries) {
        free(entry_of);
        return oom(r);
    }
    for (int t = 0; t < g->n_tensors; t++)
        entry_of[t] = -1;
    plan->n_nodes = g->n_ops;
    plan->memory_limit = r->rep->memory_limit_bytes;
    plan->alignment = r->align;
    plan->arena_bytes = r->rep->arena_bytes;
    plan->sharing = r->opt->sharing == OLLA_SHARING_RUNTIME;
    for (int s = 0; s < g->n_ops; s++) {
        const olla_op *op = &g->ops[r->order[s]];
        for (int k = 0; k < op->n_outputs; k++) {
            int t = g->output_list[op->first_output + k];
            if (t < 0 || g->tensors[t].bytes < 0 || r->map.buffer[t] < 0)
                continue; /* unknown size, or no arena memory (a view of a graph input) */
            entry_of[t] = plan->n_entries;
            fill_entry(r, &plan->entries[plan->n_entries++], t, entry_of);
        }
    }
    free(entry_of);
    plan->order = r->order;
    plan->listing = r->listing;
    plan->runtime = r->opt->runtime;
    r->order = r->listing = NULL;
    return OLLA_OK;
}

/* The plan records what it was made for: the bindings given and the shape of
 * every graph input fed at run time (sized ones; an input of unknown size
 * plans nothing that depends on it). */
static olla_status record_bindings(run *r)
{
    const olla_graph *g = r->g;
    const olla_options *opt = r->opt;
    olla_plan *plan = r->plan;
    plan->dims = calloc((size_t)opt->n_dims + 1, sizeof *plan->dims);
    plan->inputs = calloc((size_t)g->n_graph_inputs + 1, sizeof *plan->inputs);
    if (!plan->dims || !plan->inputs)
        return oom(r);
    for (int i = 0; i < opt->n_dims; i++) {
        plan->dims[i].value = opt->dims[i].value;
        if (!(plan->dims[i].name = strdup(opt->dims[i].name)))
            return oom(r);
        plan->n_dims++;
    }
    for (int k = 0; k < g->n_graph_inputs; k++) {
        const olla_tensor *t = &g->tensors[g->graph_inputs[k]];
        if (t->is_initializer || t->bytes < 0 || t->type.kind != OLLA_VALUE_TENSOR)
            continue;
        olla_input_shape *in = &plan->inputs[plan->n_inputs];
        int64_t *dims = calloc((size_t)t->type.rank + 1, sizeof *dims);
        if (!dims || !(in->name = strdup(t->name))) {
            free(dims);
            return oom(r);
        }
        for (int d = 0; d < t->type.rank; d++)
            dims[d] = t->type.dims[d].value;
        in->rank = t->type.rank;
        in->dims = dims;
        plan->n_inputs++;
    }
    return OLLA_OK;
}

/* every plan is put through the independent checker before anyone sees it */
static olla_status check_plan(run *r)
{
    progress(r, "checking", r->plan->arena_bytes, -1);
    const olla_graph *g = r->g;
    const olla_plan *plan = r->plan;
    int64_t *offset = malloc(((size_t)g->n_tensors + 1) * sizeof(int64_t));
    int64_t *bytes = calloc((size_t)g->n_tensors + 1, sizeof(int64_t));
    unsigned char *share = calloc((size_t)g->n_tensors + 1, 1);
    int *shares = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    if (!offset || !bytes || !share || !shares) {
        free(offset);
        free(bytes);
        free(share);
        free(shares);
        return oom(r);
    }
    for (int t = 0; t < g->n_tensors; t++) {
        offset[t] = -1;
        shares[t] = -1;
    }
    for (int i = 0; i < plan->n_entries; i++) {
        const olla_plan_entry *pe = &plan->entries[i];
        offset[pe->tensor] = pe->offset;
        bytes[pe->tensor] = pe->bytes;
        share[pe->tensor] = (unsigned char)pe->share;
        shares[pe->tensor] = pe->shares >= 0 ? plan->entries[pe->shares].tensor : -1;
    }
    olla_runtime_view view = {r->have_eg ? r->eg.runs : NULL, r->have_eg ? r->eg.reads_as : NULL};
    olla_plan_layout lay = {plan->order, offset, bytes, share, shares, plan->arena_bytes, plan->alignment,
                            plan->sharing, r->have_eg ? &view : NULL};
    olla_status st = olla_plan_verify(g, &lay, NULL, r->err);
    free(offset);
    free(bytes);
    free(share);
    free(shares);
    if (st != OLLA_OK) {
        char msg[sizeof r->err->message];
        snprintf(msg, sizeof msg, "%s", r->err->message);
        olla_error_clear(r->err);
        st = olla_error_set(r->err, OLLA_ERR_INTERNAL, "internal error: the plan failed its check: %s", msg);
    }
    return st;
}

static void run_free(run *r)
{
    olla_plan_free(r->plan);
    free(r->input_order);
    free(r->input_executed);
    free(r->order);
    free(r->best_order);
    free(r->alternatives);
    olla_order_judge_free(r->judge);
    free(r->listing);
    free(r->first);
    free(r->last);
    free(r->holder);
    free(r->buf_first);
    free(r->buf_last);
    free(r->applied);
    free(r->offset);
    olla_graph_dag_map_free(&r->map);
    olla_dag_free(&r->dag);
    if (r->have_eg)
        olla_exec_graph_free(&r->eg);
    olla_graph_free(r->g);
    olla_shape_table_free(r->types);
}

static olla_status plan_model(const olla_model *m, const olla_options *opt, int64_t peak_cap, olla_plan **plan_out,
                              olla_report *rep, olla_error *err);

/* The report of the rewritten model's plan into the input's: what the
 * written model needs and how it was found; the input's own figures stay. */
static void merge_report(olla_report *rep, const olla_report *w)
{
    rep->planned_tensors = w->planned_tensors;
    rep->heuristic_peak_bytes = w->heuristic_peak_bytes;
    rep->peak_bytes = w->peak_bytes;
    rep->arena_bytes = w->arena_bytes;
    rep->lower_bound_bytes = w->lower_bound_bytes;
    rep->schedule_seconds += w->schedule_seconds;
    rep->placement_seconds = w->placement_seconds;
    rep->schedule_status = w->schedule_status;
    rep->schedule_stopped_by = w->schedule_stopped_by;
    rep->placement_status = w->placement_status;
    rep->placement_stopped_by = w->placement_stopped_by;
    rep->placement_work = w->placement_work;
    rep->joint_used = w->joint_used;
    rep->unconstrained_peak_bytes = w->unconstrained_peak_bytes;
    rep->executed_peak_bytes = w->executed_peak_bytes;
    rep->ort_allocated_bytes = w->ort_allocated_bytes;
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) { /* the written side of each memory setting */
        rep->ort_settings[k].first_run_bytes = w->ort_settings[k].first_run_bytes;
        rep->ort_settings[k].steady_bytes = w->ort_settings[k].steady_bytes;
    }
    rep->ort_default_allocated_bytes = w->ort_default_allocated_bytes;
    rep->ort_default_steady_bytes = w->ort_default_steady_bytes;
    rep->runtime_search = w->runtime_search;
    rep->held_more_setting = w->held_more_setting;
    rep->held_more_steady = w->held_more_steady;
    rep->held_more_input_bytes = w->held_more_input_bytes;
    rep->held_more_bytes = w->held_more_bytes;
    rep->arena_searched = w->arena_searched;
    memcpy(rep->ort_model_note, w->ort_model_note, sizeof rep->ort_model_note);
    rep->views = w->views;
    rep->inplace = w->inplace;
}

/* Rounds the remaining a plan with recomputation gets to fit the runtime's
 * order under the limit, each with a tighter target when the runtime's order
 * of the previous one passed it. */
#define REMAT_ROUNDS 4

static olla_status limit_error(run *r, int64_t limit, const olla_remat_stage_result *rs)
{
    char lim[32], small[32], bound[32];
    snprintf(lim, sizeof lim, "%lld", (long long)limit);
    snprintf(small, sizeof small, "%lld", (long long)rs->res.smallest_peak);
    snprintf(bound, sizeof bound, "%lld", (long long)rs->res.lower_bound);
    if (rs->res.smallest_peak > 0)
        return olla_error_set(r->err, OLLA_ERR_INPUT,
                              "%s: no plan fits under the memory limit of %s bytes: the smallest peak found with "
                              "recomputation is %s bytes, and no plan can peak below %s bytes; nothing written",
                              r->m->path, lim, small, bound);
    return olla_error_set(r->err, OLLA_ERR_INPUT,
                          "%s: no plan fits under the memory limit of %s bytes: no plan can peak below %s bytes; "
                          "nothing written",
                          r->m->path, lim, bound);
}

/* The plan for the rewritten model, made as any plan is, with the runtime's
 * order capped at the limit; its plan replaces this run's. */
static olla_status plan_rewritten(run *r, const olla_remat_stage_result *rs, int64_t limit, int *fits, int64_t *over)
{
    olla_options o2 = *r->opt;
    o2.memory_limit.bytes = 0;
    o2.memory_limit.fraction = 0;
    if (o2.time_limit > 0) {
        double left = o2.time_limit - (olla_now() - r->t0);
        o2.time_limit = left > 0.25 * r->opt->time_limit ? left : 0.25 * r->opt->time_limit;
    }
    olla_report w;
    olla_plan *plan2 = NULL;
    /* nothing recomputed: the input, in an order the runtime runs under the limit */
    olla_status st = plan_model(rs->model ? rs->model : r->m, &o2, limit, &plan2, &w, r->err);
    if (st != OLLA_OK)
        return st;
    /* a runtime that follows the plan holds its arena */
    int64_t held = r->opt->runtime == OLLA_RUNTIME_LISTED && w.arena_bytes > w.peak_bytes ? w.arena_bytes : w.peak_bytes;
    *fits = held <= limit;
    *over = held - limit;
    if (*fits) {
        merge_report(r->rep, &w);
        /* the input order's profile stays the input's */
        free(plan2->live_input);
        plan2->live_input = r->plan->live_input;
        plan2->n_input_steps = r->plan->n_input_steps;
        plan2->input_peak_bytes = r->plan->input_peak_bytes;
        r->plan->live_input = NULL;
        olla_plan_free(r->plan);
        r->plan = plan2;
    } else {
        olla_plan_free(plan2);
    }
    olla_report_clear(&w);
    return OLLA_OK;
}

/* The order recomputation starts from: the best order found, which the
 * runtime's listing is then chosen to follow (the order the runtime
 * executes for the plan without a limit may be further from it). */
static const int *base_order(const run *r)
{
    return r->best_order ? r->best_order : r->order;
}

/* --memory-limit: the limit in bytes, from the no-limit plan's peak in
 * r->rep; the report's fields for it. */
static int64_t resolve_limit(run *r)
{
    const olla_options *opt = r->opt;
    olla_report *rep = r->rep;
    int64_t p0 = rep->peak_bytes;
    int64_t limit = opt->memory_limit.bytes > 0 ? opt->memory_limit.bytes
                                                : (int64_t)(opt->memory_limit.fraction * (double)p0);
    rep->memory_limit_bytes = limit;
    rep->no_limit_peak_bytes = p0;
    rep->recompute_status = "not needed";
    rep->recompute_method = "none";
    return limit;
}

/* Fits under limit by recomputation, aiming first at target (below the
 * limit when a plan made without recomputation passed it by its arena). */
static olla_status recompute_under(run *r, int64_t limit, int64_t target)
{
    const olla_options *opt = r->opt;
    olla_report *rep = r->rep;
    int64_t p0 = rep->no_limit_peak_bytes;
    progress(r, "recomputing", p0, -1);
    olla_runtime_view view = {r->have_eg ? r->eg.runs : NULL, r->have_eg ? r->eg.reads_as : NULL};
    olla_status st = OLLA_OK;
    int64_t least_over = -1;
    for (int round = 0; st == OLLA_OK && round < REMAT_ROUNDS; round++) {
        /* a runtime that runs its own order: the second round starts from
         * the order it ran for the plan without a limit */
        const int *base = round == 1 && opt->runtime != OLLA_RUNTIME_LISTED ? r->order : base_order(r);
        if (round == 1 && base == r->order)
            target = limit;
        olla_remat_input in = {r->g, &r->dag, &r->map, r->have_eg ? &view : NULL, base, target, 0,
                               opt->time_limit > 0 ? r->t0 + opt->time_limit : 0, 0, 0};
        olla_remat_stage_result rs;
        if ((st = olla_stage_remat(&in, &rs, r->err)) != OLLA_OK)
            return st;
        rep->recompute_peak_bound = rs.res.lower_bound;
        if (rs.res.outcome != OLLA_REMAT_FITS) {
            if (round > 0)
                break; /* aiming lower found nothing: the runtime's order was the trouble */
            { /* name the smallest peak the search reaches */
                in.find_smallest = 1;
                in.limit = p0;
                if ((st = olla_stage_remat(&in, &rs, r->err)) != OLLA_OK)
                    return st;
                olla_model_destroy(rs.model);
            }
            return limit_error(r, limit, &rs);
        }
        int fits = 0;
        int64_t over = 0;
        st = plan_rewritten(r, &rs, limit, &fits, &over);
        if (st == OLLA_OK && fits) {
            rep->recomputed_tensors = rs.recomputed_tensors;
            rep->recomputed_nodes = rs.copies;
            rep->recompute_extra_flops = (int64_t)rs.extra_cost;
            rep->recompute_extra_fraction = rs.total_cost > 0 ? rs.extra_cost / rs.total_cost : 0;
            rep->recompute_flops_bound = (int64_t)rs.res.cost_bound;
            rep->recompute_status = rs.copies == 0                          ? "not needed"
                                    : rs.res.optimal && target == limit ? "optimal"
                                                                        : "feasible";
            rep->recompute_method = rs.res.method;
            r->plan->rewritten = rs.model;
            r->plan->memory_limit = limit;
            r->done = 1;
            return OLLA_OK;
        }
        olla_model_destroy(rs.model);
        if (least_over < 0 || over < least_over)
            least_over = over;
        /* the runtime's order, or the arena, passed the limit: aim lower by as much, and a little more */
        int64_t step = (over > 0 ? over : 0) + limit / 200 + r->align;
        target = target - step > rs.res.lower_bound ? target - step : rs.res.lower_bound;
    }
    if (st != OLLA_OK)
        return st;
    return olla_error_set(r->err, OLLA_ERR_INPUT,
                          "%s: no plan fits under the memory limit of %lld bytes as %s runs it: plans with "
                          "recomputation meet the limit in their own order, but the best order %s runs for them "
                          "peaks %lld bytes above it%s; nothing written",
                          r->m->path, (long long)limit, olla_runtime_name(opt->runtime),
                          olla_runtime_name(opt->runtime), (long long)least_over,
                          opt->runtime == OLLA_RUNTIME_LISTED ? "" : " (--runtime listed follows the plan's order)");
}

static olla_status plan_model(const olla_model *m, const olla_options *opt, int64_t peak_cap, olla_plan **plan_out,
                              olla_report *rep, olla_error *err)
{
    run r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.opt = opt;
    r.rep = rep;
    r.err = err;
    r.t0 = olla_clock_start(); /* deadlines count the CPU time of the run */
    r.align = opt->alignment > 0 ? opt->alignment : 1;
    r.peak_cap = peak_cap;
    *plan_out = NULL;
    memset(rep, 0, sizeof *rep);
    rep->model = m->path;
    rep->lower_bound_bytes = -1;
    rep->sharing = opt->sharing == OLLA_SHARING_RUNTIME ? "runtime" : "none";
    rep->runtime = olla_runtime_name(opt->runtime);
    rep->input_ort_allocated_bytes = rep->ort_allocated_bytes = -1;
    rep->input_ort_default_allocated_bytes = rep->ort_default_allocated_bytes = -1;
    rep->input_ort_default_steady_bytes = rep->ort_default_steady_bytes = -1;
    rep->held_more_setting = -1;
    rep->held_more_input_bytes = rep->held_more_bytes = -1;
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++)
        rep->ort_settings[k] = (olla_ort_setting_figures){k >= OLLA_ORT_DEFAULTS, k == OLLA_ORT_ARENA_OFF || k == OLLA_ORT_DEFAULTS,
                                                          -1, -1, -1, -1};
    rep->memory_limit_bytes = rep->no_limit_peak_bytes = rep->recompute_flops_bound = -1;
    rep->recompute_peak_bound = -1;
    int limited = opt->memory_limit.bytes > 0 || opt->memory_limit.fraction > 0;
    olla_status st = OLLA_OK;
    if (limited && opt->keep_order)
        st = olla_error_set(err, OLLA_ERR_USAGE, "--memory-limit cannot be combined with --keep-order: "
                                                 "recomputation adds nodes to the order");
    if (st == OLLA_OK)
        st = build_graph(&r);
    if (st == OLLA_OK)
        st = build_dag(&r);
    if (st == OLLA_OK)
        st = order_stage(&r);
    if (st == OLLA_OK)
        st = runtime_stage(&r);
    if (st == OLLA_OK)
        st = input_profile(&r);
    int64_t limit = limited && st == OLLA_OK ? resolve_limit(&r) : -1;
    if (st == OLLA_OK && limited && limit < rep->peak_bytes)
        st = recompute_under(&r, limit, limit);
    double tp = olla_now();
    if (st == OLLA_OK && !r.done)
        st = place_stage(&r);
    /* a runtime that follows the plan holds its arena: over the limit, recompute */
    if (st == OLLA_OK && limited && !r.done && opt->runtime == OLLA_RUNTIME_LISTED && rep->arena_bytes > limit)
        st = recompute_under(&r, limit, limit - (rep->arena_bytes - rep->peak_bytes));
    if (st == OLLA_OK && opt->joint && !r.done)
        st = try_joint(&r);
    if (!r.done)
        rep->placement_seconds = olla_now() - tp;
    if (st == OLLA_OK && !r.done)
        st = planned_profile(&r);
    if (st == OLLA_OK && !r.done)
        st = make_plan(&r);
    if (st == OLLA_OK && !r.done)
        st = check_plan(&r);
    if (st == OLLA_OK && !r.done)
        st = record_bindings(&r);
    if (st == OLLA_OK) {
        olla_report_set_saving(rep);
        rep->total_seconds = olla_now() - r.t0;
        *plan_out = r.plan;
        r.plan = NULL;
    } else {
        olla_report_clear(rep);
    }
    run_free(&r);
    return st;
}

/* The curve: the no-limit plan, then the remat stage under limits between
 * its peak and the smallest peak found, plans only. */
static olla_status curve(run *r, int n_points, olla_tradeoff *out)
{
    const olla_options *opt = r->opt;
    olla_runtime_view view = {r->have_eg ? r->eg.runs : NULL, r->have_eg ? r->eg.reads_as : NULL};
    int64_t p0 = r->rep->peak_bytes;
    olla_remat_input in = {r->g, &r->dag, &r->map, r->have_eg ? &view : NULL, base_order(r), p0, 0,
                           opt->time_limit > 0 ? r->t0 + opt->time_limit : 0, 1, 1};
    olla_remat_stage_result rs;
    olla_status st = olla_stage_remat(&in, &rs, r->err);
    if (st != OLLA_OK)
        return st;
    out->no_limit_peak_bytes = p0;
    out->smallest_peak_bytes = rs.res.smallest_peak;
    out->peak_bound_bytes = rs.res.lower_bound;
    if (!(out->points = calloc((size_t)n_points, sizeof *out->points)))
        return oom(r);
    in.find_smallest = 0;
    for (int k = 0; k < n_points && st == OLLA_OK; k++) {
        int64_t lim = p0 - (int64_t)((double)(p0 - out->smallest_peak_bytes) * k / (n_points - 1));
        in.limit = lim;
        progress(r, "recomputing", lim, out->peak_bound_bytes);
        if ((st = olla_stage_remat(&in, &rs, r->err)) != OLLA_OK)
            break;
        if (rs.res.outcome != OLLA_REMAT_FITS)
            continue; /* the search is not monotone in the limit: a point may be missing */
        olla_tradeoff_point *pt = &out->points[out->n_points++];
        pt->limit_bytes = lim;
        pt->peak_bytes = rs.planned_peak;
        pt->extra_flops = (int64_t)rs.extra_cost;
        pt->extra_fraction = rs.total_cost > 0 ? rs.extra_cost / rs.total_cost : 0;
        pt->copies = rs.copies;
        pt->recomputed_tensors = rs.recomputed_tensors;
        pt->optimal = rs.res.optimal;
    }
    return st;
}

void olla_tradeoff_clear(olla_tradeoff *t)
{
    free(t->points);
    memset(t, 0, sizeof *t);
}

/* The plan without a limit up to the order the runtime executes: the
 * stages the curve and the setup share. r is zeroed first; free it with
 * run_free and the report with olla_report_clear. */
static olla_status plan_until_runtime(run *r, olla_report *rep, const olla_model *m, const olla_options *opt,
                                      olla_error *err)
{
    memset(r, 0, sizeof *r);
    memset(rep, 0, sizeof *rep);
    r->m = m;
    r->opt = opt;
    r->rep = rep;
    r->err = err;
    r->t0 = olla_clock_start(); /* deadlines count the CPU time of the run */
    r->align = opt->alignment > 0 ? opt->alignment : 1;
    r->peak_cap = -1;
    rep->model = m->path;
    if (opt->keep_order)
        return olla_error_set(err, OLLA_ERR_USAGE, "--keep-order fixes the order: recomputation adds nodes to it");
    olla_status st = build_graph(r);
    if (st == OLLA_OK)
        st = build_dag(r);
    if (st == OLLA_OK)
        st = order_stage(r);
    if (st == OLLA_OK)
        st = runtime_stage(r);
    return st;
}

olla_status olla_tradeoff_curve(const olla_model *m, const olla_options *opt, int n_points, olla_tradeoff *out,
                                olla_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_points < 2)
        return olla_error_set(err, OLLA_ERR_USAGE, "a curve needs at least 2 points");
    olla_report rep;
    run r;
    olla_status st = plan_until_runtime(&r, &rep, m, opt, err);
    if (st == OLLA_OK)
        st = curve(&r, n_points, out);
    if (st != OLLA_OK)
        olla_tradeoff_clear(out);
    olla_report_clear(&rep);
    run_free(&r);
    return st;
}

struct olla_remat_setup {
    run r;
    olla_report rep;
    olla_runtime_view view;
    olla_remat_posed posed;
};

olla_status olla_remat_setup_model(const olla_model *m, const olla_options *opt, olla_remat_setup **out,
                                   olla_error *err)
{
    olla_remat_setup *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning %s", m->path);
    olla_status st = plan_until_runtime(&s->r, &s->rep, m, opt, err);
    if (st == OLLA_OK) {
        run *r = &s->r;
        s->view = (olla_runtime_view){r->have_eg ? r->eg.runs : NULL, r->have_eg ? r->eg.reads_as : NULL};
        olla_remat_input in = {r->g, &r->dag, &r->map, r->have_eg ? &s->view : NULL, base_order(r), 0, 0, 0, 0, 1};
        st = olla_remat_pose(&in, &s->posed, err);
    }
    if (st != OLLA_OK) {
        olla_remat_setup_free(s);
        return st;
    }
    *out = s;
    return OLLA_OK;
}

const olla_remat_posed *olla_remat_setup_posed(const olla_remat_setup *s)
{
    return &s->posed;
}

int64_t olla_remat_setup_peak(const olla_remat_setup *s)
{
    return s->rep.peak_bytes;
}

void olla_remat_setup_free(olla_remat_setup *s)
{
    if (!s)
        return;
    olla_remat_posed_free(&s->posed);
    olla_report_clear(&s->rep);
    run_free(&s->r);
    free(s);
}

olla_status olla_optimize(const olla_model *m, const olla_options *opt, olla_plan **plan_out, olla_report *rep,
                          olla_error *err)
{
    return plan_model(m, opt, -1, plan_out, rep, err);
}
