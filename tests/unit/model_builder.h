/* olla-onnx tests: building small ONNX models in memory. Every allocation
 * goes to one arena freed by mb_free(). */
#ifndef OLLA_MODEL_BUILDER_H
#define OLLA_MODEL_BUILDER_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

typedef struct {
    void **ptrs;
    size_t n, cap;
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
} mb_model;

static inline void *mb_alloc(mb_model *mb, size_t size)
{
    if (mb->n == mb->cap) {
        mb->cap = mb->cap ? mb->cap * 2 : 64;
        mb->ptrs = realloc(mb->ptrs, mb->cap * sizeof *mb->ptrs);
    }
    void *p = calloc(1, size ? size : 1);
    mb->ptrs[mb->n++] = p;
    return p;
}

static inline char *mb_str(mb_model *mb, const char *s)
{
    char *d = mb_alloc(mb, strlen(s) + 1);
    strcpy(d, s);
    return d;
}

/* Appends one pointer to a protobuf-c repeated field (array of pointers). */
static inline void mb_push(mb_model *mb, size_t *n, void ***arr, void *item)
{
    void **na = mb_alloc(mb, (*n + 1) * sizeof(void *));
    if (*n)
        memcpy(na, *arr, *n * sizeof(void *));
    na[(*n)++] = item;
    *arr = na;
}

static inline void mb_init(mb_model *mb, int opset)
{
    memset(mb, 0, sizeof *mb);
    onnx__model_proto__init(&mb->model);
    onnx__graph_proto__init(&mb->graph);
    onnx__operator_set_id_proto__init(&mb->opset);
    mb->model.has_ir_version = 1;
    mb->model.ir_version = 8;
    mb->opset.has_version = 1;
    mb->opset.version = opset;
    mb->opset.domain = mb_str(mb, "");
    mb->opsets[0] = &mb->opset;
    mb->model.n_opset_import = 1;
    mb->model.opset_import = mb->opsets;
    mb->model.graph = &mb->graph;
    mb->graph.name = mb_str(mb, "g");
}

static inline void mb_free(mb_model *mb)
{
    for (size_t i = 0; i < mb->n; i++)
        free(mb->ptrs[i]);
    free(mb->ptrs);
}

/* A float tensor type with the given dims; a negative dim is symbolic "N". */
static inline Onnx__ValueInfoProto *mb_value(mb_model *mb, const char *name, int elem, int rank, const long long *dims)
{
    Onnx__ValueInfoProto *v = mb_alloc(mb, sizeof *v);
    Onnx__TypeProto *tp = mb_alloc(mb, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = mb_alloc(mb, sizeof *tt);
    Onnx__TensorShapeProto *sh = mb_alloc(mb, sizeof *sh);
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    v->name = mb_str(mb, name);
    v->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    if (rank >= 0) {
        tt->shape = sh;
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = mb_alloc(mb, sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = mb_str(mb, "N");
            }
            mb_push(mb, &sh->n_dim, (void ***)&sh->dim, d);
        }
    }
    return v;
}

/* float32 vector of n elements */
static inline void mb_input(mb_model *mb, const char *name, long long n)
{
    mb_push(mb, &mb->graph.n_input, (void ***)&mb->graph.input, mb_value(mb, name, 1, 1, &n));
}
static inline void mb_output(mb_model *mb, const char *name, long long n)
{
    mb_push(mb, &mb->graph.n_output, (void ***)&mb->graph.output, mb_value(mb, name, 1, 1, &n));
}
static inline void mb_info(mb_model *mb, const char *name, long long n)
{
    mb_push(mb, &mb->graph.n_value_info, (void ***)&mb->graph.value_info, mb_value(mb, name, 1, 1, &n));
}

static inline void mb_initializer(mb_model *mb, const char *name, long long n)
{
    Onnx__TensorProto *t = mb_alloc(mb, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = mb_str(mb, name);
    t->has_data_type = 1;
    t->data_type = 1;
    t->n_dims = 1;
    t->dims = mb_alloc(mb, sizeof(int64_t));
    t->dims[0] = n;
    t->n_float_data = (size_t)n;
    t->float_data = mb_alloc(mb, (size_t)n * sizeof(float));
    mb_push(mb, &mb->graph.n_initializer, (void ***)&mb->graph.initializer, t);
}

/* A Constant node whose value is a float32 vector of n zeros. */
static inline Onnx__NodeProto *mb_constant(mb_model *mb, const char *name, long long n);

/* mb_node(mb, graph, "Add", "name", "in1,in2", "out1,out2"); "" entries allowed via ",," */
static inline Onnx__NodeProto *mb_node_in(mb_model *mb, Onnx__GraphProto *g, const char *op, const char *name,
                                   const char *ins, const char *outs)
{
    Onnx__NodeProto *n = mb_alloc(mb, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = mb_str(mb, op);
    n->name = mb_str(mb, name);
    n->domain = mb_str(mb, "");
    const char *lists[2] = {ins, outs};
    for (int k = 0; k < 2; k++) {
        const char *s = lists[k];
        if (!s || !*s)
            continue;
        for (;;) {
            const char *comma = strchr(s, ',');
            size_t len = comma ? (size_t)(comma - s) : strlen(s);
            char *item = mb_alloc(mb, len + 1);
            memcpy(item, s, len);
            if (k == 0)
                mb_push(mb, &n->n_input, (void ***)&n->input, item);
            else
                mb_push(mb, &n->n_output, (void ***)&n->output, item);
            if (!comma)
                break;
            s = comma + 1;
        }
    }
    mb_push(mb, &g->n_node, (void ***)&g->node, n);
    return n;
}

static inline Onnx__NodeProto *mb_node(mb_model *mb, const char *op, const char *name, const char *ins, const char *outs)
{
    return mb_node_in(mb, &mb->graph, op, name, ins, outs);
}

static inline Onnx__NodeProto *mb_constant(mb_model *mb, const char *name, long long n)
{
    Onnx__NodeProto *node = mb_node(mb, "Constant", name, "", name);
    Onnx__AttributeProto *a = mb_alloc(mb, sizeof *a);
    Onnx__TensorProto *t = mb_alloc(mb, sizeof *t);
    onnx__attribute_proto__init(a);
    onnx__tensor_proto__init(t);
    t->has_data_type = 1;
    t->data_type = 1;
    t->n_dims = 1;
    t->dims = mb_alloc(mb, sizeof(int64_t));
    t->dims[0] = n;
    t->n_float_data = (size_t)n;
    t->float_data = mb_alloc(mb, (size_t)n * sizeof(float));
    a->name = mb_str(mb, "value");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    mb_push(mb, &node->n_attribute, (void ***)&node->attribute, a);
    return node;
}

/* Attaches a subgraph attribute to a node and returns the new graph. */
static inline Onnx__GraphProto *mb_subgraph(mb_model *mb, Onnx__NodeProto *node, const char *attr)
{
    Onnx__AttributeProto *a = mb_alloc(mb, sizeof *a);
    Onnx__GraphProto *g = mb_alloc(mb, sizeof *g);
    onnx__attribute_proto__init(a);
    onnx__graph_proto__init(g);
    a->name = mb_str(mb, attr);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a->g = g;
    g->name = mb_str(mb, attr);
    mb_push(mb, &node->n_attribute, (void ***)&node->attribute, a);
    return g;
}

/* Packs the model; the caller frees the bytes. */
static inline uint8_t *mb_pack(mb_model *mb, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(&mb->model);
    uint8_t *buf = malloc(*len ? *len : 1);
    onnx__model_proto__pack(&mb->model, buf);
    return buf;
}

#endif
