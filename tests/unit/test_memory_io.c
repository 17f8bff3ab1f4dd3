/* Models to and from memory, for library callers that hold models as bytes
 * (the Python package): olla_model_load_bytes plans a model as
 * olla_model_load does, olla_write_model_bytes gives byte for byte the file
 * olla_write_model writes, external data needs a folder, and
 * olla_model_shapes_json checks the dims it is given. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "olla.h"
#include "olla_test.h"

static char tmpdir[] = "/tmp/olla-mem-XXXXXX";

static void options(olla_options *opt, olla_runtime rt)
{
    olla_options_init(opt);
    opt->verbosity = 0;
    opt->time_limit = 10;
    opt->runtime = rt;
}

/* The model planned from its file and from its bytes: the same bytes out,
 * and those the bytes the file writer writes. */
static void same_bytes(const char *name, olla_runtime rt)
{
    char path[512], out[512];
    snprintf(path, sizeof path, "%s/models/%s", OLLA_SOURCE_DIR, name);
    snprintf(out, sizeof out, "%s/%s", tmpdir, name);
    size_t len = 0, file_len = 0, mem_len = 0;
    unsigned char *data = olla_test_read_file(path, &len), *written = NULL;
    uint8_t *mem = NULL;
    olla_error err = {0};
    olla_model *from_file = NULL, *from_bytes = NULL;
    olla_plan *p1 = NULL, *p2 = NULL;
    olla_report r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    olla_options opt;
    options(&opt, rt);
    OLLA_CHECK(data != NULL);
    OLLA_CHECK(olla_model_load(path, &from_file, &err) == OLLA_OK);
    OLLA_CHECK(olla_model_load_bytes(data, len, "given", NULL, &from_bytes, &err) == OLLA_OK);
    free(data); /* the model keeps no reference to the bytes */
    OLLA_CHECK(olla_optimize(from_file, &opt, &p1, &r1, &err) == OLLA_OK);
    OLLA_CHECK(olla_optimize(from_bytes, &opt, &p2, &r2, &err) == OLLA_OK);
    OLLA_CHECK(r2.model && strcmp(r2.model, "given") == 0);
    OLLA_CHECK_EQ_I64(r1.arena_bytes, r2.arena_bytes);
    OLLA_CHECK(olla_write_model(from_file, p1, out, &err) == OLLA_OK);
    OLLA_CHECK(olla_write_model_bytes(from_bytes, p2, &mem, &mem_len, &err) == OLLA_OK);
    written = olla_test_read_file(out, &file_len);
    OLLA_CHECK(written && mem && file_len == mem_len && memcmp(written, mem, mem_len) == 0);
    if (err.code != OLLA_OK)
        fprintf(stderr, "%s: %s\n", name, err.message);
    unlink(out);
    free(written);
    free(mem);
    olla_report_clear(&r1);
    olla_report_clear(&r2);
    olla_plan_free(p1);
    olla_plan_free(p2);
    olla_model_free(from_file);
    olla_model_free(from_bytes);
}

OLLA_TEST(test_bytes_in_and_out_equal_the_files)
{
    OLLA_CHECK(mkdtemp(tmpdir) != NULL);
    same_bytes("mlp_train.onnx", OLLA_RUNTIME_ORT);
    same_bytes("cnn_train.onnx", OLLA_RUNTIME_LISTED);
    same_bytes("infer_small.onnx", OLLA_RUNTIME_ORT_PRIORITY);
    same_bytes("multi_output.onnx", OLLA_RUNTIME_ORT);
    same_bytes("if_loop.onnx", OLLA_RUNTIME_LISTED);
}

/* External data is found in the folder given, and only there. */
OLLA_TEST(test_external_data_needs_a_folder)
{
    char path[1024], dir[512];
    snprintf(dir, sizeof dir, "%s/models", OLLA_SOURCE_DIR);
    snprintf(path, sizeof path, "%s/external_data.onnx", dir);
    size_t len = 0;
    unsigned char *data = olla_test_read_file(path, &len);
    olla_error err = {0};
    olla_model *m = NULL;
    OLLA_CHECK(olla_model_load_bytes(data, len, NULL, NULL, &m, &err) == OLLA_ERR_INPUT && !m);
    OLLA_CHECK_STR_CONTAINS(err.message, "<memory>: tensor");
    OLLA_CHECK_STR_CONTAINS(err.message, "give the model's path");
    olla_error_clear(&err);
    OLLA_CHECK(olla_model_load_bytes(data, len, NULL, tmpdir, &m, &err) == OLLA_ERR_INPUT); /* not in that folder */
    OLLA_CHECK_STR_CONTAINS(err.message, "is missing");
    olla_error_clear(&err);
    OLLA_CHECK(olla_model_load_bytes(data, len, NULL, dir, &m, &err) == OLLA_OK && m);
    olla_model_free(m);
    /* cut short, and empty */
    m = NULL;
    OLLA_CHECK(olla_model_load_bytes(data, len / 2, "half", NULL, &m, &err) == OLLA_ERR_INPUT && !m);
    OLLA_CHECK_STR_CONTAINS(err.message, "half");
    OLLA_CHECK(olla_model_load_bytes(NULL, 0, NULL, NULL, &m, &err) == OLLA_ERR_INPUT && !m);
    free(data);
}

OLLA_TEST(test_shapes_json)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models/symbolic_dims.onnx", OLLA_SOURCE_DIR);
    olla_error err = {0};
    olla_model *m = NULL;
    OLLA_CHECK(olla_model_load(path, &m, &err) == OLLA_OK);
    olla_options opt;
    options(&opt, OLLA_RUNTIME_ORT);
    char *json = NULL;
    OLLA_CHECK(olla_model_shapes_json(m, &opt, 1, &json, &err) == OLLA_OK);
    OLLA_CHECK_STR_CONTAINS(json, "{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[\"batch\",16,32],\"bytes\":null");
    free(json);
    json = NULL;
    olla_dim_binding dims[] = {{"batch", 4}};
    opt.dims = dims;
    opt.n_dims = 1;
    OLLA_CHECK(olla_model_shapes_json(m, &opt, 0, &json, &err) == OLLA_OK);
    OLLA_CHECK_STR_CONTAINS(json, "\"shape\":[4,16,32],\"bytes\":8192");
    free(json);
    json = NULL;
    dims[0].name = "bacth";
    OLLA_CHECK(olla_model_shapes_json(m, &opt, 1, &json, &err) == OLLA_ERR_USAGE && !json);
    OLLA_CHECK_STR_CONTAINS(err.message, "bacth");
    olla_model_free(m);
    rmdir(tmpdir);
}

OLLA_TEST_MAIN(OLLA_T(test_bytes_in_and_out_equal_the_files), OLLA_T(test_external_data_needs_a_folder),
               OLLA_T(test_shapes_json))
