/* olla-onnx: reachability between nodes as bitsets, and the precedence test
 * that tells when two tensors can never be live at the same time. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_analysis.h"
#include "util/olla_bits.h"

static int bit(const uint64_t *row, int u)
{
    return olla_bit_get(row, (size_t)u);
}

static int popcount_row(const uint64_t *row, int words)
{
    int c = 0;
    for (int w = 0; w < words; w++)
        c += __builtin_popcountll(row[w]);
    return c;
}

void olla_reach_free(olla_reach *r)
{
    if (!r)
        return;
    free(r->anc);
    free(r->desc);
    free(r->n_anc);
    free(r->n_desc);
    memset(r, 0, sizeof *r);
}

olla_status olla_reach_build(const olla_dag *dag, olla_reach *r, olla_error *err)
{
    int n = dag->n_nodes;
    memset(r, 0, sizeof *r);
    if (n > OLLA_REACH_MAX_NODES)
        return olla_error_set(err, OLLA_ERR_INTERNAL,
                              "reachability of %d nodes would need %.1f GB; graphs above %d nodes are "
                              "ordered without it",
                              n, 2.0 * (double)n * (double)n / 8e9, OLLA_REACH_MAX_NODES);
    r->n = n;
    r->words = (int)olla_bits_words((size_t)n);
    size_t cells = (size_t)n * (size_t)r->words + 1;
    r->anc = calloc(cells, sizeof *r->anc);
    r->desc = calloc(cells, sizeof *r->desc);
    r->n_anc = calloc((size_t)n + 1, sizeof *r->n_anc);
    r->n_desc = calloc((size_t)n + 1, sizeof *r->n_desc);
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!r->anc || !r->desc || !r->n_anc || !r->n_desc || !order) {
        free(order);
        olla_reach_free(r);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing reachability of %d nodes", n);
    }
    olla_status st = olla_dag_stable_topo(dag, order, err);
    if (st != OLLA_OK) {
        free(order);
        olla_reach_free(r);
        return st;
    }
    int W = r->words;
    for (int i = 0; i < n; i++) {
        int v = order[i];
        uint64_t *row = r->anc + (size_t)v * W;
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            const uint64_t *ru = r->anc + (size_t)u * W;
            for (int w = 0; w < W; w++)
                row[w] |= ru[w];
            olla_bit_set(row, (size_t)u);
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int v = order[i];
        const uint64_t *rv = r->desc + (size_t)v * W;
        for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            uint64_t *ru = r->desc + (size_t)u * W;
            for (int w = 0; w < W; w++)
                ru[w] |= rv[w];
            olla_bit_set(ru, (size_t)v);
        }
    }
    for (int v = 0; v < n; v++) {
        r->n_anc[v] = popcount_row(r->anc + (size_t)v * W, W);
        r->n_desc[v] = popcount_row(r->desc + (size_t)v * W, W);
    }
    free(order);
    return OLLA_OK;
}

int olla_reach_before(const olla_reach *r, int u, int v)
{
    return bit(r->anc + (size_t)v * r->words, u);
}

int olla_reach_comparable(const olla_reach *r, int u, int v)
{
    return u == v || olla_reach_before(r, u, v) || olla_reach_before(r, v, u);
}

/* a is dead before b is created: a's consumers all run no later than b's
 * producer, and where one of them is b's producer itself the two meet at
 * that step, so this only holds when the producer does not read a. */
static int precedes(const olla_dag *dag, const olla_reach *r, int a, int b)
{
    if (dag->is_output[a])
        return 0;
    int pb = dag->producer[b];
    int pa = dag->producer[a];
    if (dag->sink_start[a] == dag->sink_start[a + 1])
        return pa != pb && olla_reach_before(r, pa, pb);
    for (int k = dag->sink_start[a]; k < dag->sink_start[a + 1]; k++) {
        int s = dag->sink_list[k];
        if (s == pb || !olla_reach_before(r, s, pb))
            return 0;
    }
    return 1;
}

int olla_tensors_disjoint(const olla_dag *dag, const olla_reach *r, int a, int b)
{
    if (a == b)
        return 0;
    return precedes(dag, r, a, b) || precedes(dag, r, b, a);
}

/* ---- counts without the closure ---- */

/* Source nodes per pass of olla_reach_counts: each pass keeps one row of
 * CHUNK_WORDS words per node, whatever the graph's size. */
#define CHUNK_WORDS 16

/* the distinct producers of v's inputs into prod (returns their number) */
static int producers_of(const olla_dag *dag, int v, int *prod, int *stamp)
{
    int k = 0;
    for (int i = dag->in_start[v]; i < dag->in_start[v + 1]; i++) {
        int u = dag->producer[dag->in_list[i]];
        if (stamp[u] != v) {
            stamp[u] = v;
            prod[k++] = u;
        }
    }
    return k;
}

/* What every pass of olla_reach_counts reads and writes: a topological
 * order, the distinct producers of each node (CSR) and the rows. */
typedef struct reach_pass {
    const olla_dag *dag;
    int *order;          /* n_nodes: a topological order */
    int *pstart, *plist; /* the distinct producers of node v: plist[pstart[v] .. pstart[v + 1]) */
    uint64_t *rows;      /* n_nodes rows of CHUNK_WORDS words */
} reach_pass;

/* One pass over the sources [lo, lo + 64 * CHUNK_WORDS) in topological
 * order: row v gets the sources among v's ancestors (forward) or
 * descendants (backward), and their number is added to count[v]. */
static void count_chunk(const reach_pass *rp, int lo, int fwd, int *count)
{
    const olla_dag *dag = rp->dag;
    const int *order = rp->order, *pstart = rp->pstart, *plist = rp->plist;
    uint64_t *rows = rp->rows;
    int n = dag->n_nodes, hi = lo + 64 * CHUNK_WORDS;
    memset(rows, 0, (size_t)n * CHUNK_WORDS * sizeof *rows);
    for (int i = 0; i < n; i++) {
        int v = order[fwd ? i : n - 1 - i];
        uint64_t *row = rows + (size_t)v * CHUNK_WORDS;
        if (fwd) { /* v's row from its producers' */
            for (int k = pstart[v]; k < pstart[v + 1]; k++) {
                int u = plist[k];
                const uint64_t *ru = rows + (size_t)u * CHUNK_WORDS;
                for (int w = 0; w < CHUNK_WORDS; w++)
                    row[w] |= ru[w];
                if (u >= lo && u < hi)
                    olla_bit_set(row, (size_t)(u - lo));
            }
        } else { /* v's row into its producers' */
            for (int k = pstart[v]; k < pstart[v + 1]; k++) {
                uint64_t *ru = rows + (size_t)plist[k] * CHUNK_WORDS;
                for (int w = 0; w < CHUNK_WORDS; w++)
                    ru[w] |= row[w];
                if (v >= lo && v < hi)
                    olla_bit_set(ru, (size_t)(v - lo));
            }
        }
    }
    for (int v = 0; v < n; v++)
        count[v] += popcount_row(rows + (size_t)v * CHUNK_WORDS, CHUNK_WORDS);
}

olla_status olla_reach_counts(const olla_dag *dag, int *n_anc, int *n_desc, olla_error *err)
{
    int n = dag->n_nodes, m = dag->in_start[n];
    int *order = malloc(((size_t)n + 1) * sizeof *order), *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
    int *pstart = malloc(((size_t)n + 1) * sizeof *pstart), *plist = malloc(((size_t)m + 1) * sizeof *plist);
    uint64_t *rows = malloc(((size_t)n + 1) * CHUNK_WORDS * sizeof *rows);
    reach_pass rp = {dag, order, pstart, plist, rows};
    olla_status st = OLLA_OK;
    if (!order || !stamp || !pstart || !plist || !rows)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory counting the ancestors of %d nodes", n);
    else
        st = olla_dag_stable_topo(dag, order, err);
    if (st == OLLA_OK) {
        for (int v = 0; v < n; v++)
            stamp[v] = -1;
        pstart[0] = 0;
        for (int v = 0; v < n; v++)
            pstart[v + 1] = pstart[v] + producers_of(dag, v, plist + pstart[v], stamp);
        memset(n_anc, 0, (size_t)n * sizeof *n_anc);
        memset(n_desc, 0, (size_t)n * sizeof *n_desc);
        for (int lo = 0; lo < n; lo += 64 * CHUNK_WORDS) {
            count_chunk(&rp, lo, 1, n_anc);
            count_chunk(&rp, lo, 0, n_desc);
        }
    }
    free(order);
    free(stamp);
    free(pstart);
    free(plist);
    free(rows);
    return st;
}

/* A node at position i of a topological order is ordered with every other
 * node exactly when every node before it has a successor at position <= i
 * (following such successors from any node before i stays before i and
 * ends at the node: all are its ancestors) and every node after it has a
 * predecessor at position >= i (all are its descendants). */
olla_status olla_order_cuts(const olla_dag *dag, const int *order, unsigned char *cut, olla_error *err)
{
    int n = dag->n_nodes;
    int *pos = malloc(((size_t)n + 1) * sizeof *pos), *minsucc = malloc(((size_t)n + 1) * sizeof *minsucc);
    int *maxpred = malloc(((size_t)n + 1) * sizeof *maxpred);
    if (!pos || !minsucc || !maxpred) {
        free(pos);
        free(minsucc);
        free(maxpred);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory splitting %d nodes", n);
    }
    for (int i = 0; i < n; i++)
        pos[order[i]] = i;
    for (int v = 0; v < n; v++) {
        minsucc[v] = n;
        maxpred[v] = -1;
    }
    for (int e = 0; e < dag->n_tensors; e++) {
        int p = dag->producer[e];
        for (int k = dag->sink_start[e]; k < dag->sink_start[e + 1]; k++) {
            int s = dag->sink_list[k];
            if (pos[s] < minsucc[p])
                minsucc[p] = pos[s];
            if (pos[p] > maxpred[s])
                maxpred[s] = pos[p];
        }
    }
    for (int i = 0; i < n; i++)
        cut[order[i]] = 1;
    for (int i = 0, reach = -1; i < n; i++) { /* reach: the largest minsucc before i */
        if (reach > i)
            cut[order[i]] = 0;
        if (minsucc[order[i]] > reach)
            reach = minsucc[order[i]];
    }
    for (int i = n - 1, back = n; i >= 0; i--) { /* back: the smallest maxpred after i */
        if (back < i)
            cut[order[i]] = 0;
        if (maxpred[order[i]] < back)
            back = maxpred[order[i]];
    }
    free(pos);
    free(minsucc);
    free(maxpred);
    return OLLA_OK;
}
