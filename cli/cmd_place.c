/* olla-onnx place in.csv out.csv [--capacity BYTES] [--time-limit SECONDS]
 * [--work-limit UNITS] [--align BYTES]: places the buffers of a minimalloc
 * CSV file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solver/olla_online_alloc.h"
#include "solver/olla_place.h"

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "olla-onnx place: %s\n", why);
    fprintf(stderr,
            "usage: olla-onnx place in.csv out.csv [--capacity BYTES] [--time-limit SECONDS]"
            " [--work-limit UNITS] [--align BYTES] [--online] [--verbose]\n"
            "  in.csv has a header id,lower,upper,size; each buffer is live on [lower, upper).\n"
            "  Without --capacity the arena is minimized. The time limit defaults to 30 s.\n"
            "  The searches stop after a work budget (default: derived from the time limit),\n"
            "  so the result is the same on a quiet or a busy machine; the time limit is a\n"
            "  safety net. The summary says which of the two stopped the placer, if any.\n"
            "  --online also reports what a best-fit caching allocator would reserve.\n");
    return OLLA_ERR_USAGE;
}

int olla_cmd_place(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    olla_place_options opt = {1, 30.0, 0, 0, 0};
    int online = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(NULL);
            return 0;
        }
        if (strcmp(a, "--online") == 0) {
            online = 1;
            continue;
        }
        if (strcmp(a, "--verbose") == 0) {
            opt.verbosity++;
            continue;
        }
        if (strcmp(a, "--capacity") == 0 || strcmp(a, "--time-limit") == 0 ||
            strcmp(a, "--align") == 0 || strcmp(a, "--work-limit") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx place: %s needs a value\n", a);
                return usage(NULL);
            }
            const char *v = argv[++i];
            long long x;
            if (strcmp(a, "--time-limit") == 0) {
                if (!olla_cli_parse_double(v, &opt.time_limit) || opt.time_limit < 0) {
                    fprintf(stderr, "olla-onnx place: --time-limit \"%s\" is not a number of seconds >= 0\n", v);
                    return usage(NULL);
                }
            } else if (!olla_cli_parse_i64(v, &x) || x < 1) {
                fprintf(stderr, "olla-onnx place: %s \"%s\" is not a positive integer\n", a, v);
                return usage(NULL);
            } else if (strcmp(a, "--align") == 0) {
                opt.alignment = x;
            } else if (strcmp(a, "--work-limit") == 0) {
                opt.work_limit = x;
            } else {
                opt.capacity = x;
            }
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "olla-onnx place: unknown option %s\n", a);
            return usage(NULL);
        }
        if (!in)
            in = a;
        else if (!out)
            out = a;
        else
            return usage("too many file names");
    }
    if (!in || !out)
        return usage("needs an input and an output file");

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
    double gap = res.lower_bound > 0
                     ? 100.0 * (double)(res.arena_bytes - res.lower_bound) / (double)res.lower_bound
                     : 0.0;
    fprintf(stderr,
            "place: %zu buffers, max live %lld bytes, arena %lld bytes, fragmentation %.3f%%,"
            " best heuristic %lld, %.3f%% above the lower bound %lld, stopped by %s,"
            " %lld work units, %s, %.3f s\n",
            t.n, (long long)live, (long long)res.arena_bytes, frag, (long long)res.heuristic_bytes,
            gap, (long long)res.lower_bound, olla_place_stop_name(res.stopped_by), res.work,
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
                    "olla-onnx place: %s: no placement within %lld bytes found in %.1f s (best %lld); "
                    "raise --time-limit or --capacity\n",
                    in, (long long)opt.capacity, opt.time_limit, (long long)res.arena_bytes);
        olla_place_table_free(&t);
        return OLLA_ERR_INPUT;
    }
    st = olla_place_csv_write(out, &t, &err);
    if (st != OLLA_OK)
        fprintf(stderr, "olla-onnx place: %s\n", err.message);
    olla_place_table_free(&t);
    return st;
}
