/* olla-onnx benchmark: speed of shape inference.
 *
 *  1. A synthetic 20,000-node graph in the style of PyTorch exports: blocks of
 *     Shape -> Gather -> Unsqueeze -> Concat -> Reshape -> MatMul -> Add ->
 *     Relu with a symbolic batch, so every block folds shape arithmetic.
 *     Timed without and with a --dim binding, nodes given in reverse order
 *     too (the engine sorts them).
 *  2. Every model of corpus/train and corpus/ort-training with value_info
 *     ignored: tensors, sized tensors, time.
 * Times are the best of 5 runs (CLOCK_MONOTONIC).
 *
 * Usage: shapes_speed <corpus dir> [blocks] [runs] [config]
 * runs: inferences per row (default 5); config 0-3 runs only that synthetic
 * row and no corpus (for valgrind --tool=callgrind instruction counts). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "olla.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *fmt(const char *f, int i)
{
    char buf[64];
    snprintf(buf, sizeof buf, f, i);
    return strdup(buf);
}

static Onnx__NodeProto *node(const char *op, char *in0, char *in1, char *out)
{
    Onnx__NodeProto *n = calloc(1, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = strdup(op);
    n->domain = strdup("");
    n->n_input = in1 ? 2 : 1;
    n->input = calloc(2, sizeof *n->input);
    n->input[0] = in0;
    n->input[1] = in1;
    n->n_output = 1;
    n->output = calloc(1, sizeof *n->output);
    n->output[0] = out;
    return n;
}

static Onnx__ValueInfoProto *tensor_input(const char *name, int32_t elem, int rank, const int64_t *dims,
                                          const char *sym0)
{
    Onnx__ValueInfoProto *vi = calloc(1, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = strdup(name);
    Onnx__TypeProto *tp = calloc(1, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = calloc(1, sizeof *tt->shape);
    onnx__tensor_shape_proto__init(tt->shape);
    tt->shape->n_dim = (size_t)rank;
    tt->shape->dim = calloc((size_t)rank + 1, sizeof *tt->shape->dim);
    for (int d = 0; d < rank; d++) {
        Onnx__TensorShapeProto__Dimension *dd = calloc(1, sizeof *dd);
        onnx__tensor_shape_proto__dimension__init(dd);
        if (d == 0 && sym0) {
            dd->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dd->dim_param = strdup(sym0);
        } else {
            dd->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dd->dim_value = dims[d];
        }
        tt->shape->dim[d] = dd;
    }
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

static Onnx__TensorProto *int_init(const char *name, int rank, int64_t n, const int64_t *vals)
{
    Onnx__TensorProto *t = calloc(1, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = strdup(name);
    t->has_data_type = 1;
    t->data_type = 7;
    t->n_dims = (size_t)rank;
    t->dims = calloc(2, sizeof *t->dims);
    if (rank)
        t->dims[0] = n;
    t->n_int64_data = (size_t)n;
    t->int64_data = calloc((size_t)n + 1, sizeof *t->int64_data);
    memcpy(t->int64_data, vals, sizeof *vals * (size_t)n);
    return t;
}

/* blocks of 8 nodes; reverse: nodes listed last-first. */
static Onnx__ModelProto *pytorch_like(int blocks, int reverse)
{
    Onnx__ModelProto *m = calloc(1, sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    m->n_opset_import = 1;
    m->opset_import = calloc(1, sizeof *m->opset_import);
    m->opset_import[0] = calloc(1, sizeof **m->opset_import);
    onnx__operator_set_id_proto__init(m->opset_import[0]);
    m->opset_import[0]->domain = strdup("");
    m->opset_import[0]->has_version = 1;
    m->opset_import[0]->version = 17;
    Onnx__GraphProto *g = calloc(1, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = strdup("pytorch_like");
    m->graph = g;
    int64_t hdims[2] = {0, 64}, wdims[2] = {64, 64}, bdims[1] = {64};
    g->n_input = 3;
    g->input = calloc(3, sizeof *g->input);
    g->input[0] = tensor_input("h0", 1, 2, hdims, "batch");
    g->input[1] = tensor_input("W", 1, 2, wdims, NULL);
    g->input[2] = tensor_input("B", 1, 1, bdims, NULL);
    int64_t zero = 0, c64 = 64;
    g->n_initializer = 3;
    g->initializer = calloc(3, sizeof *g->initializer);
    g->initializer[0] = int_init("i0", 0, 1, &zero);
    g->initializer[1] = int_init("ax", 1, 1, &zero);
    g->initializer[2] = int_init("k64", 1, 1, &c64);
    size_t n = (size_t)blocks * 8;
    g->node = calloc(n, sizeof *g->node);
    g->n_node = n;
    size_t k = 0;
    for (int b = 0; b < blocks; b++) {
        char *h = fmt(b ? "h%d" : "h0", b);
        Onnx__NodeProto *blk[8] = {
            node("Shape", strdup(h), NULL, fmt("s%d", b)),
            node("Gather", fmt("s%d", b), strdup("i0"), fmt("g%d", b)),
            node("Unsqueeze", fmt("g%d", b), strdup("ax"), fmt("u%d", b)),
            node("Concat", fmt("u%d", b), strdup("k64"), fmt("c%d", b)),
            node("Reshape", strdup(h), fmt("c%d", b), fmt("r%d", b)),
            node("MatMul", fmt("r%d", b), strdup("W"), fmt("m%d", b)),
            node("Add", fmt("m%d", b), strdup("B"), fmt("a%d", b)),
            node("Relu", fmt("a%d", b), NULL, fmt("h%d", b + 1)),
        };
        free(h);
        Onnx__AttributeProto *axis = calloc(1, sizeof *axis);
        onnx__attribute_proto__init(axis);
        axis->name = strdup("axis");
        axis->has_type = 1;
        axis->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        axis->has_i = 1;
        axis->i = 0;
        blk[3]->n_attribute = 1;
        blk[3]->attribute = calloc(1, sizeof *blk[3]->attribute);
        blk[3]->attribute[0] = axis;
        for (int j = 0; j < 8; j++, k++)
            g->node[reverse ? n - 1 - k : k] = blk[j];
    }
    return m;
}

static int runs = 5;

static double time_infer(const Onnx__ModelProto *m, const olla_shape_options *opt, size_t *count, size_t *sized)
{
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        olla_shape_table *t = NULL;
        olla_error err = {0};
        double t0 = now_s();
        olla_status st = olla_infer_shapes(m, opt, &t, &err);
        double dt = now_s() - t0;
        if (st != OLLA_OK) {
            fprintf(stderr, "inference failed: %s\n", err.message);
            return -1;
        }
        if (dt < best)
            best = dt;
        *count = olla_shape_count(t);
        *sized = 0;
        for (size_t i = 0; i < *count; i++)
            *sized += olla_shape_unknown_reason(t, olla_shape_name_at(t, i)) == NULL;
        olla_shape_table_free(t);
    }
    return best;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    const char *corpus = argc > 1 ? argv[1] : NULL;
    int blocks = argc > 2 ? atoi(argv[2]) : 2500;
    runs = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 5;
    int only = argc > 4 ? atoi(argv[4]) : -1;
    size_t count, sized;
    olla_dim_binding bind = {"batch", 32};
    olla_shape_options plain = {.ignore_value_info = 1}, bound = {.dims = &bind, .n_dims = 1, .ignore_value_info = 1};
    printf("| graph | nodes | values | sized | best of 5 |\n|---|---|---|---|---|\n");
    for (int reverse = 0; reverse < 2; reverse++) {
        Onnx__ModelProto *m = pytorch_like(blocks, reverse);
        double t;
        if (only < 0 || only == 2 * reverse) {
            t = time_infer(m, &plain, &count, &sized);
            printf("| synthetic PyTorch-style chain%s, symbolic batch | %d | %zu | %zu | %.4f s |\n",
                   reverse ? " (nodes reversed)" : "", blocks * 8, count, sized, t);
        }
        if (only < 0 || only == 2 * reverse + 1) {
            t = time_infer(m, &bound, &count, &sized);
            printf("| same%s, --dim batch=32 | %d | %zu | %zu | %.4f s |\n", reverse ? " (nodes reversed)" : "",
                   blocks * 8, count, sized, t);
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }
    if (!corpus || only >= 0)
        return 0;
    static const char *const subdirs[] = {"train", "ort-training"};
    for (int s = 0; s < 2; s++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", corpus, subdirs[s]);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        char *names[256];
        size_t n_names = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n_names < 256)
            if (ends_with(e->d_name, ".onnx"))
                names[n_names++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n_names, sizeof *names, cmp_str);
        for (size_t i = 0; i < n_names; i++) {
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            olla_model *m = NULL;
            olla_error err = {0};
            if (olla_model_load(path, &m, &err) == OLLA_OK) {
                double t = time_infer(m->proto, &plain, &count, &sized);
                printf("| %s/%s, value_info ignored | %zu | %zu | %zu | %.4f s |\n", subdirs[s], names[i],
                       m->proto->graph->n_node, count, sized, t);
                olla_model_free(m);
            } else {
                printf("| %s/%s | load failed: %s | | | |\n", subdirs[s], names[i], err.message);
            }
            free(names[i]);
        }
    }
    return 0;
}
