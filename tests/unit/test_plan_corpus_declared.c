/* The declared-type rule on every model of the shared corpus and of models/:
 * each model is planned (input order kept, alignment 1, every symbolic input
 * dimension bound to 2), and every graph output and value_info whose declared
 * type has a size must be planned with exactly that many bytes. Models that
 * cannot be planned (strings, data-dependent sizes...) are counted, not
 * compared. The corpus part is skipped when the corpus is absent. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "olla.h"
#include "olla_test.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

#define MAX_BINDS 32

typedef struct {
    int planned, refused;
    long compared;
} tally;

static const char *corpus_dir(void)
{
    const char *env = getenv("OLLA_CORPUS");
    return env && *env ? env : OLLA_SOURCE_DIR "/../shared/corpus";
}

/* Binds every dim_param of the graph inputs to 2. */
static int bind_inputs(const Onnx__GraphProto *g, olla_dim_binding *b)
{
    int n = 0;
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__TypeProto *tp = g->input[k]->type;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->shape)
            continue;
        for (size_t d = 0; d < tp->tensor_type->shape->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = tp->tensor_type->shape->dim[d];
            if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || n == MAX_BINDS)
                continue;
            int dup = 0;
            for (int i = 0; i < n; i++)
                dup |= strcmp(b[i].name, dim->dim_param) == 0;
            if (!dup)
                b[n++] = (olla_dim_binding){dim->dim_param, 2};
        }
    }
    return n;
}

/* Bytes of a declared tensor type under the bindings; -1 when unknown. */
static int64_t declared_bytes(const Onnx__TypeProto *tp, const olla_dim_binding *b, int nb)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->shape)
        return -1;
    int bits = olla_elem_type_bits(tp->tensor_type->elem_type);
    int64_t count = 1;
    for (size_t d = 0; d < tp->tensor_type->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tp->tensor_type->shape->dim[d];
        int64_t v = -1;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            v = dim->dim_value;
        else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 !olla_dim_param_eval(dim->dim_param, b, nb, &v))
            v = -1;
        if (v < 0)
            return -1;
        count *= v;
    }
    return bits > 0 ? (count * bits + 7) / 8 : -1;
}

static void compare_model(const char *path, tally *t)
{
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load(path, &m, &err) != OLLA_OK) {
        t->refused++;
        return;
    }
    const Onnx__GraphProto *g = m->proto->graph;
    olla_dim_binding binds[MAX_BINDS];
    olla_options opt;
    olla_options_init(&opt);
    opt.keep_order = 1;
    opt.alignment = 1;
    opt.allow_unknown_sizes = 1;
    opt.time_limit = 1;
    opt.verbosity = 0;
    opt.dims = binds;
    opt.n_dims = bind_inputs(g, binds);
    olla_plan *plan = NULL;
    olla_report rep;
    if (olla_optimize(m, &opt, &plan, &rep, &err) != OLLA_OK) {
        t->refused++;
        olla_model_free(m);
        return;
    }
    t->planned++;
    for (size_t k = 0; k < g->n_value_info + g->n_output; k++) {
        const Onnx__ValueInfoProto *vi = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
        int64_t want = declared_bytes(vi->type, binds, opt.n_dims);
        for (int i = 0; want >= 0 && i < plan->n_entries; i++) {
            if (strcmp(plan->entries[i].name, vi->name) != 0)
                continue;
            t->compared++;
            if (plan->entries[i].bytes != want) {
                fprintf(stderr, "%s: '%s' planned with %lld bytes, declared %lld\n", path, vi->name,
                        (long long)plan->entries[i].bytes, (long long)want);
                OLLA_CHECK(0);
            }
        }
    }
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Every .onnx file of dir; with nested set, every dir/<sub>/model.onnx. */
static int walk(const char *dir, int nested, tally *t)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[8192];
        if (e->d_name[0] == '.')
            continue;
        if (nested)
            snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        else if (ends_with(e->d_name, ".onnx"))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        else
            continue;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            compare_model(path, t);
    }
    closedir(d);
    return 1;
}

OLLA_TEST(test_bundled_models_planned_as_declared)
{
    tally t = {0};
    OLLA_CHECK(walk(OLLA_SOURCE_DIR "/models", 0, &t));
    printf("models/: %d planned, %d refused, %ld declared tensors compared\n", t.planned, t.refused, t.compared);
    OLLA_CHECK(t.planned >= 5 && t.compared >= 10);
}

OLLA_TEST(test_corpus_planned_as_declared)
{
    static const struct {
        const char *sub;
        int nested;
    } parts[] = {{"onnx-node", 1}, {"train", 0}, {"infer", 0}, {"ort-training", 0}};
    struct stat st;
    if (stat(corpus_dir(), &st) != 0) {
        char why[4200];
        snprintf(why, sizeof why, "no corpus at %s", corpus_dir());
        olla_test_skip(why);
        return;
    }
    tally t = {0};
    int found = 0;
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", corpus_dir(), parts[p].sub);
        found += walk(dir, parts[p].nested, &t);
    }
    OLLA_CHECK(found > 0);
    printf("corpus: %d planned, %d refused, %ld declared tensors compared\n", t.planned, t.refused, t.compared);
    OLLA_CHECK(t.planned > 1000 && t.compared > 5000);
}

OLLA_TEST_MAIN(OLLA_T(test_bundled_models_planned_as_declared), OLLA_T(test_corpus_planned_as_declared))
