/* olla-onnx check model.onnx: verify a written plan on its own. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define CHECK_USAGE \
    "usage: olla-onnx check [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,... ...] [--strict-shapes] model.onnx\n"

/* The planning options that also shape a check. */
static int is_check_option(const char *a)
{
    return strcmp(a, "--dim") == 0 || strcmp(a, "--strict-shapes") == 0 || strcmp(a, "--input-shape") == 0;
}

int olla_cmd_check(int argc, char **argv)
{
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    const char *path = NULL;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int r = is_check_option(argv[i]) ? olla_cli_plan_option(&po, argc, argv, &i) : 0;
        if (r < 0) {
            rc = 2;
            goto out;
        }
        if (r > 0)
            continue;
        if (argv[i][0] == '-' || path) {
            fprintf(stderr, CHECK_USAGE);
            rc = 2;
            goto out;
        }
        path = argv[i];
    }
    if (!path) {
        fprintf(stderr, CHECK_USAGE);
        rc = 2;
        goto out;
    }
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load(path, &m, &err) == OLLA_OK && olla_check_model(m, &po.opt, &err) == OLLA_OK) {
        printf("%s: plan ok\n", path);
    } else {
        fprintf(stderr, "olla-onnx check: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
    }
    olla_model_free(m);
out:
    olla_cli_plan_opts_free(&po);
    return rc;
}
