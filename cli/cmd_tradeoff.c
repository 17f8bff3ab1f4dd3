/* olla-onnx tradeoff [options] in.onnx [--svg curve.svg] [--csv curve.csv]:
 * the curve of peak memory against extra compute under recomputation, from
 * the plan made without a limit down to the smallest peak found, as a table
 * on stdout and optionally a plot and a CSV, so that a user can pick a
 * --memory-limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "olla.h"

#define DEFAULT_POINTS 11
#define MAX_POINTS 101

static const char tradeoff_usage[] =
    "usage: olla-onnx tradeoff [options] model.onnx [--svg FILE.svg] [--csv FILE.csv] [--points N]\n";

static int usage(void)
{
    fputs(tradeoff_usage, stderr);
    fputs("(see olla-onnx tradeoff --help)\n", stderr);
    return 2;
}

static void help(void)
{
    fputs(tradeoff_usage, stdout);
    fputs("\n"
          "Prints how the peak memory of the written model falls as more is recomputed:\n"
          "the plan made without a limit, then plans with recomputation under limits\n"
          "evenly spaced down to the smallest peak found, each with its extra compute\n"
          "(estimated FLOPs), so that you can pick a --memory-limit. The peaks are\n"
          "those of each plan's own order, in the memory model of --sharing.\n"
          "\n"
          "  --svg FILE.svg       plot the curve\n"
          "  --csv FILE.csv       write the points (limit_bytes,peak_bytes,extra_flops,\n"
          "                       extra_fraction,copies,recomputed_tensors,status)\n"
          "  --points N           limits to try, from 2 to 101 (default 11)\n"
          "  --dim NAME=VALUE, --input-shape NAME=D1,D2,..., --runtime NAME,\n"
          "  --sharing MODE, --align BYTES, --time-limit SECONDS, --strict-shapes,\n"
          "  --allow-unknown-sizes, -q, -v\n"
          "                       as for planning (olla-onnx --help)\n"
          "  -h, --help\n",
          stdout);
}

static void print_table(const char *in, const olla_tradeoff *t)
{
    char p0[32], small[32], bound[32];
    olla_cli_human_bytes(t->no_limit_peak_bytes, p0, sizeof p0);
    olla_cli_human_bytes(t->smallest_peak_bytes, small, sizeof small);
    olla_cli_human_bytes(t->peak_bound_bytes, bound, sizeof bound);
    printf("%s: peak %s without a limit; the smallest found with recomputation is %s; no plan peaks below %s\n", in,
           p0, small, bound);
    printf("%12s %10s %9s %12s %18s %7s %11s  %s\n", "limit", "peak", "of peak", "extra", "extra FLOPs", "copies",
           "recomputed", "status");
    for (int i = 0; i < t->n_points; i++) {
        const olla_tradeoff_point *p = &t->points[i];
        char lim[32], peak[32];
        olla_cli_human_bytes(p->limit_bytes, lim, sizeof lim);
        olla_cli_human_bytes(p->peak_bytes, peak, sizeof peak);
        printf("%12s %10s %8.1f%% %11.2f%% %18lld %7d %11d  %s\n", lim, peak,
               olla_cli_pct(p->peak_bytes, t->no_limit_peak_bytes), 100.0 * p->extra_fraction,
               (long long)p->extra_flops, p->copies, p->recomputed_tensors,
               p->copies == 0 ? "none" : p->optimal ? "optimal" : "feasible");
    }
}

int olla_cmd_tradeoff(int argc, char **argv)
{
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    const char *in = NULL, *svg = NULL, *csv = NULL;
    long long points = DEFAULT_POINTS;
    int rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        int r = olla_cli_plan_option(&po, argc, argv, &i);
        if (r < 0) {
            rc = 2;
        } else if (r > 0) {
            continue;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help();
            rc = 0;
        } else if (strcmp(a, "--svg") == 0 || strcmp(a, "--csv") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx tradeoff: %s needs a file name\n", a);
                rc = 2;
            } else if (a[2] == 's') {
                svg = argv[++i];
            } else {
                csv = argv[++i];
            }
        } else if (strcmp(a, "--points") == 0) {
            if (i + 1 >= argc || !olla_cli_parse_i64(argv[i + 1], &points) || points < 2 || points > MAX_POINTS) {
                fprintf(stderr, "olla-onnx tradeoff: --points needs a whole number from 2 to %d\n", MAX_POINTS);
                rc = 2;
            }
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "olla-onnx tradeoff: unknown option '%s' (see olla-onnx tradeoff --help)\n", a);
            rc = 2;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "olla-onnx tradeoff: too many arguments ('%s'); expected one model\n", a);
            rc = 2;
        }
    }
    if (rc < 0 && !in)
        rc = usage();
    if (rc < 0 && po.memory_limit_given) {
        fprintf(stderr, "olla-onnx tradeoff: --memory-limit is what the curve helps to choose; leave it out\n");
        rc = 2;
    }
    if (rc < 0 && po.opt.keep_order) {
        fprintf(stderr, "olla-onnx tradeoff: --keep-order fixes the order, and recomputation adds nodes to it\n");
        rc = 2;
    }
    olla_cli_output outs[] = {{"--svg", svg}, {"--csv", csv}};
    if (rc < 0 && (!olla_cli_plan_opts_env(&po, "olla-onnx tradeoff") ||
                   !olla_cli_check_outputs("olla-onnx tradeoff", in, outs, 2)))
        rc = 2;
    if (rc >= 0) {
        olla_cli_plan_opts_free(&po);
        return rc;
    }
    olla_options opt = po.opt;
    olla_error err = {0};
    olla_model *model = NULL;
    olla_tradeoff t;
    memset(&t, 0, sizeof t);
    olla_cli_progress prog;
    olla_cli_progress_start(&prog, &opt, in);
    olla_status st = olla_model_load(in, &model, &err);
    if (st == OLLA_OK)
        st = olla_model_check_dim_names(model, opt.dims, opt.n_dims, &err);
    if (st == OLLA_OK)
        st = olla_tradeoff_curve(model, &opt, (int)points, &t, &err);
    olla_cli_progress_end(&prog);
    int wrote = 0;
    if (st == OLLA_OK && svg && (st = olla_tradeoff_write_svg(&t, in, svg, &err)) == OLLA_OK)
        wrote = 1;
    if (st == OLLA_OK && csv)
        st = olla_tradeoff_write_csv(&t, csv, &err);
    if (st != OLLA_OK && wrote)
        olla_write_abandon();
    if (st == OLLA_OK)
        print_table(in, &t);
    else
        fprintf(stderr, "olla-onnx tradeoff: %s\n", err.message);
    olla_tradeoff_clear(&t);
    olla_model_free(model);
    olla_cli_plan_opts_free(&po);
    return st == OLLA_OK ? 0 : err.code ? (int)err.code : 3;
}
