/* Peaks of the orders ONNX Runtime runs (DEFAULT rule), for one model:
 *
 *   ort_order_bench [--dim NAME=VALUE ...] [--budget N] [--time-limit S] [--print-orders] model.onnx
 *
 * Prints one line of tab-separated fields:
 *   model nodes running
 *   listed_input    peak of the input listing run as listed
 *   ort_input       peak of the order ORT runs for the input listing
 *   planned         peak of olla_schedule's order (the unconstrained best) and its lower bound, status
 *   ort_planned     peak of the order ORT runs when that order is written as the listing
 *   ort_best        peak of the order olla_schedule_for_ort finds (its listing makes ORT run it)
 *   target_runs evaluations stopped_by search_seconds schedule_seconds
 * Peaks: olla_dag_peak on the model's scheduling DAG at alignment 1,
 * without buffer sharing, over the executed order completed with the ops
 * that do not run (olla_exec_complete_order). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/shapes/olla_shapes.h"
#include "solver/olla_schedule.h"
#include "util/olla_clock.h"


typedef struct peak_ctx {
    const olla_exec_graph *eg;
    const olla_dag *dag;
    int *full;
} peak_ctx;

static int64_t executed_peak(void *vctx, const int *executed, int n)
{
    peak_ctx *c = vctx;
    int64_t peak = -1;
    olla_error err = {0};
    (void)n;
    if (olla_exec_complete_order(c->eg, executed, c->full, &err) != OLLA_OK ||
        olla_dag_peak(c->dag, c->full, &peak, NULL, NULL, &err) != OLLA_OK)
        return INT64_MAX;
    return peak;
}

static int64_t ort_peak_of_listing(peak_ctx *c, const int *listing, int *exec)
{
    int n = 0;
    olla_error err = {0};
    if (olla_exec_order_of(c->eg, OLLA_RUNTIME_ORT, listing, exec, &n, &err) != OLLA_OK)
        return -1;
    return executed_peak(c, exec, n);
}

typedef struct bench_args {
    olla_dim_binding dims[16];
    int n_dims;
    long budget;
    double time_limit;
    int print_orders;
    const char *path;
} bench_args;

/* One line "label: name name ..." on stderr. */
static void print_order(const olla_graph *g, const char *label, const int *order, int n)
{
    fprintf(stderr, "%s:", label);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", g->ops[order[i]].name[0] ? g->ops[order[i]].name : g->ops[order[i]].op_type);
    fprintf(stderr, "\n");
}

static int bench(const bench_args *a)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    olla_dag dag = {0};
    olla_exec_graph eg = {0};
    olla_graph_dag_map map = {0};
    olla_shape_options so = {.dims = a->dims, .n_dims = a->n_dims};
    if (olla_model_load(a->path, &m, &err) != OLLA_OK || olla_infer_shapes(m->proto, &so, &types, &err) != OLLA_OK)
        goto fail;
    olla_type_source src = olla_shape_type_source(types);
    if (olla_graph_build(m, &src, &g, &err) != OLLA_OK || olla_graph_dag(g, 1, NULL, &dag, &map, &err) != OLLA_OK ||
        olla_exec_graph_build(g, OLLA_RUNTIME_ORT, NULL, &eg, &err) != OLLA_OK)
        goto fail;
    int n = g->n_ops;
    int *listing = malloc(((size_t)n + 1) * sizeof(int)), *planned = malloc(((size_t)n + 1) * sizeof(int));
    int *exec = malloc(((size_t)n + 1) * sizeof(int)), *best = malloc(((size_t)n + 1) * sizeof(int));
    peak_ctx c = {&eg, &dag, malloc(((size_t)n + 1) * sizeof(int))};
    for (int v = 0; v < n; v++)
        listing[v] = v;
    int64_t listed_input = 0;
    olla_dag_peak(&dag, listing, &listed_input, NULL, NULL, &err);
    int64_t ort_input = ort_peak_of_listing(&c, listing, exec);
    olla_schedule_options so2 = {a->time_limit, 1, 0};
    olla_schedule_result sr;
    if (olla_schedule(&dag, listing, &so2, planned, &sr, &err) != OLLA_OK)
        goto fail;
    int64_t ort_planned = ort_peak_of_listing(&c, planned, exec);
    olla_ort_search_options oo = {a->budget, olla_now() + 600, sr.lower_bound_bytes > 0 ? sr.lower_bound_bytes : -1,
                                  1};
    olla_ort_search_result res;
    olla_ort_problem p = {&eg, listing, planned, executed_peak, &c, NULL, 0, NULL, NULL, NULL};
    if (olla_schedule_for_ort(&p, &oo, best, exec, &res, &err) != OLLA_OK)
        goto fail;
    /* the written listing, simulated afresh */
    int64_t check = ort_peak_of_listing(&c, best, exec);
    if (a->print_orders) {
        print_order(g, "planned", planned, n);
        print_order(g, "ort_best", exec, eg.n_running);
    }
    printf("%s\t%d\t%d\t%lld\t%lld\t%lld\t%lld\t%s\t%lld\t%lld\t%d\t%ld\t%s\t%.3f\t%.3f%s\n", a->path, n,
           eg.n_running, (long long)listed_input, (long long)ort_input, (long long)sr.peak_bytes,
           (long long)sr.lower_bound_bytes, sr.status, (long long)ort_planned, (long long)res.best_cost,
           res.target_runs, res.evaluations, res.stopped_by, res.seconds, sr.seconds,
           check == res.best_cost ? "" : "\tMISMATCH");
    free(listing);
    free(planned);
    free(exec);
    free(best);
    free(c.full);
    olla_exec_graph_free(&eg);
    olla_dag_free(&dag);
    olla_graph_dag_map_free(&map);
    olla_graph_free(g);
    olla_shape_table_free(types);
    olla_model_free(m);
    return 0;
fail:
    fprintf(stderr, "ort_order_bench: %s: %s\n", a->path, err.message);
    return 1;
}

int main(int argc, char **argv)
{
    bench_args a;
    memset(&a, 0, sizeof a);
    a.time_limit = 30;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc && a.n_dims < 16) {
            char *eq = strchr(argv[++i], '=');
            if (!eq)
                return 2;
            *eq = '\0';
            a.dims[a.n_dims].name = argv[i];
            a.dims[a.n_dims++].value = strtoll(eq + 1, NULL, 10);
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            a.budget = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--print-orders") == 0) {
            a.print_orders = 1;
        } else if (strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
            a.time_limit = strtod(argv[++i], NULL);
        } else {
            a.path = argv[i];
        }
    }
    if (!a.path) {
        fprintf(stderr, "usage: ort_order_bench [--dim NAME=VALUE ...] [--budget N] [--time-limit S] model.onnx\n");
        return 2;
    }
    return bench(&a);
}
