/* The DAG's liveness rules on hand-built graphs: peak of a chain, stable
 * topological order and cycles, a tensor nobody reads. */
#include "dag_eval.h"
#include "olla_test.h"
#include "passes/analysis/olla_dag.h"

/* a -> (x) -> b -> (y) -> c ; a also produces z consumed by c */
static void build_chain(olla_dag *dag)
{
    olla_error err = {0};
    olla_dag_builder *b = olla_dag_builder_new(3, 3);
    int x = olla_dag_builder_tensor(b, 0, 10, 0);
    int z = olla_dag_builder_tensor(b, 0, 100, 0);
    int y = olla_dag_builder_tensor(b, 1, 1000, 1);
    olla_dag_builder_use(b, 1, x);
    olla_dag_builder_use(b, 2, y);
    olla_dag_builder_use(b, 2, z);
    olla_dag_builder_use(b, 2, z);
    OLLA_CHECK(olla_dag_build(b, 3, dag, &err) == OLLA_OK);
}

OLLA_TEST(test_peak_chain)
{
    olla_dag dag;
    build_chain(&dag);
    int order[3] = {0, 1, 2};
    int64_t live[3];
    int at = -1;
    OLLA_CHECK(olla_dag_is_topological(&dag, order));
    /* step0: x+z = 110; step1: x,z,y = 1110; step2: y,z = 1100 */
    OLLA_CHECK_EQ_I64(peak_live(&dag, order, live, &at), 1110);
    OLLA_CHECK_EQ_I64(live[0], 110);
    OLLA_CHECK_EQ_I64(live[2], 1100);
    OLLA_CHECK_EQ_I64(at, 1);
    int bad[3] = {1, 0, 2};
    OLLA_CHECK(!olla_dag_is_topological(&dag, bad));
    olla_dag_free(&dag);
}

OLLA_TEST(test_stable_topo_and_cycle)
{
    olla_error err = {0};
    olla_dag dag;
    olla_dag_builder *b = olla_dag_builder_new(3, 2);
    int t2 = olla_dag_builder_tensor(b, 2, 1, 0); /* node 2 feeds node 0 */
    olla_dag_builder_use(b, 0, t2);
    OLLA_CHECK(olla_dag_build(b, 3, &dag, &err) == OLLA_OK);
    int order[3];
    OLLA_CHECK(olla_dag_stable_topo(&dag, order, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(order[0], 1);
    OLLA_CHECK_EQ_I64(order[1], 2);
    OLLA_CHECK_EQ_I64(order[2], 0);
    olla_dag_free(&dag);

    b = olla_dag_builder_new(2, 2);
    int a = olla_dag_builder_tensor(b, 0, 1, 0);
    int c = olla_dag_builder_tensor(b, 1, 1, 0);
    olla_dag_builder_use(b, 1, a);
    olla_dag_builder_use(b, 0, c);
    OLLA_CHECK(olla_dag_build(b, 2, &dag, &err) == OLLA_OK);
    OLLA_CHECK(olla_dag_stable_topo(&dag, order, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "cycle");
    olla_dag_free(&dag);
}

OLLA_TEST(test_unconsumed_tensor_lives_one_step)
{
    olla_error err = {0};
    olla_dag dag;
    olla_dag_builder *b = olla_dag_builder_new(2, 2);
    olla_dag_builder_tensor(b, 0, 7, 0);  /* dead output */
    olla_dag_builder_tensor(b, 1, 5, 0);
    OLLA_CHECK(olla_dag_build(b, 2, &dag, &err) == OLLA_OK);
    int order[2] = {0, 1};
    int first[2], last[2];
    lifetimes_of(&dag, order, first, last);
    OLLA_CHECK_EQ_I64(first[0], 0);
    OLLA_CHECK_EQ_I64(last[0], 0);
    OLLA_CHECK_EQ_I64(peak_of(&dag, order), 7);
    olla_dag_free(&dag);
}

OLLA_TEST_MAIN(OLLA_T(test_peak_chain), OLLA_T(test_stable_topo_and_cycle), OLLA_T(test_unconsumed_tensor_lives_one_step))
