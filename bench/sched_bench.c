/* olla-onnx scheduling benchmark: reads text DAG files (bench/DAGFORMAT.md),
 * runs olla_schedule on each and prints one table row per file.
 * usage: sched_bench [-t seconds] [-n (no ILP)] [-v level] file.dag... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/olla_analysis.h"
#include "solver/olla_schedule.h"

int main(int argc, char **argv)
{
    olla_schedule_options opt = {60.0, 1, 0};
    int first = 1;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-t") == 0 && first + 1 < argc) {
            opt.time_limit = atof(argv[first + 1]);
            first += 2;
        } else if (strcmp(argv[first], "-n") == 0) {
            opt.use_ilp = 0;
            first++;
        } else if (strcmp(argv[first], "-v") == 0 && first + 1 < argc) {
            opt.verbosity = atoi(argv[first + 1]);
            first += 2;
        } else {
            fprintf(stderr, "usage: sched_bench [-t seconds] [-n] [-v level] file.dag...\n");
            return 2;
        }
    }
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
        if (olla_schedule(&f.dag, input, &opt, order, &res, &err) != OLLA_OK) {
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
        }
        free(order);
        free(input);
        olla_dagfile_free(&f);
    }
    return rc;
}
