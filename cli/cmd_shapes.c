/* olla-onnx shapes [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...]
 * [--no-value-info] [--strict-shapes] in.onnx: print the inferred type of
 * every tensor of the main graph as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"

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

int olla_cmd_shapes(int argc, char **argv)
{
    const char *in = NULL;
    olla_dim_binding *dims = NULL;
    olla_input_shape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    int n_dims = 0, n_shapes = 0, rc = 0, use_value_info = 1;
    olla_options opt;
    olla_options_init(&opt);
    olla_model *m = NULL;
    char *text = NULL;
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
            opt.strict_shapes = 1;
        } else if (strcmp(argv[i], "--no-value-info") == 0) {
            use_value_info = 0;
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
    if (olla_model_load(in, &m, &err) != OLLA_OK ||
        olla_model_shapes_json(m, &opt, use_value_info, &text, &err) != OLLA_OK) {
        fprintf(stderr, "olla-onnx shapes: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
        goto out;
    }
    if (fputs(text, stdout) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "olla-onnx shapes: cannot write the JSON to stdout\n");
        rc = 3;
    }
    json_object *doc = json_tokener_parse(text), *advice = NULL;
    if (doc && json_object_object_get_ex(doc, "advice", &advice) && json_object_is_type(advice, json_type_string))
        fprintf(stderr, "olla-onnx shapes: %s: %s\n", in, json_object_get_string(advice));
    json_object_put(doc);
out:
    free(text);
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
