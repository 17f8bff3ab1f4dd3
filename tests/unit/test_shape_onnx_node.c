/* Shape inference against ONNX's per-operator test models
 * (corpus/onnx-node/<test>/model.onnx, whose graph outputs declare the
 * expected types), with the declared output types ignored:
 *  - over every model, no inferred element type, rank or dimension may
 *    contradict the declaration (an unknown is allowed, a wrong value never);
 *  - over the models made only of operators of the convolution, normalization,
 *    recurrent, resize, data-dependent, quantization, random, signal, misc and
 *    extra families, every tensor output must match its declaration exactly
 *    unless the table says its size needs a run-time value.
 * Skipped when the corpus is absent. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "olla_test.h"
#include "passes/shapes/olla_shape_rules.h"
#include "passes/shapes/olla_shapes.h"

/* Fewer models than this means the folder is not the ONNX node-test suite
 * (the shared corpus holds 1,765). */
#define MIN_NODE_MODELS 1000

static const char *corpus_root(void)
{
    const char *env = getenv("OLLA_CORPUS");
    return env && *env ? env : OLLA_SOURCE_DIR "/../shared/corpus";
}

static const char *node_dir(void)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/onnx-node", corpus_root());
    return buf;
}

static const olla_shape_rule_entry *const own_tables[] = {
    olla_shape_rules_conv,   olla_shape_rules_norm,  olla_shape_rules_rnn,
    olla_shape_rules_resize, olla_shape_rules_datadep, olla_shape_rules_quant,
    olla_shape_rules_random, olla_shape_rules_signal, olla_shape_rules_misc,
    olla_shape_rules_extra,
};

static int in_own_tables(const Onnx__NodeProto *n)
{
    const char *d = n->domain && strcmp(n->domain, "ai.onnx") != 0 ? n->domain : "";
    for (size_t t = 0; t < sizeof own_tables / sizeof own_tables[0]; t++)
        for (const olla_shape_rule_entry *e = own_tables[t]; e->op_type; e++)
            if (strcmp(e->op_type, n->op_type) == 0 && strcmp(e->domain, d) == 0)
                return 1;
    return 0;
}

static Onnx__ModelProto *load(const char *path)
{
    size_t n = 0;
    unsigned char *buf = olla_test_read_file(path, &n);
    if (!buf)
        return NULL;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    return m;
}

/* Declared tensor type with a shape, or NULL. */
static const Onnx__TypeProto__Tensor *declared_tensor(const Onnx__ValueInfoProto *o)
{
    if (!o->type || o->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return NULL;
    const Onnx__TypeProto__Tensor *tt = o->type->tensor_type;
    return tt && tt->shape ? tt : NULL;
}

/* 0: contradicts, 1: consistent but less precise, 2: exact. */
static int compare(const Onnx__TypeProto__Tensor *tt, const olla_value_type *v)
{
    if (v->kind != OLLA_VALUE_TENSOR) return 0;
    int exact = 1;
    if (v->elem_type && v->elem_type != tt->elem_type) return 0;
    if (!v->elem_type) exact = 0;
    if (v->rank < 0) return 1;
    if (v->rank != (int)tt->shape->n_dim) return 0;
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        const olla_dim *o = &v->dims[i];
        int known = o->value >= 0, sym = o->value < 0 && o->param;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (known && o->value != d->dim_value) return 0;
            if (!known) exact = 0;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            if (known || (sym && strcmp(o->param, d->dim_param) != 0)) return 0;
            if (!sym) exact = 0;
        }
    }
    return exact ? 2 : 1;
}

OLLA_TEST(test_onnx_node_models)
{
    DIR *dir = opendir(node_dir());
    if (!dir) {
        /* the corpus itself missing is a skip; its folder missing, a failure */
        char why[4200];
        DIR *corpus = opendir(corpus_root());
        if (corpus) {
            closedir(corpus);
            fprintf(stderr, "the corpus has no folder %s\n", node_dir());
            OLLA_CHECK(dir != NULL);
            return;
        }
        snprintf(why, sizeof why, "no corpus at %s", corpus_root());
        olla_test_skip(why);
        return;
    }
    struct dirent *de;
    int models = 0, own = 0;
    char path[8192];
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/model.onnx", node_dir(), de->d_name);
        Onnx__ModelProto *m = load(path);
        if (!m) continue;
        models++;
        int mine = m->graph && m->graph->n_node > 0;
        for (size_t n = 0; mine && n < m->graph->n_node; n++) mine = in_own_tables(m->graph->node[n]);
        own += mine;
        olla_shape_options opt = {.ignore_value_info = 1};
        olla_shape_table *t = NULL;
        olla_error err;
        olla_error_clear(&err);
        olla_status st = olla_infer_shapes(m, &opt, &t, &err);
        if (st != OLLA_OK) {
            fprintf(stderr, "%s: %s\n", de->d_name, err.message);
            OLLA_CHECK(st == OLLA_OK);
        }
        for (size_t i = 0; st == OLLA_OK && i < m->graph->n_output; i++) {
            const Onnx__ValueInfoProto *o = m->graph->output[i];
            const Onnx__TypeProto__Tensor *tt = declared_tensor(o);
            const olla_value_type *v = olla_shape_lookup(t, o->name);
            if (!tt || !v) continue;
            int c = compare(tt, v);
            if (c == 0) fprintf(stderr, "%s: output %s contradicts its declaration\n", de->d_name, o->name);
            OLLA_CHECK(c != 0);
            if (mine && c == 1) {
                const char *why = olla_shape_unknown_reason(t, o->name);
                int runtime = why && (strstr(why, "run-time") || strstr(why, "data-dependent"));
                if (!runtime)
                    fprintf(stderr, "%s: output %s not inferred: %s\n", de->d_name, o->name,
                            why ? why : "(no reason)");
                OLLA_CHECK(runtime);
            }
        }
        olla_shape_table_free(t);
        onnx__model_proto__free_unpacked(m, NULL);
    }
    closedir(dir);
    printf("%d models, %d made only of operators of these families\n", models, own);
    OLLA_CHECK(models >= MIN_NODE_MODELS);
    OLLA_CHECK(models > 0);
    OLLA_CHECK(own > 0);
}

OLLA_TEST_MAIN(OLLA_T(test_onnx_node_models))
