/* Prints the order in which a runtime executes a model's nodes, one node per
 * line, as ONNX Runtime's profiler names them: the node's name, or
 * OpType_i for an unnamed node, i its index among the non-Constant nodes of
 * graph.node (ORT's node index).
 *
 *   olla-exec-order [--runtime ort|ort-priority|listed] [--dim NAME=VALUE ...] model.onnx
 *   olla-exec-order --steer SEED OUT.onnx model.onnx
 *   olla-exec-order --search OUT.onnx model.onnx
 *
 * --steer picks an order ONNX Runtime's DEFAULT rule can run (its
 * depth-first search with choices made by keys drawn from SEED), writes the
 * model with the listing that makes ORT run it to OUT.onnx, and prints that
 * order. --search writes the listing olla_schedule_for_ort chooses (the
 * peak of the runtime's DAG as the cost, olla_schedule's order as the
 * target) and prints the order ORT runs for it. Exit 0; 1 when the model
 * cannot be read or written; 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_dag.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/shapes/olla_shapes.h"
#include "solver/olla_schedule.h"

#define MAX_DIMS 32

typedef struct tool_options {
    olla_runtime rt;
    olla_dim_binding dims[MAX_DIMS];
    int n_dims;
    const char *path;
    const char *steer_out; /* NULL: print the executed order of the model as listed */
    unsigned long long steer_seed;
    const char *search_out;
} tool_options;

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "olla-exec-order: %s\n", msg);
    fprintf(stderr, "usage: olla-exec-order [--runtime ort|ort-priority|listed] [--dim NAME=VALUE ...] model.onnx\n"
                    "       olla-exec-order --steer SEED OUT.onnx model.onnx\n"
                    "       olla-exec-order --search OUT.onnx model.onnx\n");
    return 2;
}

/* ORT's index of an op is its position in the listing among the
 * non-Constant ops. */
static void print_names(const olla_graph *g, const int *listing, const int *executed, int n)
{
    int *ort_index = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    if (!ort_index)
        return;
    int k = 0;
    for (int i = 0; i < g->n_ops; i++)
        ort_index[listing[i]] = strcmp(g->ops[listing[i]].op_type, "Constant") == 0 ? -1 : k++;
    for (int i = 0; i < n; i++) {
        const olla_op *o = &g->ops[executed[i]];
        if (o->name && o->name[0])
            printf("%s\n", o->name);
        else
            printf("%s_%d\n", o->op_type, ort_index[executed[i]]);
    }
    free(ort_index);
}

/* A depth-first order with random choices (draws again, up to 100 times,
 * while no valid file runs the drawn order), and the model listed so that
 * ORT runs it; the order goes into executed. */
static olla_status steer(const olla_model *m, const olla_graph *g, const tool_options *o, int *listing, int *executed,
                         int *n, olla_error *err)
{
    olla_exec_graph eg;
    olla_exec_dfs *d = NULL;
    int64_t *key = malloc(((size_t)g->n_ops + 1) * sizeof(int64_t));
    int found = 0;
    olla_status st = key ? olla_exec_graph_build(g, OLLA_RUNTIME_ORT, NULL, &eg, err)
                         : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory");
    if (st != OLLA_OK) {
        free(key);
        return st;
    }
    unsigned long long x = o->steer_seed * 6364136223846793005ULL + 1442695040888963407ULL;
    st = olla_exec_dfs_new(&eg, &d, err);
    for (int attempt = 0; st == OLLA_OK && !found && attempt < 100; attempt++) {
        for (int v = 0; v < g->n_ops; v++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            key[v] = (int64_t)(x >> 33);
        }
        olla_exec_dfs_run(d, key, executed);
        *n = eg.n_running;
        st = olla_exec_listing_for(&eg, executed, *n, NULL, listing, &found, err);
    }
    if (st == OLLA_OK && !found)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "no drawn depth-first order can be written");
    if (st == OLLA_OK)
        st = olla_model_write(m, &(olla_model_edit){listing, g->n_ops, NULL, 0, NULL}, o->steer_out, err);
    olla_exec_dfs_free(d);
    olla_exec_graph_free(&eg);
    free(key);
    return st;
}

typedef struct peak_ctx {
    const olla_exec_graph *eg;
    const olla_dag *dag;
} peak_ctx;

static int64_t executed_peak(void *vctx, const int *executed, int n)
{
    const peak_ctx *c = vctx;
    int64_t peak = INT64_MAX;
    olla_error err = {0};
    (void)n;
    /* ops that do not run have no edges in the runtime's DAG: any place will do */
    int *full = malloc(((size_t)c->eg->n_ops + 1) * sizeof(int));
    if (full && olla_exec_complete_order(c->eg, executed, full, &err) == OLLA_OK)
        olla_dag_peak(c->dag, full, &peak, NULL, NULL, &err);
    free(full);
    return peak;
}

/* The listing olla_schedule_for_ort chooses, written to search_out. */
static olla_status search(const olla_model *m, const olla_graph *g, const tool_options *o, int *listing,
                          int *executed, int *n, olla_error *err)
{
    olla_exec_graph eg;
    olla_dag dag = {0};
    int *gt = NULL, *target = malloc(((size_t)g->n_ops + 1) * sizeof(int)), *input = listing;
    olla_status st = target ? olla_exec_graph_build(g, OLLA_RUNTIME_ORT, NULL, &eg, err)
                            : olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory");
    if (st != OLLA_OK) {
        free(target);
        return st;
    }
    int *out = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    olla_schedule_options so = {5.0, 0, 0};
    olla_schedule_result sr;
    olla_ort_search_options oo = {0, 0, -1, 1};
    olla_ort_search_result res;
    peak_ctx c = {&eg, &dag};
    if (!out)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory");
    if (st == OLLA_OK)
        st = olla_exec_dag(g, &eg, 1, &dag, &gt, err);
    if (st == OLLA_OK)
        st = olla_schedule(&dag, NULL, &so, target, &sr, err);
    olla_ort_problem p = {&eg, input, target, executed_peak, &c, NULL, 0, NULL, NULL, NULL};
    if (st == OLLA_OK)
        st = olla_schedule_for_ort(&p, &oo, out, executed, &res, err);
    if (st == OLLA_OK) {
        *n = eg.n_running;
        memcpy(listing, out, (size_t)g->n_ops * sizeof(int));
        st = olla_model_write(m, &(olla_model_edit){listing, g->n_ops, NULL, 0, NULL}, o->search_out, err);
    }
    free(out);
    free(target);
    free(gt);
    olla_dag_free(&dag);
    olla_exec_graph_free(&eg);
    return st;
}

static int run(const tool_options *o)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    int *listing = NULL, *executed = NULL, n = 0, rc = 1;
    olla_shape_options so = {.dims = o->dims, .n_dims = o->n_dims};
    if (olla_model_load(o->path, &m, &err) != OLLA_OK || olla_infer_shapes(m->proto, &so, &types, &err) != OLLA_OK)
        goto done;
    olla_type_source src = olla_shape_type_source(types);
    if (olla_graph_build(m, &src, &g, &err) != OLLA_OK)
        goto done;
    listing = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    executed = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    if (!listing || !executed) {
        olla_error_set(&err, OLLA_ERR_INTERNAL, "out of memory");
        goto done;
    }
    for (int v = 0; v < g->n_ops; v++)
        listing[v] = v;
    olla_status st;
    if (o->steer_out)
        st = steer(m, g, o, listing, executed, &n, &err);
    else if (o->search_out)
        st = search(m, g, o, listing, executed, &n, &err);
    else
        st = olla_exec_order(g, o->rt, listing, executed, &n, &err);
    if (st != OLLA_OK)
        goto done;
    print_names(g, listing, executed, n);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "olla-exec-order: %s\n", err.message);
    free(listing);
    free(executed);
    olla_graph_free(g);
    olla_shape_table_free(types);
    olla_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    tool_options o;
    memset(&o, 0, sizeof o);
    o.rt = OLLA_RUNTIME_ORT;
    for (int i = 1; i < argc; i++) {
        olla_error err = {0};
        if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc) {
            if (olla_runtime_parse(argv[++i], &o.rt, &err) != OLLA_OK)
                return usage(err.message);
        } else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[++i], '=');
            if (!eq || o.n_dims == MAX_DIMS)
                return usage("--dim takes NAME=VALUE");
            *eq = '\0';
            o.dims[o.n_dims].name = argv[i];
            o.dims[o.n_dims++].value = strtoll(eq + 1, NULL, 10);
        } else if (strcmp(argv[i], "--steer") == 0 && i + 2 < argc) {
            o.steer_seed = strtoull(argv[++i], NULL, 10);
            o.steer_out = argv[++i];
        } else if (strcmp(argv[i], "--search") == 0 && i + 1 < argc) {
            o.search_out = argv[++i];
        } else if (argv[i][0] == '-' || o.path) {
            return usage(NULL);
        } else {
            o.path = argv[i];
        }
    }
    return o.path ? run(&o) : usage("give a model");
}
