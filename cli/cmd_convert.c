/* olla-onnx [options] in.onnx out.onnx: plan a model and write it back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "olla.h"

static void usage(FILE *f)
{
    fputs("usage: olla-onnx [options] in.onnx out.onnx\n"
          "       olla-onnx check [--dim NAME=VALUE ...] model.onnx\n"
          "       olla-onnx shapes [--dim NAME=VALUE ...] model.onnx\n"
          "       olla-onnx place in.csv out.csv [--capacity BYTES]\n"
          "\n"
          "Reorders the nodes of an ONNX model to minimise the peak of live tensor bytes,\n"
          "gives every planned tensor an offset in one arena, and writes the model with\n"
          "the plan in its metadata (olla.plan).\n"
          "\n"
          "options:\n"
          "  --dim NAME=VALUE     bind a symbolic dimension (repeatable)\n"
          "  --time-limit SECONDS time for ordering and placement (default 60)\n"
          "  --align BYTES        arena alignment (default 64)\n"
          "  --keep-order         keep the input node order; only place tensors\n"
          "  --report FILE.json   write the report as JSON\n"
          "  -q, --quiet          no summary\n"
          "  -v, --verbose        more detail\n"
          "  --help, --version\n"
          "\n"
          "exit codes: 0 ok, 1 bad input, 2 usage, 3 internal error\n",
          f);
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static void human(int64_t b, char *buf, size_t n)
{
    if (b >= 10LL * 1024 * 1024)
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else if (b >= 10LL * 1024)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, n, "%lld B", (long long)b);
}

int olla_cli_parse_dim(const char *arg, olla_dim_binding *out)
{
    const char *eq = strchr(arg, '=');
    long long v;
    if (!eq || eq == arg || !olla_cli_parse_i64(eq + 1, &v) || v < 0)
        return 0;
    out->name = strndup(arg, (size_t)(eq - arg));
    out->value = v;
    return out->name != NULL;
}

int olla_cmd_convert(int argc, char **argv)
{
    olla_options opt;
    olla_options_init(&opt);
    const char *in = NULL, *out = NULL, *report_path = NULL;
    olla_dim_binding *dims = calloc((size_t)argc + 1, sizeof *dims);
    int n_dims = 0, rc = 0;
    if (!dims)
        return 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            goto out;
        } else if (strcmp(a, "--version") == 0) {
            printf("olla-onnx %s\n", OLLA_VERSION_STRING);
            goto out;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            opt.verbosity = 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            opt.verbosity = 2;
        } else if (strcmp(a, "--keep-order") == 0) {
            opt.keep_order = 1;
        } else if (strcmp(a, "--dim") == 0) {
            if (!val || !olla_cli_parse_dim(val, &dims[n_dims])) {
                fprintf(stderr, "olla-onnx: --dim needs NAME=VALUE with a non-negative integer VALUE\n");
                rc = 2;
                goto out;
            }
            n_dims++;
            i++;
        } else if (strcmp(a, "--time-limit") == 0) {
            if (!val || !olla_cli_parse_double(val, &opt.time_limit) || opt.time_limit <= 0) {
                fprintf(stderr, "olla-onnx: --time-limit needs a positive number of seconds\n");
                rc = 2;
                goto out;
            }
            i++;
        } else if (strcmp(a, "--align") == 0) {
            long long v;
            if (!val || !olla_cli_parse_i64(val, &v) || v < 1 || v > (1LL << 30)) {
                fprintf(stderr, "olla-onnx: --align needs a number of bytes from 1 to 1073741824\n");
                rc = 2;
                goto out;
            }
            opt.alignment = v;
            i++;
        } else if (strcmp(a, "--report") == 0) {
            if (!val) {
                fprintf(stderr, "olla-onnx: --report needs a file name\n");
                rc = 2;
                goto out;
            }
            report_path = val;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "olla-onnx: unknown option '%s' (see olla-onnx --help)\n", a);
            rc = 2;
            goto out;
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "olla-onnx: too many arguments ('%s'); expected in.onnx out.onnx\n", a);
            rc = 2;
            goto out;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "usage: olla-onnx [options] in.onnx out.onnx (see olla-onnx --help)\n");
        rc = 2;
        goto out;
    }
    opt.dims = dims;
    opt.n_dims = n_dims;

    olla_error err = {0};
    olla_model *model = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    if (olla_model_load(in, &model, &err) == OLLA_OK && olla_optimize(model, &opt, &plan, &rep, &err) == OLLA_OK &&
        olla_write_model(model, plan, out, &err) == OLLA_OK &&
        (!report_path || olla_report_write_json(&rep, report_path, &err) == OLLA_OK)) {
        if (opt.verbosity > 0) {
            char a[32], b[32], c[32];
            human(rep.input_order_peak_bytes, a, sizeof a);
            human(rep.peak_bytes, b, sizeof b);
            human(rep.arena_bytes, c, sizeof c);
            for (int i = 0; i < rep.n_unknown && i < 5; i++)
                fprintf(stderr, "olla-onnx: warning: size of '%s' unknown (%s); left out of the plan\n",
                        rep.unknown_names[i], rep.unknown_reasons[i]);
            if (rep.n_unknown > 5)
                fprintf(stderr, "olla-onnx: warning: %d more tensors of unknown size left out of the plan\n",
                        rep.n_unknown - 5);
            fprintf(stderr,
                    "%s: %d nodes, %d tensors (%d planned); input-order peak %s, planned peak %s, arena %s; "
                    "saving %.1f%%; %.2f s (order: %s, placement: %s)\n",
                    in, rep.nodes, rep.tensors, rep.planned_tensors, a, b, c,
                    pct(rep.input_order_peak_bytes - rep.arena_bytes, rep.input_order_peak_bytes), rep.total_seconds,
                    rep.schedule_status, rep.placement_status);
        }
    } else {
        fprintf(stderr, "olla-onnx: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
    }
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(model);
out:
    for (int i = 0; i < n_dims; i++)
        free((char *)dims[i].name);
    free(dims);
    return rc;
}
