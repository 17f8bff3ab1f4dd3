/* olla-onnx benchmark: the early-update control edges (olla_early_update_edges)
 * of ONNX models, alone. For each model and each memory model (the DAG
 * without shares and with every share the sharing rules declare): nodes, the
 * number of edges, an FNV-1a hash of the edge list in its order, and the best
 * CPU seconds of RUNS runs. With -e the edges themselves follow, one
 * "from to" line each, so two builds can be compared edge by edge; with -s
 * a "#" line of what the search took (passes/analysis/updates_internal.h):
 * target searches, subtrees the labels left out, walks, nodes of several
 * runs, unknown nodes, updates that asked the lazy ancestor search.
 *
 *   updates_bench [-r RUNS] [-e] [-s] model.onnx...
 *
 * Built by bench/build_updates_bench.sh against a built library. For instruction
 * counts: valgrind --tool=callgrind --toggle-collect=olla_early_update_edges
 * updates_bench -r 1 model.onnx. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"
#include "onnx/olla_graph.h"
#include "onnx/olla_model.h"
#include "passes/analysis/olla_analysis.h"
#include "passes/analysis/olla_graph_dag.h"
#include "passes/analysis/updates_internal.h"
#include "passes/runtime/olla_graph_shares.h"
#include "passes/shapes/olla_shapes.h"
#include "util/olla_clock.h"

/* FNV-1a over the edge list, pair by pair */
static uint64_t edges_hash(const int *from, const int *to, int count)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < count; i++) {
        int pair[2] = {from[i], to[i]};
        const unsigned char *p = (const unsigned char *)pair;
        for (size_t k = 0; k < sizeof pair; k++)
            h = (h ^ p[k]) * 1099511628211ull;
    }
    return h;
}

/* one row: the edges of dag, timed over runs runs */
static int row(const char *path, const char *variant, const olla_dag *dag, int runs, int list, int stats)
{
    olla_error err = {0};
    double best = -1;
    int *from = NULL, *to = NULL, count = 0;
    for (int r = 0; r < runs; r++) {
        free(from);
        free(to);
        double t0 = olla_cpu_now();
        if (olla_early_update_edges(dag, &from, &to, &count, &err) != OLLA_OK) {
            fprintf(stderr, "updates_bench: %s: %s\n", path, err.message);
            return 1;
        }
        double t = olla_cpu_now() - t0;
        if (best < 0 || t < best)
            best = t;
    }
    printf("%s\t%s\t%d\t%d\t%016llx\t%.4f\n", path, variant, dag->n_nodes, count,
           (unsigned long long)edges_hash(from, to, count), best);
    for (int i = 0; list && i < count; i++)
        printf("%d %d\n", from[i], to[i]);
    free(from);
    free(to);
    olla_upd_stats st;
    if (stats && olla_upd_edges(dag, &from, &to, &count, &st, &err) == OLLA_OK) {
        printf("# searches %ld label_skips %ld walks %ld split %ld unknown %ld lazy %ld\n", st.searches,
               st.label_skips, st.walks, st.split, st.unknown, st.lazy);
        free(from);
        free(to);
    }
    return 0;
}

/* the model's two DAGs and their rows */
static int bench(const char *path, int runs, int list, int stats)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_shape_table *types = NULL;
    olla_graph *g = NULL;
    olla_shape_options so = {0};
    int rc = 1;
    if (olla_model_load(path, &m, &err) != OLLA_OK || olla_infer_shapes(m->proto, &so, &types, &err) != OLLA_OK)
        goto done;
    olla_type_source src = olla_shape_type_source(types);
    if (olla_graph_build(m, &src, &g, &err) != OLLA_OK)
        goto done;
    olla_op_share *shares = NULL;
    int n_shares = 0;
    if (olla_graph_shares(g, &shares, &n_shares, &err) != OLLA_OK)
        goto done;
    rc = 0;
    for (int v = 0; v < 2 && rc == 0; v++) {
        olla_dag dag = {0};
        olla_graph_dag_map map = {0};
        olla_dag_sharing sh = {v ? shares : NULL, v ? n_shares : 0, NULL};
        if (olla_graph_dag(g, 1, &sh, &dag, &map, &err) != OLLA_OK) {
            rc = 1;
            break;
        }
        rc = row(path, v ? "shares" : "plain", &dag, runs, list, stats);
        olla_dag_free(&dag);
        olla_graph_dag_map_free(&map);
    }
    free(shares);
done:
    if (rc && err.message[0])
        fprintf(stderr, "updates_bench: %s: %s\n", path, err.message);
    olla_graph_free(g);
    olla_shape_table_free(types);
    olla_model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = 1, list = 0, stats = 0, first = 1, rc = 0;
    while (first < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-r") == 0 && first + 1 < argc) {
            runs = atoi(argv[first + 1]);
            first += 2;
        } else if (strcmp(argv[first], "-e") == 0) {
            list = 1;
            first++;
        } else if (strcmp(argv[first], "-s") == 0) {
            stats = 1;
            first++;
        } else {
            fprintf(stderr, "usage: updates_bench [-r RUNS] [-e] [-s] model.onnx...\n");
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    for (int i = first; i < argc; i++)
        rc |= bench(argv[i], runs, list, stats);
    return rc;
}
