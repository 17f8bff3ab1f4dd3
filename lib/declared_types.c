#include "lib/olla_declared.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

struct olla_declared_types {
    olla_strmap by_name;
    olla_value_type *types;
    int n, cap;
};

static int bind_name(const char *name, size_t len, const olla_dim_binding *dims, int n_dims, int64_t *value)
{
    for (int i = 0; i < n_dims; i++)
        if (strlen(dims[i].name) == len && strncmp(dims[i].name, name, len) == 0) {
            *value = dims[i].value;
            return 1;
        }
    return 0;
}

/* A dimension parameter is a name, or an exporter's expression over names
 * and integers with + and * (such as "8*batch" or "batch*seq+1"). */
static int bind(const char *param, const olla_dim_binding *dims, int n_dims, int64_t *value)
{
    if (bind_name(param, strlen(param), dims, n_dims, value))
        return 1;
    int64_t sum = 0, prod = 1;
    const char *p = param;
    for (;;) {
        while (*p == ' ')
            p++;
        const char *start = p;
        int64_t term;
        if (*p >= '0' && *p <= '9') {
            term = 0;
            while (*p >= '0' && *p <= '9') {
                if (term > (INT64_MAX - 9) / 10)
                    return 0;
                term = term * 10 + (*p++ - '0');
            }
        } else {
            while (*p && *p != '*' && *p != '+' && *p != ' ')
                p++;
            if (p == start || !bind_name(start, (size_t)(p - start), dims, n_dims, &term))
                return 0;
        }
        if (term != 0 && prod > INT64_MAX / term)
            return 0;
        prod *= term;
        while (*p == ' ')
            p++;
        if (*p == '*') {
            p++;
            continue;
        }
        if (prod > INT64_MAX - sum)
            return 0;
        sum += prod;
        prod = 1;
        if (*p == '+') {
            p++;
            continue;
        }
        if (*p)
            return 0;
        *value = sum;
        return 1;
    }
}

static int add(olla_declared_types *d, const char *name, const olla_value_type *vt)
{
    if (!name || !name[0])
        return 1;
    int at = olla_strmap_get(&d->by_name, name);
    if (at >= 0) { /* keep the more specific declaration */
        if (d->types[at].rank >= 0 || vt->rank < 0) {
            free(vt->dims);
            return 1;
        }
        free(d->types[at].dims);
        d->types[at] = *vt;
        return 1;
    }
    if (d->n == d->cap) {
        int nc = d->cap ? d->cap * 2 : 64;
        olla_value_type *p = realloc(d->types, (size_t)nc * sizeof *p);
        if (!p)
            return 0;
        d->types = p;
        d->cap = nc;
    }
    d->types[d->n] = *vt;
    if (!olla_strmap_put(&d->by_name, name, d->n))
        return 0;
    d->n++;
    return 1;
}

static int from_type_proto(const Onnx__TypeProto *tp, const olla_dim_binding *dims, int n_dims, olla_value_type *vt)
{
    memset(vt, 0, sizeof *vt);
    vt->rank = -1;
    vt->source = OLLA_SRC_VALUE_INFO;
    if (!tp)
        return 1;
    const Onnx__TypeProto__Tensor *tt = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        tt = tp->tensor_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        vt->kind = OLLA_VALUE_SEQUENCE;
        return 1;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        vt->kind = OLLA_VALUE_MAP;
        return 1;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        vt->kind = OLLA_VALUE_OPTIONAL;
        return 1;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        vt->kind = OLLA_VALUE_SPARSE_TENSOR;
        return 1;
    default:
        return 1;
    }
    if (!tt)
        return 1;
    vt->elem_type = tt->has_elem_type ? tt->elem_type : 0;
    if (!tt->shape)
        return 1;
    vt->rank = (int)tt->shape->n_dim;
    vt->dims = calloc((size_t)vt->rank + 1, sizeof *vt->dims);
    if (!vt->dims)
        return 0;
    for (int i = 0; i < vt->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[i];
        vt->dims[i].value = -1;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0) {
            vt->dims[i].value = dim->dim_value;
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param) {
            vt->dims[i].param = dim->dim_param;
            int64_t v;
            if (bind(dim->dim_param, dims, n_dims, &v)) {
                vt->dims[i].value = v;
                vt->dims[i].param = NULL;
            }
        }
    }
    return 1;
}

olla_status olla_declared_types_build(const Onnx__ModelProto *m, const olla_dim_binding *dims, int n_dims,
                                      olla_declared_types **out, olla_error *err)
{
    const Onnx__GraphProto *g = m->graph;
    olla_declared_types *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d || !olla_strmap_init(&d->by_name, g->n_value_info + g->n_input + g->n_output + g->n_initializer + 8)) {
        free(d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading declared types");
    }
    int ok = 1;
    olla_value_type vt;
    for (size_t i = 0; ok && i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        memset(&vt, 0, sizeof vt);
        vt.elem_type = t->has_data_type ? t->data_type : 0;
        vt.rank = (int)t->n_dims;
        vt.source = OLLA_SRC_INITIALIZER;
        vt.dims = calloc((size_t)vt.rank + 1, sizeof *vt.dims);
        ok = vt.dims != NULL;
        for (int k = 0; ok && k < vt.rank; k++)
            vt.dims[k].value = t->dims[k] >= 0 ? t->dims[k] : -1;
        ok = ok && add(d, t->name, &vt);
    }
    for (size_t i = 0; ok && i < g->n_input; i++) {
        ok = from_type_proto(g->input[i]->type, dims, n_dims, &vt);
        vt.source = OLLA_SRC_INPUT;
        ok = ok && add(d, g->input[i]->name, &vt);
    }
    for (size_t i = 0; ok && i < g->n_value_info; i++)
        ok = from_type_proto(g->value_info[i]->type, dims, n_dims, &vt) && add(d, g->value_info[i]->name, &vt);
    for (size_t i = 0; ok && i < g->n_output; i++)
        ok = from_type_proto(g->output[i]->type, dims, n_dims, &vt) && add(d, g->output[i]->name, &vt);
    if (!ok) {
        olla_declared_types_free(d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading declared types");
    }
    *out = d;
    return OLLA_OK;
}

void olla_declared_types_free(olla_declared_types *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++)
        free(d->types[i].dims);
    free(d->types);
    olla_strmap_free(&d->by_name);
    free(d);
}

static const olla_value_type *lookup(void *ctx, const char *name)
{
    olla_declared_types *d = ctx;
    int i = olla_strmap_get(&d->by_name, name);
    return i >= 0 ? &d->types[i] : NULL;
}

olla_type_source olla_declared_types_source(olla_declared_types *d)
{
    olla_type_source s = {lookup, NULL, d};
    return s;
}
