/* The early-update control edges (passes/analysis/analysis_updates.c)
 * against a brute-force reading of their rule, on random graphs of many
 * shapes: node numbers in a random topological order or not, sparse and
 * dense, one or several results per node, optimizer nodes by type. The
 * reference shares no code with the search: levels by relaxation,
 * reachability as a full matrix, every set spelled out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "passes/analysis/olla_analysis.h"

enum { MAXN = 40 };

/* ---- the reference ---- */

typedef struct {
    const olla_dag *dag;
    int n;
    unsigned char edge[MAXN][MAXN];  /* u -> w in the graph as given */
    unsigned char reach[MAXN][MAXN]; /* u reaches w (u != w), graph as given */
    int fwd[MAXN], bwd[MAXN];
    unsigned char upd[MAXN], trunk[MAXN];
} ref;

/* the closure of the edges into reach (Floyd-Warshall over booleans) */
static void ref_closure(ref *r, unsigned char out[MAXN][MAXN], unsigned char in[MAXN][MAXN])
{
    int n = r->n;
    memcpy(out, in, sizeof(unsigned char) * MAXN * MAXN);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; out[i][k] && j < n; j++)
                if (out[k][j])
                    out[i][j] = 1;
}

/* an optimizer by its type, or a node with inputs, no readers, and a graph
 * output among its results */
static int ref_is_update(const olla_dag *d, int v)
{
    static const char *const ops[] = {"InPlaceAccumulatorV2", "InPlaceAccumulator", "AdamWOptimizer",
                                      "AdamOptimizer",        "SGDOptimizerV2",     "SGDOptimizer",
                                      "LambOptimizer",        "Adagrad",            "Adam",
                                      "Momentum"};
    for (size_t i = 0; d->op_type && d->op_type[v] && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(d->op_type[v], ops[i]) == 0)
            return 1;
    if (d->in_start[v] == d->in_start[v + 1])
        return 0;
    int out = 0;
    for (int k = d->out_start[v]; k < d->out_start[v + 1]; k++) {
        int e = d->out_list[k];
        if (d->sink_start[e] != d->sink_start[e + 1])
            return 0;
        out |= d->is_output[e];
    }
    return out;
}

/* levels by relaxation: fwd the longest path from a source, bwd to a sink */
static void ref_levels(ref *r)
{
    for (int v = 0; v < r->n; v++)
        r->fwd[v] = r->bwd[v] = 0;
    for (int round = 0; round < r->n; round++)
        for (int u = 0; u < r->n; u++)
            for (int w = 0; w < r->n; w++)
                if (r->edge[u][w]) {
                    if (r->fwd[u] + 1 > r->fwd[w])
                        r->fwd[w] = r->fwd[u] + 1;
                    if (r->bwd[w] + 1 > r->bwd[u])
                        r->bwd[u] = r->bwd[w] + 1;
                }
}

/* the trunk: on the first update's longest path (lowest-numbered
 * predecessor one level up), the node nearest the update that reaches every
 * update, and its ancestors */
static void ref_trunk(ref *r)
{
    int n = r->n, first = -1;
    for (int v = n - 1; v >= 0; v--)
        if (r->upd[v])
            first = v;
    memset(r->trunk, 0, sizeof r->trunk);
    for (int cur = first; cur >= 0;) {
        int all = 1;
        for (int u = 0; u < n; u++)
            if (r->upd[u] && u != cur && !r->reach[cur][u])
                all = 0;
        if (all) {
            r->trunk[cur] = 1;
            for (int a = 0; a < n; a++)
                if (r->reach[a][cur])
                    r->trunk[a] = 1;
            return;
        }
        int up = -1;
        for (int p = 0; p < n && up < 0; p++)
            if (r->edge[p][cur] && r->fwd[p] == r->fwd[cur] - 1)
                up = p;
        cur = up;
    }
}

/* the anchor of update v (-1: none), read off the rule word for word */
static int ref_anchor(const ref *r, int v)
{
    int n = r->n;
    unsigned char met[MAXN] = {0}, round[MAXN] = {0}, inside[MAXN];
    for (int u = 0; u < n; u++)
        inside[u] = (unsigned char)((u == v || r->reach[u][v]) && !r->trunk[u]); /* looked through */
    met[v] = round[v] = 1;
    for (;;) {
        unsigned char next[MAXN] = {0};
        int any = 0;
        for (int u = 0; u < n; u++)
            for (int p = 0; round[u] && p < n; p++)
                if (r->edge[p][u] && !met[p])
                    next[p] = met[p] = 1, any = 1;
        if (!any)
            return -1;
        /* from the round, through looked-through nodes: the nodes searched */
        unsigned char searched[MAXN];
        memcpy(searched, next, sizeof searched);
        for (int grew = 1; grew;) {
            grew = 0;
            for (int y = 0; y < n; y++)
                for (int w = 0; searched[y] && w < n; w++)
                    if (r->edge[y][w] && inside[w] && !searched[w])
                        searched[w] = 1, grew = 1;
        }
        int best = -1;
        for (int c = 0; c < n; c++) { /* c rising: the lowest number wins among equals */
            if (c == v || r->reach[c][v] || r->trunk[c])
                continue;
            int read = 0;
            for (int y = 0; y < n; y++)
                read |= searched[y] && r->edge[y][c];
            if (read && (best < 0 || r->bwd[c] > r->bwd[best]))
                best = c;
        }
        if (best >= 0)
            return best;
        memcpy(round, next, sizeof round);
    }
}

/* the whole reference: edges in update order, refused when the anchor
 * reaches the update through the graph and the edges added before */
static int ref_edges(ref *r, int *from, int *to)
{
    int n = r->n, ne = 0;
    unsigned char g[MAXN][MAXN], gr[MAXN][MAXN];
    memcpy(g, r->edge, sizeof g);
    for (int v = 0; v < n; v++) {
        if (!r->upd[v])
            continue;
        int a = ref_anchor(r, v);
        if (a < 0)
            continue;
        ref_closure(r, gr, g);
        if (gr[a][v])
            continue;
        g[v][a] = 1;
        from[ne] = v;
        to[ne++] = a;
    }
    return ne;
}

/* the reference's view of d: edges, reachability, levels, updates, trunk */
static void ref_build(ref *r, const olla_dag *d)
{
    memset(r, 0, sizeof *r);
    r->dag = d;
    r->n = d->n_nodes;
    for (int e = 0; e < d->n_tensors; e++)
        for (int k = d->sink_start[e]; k < d->sink_start[e + 1]; k++)
            r->edge[d->producer[e]][d->sink_list[k]] = 1;
    ref_closure(r, r->reach, r->edge);
    ref_levels(r);
    for (int v = 0; v < r->n; v++)
        r->upd[v] = (unsigned char)ref_is_update(d, v);
    ref_trunk(r);
}

/* ---- random graphs ---- */

/* n nodes numbered by a random permutation of a topological order (or in
 * it, when `ordered`), 1 to `outs` results each, each read by a later node
 * with probability density/100, a graph output with probability 1/out_odds;
 * optimizer types on some nodes when `typed` */
static int random_graph(uint64_t *rng, int n, int outs, int density, int out_odds, int ordered, int typed,
                        olla_dag *dag, const char **types)
{
    int perm[MAXN];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; !ordered && i > 0; i--) {
        int j = (int)olla_test_rng_range(rng, 0, i), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    olla_dag_builder *b = olla_dag_builder_new(n, 2 * n);
    if (!b)
        return 0;
    for (int i = 0; i < n; i++) {
        int k = (int)olla_test_rng_range(rng, 1, outs);
        for (int j = 0; j < k; j++) {
            int out = olla_test_rng_range(rng, 1, out_odds) == 1;
            int e = olla_dag_builder_tensor(b, perm[i], 1 + olla_test_rng_range(rng, 0, 99), out);
            for (int w = i + 1; w < n; w++)
                if (olla_test_rng_range(rng, 1, 100) <= density)
                    olla_dag_builder_use(b, perm[w], e);
        }
    }
    for (int v = 0; v < n; v++)
        types[v] = typed && olla_test_rng_range(rng, 1, 8) == 1 ? "SGDOptimizer" : "Gemm";
    olla_error err = {0};
    if (olla_dag_build(b, n, dag, &err) != OLLA_OK)
        return 0;
    dag->op_type = typed ? types : NULL;
    return 1;
}

/* ---- the tests ---- */

OLLA_TEST(test_early_edges_match_their_rule)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int with_edges = 0, refused = 0, cases = 0, trunks = 0;
    for (int seed = 0; seed < 3000; seed++) {
        int n = (int)olla_test_rng_range(&rng, 2, MAXN);
        int density = (int)olla_test_rng_range(&rng, 2, 40), outs = (int)olla_test_rng_range(&rng, 1, 3);
        int out_odds = (int)olla_test_rng_range(&rng, 1, 6), ordered = seed % 3 == 0, typed = seed % 4 == 1;
        olla_dag dag;
        const char *types[MAXN];
        OLLA_CHECK(random_graph(&rng, n, outs, density, out_odds, ordered, typed, &dag, types));
        static ref r;
        ref_build(&r, &dag);
        int want_from[MAXN], want_to[MAXN];
        int want = ref_edges(&r, want_from, want_to);
        int *from = NULL, *to = NULL, cnt = -1;
        olla_error err = {0};
        OLLA_CHECK(olla_early_update_edges(&dag, &from, &to, &cnt, &err) == OLLA_OK);
        OLLA_CHECK_EQ_I64(cnt, want);
        for (int i = 0; i < cnt && i < want; i++) {
            OLLA_CHECK_EQ_I64(from[i], want_from[i]);
            OLLA_CHECK_EQ_I64(to[i], want_to[i]);
        }
        /* the edges keep the graph acyclic */
        olla_dag aug;
        OLLA_CHECK(olla_dag_add_edges(&dag, from, to, cnt, &aug, &err) == OLLA_OK);
        int order[MAXN];
        OLLA_CHECK(olla_dag_stable_topo(&aug, order, &err) == OLLA_OK);
        int ups = 0, anchored = 0;
        for (int v = 0; v < n; v++) {
            ups += r.upd[v];
            anchored += r.upd[v] && ref_anchor(&r, v) >= 0;
            trunks += r.trunk[v];
        }
        refused += anchored - cnt;
        with_edges += cnt > 0;
        cases += ups > 0;
        free(from);
        free(to);
        olla_dag_free(&aug);
        olla_dag_free(&dag);
    }
    /* the generator reaches every part of the rule */
    OLLA_CHECK(cases > 1000);
    OLLA_CHECK(with_edges > 500);
    OLLA_CHECK(refused > 0);
    OLLA_CHECK(trunks > 0);
}

OLLA_TEST_MAIN(OLLA_T(test_early_edges_match_their_rule))
