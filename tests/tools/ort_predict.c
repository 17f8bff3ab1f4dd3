/* ort_predict: what the model of passes/runtime/olla_ort_memory.h predicts
 * ONNX Runtime allocates for a model, for the tests and benchmarks of
 * tests/ort (the library's users call the API; this only drives it).
 *
 *   ort_predict model.onnx [--dim NAME=VALUE ...] [--order FILE] [--tensors-only] [--decisions]
 *               [--repeat N]
 *
 * The executed order comes from FILE (node names, one a line, as
 * tests/ort/exec_order.mjs prints them: the node's name, or OpType_i for an
 * unnamed node, i its index among the non-Constant nodes), else from ORT's
 * default rule (../shared/notes/ORT_ORDER.md: a depth-first post-order from
 * the leaves, ties by index, Constants and dropped Cast pairs left out),
 * implemented below until the library has its own model of it.
 * (exec_order.mjs also prints the nodes of subgraphs, whose names can clash
 * with the main graph's: give no order file for a model with subgraphs.)
 * --repeat N evaluates the order N times (for timing the evaluation).
 * Prints one JSON line; with --decisions, one line per planned tensor to
 * stderr (position, op, tensor, kind, bytes, the tensor whose buffer it uses,
 * and for a buffer of its own the position after which it is freed, -1 never). Exit 0, 1 on a model or
 * order error, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_bindings.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/runtime/olla_ort_memory.h"
#include "passes/shapes/olla_shapes.h"

#define MAX_DIMS 16

typedef struct tool {
    olla_model *model;
    olla_shape_table *sized_types, *declared_types;
    olla_graph *sized, *declared;
    int *order, n_order;
    unsigned char *dropped; /* per op: a Cast ORT drops at load */
} tool;

static int fail(const char *what, const olla_error *err)
{
    fprintf(stderr, "ort_predict: %s: %s\n", what, err ? err->message : "");
    return 1;
}

/* ---------------------------------------------------------------- dropped Casts */

enum { G_FLOAT, G_INT, G_UINT, G_BOOL, G_OTHER };

static int type_group(int32_t t)
{
    switch (t) {
    case 1: case 10: case 11: case 16: return G_FLOAT;
    case 3: case 5: case 6: case 7: return G_INT;
    case 2: case 4: case 12: case 13: return G_UINT;
    case 9: return G_BOOL;
    default: return G_OTHER;
    }
}

/* RemoveDuplicateCastTransformer's UnsafeCast (insert_cast_transformer.cc). */
static int unsafe_cast(int32_t src, int32_t dst)
{
    int gs = type_group(src), gd = type_group(dst);
    int bs = olla_elem_type_bits(src), bd = olla_elem_type_bits(dst);
    if (gs == G_OTHER || gd == G_OTHER)
        return 1;
    if (gs != G_BOOL && gs != G_UINT && gd == G_UINT)
        return 1;
    if (gs == G_FLOAT && gd != G_FLOAT)
        return 1;
    if (gs == G_UINT && gd == G_INT)
        return bd <= bs;
    if ((gs == G_INT || gs == G_UINT) && gd == G_FLOAT)
        return bd <= bs;
    return bs > bd;
}

static int32_t elem_of(const olla_graph *g, int t)
{
    return t >= 0 ? g->tensors[t].type.elem_type : 0;
}

/* Marks Cast pairs A -> B with B casting back to A's input type and neither
 * output a graph output; both are dropped when A's cast loses nothing and A
 * feeds only such Casts (the common case of RemoveDuplicateCastTransformer). */
static void mark_dropped_casts(tool *t)
{
    const olla_graph *g = t->sized;
    for (int op = 0; op < g->n_ops; op++) {
        const olla_op *a = &g->ops[op];
        if (strcmp(a->op_type, "Cast") != 0 || a->n_outputs < 1 || a->n_inputs < 1)
            continue;
        int in = g->input_list[a->first_input], out = g->output_list[a->first_output];
        if (in < 0 || out < 0 || g->tensors[out].is_output || g->tensors[out].n_consumers == 0 ||
            unsafe_cast(elem_of(g, in), elem_of(g, out)))
            continue;
        int all_pairs = 1;
        for (int c = 0; c < g->tensors[out].n_consumers && all_pairs; c++) {
            int b = g->consumer_list[g->tensors[out].first_consumer + c];
            int bout = g->output_list[g->ops[b].first_output];
            all_pairs = strcmp(g->ops[b].op_type, "Cast") == 0 && bout >= 0 && !g->tensors[bout].is_output &&
                        elem_of(g, bout) == elem_of(g, in);
        }
        if (!all_pairs)
            continue;
        t->dropped[op] = 1;
        for (int c = 0; c < g->tensors[out].n_consumers; c++)
            t->dropped[g->consumer_list[g->tensors[out].first_consumer + c]] = 1;
    }
}

/* ---------------------------------------------------------------- ORT's default order */

static int is_constant(const olla_graph *g, int op)
{
    return strcmp(g->ops[op].op_type, "Constant") == 0;
}

/* The op that produces what input t is in ORT's graph (through dropped Casts), or -1. */
static int ort_producer(const tool *t, int tensor)
{
    const olla_graph *g = t->sized;
    while (tensor >= 0) {
        int p = g->tensors[tensor].producer;
        if (p < 0 || is_constant(g, p))
            return -1;
        if (!t->dropped[p])
            return p;
        tensor = g->input_list[g->ops[p].first_input];
    }
    return -1;
}

typedef struct frame_item {
    int op, leave;
} frame_item;

/* Ascending proto index (insertion sort: a node has few producers), so the
 * highest index ends on top of the stack. */
static void sort_by_proto(const olla_graph *g, frame_item *a, int n)
{
    for (int i = 1; i < n; i++) {
        frame_item x = a[i];
        int j = i - 1;
        while (j >= 0 && g->ops[a[j].op].proto_index > g->ops[x.op].proto_index) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
}

/* ReverseDFSFrom the leaves with ORT's index order (proto order): leaves and
 * producers pushed ascending, so the highest index is expanded first. */
static int default_order(tool *t)
{
    const olla_graph *g = t->sized;
    int n = g->n_ops;
    int *has_reader = calloc((size_t)n + 1, sizeof(int)), *by_proto = malloc(((size_t)n + 1) * sizeof(int));
    unsigned char *visited = calloc((size_t)n + 1, 1);
    frame_item *stack = malloc(((size_t)g->n_ops * 2 + (size_t)g->n_tensors + 16) * sizeof *stack);
    t->order = malloc(((size_t)n + 1) * sizeof(int));
    if (!has_reader || !by_proto || !visited || !stack || !t->order)
        return 0;
    for (int op = 0; op < n; op++) {
        by_proto[g->ops[op].proto_index] = op;
        for (int k = 0; k < g->ops[op].n_inputs; k++) {
            int p = ort_producer(t, g->input_list[g->ops[op].first_input + k]);
            if (p >= 0 && !t->dropped[op])
                has_reader[p] = 1;
        }
    }
    int sp = 0;
    for (int i = 0; i < n; i++) {
        int op = by_proto[i];
        if (!is_constant(g, op) && !t->dropped[op] && !has_reader[op])
            stack[sp++] = (frame_item){op, 0};
    }
    while (sp > 0) {
        frame_item it = stack[--sp];
        if (it.leave) {
            t->order[t->n_order++] = it.op;
            continue;
        }
        if (visited[it.op])
            continue;
        visited[it.op] = 1;
        stack[sp++] = (frame_item){it.op, 1};
        int first = sp;
        for (int k = 0; k < g->ops[it.op].n_inputs; k++) {
            int p = ort_producer(t, g->input_list[g->ops[it.op].first_input + k]);
            int dup = 0;
            for (int j = first; j < sp && !dup; j++)
                dup = stack[j].op == p;
            if (p >= 0 && !visited[p] && !dup)
                stack[sp++] = (frame_item){p, 0};
        }
        sort_by_proto(g, stack + first, sp - first);
    }
    free(has_reader);
    free(by_proto);
    free(visited);
    free(stack);
    return 1;
}

/* ---------------------------------------------------------------- order from a file */

static int op_by_ort_name(const tool *t, const char *name)
{
    const olla_graph *g = t->sized;
    int n = g->n_ops, ort_index = 0;
    int *by_proto = malloc(((size_t)n + 1) * sizeof(int));
    if (!by_proto)
        return -1;
    for (int op = 0; op < n; op++)
        by_proto[g->ops[op].proto_index] = op;
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        int op = by_proto[i];
        if (is_constant(g, op))
            continue;
        char unnamed[256];
        snprintf(unnamed, sizeof unnamed, "%s_%d", g->ops[op].op_type, ort_index++);
        const char *nm = g->ops[op].name;
        if ((nm && nm[0] && strcmp(nm, name) == 0) || ((!nm || !nm[0]) && strcmp(unnamed, name) == 0))
            found = op;
    }
    free(by_proto);
    return found;
}

static int read_order(tool *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "ort_predict: cannot open order file '%s'\n", path);
        return 0;
    }
    t->order = malloc(((size_t)t->sized->n_ops + 1) * sizeof(int));
    char line[4096];
    int ok = t->order != NULL;
    while (ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0])
            continue;
        int op = op_by_ort_name(t, line);
        if (op < 0 || t->n_order >= t->sized->n_ops) {
            fprintf(stderr, "ort_predict: '%s' in %s names no node of the model (or too many lines)\n", line, path);
            ok = 0;
        } else {
            t->order[t->n_order++] = op;
        }
    }
    fclose(f);
    return ok;
}

/* ---------------------------------------------------------------- main */

static int build(tool *t, const char *path, const olla_dim_binding *dims, int n_dims, olla_error *err)
{
    olla_shape_options with = {.dims = dims, .n_dims = n_dims}, without = {0};
    if (olla_model_load(path, &t->model, err) != OLLA_OK ||
        olla_infer_shapes(t->model->proto, &with, &t->sized_types, err) != OLLA_OK ||
        olla_infer_shapes(t->model->proto, &without, &t->declared_types, err) != OLLA_OK)
        return 0;
    olla_type_source s1 = olla_shape_type_source(t->sized_types), s2 = olla_shape_type_source(t->declared_types);
    if (olla_graph_build(t->model, &s1, &t->sized, err) != OLLA_OK ||
        olla_graph_build(t->model, &s2, &t->declared, err) != OLLA_OK)
        return 0;
    t->dropped = calloc((size_t)t->sized->n_ops + 1, 1);
    return t->dropped != NULL;
}

static void print_decisions(const tool *t, const olla_ort_memory *m)
{
    static const char *kinds[] = {"not-planned", "own", "output", "alias", "inplace", "reused"};
    for (int i = 0; i < t->n_order; i++) {
        const olla_op *o = &t->sized->ops[t->order[i]];
        for (int k = 0; k < o->n_outputs; k++) {
            int x = t->sized->output_list[o->first_output + k];
            if (x < 0)
                continue;
            int b = olla_ort_memory_buffer_of(m, x);
            fprintf(stderr, "%d %s %s %s %lld %s %d\n", i, o->op_type, t->sized->tensors[x].name,
                    kinds[olla_ort_memory_buffer_kind(m, x)], (long long)t->sized->tensors[x].bytes,
                    b >= 0 ? t->sized->tensors[b].name : "-", olla_ort_memory_release_step(m, x));
        }
    }
}

static void tool_free(tool *t)
{
    olla_graph_free(t->sized);
    olla_graph_free(t->declared);
    olla_shape_table_free(t->sized_types);
    olla_shape_table_free(t->declared_types);
    olla_model_free(t->model);
    free(t->order);
    free(t->dropped);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *order_file = NULL;
    olla_dim_binding dims[MAX_DIMS];
    int n_dims = 0, tensors_only = 0, decisions = 0, repeat = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc && n_dims < MAX_DIMS) {
            char *eq = strchr(argv[++i], '=');
            if (!eq)
                return fprintf(stderr, "ort_predict: --dim takes NAME=VALUE\n"), 2;
            *eq = 0;
            dims[n_dims++] = (olla_dim_binding){argv[i], atoll(eq + 1)};
        } else if (strcmp(argv[i], "--order") == 0 && i + 1 < argc) {
            order_file = argv[++i];
        } else if (strcmp(argv[i], "--tensors-only") == 0) {
            tensors_only = 1;
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--decisions") == 0) {
            decisions = 1;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            path = NULL;
            break;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: ort_predict model.onnx [--dim NAME=VALUE ...] [--order FILE] [--tensors-only] "
                        "[--decisions] [--repeat N]\n");
        return 2;
    }
    tool t = {0};
    olla_error err = {0};
    int rc = 0;
    olla_ort_memory *m = NULL;
    olla_ort_memory_result r;
    olla_ort_memory_options opt = tensors_only ? olla_ort_memory_tensors_only() : olla_ort_memory_measured();
    if (!build(&t, path, dims, n_dims, &err))
        rc = fail(path, &err);
    else if (order_file ? !read_order(&t, order_file) : (mark_dropped_casts(&t), !default_order(&t)))
        rc = 1;
    else if (olla_ort_memory_new(t.sized, t.declared, &opt, &m, &err) != OLLA_OK)
        rc = fail(path, &err);
    for (int i = 0; rc == 0 && i < (repeat > 0 ? repeat : 1); i++)
        if (olla_ort_memory_eval(m, t.order, t.n_order, &r, &err) != OLLA_OK)
            rc = fail(path, &err);
    if (rc == 0) {
        printf("{\"predicted_peak_bytes\":%lld,\"peak_step\":%d,\"tensor_bytes\":%lld,\"scratch_bytes\":%lld,"
               "\"bookkeeping_bytes\":%lld,\"buffers\":%d,\"executed\":%d,\"subgraph_ops\":%d}\n",
               (long long)r.peak_bytes, r.peak_step, (long long)r.tensor_bytes, (long long)r.scratch_bytes,
               (long long)r.bookkeeping_bytes, r.n_buffers, t.n_order, r.n_subgraph_ops);
        if (decisions)
            print_decisions(&t, m);
    }
    olla_ort_memory_free(m);
    tool_free(&t);
    return rc;
}
