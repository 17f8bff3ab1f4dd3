/* olla-onnx: control edges that pull weight-update nodes early (the anchor
 * search of the OLLA paper, generalised to ONNX training graphs). */
#include <stdlib.h>
#include <string.h>

#include "passes/olla_analysis.h"

static const char *const update_ops[] = {
    "InPlaceAccumulatorV2", "InPlaceAccumulator", "AdamWOptimizer", "AdamOptimizer", "SGDOptimizerV2",
    "SGDOptimizer",         "LambOptimizer",      "Adagrad",        "Adam",          "Momentum",
};

static int is_update_op(const olla_dag *dag, int v)
{
    if (!dag->op_type || !dag->op_type[v])
        return 0;
    for (size_t i = 0; i < sizeof update_ops / sizeof update_ops[0]; i++)
        if (strcmp(dag->op_type[v], update_ops[i]) == 0)
            return 1;
    return 0;
}

/* A node is treated as a weight update when it is an optimizer or gradient
 * accumulator operator, or when nothing reads its results and one of them is
 * a graph output computed from other nodes' results (p_new = p - lr * g). */
static int is_update(const olla_dag *dag, int v)
{
    if (is_update_op(dag, v))
        return 1;
    if (dag->in_start[v] == dag->in_start[v + 1])
        return 0;
    int has_output = 0;
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
        int e = dag->out_list[k];
        if (dag->sink_start[e] != dag->sink_start[e + 1])
            return 0;
        if (dag->is_output[e])
            has_output = 1;
    }
    return has_output;
}

typedef struct {
    const olla_dag *dag;
    const int *fwd, *bwd;
    int min_fwd;
    int *memo_node, *memo_level; /* memo_level -2 = not visited */
    int *stamp, cur;
} anchor_ctx;

/* FindCandidate: the sink with the highest backward level among the readers
 * of v's results whose forward level exceeds min_fwd, looking through readers
 * that are not deep enough yet. Iterative would be nicer; the depth is
 * bounded by the number of levels. */
static void find_candidate(anchor_ctx *c, int v, int *cand, int *level)
{
    if (c->stamp[v] == c->cur) {
        *cand = c->memo_node[v];
        *level = c->memo_level[v];
        return;
    }
    c->stamp[v] = c->cur;
    c->memo_node[v] = -1;
    c->memo_level[v] = -1;
    const olla_dag *dag = c->dag;
    int best = -1, best_lvl = -1;
    for (int k = dag->out_start[v]; k < dag->out_start[v + 1]; k++) {
        int e = dag->out_list[k];
        for (int s = dag->sink_start[e]; s < dag->sink_start[e + 1]; s++) {
            int snk = dag->sink_list[s];
            if (c->bwd[snk] <= best_lvl)
                continue;
            if (c->fwd[snk] <= c->min_fwd) {
                int cc, lv;
                find_candidate(c, snk, &cc, &lv);
                if (lv > best_lvl) {
                    best_lvl = lv;
                    best = cc;
                }
            } else {
                best_lvl = c->bwd[snk];
                best = snk;
            }
        }
    }
    c->memo_node[v] = best;
    c->memo_level[v] = best_lvl;
    *cand = best;
    *level = best_lvl;
}

olla_status olla_early_update_edges(const olla_dag *dag, int **from, int **to, int *count, olla_error *err)
{
    int n = dag->n_nodes;
    *from = *to = NULL;
    *count = 0;
    int *fwd = malloc(((size_t)n + 1) * sizeof(int));
    int *bwd = malloc(((size_t)n + 1) * sizeof(int));
    int *mn = malloc(((size_t)n + 1) * sizeof(int));
    int *ml = malloc(((size_t)n + 1) * sizeof(int));
    int *stamp = calloc((size_t)n + 1, sizeof(int));
    int *front = malloc(((size_t)n + 1) * sizeof(int));
    int *next = malloc(((size_t)n + 1) * sizeof(int));
    int *seen = calloc((size_t)n + 1, sizeof(int));
    int *ef = malloc(((size_t)n + 1) * sizeof(int));
    int *et = malloc(((size_t)n + 1) * sizeof(int));
    olla_status st = OLLA_OK;
    if (!fwd || !bwd || !mn || !ml || !stamp || !front || !next || !seen || !ef || !et) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory finding weight-update control edges");
        goto done;
    }
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    anchor_ctx c = {dag, fwd, bwd, 0, mn, ml, stamp, 0};
    int ne = 0;
    for (int v = 0; v < n; v++) {
        if (!is_update(dag, v))
            continue;
        c.cur++; /* fresh memo per update node: min_fwd differs */
        c.min_fwd = fwd[v];
        int nf = 1, anchor = -1, best_lvl = -1;
        front[0] = v;
        seen[v] = c.cur;
        while (anchor < 0 && nf > 0) {
            int nn = 0;
            for (int i = 0; i < nf; i++) {
                int u = front[i];
                for (int k = dag->in_start[u]; k < dag->in_start[u + 1]; k++) {
                    int p = dag->producer[dag->in_list[k]];
                    if (seen[p] != c.cur) {
                        seen[p] = c.cur;
                        next[nn++] = p;
                    }
                }
            }
            for (int i = 0; i < nn; i++) {
                int cc, lv;
                find_candidate(&c, next[i], &cc, &lv);
                if (cc >= 0 && cc != v && lv > best_lvl) {
                    best_lvl = lv;
                    anchor = cc;
                }
            }
            memcpy(front, next, (size_t)nn * sizeof(int));
            nf = nn;
        }
        if (anchor >= 0) {
            ef[ne] = v;
            et[ne] = anchor;
            ne++;
        }
    }
    *from = ef;
    *to = et;
    *count = ne;
    ef = et = NULL;
done:
    free(fwd);
    free(bwd);
    free(mn);
    free(ml);
    free(stamp);
    free(front);
    free(next);
    free(seen);
    free(ef);
    free(et);
    return st;
}

olla_status olla_dag_add_edges(const olla_dag *dag, const int *from, const int *to, int count, olla_dag *out,
                               olla_error *err)
{
    olla_dag_builder *b = olla_dag_builder_new(dag->n_nodes, dag->n_tensors + count);
    if (!b)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory adding control edges");
    for (int e = 0; e < dag->n_tensors; e++) {
        olla_dag_builder_tensor(b, dag->producer[e], dag->bytes[e], dag->is_output[e]);
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++)
            olla_dag_builder_use(b, dag->sink_list[k], e);
    }
    for (int i = 0; i < count; i++) {
        int e = olla_dag_builder_tensor(b, from[i], 0, 0);
        olla_dag_builder_use(b, to[i], e);
    }
    olla_status st = olla_dag_build(b, dag->n_nodes, out, err);
    if (st == OLLA_OK) {
        out->op_type = dag->op_type;
        out->op_domain = dag->op_domain;
    }
    return st;
}
