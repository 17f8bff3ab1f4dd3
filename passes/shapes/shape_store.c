/* olla-onnx: storage for shape inference: arena, string map, and conversion of ONNX type and tensor protos. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/shape_engine.h"

/* ---- arena ---- */

struct olla_arena_chunk {
    olla_arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void *olla_arena_alloc(olla_arena *a, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes == 0)
        bytes = 16;
    olla_arena_chunk *c = a->head;
    if (!c || c->size - c->used < bytes) {
        size_t size = bytes > 65536 ? bytes : 65536;
        c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

char *olla_arena_strndup(olla_arena *a, const char *s, size_t n)
{
    char *p = olla_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *olla_arena_strdup(olla_arena *a, const char *s)
{
    return olla_arena_strndup(a, s, strlen(s));
}

void olla_arena_free(olla_arena *a)
{
    olla_arena_chunk *c = a->head;
    while (c) {
        olla_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}

/* ---- interned strings ---- */

const char *olla_shape__intern(olla_shape_table *t, const char *s)
{
    if (!s)
        return NULL;
    const char *known = olla_strmap_key(&t->strings, s);
    if (known)
        return known;
    char *copy = olla_arena_strdup(&t->arena, s);
    if (!copy || !olla_strmap_put(&t->strings, copy, 0))
        return NULL;
    return copy;
}

/* ---- protos ---- */

static olla_dim bound_dim(olla_shape_table *t, const Onnx__TensorShapeProto__Dimension *d)
{
    olla_dim r = {-1, NULL};
    if (!d)
        return r;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0) {
        r.value = d->dim_value;
    } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
               d->dim_param[0]) {
        int64_t v;
        if (olla_dim_param_eval(d->dim_param, t->bind, t->n_bind, &v)) {
            r.value = v;
            return r;
        }
        r.param = olla_shape__intern(t, d->dim_param);
    }
    return r;
}

olla_status olla_shape__type_from_proto(olla_shape_table *t, const Onnx__TypeProto *tp, olla_value_type *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!tp)
        return OLLA_OK;
    const Onnx__TypeProto__Tensor *tt = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        out->kind = OLLA_VALUE_TENSOR;
        tt = tp->tensor_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        out->kind = OLLA_VALUE_SPARSE_TENSOR;
        if (tp->sparse_tensor_type)
            out->elem_type = tp->sparse_tensor_type->elem_type;
        return OLLA_OK;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        out->kind = OLLA_VALUE_SEQUENCE;
        if (tp->sequence_type && tp->sequence_type->elem_type &&
            tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
            tp->sequence_type->elem_type->tensor_type)
            out->elem_type = tp->sequence_type->elem_type->tensor_type->elem_type;
        return OLLA_OK;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        out->kind = OLLA_VALUE_MAP;
        return OLLA_OK;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        out->kind = OLLA_VALUE_OPTIONAL;
        if (tp->optional_type && tp->optional_type->elem_type &&
            tp->optional_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
            tp->optional_type->elem_type->tensor_type)
            out->elem_type = tp->optional_type->elem_type->tensor_type->elem_type;
        return OLLA_OK;
    default:
        return OLLA_OK;
    }
    if (!tt)
        return OLLA_OK;
    out->elem_type = tt->elem_type;
    if (!tt->shape)
        return OLLA_OK;
    if (tt->shape->n_dim > OLLA_SHAPE_MAX_RANK)
        return OLLA_OK;
    out->rank = (int)tt->shape->n_dim;
    out->dims = olla_arena_alloc(&t->arena, sizeof *out->dims * (tt->shape->n_dim + 1));
    if (!out->dims)
        return OLLA_ERR_INTERNAL;
    for (size_t d = 0; d < tt->shape->n_dim; d++)
        out->dims[d] = bound_dim(t, tt->shape->dim[d]);
    return OLLA_OK;
}

static uint64_t le_read(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; k--)
        v = (v << 8) | p[k];
    return v;
}

static double half_to_double(uint16_t h, int bf16)
{
    if (bf16) {
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    double v;
    if (exp == 0)
        v = ldexp((double)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp(1.0 + man / 1024.0, exp - 15);
    return sign ? -v : v;
}

olla_sval *olla_shape__tensor_values(olla_arena *a, const Onnx__TensorProto *tp, int64_t *n_out)
{
    int64_t n = 1;
    for (size_t d = 0; d < tp->n_dims; d++) {
        if (tp->dims[d] < 0 || tp->dims[d] > OLLA_SHAPE_MAX_VALUE)
            return NULL;
        n *= tp->dims[d];
        if (n > OLLA_SHAPE_MAX_VALUE)
            return NULL;
    }
    int32_t dt = tp->data_type;
    int is_f = dt == OLLA_DT_FLOAT || dt == OLLA_DT_DOUBLE || dt == OLLA_DT_FLOAT16 || dt == OLLA_DT_BFLOAT16;
    int is_i = dt == OLLA_DT_INT64 || dt == OLLA_DT_INT32 || dt == OLLA_DT_INT16 || dt == OLLA_DT_INT8 ||
               dt == OLLA_DT_UINT8 || dt == OLLA_DT_UINT16 || dt == OLLA_DT_UINT32 || dt == OLLA_DT_UINT64 ||
               dt == OLLA_DT_BOOL;
    if (!is_f && !is_i)
        return NULL;
    if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return NULL;
    olla_sval *e = olla_arena_alloc(a, sizeof *e * (size_t)(n ? n : 1));
    if (!e)
        return NULL;
    int bytes = olla_elem_type_bits(dt) / 8;
    int is_signed = dt == OLLA_DT_INT64 || dt == OLLA_DT_INT32 || dt == OLLA_DT_INT16 || dt == OLLA_DT_INT8;
    for (int64_t k = 0; k < n; k++) {
        double f = 0;
        int64_t i = 0;
        if (tp->has_raw_data) {
            if (tp->raw_data.len < (size_t)(n * bytes))
                return NULL;
            uint64_t v = le_read(tp->raw_data.data + k * bytes, bytes);
            if (dt == OLLA_DT_FLOAT) {
                uint32_t b32 = (uint32_t)v;
                float ff;
                memcpy(&ff, &b32, 4);
                f = ff;
            } else if (dt == OLLA_DT_DOUBLE) {
                memcpy(&f, &v, 8);
            } else if (dt == OLLA_DT_FLOAT16 || dt == OLLA_DT_BFLOAT16) {
                f = half_to_double((uint16_t)v, dt == OLLA_DT_BFLOAT16);
            } else if (is_signed && bytes < 8) {
                uint64_t sign = 1ULL << (bytes * 8 - 1);
                i = (int64_t)((v ^ sign) - sign);
            } else {
                i = (int64_t)v;
            }
        } else if (dt == OLLA_DT_FLOAT) {
            if (tp->n_float_data < (size_t)n)
                return NULL;
            f = tp->float_data[k];
        } else if (dt == OLLA_DT_DOUBLE) {
            if (tp->n_double_data < (size_t)n)
                return NULL;
            f = tp->double_data[k];
        } else if (dt == OLLA_DT_INT64) {
            if (tp->n_int64_data < (size_t)n)
                return NULL;
            i = tp->int64_data[k];
        } else if (dt == OLLA_DT_UINT32 || dt == OLLA_DT_UINT64) {
            if (tp->n_uint64_data < (size_t)n)
                return NULL;
            i = (int64_t)tp->uint64_data[k];
        } else {
            if (tp->n_int32_data < (size_t)n)
                return NULL;
            if (dt == OLLA_DT_FLOAT16 || dt == OLLA_DT_BFLOAT16)
                f = half_to_double((uint16_t)tp->int32_data[k], dt == OLLA_DT_BFLOAT16);
            else
                i = tp->int32_data[k];
        }
        e[k].state = OLLA_SV_KNOWN;
        if (is_f) {
            e[k].f = f;
            e[k].i = (f > -9e18 && f < 9e18) ? (int64_t)f : 0;
        } else {
            e[k].i = i;
            e[k].f = (double)i;
        }
    }
    *n_out = n;
    return e;
}

olla_status olla_shape__from_tensor(olla_shape_table *t, const Onnx__TensorProto *tp, olla_value_type *type,
                                    olla_shape_value *value)
{
    memset(type, 0, sizeof *type);
    memset(value, 0, sizeof *value);
    type->kind = OLLA_VALUE_TENSOR;
    type->elem_type = tp->data_type;
    if (tp->n_dims > OLLA_SHAPE_MAX_RANK) {
        type->rank = -1;
        return OLLA_OK;
    }
    type->rank = (int)tp->n_dims;
    type->dims = olla_arena_alloc(&t->arena, sizeof *type->dims * (tp->n_dims + 1));
    if (!type->dims)
        return OLLA_ERR_INTERNAL;
    for (size_t d = 0; d < tp->n_dims; d++) {
        type->dims[d].value = tp->dims[d] >= 0 ? tp->dims[d] : -1;
        type->dims[d].param = NULL;
    }
    int64_t n = 0;
    olla_sval *e = olla_shape__tensor_values(&t->arena, tp, &n);
    if (e) {
        value->e = e;
        value->n = n;
    }
    return OLLA_OK;
}

void olla_shape__format(const olla_value_type *t, char *buf, size_t size)
{
    size_t at = 0;
#define PUT(...)                                                                  \
    do {                                                                          \
        if (at < size) {                                                          \
            int w_ = snprintf(buf + at, size - at, __VA_ARGS__);                  \
            at += w_ > 0 ? (size_t)w_ : 0;                                        \
        }                                                                         \
    } while (0)
    if (size)
        buf[0] = '\0';
    if (!t) {
        PUT("(none)");
        return;
    }
    const char *name = olla_elem_type_name(t->elem_type);
    if (t->kind != OLLA_VALUE_TENSOR) {
        static const char *const kinds[] = {"tensor", "sparse_tensor", "sequence", "map", "optional"};
        PUT("%s(%s)", (unsigned)t->kind < 5 ? kinds[t->kind] : "?", name ? name : "?");
        return;
    }
    PUT("%s", name ? name : "?");
    if (t->rank < 0) {
        PUT("[unknown rank]");
        return;
    }
    PUT("[");
    for (int d = 0; d < t->rank; d++) {
        if (d)
            PUT(",");
        if (t->dims[d].value >= 0)
            PUT("%lld", (long long)t->dims[d].value);
        else if (t->dims[d].param)
            PUT("%s", t->dims[d].param);
        else
            PUT("?");
    }
    PUT("]");
#undef PUT
}

void olla_arena_reset(olla_arena *a)
{
    olla_arena_chunk *keep = a->head;
    if (!keep)
        return;
    olla_arena_chunk *c = keep->next;
    while (c) {
        olla_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    keep->next = NULL;
    keep->used = 0;
}
