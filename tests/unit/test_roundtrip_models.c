/* Every bundled model, and every corpus model when ../shared/corpus is there:
 * plan with --keep-order, write, read back, check, and compare. The written
 * model must re-parse to the input (nodes in the plan's order) plus the
 * olla.* metadata, byte for byte once packed. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "olla.h"
#include "onnx/olla_model.h"
#include "olla_test.h"

static int planned, skipped, compared;
static char tmpdir[] = "/tmp/olla-rt-XXXXXX";

static int is_identity(const int *order, int n)
{
    for (int i = 0; i < n; i++)
        if (order[i] != i)
            return 0;
    return 1;
}

static void roundtrip(const char *path, int expect_input_order)
{
    olla_error err = {0};
    olla_model *m = NULL, *back = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    static const olla_dim_binding dims[] = {{"batch", 2}, {"batch_size", 2}, {"seq", 3}, {"N", 2}};
    olla_options opt;
    olla_options_init(&opt);
    opt.keep_order = 1;
    opt.verbosity = 0;
    opt.time_limit = 2;
    opt.dims = dims;
    opt.n_dims = 4;
    char out[512];
    snprintf(out, sizeof out, "%s/out.onnx", tmpdir);
    if (olla_model_load(path, &m, &err) != OLLA_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        olla_test_failures++;
        return;
    }
    if (olla_optimize(m, &opt, &plan, &rep, &err) != OLLA_OK) {
        /* models this stage cannot plan must say why, as bad input */
        if (err.code != OLLA_ERR_INPUT) {
            fprintf(stderr, "%s: %s\n", path, err.message);
            olla_test_failures++;
        }
        skipped++;
        olla_model_free(m);
        return;
    }
    if (expect_input_order && !is_identity(plan->listing, plan->n_nodes)) {
        fprintf(stderr, "%s: --keep-order changed a topological input order\n", path);
        olla_test_failures++;
    }
    OLLA_CHECK(olla_write_model(m, plan, out, &err) == OLLA_OK);
    OLLA_CHECK(olla_model_load(out, &back, &err) == OLLA_OK);
    if (back) {
        if (olla_check_model(back, &opt, &err) != OLLA_OK) {
            fprintf(stderr, "%s: check failed: %s\n", path, err.message);
            olla_test_failures++;
        }
        /* drop the olla.* entries from the copy, put the input's nodes in the written order */
        Onnx__ModelProto *b = back->proto;
        size_t keep = 0;
        for (size_t i = 0; i < b->n_metadata_props; i++)
            if (strncmp(b->metadata_props[i]->key, "olla.", 5) != 0)
                b->metadata_props[keep++] = b->metadata_props[i];
        size_t saved_np = b->n_metadata_props;
        b->n_metadata_props = keep;
        Onnx__GraphProto *g = m->proto->graph;
        Onnx__NodeProto **orig = g->node;
        Onnx__NodeProto **perm = malloc((g->n_node + 1) * sizeof *perm);
        for (size_t i = 0; i < g->n_node; i++)
            perm[i] = orig[plan->listing[i]];
        g->node = perm;
        size_t l1 = onnx__model_proto__get_packed_size(m->proto);
        size_t l2 = onnx__model_proto__get_packed_size(b);
        uint8_t *b1 = malloc(l1 + 1), *b2 = malloc(l2 + 1);
        onnx__model_proto__pack(m->proto, b1);
        onnx__model_proto__pack(b, b2);
        if (l1 != l2 || memcmp(b1, b2, l1) != 0) {
            fprintf(stderr, "%s: the written model differs from the input beyond the plan\n", path);
            olla_test_failures++;
        }
        compared++;
        free(b1);
        free(b2);
        g->node = orig;
        free(perm);
        b->n_metadata_props = saved_np;
    }
    planned++;
    olla_plan_free(plan);
    olla_report_clear(&rep);
    olla_model_free(back);
    olla_model_free(m);
}

static void each_onnx(const char *dir, int recurse)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            if (recurse && strcmp(names[i], "bad") != 0)
                each_onnx(path, recurse - 1);
        } else {
            size_t len = strlen(names[i]);
            if (len > 5 && strcmp(names[i] + len - 5, ".onnx") == 0)
                roundtrip(path, strstr(names[i], "unordered") == NULL);
        }
        free(names[i]);
    }
    free(names);
}

OLLA_TEST(test_bundled_models)
{
    planned = skipped = compared = 0;
    each_onnx(OLLA_SOURCE_DIR "/models", 0);
    printf("models/: %d planned and round-tripped, %d not plannable yet\n", planned, skipped);
    OLLA_CHECK(planned >= 8);
    OLLA_CHECK_EQ_I64(compared, planned);
}

OLLA_TEST(test_corpus_models)
{
    const char *env = getenv("OLLA_CORPUS");
    const char *corpus = env && *env ? env : OLLA_SOURCE_DIR "/../shared/corpus";
    struct stat sb;
    if (stat(corpus, &sb) != 0) {
        char why[4200];
        snprintf(why, sizeof why, "no corpus at %s", corpus);
        olla_test_skip(why);
        return;
    }
    static const char *dirs[] = {"train", "ort-training", "infer", "onnx-node"};
    /* fewer models than this in a folder means it is not the corpus (the
     * shared one: 8, 4, 4 and 1,765) */
    static const int min_models[] = {4, 2, 2, 1000};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", corpus, dirs[i]);
        planned = skipped = compared = 0;
        each_onnx(path, 1);
        printf("corpus/%s: %d planned and round-tripped, %d not plannable\n", dirs[i], planned, skipped);
        OLLA_CHECK_EQ_I64(compared, planned);
        OLLA_CHECK(planned + skipped >= min_models[i]);
        if (strcmp(dirs[i], "onnx-node") != 0)
            OLLA_CHECK_EQ_I64(skipped, 0);
    }
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    static const olla_test_case cases[] = {OLLA_T(test_bundled_models), OLLA_T(test_corpus_models)};
    int rc = olla_test_run(cases, 2);
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[1024];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(tmpdir);
    return rc;
}
