/* olla-onnx: reachability between nodes as bitsets, and the precedence test
 * that tells when two tensors can never be live at the same time. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"

static int bit(const uint64_t *row, int u)
{
    return (int)((row[u >> 6] >> (u & 63)) & 1u);
}

static int popcount_row(const uint64_t *row, int words)
{
    int c = 0;
    for (int w = 0; w < words; w++)
        c += __builtin_popcountll(row[w]);
    return c;
}

void olla_reach_free(olla_reach *r)
{
    if (!r)
        return;
    free(r->anc);
    free(r->desc);
    free(r->n_anc);
    free(r->n_desc);
    memset(r, 0, sizeof *r);
}

olla_status olla_reach_build(const olla_dag *dag, olla_reach *r, olla_error *err)
{
    int n = dag->n_nodes;
    memset(r, 0, sizeof *r);
    if (n > OLLA_REACH_MAX_NODES)
        return olla_error_set(err, OLLA_ERR_INTERNAL,
                              "reachability of %d nodes would need %.1f GB; graphs above %d nodes are "
                              "ordered without it",
                              n, 2.0 * (double)n * (double)n / 8e9, OLLA_REACH_MAX_NODES);
    r->n = n;
    r->words = (n + 63) / 64;
    size_t cells = (size_t)n * (size_t)r->words + 1;
    r->anc = calloc(cells, sizeof *r->anc);
    r->desc = calloc(cells, sizeof *r->desc);
    r->n_anc = calloc((size_t)n + 1, sizeof *r->n_anc);
    r->n_desc = calloc((size_t)n + 1, sizeof *r->n_desc);
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!r->anc || !r->desc || !r->n_anc || !r->n_desc || !order) {
        free(order);
        olla_reach_free(r);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing reachability of %d nodes", n);
    }
    olla_status st = olla_dag_stable_topo(dag, order, err);
    if (st != OLLA_OK) {
        free(order);
        olla_reach_free(r);
        return st;
    }
    int W = r->words;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        uint64_t *row = r->anc + (size_t)v * W;
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            const uint64_t *ru = r->anc + (size_t)u * W;
            for (int w = 0; w < W; w++)
                row[w] |= ru[w];
            row[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int v = order[i];
        const uint64_t *rv = r->desc + (size_t)v * W;
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            uint64_t *ru = r->desc + (size_t)u * W;
            for (int w = 0; w < W; w++)
                ru[w] |= rv[w];
            ru[v >> 6] |= (uint64_t)1 << (v & 63);
        }
    }
    for (int v = 0; v < n; v++) {
        r->n_anc[v] = popcount_row(r->anc + (size_t)v * W, W);
        r->n_desc[v] = popcount_row(r->desc + (size_t)v * W, W);
    }
    free(order);
    return OLLA_OK;
}

int olla_reach_before(const olla_reach *r, int u, int v)
{
    return bit(r->anc + (size_t)v * r->words, u);
}

int olla_reach_comparable(const olla_reach *r, int u, int v)
{
    return u == v || olla_reach_before(r, u, v) || olla_reach_before(r, v, u);
}

/* a is dead before b is created: a's consumers all run no later than b's
 * producer, and where one of them is b's producer itself the two meet at
 * that step, so this only holds when the producer does not read a. */
static int precedes(const olla_dag *dag, const olla_reach *r, int a, int b)
{
    if (dag->is_output[a])
        return 0;
    int pb = dag->producer[b];
    int pa = dag->producer[a];
    if (dag->sink_start[a] == dag->sink_start[a + 1])
        return pa != pb && olla_reach_before(r, pa, pb);
    for (int k = dag->sink_start[a]; k < dag->sink_start[a + 1]; k++) {
        int s = dag->sink_list[k];
        if (s == pb || !olla_reach_before(r, s, pb))
            return 0;
    }
    return 1;
}

int olla_tensors_disjoint(const olla_dag *dag, const olla_reach *r, int a, int b)
{
    if (a == b)
        return 0;
    return precedes(dag, r, a, b) || precedes(dag, r, b, a);
}
