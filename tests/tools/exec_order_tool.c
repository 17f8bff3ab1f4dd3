/* Prints the order in which a runtime executes a model's nodes, one node per
 * line, as ONNX Runtime's profiler names them: the node's name, or
 * OpType_i for an unnamed node, i its index among the non-Constant nodes of
 * graph.node (ORT's node index).
 *
 *   olla-exec-order [--runtime ort|ort-priority|listed] [--dim NAME=VALUE ...] model.onnx
 *
 * Exit 0; 1 when the model cannot be read; 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/shapes/olla_shapes.h"

#define MAX_DIMS 32

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "olla-exec-order: %s\n", msg);
    fprintf(stderr, "usage: olla-exec-order [--runtime ort|ort-priority|listed] [--dim NAME=VALUE ...] model.onnx\n");
    return 2;
}

static void print_names(const olla_graph *g, const int *executed, int n)
{
    int *ort_index = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    if (!ort_index)
        return;
    int k = 0;
    for (int v = 0; v < g->n_ops; v++)
        ort_index[v] = strcmp(g->ops[v].op_type, "Constant") == 0 ? -1 : k++;
    for (int i = 0; i < n; i++) {
        const olla_op *o = &g->ops[executed[i]];
        if (o->name && o->name[0])
            printf("%s\n", o->name);
        else
            printf("%s_%d\n", o->op_type, ort_index[executed[i]]);
    }
    free(ort_index);
}

static int run(const char *path, olla_runtime rt, const olla_dim_binding *dims, int n_dims)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    int *listing = NULL, *executed = NULL, n = 0, rc = 1;
    olla_shape_options so = {dims, n_dims, 0};
    if (olla_model_load(path, &m, &err) != OLLA_OK || olla_infer_shapes(m->proto, &so, &types, &err) != OLLA_OK)
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
    if (olla_exec_order(g, rt, listing, executed, &n, &err) != OLLA_OK)
        goto done;
    print_names(g, executed, n);
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
    olla_runtime rt = OLLA_RUNTIME_ORT;
    olla_dim_binding dims[MAX_DIMS];
    int n_dims = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        olla_error err = {0};
        if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc) {
            if (olla_runtime_parse(argv[++i], &rt, &err) != OLLA_OK)
                return usage(err.message);
        } else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[++i], '=');
            if (!eq || n_dims == MAX_DIMS)
                return usage("--dim takes NAME=VALUE");
            *eq = '\0';
            dims[n_dims].name = argv[i];
            dims[n_dims++].value = strtoll(eq + 1, NULL, 10);
        } else if (argv[i][0] == '-' || path) {
            return usage(NULL);
        } else {
            path = argv[i];
        }
    }
    return path ? run(path, rt, dims, n_dims) : usage("give a model");
}
