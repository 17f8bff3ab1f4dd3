/* olla-onnx [options] in.onnx out.onnx: plan a model and write it back.
 *
 * Every argument is checked before the model is loaded (output folders
 * included), the --dim names right after loading, before any planning; and
 * the outputs are written whole or not at all: when one of them fails, the
 * ones already written are removed again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "olla.h"
#include "util/olla_line.h"

static void usage(FILE *f)
{
    fputs("usage: olla-onnx [options] in.onnx out.onnx\n"
          "       olla-onnx check [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...] [--strict-shapes]\n"
          "                       model.onnx\n"
          "       olla-onnx shapes [--dim NAME=VALUE ...] [--input-shape NAME=D1,D2,...] [--no-value-info]\n"
          "                       [--strict-shapes] model.onnx\n"
          "       olla-onnx place in.csv out.csv [--capacity BYTES] [--time-limit SECONDS]\n"
          "                       [--work-limit UNITS] [--align BYTES] [--online] [-v]\n"
          "       olla-onnx batch IN_DIR OUT_DIR [-j N] [--report FILE.jsonl] [--force] [options]\n"
          "(each sub-command has its own --help)\n"
          "\n"
          "Reorders the nodes of an ONNX model to minimise the peak of live tensor bytes,\n"
          "gives every planned tensor an offset in one arena, and writes the model with\n"
          "the plan in its metadata (olla.plan).\n"
          "\n"
          "options:\n"
          "  --dim NAME=VALUE     bind a symbolic dimension of the model (repeatable,\n"
          "                       each name once)\n"
          "  --input-shape NAME=D1,D2,...\n"
          "                       set or override a graph input's shape (repeatable;\n"
          "                       -1 or an empty dimension is unknown)\n"
          "  --time-limit SECONDS time for ordering and placement (default 30, or\n"
          "                       $OLLA_TIME_LIMIT)\n"
          "  --align BYTES        arena alignment, a power of two (default 64)\n"
          "  --keep-order         keep the input node order; only place tensors\n"
          "  --memory-limit SIZE  the written model's peak must be at most SIZE: bytes,\n"
          "                       with K, M, G (powers of 1000) or Ki, Mi, Gi (of 1024),\n"
          "                       or P% of the peak planned without a limit; activations\n"
          "                       are recomputed (their producers copied into the graph)\n"
          "                       at the least extra compute found\n"
          "  --runtime NAME       who runs the written model: ort (default: ONNX Runtime,\n"
          "                       which runs its own depth-first order; the listing is\n"
          "                       chosen so that it runs the plan), ort-priority (its\n"
          "                       PRIORITY_BASED order), listed (a runtime that follows\n"
          "                       the file)\n"
          "  --sharing MODE       runtime (default): views share their input's buffer and\n"
          "                       kernels that allow it write in place, as ONNX Runtime's\n"
          "                       CPU kernels declare; none: every tensor its own buffer\n"
          "  --joint              also solve order and addresses in one ILP, for graphs of\n"
          "                       at most 40 nodes whose ILP has at most 20,000 columns and\n"
          "                       whose arena is above the lower bound; kept when smaller\n"
          "  --strict-shapes      a type the model declares that disagrees with the\n"
          "                       inferred one is an error (by default the declared\n"
          "                       one is used, with a warning)\n"
          "  --allow-unknown-sizes  leave tensors of unknown size out of the plan\n"
          "                       (by default an unknown size is an error)\n"
          "  --report FILE.json   write the report as JSON\n"
          "  --svg FILE.svg       draw live bytes over the steps and the arena layout\n"
          "  --lifetimes FILE.csv write the planned tensors' lifetimes and offsets in\n"
          "                       minimalloc's CSV format (id,lower,upper,size,offset;\n"
          "                       buffers of no bytes have no row)\n"
          "  -q, --quiet          no summary, no progress\n"
          "  -v, --verbose        more detail\n"
          "  -h, --help, --version\n"
          "\n"
          "The summary compares the plan with the input order served by an online\n"
          "best-fit caching allocator (what PyTorch's and ONNX Runtime's arenas do).\n"
          "exit codes: 0 ok, 1 bad input, 2 usage (bad arguments, unwritable outputs),\n"
          "3 internal error\n",
          f);
}

typedef struct {
    const char *in, *out, *report, *svg, *lifetimes;
    olla_cli_plan_opts po;
} convert_args;

/* A flag with a file name after it; -1 when its value is missing. */
static int file_flag(const char *flag, int argc, char **argv, int *i, const char **dest)
{
    if (strcmp(argv[*i], flag) != 0)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "olla-onnx: %s needs a file name\n", flag);
        return -1;
    }
    *dest = argv[++*i];
    return 1;
}

/* -1: go on; else the exit code (0 after --help and --version). */
static int parse_args(convert_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int r = olla_cli_plan_option(&a->po, argc, argv, &i);
        if (r == 0)
            r = file_flag("--report", argc, argv, &i, &a->report);
        if (r == 0)
            r = file_flag("--svg", argc, argv, &i, &a->svg);
        if (r == 0)
            r = file_flag("--lifetimes", argc, argv, &i, &a->lifetimes);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(s, "--version") == 0) {
            printf("olla-onnx %s\n", OLLA_VERSION_STRING);
            return 0;
        } else if (s[0] == '-' && s[1] != '\0') {
            fprintf(stderr, "olla-onnx: unknown option '%s' (see olla-onnx --help)\n", s);
            return 2;
        } else if (!a->in) {
            a->in = s;
        } else if (!a->out) {
            a->out = s;
        } else {
            fprintf(stderr, "olla-onnx: too many arguments ('%s'); expected in.onnx out.onnx\n", s);
            return 2;
        }
    }
    if (!a->in || !a->out) {
        fprintf(stderr, "usage: olla-onnx [options] in.onnx out.onnx (see olla-onnx --help)\n");
        return 2;
    }
    if (!olla_cli_plan_opts_env(&a->po, "olla-onnx"))
        return 2;
    olla_cli_output outs[] = {
        {"the output model", a->out}, {"--report", a->report}, {"--svg", a->svg}, {"--lifetimes", a->lifetimes}};
    return olla_cli_check_outputs("olla-onnx", a->in, outs, 4) ? -1 : 2;
}

static void print_warnings(const olla_report *rep, int verbosity)
{
    /* the ones the bindings cause come first and are all shown */
    for (int i = 0; i < rep->n_warnings && (i < 5 || i < rep->n_binding_warnings || verbosity > 1); i++)
        fprintf(stderr, "olla-onnx: warning: %s\n", rep->warnings[i]);
    int shown = rep->n_binding_warnings > 5 ? rep->n_binding_warnings : 5;
    if (rep->n_warnings > shown && verbosity < 2)
        fprintf(stderr, "olla-onnx: warning: %d more shape warnings (see -v)\n", rep->n_warnings - shown);
    for (int i = 0; i < rep->n_unknown && i < 5; i++)
        fprintf(stderr, "olla-onnx: warning: size of '%s' unknown (%s); left out of the plan\n", rep->unknown_names[i],
                rep->unknown_reasons[i]);
    if (rep->n_unknown > 5)
        fprintf(stderr, "olla-onnx: warning: %d more tensors of unknown size left out of the plan\n",
                rep->n_unknown - 5);
}

/* The headline: the saving in what the runtime holds (report saving_*). */
static void print_saving(const olla_report *rep)
{
    char from[32], to[32];
    olla_cli_human_bytes(rep->saving_input_bytes, from, sizeof from);
    olla_cli_human_bytes(rep->saving_planned_bytes, to, sizeof to);
    const char *basis = rep->saving_basis ? rep->saving_basis : "";
    char saving[64]; /* "none (... more)": within the slack the runtime's search allows (README) */
    olla_human_headline(rep->saving_input_bytes, rep->saving_planned_bytes, saving, sizeof saving);
    if (strcmp(basis, "ort_allocated") == 0)
        fprintf(stderr, "  saving: %s of what ONNX Runtime allocates with its arena off (%s for the input, %s for the written "
                        "model)\n", saving, from, to);
    else if (strcmp(basis, "executed_peak") == 0)
        fprintf(stderr, "  saving: %s of the live bytes at the peak of what %s runs (%s for the input, %s for "
                        "the written model)\n", saving, rep->runtime, from, to);
    else
        fprintf(stderr, "  saving: %s of what the runtime holds (%s at the input order's peak with sharing, %s "
                        "in the plan's arena)\n", saving, from, to);
}

/* A saving shows under a setting when the written model holds at least
 * this much less than the input, on the first run and over three runs. */
#define ORT_SAVING_SHOWS 0.01

static const char *const ORT_SETTING_NAMES[OLLA_ORT_N_SETTINGS] = {
    [OLLA_ORT_ARENA_OFF] = "arena off, memory pattern on",
    [OLLA_ORT_ARENA_OFF_NO_PATTERN] = "arena off, memory pattern off",
    [OLLA_ORT_DEFAULTS] = "ORT's defaults (arena on, memory pattern on)",
    [OLLA_ORT_ARENA_NO_PATTERN] = "arena on, memory pattern off",
};

/* At least ORT_SAVING_SHOWS less on the first run and over three runs (a
 * model ORT holds nothing for saves nothing). */
static int ort_saving_shows(const olla_ort_setting_figures *f)
{
    return f->first_run_bytes >= 0 && f->steady_bytes >= 0 && f->input_first_run_bytes > 0 &&
           f->input_steady_bytes > 0 &&
           f->first_run_bytes <= (1.0 - ORT_SAVING_SHOWS) * (double)f->input_first_run_bytes &&
           f->steady_bytes <= (1.0 - ORT_SAVING_SHOWS) * (double)f->input_steady_bytes;
}

/* What ONNX Runtime for Node holds under each of its memory settings (the
 * model of its planner, passes/runtime/ort_memory.c), and
 * the settings under which the written model's saving shows. */
static void print_ort(const olla_report *rep, const char *plan_arena)
{
    if (rep->ort_allocated_bytes < 0) {
        fprintf(stderr, "  ONNX Runtime: not modelled (%s); a runtime that follows the plan: %s\n",
                rep->ort_model_note[0] ? rep->ort_model_note : "unknown reason", plan_arena);
        return;
    }
    fprintf(stderr, "  ONNX Runtime for Node holds, by the model of its planner (CPU, graph optimizations off, blocks of "
                    "4 KiB and more; input -> written; first run, then the most over three runs):\n");
    char shows[256] = "";
    for (int k = 0; k < OLLA_ORT_N_SETTINGS; k++) {
        const olla_ort_setting_figures *f = &rep->ort_settings[k];
        char a[32], b[32], c[32], d[32], first[48], steady[48];
        olla_cli_human_bytes(f->input_first_run_bytes, a, sizeof a);
        olla_cli_human_bytes(f->first_run_bytes, b, sizeof b);
        olla_cli_human_bytes(f->input_steady_bytes, c, sizeof c);
        olla_cli_human_bytes(f->steady_bytes, d, sizeof d);
        olla_human_change(f->input_first_run_bytes, f->first_run_bytes, first, sizeof first);
        olla_human_change(f->input_steady_bytes, f->steady_bytes, steady, sizeof steady);
        fprintf(stderr, "    %s: %s -> %s (%s); %s -> %s (%s)\n", ORT_SETTING_NAMES[k], a, b, first, c, d, steady);
        if (ort_saving_shows(f)) {
            size_t len = strlen(shows);
            snprintf(shows + len, sizeof shows - len, "%s%s", len ? "; " : "", ORT_SETTING_NAMES[k]);
        }
    }
    if (shows[0])
        fprintf(stderr, "  the written model's saving shows in ONNX Runtime with: %s (enableCpuMemArena, "
                        "enableMemPattern); a runtime that follows the plan: %s\n", shows, plan_arena);
    else
        fprintf(stderr, "  the written model saves nothing in ONNX Runtime under any of these settings; a runtime "
                        "that follows the plan: %s\n", plan_arena);
}

/* The memory limit: what it cost, or that it cost nothing. */
static void print_limit(const olla_report *rep)
{
    char lim[32], p0[32], peak[32];
    olla_cli_human_bytes(rep->memory_limit_bytes, lim, sizeof lim);
    olla_cli_human_bytes(rep->no_limit_peak_bytes, p0, sizeof p0);
    olla_cli_human_bytes(rep->peak_bytes, peak, sizeof peak);
    if (rep->recomputed_nodes == 0) {
        fprintf(stderr, "  memory limit %s: the plan peaks at %s without recomputing anything; nothing recomputed\n",
                lim, peak);
        return;
    }
    char gap[64] = "";
    if (strcmp(rep->recompute_status, "optimal") != 0 && rep->recompute_flops_bound > 0)
        snprintf(gap, sizeof gap, ", at most %.1f%% above the least possible",
                 olla_cli_pct(rep->recompute_extra_flops - rep->recompute_flops_bound, rep->recompute_flops_bound));
    fprintf(stderr,
            "  memory limit %s: peak %s instead of %s by recomputing %d %s (%d %s added), %.1f%% more compute "
            "(%lld FLOPs; %s%s)\n",
            lim, peak, p0, rep->recomputed_tensors, olla_cli_plural(rep->recomputed_tensors, "tensor", "tensors"),
            rep->recomputed_nodes, olla_cli_plural(rep->recomputed_nodes, "node", "nodes"),
            100.0 * rep->recompute_extra_fraction, (long long)rep->recompute_extra_flops, rep->recompute_status, gap);
}

static void print_summary(const char *in, const olla_report *rep)
{
    char plain[32], shared[32], online[32], planned[32], arena[32], ran[32], best[32];
    int listed = strcmp(rep->runtime, "listed") == 0;
    olla_cli_human_bytes(rep->input_order_peak_bytes, plain, sizeof plain);
    olla_cli_human_bytes(rep->input_order_shared_peak_bytes, shared, sizeof shared);
    olla_cli_human_bytes(rep->input_order_online_arena_bytes, online, sizeof online);
    olla_cli_human_bytes(rep->peak_bytes, planned, sizeof planned);
    olla_cli_human_bytes(rep->arena_bytes, arena, sizeof arena);
    olla_cli_human_bytes(rep->input_executed_peak_bytes, ran, sizeof ran);
    olla_cli_human_bytes(rep->unconstrained_peak_bytes, best, sizeof best);
    fprintf(stderr, "%s: %d %s, %d %s (%d planned; sharing: %s, %d %s, %d in place; runtime: %s)\n", in, rep->nodes,
            olla_cli_plural(rep->nodes, "node", "nodes"), rep->tensors,
            olla_cli_plural(rep->tensors, "tensor", "tensors"), rep->planned_tensors, rep->sharing, rep->views,
            olla_cli_plural(rep->views, "view", "views"), rep->inplace, rep->runtime);
    if (rep->n_binding_warnings > 0)
        fprintf(stderr, "  the bindings given cause %d warning%s (above): the plan holds the sizes they give\n",
                rep->n_binding_warnings, rep->n_binding_warnings == 1 ? "" : "s");
    fprintf(stderr, "  input order with an online best-fit allocator: %s (%.1f%% fragmentation)\n", online,
            100.0 * rep->input_order_fragmentation);
    char as_run[96] = "";
    if (!listed)
        snprintf(as_run, sizeof as_run, ", %s as %s runs it", ran, rep->runtime);
    fprintf(stderr, "  input-order peak: %s, %s with the runtime's sharing%s; planned peak: %s; arena: %s\n", plain,
            shared, as_run, planned, arena);
    if (!listed)
        fprintf(stderr, "  %s runs the written model in the planned order (best order found: %s, %.2f%% below; "
                        "listing: %s)\n",
                rep->runtime, best, olla_cli_pct(rep->peak_bytes - rep->unconstrained_peak_bytes, rep->peak_bytes),
                rep->runtime_search);
    int held_setting = olla_report_held_more(rep);
    if (held_setting >= 0) {
        char in_b[32], wr_b[32], by[48];
        olla_cli_human_bytes(rep->held_more_input_bytes, in_b, sizeof in_b);
        olla_cli_human_bytes(rep->held_more_bytes, wr_b, sizeof wr_b);
        olla_human_change(rep->held_more_input_bytes, rep->held_more_bytes, by, sizeof by);
        fprintf(stderr, "  %s: the best listing found would make ONNX Runtime hold %s, not %s (%s), with %s, %s\n",
                strcmp(rep->runtime_search, "held more") == 0
                    ? "the input's listing is written"
                    : "the listing was searched again refusing what the arena would hold more for",
                wr_b, in_b, by, ORT_SETTING_NAMES[held_setting],
                rep->held_more_steady ? "the most over three runs" : "on the first run");
    }
    if (!listed)
        print_ort(rep, arena);
    print_saving(rep);
    fprintf(stderr,
            "  also %.1f%% against the online allocator, %.1f%% against the input-order peak%s, %.1f%% "
            "without sharing; %.2f s (order: %s, placement: %s)\n",
            olla_cli_pct(rep->input_order_online_arena_bytes - rep->arena_bytes, rep->input_order_online_arena_bytes),
            olla_cli_pct(rep->input_executed_peak_bytes - rep->peak_bytes, rep->input_executed_peak_bytes),
            listed ? " with sharing" : " as the runtime runs it",
            olla_cli_pct(rep->input_order_peak_bytes - rep->arena_bytes, rep->input_order_peak_bytes),
            rep->total_seconds, rep->schedule_status, rep->placement_status);
    if (rep->memory_limit_bytes >= 0)
        print_limit(rep);
}

/* Loads, plans and writes every output; on a failure after some output was
 * written, removes what was written. */
static olla_status run(const convert_args *a, olla_options *opt, olla_error *err)
{
    olla_cli_progress prog;
    olla_cli_progress_start(&prog, opt, a->in);
    olla_model *model = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    olla_status st = olla_model_load(a->in, &model, err);
    if (st == OLLA_OK)
        st = olla_model_check_dim_names(model, opt->dims, opt->n_dims, err);
    if (st == OLLA_OK)
        st = olla_optimize(model, opt, &plan, &rep, err);
    int wrote = 0;
    if (st == OLLA_OK && (st = olla_write_model(model, plan, a->out, err)) == OLLA_OK)
        wrote = 1;
    if (st == OLLA_OK && a->report)
        st = olla_report_write_json(&rep, a->report, err);
    if (st == OLLA_OK && a->svg)
        st = olla_plan_write_svg(plan, a->in, a->svg, err);
    if (st == OLLA_OK && a->lifetimes)
        st = olla_plan_write_lifetimes(plan, a->lifetimes, err);
    if (st != OLLA_OK && wrote)
        olla_write_abandon(); /* all of the outputs or none */
    olla_cli_progress_end(&prog);
    if (st == OLLA_OK && opt->verbosity > 0) {
        print_warnings(&rep, opt->verbosity);
        print_summary(a->in, &rep);
    }
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(model);
    return st;
}

int olla_cmd_convert(int argc, char **argv)
{
    convert_args a;
    memset(&a, 0, sizeof a);
    olla_cli_plan_opts_init(&a.po);
    int rc = parse_args(&a, argc, argv);
    if (rc < 0) {
        olla_options opt = a.po.opt;
        olla_error err = {0};
        rc = 0;
        if (run(&a, &opt, &err) != OLLA_OK) {
            fprintf(stderr, "olla-onnx: %s\n", err.message);
            rc = err.code ? (int)err.code : 3;
        }
    }
    olla_cli_plan_opts_free(&a.po);
    return rc;
}
