/* The checker compares every planned tensor with the size the model declares
 * for it (value_info, graph outputs), independently of shape inference. */
#pragma GCC diagnostic ignored "-Wunused-function" /* a few of the builder helpers */
#include "model_builder.h"
#include "olla_test.h"
#include "plan/olla_check.h"

/* a: int64[4] in value_info; b: float32[N] as graph output. */
static void declare_two(mb_model *mb)
{
    mb_init(mb, 17);
    long long four = 4, sym = -1;
    mb_push(mb, &mb->graph.n_value_info, (void ***)&mb->graph.value_info, mb_value(mb, "a", 7, 1, &four));
    mb_push(mb, &mb->graph.n_output, (void ***)&mb->graph.output, mb_value(mb, "b", 1, 1, &sym));
}

static olla_status check(mb_model *mb, int64_t align, int64_t a_bytes, int64_t b_bytes, const olla_check_options *co,
                         olla_error *err)
{
    olla_stored_entry e[2] = {{"a", 0, a_bytes, OLLA_BUFFER_OWN, NULL}, {"b", 0, b_bytes, OLLA_BUFFER_OWN, NULL}};
    olla_stored_plan sp = {.alignment = align, .arena_bytes = 1024, .n_entries = 2, .entries = e};
    return olla_plan_check_declared(&mb->graph, &sp, co, "m.onnx", err);
}

OLLA_TEST(test_declared_sizes_match)
{
    mb_model mb;
    declare_two(&mb);
    olla_dim_binding n3 = {"N", 3};
    olla_check_options bound = {.dims = &n3, .n_dims = 1}, none = {0};
    olla_error err = {0};
    OLLA_CHECK(check(&mb, 1, 32, 12, &bound, &err) == OLLA_OK);
    OLLA_CHECK(check(&mb, 64, 64, 64, &bound, &err) == OLLA_OK);
    /* N unbound: b's declaration has no size and is not compared */
    OLLA_CHECK(check(&mb, 1, 32, 5, &none, &err) == OLLA_OK);
    mb_free(&mb);
}

OLLA_TEST(test_plan_smaller_than_declared_refused)
{
    mb_model mb;
    declare_two(&mb);
    olla_dim_binding n3 = {"N", 3};
    olla_check_options bound = {.dims = &n3, .n_dims = 1};
    olla_error err = {0};
    OLLA_CHECK(check(&mb, 1, 1, 12, &bound, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "m.onnx: the plan gives 'a' 1 byte but the model declares it int64[4], 32 bytes");
    olla_error_clear(&err);
    OLLA_CHECK(check(&mb, 1, 32, 8, &bound, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "'b' 8 bytes but the model declares it float32[3], 12 bytes");
    olla_error_clear(&err);
    /* sizes are compared after rounding up to the plan's alignment */
    OLLA_CHECK(check(&mb, 64, 32, 64, &bound, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "(64 with the alignment)");
    mb_free(&mb);
}

OLLA_TEST_MAIN(OLLA_T(test_declared_sizes_match), OLLA_T(test_plan_smaller_than_declared_refused))
