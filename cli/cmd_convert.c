/* olla-onnx [options] in.onnx out.onnx: plan a model and write it back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "olla.h"

static void usage(FILE *f)
{
    fputs("usage: olla-onnx [options] in.onnx out.onnx\n"
          "       olla-onnx check [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...] [--strict-shapes] model.onnx\n"
          "       olla-onnx shapes [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...] [--strict-shapes] model.onnx\n"
          "       olla-onnx place in.csv out.csv [--capacity BYTES]\n"
          "       olla-onnx batch IN_DIR OUT_DIR [-j N] [--report FILE.jsonl] [options]\n"
          "\n"
          "Reorders the nodes of an ONNX model to minimise the peak of live tensor bytes,\n"
          "gives every planned tensor an offset in one arena, and writes the model with\n"
          "the plan in its metadata (olla.plan).\n"
          "\n"
          "options:\n"
          "  --dim NAME=VALUE     bind a symbolic dimension (repeatable)\n"
          "  --input-shape NAME=D1,D2,...\n"
          "                       set or override a graph input's shape (repeatable;\n"
          "                       -1 or an empty dimension is unknown)\n"
          "  --time-limit SECONDS time for ordering and placement (default 30)\n"
          "  --align BYTES        arena alignment (default 64)\n"
          "  --keep-order         keep the input node order; only place tensors\n"
          "  --joint              small graphs: also solve order and addresses in one\n"
          "                       ILP, kept when its arena is smaller\n"
          "  --strict-shapes      a type the model declares that disagrees with the\n"
          "                       inferred one is an error (by default the declared\n"
          "                       one is used, with a warning)\n"
          "  --allow-unknown-sizes  leave tensors of unknown size out of the plan\n"
          "                       (by default an unknown size is an error)\n"
          "  --report FILE.json   write the report as JSON\n"
          "  --svg FILE.svg       draw live bytes over the steps and the arena layout\n"
          "  --lifetimes FILE.csv write the planned tensors' lifetimes and sizes in\n"
          "                       minimalloc's CSV format (id,lower,upper,size,offset)\n"
          "  -q, --quiet          no summary\n"
          "  -v, --verbose        more detail\n"
          "  --help, --version\n"
          "\n"
          "exit codes: 0 ok, 1 bad input, 2 usage, 3 internal error\n",
          f);
}

int olla_cmd_convert(int argc, char **argv)
{
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    olla_options opt;
    const char *in = NULL, *out = NULL, *report_path = NULL, *svg_path = NULL, *lifetimes_path = NULL;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = olla_cli_plan_option(&po, argc, argv, &i);
        if (r < 0) {
            rc = 2;
            goto out;
        }
        if (r > 0)
            continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            goto out;
        } else if (strcmp(a, "--version") == 0) {
            printf("olla-onnx %s\n", OLLA_VERSION_STRING);
            goto out;
        } else if (strcmp(a, "--svg") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx: --svg needs a file name\n");
                rc = 2;
                goto out;
            }
            svg_path = argv[++i];
        } else if (strcmp(a, "--lifetimes") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx: --lifetimes needs a file name\n");
                rc = 2;
                goto out;
            }
            lifetimes_path = argv[++i];
        } else if (strcmp(a, "--report") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx: --report needs a file name\n");
                rc = 2;
                goto out;
            }
            report_path = argv[++i];
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
    opt = po.opt;

    olla_cli_progress prog;
    olla_cli_progress_start(&prog, &opt, in);
    olla_error err = {0};
    olla_model *model = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    if (olla_model_load(in, &model, &err) == OLLA_OK && olla_optimize(model, &opt, &plan, &rep, &err) == OLLA_OK &&
        olla_write_model(model, plan, out, &err) == OLLA_OK &&
        (!report_path || olla_report_write_json(&rep, report_path, &err) == OLLA_OK) &&
        (!svg_path || olla_plan_write_svg(plan, in, svg_path, &err) == OLLA_OK) &&
        (!lifetimes_path || olla_plan_write_lifetimes(plan, lifetimes_path, &err) == OLLA_OK)) {
        olla_cli_progress_end(&prog);
        if (opt.verbosity > 0) {
            char a[32], b[32], c[32];
            olla_cli_human_bytes(rep.input_order_peak_bytes, a, sizeof a);
            olla_cli_human_bytes(rep.peak_bytes, b, sizeof b);
            olla_cli_human_bytes(rep.arena_bytes, c, sizeof c);
            for (int i = 0; i < rep.n_warnings && (i < 5 || opt.verbosity > 1); i++)
                fprintf(stderr, "olla-onnx: warning: %s\n", rep.warnings[i]);
            if (rep.n_warnings > 5 && opt.verbosity < 2)
                fprintf(stderr, "olla-onnx: warning: %d more shape warnings (see -v)\n", rep.n_warnings - 5);
            for (int i = 0; i < rep.n_unknown && i < 5; i++)
                fprintf(stderr, "olla-onnx: warning: size of '%s' unknown (%s); left out of the plan\n",
                        rep.unknown_names[i], rep.unknown_reasons[i]);
            if (rep.n_unknown > 5)
                fprintf(stderr, "olla-onnx: warning: %d more tensors of unknown size left out of the plan\n",
                        rep.n_unknown - 5);
            char d[32];
            olla_cli_human_bytes(rep.input_order_online_arena_bytes, d, sizeof d);
            fprintf(stderr,
                    "%s: %d nodes, %d tensors (%d planned)\n"
                    "  today (input order, online allocator): %s (%.1f%% fragmentation)\n"
                    "  input-order peak: %s; planned peak: %s; arena: %s\n"
                    "  saving: %.1f%% against today, %.1f%% against the input-order peak; %.2f s (order: %s, "
                    "placement: %s)\n",
                    in, rep.nodes, rep.tensors, rep.planned_tensors, d, 100.0 * rep.input_order_fragmentation, a, b,
                    c, olla_cli_pct(rep.input_order_online_arena_bytes - rep.arena_bytes,
                                    rep.input_order_online_arena_bytes),
                    olla_cli_pct(rep.input_order_peak_bytes - rep.arena_bytes, rep.input_order_peak_bytes),
                    rep.total_seconds, rep.schedule_status, rep.placement_status);
        }
    } else {
        olla_cli_progress_end(&prog);
        fprintf(stderr, "olla-onnx: %s\n", err.message);
        rc = err.code ? (int)err.code : 3;
    }
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(model);
out:
    olla_cli_plan_opts_free(&po);
    return rc;
}
