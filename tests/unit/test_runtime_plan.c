#include "olla_plan.h"
#include "olla_test.h"

OLLA_TEST(test_parse_and_query)
{
    olla_error err = {0};
    olla_runtime_plan *p = NULL;
    const char *json = "{\"version\":1,\"alignment\":64,\"arena_bytes\":192,\"tensors\":["
                       "{\"name\":\"a\",\"offset\":0,\"bytes\":128},{\"name\":\"b\",\"offset\":128,\"bytes\":64}]}";
    OLLA_CHECK(olla_runtime_plan_parse(json, &p, &err) == OLLA_OK);
    if (!p)
        return;
    OLLA_CHECK_EQ_I64(olla_runtime_plan_arena_bytes(p), 192);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_alignment(p), 64);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_offset(p, "b"), 128);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_offset(p, "zz"), -1);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_allocation_count(p), 2);
    OLLA_CHECK(strcmp(olla_runtime_plan_allocation(p, 1)->name, "b") == 0);
    OLLA_CHECK(olla_runtime_plan_allocation(p, 2) == NULL);
    olla_runtime_plan_free(p);
}

/* version 2: the share of each allocation, for the runtime to make a view
 * or run a kernel in place */
OLLA_TEST(test_sharing_allocations)
{
    olla_error err = {0};
    olla_runtime_plan *p = NULL;
    const char *json = "{\"version\":2,\"alignment\":64,\"arena_bytes\":128,\"sharing\":\"runtime\",\"tensors\":["
                       "{\"name\":\"a\",\"offset\":0,\"bytes\":128},"
                       "{\"name\":\"v\",\"offset\":0,\"bytes\":128,\"shares\":\"a\",\"sharing\":\"alias\"},"
                       "{\"name\":\"r\",\"offset\":0,\"bytes\":128,\"shares\":\"v\",\"sharing\":\"inplace\"}]}";
    OLLA_CHECK(olla_runtime_plan_parse(json, &p, &err) == OLLA_OK);
    if (!p)
        return;
    OLLA_CHECK_EQ_I64(olla_runtime_plan_sharing(p), 1);
    const olla_allocation *a = olla_runtime_plan_allocation(p, 0), *v = olla_runtime_plan_allocation(p, 1),
                          *r = olla_runtime_plan_allocation(p, 2);
    OLLA_CHECK(a->share == OLLA_BUFFER_OWN && a->shares == NULL);
    OLLA_CHECK(v->share == OLLA_BUFFER_VIEW && strcmp(v->shares, "a") == 0);
    OLLA_CHECK(r->share == OLLA_BUFFER_INPLACE && strcmp(r->shares, "v") == 0);
    olla_runtime_plan_free(p);
    /* a version 1 plan still reads, with no sharing */
    const char *v1 = "{\"version\":1,\"alignment\":1,\"arena_bytes\":4,\"tensors\":[{\"name\":\"a\",\"offset\":0,"
                     "\"bytes\":4}]}";
    OLLA_CHECK(olla_runtime_plan_parse(v1, &p, &err) == OLLA_OK);
    if (p) {
        OLLA_CHECK_EQ_I64(olla_runtime_plan_sharing(p), 0);
        OLLA_CHECK(olla_runtime_plan_allocation(p, 0)->share == OLLA_BUFFER_OWN);
        olla_runtime_plan_free(p);
    }
}

OLLA_TEST(test_rejects_bad_plans)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        {"{", "not valid JSON"},
        {"{\"version\":3,\"alignment\":1,\"arena_bytes\":1,\"tensors\":[]}", "format version 3"},
        {"{\"version\":2,\"alignment\":1,\"arena_bytes\":1,\"sharing\":\"some\",\"tensors\":[]}", "\"sharing\" must be"},
        {"{\"version\":2,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":0,\"bytes\":4,"
         "\"shares\":\"b\"}]}",
         "together"},
        {"{\"version\":2,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":0,\"bytes\":4,"
         "\"shares\":\"b\",\"sharing\":\"copy\"}]}",
         "together"},
        {"{\"version\":2,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":0,\"bytes\":4,"
         "\"shares\":\"b\",\"sharing\":\"alias\"}]}",
         "no earlier entry"},
        {"{\"version\":1,\"alignment\":0,\"arena_bytes\":1,\"tensors\":[]}", "valid alignment"},
        {"{\"version\":1,\"alignment\":1,\"arena_bytes\":1}", "no tensors array"},
        {"{\"version\":1,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":-1,\"bytes\":1}]}",
         "entry 0"},
        {"{\"version\":1,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":4,\"bytes\":5}]}",
         "beyond the arena"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        olla_error err = {0};
        olla_runtime_plan *p = NULL;
        OLLA_CHECK(olla_runtime_plan_parse(cases[i].json, &p, &err) == OLLA_ERR_INPUT);
        OLLA_CHECK_STR_CONTAINS(err.message, cases[i].msg);
        OLLA_CHECK(p == NULL);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_parse_and_query), OLLA_T(test_sharing_allocations), OLLA_T(test_rejects_bad_plans))
