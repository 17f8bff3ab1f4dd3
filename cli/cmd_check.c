/* olla-onnx check model.onnx: verify a written plan on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "olla.h"

int olla_cmd_check(int argc, char **argv)
{
    olla_options opt;
    olla_options_init(&opt);
    olla_dim_binding *dims = calloc((size_t)argc + 1, sizeof *dims);
    const char *path = NULL;
    int n_dims = 0, rc = 0;
    if (!dims)
        return 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc) {
            if (!olla_cli_parse_dim(argv[++i], &dims[n_dims])) {
                fprintf(stderr, "olla-onnx check: --dim needs NAME=VALUE with a non-negative integer VALUE\n");
                rc = 2;
                goto out;
            }
            n_dims++;
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: olla-onnx check [--dim NAME=VALUE ...] model.onnx\n");
            rc = 2;
            goto out;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: olla-onnx check [--dim NAME=VALUE ...] model.onnx\n");
        rc = 2;
        goto out;
    }
    opt.dims = dims;
    opt.n_dims = n_dims;
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load(path, &m, &err) == OLLA_OK && olla_check_model(m, &opt, &err) == OLLA_OK) {
        printf("%s: plan ok\n", path);
    } else {
        fprintf(stderr, "olla-onnx check: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
    }
    olla_model_free(m);
out:
    for (int i = 0; i < n_dims; i++)
        free((char *)dims[i].name);
    free(dims);
    return rc;
}
