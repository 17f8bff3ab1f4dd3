/* olla-onnx tests: random small DAGs and brute-force optima for the
 * scheduling tests. */
#ifndef OLLA_TEST_SCHED_UTIL_H
#define OLLA_TEST_SCHED_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dag_eval.h"
#include "passes/analysis/olla_dag.h"

static uint64_t tsu_state;

static unsigned tsu_rand(void)
{
    tsu_state = tsu_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(tsu_state >> 33);
}

/* n nodes in topological id order; each makes one or two tensors read by
 * later nodes with probability density/100; some are graph outputs, some
 * unread, some of size 0. */
static inline int tsu_random_dag(uint64_t seed, int n, int density, olla_dag *dag)
{
    olla_error err = {0};
    tsu_state = seed * 2654435761u + 12345u;
    olla_dag_builder *b = olla_dag_builder_new(n, 2 * n);
    if (!b)
        return 0;
    for (int v = 0; v < n; v++) {
        int k = 1 + (int)(tsu_rand() % 2);
        for (int j = 0; j < k; j++) {
            int64_t bytes = (tsu_rand() % 8 == 0) ? 0 : 1 + (int64_t)(tsu_rand() % 100);
            int is_out = tsu_rand() % 7 == 0;
            int e = olla_dag_builder_tensor(b, v, bytes, is_out);
            for (int w = v + 1; w < n; w++)
                if ((int)(tsu_rand() % 100) < density)
                    olla_dag_builder_use(b, w, e);
        }
    }
    return olla_dag_build(b, n, dag, &err) == OLLA_OK;
}

typedef struct {
    const olla_dag *dag;
    int *order, *done, *best_order;
    int depth;
    int64_t best;
    long count;
    void (*visit)(const olla_dag *dag, const int *order, void *ctx);
    void *ctx;
} tsu_brute;

static void tsu_rec(tsu_brute *s)
{
    const olla_dag *d = s->dag;
    int n = d->n_nodes;
    if (s->depth == n) {
        int64_t pk = peak_of(d, s->order);
        s->count++;
        if (s->visit)
            s->visit(d, s->order, s->ctx);
        if (s->best < 0 || pk < s->best) {
            s->best = pk;
            memcpy(s->best_order, s->order, (size_t)n * sizeof(int));
        }
        return;
    }
    for (int v = 0; v < n; v++) {
        if (s->done[v])
            continue;
        int ready = 1;
        for (int k = d->in_start[v]; k < d->in_start[v + 1] && ready; k++)
            if (!s->done[d->producer[d->in_list[k]]])
                ready = 0;
        if (!ready)
            continue;
        s->done[v] = 1;
        s->order[s->depth++] = v;
        tsu_rec(s);
        s->depth--;
        s->done[v] = 0;
    }
}

/* smallest peak over every topological order (n <= 16, few orders);
 * best_order optional; visit (optional) sees every order */
static inline int64_t tsu_enumerate(const olla_dag *dag, int *best_order, long *n_orders,
                             void (*visit)(const olla_dag *, const int *, void *), void *ctx)
{
    int n = dag->n_nodes;
    int order[16], done[16] = {0}, bo[16];
    tsu_brute s = {dag, order, done, bo, 0, -1, 0, visit, ctx};
    tsu_rec(&s);
    if (best_order)
        memcpy(best_order, bo, (size_t)n * sizeof(int));
    if (n_orders)
        *n_orders = s.count;
    return s.best;
}

static inline int64_t tsu_brute_force(const olla_dag *dag, int *best_order, long *n_orders)
{
    return tsu_enumerate(dag, best_order, n_orders, NULL, NULL);
}

#endif
