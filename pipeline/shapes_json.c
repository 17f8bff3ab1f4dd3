/* olla-onnx: the inferred type of every tensor of a model's main graph as
 * one JSON document, for `olla-onnx shapes` and the library's callers:
 * {"tensors": [{"name", "dtype", "shape", "bytes", "source"}], "unknown":
 * [names], "reasons": {name: why}, "warnings": [...], "advice": what to pass
 * so that the tensors of unknown size get one, or null}. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "olla.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

static const char *source_name(olla_shape_source s)
{
    switch (s) {
    case OLLA_SRC_VALUE_INFO: return "value_info";
    case OLLA_SRC_INPUT: return "input";
    case OLLA_SRC_INITIALIZER: return "initializer";
    default: return "inferred";
    }
}

static const char *kind_name(olla_value_kind k)
{
    switch (k) {
    case OLLA_VALUE_SPARSE_TENSOR: return "sparse_tensor";
    case OLLA_VALUE_SEQUENCE: return "sequence";
    case OLLA_VALUE_MAP: return "map";
    case OLLA_VALUE_OPTIONAL: return "optional";
    default: return "tensor";
    }
}

/* What to pass so that the node outputs of unknown size get one: the advice
 * the main command gives (olla_shape_size_advice), "" when none applies. */
static void size_advice(const olla_shape_table *t, char *buf, size_t size)
{
    size_t n = 0, count = olla_shape_count(t);
    const char **names = malloc((count + 1) * sizeof *names);
    buf[0] = '\0';
    if (!names)
        return;
    for (size_t i = 0; i < count; i++) {
        const olla_value_type *ty = olla_shape_at(t, i);
        if (ty->source != OLLA_SRC_INPUT && ty->source != OLLA_SRC_INITIALIZER && ty->kind == OLLA_VALUE_TENSOR &&
            ty->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__STRING && olla_value_bytes(ty) < 0)
            names[n++] = olla_shape_name_at(t, i);
    }
    olla_shape_size_advice(t, names, n, buf, size);
    free(names);
}

/* Builds the JSON document; NULL on OOM. */
static json_object *to_json(const olla_shape_table *t, const char *advice)
{
    json_object *root = json_object_new_object(), *tensors = json_object_new_array(),
                *unknown = json_object_new_array(), *reasons = json_object_new_object(),
                *warnings = json_object_new_array();
    if (!root || !tensors || !unknown || !reasons || !warnings)
        goto oom;
    json_object_object_add(root, "tensors", tensors);
    json_object_object_add(root, "unknown", unknown);
    json_object_object_add(root, "reasons", reasons);
    json_object_object_add(root, "warnings", warnings);
    for (size_t i = 0; i < olla_shape_count(t); i++) {
        const char *name = olla_shape_name_at(t, i);
        const olla_value_type *ty = olla_shape_at(t, i);
        json_object *o = json_object_new_object();
        if (!o || json_object_array_add(tensors, o) != 0)
            goto oom;
        json_object_object_add(o, "name", json_object_new_string(name));
        if (ty->kind != OLLA_VALUE_TENSOR)
            json_object_object_add(o, "kind", json_object_new_string(kind_name(ty->kind)));
        const char *dt = olla_elem_type_name(ty->elem_type);
        json_object_object_add(o, "dtype", dt ? json_object_new_string(dt) : NULL);
        json_object *shape = NULL;
        if (ty->kind == OLLA_VALUE_TENSOR && ty->rank >= 0) {
            shape = json_object_new_array();
            if (!shape)
                goto oom;
            for (int d = 0; d < ty->rank; d++) {
                json_object *v = NULL;
                if (ty->dims[d].value >= 0)
                    v = json_object_new_int64(ty->dims[d].value);
                else if (ty->dims[d].param)
                    v = json_object_new_string(ty->dims[d].param);
                json_object_array_add(shape, v);
            }
        }
        json_object_object_add(o, "shape", shape);
        int64_t bytes = olla_value_bytes(ty);
        json_object_object_add(o, "bytes", bytes >= 0 ? json_object_new_int64(bytes) : NULL);
        json_object_object_add(o, "source", json_object_new_string(source_name(ty->source)));
        const char *why = olla_shape_unknown_reason(t, name);
        if (why) {
            json_object_array_add(unknown, json_object_new_string(name));
            json_object_object_add(reasons, name, json_object_new_string(why));
        }
    }
    for (size_t i = 0; i < olla_shape_warning_count(t); i++)
        json_object_array_add(warnings, json_object_new_string(olla_shape_warning_at(t, i)));
    json_object_object_add(root, "advice", advice && advice[0] ? json_object_new_string(advice) : NULL);
    return root;
oom:
    json_object_put(root);
    if (!root) {
        json_object_put(tensors);
        json_object_put(unknown);
        json_object_put(reasons);
        json_object_put(warnings);
    }
    return NULL;
}

olla_status olla_model_shapes_json(const olla_model *m, const olla_options *opt, int use_value_info, char **json,
                                   olla_error *err)
{
    *json = NULL;
    olla_shape_options so = {.dims = opt->dims,
                             .n_dims = opt->n_dims,
                             .ignore_value_info = !use_value_info,
                             .strict = opt->strict_shapes,
                             .input_shapes = opt->input_shapes,
                             .n_input_shapes = opt->n_input_shapes};
    olla_shape_table *t = NULL;
    olla_status st = olla_model_check_dim_names(m, opt->dims, opt->n_dims, err);
    if (st == OLLA_OK)
        st = olla_infer_shapes(m->proto, &so, &t, err);
    char advice[1024];
    advice[0] = '\0';
    size_t path_len = m->path ? strlen(m->path) : 0;
    if (st == OLLA_OK && path_len + 2 + 256 <= sizeof advice) /* the room the main command's message leaves it */
        size_advice(t, advice, sizeof advice - path_len - 2);
    json_object *doc = st == OLLA_OK ? to_json(t, advice) : NULL;
    if (st == OLLA_OK && doc) {
        const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        *json = text ? strdup(text) : NULL;
    }
    if (st == OLLA_OK && !*json)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing the shapes of %s as JSON", m->path);
    json_object_put(doc);
    olla_shape_table_free(t);
    return st;
}
