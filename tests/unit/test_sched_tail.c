/* olla-onnx tests: the order's last groups of nodes put in reverse order of
 * what they free (olla_sched_nest_tail); through olla_optimize in
 * test_order_choice.c. */
#include "olla_test.h"
#include "test_sched_util.h"

#include "solver/olla_schedule.h"

static int nest(const olla_dag *dag, const int *order, int *out)
{
    olla_error err = {0};
    int groups = -1;
    if (olla_sched_nest_tail(dag, order, out, &groups, &err) != OLLA_OK) {
        fprintf(stderr, "olla_sched_nest_tail: %s\n", err.message);
        olla_test_failures++;
        return -1;
    }
    return groups;
}

static int is_permutation(const int *order, int n)
{
    int ok = 1;
    unsigned char *seen = calloc((size_t)n + 1, 1);
    for (int t = 0; t < n && ok; t++) {
        ok = order[t] >= 0 && order[t] < n && !seen[order[t]];
        if (ok)
            seen[order[t]] = 1;
    }
    free(seen);
    return ok;
}

/* Pairs of tensors in set whose lifetimes cross: one starts inside the
 * other and ends after it. */
static int crossing_pairs(const int *first, const int *last, const int *set, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = set[i], b = set[j];
            c += first[a] < first[b] && first[b] <= last[a] && last[a] < last[b];
        }
    return c;
}

/* A training step in miniature: layers forward, then backward from the
 * last layer to the first, each backward node making its weight's
 * gradient, then the weight updates (a Mul and a Sub whose result is a
 * graph output) listed from the last layer's to the first's, as an
 * optimizer over the parameters in reverse would. The gradients made first
 * are freed first: every pair of their lifetimes crosses. Nested, the
 * update of the gradient made last runs first and none cross; the peak is
 * the same. */
OLLA_TEST(test_deferred_updates_nest)
{
    enum { L = 12 };
    olla_error err = {0};
    olla_dag_builder *b = olla_dag_builder_new(4 * L, 8 * L);
    int act[L], dgrad[L], wgrad[L], node = 0;
    int fwd[L], bwd[L], mul[L], sub[L];
    for (int i = 0; i < L; i++) {
        fwd[i] = node++;
        act[i] = olla_dag_builder_tensor(b, fwd[i], 100, 0);
        if (i > 0)
            olla_dag_builder_use(b, fwd[i], act[i - 1]);
    }
    for (int i = L - 1; i >= 0; i--) {
        bwd[i] = node++;
        olla_dag_builder_use(b, bwd[i], act[i]);
        if (i < L - 1)
            olla_dag_builder_use(b, bwd[i], dgrad[i + 1]);
        dgrad[i] = olla_dag_builder_tensor(b, bwd[i], 50, i == 0);
        wgrad[i] = olla_dag_builder_tensor(b, bwd[i], 10 + i, 0);
    }
    for (int i = L - 1; i >= 0; i--) {
        mul[i] = node++;
        olla_dag_builder_use(b, mul[i], wgrad[i]);
        int scaled = olla_dag_builder_tensor(b, mul[i], 10 + i, 0);
        sub[i] = node++;
        olla_dag_builder_use(b, sub[i], scaled);
        olla_dag_builder_tensor(b, sub[i], 10 + i, 1);
    }
    olla_dag dag;
    OLLA_CHECK(olla_dag_build(b, node, &dag, &err) == OLLA_OK);
    int order[4 * L], out[4 * L];
    for (int v = 0; v < node; v++)
        order[v] = v;
    int groups = nest(&dag, order, out);
    OLLA_CHECK(groups >= 2);
    OLLA_CHECK(is_permutation(out, node));
    OLLA_CHECK(olla_dag_is_topological(&dag, out));
    OLLA_CHECK_EQ_I64(peak_of(&dag, out), peak_of(&dag, order));
    int first[8 * L], last[8 * L];
    lifetimes_of(&dag, order, first, last);
    OLLA_CHECK_EQ_I64(crossing_pairs(first, last, wgrad, L), L * (L - 1) / 2);
    lifetimes_of(&dag, out, first, last);
    OLLA_CHECK_EQ_I64(crossing_pairs(first, last, wgrad, L), 0);
    /* the forward pass stays where it was; each update's Mul right before its Sub */
    for (int i = 0; i < L; i++)
        OLLA_CHECK_EQ_I64(out[i], fwd[i]);
    int step[4 * L];
    for (int t = 0; t < node; t++)
        step[out[t]] = t;
    for (int i = 0; i < L; i++)
        OLLA_CHECK_EQ_I64(step[sub[i]], step[mul[i]] + 1);
    for (int i = 0; i + 1 < L; i++)
        OLLA_CHECK(step[mul[i]] < step[mul[i + 1]]);
    int again[4 * L];
    OLLA_CHECK_EQ_I64(nest(&dag, out, again), 0);
    OLLA_CHECK(!memcmp(again, out, sizeof out));
    olla_dag_free(&dag);
}

/* P0 makes y, P1 makes x1, P2 reads y and makes x2; then a chain of nodes
 * from x1 and a group of two from x2. Going back from the end the tail takes
 * the pair, the chain and P2 (with the pair: it makes x2); P1 would join the
 * chain. With a chain of 16 nodes the tail ends there: the chain reads x1,
 * made after y, which is what the pair's group reads from before the tail,
 * so the chain runs first. With 17 the tail ends inside the chain, whose
 * part in the tail reads its first node's tensor, made later than x2: the
 * order stays. */
static void two_groups(int chain, int *groups_out, int *moved)
{
    olla_error err = {0};
    olla_dag_builder *b = olla_dag_builder_new(chain + 5, chain + 6);
    int p0 = 0, p1 = 1, p2 = 2;
    int y = olla_dag_builder_tensor(b, p0, 8, 0);
    int x1 = olla_dag_builder_tensor(b, p1, 8, 0);
    olla_dag_builder_use(b, p2, y);
    int x2 = olla_dag_builder_tensor(b, p2, 8, 0);
    int prev = x1, node = 3;
    for (int k = 0; k < chain; k++, node++) {
        olla_dag_builder_use(b, node, prev);
        prev = olla_dag_builder_tensor(b, node, 4, k == chain - 1);
    }
    int g2a = node++, g2b = node++;
    olla_dag_builder_use(b, g2a, x2);
    int t = olla_dag_builder_tensor(b, g2a, 4, 0);
    olla_dag_builder_use(b, g2b, t);
    olla_dag_builder_tensor(b, g2b, 4, 1);
    olla_dag dag;
    OLLA_CHECK(olla_dag_build(b, node, &dag, &err) == OLLA_OK);
    int *order = malloc((size_t)node * sizeof *order), *out = malloc((size_t)node * sizeof *out);
    for (int v = 0; v < node; v++)
        order[v] = v;
    *groups_out = nest(&dag, order, out);
    OLLA_CHECK(olla_dag_is_topological(&dag, out));
    *moved = memcmp(order, out, (size_t)node * sizeof *out) != 0;
    if (*moved) { /* P0, P1, the chain, then P2 with its pair */
        OLLA_CHECK_EQ_I64(out[2], 3);
        OLLA_CHECK_EQ_I64(out[node - 3], p2);
        OLLA_CHECK_EQ_I64(out[node - 2], g2a);
        OLLA_CHECK_EQ_I64(out[node - 1], g2b);
    }
    free(order);
    free(out);
    olla_dag_free(&dag);
}

OLLA_TEST(test_groups_of_at_most_16_nodes)
{
    int groups = -1, moved = -1;
    two_groups(16, &groups, &moved);
    OLLA_CHECK_EQ_I64(groups, 2);
    OLLA_CHECK_EQ_I64(moved, 1);
    two_groups(17, &groups, &moved);
    OLLA_CHECK_EQ_I64(groups, 0);
    OLLA_CHECK_EQ_I64(moved, 0);
}

/* On random DAGs: always a topological permutation; 0 groups exactly when
 * the order stays; the nested order nests to itself. */
OLLA_TEST(test_random_dags)
{
    int graphs = olla_test_quick() ? 100 : 500, changed = 0;
    for (int g = 0; g < graphs; g++) {
        olla_dag dag;
        int n = 4 + g % 60;
        if (!tsu_random_dag(7000 + (uint64_t)g, n, g % 3 == 0 ? 5 : 20, &dag)) {
            olla_test_failures++;
            continue;
        }
        int *order = malloc((size_t)n * sizeof *order), *out = malloc((size_t)n * sizeof *out);
        int *again = malloc((size_t)n * sizeof *again);
        for (int v = 0; v < n; v++)
            order[v] = v;
        int groups = nest(&dag, order, out);
        OLLA_CHECK(is_permutation(out, n));
        OLLA_CHECK(olla_dag_is_topological(&dag, out));
        int moved = memcmp(order, out, (size_t)n * sizeof *out) != 0;
        OLLA_CHECK_EQ_I64(moved, groups > 0);
        changed += moved;
        OLLA_CHECK_EQ_I64(nest(&dag, out, again), 0);
        OLLA_CHECK(!memcmp(again, out, (size_t)n * sizeof *out));
        free(order);
        free(out);
        free(again);
        olla_dag_free(&dag);
    }
    OLLA_CHECK(changed > graphs / 10);
}

OLLA_TEST_MAIN(OLLA_T(test_deferred_updates_nest), OLLA_T(test_groups_of_at_most_16_nodes), OLLA_T(test_random_dags))
