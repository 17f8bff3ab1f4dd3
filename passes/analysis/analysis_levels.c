/* olla-onnx: levelization of the DAG and the time windows of nodes and
 * tensors (ASAP/ALAP spans, MUL and PRES ranges). */
#include <stdlib.h>

#include "passes/analysis/olla_analysis.h"

olla_status olla_levels(const olla_dag *dag, int *fwd, int *bwd, olla_error *err)
{
    int n = dag->n_nodes;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing node levels");
    olla_status st = olla_dag_stable_topo(dag, order, err);
    if (st != OLLA_OK) {
        free(order);
        return st;
    }
    for (int v = 0; v < n; v++)
        fwd[v] = bwd[v] = 0;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            if (fwd[u] + 1 > fwd[v])
                fwd[v] = fwd[u] + 1;
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int v = order[i];
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            if (bwd[v] + 1 > bwd[u])
                bwd[u] = bwd[v] + 1;
        }
    }
    free(order);
    return OLLA_OK;
}

void olla_windows(const olla_reach *r, int *asap, int *alap)
{
    for (int v = 0; v < r->n; v++) {
        asap[v] = r->n_anc[v];
        alap[v] = r->n - 1 - r->n_desc[v];
    }
}

void olla_tensor_windows(const olla_dag *dag, const int *asap, const int *alap, int *mul_lo, int *mul_hi,
                         int *pres_lo, int *pres_hi)
{
    int n = dag->n_nodes;
    for (int e = 0; e < dag->n_tensors; e++) {
        int p = dag->producer[e];
        int hi = alap[p], lo = alap[p];
        /* the last use runs no earlier than the latest ASAP of the consumers */
        int last_min = asap[p];
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
            int s = dag->sink_list[k];
            if (alap[s] > hi)
                hi = alap[s];
            if (asap[s] > last_min)
                last_min = asap[s];
        }
        if (dag->is_output[e]) {
            hi = n - 1;
            last_min = n - 1;
        }
        mul_lo[e] = asap[p];
        mul_hi[e] = hi;
        pres_lo[e] = lo;
        pres_hi[e] = last_min;
    }
}

olla_status olla_windows_build(const olla_dag *dag, int *asap, int *alap, olla_error *err)
{
    int n = dag->n_nodes;
    int *n_desc = malloc(((size_t)n + 1) * sizeof *n_desc);
    if (!n_desc)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the time windows of %d nodes", n);
    olla_status st = olla_reach_counts(dag, asap, n_desc, err);
    for (int v = 0; st == OLLA_OK && v < n; v++)
        alap[v] = n - 1 - n_desc[v];
    free(n_desc);
    return st;
}
