/* The graph analyses (passes/analysis/): windows, levels, reachability,
 * early-update edges and the output bound, each checked against every
 * order or by brute force on small and random graphs. */
#include "dag_eval.h"
#include "olla_test.h"
#include "passes/analysis/olla_analysis.h"
#include "solver/olla_schedule.h"
#include "test_sched_util.h"

/* checks every property that must hold in every order */
typedef struct {
    const olla_reach *r;
    const int *asap, *alap, *mlo, *mhi, *plo, *phi;
    int bad_window, bad_mul, bad_pres, bad_disjoint;
    int64_t min_live_at[16]; /* least live bytes at each node's step */
} every_order;

static void visit(const olla_dag *d, const int *order, void *ctx)
{
    every_order *c = ctx;
    int n = d->n_nodes, step[16], first[32], last[32];
    int64_t live[16];
    for (int t = 0; t < n; t++)
        step[order[t]] = t;
    lifetimes_of(d, order, first, last);
    peak_live(d, order, live, NULL);
    for (int v = 0; v < n; v++) {
        if (step[v] < c->asap[v] || step[v] > c->alap[v])
            c->bad_window++;
        if (live[step[v]] < c->min_live_at[v])
            c->min_live_at[v] = live[step[v]];
    }
    for (int e = 0; e < d->n_tensors; e++) {
        if (first[e] < c->mlo[e] || last[e] > c->mhi[e])
            c->bad_mul++;
        if (c->plo[e] <= c->phi[e] && (first[e] > c->plo[e] || last[e] < c->phi[e]))
            c->bad_pres++;
        for (int f = 0; f < d->n_tensors; f++)
            if (olla_tensors_disjoint(d, c->r, e, f) && first[e] <= last[f] && first[f] <= last[e])
                c->bad_disjoint++;
    }
}

OLLA_TEST(test_windows_bounds_and_precedence_hold_in_every_order)
{
    for (int seed = 0; seed < 120; seed++) {
        olla_dag dag;
        olla_error err = {0};
        int n = 2 + seed % 8;
        OLLA_CHECK(tsu_random_dag((uint64_t)seed + 500, n, 30, &dag));
        olla_reach r;
        OLLA_CHECK(olla_reach_build(&dag, &r, &err) == OLLA_OK);
        int asap[16], alap[16], mlo[32], mhi[32], plo[32], phi[32];
        olla_windows(&r, asap, alap);
        olla_tensor_windows(&dag, asap, alap, mlo, mhi, plo, phi);
        every_order c = {&r, asap, alap, mlo, mhi, plo, phi, 0, 0, 0, 0, {0}};
        for (int v = 0; v < 16; v++)
            c.min_live_at[v] = INT64_MAX;
        int ident[16];
        for (int v = 0; v < n; v++)
            ident[v] = v;
        int64_t opt = tsu_enumerate(&dag, NULL, NULL, visit, &c);
        OLLA_CHECK_EQ_I64(c.bad_window, 0);
        OLLA_CHECK_EQ_I64(c.bad_mul, 0);
        OLLA_CHECK_EQ_I64(c.bad_pres, 0);
        OLLA_CHECK_EQ_I64(c.bad_disjoint, 0);
        /* every bound is at most the optimum; the closure bound is exactly the
         * largest over nodes of the least live bytes at that node's step */
        int64_t io = olla_bound_node_io(&dag);
        int64_t cut = olla_bound_cut(&dag, &r, NULL);
        int64_t clo = 0;
        OLLA_CHECK(olla_bound_closure(&dag, NULL, (olla_limit){0, 0}, &clo, NULL, &err) == OLLA_OK);
        int64_t want = 0;
        for (int v = 0; v < n; v++)
            if (c.min_live_at[v] > want)
                want = c.min_live_at[v];
        OLLA_CHECK(io <= opt);
        OLLA_CHECK(cut <= clo);
        OLLA_CHECK_EQ_I64(clo, want);
        /* a deadline already past still gives a valid bound, no larger */
        int64_t late = 0;
        OLLA_CHECK(olla_bound_closure(&dag, NULL, (olla_limit){0, 1e-9}, &late, NULL, &err) == OLLA_OK);
        OLLA_CHECK(late >= 0);
        OLLA_CHECK(late <= clo);
        int64_t pair = clo;
        OLLA_CHECK(olla_bound_pairs(&dag, ident, INT64_MAX, 16, (olla_limit){0, 0}, &pair, NULL, &err) == OLLA_OK);
        OLLA_CHECK(pair >= clo);
        OLLA_CHECK(pair <= opt);
        /* the work reported: within the budget, all of a budget of one arc
         * once a cut runs, and still a valid bound */
        int64_t tight = clo;
        long spent = -1, spent_all = -1;
        OLLA_CHECK(olla_bound_pairs(&dag, ident, INT64_MAX, 16, (olla_limit){1, 0}, &tight, &spent, &err) == OLLA_OK);
        OLLA_CHECK(spent == 0 || spent == 1);
        OLLA_CHECK(tight >= clo && tight <= pair);
        int64_t wide = clo;
        OLLA_CHECK(olla_bound_pairs(&dag, ident, INT64_MAX, 16, (olla_limit){1000000000L, 0}, &wide, &spent_all, &err) ==
                   OLLA_OK);
        OLLA_CHECK(spent_all >= spent && spent_all < 1000000000L);
        OLLA_CHECK_EQ_I64(wide, pair);
        olla_reach_free(&r);
        olla_dag_free(&dag);
    }
}

OLLA_TEST(test_levels_and_reach)
{
    /* 0 -> 1 -> 3, 0 -> 2 -> 3, 4 alone */
    olla_error err = {0};
    olla_dag dag;
    olla_dag_builder *b = olla_dag_builder_new(5, 4);
    int a = olla_dag_builder_tensor(b, 0, 1, 0);
    int x = olla_dag_builder_tensor(b, 1, 1, 0);
    int y = olla_dag_builder_tensor(b, 2, 1, 0);
    olla_dag_builder_use(b, 1, a);
    olla_dag_builder_use(b, 2, a);
    olla_dag_builder_use(b, 3, x);
    olla_dag_builder_use(b, 3, y);
    OLLA_CHECK(olla_dag_build(b, 5, &dag, &err) == OLLA_OK);
    int fwd[5], bwd[5];
    OLLA_CHECK(olla_levels(&dag, fwd, bwd, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(fwd[0], 0);
    OLLA_CHECK_EQ_I64(fwd[3], 2);
    OLLA_CHECK_EQ_I64(bwd[0], 2);
    OLLA_CHECK_EQ_I64(bwd[3], 0);
    OLLA_CHECK_EQ_I64(fwd[4], 0);
    olla_reach r;
    OLLA_CHECK(olla_reach_build(&dag, &r, &err) == OLLA_OK);
    OLLA_CHECK(olla_reach_before(&r, 0, 3));
    OLLA_CHECK(!olla_reach_before(&r, 3, 0));
    OLLA_CHECK(!olla_reach_comparable(&r, 1, 2));
    OLLA_CHECK(!olla_reach_comparable(&r, 4, 0));
    int asap[5], alap[5];
    olla_windows(&r, asap, alap);
    OLLA_CHECK_EQ_I64(asap[3], 3);
    OLLA_CHECK_EQ_I64(alap[0], 1); /* 3 descendants, 5 nodes */
    OLLA_CHECK_EQ_I64(alap[4], 4);
    /* x and y meet at node 3; a dies before x... no: a is read by 2 which
     * is unordered with 1, so a and x may be live together */
    OLLA_CHECK(!olla_tensors_disjoint(&dag, &r, x, y));
    OLLA_CHECK(!olla_tensors_disjoint(&dag, &r, a, x));
    olla_reach_free(&r);
    olla_dag_free(&dag);
}

/* forward f, loss, backward b1 and b2 making gradients, then updates: the
 * generic Sub(p, Mul(lr, g)) pattern and an accumulator by operator type */
OLLA_TEST(test_early_update_edges)
{
    olla_error err = {0};
    olla_dag dag;
    olla_dag_builder *b = olla_dag_builder_new(8, 10);
    /* 0 f, 1 loss, 2 b2, 3 b1, 4 mul2, 5 sub2, 6 acc1, 7 b0 */
    int a = olla_dag_builder_tensor(b, 0, 10, 0);
    int l = olla_dag_builder_tensor(b, 1, 10, 0);
    int g2 = olla_dag_builder_tensor(b, 2, 10, 0);
    int d2 = olla_dag_builder_tensor(b, 2, 10, 0);
    int g1 = olla_dag_builder_tensor(b, 3, 10, 0);
    int d1 = olla_dag_builder_tensor(b, 3, 10, 0);
    int m2 = olla_dag_builder_tensor(b, 4, 10, 0);
    olla_dag_builder_tensor(b, 5, 10, 1);
    olla_dag_builder_tensor(b, 6, 1, 1);
    olla_dag_builder_tensor(b, 7, 10, 1);
    olla_dag_builder_use(b, 1, a);
    olla_dag_builder_use(b, 2, l);
    olla_dag_builder_use(b, 3, d2);
    olla_dag_builder_use(b, 3, a);
    olla_dag_builder_use(b, 4, g2);
    olla_dag_builder_use(b, 5, m2);
    olla_dag_builder_use(b, 6, g1);
    olla_dag_builder_use(b, 7, d1);
    OLLA_CHECK(olla_dag_build(b, 8, &dag, &err) == OLLA_OK);
    static const char *const types[] = {"Gemm", "Loss", "Gemm", "Gemm", "Mul", "Sub", "InPlaceAccumulatorV2", "Gemm"};
    dag.op_type = types;
    int *from = NULL, *to = NULL, cnt = 0;
    OLLA_CHECK(olla_early_update_edges(&dag, &from, &to, &cnt, &err) == OLLA_OK);
    int saw5 = 0;
    for (int i = 0; i < cnt; i++) {
        /* only updates get edges, never towards their own ancestors */
        OLLA_CHECK(from[i] == 5 || from[i] == 6 || from[i] == 7);
        if (from[i] == 5) {
            saw5 = 1;
            OLLA_CHECK(to[i] == 3 || to[i] == 7); /* the next backward nodes */
        }
    }
    OLLA_CHECK(saw5);
    olla_dag aug;
    OLLA_CHECK(olla_dag_add_edges(&dag, from, to, cnt, &aug, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(aug.n_tensors, dag.n_tensors + cnt);
    int order[8];
    OLLA_CHECK(olla_dag_stable_topo(&aug, order, &err) == OLLA_OK); /* still acyclic */
    OLLA_CHECK(olla_dag_is_topological(&dag, order));
    OLLA_CHECK_EQ_I64(peak_of(&aug, order), peak_of(&dag, order));
    free(from);
    free(to);
    olla_dag_free(&aug);
    olla_dag_free(&dag);
}

OLLA_TEST(test_early_edges_random_acyclic)
{
    for (int seed = 0; seed < 100; seed++) {
        olla_dag dag, aug;
        olla_error err = {0};
        OLLA_CHECK(tsu_random_dag((uint64_t)seed + 9000, 30, 10, &dag));
        int *from = NULL, *to = NULL, cnt = 0;
        OLLA_CHECK(olla_early_update_edges(&dag, &from, &to, &cnt, &err) == OLLA_OK);
        OLLA_CHECK(olla_dag_add_edges(&dag, from, to, cnt, &aug, &err) == OLLA_OK);
        int order[30];
        OLLA_CHECK(olla_dag_stable_topo(&aug, order, &err) == OLLA_OK);
        free(from);
        free(to);
        olla_dag_free(&aug);
        olla_dag_free(&dag);
    }
}

/* Random graphs with in-place candidates: a node may write its output over
 * its first input of the same size (not a graph output). */
static int random_inplace_dag(uint64_t seed, int n, olla_dag *dag)
{
    olla_error err = {0};
    tsu_state = seed * 2654435761u + 99u;
    olla_dag_builder *b = olla_dag_builder_new(n, 2 * n);
    int made[32], nm = 0;
    int64_t size[32];
    unsigned char out[32];
    for (int v = 0; v < n; v++) {
        int first_in = -1;
        for (int i = 0; i < nm; i++)
            if (tsu_rand() % 100 < 35) {
                olla_dag_builder_use(b, v, made[i]);
                if (first_in < 0)
                    first_in = i;
            }
        int k = 1 + (int)(tsu_rand() % 2);
        for (int j = 0; j < k && nm < 32; j++) {
            int64_t bytes = 1 + (int64_t)(tsu_rand() % 9) * 8;
            int is_out = tsu_rand() % 4 == 0;
            if (j == 0 && first_in >= 0 && !out[first_in] && tsu_rand() % 2)
                bytes = size[first_in];
            int e = olla_dag_builder_tensor(b, v, bytes, is_out);
            if (j == 0 && first_in >= 0 && !out[first_in] && bytes == size[first_in])
                olla_dag_builder_inplace(b, v, made[first_in], e);
            size[nm] = bytes;
            out[nm] = (unsigned char)is_out;
            made[nm++] = e;
        }
    }
    return olla_dag_build(b, n, dag, &err) == OLLA_OK;
}

typedef struct {
    int64_t min_last; /* least live bytes at the last step over every order */
} last_step;

static void visit_last(const olla_dag *d, const int *order, void *ctx)
{
    last_step *c = ctx;
    int64_t live[16];
    peak_live(d, order, live, NULL);
    if (c->min_last < 0 || live[d->n_nodes - 1] < c->min_last)
        c->min_last = live[d->n_nodes - 1];
}

/* The output bound from its definition, by brute force over every set B of
 * nodes: the graph outputs made by B and its ancestors, plus the least
 * over B's nodes of their own bytes (inputs and outputs that are no graph
 * outputs, less the outputs of their in-place candidates). */
static int64_t output_bound_by_subsets(const olla_dag *d)
{
    int n = d->n_nodes;
    int64_t own[16], best = 0;
    for (int w = 0; w < n; w++) {
        own[w] = 0;
        for (int k = d->in_start[w]; k < d->in_start[w + 1]; k++)
            own[w] += d->is_output[d->in_list[k]] ? 0 : d->bytes[d->in_list[k]];
        for (int k = d->out_start[w]; k < d->out_start[w + 1]; k++)
            own[w] += d->is_output[d->out_list[k]] ? 0 : d->bytes[d->out_list[k]];
        for (int k = d->n_inplace ? d->inplace_start[w] : 0; d->n_inplace && k < d->inplace_start[w + 1]; k++)
            own[w] -= d->bytes[d->inplace_out[k]];
    }
    for (unsigned set = 1; set < (1u << n); set++) {
        unsigned up = set; /* B and its ancestors: nodes are in topological id order */
        for (int v = n - 1; v >= 0; v--)
            if (up >> v & 1)
                for (int k = d->in_start[v]; k < d->in_start[v + 1]; k++)
                    up |= 1u << d->producer[d->in_list[k]];
        int64_t made = 0, least = INT64_MAX;
        for (int e = 0; e < d->n_tensors; e++)
            if (d->is_output[e] && (up >> d->producer[e] & 1))
                made += d->bytes[e];
        for (int w = 0; w < n; w++)
            if ((set >> w & 1) && own[w] < least)
                least = own[w];
        if (made + least > best)
            best = made + least;
    }
    return best;
}

/* The output bound is the largest over every set of nodes (checked against
 * all subsets), at least the least that is live at the last step of any
 * order and at most the optimum (checked against every topological order). */
OLLA_TEST(test_output_bound_against_every_order)
{
    int with_inplace = 0, above_last = 0, above_node_io = 0;
    for (int seed = 0; seed < 160; seed++) {
        olla_dag dag;
        int n = 2 + seed % 8;
        OLLA_CHECK(seed % 2 ? random_inplace_dag((uint64_t)seed + 700, n, &dag)
                            : tsu_random_dag((uint64_t)seed + 700, n, 30, &dag));
        with_inplace += dag.n_inplace > 0;
        last_step c = {-1};
        int64_t opt = tsu_enumerate(&dag, NULL, NULL, visit_last, &c);
        int last = -2;
        int64_t ob = olla_bound_outputs(&dag, &last);
        OLLA_CHECK_EQ_I64(ob, output_bound_by_subsets(&dag));
        OLLA_CHECK(ob >= c.min_last);
        OLLA_CHECK(ob <= opt);
        OLLA_CHECK(last >= 0 && last < n);
        above_last += ob > c.min_last;
        above_node_io += ob > olla_bound_node_io(&dag);
        olla_dag_free(&dag);
    }
    OLLA_CHECK(with_inplace > 20);  /* the in-place savings were exercised */
    OLLA_CHECK(above_last > 20);    /* sets other than the whole graph raise it */
    OLLA_CHECK(above_node_io > 20); /* and it says something the per-node bound does not */
}

/* Ancestor counts from 1,024-node passes and the split nodes from one order
 * agree with the closure, on graphs of several passes. */
OLLA_TEST(test_counts_and_cuts_match_the_closure)
{
    int cuts = 0;
    for (int seed = 0; seed < 12; seed++) {
        olla_dag dag;
        olla_error err = {0};
        int n = seed < 6 ? 5 + 7 * seed : 1000 + 600 * (seed - 6);
        OLLA_CHECK(tsu_random_dag((uint64_t)seed + 3300, n, seed < 6 ? 70 : 1, &dag));
        olla_reach r;
        OLLA_CHECK(olla_reach_build(&dag, &r, &err) == OLLA_OK);
        int *na = malloc((size_t)n * sizeof(int)), *nd = malloc((size_t)n * sizeof(int));
        int *asap = malloc((size_t)n * sizeof(int)), *alap = malloc((size_t)n * sizeof(int));
        int *order = malloc((size_t)n * sizeof(int));
        unsigned char *cut = malloc((size_t)n);
        OLLA_CHECK(olla_reach_counts(&dag, na, nd, &err) == OLLA_OK);
        OLLA_CHECK(olla_windows_build(&dag, asap, alap, &err) == OLLA_OK);
        int bad = 0;
        for (int v = 0; v < n; v++) {
            bad += na[v] != r.n_anc[v] || nd[v] != r.n_desc[v];
            bad += asap[v] != r.n_anc[v] || alap[v] != n - 1 - r.n_desc[v];
        }
        OLLA_CHECK_EQ_I64(bad, 0);
        for (int pass = 0; pass < 2; pass++) { /* two different orders give the same cuts */
            if (pass == 0)
                OLLA_CHECK(olla_dag_stable_topo(&dag, order, &err) == OLLA_OK);
            else
                OLLA_CHECK(olla_sched_dfs_post(&dag, order, &err) == OLLA_OK);
            OLLA_CHECK(olla_order_cuts(&dag, order, cut, &err) == OLLA_OK);
            for (int v = 0; v < n; v++) {
                int all = r.n_anc[v] + r.n_desc[v] == n - 1;
                bad += cut[v] != all;
                cuts += all;
            }
        }
        OLLA_CHECK_EQ_I64(bad, 0);
        free(na);
        free(nd);
        free(asap);
        free(alap);
        free(order);
        free(cut);
        olla_reach_free(&r);
        olla_dag_free(&dag);
    }
    OLLA_CHECK(cuts > 0); /* some graphs had split nodes */
}

OLLA_TEST_MAIN(OLLA_T(test_windows_bounds_and_precedence_hold_in_every_order), OLLA_T(test_levels_and_reach),
               OLLA_T(test_output_bound_against_every_order), OLLA_T(test_counts_and_cuts_match_the_closure),
               OLLA_T(test_early_update_edges), OLLA_T(test_early_edges_random_acyclic))
