/* olla-onnx benchmark: shape inference against ONNX's per-operator test models.
 *
 * For every <dir>/<test>/model.onnx, runs olla_infer_shapes with
 * ignore_value_info=1 (the declared graph-output types are not read) and
 * compares each graph output with the type the model declares.
 *
 * Matching rule (strict):
 *  - tensor outputs: the element type must be equal; when the declaration has
 *    a shape, the rank must be equal and every dimension declared as a number
 *    must be inferred as that same number, every dimension declared as a name
 *    must be inferred as that same name; a declared dimension with neither
 *    (no information) accepts anything;
 *  - sequence and optional outputs: the kind must be equal and the element
 *    type of the innermost tensor must be equal (the table keeps no element
 *    shape for them).
 * A model matches when all its outputs match. A model that does not match is
 * classed "run-time" when every output that does not match is consistent
 * with its declaration (same element type and rank, every dimension we give
 * equal to the declared one, the others unknown) and the table's reason for
 * it says the size depends on a value known only at run time (a graph input's
 * value or a data-dependent operator); every other mismatch is "wrong".
 *
 * Usage: shapes_node_bench [-v|-m] <onnx-node dir>
 *        shapes_node_bench -c <nodes>
 * Prints one line per mismatching output (test, class, declared, inferred,
 * reason) and a summary; -v also prints every match, -m prints the
 * mismatches as Markdown table rows. -c times inference of a synthetic chain
 * of <nodes> nodes (Conv, Relu, Add, Reshape-free) and prints the best of 5. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "olla_error.h"
#include "passes/shapes/olla_shapes.h"

typedef struct {
    char **names;
    size_t n, cap;
} name_list;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_tests(const char *root, name_list *out)
{
    DIR *d = opendir(root);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (out->n == out->cap) {
            size_t nc = out->cap ? out->cap * 2 : 256;
            char **nn = realloc(out->names, nc * sizeof *nn);
            if (!nn) break;
            out->names = nn;
            out->cap = nc;
        }
        out->names[out->n] = strdup(e->d_name);
        if (!out->names[out->n]) break;
        out->n++;
    }
    closedir(d);
    qsort(out->names, out->n, sizeof *out->names, cmp_str);
    return 0;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        unsigned char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void fmt_tensor_decl(const Onnx__TypeProto__Tensor *tt, char *buf, size_t cap);

/* Formats a declared type into buf. */
static void fmt_declared(const Onnx__TypeProto *t, char *buf, size_t cap)
{
    size_t k = 0;
    int open = 0;
    buf[0] = '\0';
    if (!t) {
        snprintf(buf, cap, "(none)");
        return;
    }
    while (t && t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        if (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && t->sequence_type) {
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "seq(");
            t = t->sequence_type->elem_type;
        } else if (t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type) {
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "opt(");
            t = t->optional_type->elem_type;
        } else {
            snprintf(buf + k, k < cap ? cap - k : 0, "?");
            return;
        }
        open++;
    }
    if (!t || !t->tensor_type) return;
    fmt_tensor_decl(t->tensor_type, buf + (k < cap ? k : cap - 1), k < cap ? cap - k : 1);
    k = strlen(buf);
    while (open-- > 0 && k + 1 < cap) {
        buf[k++] = ')';
        buf[k] = '\0';
    }
}

/* Formats a declared tensor type ("float32[1,3,?]") into buf. */
static void fmt_tensor_decl(const Onnx__TypeProto__Tensor *tt, char *buf, size_t cap)
{
    size_t k = 0;
    const Onnx__TypeProto__Tensor *tensor = tt;
    buf[0] = '\0';
    const char *en = olla_elem_type_name(tensor->elem_type);
    k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s", en ? en : "?");
    const Onnx__TensorShapeProto *s = tensor->shape;
    if (!s) return;
    k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "[");
    for (size_t i = 0; i < s->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
        const char *sep = i ? "," : "";
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s%lld", sep, (long long)d->dim_value);
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s%s", sep, d->dim_param);
        else
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s?", sep);
    }
    snprintf(buf + k, k < cap ? cap - k : 0, "]");
}

static void fmt_inferred(const olla_value_type *v, char *buf, size_t cap)
{
    size_t k = 0;
    if (!v) {
        snprintf(buf, cap, "(absent)");
        return;
    }
    static const char *kinds[] = {"", "sparse(", "seq(", "map(", "opt("};
    const char *en = olla_elem_type_name(v->elem_type);
    k += (size_t)snprintf(buf, cap, "%s%s", (unsigned)v->kind < 5 ? kinds[v->kind] : "?(",
                          en ? en : "?");
    if (v->kind != OLLA_VALUE_TENSOR) {
        snprintf(buf + k, k < cap ? cap - k : 0, ")");
        return;
    }
    if (v->rank < 0) {
        snprintf(buf + k, k < cap ? cap - k : 0, "[rank?]");
        return;
    }
    k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "[");
    for (int i = 0; i < v->rank; i++) {
        const char *sep = i ? "," : "";
        if (v->dims[i].value >= 0)
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s%lld", sep,
                                  (long long)v->dims[i].value);
        else if (v->dims[i].param)
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s%s", sep, v->dims[i].param);
        else
            k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, "%s?", sep);
    }
    snprintf(buf + k, k < cap ? cap - k : 0, "]");
}

/* 1 when the inferred value satisfies the declaration (rule at the top). */
static int matches(const Onnx__TypeProto *t, const olla_value_type *v)
{
    if (!t) return 1;
    if (!v) return 0;
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
        t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE) {
        olla_value_kind want = t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                                   ? OLLA_VALUE_SEQUENCE
                                   : OLLA_VALUE_OPTIONAL;
        if (v->kind != want) return 0;
        const Onnx__TypeProto *in = t;
        while (in && in->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            if (in->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && in->sequence_type)
                in = in->sequence_type->elem_type;
            else if (in->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && in->optional_type)
                in = in->optional_type->elem_type;
            else
                return 0;
        }
        if (!in || !in->tensor_type) return 0;
        return in->tensor_type->elem_type == v->elem_type;
    }
    if (t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type) return 0;
    if (v->kind != OLLA_VALUE_TENSOR) return 0;
    if (t->tensor_type->elem_type != v->elem_type) return 0;
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    if (!s) return 1;
    if (v->rank != (int)s->n_dim) return 0;
    for (size_t i = 0; i < s->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
        const olla_dim *o = &v->dims[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (o->value != d->dim_value) return 0;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            if (o->value >= 0 || !o->param || strcmp(o->param, d->dim_param) != 0) return 0;
        }
    }
    return 1;
}

/* 1 when the inferred value is a less precise form of the declaration: the
 * element type and rank are equal and every dimension inferred as a number
 * or name equals the declared one (the others are unknown). */
static int consistent(const Onnx__TypeProto *t, const olla_value_type *v)
{
    if (!t || !v || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type)
        return 0;
    if (v->kind != OLLA_VALUE_TENSOR || t->tensor_type->elem_type != v->elem_type) return 0;
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    if (!s || v->rank != (int)s->n_dim) return 0;
    for (size_t i = 0; i < s->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
        const olla_dim *o = &v->dims[i];
        if (o->value < 0 && !o->param) continue;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (o->value != d->dim_value) return 0;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            if (o->value >= 0 || !o->param || strcmp(o->param, d->dim_param) != 0) return 0;
        }
    }
    return 1;
}

/* 1 when the reason says the size needs a value known only at run time. */
static int runtime_reason(const char *why)
{
    return why && (strstr(why, "run-time") || strstr(why, "data-dependent"));
}

static int markdown;

/* Prints s with '|' replaced, for a Markdown cell. */
static void md_cell(const char *s)
{
    for (; s && *s; s++) putchar(*s == '|' ? '/' : *s);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- synthetic chain ---- */

static char *fmt_name(const char *p, int i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%s%d", p, i);
    return strdup(buf);
}

static Onnx__ValueInfoProto *tensor_input(const char *name, int32_t elem, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = calloc(1, sizeof *vi);
    Onnx__TypeProto *tp = calloc(1, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
    Onnx__TensorShapeProto *sh = calloc(1, sizeof *sh);
    if (!vi || !tp || !tt || !sh) abort();
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    sh->dim = calloc((size_t)rank, sizeof *sh->dim);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = calloc(1, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        sh->dim[sh->n_dim++] = d;
    }
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = strdup(name);
    vi->type = tp;
    return vi;
}

/* x -> [Conv(w_i) -> Relu -> Add(prev)] repeated: n nodes in total. */
static Onnx__ModelProto *chain_model(int n)
{
    Onnx__ModelProto *m = calloc(1, sizeof *m);
    Onnx__GraphProto *g = calloc(1, sizeof *g);
    onnx__model_proto__init(m);
    onnx__graph_proto__init(g);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->graph = g;
    m->opset_import = calloc(1, sizeof *m->opset_import);
    Onnx__OperatorSetIdProto *os = calloc(1, sizeof *os);
    onnx__operator_set_id_proto__init(os);
    os->domain = strdup("");
    os->has_version = 1;
    os->version = 17;
    m->opset_import[m->n_opset_import++] = os;
    g->name = strdup("chain");
    int n_conv = (n + 2) / 3;
    g->input = calloc((size_t)n_conv + 1, sizeof *g->input);
    int64_t xd[4] = {32, 64, 28, 28}, wd[4] = {64, 64, 3, 3};
    g->input[g->n_input++] = tensor_input("x", 1, 4, xd);
    g->node = calloc((size_t)n, sizeof *g->node);
    char *prev = strdup("x"), *skip = strdup("x");
    for (int i = 0; i < n; i++) {
        Onnx__NodeProto *nd = calloc(1, sizeof *nd);
        onnx__node_proto__init(nd);
        nd->domain = strdup("");
        nd->output = calloc(1, sizeof *nd->output);
        nd->output[nd->n_output++] = fmt_name("t", i);
        nd->input = calloc(2, sizeof *nd->input);
        nd->input[nd->n_input++] = strdup(prev);
        if (i % 3 == 0) {
            char *w = fmt_name("w", i);
            g->input[g->n_input++] = tensor_input(w, 1, 4, wd);
            nd->op_type = strdup("Conv");
            nd->input[nd->n_input++] = w;
            nd->attribute = calloc(1, sizeof *nd->attribute);
            Onnx__AttributeProto *a = calloc(1, sizeof *a);
            onnx__attribute_proto__init(a);
            a->name = strdup("pads");
            a->has_type = 1;
            a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
            a->ints = calloc(4, sizeof *a->ints);
            for (int k = 0; k < 4; k++) a->ints[a->n_ints++] = 1;
            nd->attribute[nd->n_attribute++] = a;
        } else if (i % 3 == 1) {
            nd->op_type = strdup("Relu");
        } else {
            nd->op_type = strdup("Add");
            nd->input[nd->n_input++] = strdup(skip);
        }
        free(prev);
        prev = strdup(nd->output[0]);
        if (i % 3 == 2) {
            free(skip);
            skip = strdup(prev);
        }
        g->node[g->n_node++] = nd;
    }
    g->output = calloc(1, sizeof *g->output);
    Onnx__ValueInfoProto *out = calloc(1, sizeof *out);
    onnx__value_info_proto__init(out);
    out->name = prev;
    g->output[g->n_output++] = out;
    free(skip);
    return m;
}

static int chain_bench(int n)
{
    if (n < 3) n = 3;
    Onnx__ModelProto *m = chain_model(n);
    double best = 1e9;
    size_t sized = 0, count = 0;
    for (int rep = 0; rep < 5; rep++) {
        olla_shape_options opt = {.ignore_value_info = 1};
        olla_shape_table *tab = NULL;
        olla_error err;
        olla_error_clear(&err);
        double t0 = now_s();
        olla_status st = olla_infer_shapes(m, &opt, &tab, &err);
        double dt = now_s() - t0;
        if (st != OLLA_OK) {
            fprintf(stderr, "chain: %s\n", err.message);
            onnx__model_proto__free_unpacked(m, NULL);
            return 1;
        }
        if (dt < best) best = dt;
        count = olla_shape_count(tab);
        sized = 0;
        for (size_t i = 0; i < count; i++)
            if (olla_value_bytes(olla_shape_at(tab, i)) >= 0) sized++;
        olla_shape_table_free(tab);
    }
    printf("- chain of %d nodes (Conv/Relu/Add, 32x64x28x28): %zu values, %zu sized, best of 5: %.4f s\n",
           n, count, sized, best);
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    int verbose = 0, ai = 1;
    if (ai < argc && strcmp(argv[ai], "-v") == 0) {
        verbose = 1;
        ai++;
    } else if (ai < argc && strcmp(argv[ai], "-m") == 0) {
        markdown = 1;
        ai++;
    } else if (ai + 1 < argc && strcmp(argv[ai], "-c") == 0) {
        return chain_bench(atoi(argv[ai + 1]));
    }
    if (ai >= argc) {
        fprintf(stderr, "usage: shapes_node_bench [-v] <onnx-node dir>\n");
        return 2;
    }
    const char *root = argv[ai];
    name_list tests = {0};
    if (list_tests(root, &tests) != 0) {
        fprintf(stderr, "shapes_node_bench: cannot read directory %s\n", root);
        return 1;
    }
    size_t n_models = 0, n_match = 0, n_err = 0, n_runtime = 0, n_outputs = 0, n_out_match = 0;
    if (markdown)
        printf("| test | class | output | declared | inferred | reason given by the table |\n"
               "|---|---|---|---|---|---|\n");
    double t_infer = 0;
    char path[4096], decl[512], inf[512];
    for (size_t ti = 0; ti < tests.n; ti++) {
        snprintf(path, sizeof path, "%s/%s/model.onnx", root, tests.names[ti]);
        size_t len = 0;
        unsigned char *buf = read_all(path, &len);
        if (!buf) continue;
        Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
        free(buf);
        if (!m) {
            printf("MISMATCH %s [wrong]: cannot parse model.onnx\n", tests.names[ti]);
            n_models++;
            n_err++;
            continue;
        }
        n_models++;
        olla_shape_options opt = {.ignore_value_info = 1};
        olla_shape_table *tab = NULL;
        olla_error err;
        olla_error_clear(&err);
        double t0 = now_s();
        olla_status st = olla_infer_shapes(m, &opt, &tab, &err);
        t_infer += now_s() - t0;
        if (st != OLLA_OK) {
            if (markdown) {
                printf("| %s | wrong | | | | error %d: ", tests.names[ti], (int)st);
                md_cell(err.message);
                printf(" |\n");
            } else {
                printf("MISMATCH %s [wrong]: error %d: %s\n", tests.names[ti], (int)st, err.message);
            }
            n_err++;
            onnx__model_proto__free_unpacked(m, NULL);
            continue;
        }
        int all = 1, runtime_only = 1;
        const Onnx__GraphProto *g = m->graph;
        for (size_t oi = 0; g && oi < g->n_output; oi++) {
            const Onnx__ValueInfoProto *o = g->output[oi];
            const olla_value_type *v = olla_shape_lookup(tab, o->name);
            n_outputs++;
            int ok = matches(o->type, v);
            if (ok) {
                n_out_match++;
                if (verbose) {
                    fmt_inferred(v, inf, sizeof inf);
                    printf("match    %s: %s %s\n", tests.names[ti], o->name, inf);
                }
                continue;
            }
            all = 0;
            fmt_declared(o->type, decl, sizeof decl);
            fmt_inferred(v, inf, sizeof inf);
            const char *why = olla_shape_unknown_reason(tab, o->name);
            int rt = consistent(o->type, v) && runtime_reason(why);
            if (!rt) runtime_only = 0;
            if (markdown) {
                printf("| %s | %s | %s | `%s` | `%s` | ", tests.names[ti], rt ? "run-time" : "wrong",
                       o->name, decl, inf);
                md_cell(why ? why : "");
                printf(" |\n");
            } else {
                printf("MISMATCH %s [%s]: output %s declared %s inferred %s%s%s\n", tests.names[ti],
                       rt ? "run-time" : "wrong", o->name, decl, inf, why ? " reason: " : "",
                       why ? why : "");
            }
        }
        if (all) n_match++;
        else if (runtime_only) n_runtime++;
        olla_shape_table_free(tab);
        onnx__model_proto__free_unpacked(m, NULL);
    }
    if (markdown) printf("\n");
    const char *li = markdown ? "- " : "";
    printf("%smodels: %zu, matching exactly: %zu (%.2f%%), errors: %zu\n", li, n_models, n_match,
           n_models ? 100.0 * (double)n_match / (double)n_models : 0.0, n_err);
    printf("%snot matching because a size needs a run-time value: %zu; wrong or missing: %zu\n", li,
           n_runtime, n_models - n_match - n_runtime);
    if (n_models > n_runtime)
        printf("%smatching among the models decidable from the graph: %zu / %zu (%.2f%%)\n", li, n_match,
               n_models - n_runtime, 100.0 * (double)n_match / (double)(n_models - n_runtime));
    printf("%sgraph outputs: %zu, matching: %zu\n", li, n_outputs, n_out_match);
    printf("%sinference time over all models: %.3f s\n", li, t_infer);
    for (size_t i = 0; i < tests.n; i++) free(tests.names[i]);
    free(tests.names);
    return 0;
}
