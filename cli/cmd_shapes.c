/* olla-onnx shapes [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...]
 * [--no-value-info] [--strict-shapes] in.onnx: print the inferred type of
 * every tensor of the main graph as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "onnx/olla_model.h"
#include "passes/shapes/olla_shapes.h"

static const char shapes_usage[] = "usage: olla-onnx shapes [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,... ...]"
                                   " [--no-value-info] [--strict-shapes] model.onnx\n";

static int usage(void)
{
    fputs(shapes_usage, stderr);
    return 2;
}

static void help(void)
{
    fputs(shapes_usage, stdout);
    fputs("\n"
          "Prints the element type, shape and bytes olla-onnx infers for every tensor of\n"
          "the main graph, as JSON on stdout.\n"
          "\n"
          "  --dim NAME=VALUE     bind a symbolic dimension (repeatable, each name once)\n"
          "  --input-shape NAME=D1,D2,...  set a graph input's shape; -1 or nothing for an\n"
          "                       unknown dimension (repeatable)\n"
          "  --no-value-info      ignore the model's value_info: what inference alone finds\n"
          "  --strict-shapes      a declared type that disagrees with inference is an error\n"
          "  -h, --help\n",
          stdout);
}

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

int olla_cmd_shapes(int argc, char **argv)
{
    const char *in = NULL;
    olla_dim_binding *dims = NULL;
    olla_input_shape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    int n_dims = 0, n_shapes = 0, rc = 0;
    olla_shape_options opt = {0};
    olla_model *m = NULL;
    olla_shape_table *t = NULL;
    olla_error err = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dim") == 0 || strncmp(argv[i], "--dim=", 6) == 0) {
            const char *v = argv[i][5] == '=' ? argv[i] + 6 : i + 1 < argc ? argv[++i] : NULL;
            if (!olla_cli_add_dim("olla-onnx shapes", v, &dims, &n_dims)) {
                rc = 2;
                goto out;
            }
        } else if (strcmp(argv[i], "--input-shape") == 0) {
            char msg[512];
            if (!shapes || i + 1 >= argc ||
                !olla_cli_parse_input_shape(argv[++i], &shapes[n_shapes], msg, sizeof msg)) {
                fprintf(stderr, "olla-onnx shapes: %s\n",
                        !shapes ? "out of memory" : i < argc ? msg : "--input-shape needs NAME=D1,D2,...");
                rc = shapes ? 2 : 3;
                goto out;
            }
            n_shapes++;
        } else if (strcmp(argv[i], "--strict-shapes") == 0) {
            opt.strict = 1;
        } else if (strcmp(argv[i], "--no-value-info") == 0) {
            opt.ignore_value_info = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help();
            goto out;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "olla-onnx shapes: unknown option '%s'\n", argv[i]);
            rc = usage();
            goto out;
        } else if (!in) {
            in = argv[i];
        } else {
            fprintf(stderr, "olla-onnx shapes: more than one model given ('%s')\n", argv[i]);
            rc = usage();
            goto out;
        }
    }
    if (!in) {
        rc = usage();
        goto out;
    }
    opt.dims = dims;
    opt.n_dims = n_dims;
    opt.input_shapes = shapes;
    opt.n_input_shapes = n_shapes;
    if (olla_model_load(in, &m, &err) != OLLA_OK || olla_model_check_dim_names(m, dims, n_dims, &err) != OLLA_OK ||
        olla_infer_shapes(m->proto, &opt, &t, &err) != OLLA_OK) {
        fprintf(stderr, "olla-onnx shapes: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
        goto out;
    }
    char advice[1024];
    advice[0] = '\0';
    if (strlen(in) + 2 + 256 <= sizeof advice) /* the room the main command's message leaves it */
        size_advice(t, advice, sizeof advice - strlen(in) - 2);
    json_object *doc = to_json(t, advice);
    if (!doc) {
        fprintf(stderr, "olla-onnx shapes: out of memory writing JSON\n");
        rc = 3;
        goto out;
    }
    const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!text || fputs(text, stdout) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "olla-onnx shapes: cannot write the JSON to stdout\n");
        rc = 3;
    }
    json_object_put(doc);
    if (advice[0])
        fprintf(stderr, "olla-onnx shapes: %s: %s\n", in, advice);
out:
    olla_shape_table_free(t);
    olla_model_free(m);
    for (int k = 0; k < n_dims; k++)
        free((char *)dims[k].name);
    free(dims);
    for (int k = 0; shapes && k < n_shapes; k++) {
        free((char *)shapes[k].name);
        free((int64_t *)shapes[k].dims);
    }
    free(shapes);
    return rc;
}
