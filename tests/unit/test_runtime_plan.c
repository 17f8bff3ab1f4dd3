/* The runtime plan API (include/olla_plan.h): parsing and queries, shared
 * allocations, bad plans refused, the dims and inputs a plan was made for;
 * and where a report says ONNX Runtime would hold more with its arena on
 * (olla_report_held_more, the report's held_more), and when a listing that
 * saves under 1% there is not written (olla_ort_listing_dominated). */
#include "olla.h"
#include "olla_plan.h"
#include "olla_test.h"
#include "pipeline/olla_pipeline.h"

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

static const char *const recorded =
    "{\"version\":1,\"alignment\":1,\"arena_bytes\":8,\"tensors\":[{\"name\":\"a\",\"offset\":0,\"bytes\":8}],"
    "\"dims\":{\"batch\":1},\"inputs\":{\"x\":[1,3],\"s\":[]}}";

OLLA_TEST(test_recorded_dims_and_inputs)
{
    olla_error err = {0};
    olla_runtime_plan *p = NULL;
    OLLA_CHECK(olla_runtime_plan_parse(recorded, &p, &err) == OLLA_OK);
    if (!p)
        return;
    int64_t v = 0;
    OLLA_CHECK_EQ_I64(olla_runtime_plan_dim_count(p), 1);
    OLLA_CHECK(strcmp(olla_runtime_plan_dim_at(p, 0, &v), "batch") == 0 && v == 1);
    OLLA_CHECK(olla_runtime_plan_dim_at(p, 1, &v) == NULL);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_dim(p, "batch"), 1);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_dim(p, "seq"), -1);
    OLLA_CHECK_EQ_I64(olla_runtime_plan_input_count(p), 2);
    int rank = -1;
    const int64_t *dims = NULL;
    OLLA_CHECK(strcmp(olla_runtime_plan_input_at(p, 0, &rank, &dims), "x") == 0);
    OLLA_CHECK(rank == 2 && dims[0] == 1 && dims[1] == 3);
    OLLA_CHECK(strcmp(olla_runtime_plan_input_at(p, 1, &rank, &dims), "s") == 0 && rank == 0);
    OLLA_CHECK(olla_runtime_plan_input_at(p, 2, &rank, &dims) == NULL);
    olla_runtime_plan_free(p);
}

/* A runtime about to run at batch 8 a plan made for batch 1 is refused. */
OLLA_TEST(test_check_inputs_refuses_other_shapes)
{
    olla_error err = {0};
    olla_runtime_plan *p = NULL;
    OLLA_CHECK(olla_runtime_plan_parse(recorded, &p, &err) == OLLA_OK);
    if (!p)
        return;
    const int64_t same[] = {1, 3}, batch8[] = {8, 3}, flat[] = {3};
    olla_input_shape ok[] = {{"x", 2, same}, {"s", 0, NULL}};
    OLLA_CHECK(olla_runtime_plan_check_inputs(p, ok, 2, &err) == OLLA_OK);
    olla_input_shape big = {"x", 2, batch8};
    OLLA_CHECK(olla_runtime_plan_check_inputs(p, &big, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "input 'x' has shape [8,3] but the plan was made for [1,3]");
    olla_error_clear(&err);
    olla_input_shape rank1 = {"x", 1, flat};
    OLLA_CHECK(olla_runtime_plan_check_inputs(p, &rank1, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "has shape [3] but the plan was made for [1,3]");
    olla_error_clear(&err);
    olla_input_shape other = {"y", 2, same};
    OLLA_CHECK(olla_runtime_plan_check_inputs(p, &other, 1, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "input 'y' [1,3]: the plan records no such input");
    olla_runtime_plan_free(p);
    /* a plan that records nothing refuses too */
    olla_error_clear(&err);
    OLLA_CHECK(olla_runtime_plan_parse("{\"version\":1,\"alignment\":1,\"arena_bytes\":0,\"tensors\":[]}", &p, &err) ==
               OLLA_OK);
    if (p) {
        OLLA_CHECK(olla_runtime_plan_check_inputs(p, ok, 1, &err) == OLLA_ERR_INPUT);
        OLLA_CHECK_STR_CONTAINS(err.message, "records no input shapes");
        olla_runtime_plan_free(p);
    }
}

OLLA_TEST(test_recorded_fields_validated)
{
    static const char *const bad[] = {
        "{\"version\":1,\"alignment\":1,\"arena_bytes\":0,\"tensors\":[],\"dims\":{\"batch\":-1}}",
        "{\"version\":1,\"alignment\":1,\"arena_bytes\":0,\"tensors\":[],\"dims\":[1]}",
        "{\"version\":1,\"alignment\":1,\"arena_bytes\":0,\"tensors\":[],\"inputs\":{\"x\":[1,\"a\"]}}",
        "{\"version\":1,\"alignment\":1,\"arena_bytes\":0,\"tensors\":[],\"inputs\":{\"x\":3}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        olla_error err = {0};
        olla_runtime_plan *p = NULL;
        OLLA_CHECK(olla_runtime_plan_parse(bad[i], &p, &err) == OLLA_ERR_INPUT);
        OLLA_CHECK(p == NULL);
    }
}

/* End to end: a model planned at batch 2 records it in the written file,
 * and its runtime refuses batch 8. */
OLLA_TEST(test_planned_model_refuses_mismatched_batch)
{
    olla_error err = {0};
    olla_model *m = NULL;
    OLLA_CHECK(olla_model_load(OLLA_SOURCE_DIR "/models/symbolic_dims.onnx", &m, &err) == OLLA_OK);
    if (!m)
        return;
    olla_dim_binding b = {"batch", 2};
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = 0;
    opt.time_limit = 5;
    opt.dims = &b;
    opt.n_dims = 1;
    olla_plan *plan = NULL;
    olla_report rep;
    char out[] = OLLA_BINARY_DIR "/runtime_plan_batch.onnx";
    OLLA_CHECK(olla_optimize(m, &opt, &plan, &rep, &err) == OLLA_OK);
    OLLA_CHECK(plan && olla_write_model(m, plan, out, &err) == OLLA_OK);
    olla_runtime_plan *p = NULL;
    OLLA_CHECK(olla_runtime_plan_load(out, &p, &err) == OLLA_OK);
    if (p) {
        OLLA_CHECK_EQ_I64(olla_runtime_plan_dim(p, "batch"), 2);
        const int64_t at2[] = {2, 16, 32}, at8[] = {8, 16, 32};
        olla_input_shape x2 = {"x", 3, at2}, x8 = {"x", 3, at8};
        OLLA_CHECK(olla_runtime_plan_check_inputs(p, &x2, 1, &err) == OLLA_OK);
        OLLA_CHECK(olla_runtime_plan_check_inputs(p, &x8, 1, &err) == OLLA_ERR_INPUT);
        OLLA_CHECK_STR_CONTAINS(err.message, "input 'x' has shape [8,16,32] but the plan was made for [2,16,32]");
        olla_runtime_plan_free(p);
    }
    remove(out);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
}

/* olla_report_held_more answers for the JSON report and the summary alike:
 * the setting only with runtime_search "held more" or arena_searched, a
 * setting in range, and a runtime that is not "listed". */
OLLA_TEST(test_report_held_more)
{
    olla_report r;
    memset(&r, 0, sizeof r);
    r.runtime = "ort";
    r.runtime_search = "budget";
    r.held_more_setting = OLLA_ORT_DEFAULTS;
    r.held_more_input_bytes = 1000;
    r.held_more_bytes = 1500;
    r.lower_bound_bytes = r.memory_limit_bytes = -1;
    r.ort_settings[OLLA_ORT_DEFAULTS].arena = r.ort_settings[OLLA_ORT_DEFAULTS].mem_pattern = 1;
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), -1); /* neither held more nor searched again */
    char *j = olla_report_to_json(&r, 0);
    OLLA_CHECK(j && !strstr(j, "\"held_more\""));
    free(j);
    r.arena_searched = 1;
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), OLLA_ORT_DEFAULTS);
    j = olla_report_to_json(&r, 0);
    OLLA_CHECK_STR_CONTAINS(j ? j : "", "\"held_more\":{\"enableCpuMemArena\":true,\"enableMemPattern\":true,"
                                        "\"run\":\"first\",\"input_bytes\":1000,\"bytes\":1500}");
    free(j);
    r.arena_searched = 0;
    r.runtime_search = "held more";
    r.held_more_setting = OLLA_ORT_ARENA_NO_PATTERN;
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), OLLA_ORT_ARENA_NO_PATTERN);
    r.held_more_setting = OLLA_ORT_N_SETTINGS; /* out of range: no setting to name */
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), -1);
    r.held_more_setting = -1;
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), -1);
    r.held_more_setting = OLLA_ORT_ARENA_NO_PATTERN;
    r.runtime = "listed";
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), -1);
    j = olla_report_to_json(&r, 0);
    OLLA_CHECK(j && !strstr(j, "\"held_more\""));
    free(j);
    r.runtime = NULL; /* a report plan_model did not fill */
    OLLA_CHECK_EQ_I64(olla_report_held_more(&r), -1);
}

/* Every setting's four figures equal to in. */
static void same_everywhere(olla_ort_setting_figures *s, int64_t in)
{
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++)
        s[k] = (olla_ort_setting_figures){k >= OLLA_ORT_DEFAULTS, k == OLLA_ORT_ARENA_OFF || k == OLLA_ORT_DEFAULTS,
                                          in, in, in, in};
}

/* A listing is replaced by the input's when it saves at least 1% under no
 * setting, on no run, and costs more than 0.1% under one: the figures of
 * the traced ResNet-50 and ResNet-34 steps at batch 1 and of a generated
 * CNN step, rounded. */
OLLA_TEST(test_listing_dominated)
{
    olla_ort_setting_figures s[OLLA_ORT_N_SETTINGS];
    olla_ort_increase w = {-1, 0, -1, -1};
    same_everywhere(s, 1000000);
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 0); /* the same everywhere: kept */
    OLLA_CHECK_EQ_I64(w.setting, -1);
    s[OLLA_ORT_ARENA_OFF].steady_bytes = 1214000; /* ResNet-50: 21.4% more there, the same elsewhere */
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 1);
    OLLA_CHECK_EQ_I64(w.setting, OLLA_ORT_ARENA_OFF);
    OLLA_CHECK_EQ_I64(w.steady, 1);
    OLLA_CHECK_EQ_I64(w.input_bytes, 1000000);
    OLLA_CHECK_EQ_I64(w.bytes, 1214000);
    s[OLLA_ORT_DEFAULTS].first_run_bytes = 991000; /* ResNet-34: 0.9% less with the arena on */
    s[OLLA_ORT_DEFAULTS].steady_bytes = 994000;
    s[OLLA_ORT_ARENA_NO_PATTERN].first_run_bytes = s[OLLA_ORT_ARENA_NO_PATTERN].steady_bytes = 991000;
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 1);
    s[OLLA_ORT_DEFAULTS].steady_bytes = 990000; /* exactly 1% less over three runs: kept */
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 0);
    same_everywhere(s, 1000000); /* 45% less over three runs with ORT's defaults, 0.5% more there */
    s[OLLA_ORT_DEFAULTS].steady_bytes = 550000;
    s[OLLA_ORT_ARENA_OFF].steady_bytes = 1005000;
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 0);
    same_everywhere(s, 1000000); /* within 0.1%: kept */
    s[OLLA_ORT_ARENA_OFF].steady_bytes = 1001000;
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 0);
    s[OLLA_ORT_ARENA_OFF].steady_bytes = 1001001;
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 1);
    /* an unknown figure on either side is not compared, and a figure the
     * input holds nothing for is no saving */
    s[OLLA_ORT_DEFAULTS].input_first_run_bytes = -1;
    s[OLLA_ORT_DEFAULTS].first_run_bytes = 1;
    s[OLLA_ORT_ARENA_NO_PATTERN].steady_bytes = -1;
    s[OLLA_ORT_ARENA_NO_PATTERN].input_steady_bytes = 5;
    s[OLLA_ORT_ARENA_OFF_NO_PATTERN].input_first_run_bytes = s[OLLA_ORT_ARENA_OFF_NO_PATTERN].first_run_bytes = 0;
    OLLA_CHECK_EQ_I64(olla_ort_listing_dominated(s, &w), 1);
    OLLA_CHECK_EQ_I64(w.bytes, 1001001);
}

OLLA_TEST_MAIN(OLLA_T(test_parse_and_query), OLLA_T(test_sharing_allocations), OLLA_T(test_rejects_bad_plans),
               OLLA_T(test_recorded_dims_and_inputs),
               OLLA_T(test_check_inputs_refuses_other_shapes), OLLA_T(test_recorded_fields_validated),
               OLLA_T(test_planned_model_refuses_mismatched_batch), OLLA_T(test_report_held_more),
               OLLA_T(test_listing_dominated))
