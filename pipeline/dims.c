/* olla-onnx: are the --dim names the model's own? A binding whose name no
 * declared dimension uses is almost always a typo (--dim bacth=32), and
 * would otherwise be ignored in silence; this check runs right after
 * loading, before any work.
 *
 * A dimension parameter is a name or an exporter's expression over names
 * ("8*batch", "(seq-1)*2"); a binding matches when its name is one of the
 * names of any dim_param of any declared type (graph inputs, outputs and
 * value_info, of the main graph and of every subgraph, at any depth). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "onnx/olla_model.h"

typedef struct {
    const olla_dim_binding *dims;
    int n_dims;
    unsigned char *used; /* n_dims flags */
    char seen[256];      /* the model's names, for the message */
} dim_walk;

static void note_name(dim_walk *w, const char *s, size_t len)
{
    for (int i = 0; i < w->n_dims; i++)
        if (strlen(w->dims[i].name) == len && strncmp(w->dims[i].name, s, len) == 0)
            w->used[i] = 1;
    size_t k = strlen(w->seen);
    char key[72];
    snprintf(key, sizeof key, "%.*s", (int)(len < 64 ? len : 64), s);
    /* a short list of the names, each once */
    const char *hit = strstr(w->seen, key);
    int listed = hit && (hit == w->seen || hit[-1] == ' ') && (hit[strlen(key)] == ',' || hit[strlen(key)] == '\0');
    if (!listed && k + strlen(key) + 3 < sizeof w->seen)
        snprintf(w->seen + k, sizeof w->seen - k, "%s%s", k ? ", " : "", key);
}

/* The names of a dim_param expression: what lies between + - * ( ) and spaces. */
static void note_param(dim_walk *w, const char *p)
{
    while (*p) {
        size_t len = strcspn(p, "+-*() ");
        if (len && !(p[0] >= '0' && p[0] <= '9'))
            note_name(w, p, len);
        p += len ? len : 1;
    }
}

static void walk_type(dim_walk *w, const Onnx__TypeProto *t, int depth)
{
    if (!t || depth > 64)
        return;
    const Onnx__TensorShapeProto *shape = NULL;
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type)
        shape = t->tensor_type->shape;
    else if (t->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE && t->sparse_tensor_type)
        shape = t->sparse_tensor_type->shape;
    else if (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && t->sequence_type)
        walk_type(w, t->sequence_type->elem_type, depth + 1);
    else if (t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type)
        walk_type(w, t->optional_type->elem_type, depth + 1);
    else if (t->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE && t->map_type)
        walk_type(w, t->map_type->value_type, depth + 1);
    for (size_t d = 0; shape && d < shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param)
            note_param(w, dim->dim_param);
    }
}

static void walk_values(dim_walk *w, Onnx__ValueInfoProto *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i])
            walk_type(w, v[i]->type, 0);
}

static void walk_graph(dim_walk *w, const Onnx__GraphProto *g, int depth)
{
    if (!g || depth > 64)
        return;
    walk_values(w, g->input, g->n_input);
    walk_values(w, g->output, g->n_output);
    walk_values(w, g->value_info, g->n_value_info);
    for (size_t k = 0; k < g->n_node; k++) {
        const Onnx__NodeProto *node = g->node[k];
        for (size_t a = 0; node && a < node->n_attribute; a++) {
            const Onnx__AttributeProto *at = node->attribute[a];
            if (!at)
                continue;
            walk_graph(w, at->g, depth + 1);
            for (size_t s = 0; s < at->n_graphs; s++)
                walk_graph(w, at->graphs[s], depth + 1);
        }
    }
}

void olla_model_bindings_used(const olla_model *m, const olla_dim_binding *dims, int n_dims, unsigned char *dim_used,
                              const olla_input_shape *shapes, int n_shapes, unsigned char *shape_used)
{
    const Onnx__GraphProto *g = m->proto ? m->proto->graph : NULL;
    if (n_dims > 0) {
        memset(dim_used, 0, (size_t)n_dims);
        dim_walk w = {dims, n_dims, dim_used, ""};
        walk_graph(&w, g, 0);
    }
    for (int j = 0; j < n_shapes; j++) {
        shape_used[j] = 0;
        for (size_t k = 0; g && k < g->n_input && !shape_used[j]; k++) {
            const Onnx__ValueInfoProto *vi = g->input[k];
            if (!vi || !vi->name || !shapes[j].name || strcmp(vi->name, shapes[j].name) != 0)
                continue;
            const Onnx__TypeProto *tp = vi->type;
            int declared = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
                                   tp->tensor_type->shape
                               ? (int)tp->tensor_type->shape->n_dim
                               : -1;
            shape_used[j] = declared < 0 || declared == shapes[j].rank ? 1 : 2;
        }
        for (size_t k = 0; g && shape_used[j] && k < g->n_initializer; k++)
            if (g->initializer[k] && g->initializer[k]->name && strcmp(g->initializer[k]->name, shapes[j].name) == 0)
                shape_used[j] = 0; /* a weight with a default value: not fed at run time */
    }
}

olla_status olla_model_check_dim_names(const olla_model *m, const olla_dim_binding *dims, int n_dims,
                                       olla_error *err)
{
    if (n_dims <= 0)
        return OLLA_OK;
    unsigned char *used = calloc((size_t)n_dims, 1);
    if (!used)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking the --dim names");
    dim_walk w = {dims, n_dims, used, ""};
    walk_graph(&w, m->proto ? m->proto->graph : NULL, 0);
    olla_status st = OLLA_OK;
    for (int i = 0; i < n_dims && st == OLLA_OK; i++)
        if (!used[i])
            st = olla_error_set(err, OLLA_ERR_USAGE, "--dim %s=%lld: %s has no symbolic dimension named '%s' (%s%s)",
                                dims[i].name, (long long)dims[i].value, m->path, dims[i].name,
                                w.seen[0] ? "its names: " : "it declares none", w.seen);
    free(used);
    return st;
}
