/* olla-onnx scheduling benchmark: reads text DAG files (bench/DAGFORMAT.md),
 * runs olla_schedule on each and prints one table row per file.
 * usage: sched_bench [-t seconds] [-n (no ILP)] [-v level] [-o dir] file.dag... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/dag_eval.h"
#include "passes/analysis/olla_analysis.h"
#include "util/olla_clock.h"
#include "solver/olla_schedule.h"

/* -v LEVEL: the scheduler's lines on stderr (2 its stages, 3 CBC's log too) */
static void print_line(void *ctx, olla_log_level level, const char *message)
{
    (void)ctx;
    (void)level;
    fprintf(stderr, "%s\n", message);
}

/* FNV-1a of an order, to tell two runs' orders apart */
static unsigned order_hash(const int *order, int n)
{
    unsigned h = 2166136261u;
    for (int t = 0; t < n; t++)
        h = (h ^ (unsigned)order[t]) * 16777619u;
    return h;
}

int main(int argc, char **argv)
{
    olla_schedule_options opt = {60.0, 1, NULL};
    olla_logger log = {print_line, NULL, 0};
    int first = 1;
    const char *dump = NULL;
    int ilp_only = 0;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-t") == 0 && first + 1 < argc) {
            opt.time_limit = atof(argv[first + 1]);
            first += 2;
        } else if (strcmp(argv[first], "-o") == 0 && first + 1 < argc) {
            dump = argv[first + 1];
            first += 2;
        } else if (strcmp(argv[first], "-i") == 0) {
            ilp_only = 1;
            first++;
        } else if (strcmp(argv[first], "-n") == 0) {
            opt.use_ilp = 0;
            first++;
        } else if (strcmp(argv[first], "-v") == 0 && first + 1 < argc) {
            log.level = atoi(argv[first + 1]);
            opt.log = &log;
            first += 2;
        } else {
            fprintf(stderr, "usage: sched_bench [-t seconds] [-n | -i] [-v level] [-o dir] file.dag...\n");
            return 2;
        }
    }
    if (ilp_only)
        printf("| model | nodes | columns | rows | input-order peak | ILP peak | ILP bound | proven | order hash | seconds |\n"
               "|---|---:|---:|---:|---:|---:|---:|---|---|---:|\n");
    else
    printf("| model | nodes | input-order peak | best heuristic peak | final peak | lower bound | gap | saving | "
           "seconds | status |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    int rc = 0;
    for (int i = first; i < argc; i++) {
        olla_dagfile f;
        olla_error err = {0};
        if (olla_dagfile_read(argv[i], &f, &err) != OLLA_OK) {
            fprintf(stderr, "%s\n", err.message);
            rc = 1;
            continue;
        }
        int *order = malloc(((size_t)f.dag.n_nodes + 1) * sizeof(int));
        int *input = malloc(((size_t)f.dag.n_nodes + 1) * sizeof(int));
        for (int v = 0; v < f.dag.n_nodes; v++)
            input[v] = v;
        olla_schedule_result res;
        if (ilp_only) {
            /* the ILP alone, warm-started with the input order */
            olla_ilp_info info;
            double t0 = olla_now();
            int64_t in = peak_of(&f.dag, input);
            olla_status st = olla_sched_ilp(&(olla_sched_ilp_problem){&f.dag, input, 0},
                                            &(olla_sched_ilp_settings){opt.time_limit, opt.log}, order, &info, &err);
            const char *base = strrchr(argv[i], '/');
            base = base ? base + 1 : argv[i];
            if (st != OLLA_OK)
                printf("| %s | %d | - | - | %lld | (%s) | - | no | - | %.2f |\n", base, f.dag.n_nodes, (long long)in,
                       err.message, olla_now() - t0);
            else
                printf("| %s | %d | %d | %d | %lld | %s%lld | %lld | %s | %08x | %.2f |\n", base, f.dag.n_nodes,
                       info.n_cols, info.n_rows, (long long)in, info.found ? "" : "none, ",
                       (long long)(info.found ? peak_of(&f.dag, order) : 0), (long long)info.bound,
                       info.optimal ? "yes" : "no", info.found ? order_hash(order, f.dag.n_nodes) : 0u,
                       olla_now() - t0);
            fflush(stdout);
        } else if (olla_schedule(&f.dag, input, &opt, order, &res, &err) != OLLA_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], err.message);
            rc = 1;
        } else {
            const char *base = strrchr(argv[i], '/');
            base = base ? base + 1 : argv[i];
            double gap = res.lower_bound_bytes > 0 ? 100.0 * ((double)res.peak_bytes / (double)res.lower_bound_bytes - 1.0) : 0;
            double saving = res.input_order_peak > 0 ? 100.0 * (1.0 - (double)res.peak_bytes / (double)res.input_order_peak) : 0;
            printf("| %s | %d | %lld | %lld | %lld | %lld | %.2f%% | %.1f%% | %.2f | %s |\n", base, f.dag.n_nodes,
                   (long long)res.input_order_peak, (long long)res.heuristic_peak, (long long)res.peak_bytes,
                   (long long)res.lower_bound_bytes, gap, saving, res.seconds, res.status);
            fflush(stdout);
            if (dump) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s.order", dump, base);
                FILE *fp = fopen(path, "w");
                if (fp) {
                    for (int t = 0; t < f.dag.n_nodes; t++)
                        fprintf(fp, "%d\n", order[t]);
                    fclose(fp);
                }
            }
        }
        free(order);
        free(input);
        olla_dagfile_free(&f);
    }
    return rc;
}
