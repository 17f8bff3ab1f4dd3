/* ort_predict: what the model of passes/runtime/olla_ort_memory.h predicts
 * ONNX Runtime allocates for a model, for the tests and benchmarks of
 * tests/ort (the library's users call the API; this only drives it).
 *
 *   ort_predict model.onnx [--dim NAME=VALUE ...] [--order FILE] [--tensors-only] [--decisions]
 *               [--repeat N] [--arena on|off] [--extend pow2|same] [--pattern on|off] [--runs N]
 *
 * The executed order comes from FILE (node names, one a line, as
 * tests/ort/exec_order.mjs prints them: the node's name, or OpType_i for an
 * unnamed node, i its index among the non-Constant nodes), else from ORT's
 * default rule (../shared/notes/ORT_ORDER.md: a depth-first post-order from
 * the leaves, ties by index, Constants and dropped Casts left out), as the
 * library models it (passes/runtime/olla_exec_order.h).
 * (exec_order.mjs also prints the nodes of subgraphs, whose names can clash
 * with the main graph's: give no order file for a model with subgraphs.)
 * --repeat N evaluates the order N times (for timing the evaluation).
 * --arena, --extend, --pattern and --runs replay a session of N runs under
 * those settings (olla_ort_memory_session; arena off, pattern on, 1 run
 * unless given) and add "first_run_bytes", "session_peak_bytes" (over the
 * runs), "arena_bytes", "arena_regions" and "pattern_bytes".
 * The subgraphs of If, Loop and Scan are modelled (olla_ort_memory.h); the
 * line says whether their memory is counted ("subgraphs_counted") and why
 * not ("note", "" when counted or none).
 * Prints one JSON line; with --decisions, one line per planned tensor to
 * stderr (position, op, tensor, kind, bytes, the tensor whose buffer it uses,
 * and for a buffer of its own the position after which it is freed, -1 never). Exit 0, 1 on a model or
 * order error, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "olla_bindings.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/runtime/olla_exec_order.h"
#include "passes/runtime/olla_ort_memory.h"
#include "passes/shapes/olla_shapes.h"

#define MAX_DIMS 16

typedef struct tool {
    olla_model *model;
    olla_shape_table *sized_types, *declared_types;
    olla_graph *sized, *declared;
    int *order, n_order;
} tool;

static int fail(const char *what, const olla_error *err)
{
    fprintf(stderr, "ort_predict: %s: %s\n", what, err ? err->message : "");
    return 1;
}

/* ---- ORT's default order ---- */

static int is_constant(const olla_graph *g, int op)
{
    return strcmp(g->ops[op].op_type, "Constant") == 0;
}

/* The order ORT's default rule runs the file's listing in: the library's one
 * model of it (passes/runtime/olla_exec_order.h). */
static int default_order(tool *t)
{
    int n = t->sized->n_ops, ok = 0;
    olla_error err = {0};
    int *listing = malloc(((size_t)n + 1) * sizeof(int));
    t->order = malloc(((size_t)n + 1) * sizeof(int));
    for (int i = 0; listing && i < n; i++)
        listing[t->sized->ops[i].proto_index] = i; /* the file's own listing */
    if (listing && t->order) {
        ok = olla_exec_order(t->sized, OLLA_RUNTIME_ORT, listing, t->order, &t->n_order, &err) == OLLA_OK;
        if (!ok)
            fprintf(stderr, "ort_predict: %s\n", err.message);
    }
    free(listing);
    return ok;
}

/* ---- order from a file ---- */

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

/* ---- main ---- */

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
    return 1;
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

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void tool_free(tool *t)
{
    olla_graph_free(t->sized);
    olla_graph_free(t->declared);
    olla_shape_table_free(t->sized_types);
    olla_shape_table_free(t->declared_types);
    olla_model_free(t->model);
    free(t->order);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *order_file = NULL;
    olla_dim_binding dims[MAX_DIMS];
    int n_dims = 0, tensors_only = 0, decisions = 0, repeat = 1, session = 0;
    olla_ort_settings settings = {0, 0, 1, 1};
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
        } else if ((strcmp(argv[i], "--arena") == 0 || strcmp(argv[i], "--pattern") == 0) && i + 1 < argc &&
                   (strcmp(argv[i + 1], "on") == 0 || strcmp(argv[i + 1], "off") == 0)) {
            *(strcmp(argv[i], "--arena") == 0 ? &settings.arena : &settings.mem_pattern) = strcmp(argv[i + 1], "on") == 0;
            session = 1;
            i++;
        } else if (strcmp(argv[i], "--extend") == 0 && i + 1 < argc &&
                   (strcmp(argv[i + 1], "pow2") == 0 || strcmp(argv[i + 1], "same") == 0)) {
            settings.extend_same = strcmp(argv[++i], "same") == 0;
            session = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            settings.runs = atoi(argv[++i]);
            session = 1;
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
                        "[--decisions] [--repeat N] [--arena on|off] [--extend pow2|same] [--pattern on|off] "
                        "[--runs N]\n");
        return 2;
    }
    tool t = {0};
    olla_error err = {0};
    int rc = 0;
    olla_ort_memory *m = NULL;
    olla_ort_memory_result r;
    olla_ort_memory_options opt = tensors_only ? olla_ort_memory_tensors_only() : olla_ort_memory_measured();
    int built = build(&t, path, dims, n_dims, &err);
    opt.sized_types = t.sized_types;
    opt.declared_types = t.declared_types;
    if (!built)
        rc = fail(path, &err);
    else if (order_file ? !read_order(&t, order_file) : !default_order(&t))
        rc = 1;
    else if (olla_ort_memory_new(t.sized, t.declared, &opt, &m, &err) != OLLA_OK)
        rc = fail(path, &err);
    for (int i = 0; rc == 0 && i < (repeat > 0 ? repeat : 1); i++)
        if (olla_ort_memory_eval(m, t.order, t.n_order, &r, &err) != OLLA_OK)
            rc = fail(path, &err);
    olla_ort_session_result sr = {0};
    if (rc == 0 && session && olla_ort_memory_session(m, t.order, t.n_order, &settings, &sr, &err) != OLLA_OK)
        rc = fail(path, &err);
    if (rc == 0) {
        printf("{\"predicted_peak_bytes\":%lld,\"peak_step\":%d,\"tensor_bytes\":%lld,\"scratch_bytes\":%lld,"
               "\"bookkeeping_bytes\":%lld,\"buffers\":%d,\"executed\":%d,\"subgraph_ops\":%d",
               (long long)r.peak_bytes, r.peak_step, (long long)r.tensor_bytes, (long long)r.scratch_bytes,
               (long long)r.bookkeeping_bytes, r.n_buffers, t.n_order, r.n_subgraph_ops);
        printf(",\"subgraphs_counted\":%d,\"note\":", r.subgraphs_counted);
        print_json_string(olla_ort_memory_note(m));
        if (session)
            printf(",\"first_run_bytes\":%lld,\"session_peak_bytes\":%lld,\"arena_bytes\":%lld,\"arena_regions\":%d,"
                   "\"pattern_bytes\":%lld",
                   (long long)sr.first_run_bytes, (long long)sr.peak_bytes, (long long)sr.arena_bytes, sr.arena_regions,
                   (long long)sr.pattern_bytes);
        printf("}\n");
        if (decisions)
            print_decisions(&t, m);
    }
    olla_ort_memory_free(m);
    tool_free(&t);
    return rc;
}
