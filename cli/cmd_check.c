/* olla-onnx check model.onnx: verify a written plan on its own. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "onnx/olla_model.h"

/* The planning options that also shape a check. */
static int is_check_option(const char *a)
{
    return strcmp(a, "--dim") == 0 || strcmp(a, "--strict-shapes") == 0 || strcmp(a, "--input-shape") == 0;
}

/* The plan's own olla.plan text, or NULL. */
static const char *plan_text(const olla_model *m)
{
    for (size_t i = 0; i < m->proto->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *kv = m->proto->metadata_props[i];
        if (kv->key && strcmp(kv->key, "olla.plan") == 0)
            return kv->value;
    }
    return NULL;
}

/* "x=1,3,-1" */
static void shape_text(const char *name, const int64_t *dims, int rank, char *buf, size_t size)
{
    int k = snprintf(buf, size, "%s=", name);
    for (int d = 0; d < rank && k > 0 && (size_t)k < size; d++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", d ? "," : "", (long long)dims[d]);
}

/* A --dim or --input-shape on the command line replaces the plan's recorded
 * binding of its name and keeps the others: say so for every value that
 * differs. */
static void note_overrides(const olla_model *m, const olla_cli_plan_opts *po)
{
    olla_runtime_plan *p = NULL;
    olla_error err = {0};
    const char *text = plan_text(m);
    if ((!po->n_dims && !po->n_shapes) || !text || olla_runtime_plan_parse(text, &p, &err) != OLLA_OK)
        return;
    for (int i = 0; i < po->n_dims; i++) {
        int64_t v = olla_runtime_plan_dim(p, po->dims[i].name);
        if (v == po->dims[i].value)
            continue;
        if (v >= 0)
            fprintf(stderr, "olla-onnx check: --dim %s=%lld replaces the plan's %s=%lld\n", po->dims[i].name,
                    (long long)po->dims[i].value, po->dims[i].name, (long long)v);
        else
            fprintf(stderr, "olla-onnx check: --dim %s=%lld binds a dimension the plan records no value for\n",
                    po->dims[i].name, (long long)po->dims[i].value);
    }
    for (int i = 0; i < po->n_shapes; i++) {
        const olla_input_shape *s = &po->shapes[i];
        char given[512], recorded[512] = "";
        shape_text(s->name, s->dims, s->rank, given, sizeof given);
        for (size_t k = 0; k < olla_runtime_plan_input_count(p); k++) {
            int rank = 0;
            const int64_t *dims = NULL;
            const char *name = olla_runtime_plan_input_at(p, k, &rank, &dims);
            if (name && strcmp(name, s->name) == 0)
                shape_text(name, dims, rank, recorded, sizeof recorded);
        }
        if (strcmp(given, recorded) == 0)
            continue;
        if (recorded[0])
            fprintf(stderr, "olla-onnx check: --input-shape %s replaces the plan's %s\n", given, recorded);
        else
            fprintf(stderr, "olla-onnx check: --input-shape %s binds an input the plan records no shape for\n", given);
    }
    olla_runtime_plan_free(p);
}

static const char check_usage[] =
    "usage: olla-onnx check [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,... ...] [--strict-shapes] model.onnx\n";

static void help(void)
{
    fputs(check_usage, stdout);
    fputs("\n"
          "Verifies the plan a model carries, without the planner: the nodes are in a\n"
          "topological order, every planned tensor is in the plan with its true size\n"
          "(rounded up to the alignment) and its declared size, every buffer share is\n"
          "one the sharing rules allow, no two buffers live at the same step overlap,\n"
          "and the arena holds every tensor. Prints 'plan ok' or the first problem.\n"
          "\n"
          "It binds the dimensions and input shapes the plan records; a --dim or an\n"
          "--input-shape replaces the recorded binding of its name (and says so), the\n"
          "others stay.\n"
          "\n"
          "  --dim NAME=VALUE     bind a symbolic dimension (repeatable, each name once)\n"
          "  --input-shape NAME=D1,D2,...  set a graph input's shape (repeatable)\n"
          "  --strict-shapes      a declared type that disagrees with inference is an error\n"
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
        int r = is_check_option(argv[i]) ? olla_cli_plan_option(&po, argc, argv, &i) : 0;
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
    olla_status st = olla_model_load(path, &m, &err);
    if (st == OLLA_OK)
        st = olla_model_check_dim_names(m, po.opt.dims, po.opt.n_dims, &err);
    if (st == OLLA_OK)
        st = olla_check_model(m, &po.opt, &err);
    if (m && st != OLLA_ERR_USAGE)
        note_overrides(m, &po);
    if (st == OLLA_OK) {
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
