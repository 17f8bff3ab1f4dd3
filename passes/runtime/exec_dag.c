/* olla-onnx: the scheduling DAG of what a runtime runs (olla_exec_dag in
 * olla_exec_order.h). */
#include <stdlib.h>

#include "passes/analysis/olla_dag.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_exec_order.h"

olla_status olla_exec_dag(const olla_graph *g, const olla_exec_graph *eg, int64_t alignment, olla_dag *dag,
                          int **graph_tensor, olla_error *err)
{
    *graph_tensor = NULL;
    if (!eg->reads_as || eg->n_tensors != g->n_tensors || eg->n_ops != g->n_ops)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "olla_exec_dag needs the runtime's view of this very graph");
    int *map = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    int *back = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    olla_dag_builder *b = olla_dag_builder_new(g->n_ops, g->n_tensors);
    if (!map || !back || !b) {
        free(map);
        free(back);
        olla_dag_builder_free(b);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the runtime's scheduling graph");
    }
    int n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        map[t] = -1;
        if (ten->producer < 0 || !eg->runs[ten->producer])
            continue;
        int64_t bytes = ten->bytes > 0 ? olla_align_up(ten->bytes, alignment) : 0;
        map[t] = olla_dag_builder_tensor(b, ten->producer, bytes, ten->is_output);
        back[n++] = t;
    }
    for (int v = 0; v < g->n_ops; v++) {
        if (!eg->runs[v])
            continue;
        for (int s = 0; s < g->ops[v].n_inputs; s++) {
            int t = g->input_list[g->ops[v].first_input + s];
            if (t >= 0 && map[eg->reads_as[t]] >= 0)
                olla_dag_builder_use(b, v, map[eg->reads_as[t]]);
        }
    }
    free(map);
    olla_status st = olla_dag_build(b, g->n_ops, dag, err);
    if (st != OLLA_OK) {
        free(back);
        return st;
    }
    *graph_tensor = back;
    return OLLA_OK;
}
