/* olla-onnx: the scheduling DAG of a graph (olla_graph_dag.h). */
#include "passes/analysis/olla_graph_dag.h"

#include <stdlib.h>
#include <string.h>

void olla_graph_dag_map_free(olla_graph_dag_map *map)
{
    free(map->graph_tensor);
    free(map->dag_tensor);
    free(map->buffer);
    free(map->view_of);
    free(map->inplace_from);
    memset(map, 0, sizeof *map);
}

/* The graph tensor in slot k of op's inputs or outputs, or -1. */
static int op_input(const olla_graph *g, int op, int k)
{
    const olla_op *o = &g->ops[op];
    return k >= 0 && k < o->n_explicit_inputs ? g->input_list[o->first_input + k] : -1;
}

static int op_output(const olla_graph *g, int op, int k)
{
    const olla_op *o = &g->ops[op];
    return k >= 0 && k < o->n_outputs ? g->output_list[o->first_output + k] : -1;
}

/* 1 when the runtime runs op (never a Constant: its output is held with
 * the initializers), and the tensor a reader of t reads */
static int runs(const olla_graph *g, const olla_runtime_view *view, int op)
{
    return !olla_op_is_constant(g, op) && (!view || !view->runs || view->runs[op]);
}

static int read_as(const olla_runtime_view *view, int t)
{
    return view && view->reads_as ? view->reads_as[t] : t;
}

/* view_of from the alias shares; then buffer: each tensor's own DAG tensor,
 * or for a view its root's (-1 when the root is caller-owned). Ops are in
 * graph order and a view's input is produced before it, so one pass in
 * tensor-production order would do; a few passes over the short chains are
 * simpler and as exact. */
static void resolve_views(const olla_graph *g, const olla_op_share *shares, int n_shares,
                          const olla_runtime_view *view, olla_graph_dag_map *map)
{
    for (int t = 0; t < g->n_tensors; t++) {
        map->view_of[t] = -1;
        map->buffer[t] = g->tensors[t].bytes >= 0 ? map->dag_tensor[t] : -1;
    }
    for (int i = 0; i < n_shares; i++) {
        if (shares[i].inplace || !runs(g, view, shares[i].op))
            continue;
        int in = op_input(g, shares[i].op, shares[i].input), out = op_output(g, shares[i].op, shares[i].output);
        in = in >= 0 ? read_as(view, in) : in;
        if (in < 0 || out < 0 || in == out || map->view_of[out] >= 0 || g->tensors[in].bytes < 0 ||
            g->tensors[in].bytes != g->tensors[out].bytes)
            continue;
        map->view_of[out] = in;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < g->n_tensors; t++) {
            int v = map->view_of[t];
            if (v >= 0 && map->buffer[t] != map->buffer[v]) {
                map->buffer[t] = map->buffer[v];
                changed = 1;
            }
        }
    }
}

/* The in-place candidates that fit (see olla_graph_dag.h), into the builder. */
static void add_inplace(const olla_graph *g, const olla_op_share *shares, int n_shares, const olla_runtime_view *view,
                        const unsigned char *class_out, olla_dag_builder *b, olla_graph_dag_map *map)
{
    for (int t = 0; t < g->n_tensors; t++)
        map->inplace_from[t] = -1;
    for (int i = 0; i < n_shares; i++) {
        if (!shares[i].inplace || !runs(g, view, shares[i].op))
            continue;
        int in = op_input(g, shares[i].op, shares[i].input), out = op_output(g, shares[i].op, shares[i].output);
        in = in >= 0 ? read_as(view, in) : in;
        if (in < 0 || out < 0 || map->view_of[out] >= 0 || map->inplace_from[out] >= 0 || g->tensors[out].bytes <= 0)
            continue;
        int buf = map->buffer[in];
        if (buf < 0 || class_out[buf] || g->tensors[map->graph_tensor[buf]].bytes != g->tensors[out].bytes)
            continue;
        olla_dag_builder_inplace(b, shares[i].op, buf, map->dag_tensor[out]);
        map->inplace_from[out] = in;
    }
}

olla_status olla_graph_dag(const olla_graph *g, int64_t alignment, const olla_dag_sharing *sharing, olla_dag *dag,
                           olla_graph_dag_map *map, olla_error *err)
{
    const olla_op_share *shares = sharing ? sharing->shares : NULL;
    int n_shares = sharing ? sharing->n_shares : 0;
    const olla_runtime_view *view = sharing ? sharing->view : NULL;
    int nt = g->n_tensors;
    memset(map, 0, sizeof *map);
    map->graph_tensor = malloc(((size_t)nt + 1) * sizeof(int));
    map->dag_tensor = malloc(((size_t)nt + 1) * sizeof(int));
    map->buffer = malloc(((size_t)nt + 1) * sizeof(int));
    map->view_of = malloc(((size_t)nt + 1) * sizeof(int));
    map->inplace_from = malloc(((size_t)nt + 1) * sizeof(int));
    unsigned char *class_out = calloc((size_t)nt + 1, 1);
    olla_dag_builder *b = olla_dag_builder_new(g->n_ops, nt);
    if (!map->graph_tensor || !map->dag_tensor || !map->buffer || !map->view_of || !map->inplace_from ||
        !class_out || !b) {
        olla_graph_dag_map_free(map);
        free(class_out);
        olla_dag_builder_free(b);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling graph");
    }
    int n = 0;
    for (int t = 0; t < nt; t++)
        map->dag_tensor[t] = g->tensors[t].producer >= 0 ? n++ : -1;
    resolve_views(g, shares, n_shares, view, map);
    /* what an op the runtime does not run makes is no intermediate, nor any view of it */
    for (int t = 0; t < nt; t++)
        if (g->tensors[t].producer >= 0 && !runs(g, view, g->tensors[t].producer))
            map->buffer[t] = -1;
    for (int t = 0; t < nt; t++) {
        int root = t;
        while (map->view_of[root] >= 0)
            root = map->view_of[root];
        if (map->buffer[root] < 0)
            map->buffer[t] = -1;
    }
    /* a buffer is a graph output when any tensor it holds is one */
    for (int t = 0; t < nt; t++)
        if (g->tensors[t].is_output && map->buffer[t] >= 0)
            class_out[map->buffer[t]] = 1;
    for (int t = 0; t < nt; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (map->dag_tensor[t] < 0)
            continue;
        int own = map->buffer[t] == map->dag_tensor[t];
        int64_t bytes = own && ten->bytes > 0 ? olla_align_up(ten->bytes, alignment) : 0;
        olla_dag_builder_tensor(b, ten->producer, bytes, own ? class_out[map->dag_tensor[t]] : ten->is_output);
        map->graph_tensor[map->dag_tensor[t]] = t;
    }
    for (int t = 0; t < nt; t++) {
        const olla_tensor *ten = &g->tensors[t];
        int src = read_as(view, t); /* what a reader gets: t, or the input of a dropped Cast */
        int buf = map->view_of[src] >= 0 ? map->buffer[src] : -1;
        for (int c = 0; map->dag_tensor[src] >= 0 && c < ten->n_consumers; c++) {
            int reader = g->consumer_list[ten->first_consumer + c];
            if (!runs(g, view, reader))
                continue; /* an op that does not run reads nothing */
            olla_dag_builder_use(b, reader, map->dag_tensor[src]);
            if (buf >= 0) /* a reader of a view keeps its buffer alive */
                olla_dag_builder_use(b, reader, buf);
        }
    }
    add_inplace(g, shares, n_shares, view, class_out, b, map);
    free(class_out);
    olla_status st = olla_dag_build(b, g->n_ops, dag, err);
    if (st != OLLA_OK)
        olla_graph_dag_map_free(map);
    return st;
}
