/* olla-onnx: control edges that pull weight-update nodes early (the anchor
 * search of the OLLA paper, generalised to ONNX training graphs). */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"

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

/* The closure costs n^2/4 bits: above this many nodes the anchors use the
 * paper's level test instead. */
#define OLLA_UPDATES_REACH_MAX_NODES 20000

typedef struct {
    int v, k, s;       /* node, position in its outputs and in that output's readers */
    int best, best_lvl;
} cand_frame;

typedef struct {
    const olla_dag *dag;
    const olla_reach *r;
    const int *fwd, *bwd;
    int min_fwd, update;
    int *memo_node, *memo_level;
    int *stamp, cur;
    cand_frame *stack; /* n_nodes frames: a node is on it at most once */
} anchor_ctx;

/* The paper asks for a level above the update's; that only stands for "not
 * an ancestor of the update", tested exactly on the closure that includes the
 * edges added so far, which admits more anchors and keeps the graph acyclic.
 * Without a closure (graphs above OLLA_UPDATES_REACH_MAX_NODES) the paper's
 * level test is used. */
static int usable(const anchor_ctx *c, int snk)
{
    if (!c->r)
        return c->fwd[snk] > c->min_fwd;
    return snk != c->update && !olla_reach_before(c->r, snk, c->update);
}

static void open_frame(anchor_ctx *c, int *sp, int v)
{
    c->stamp[v] = c->cur;
    c->memo_node[v] = -1;
    c->memo_level[v] = -1;
    c->stack[(*sp)++] = (cand_frame){v, c->dag->out_start[v], -1, -1, -1};
}

/* FindCandidate: the sink with the highest backward level among the readers
 * of v's results whose forward level exceeds min_fwd, looking through readers
 * that are not deep enough yet. Results are memoised per update node. A
 * depth-first walk with an explicit stack: chains can be as long as the
 * graph, far deeper than the call stack allows. */
static void find_candidate(anchor_ctx *c, int v0, int *cand, int *level)
{
    if (c->stamp[v0] == c->cur) {
        *cand = c->memo_node[v0];
        *level = c->memo_level[v0];
        return;
    }
    const olla_dag *dag = c->dag;
    int sp = 0, ret_node = -1, ret_lvl = -1, returning = 0;
    open_frame(c, &sp, v0);
    while (sp > 0) {
        cand_frame *f = &c->stack[sp - 1];
        if (returning) { /* a reader looked through has its answer */
            if (ret_lvl > f->best_lvl) {
                f->best_lvl = ret_lvl;
                f->best = ret_node;
            }
            returning = 0;
            f->s++;
        }
        int pushed = 0;
        while (!pushed && f->k < dag->out_start[f->v + 1]) {
            int e = dag->out_list[f->k];
            if (f->s < 0)
                f->s = dag->sink_start[e];
            if (f->s >= dag->sink_start[e + 1]) {
                f->k++;
                f->s = -1;
                continue;
            }
            int snk = dag->sink_list[f->s];
            if (c->bwd[snk] <= f->best_lvl) {
                f->s++;
            } else if (usable(c, snk)) {
                f->best_lvl = c->bwd[snk];
                f->best = snk;
                f->s++;
            } else if (c->stamp[snk] == c->cur) {
                if (c->memo_level[snk] > f->best_lvl) {
                    f->best_lvl = c->memo_level[snk];
                    f->best = c->memo_node[snk];
                }
                f->s++;
            } else {
                open_frame(c, &sp, snk);
                pushed = 1;
            }
        }
        if (pushed)
            continue;
        c->memo_node[f->v] = f->best;
        c->memo_level[f->v] = f->best_lvl;
        ret_node = f->best;
        ret_lvl = f->best_lvl;
        returning = 1;
        sp--;
    }
    *cand = ret_node;
    *level = ret_lvl;
}

/* records the new edge u -> a in the closure, so that later anchors keep the
 * graph acyclic */
static void add_to_reach(olla_reach *r, int u, int a)
{
    int W = r->words;
    uint64_t *anc_u = r->anc + (size_t)u * W, *desc_a = r->desc + (size_t)a * W;
    for (int x = 0; x < r->n; x++) {
        if (x == a || olla_reach_before(r, a, x)) { /* x is a or below it */
            uint64_t *row = r->anc + (size_t)x * W;
            for (int w = 0; w < W; w++)
                row[w] |= anc_u[w];
            row[u >> 6] |= (uint64_t)1 << (u & 63);
        }
    }
    for (int y = 0; y < r->n; y++) {
        if (y == u || olla_reach_before(r, y, u)) { /* y is u or above it */
            uint64_t *row = r->desc + (size_t)y * W;
            for (int w = 0; w < W; w++)
                row[w] |= desc_a[w];
            row[a >> 6] |= (uint64_t)1 << (a & 63);
        }
    }
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
    olla_reach reach;
    memset(&reach, 0, sizeof reach);
    cand_frame *stack = malloc(((size_t)n + 1) * sizeof *stack);
    olla_status st = OLLA_OK;
    if (!fwd || !bwd || !mn || !ml || !stamp || !front || !next || !seen || !ef || !et || !stack) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory finding weight-update control edges");
        goto done;
    }
    st = olla_levels(dag, fwd, bwd, err);
    if (st != OLLA_OK)
        goto done;
    int exact = n <= OLLA_UPDATES_REACH_MAX_NODES;
    if (exact) {
        st = olla_reach_build(dag, &reach, err);
        if (st != OLLA_OK)
            goto done;
    }
    anchor_ctx c = {dag, exact ? &reach : NULL, fwd, bwd, 0, 0, mn, ml, stamp, 0, stack};
    int ne = 0;
    for (int v = 0; v < n; v++) {
        if (!is_update(dag, v))
            continue;
        c.cur++; /* fresh memo per update node: min_fwd differs */
        c.min_fwd = fwd[v];
        c.update = v;
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
            if (exact)
                add_to_reach(&reach, v, anchor);
        }
    }
    *from = ef;
    *to = et;
    *count = ne;
    ef = et = NULL;
done:
    olla_reach_free(&reach);
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
    free(stack);
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
    for (int v = 0; dag->n_inplace > 0 && v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++)
            olla_dag_builder_inplace(b, v, dag->inplace_in[k], dag->inplace_out[k]);
    olla_status st = olla_dag_build(b, dag->n_nodes, out, err);
    if (st == OLLA_OK) {
        out->op_type = dag->op_type;
        out->op_domain = dag->op_domain;
    }
    return st;
}
