/* Shape inference over the real training graphs of the corpus (train/ and
 * ort-training/): with all value_info and every graph output's type removed
 * (ATen fallback nodes included, which have their own rules), every tensor
 * must get a size, except those that need a --dim, and that size must equal
 * the one value_info declared.
 * With every symbolic input dim bound, every tensor must have a size.
 * Skipped when the corpus is absent. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "olla.h"
#include "olla_test.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

static const char *corpus_dir(void)
{
    const char *env = getenv("OLLA_CORPUS");
    return env && *env ? env : OLLA_SOURCE_DIR "/../shared/corpus";
}

/* 1 when the inferred type equals a declared tensor type with a shape. */
static int same_as_declared(const olla_value_type *t, const Onnx__TypeProto *tp)
{
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (t->kind != OLLA_VALUE_TENSOR || t->elem_type != tt->elem_type || t->rank != (int)tt->shape->n_dim)
        return 0;
    for (int d = 0; d < t->rank; d++) {
        const Onnx__TensorShapeProto__Dimension *dd = tt->shape->dim[d];
        if (dd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (t->dims[d].value != dd->dim_value)
                return 0;
        } else if (dd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            if (t->dims[d].value >= 0 || !t->dims[d].param || strcmp(t->dims[d].param, dd->dim_param) != 0)
                return 0;
        }
    }
    return 1;
}

static int declared_tensor(const Onnx__TypeProto *tp)
{
    return tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type && tp->tensor_type->shape;
}

/* 1 when inference with the declarations warns about name. */
static int reported(const olla_shape_table *full, const char *name)
{
    char quoted[512];
    snprintf(quoted, sizeof quoted, "'%s' (node", name);
    for (size_t i = 0; i < olla_shape_warning_count(full); i++)
        if (strncmp(olla_shape_warning_at(full, i), quoted, strlen(quoted)) == 0)
            return 1;
    return 0;
}

static void check_model(const char *path, int *n_models, long *n_checked)
{
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load(path, &m, &err) != OLLA_OK) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        OLLA_CHECK(0);
        return;
    }
    Onnx__GraphProto *g = m->proto->graph;
    /* the declarations to compare against */
    size_t n_decl = g->n_value_info + g->n_output;
    const Onnx__ValueInfoProto **decl = calloc(n_decl + 1, sizeof *decl);
    Onnx__ValueInfoProto **kept = calloc(g->n_value_info + 1, sizeof *kept);
    Onnx__TypeProto **out_types = calloc(g->n_output + 1, sizeof *out_types);
    OLLA_CHECK(decl && kept && out_types);
    if (!decl || !kept || !out_types)
        goto done;
    for (size_t k = 0; k < n_decl; k++)
        decl[k] = k < g->n_value_info ? g->value_info[k] : g->output[k - g->n_value_info];
    /* with the declarations, the disagreements inference reports */
    olla_shape_table *full = NULL;
    OLLA_CHECK(olla_infer_shapes(m->proto, NULL, &full, &err) == OLLA_OK);
    /* strip: no value_info, graph outputs without types */
    Onnx__ValueInfoProto **orig_vi = g->value_info;
    size_t orig_n_vi = g->n_value_info;
    g->value_info = kept;
    g->n_value_info = 0;
    for (size_t k = 0; k < g->n_output; k++) {
        out_types[k] = g->output[k]->type;
        g->output[k]->type = NULL;
    }
    olla_shape_table *t = NULL;
    OLLA_CHECK(olla_infer_shapes(m->proto, NULL, &t, &err) == OLLA_OK);
    int failures = 0;
    for (size_t k = 0; t && k < n_decl; k++) {
        /* the declared type, saved before the graph outputs lost theirs */
        const Onnx__TypeProto *dt = k < orig_n_vi ? decl[k]->type : out_types[k - orig_n_vi];
        if (!declared_tensor(dt))
            continue;
        const char *name = decl[k]->name;
        const olla_value_type *ty = olla_shape_lookup(t, name);
        const char *why = olla_shape_unknown_reason(t, name);
        if (why && strstr(why, "--dim"))
            continue; /* needs a --dim (or --input-shape): checked with bindings below */
        (*n_checked)++;
        if (ty && !why && !same_as_declared(ty, dt) && reported(full, name)) {
            /* a declaration that contradicts the operator's schema (ORT's
             * AdamWOptimizer types updated_flag int64, training artifacts
             * declare bool): planning uses the declaration and warns */
            printf("%s: '%s' declared otherwise than inferred, reported as a warning\n", path, name);
            continue;
        }
        if (!ty || why || !same_as_declared(ty, dt)) {
            if (failures++ < 5)
                fprintf(stderr, "%s: '%s' %s\n", path, name, why ? why : "differs from value_info");
            OLLA_CHECK(0);
        }
    }
    olla_shape_table_free(t);
    olla_shape_table_free(full);
    t = NULL;
    /* bind every symbolic input dim: then every tensor has a size */
    olla_dim_binding binds[16];
    int n_binds = 0;
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!declared_tensor(vi->type))
            continue;
        for (size_t d = 0; d < vi->type->tensor_type->shape->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dd = vi->type->tensor_type->shape->dim[d];
            if (dd->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || n_binds == 16)
                continue;
            int dup = 0;
            for (int b = 0; b < n_binds; b++)
                dup |= strcmp(binds[b].name, dd->dim_param) == 0;
            if (!dup) {
                binds[n_binds].name = dd->dim_param;
                binds[n_binds++].value = 3;
            }
        }
    }
    if (n_binds) {
        olla_shape_options opt = {.dims = binds, .n_dims = n_binds};
        OLLA_CHECK(olla_infer_shapes(m->proto, &opt, &t, &err) == OLLA_OK);
        for (size_t i = 0; t && i < olla_shape_count(t); i++) {
            const olla_value_type *ty = olla_shape_at(t, i);
            if (ty->kind != OLLA_VALUE_TENSOR)
                continue;
            const char *why = olla_shape_unknown_reason(t, olla_shape_name_at(t, i));
            if (why) {
                fprintf(stderr, "%s with bindings: %s\n", path, why);
                OLLA_CHECK(0);
            }
        }
        olla_shape_table_free(t);
    }
    g->value_info = orig_vi;
    g->n_value_info = orig_n_vi;
    for (size_t k = 0; k < g->n_output; k++)
        g->output[k]->type = out_types[k];
    (*n_models)++;
done:
    free(decl);
    free(kept);
    free(out_types);
    olla_model_free(m);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

OLLA_TEST(test_training_corpus_sizes_match_value_info)
{
    static const char *const subdirs[] = {"train", "ort-training"};
    struct stat st;
    if (stat(corpus_dir(), &st) != 0) {
        char why[4200];
        snprintf(why, sizeof why, "no corpus at %s", corpus_dir());
        olla_test_skip(why);
        return;
    }
    int n_models = 0;
    long n_checked = 0;
    for (size_t s = 0; s < 2; s++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", corpus_dir(), subdirs[s]);
        DIR *d = opendir(dir);
        if (!d) {
            printf("corpus folder %s absent\n", dir);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!ends_with(e->d_name, ".onnx"))
                continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            check_model(path, &n_models, &n_checked);
        }
        closedir(d);
    }
    printf("%d models, %ld declared tensors compared\n", n_models, n_checked);
    /* the shared corpus: 12 models, 9,194 declared tensors */
    OLLA_CHECK(n_models >= 8 && n_checked > 1000);
}

OLLA_TEST_MAIN(OLLA_T(test_training_corpus_sizes_match_value_info))
