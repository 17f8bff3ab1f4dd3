#include "passes/analysis/olla_graph_dag.h"

#include <stdlib.h>

olla_status olla_graph_dag(const olla_graph *g, int64_t alignment, olla_dag *dag, int **graph_tensor,
                           olla_error *err)
{
    *graph_tensor = NULL;
    int *map = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    int *back = malloc(((size_t)g->n_tensors + 1) * sizeof(int));
    olla_dag_builder *b = olla_dag_builder_new(g->n_ops, g->n_tensors);
    if (!map || !back || !b) {
        free(map);
        free(back);
        olla_dag_builder_free(b);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory building the scheduling graph");
    }
    int n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        map[t] = -1;
        if (ten->producer < 0)
            continue;
        int64_t bytes = ten->bytes > 0 ? olla_align_up(ten->bytes, alignment) : 0;
        map[t] = olla_dag_builder_tensor(b, ten->producer, bytes, ten->is_output);
        back[n++] = t;
    }
    for (int t = 0; t < g->n_tensors; t++) {
        if (map[t] < 0)
            continue;
        const olla_tensor *ten = &g->tensors[t];
        for (int c = 0; c < ten->n_consumers; c++)
            olla_dag_builder_use(b, g->consumer_list[ten->first_consumer + c], map[t]);
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
