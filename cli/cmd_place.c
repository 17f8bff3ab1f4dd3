/* olla-onnx place in.csv out.csv [--capacity BYTES] [--time-limit SECONDS]
 * [--align BYTES]: places the buffers of a minimalloc CSV file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solver/olla_online_alloc.h"
#include "solver/olla_place.h"

static const char place_usage[] = "usage: olla-onnx place in.csv out.csv [--capacity BYTES] [--time-limit SECONDS]"
                                  " [--work-limit UNITS] [--align BYTES] [--online] [-v]\n";

static int usage(const char *why)
{
    fprintf(stderr, "olla-onnx place: %s; %s", why, place_usage);
    return OLLA_ERR_USAGE;
}

static void help(void)
{
    fputs(place_usage, stdout);
    fputs("\n"
          "Places buffers from any compiler in one arena. in.csv is minimalloc's CSV:\n"
          "a header id,lower,upper,size, and one buffer a line, live on [lower, upper).\n"
          "out.csv has the same rows and an offset column.\n"
          "\n"
          "  --capacity BYTES     find a placement within BYTES, or say that none exists\n"
          "                       (without it the arena is minimised)\n"
          "  --time-limit SECONDS time for the search (default 30; 0: no overall limit);\n"
          "                       a safety net: the searches stop after a work budget\n"
          "  --work-limit UNITS   the work budget (default: derived from the time limit);\n"
          "                       the same input and options give the same output on a\n"
          "                       quiet or a busy machine unless the time limit ends it\n"
          "  --align BYTES        offsets are multiples of it, a power of two (default 1)\n"
          "  --online             also report what an online best-fit caching allocator\n"
          "                       would reserve for the buffers in id order\n"
          "  -v, --verbose        the search's progress\n"
          "  -h, --help\n",
          stdout);
}

typedef struct {
    const char *in, *out;
    olla_place_options opt;
    int online;
    int verbose; /* -v given this many times: 1 the search's lines, 2 CBC's own log too */
} place_args;

/* A flag with a number after it: --capacity, --time-limit, --align. 0 when
 * a is none of them, -1 after printing why its value is wrong. */
static int value_flag(place_args *pa, const char *a, const char *v)
{
    long long x;
    if (strcmp(a, "--capacity") != 0 && strcmp(a, "--time-limit") != 0 && strcmp(a, "--align") != 0 &&
        strcmp(a, "--work-limit") != 0)
        return 0;
    if (!v) {
        fprintf(stderr, "olla-onnx place: %s needs a value\n", a);
        return -1;
    }
    if (strcmp(a, "--time-limit") == 0) {
        if (!olla_cli_parse_double(v, &pa->opt.time_limit) || pa->opt.time_limit < 0) {
            fprintf(stderr, "olla-onnx place: --time-limit \"%s\" is not a number of seconds >= 0\n", v);
            return -1;
        }
    } else if (strcmp(a, "--align") == 0) {
        if (!olla_cli_parse_alignment(v, &x)) {
            fprintf(stderr, "olla-onnx place: --align %s: needs a power of two from 1 to 1073741824 (bytes)\n", v);
            return -1;
        }
        pa->opt.alignment = x;
    } else if (!olla_cli_parse_i64(v, &x) || x < 1) {
        fprintf(stderr, "olla-onnx place: %s \"%s\" is not a positive integer\n", a, v);
        return -1;
    } else if (strcmp(a, "--work-limit") == 0) {
        pa->opt.work_limit = x;
    } else {
        pa->opt.capacity = x;
    }
    return 1;
}

/* -1: go on; else the exit code. */
static int parse_args(place_args *pa, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = value_flag(pa, a, i + 1 < argc ? argv[i + 1] : NULL);
        if (r < 0)
            return OLLA_ERR_USAGE;
        if (r > 0) {
            i++;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help();
            return 0;
        } else if (strcmp(a, "--online") == 0) {
            pa->online = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            pa->verbose++;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "olla-onnx place: unknown option '%s' (see olla-onnx place --help)\n", a);
            return OLLA_ERR_USAGE;
        } else if (!pa->in) {
            pa->in = a;
        } else if (!pa->out) {
            pa->out = a;
        } else {
            return usage("too many file names");
        }
    }
    if (!pa->in || !pa->out)
        return usage("needs an input and an output file");
    olla_cli_output outs[] = {{"the output", pa->out}};
    return olla_cli_check_outputs("olla-onnx place", pa->in, outs, 1) ? -1 : OLLA_ERR_USAGE;
}

int olla_cmd_place(int argc, char **argv)
{
    place_args pa = {NULL, NULL, {1, 30.0, 0, NULL, 0}, 0, 0};
    int rc = parse_args(&pa, argc, argv);
    if (rc >= 0)
        return rc;
    const char *in = pa.in, *out = pa.out;
    olla_place_options opt = pa.opt;
    int level = pa.verbose == 0 ? 0 : pa.verbose == 1 ? OLLA_LOG_DETAIL : OLLA_LOG_SOLVER_OUTPUT;
    olla_logger log = {olla_cli_log, NULL, level};
    opt.log = &log;
    int online = pa.online;

    olla_error err = {0};
    olla_place_table t;
    olla_status st = olla_place_csv_read(in, &t, &err);
    if (st != OLLA_OK) {
        fprintf(stderr, "olla-onnx place: %s\n", err.message);
        return st;
    }
    olla_place_result res;
    st = olla_place(t.bufs, t.n, &opt, &res, &err);
    if (st == OLLA_OK &&
        olla_place_validate(t.bufs, t.n, res.arena_bytes, opt.alignment, &err) != OLLA_OK)
        st = OLLA_ERR_INTERNAL; /* the solver produced an invalid plan: a bug */
    if (st != OLLA_OK) {
        fprintf(stderr, "olla-onnx place: %s: %s\n", in, err.message);
        olla_place_table_free(&t);
        return st;
    }
    int64_t live = olla_place_max_live(t.bufs, t.n, opt.alignment);
    double frag = res.arena_bytes > 0 ? 100.0 * (double)(res.arena_bytes - live) / (double)res.arena_bytes : 0.0;
    double gap =
        res.lower_bound > 0 ? 100.0 * (double)(res.arena_bytes - res.lower_bound) / (double)res.lower_bound : 0.0;
    fprintf(stderr,
            "place: %zu buffers, max live %lld bytes, arena %lld bytes, fragmentation %.3f%%,"
            " best heuristic %lld, %.3f%% above the lower bound %lld, stopped by %s,"
            " %lld work units, %s, %.3f s\n",
            t.n, (long long)live, (long long)res.arena_bytes, frag, (long long)res.heuristic_bytes, gap,
            (long long)res.lower_bound, olla_place_stop_name(res.stopped_by), res.work,
            olla_place_status_name(res.status), res.seconds);
    if (online) {
        int64_t reserved, in_use;
        if (olla_online_alloc_simulate(t.bufs, t.n, &reserved, &in_use, &err) != OLLA_OK) {
            fprintf(stderr, "olla-onnx place: %s: %s\n", in, err.message);
            olla_place_table_free(&t);
            return err.code;
        }
        fprintf(stderr,
                "online caching allocator: reserved %lld bytes (%.3f%% above max live), peak in use %lld bytes\n",
                (long long)reserved, live > 0 ? 100.0 * (double)(reserved - live) / (double)live : 0.0,
                (long long)in_use);
    }
    if (res.status == OLLA_PLACE_NO_FIT || res.status == OLLA_PLACE_NOT_FOUND) {
        if (res.status == OLLA_PLACE_NO_FIT)
            fprintf(stderr,
                    "olla-onnx place: %s: no placement fits in %lld bytes (proven: at least %lld needed); "
                    "raise --capacity\n",
                    in, (long long)opt.capacity, (long long)res.lower_bound);
        else
            fprintf(stderr,
                    "olla-onnx place: %s: no placement within %lld bytes found in %.1f s (best %lld; %s); "
                    "raise %s\n",
                    in, (long long)opt.capacity, res.seconds, (long long)res.arena_bytes,
                    res.stopped_by == OLLA_PLACE_STOPPED_BUDGET ? "the searches spent their work budget"
                    : res.stopped_by == OLLA_PLACE_STOPPED_TIME ? "the time limit ended them"
                                                                : "every search ended without one",
                    res.stopped_by == OLLA_PLACE_STOPPED_BUDGET ? "--work-limit or --capacity"
                    : res.stopped_by == OLLA_PLACE_STOPPED_TIME ? "--time-limit or --capacity"
                                                                : "--capacity");
        olla_place_table_free(&t);
        return OLLA_ERR_INPUT;
    }
    st = olla_place_csv_write(out, &t, &err);
    if (st != OLLA_OK)
        fprintf(stderr, "olla-onnx place: %s\n", err.message);
    olla_place_table_free(&t);
    return st;
}
