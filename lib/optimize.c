/* olla-onnx: the planning pipeline: graph, order, lifetimes, placement,
 * verification. */
#include "olla.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/olla_stages.h"
#include "lib/olla_time.h"
#include "lib/olla_verify.h"
#include "passes/olla_graph_dag.h"

void olla_options_init(olla_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->time_limit = 60.0;
    opt->alignment = 64;
    opt->verbosity = 1;
}

void olla_plan_free(olla_plan *plan)
{
    if (!plan)
        return;
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
        char l[300];
        if (ten->unknown_reason)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: cannot size %s, or pass --allow-unknown-sizes to leave it out of the plan",
                                  g->model->path, ten->unknown_reason);
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: cannot size '%s' (output of node %s); declare its shape in value_info, or pass "
                              "--allow-unknown-sizes to leave it out of the plan",
                              g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l));
    }
    return OLLA_OK;
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

olla_status olla_optimize(const olla_model *m, const olla_options *opt, olla_plan **plan_out, olla_report *rep,
                          olla_error *err)
{
    double t0 = olla_now();
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
    olla_shape_options so = {opt->dims, opt->n_dims, 0};
    olla_status st = olla_infer_shapes(m->proto, &so, &types, err);
    if (st != OLLA_OK)
        goto done;
    olla_type_source src = olla_graph_types_from_shapes(types);
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

    /* lifetimes */
    double ts = olla_now();
    olla_order_result ores;
    if ((st = olla_stage_order(&dag, input_order, opt, order, &ores, err)) != OLLA_OK)
        goto done;
    rep->schedule_seconds = olla_now() - ts;
    rep->peak_bytes = ores.peak_bytes;
    rep->lower_bound_bytes = ores.lower_bound_bytes;
    rep->schedule_status = ores.status;
    plan->lower_bound = ores.lower_bound_bytes;
    olla_dag_peak(&dag, order, plan->live_planned, NULL);

    /* locations */
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
    rep->placement_seconds = olla_now() - tp;
    rep->arena_bytes = pout.arena_bytes;
    rep->placement_status = pout.status;

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
    st = olla_plan_verify(g, plan->order, offset, bytes, plan->arena_bytes, align, err);
    if (st != OLLA_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        olla_error_clear(err);
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the plan failed its check: %s", msg);
        goto done;
    }
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
