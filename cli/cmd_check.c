/* olla-onnx check model.onnx: verify a written plan on its own. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char check_usage[] = "usage: olla-onnx check [--dim NAME=VALUE ...] model.onnx\n";

static void help(void)
{
    fputs(check_usage, stdout);
    fputs("\n"
          "Verifies the plan a model carries, without the planner: the nodes are in a\n"
          "topological order, every planned tensor is in the plan with its true size\n"
          "(rounded up to the alignment), no two tensors live at the same step overlap,\n"
          "and the arena holds every tensor. Prints 'plan ok' or the first problem.\n"
          "\n"
          "  --dim NAME=VALUE     bind a symbolic dimension, as when it was planned\n"
          "                       (repeatable, each name once)\n"
          "  -h, --help\n"
          "\n"
          "exit codes: 0 plan ok, 1 bad plan or model, 2 usage, 3 internal error\n",
          stdout);
}

int olla_cmd_check(int argc, char **argv)
{
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    const char *path = NULL;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help();
            goto out;
        }
        int r = strcmp(argv[i], "--dim") == 0 ? olla_cli_plan_option(&po, argc, argv, &i) : 0;
        if (r < 0) {
            rc = 2;
            goto out;
        }
        if (r > 0)
            continue;
        if (argv[i][0] == '-' || path) {
            if (argv[i][0] == '-')
                fprintf(stderr, "olla-onnx check: unknown option '%s'\n", argv[i]);
            fputs(check_usage, stderr);
            rc = 2;
            goto out;
        }
        path = argv[i];
    }
    if (!path) {
        fputs(check_usage, stderr);
        rc = 2;
        goto out;
    }
    olla_error err = {0};
    olla_model *m = NULL;
    if (olla_model_load(path, &m, &err) == OLLA_OK &&
        olla_model_check_dim_names(m, po.opt.dims, po.opt.n_dims, &err) == OLLA_OK &&
        olla_check_model(m, &po.opt, &err) == OLLA_OK) {
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
