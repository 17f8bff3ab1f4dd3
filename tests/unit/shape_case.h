/* olla-onnx tests: table-driven shape-inference cases. A case is one node
 * written compactly; the helper builds a one-node model, runs
 * olla_infer_shapes and compares every listed output exactly.
 *
 *   op       "Conv", or "domain:Op" for another domain
 *   opset    opset version of the node's domain
 *   inputs   space-separated "name:type[d,d,...]"; a dim is a number, a name
 *            (symbolic) or ?; "name:type[..]=v,v,..." makes it an initializer
 *            with those values; "name:seq(type)" a sequence input; "-" an
 *            empty (omitted) input; "v=shape(x:type[dims])" feeds the value
 *            of Shape(x) (so symbolic dims become symbolic values)
 *   attrs    space-separated "name=kind:value" with kind i, f, s, ints,
 *            floats, strs (comma-separated lists)
 *   outputs  space-separated expected outputs "name:type[dims]"; a dim ? must
 *            be unknown, "[*]" means unknown rank; "name:seq(type)" and
 *            "name:opt(type)" check kind and element type; a trailing "!"
 *            requires an unknown-reason; "-" an omitted output; the single
 *            word "ERROR" expects OLLA_ERR_INPUT.
 */
#ifndef OLLA_SHAPE_CASE_H
#define OLLA_SHAPE_CASE_H

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_test.h"
#include "passes/shapes/olla_shapes.h"

typedef struct olla_shape_case {
    const char *op;
    int opset;
    const char *inputs;
    const char *attrs;
    const char *outputs;
} olla_shape_case;

static const struct {
    const char *name;
    int32_t type;
} olla_case_types[] = {
    {"float", 1},   {"uint8", 2},    {"int8", 3},   {"uint16", 4}, {"int16", 5},
    {"int32", 6},   {"int64", 7},    {"string", 8}, {"bool", 9},   {"float16", 10},
    {"double", 11}, {"uint32", 12},  {"uint64", 13}, {"bfloat16", 16}, {"float8e4m3fn", 17},
    {"complex64", 14}, {"complex128", 15}, {"float8e4m3fnuz", 18}, {"float8e5m2", 19}, {"float8e5m2fnuz", 20},
    {"uint4", 21}, {"int4", 22}, {"float4e2m1", 23},
};

static inline int32_t olla_case_type(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof olla_case_types / sizeof olla_case_types[0]; i++)
        if (strlen(olla_case_types[i].name) == n && strncmp(olla_case_types[i].name, s, n) == 0)
            return olla_case_types[i].type;
    fprintf(stderr, "shape_case: unknown type '%.*s'\n", (int)n, s);
    abort();
}

/* Splits s on spaces into a NULL-terminated array of strdup'd words. */
static inline char **olla_case_words(const char *s, size_t *n)
{
    size_t cap = 8;
    char **w = calloc(cap, sizeof *w);
    *n = 0;
    while (s && *s) {
        while (*s == ' ') s++;
        if (!*s) break;
        const char *e = s;
        while (*e && *e != ' ') e++;
        if (*n + 1 >= cap) {
            cap *= 2;
            w = realloc(w, cap * sizeof *w);
        }
        w[(*n)++] = strndup(s, (size_t)(e - s));
        w[*n] = NULL;
        s = e;
    }
    return w;
}

static inline void olla_case_free_words(char **w, size_t n)
{
    for (size_t i = 0; i < n; i++) free(w[i]);
    free(w);
}

/* Parses "[d,d,..]" into a TensorShapeProto. */
static inline Onnx__TensorShapeProto *olla_case_shape(const char *s)
{
    Onnx__TensorShapeProto *sh = calloc(1, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    s++; /* '[' */
    while (*s && *s != ']') {
        const char *e = s;
        while (*e && *e != ',' && *e != ']') e++;
        Onnx__TensorShapeProto__Dimension *d = calloc(1, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (e > s && (isdigit((unsigned char)*s))) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(s, NULL, 10);
        } else if (!(e - s == 1 && *s == '?')) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = strndup(s, (size_t)(e - s));
        }
        sh->dim = realloc(sh->dim, (sh->n_dim + 1) * sizeof *sh->dim);
        sh->dim[sh->n_dim++] = d;
        s = *e == ',' ? e + 1 : e;
    }
    return sh;
}

/* Builds a ValueInfoProto and, for "=v,..", an initializer. */
static inline Onnx__ValueInfoProto *olla_case_input(const char *w, Onnx__TensorProto **init)
{
    *init = NULL;
    const char *colon = strchr(w, ':');
    Onnx__ValueInfoProto *vi = calloc(1, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = strndup(w, (size_t)(colon - w));
    Onnx__TypeProto *tp = calloc(1, sizeof *tp);
    onnx__type_proto__init(tp);
    vi->type = tp;
    const char *t = colon + 1;
    if (strncmp(t, "seq(", 4) == 0) {
        const char *close = strchr(t, ')');
        Onnx__TypeProto__Sequence *sq = calloc(1, sizeof *sq);
        onnx__type_proto__sequence__init(sq);
        Onnx__TypeProto *et = calloc(1, sizeof *et);
        onnx__type_proto__init(et);
        Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
        onnx__type_proto__tensor__init(tt);
        tt->has_elem_type = 1;
        tt->elem_type = olla_case_type(t + 4, (size_t)(close - t - 4));
        et->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        et->tensor_type = tt;
        sq->elem_type = et;
        tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp->sequence_type = sq;
        return vi;
    }
    const char *br = strchr(t, '[');
    Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = olla_case_type(t, br ? (size_t)(br - t) : strlen(t));
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (!br) /* "name:type": no shape, so the rank is unknown */
        return vi;
    tt->shape = olla_case_shape(br);
    const char *eq = strchr(br, '=');
    if (eq) {
        Onnx__TensorProto *tn = calloc(1, sizeof *tn);
        onnx__tensor_proto__init(tn);
        tn->name = strdup(vi->name);
        tn->has_data_type = 1;
        tn->data_type = tt->elem_type;
        tn->n_dims = tt->shape->n_dim;
        tn->dims = calloc(tn->n_dims + 1, sizeof *tn->dims);
        for (size_t i = 0; i < tn->n_dims; i++) tn->dims[i] = tt->shape->dim[i]->dim_value;
        const char *p = eq + 1;
        while (*p) {
            char *end;
            if (tn->data_type == 1 || tn->data_type == 11) {
                double v = strtod(p, &end);
                if (tn->data_type == 1) {
                    tn->float_data = realloc(tn->float_data, (tn->n_float_data + 1) * sizeof(float));
                    tn->float_data[tn->n_float_data++] = (float)v;
                } else {
                    tn->double_data = realloc(tn->double_data, (tn->n_double_data + 1) * sizeof(double));
                    tn->double_data[tn->n_double_data++] = v;
                }
            } else if (tn->data_type == 7) {
                long long v = strtoll(p, &end, 10);
                tn->int64_data = realloc(tn->int64_data, (tn->n_int64_data + 1) * sizeof(int64_t));
                tn->int64_data[tn->n_int64_data++] = v;
            } else {
                long long v = strtoll(p, &end, 10);
                tn->int32_data = realloc(tn->int32_data, (tn->n_int32_data + 1) * sizeof(int32_t));
                tn->int32_data[tn->n_int32_data++] = (int32_t)v;
            }
            p = *end == ',' ? end + 1 : end;
            if (end == p && *p) break;
        }
        *init = tn;
    }
    return vi;
}

static inline Onnx__AttributeProto *olla_case_attr(const char *w)
{
    Onnx__AttributeProto *a = calloc(1, sizeof *a);
    onnx__attribute_proto__init(a);
    const char *eq = strchr(w, '='), *colon = strchr(eq, ':');
    a->name = strndup(w, (size_t)(eq - w));
    const char *kind = eq + 1, *v = colon + 1;
    size_t kl = (size_t)(colon - kind);
    if (kl == 1 && *kind == 'i') {
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1, a->i = strtoll(v, NULL, 10);
    } else if (kl == 1 && *kind == 'f') {
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        a->has_f = 1, a->f = strtof(v, NULL);
    } else if (kl == 1 && *kind == 's') {
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        a->has_s = 1;
        a->s.data = (uint8_t *)strdup(v);
        a->s.len = strlen(v);
    } else {
        const char *p = v;
        while (*p) {
            const char *e = p;
            while (*e && *e != ',') e++;
            if (strncmp(kind, "ints", kl) == 0) {
                a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
                a->ints = realloc(a->ints, (a->n_ints + 1) * sizeof *a->ints);
                a->ints[a->n_ints++] = strtoll(p, NULL, 10);
            } else if (strncmp(kind, "floats", kl) == 0) {
                a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
                a->floats = realloc(a->floats, (a->n_floats + 1) * sizeof *a->floats);
                a->floats[a->n_floats++] = strtof(p, NULL);
            } else {
                a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
                a->strings = realloc(a->strings, (a->n_strings + 1) * sizeof *a->strings);
                a->strings[a->n_strings].data = (uint8_t *)strndup(p, (size_t)(e - p));
                a->strings[a->n_strings].len = (size_t)(e - p);
                a->n_strings++;
            }
            p = *e ? e + 1 : e;
        }
    }
    return a;
}

/* Builds the one-node model of a case. Free with onnx__model_proto__free_unpacked. */
static inline Onnx__ModelProto *olla_case_model(const olla_shape_case *k)
{
    Onnx__ModelProto *m = calloc(1, sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = 8;
    Onnx__GraphProto *g = calloc(1, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = strdup("case");
    m->graph = g;
    Onnx__NodeProto *n = calloc(1, sizeof *n);
    onnx__node_proto__init(n);
    const char *colon = strchr(k->op, ':');
    n->op_type = strdup(colon ? colon + 1 : k->op);
    n->domain = colon ? strndup(k->op, (size_t)(colon - k->op)) : strdup("");
    m->opset_import = calloc(2, sizeof *m->opset_import);
    for (int i = 0; i < (colon ? 2 : 1); i++) {
        Onnx__OperatorSetIdProto *os = calloc(1, sizeof *os);
        onnx__operator_set_id_proto__init(os);
        os->domain = strdup(i == 0 ? "" : n->domain);
        os->has_version = 1;
        os->version = i == 0 && colon ? 17 : k->opset;
        m->opset_import[m->n_opset_import++] = os;
    }
    size_t nw;
    char **w = olla_case_words(k->inputs, &nw);
    g->node = calloc(nw + 1, sizeof *g->node);
    g->node[g->n_node++] = n;
    n->input = calloc(nw + 1, sizeof *n->input);
    g->input = calloc(nw + 1, sizeof *g->input);
    g->initializer = calloc(nw + 1, sizeof *g->initializer);
    for (size_t i = 0; i < nw; i++) {
        if (strcmp(w[i], "-") == 0) {
            n->input[n->n_input++] = strdup("");
            continue;
        }
        const char *sh = strstr(w[i], "=shape(");
        if (sh) {
            /* "v=shape(x:type[dims])": graph input x and a Shape node x -> v. */
            char *spec = strndup(sh + 7, strlen(sh + 7) - 1);
            Onnx__TensorProto *unused;
            Onnx__ValueInfoProto *vi = olla_case_input(spec, &unused);
            free(spec);
            g->input[g->n_input++] = vi;
            Onnx__NodeProto *s = calloc(1, sizeof *s);
            onnx__node_proto__init(s);
            s->op_type = strdup("Shape");
            s->domain = strdup("");
            s->input = calloc(1, sizeof *s->input);
            s->input[s->n_input++] = strdup(vi->name);
            s->output = calloc(1, sizeof *s->output);
            s->output[s->n_output++] = strndup(w[i], (size_t)(sh - w[i]));
            g->node[g->n_node++] = s;
            n->input[n->n_input++] = strdup(s->output[0]);
            continue;
        }
        Onnx__TensorProto *init;
        Onnx__ValueInfoProto *vi = olla_case_input(w[i], &init);
        n->input[n->n_input++] = strdup(vi->name);
        g->input[g->n_input++] = vi;
        if (init) g->initializer[g->n_initializer++] = init;
    }
    olla_case_free_words(w, nw);
    w = olla_case_words(k->attrs, &nw);
    n->attribute = calloc(nw + 1, sizeof *n->attribute);
    for (size_t i = 0; i < nw; i++) n->attribute[n->n_attribute++] = olla_case_attr(w[i]);
    olla_case_free_words(w, nw);
    w = olla_case_words(k->outputs, &nw);
    n->output = calloc(nw + 1, sizeof *n->output);
    for (size_t i = 0; i < nw; i++) {
        if (strcmp(w[i], "ERROR") == 0) {
            n->output[n->n_output++] = strdup("out");
            continue;
        }
        const char *c2 = strchr(w[i], ':');
        n->output[n->n_output++] = c2 ? strndup(w[i], (size_t)(c2 - w[i])) : strdup("");
    }
    olla_case_free_words(w, nw);
    return m;
}

/* Checks one expected output against the table; returns 1 when it matches. */
static inline int olla_case_check_output(const olla_shape_table *t, const char *w, char *why, size_t cap)
{
    const char *colon = strchr(w, ':');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(colon - w), w);
    const olla_value_type *v = olla_shape_lookup(t, name);
    if (!v) {
        snprintf(why, cap, "output %s absent", name);
        return 0;
    }
    const char *spec = colon + 1;
    size_t sl = strlen(spec);
    int want_reason = sl && spec[sl - 1] == '!';
    const char *reason = olla_shape_unknown_reason(t, name);
    if (want_reason && !reason) {
        snprintf(why, cap, "output %s has no unknown-reason", name);
        return 0;
    }
    int kind = OLLA_VALUE_TENSOR;
    if (strncmp(spec, "seq(", 4) == 0) kind = OLLA_VALUE_SEQUENCE;
    if (strncmp(spec, "opt(", 4) == 0) kind = OLLA_VALUE_OPTIONAL;
    if (kind != OLLA_VALUE_TENSOR) {
        const char *close = strchr(spec, ')');
        int32_t e = olla_case_type(spec + 4, (size_t)(close - spec - 4));
        if ((int)v->kind != kind || v->elem_type != e) {
            snprintf(why, cap, "output %s: kind %d elem %d, expected kind %d elem %d", name,
                     (int)v->kind, v->elem_type, kind, e);
            return 0;
        }
        return 1;
    }
    const char *br = strchr(spec, '[');
    int32_t e = olla_case_type(spec, (size_t)(br - spec));
    if (v->kind != OLLA_VALUE_TENSOR || v->elem_type != e) {
        snprintf(why, cap, "output %s: kind %d elem %d, expected elem %d", name, (int)v->kind,
                 v->elem_type, e);
        return 0;
    }
    if (strncmp(br, "[*]", 3) == 0) {
        if (v->rank != -1) {
            snprintf(why, cap, "output %s: rank %d, expected unknown", name, v->rank);
            return 0;
        }
        return 1;
    }
    Onnx__TensorShapeProto *sh = olla_case_shape(br);
    int ok = v->rank == (int)sh->n_dim;
    if (!ok) snprintf(why, cap, "output %s: rank %d, expected %zu", name, v->rank, sh->n_dim);
    for (size_t i = 0; ok && i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        const olla_dim *o = &v->dims[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            ok = o->value == d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
            ok = o->value < 0 && o->param && strcmp(o->param, d->dim_param) == 0;
        else
            ok = o->value < 0 && !o->param;
        if (!ok)
            snprintf(why, cap, "output %s: dim %zu is %lld/%s", name, i, (long long)o->value,
                     o->param ? o->param : "-");
    }
    onnx__tensor_shape_proto__free_unpacked(sh, NULL);
    return ok;
}

/* Runs cases[0..n); reports each failing case. Returns the failure count. */
static inline int olla_run_shape_cases(const olla_shape_case *cases, size_t n)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const olla_shape_case *k = &cases[i];
        Onnx__ModelProto *m = olla_case_model(k);
        olla_shape_options opt = {.ignore_value_info = 1};
        olla_shape_table *t = NULL;
        olla_error err;
        olla_error_clear(&err);
        olla_status st = olla_infer_shapes(m, &opt, &t, &err);
        char why[512] = "";
        int ok = 1;
        if (strcmp(k->outputs, "ERROR") == 0) {
            ok = st == OLLA_ERR_INPUT && err.message[0];
            if (!ok) snprintf(why, sizeof why, "expected an input error, got status %d", (int)st);
        } else if (st != OLLA_OK) {
            ok = 0;
            snprintf(why, sizeof why, "status %d: %.400s", (int)st, err.message);
        } else {
            size_t nw;
            char **w = olla_case_words(k->outputs, &nw);
            for (size_t j = 0; ok && j < nw; j++)
                if (strcmp(w[j], "-") != 0) ok = olla_case_check_output(t, w[j], why, sizeof why);
            olla_case_free_words(w, nw);
        }
        if (!ok) {
            fprintf(stderr, "case %s (opset %d) inputs '%s' attrs '%s': %s\n", k->op, k->opset,
                    k->inputs, k->attrs, why);
            failures++;
        }
        olla_shape_table_free(t);
        onnx__model_proto__free_unpacked(m, NULL);
    }
    return failures;
}

#define OLLA_SHAPE_CASES(arr) \
    OLLA_CHECK_EQ_I64(olla_run_shape_cases(arr, sizeof arr / sizeof arr[0]), 0)

#endif
