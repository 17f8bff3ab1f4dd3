/* olla-onnx: the planning pipeline: graph, order, lifetimes, placement,
 * verification. */
#include "olla.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/shapes/olla_shapes.h"
#include "pipeline/olla_stages.h"
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
    free(plan->entries);
    free(plan->live_input);
    free(plan->live_planned);
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

/* Lists tensors whose size waits on an unbound symbolic dimension. */
static olla_status check_symbolic(const olla_graph *g, olla_error *err)
{
    char names[600] = "", dims[300] = "";
    int count = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes >= 0 || ten->type.rank < 0)
            continue;
        const char *sym = NULL;
        for (int d = 0; d < ten->type.rank && !sym; d++)
            if (ten->type.dims[d].value < 0 && ten->type.dims[d].param)
                sym = ten->type.dims[d].param;
        if (!sym)
            continue;
        if (count < 3) {
            size_t n = strlen(names);
            snprintf(names + n, sizeof names - n, "%s'%s'", count ? ", " : "", ten->name);
        }
        count++;
        for (int d = 0; d < ten->type.rank; d++) {
            const char *p = ten->type.dims[d].param;
            if (ten->type.dims[d].value >= 0 || !p)
                continue;
            char key[128];
            snprintf(key, sizeof key, " --dim %s=N", p);
            if (!strstr(dims, key) && strlen(dims) + strlen(key) + 1 < sizeof dims)
                strcat(dims, key);
        }
    }
    if (!count)
        return OLLA_OK;
    return olla_error_set(err, OLLA_ERR_INPUT,
                          "%s: %d tensor%s (%s%s) %s symbolic dimensions with no value; pass%s",
                          g->model->path, count, count == 1 ? "" : "s", names, count > 3 ? ", ..." : "",
                          count == 1 ? "has" : "have", dims);
}

/* A tensor of unknown size cannot be planned; unless the user accepts leaving
 * it out, that is an error naming it. Sequences, maps and optionals are never
 * planned and are not errors. */
static olla_status check_unknown(const olla_graph *g, olla_error *err)
{
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes >= 0 || ten->type.kind != OLLA_VALUE_TENSOR)
            continue;
        if (ten->type.elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING)
            continue; /* strings have no fixed size: never planned, listed in the report */
        char l[300];
        if (ten->unknown_reason)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: cannot plan %s, or pass --allow-unknown-sizes to leave it out of the plan",
                                  g->model->path, ten->unknown_reason);
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: cannot plan '%s' (output of node %s): its size is unknown; declare its shape in value_info, or pass "
                              "--allow-unknown-sizes to leave it out of the plan",
                              g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l));
    }
    return OLLA_OK;
}

/* What users get today: the input order served by an online caching
 * allocator (512-byte rounding, best fit, split and coalesce, a new segment
 * when nothing fits). first/last are scratch arrays of n_tensors. */
static olla_status simulate_online(const olla_graph *g, const olla_dag *dag, const int *gt, const int *input_order,
                                   int *first, int *last, olla_report *rep, olla_error *err)
{
    olla_dag_lifetimes(dag, input_order, first, last);
    olla_buffer *bufs = malloc(((size_t)dag->n_tensors + 1) * sizeof *bufs);
    if (!bufs)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory simulating the online allocator");
    size_t n = 0;
    for (int e = 0; e < dag->n_tensors; e++) {
        int64_t bytes = g->tensors[gt[e]].bytes;
        if (bytes <= 0)
            continue;
        bufs[n].lower = first[e];
        bufs[n].upper = (int64_t)last[e] + 1;
        bufs[n].size = bytes;
        bufs[n++].offset = 0;
    }
    int64_t reserved = 0, in_use = 0;
    olla_status st = olla_online_alloc_simulate(bufs, n, &reserved, &in_use, err);
    free(bufs);
    if (st != OLLA_OK)
        return st;
    rep->input_order_online_arena_bytes = reserved;
    rep->input_order_fragmentation = reserved > 0 ? (double)(reserved - in_use) / (double)reserved : 0.0;
    return OLLA_OK;
}

/* --joint: order and addresses in one ILP, from the two-step plan in order
 * and dag_offset. Kept only when its arena is strictly smaller; then order,
 * dag_offset, first, last, the planned live bytes and the report follow it.
 * A failure of the joint solve leaves the two-step plan in place. */
static olla_status try_joint(const olla_dag *dag, const olla_options *opt, int64_t align, double t0, int *order, int64_t *dag_offset,
                             int *first, int *last, olla_plan *plan, olla_report *rep, olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    if (opt->keep_order) {
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: joint ILP skipped: --keep-order fixes the order\n");
        return OLLA_OK;
    }
    if (rep->lower_bound_bytes >= 0 && rep->arena_bytes <= rep->lower_bound_bytes) {
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: joint ILP skipped: the arena already equals the lower bound on the peak\n");
        return OLLA_OK;
    }
    long cols = 0;
    int fits = 0;
    olla_error jerr = {0};
    if (olla_joint_columns(dag, &cols, &fits, &jerr) != OLLA_OK || !fits) {
        if (opt->verbosity >= 2) {
            if (cols < 0)
                fprintf(stderr, "olla: joint ILP skipped: %d nodes, above its limit of %d; the two-step plan is kept\n",
                        n, OLLA_JOINT_MAX_NODES);
            else
                fprintf(stderr,
                        "olla: joint ILP skipped: %ld columns for %d nodes, above its limit of %ld; the two-step plan "
                        "is kept\n",
                        cols, n, OLLA_JOINT_MAX_COLS);
        }
        return OLLA_OK;
    }
    double left = opt->time_limit > 0 ? opt->time_limit - (olla_now() - t0) : 0;
    if (opt->time_limit > 0 && left < 0.2) {
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: joint ILP skipped: the time limit is used up\n");
        return OLLA_OK;
    }
    int *jorder = malloc(((size_t)n + 1) * sizeof(int));
    int64_t *joff = malloc(((size_t)nt + 1) * sizeof(int64_t));
    if (!jorder || !joff) {
        free(jorder);
        free(joff);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in the joint ILP");
    }
    int64_t jarena = 0;
    int proven = 0;
    double tj = olla_now();
    olla_status st = olla_joint_solve(dag, order, dag_offset, align, left, jorder, joff, &jarena, &proven, &jerr);
    if (st != OLLA_OK) {
        if (opt->verbosity >= 1)
            fprintf(stderr, "olla-onnx: warning: joint ILP failed (%s); the two-step plan is kept\n", jerr.message);
    } else {
        if (opt->verbosity >= 2)
            fprintf(stderr, "olla: joint ILP: %ld columns, arena %lld (two-step %lld)%s, %.2f s\n", cols,
                    (long long)jarena, (long long)rep->arena_bytes, proven ? ", proven optimal" : "",
                    olla_now() - tj);
        if (jarena < rep->arena_bytes) {
            memcpy(order, jorder, (size_t)n * sizeof(int));
            memcpy(dag_offset, joff, (size_t)nt * sizeof(int64_t));
            olla_dag_lifetimes(dag, order, first, last);
            rep->peak_bytes = olla_dag_peak(dag, order, plan->live_planned, NULL);
            rep->arena_bytes = jarena;
            rep->joint_used = 1;
            /* the report's statuses keep their four values; joint_used tells */
            rep->schedule_status = proven ? "optimal" : "feasible";
            rep->placement_status = proven ? "optimal" : "feasible";
        }
    }
    free(jorder);
    free(joff);
    return OLLA_OK;
}

static void progress(const olla_options *opt, const char *phase, double t0, int64_t best, int64_t bound)
{
    if (opt->progress)
        opt->progress(opt->progress_ctx, phase, olla_now() - t0, best, bound);
}

/* A shape whose size overflows 64 bits is bad input, never just unknown. */
static olla_status check_overflow(const olla_graph *g, olla_error *err)
{
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0)
            continue;
        char l[300];
        if (ten->type.kind == OLLA_VALUE_TENSOR && olla_value_bytes(&ten->type) == -2) {
            char dims[400] = "";
            for (int d = 0; d < ten->type.rank; d++) {
                size_t k = strlen(dims);
                snprintf(dims + k, sizeof dims - k, "%s%lld", d ? ", " : "", (long long)ten->type.dims[d].value);
            }
            const char *et = olla_elem_type_name(ten->type.elem_type);
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: tensor '%s' (output of node %s) has shape [%s] of %s, whose size in bytes overflows 64 bits; "
                                  "check its declared dimensions",
                                  g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l), dims,
                                  et ? et : "?");
        }
    }
    return OLLA_OK;
}

/* Every sum of tensor sizes the planner forms must stay far from 64-bit
 * overflow: the planned tensors together are limited to 2^61 bytes. */
static olla_status check_total(const olla_graph *g, int64_t align, olla_error *err)
{
    const int64_t limit = INT64_MAX / 4;
    int64_t total = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes < 0)
            continue;
        int64_t b = ten->bytes > limit ? limit + 1 : olla_align_up(ten->bytes, align);
        if (b > limit - total)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: the planned tensors need more than 2^61 bytes together (the limit is passed at "
                                  "'%s'); check the declared dimensions",
                                  g->model->path, ten->name);
        total += b;
    }
    return OLLA_OK;
}

/* The plan records what it was made for: the bindings given and the shape of
 * every graph input fed at run time (sized ones; an input of unknown size
 * plans nothing that depends on it). */
static olla_status record_bindings(const olla_graph *g, const olla_options *opt, olla_plan *plan, olla_error *err)
{
    plan->dims = calloc((size_t)opt->n_dims + 1, sizeof *plan->dims);
    plan->inputs = calloc((size_t)g->n_graph_inputs + 1, sizeof *plan->inputs);
    if (!plan->dims || !plan->inputs)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory recording the plan's bindings");
    for (int i = 0; i < opt->n_dims; i++) {
        plan->dims[i].value = opt->dims[i].value;
        if (!(plan->dims[i].name = strdup(opt->dims[i].name)))
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory recording the plan's bindings");
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
            return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory recording the plan's bindings");
        }
        for (int d = 0; d < t->type.rank; d++)
            dims[d] = t->type.dims[d].value;
        in->rank = t->type.rank;
        in->dims = dims;
        plan->n_inputs++;
    }
    return OLLA_OK;
}

olla_status olla_optimize(const olla_model *m, const olla_options *opt, olla_plan **plan_out, olla_report *rep,
                          olla_error *err)
{
    double t0 = olla_now();
    progress(opt, "shapes", t0, -1, -1);
    *plan_out = NULL;
    memset(rep, 0, sizeof *rep);
    rep->model = m->path;
    rep->lower_bound_bytes = -1;
    int64_t align = opt->alignment > 0 ? opt->alignment : 1;
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    olla_dag dag = {0};
    int *gt = NULL, *input_order = NULL, *order = NULL, *first = NULL, *last = NULL;
    olla_plan *plan = NULL;
    int64_t *offset = NULL, *bytes = NULL;
    olla_shape_options so = {.dims = opt->dims, .n_dims = opt->n_dims, .strict = opt->strict_shapes,
                             .input_shapes = opt->input_shapes, .n_input_shapes = opt->n_input_shapes};
    olla_status st = olla_infer_shapes(m->proto, &so, &types, err);
    if (st != OLLA_OK)
        goto done;
    olla_type_source src = olla_shape_type_source(types);
    progress(opt, "graph", t0, -1, -1);
    if ((rep->n_warnings = (int)olla_shape_warning_count(types)) > 0) {
        rep->warnings = calloc((size_t)rep->n_warnings, sizeof(char *));
        if (!rep->warnings) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory");
            goto done;
        }
        for (int i = 0; i < rep->n_warnings; i++)
            rep->warnings[i] = strdup(olla_shape_warning_at(types, (size_t)i));
    }
    if ((st = olla_graph_build(m, &src, &g, err)) != OLLA_OK)
        goto done;
    if ((st = check_symbolic(g, err)) != OLLA_OK)
        goto done;
    if ((st = check_overflow(g, err)) != OLLA_OK)
        goto done;
    if (!opt->allow_unknown_sizes && (st = check_unknown(g, err)) != OLLA_OK)
        goto done;
    if ((st = check_total(g, align, err)) != OLLA_OK)
        goto done;
    rep->nodes = g->n_ops;
    rep->tensors = g->n_tensors;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0) {
            if (ten->bytes > 0) /* saturating: inputs may declare anything */
                rep->constant_bytes = ten->bytes > INT64_MAX - rep->constant_bytes ? INT64_MAX
                                                                                  : rep->constant_bytes + ten->bytes;
        } else if (ten->bytes >= 0) {
            rep->planned_tensors++;
        } else {
            rep->n_unknown++;
        }
    }
    if (rep->n_unknown) {
        rep->unknown_names = calloc((size_t)rep->n_unknown, sizeof(char *));
        rep->unknown_reasons = calloc((size_t)rep->n_unknown, sizeof(char *));
        if (!rep->unknown_names || !rep->unknown_reasons) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory");
            goto done;
        }
        int k = 0;
        for (int t = 0; t < g->n_tensors; t++)
            if (g->tensors[t].producer >= 0 && g->tensors[t].bytes < 0) {
                rep->unknown_names[k] = g->tensors[t].name;
                /* the reason lives in the shape table, freed before the report */
                const char *why = g->tensors[t].unknown_reason;
                rep->unknown_reasons[k++] = strdup(why ? why : "unknown");
            }
    }
    if ((st = olla_graph_dag(g, align, &dag, &gt, err)) != OLLA_OK)
        goto done;
    int n = g->n_ops, nt = dag.n_tensors;
    input_order = malloc(((size_t)n + 1) * sizeof(int));
    order = malloc(((size_t)n + 1) * sizeof(int));
    first = malloc(((size_t)nt + 1) * sizeof(int));
    last = malloc(((size_t)nt + 1) * sizeof(int));
    offset = malloc(((size_t)g->n_tensors + 1) * sizeof(int64_t));
    bytes = calloc((size_t)g->n_tensors + 1, sizeof(int64_t));
    plan = calloc(1, sizeof *plan);
    if (!input_order || !order || !first || !last || !offset || !bytes || !plan) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning %s", m->path);
        goto done;
    }
    if ((st = olla_dag_stable_topo(&dag, input_order, err)) != OLLA_OK)
        goto done;
    plan->live_input = malloc(((size_t)n + 1) * sizeof(int64_t));
    plan->live_planned = malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!plan->live_input || !plan->live_planned) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning %s", m->path);
        goto done;
    }
    rep->input_order_peak_bytes = olla_dag_peak(&dag, input_order, plan->live_input, NULL);
    if ((st = simulate_online(g, &dag, gt, input_order, first, last, rep, err)) != OLLA_OK)
        goto done;

    /* lifetimes */
    progress(opt, "ordering", t0, rep->input_order_peak_bytes, -1);
    double ts = olla_now();
    olla_order_result ores;
    if ((st = olla_stage_order(&dag, input_order, opt, order, &ores, err)) != OLLA_OK)
        goto done;
    rep->schedule_seconds = olla_now() - ts;
    rep->peak_bytes = ores.peak_bytes;
    rep->heuristic_peak_bytes = ores.heuristic_peak_bytes;
    rep->lower_bound_bytes = ores.lower_bound_bytes;
    rep->schedule_status = ores.status;
    plan->lower_bound = ores.lower_bound_bytes;
    olla_dag_peak(&dag, order, plan->live_planned, NULL);

    /* locations */
    progress(opt, "placement", t0, ores.peak_bytes, ores.lower_bound_bytes);
    double tp = olla_now();
    olla_dag_lifetimes(&dag, order, first, last);
    for (int t = 0; t < g->n_tensors; t++)
        offset[t] = -1;
    double left = opt->time_limit > 0 ? opt->time_limit - (olla_now() - t0) : 0;
    olla_place_input pin = {&dag, first, last, align, opt->time_limit > 0 ? (left > 0.1 ? left : 0.1) : 0, opt};
    int64_t *dag_offset = malloc(((size_t)nt + 1) * sizeof(int64_t));
    olla_place_outcome pout;
    if (!dag_offset) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning %s", m->path);
        goto done;
    }
    st = olla_stage_place(&pin, dag_offset, &pout, err);
    if (st != OLLA_OK) {
        free(dag_offset);
        goto done;
    }
    rep->arena_bytes = pout.arena_bytes;
    rep->placement_status = pout.status;
    if (opt->joint && (st = try_joint(&dag, opt, align, t0, order, dag_offset, first, last, plan, rep, err)) != OLLA_OK) {
        free(dag_offset);
        goto done;
    }
    rep->placement_seconds = olla_now() - tp;
    pout.arena_bytes = rep->arena_bytes;

    /* the plan, in allocation order */
    plan->n_nodes = n;
    plan->order = order;
    order = NULL;
    plan->alignment = align;
    plan->arena_bytes = pout.arena_bytes;
    plan->entries = malloc(((size_t)nt + 1) * sizeof *plan->entries);
    if (!plan->entries) {
        free(dag_offset);
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory planning %s", m->path);
        goto done;
    }
    for (int s = 0; s < n; s++) {
        int v = plan->order[s];
        for (int o = dag.out_start[v]; o < dag.out_start[v + 1]; o++) {
            int e = dag.out_list[o], t = gt[e];
            if (g->tensors[t].bytes < 0)
                continue;
            olla_plan_entry *pe = &plan->entries[plan->n_entries++];
            pe->tensor = t;
            pe->name = g->tensors[t].name;
            pe->offset = dag_offset[e];
            pe->bytes = olla_align_up(g->tensors[t].bytes, align);
            pe->first_step = first[e];
            pe->last_step = last[e];
            offset[t] = pe->offset;
            bytes[t] = pe->bytes;
        }
    }
    free(dag_offset);
    /* every plan is checked before anyone sees it */
    progress(opt, "checking", t0, plan->arena_bytes, -1);
    st = olla_plan_verify(g, plan->order, offset, bytes, plan->arena_bytes, align, err);
    if (st != OLLA_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        olla_error_clear(err);
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the plan failed its check: %s", msg);
        goto done;
    }
    if ((st = record_bindings(g, opt, plan, err)) != OLLA_OK)
        goto done;
    /* node indices of the graph are proto indices */
    rep->total_seconds = olla_now() - t0;
    *plan_out = plan;
    plan = NULL;
done:
    if (st != OLLA_OK)
        olla_report_clear(rep);
    olla_plan_free(plan);
    free(offset);
    free(bytes);
    free(input_order);
    free(order);
    free(first);
    free(last);
    free(gt);
    olla_dag_free(&dag);
    olla_graph_free(g);
    olla_shape_table_free(types);
    return st;
}
