/* olla-onnx: the ordering rows of eq. 12 (solver/olla_order_ilp.h), shared
 * by the scheduling and joint ILPs. */
#include "solver/olla_order_ilp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* v[0..n) sorted by key[v] ascending, stably (counting sort: keys are
 * steps in [0, n)); 0 when out of memory */
static int sort_by_step(int *v, int n, const int *key)
{
    int *count = calloc((size_t)n + 1, sizeof(int)), *tmp = malloc((size_t)n * sizeof(int));
    if (!count || !tmp) {
        free(count);
        free(tmp);
        return 0;
    }
    for (int i = 0; i < n; i++)
        count[key[v[i]] + 1]++;
    for (int k = 1; k <= n; k++)
        count[k] += count[k - 1];
    for (int i = 0; i < n; i++)
        tmp[count[key[v[i]]]++] = v[i];
    memcpy(v, tmp, (size_t)n * sizeof(int));
    free(count);
    free(tmp);
    return 1;
}

/* One node per step: sum_v S[v][t] = t + 1, where S is 1 for the nodes
 * whose window ended by t and a column for those whose window holds t
 * (by_start: the nodes by asap; open: the windows begun, in that order). */
static int one_per_step(olla_ilp_matrix *m, const olla_order_vars *w, int n)
{
    int *by_start = malloc((size_t)n * sizeof(int)), *done_by = calloc((size_t)n + 1, sizeof(int));
    int *open = malloc((size_t)n * sizeof(int)), nopen = 0;
    for (int v = 0; by_start && v < n; v++)
        by_start[v] = v;
    int ok = by_start && done_by && open && sort_by_step(by_start, n, w->asap);
    if (ok) {
        for (int v = 0; v < n; v++)
            done_by[w->alap[v]]++;
        for (int t = 1; t < n; t++)
            done_by[t] += done_by[t - 1]; /* nodes with alap <= t */
        int first_open = 0;               /* by_start[0 .. first_open) have asap <= t */
        for (int t = 0; t < n; t++) {
            while (first_open < n && w->asap[by_start[first_open]] <= t)
                open[nopen++] = by_start[first_open++];
            int r = olla_ilp_row(m, 0, 0);
            int keep = 0;
            for (int i = 0; i < nopen; i++) { /* the windows holding t as columns; drop the ended ones */
                int v = open[i];
                if (t < w->alap[v]) {
                    olla_ilp_add(m, r, olla_order_col(w, v, t), 1.0);
                    open[keep++] = v;
                }
            }
            nopen = keep;
            if (r >= 0)
                m->rlo[r] = m->rhi[r] = (double)(t + 1) - (double)done_by[t];
        }
    }
    free(open);
    free(by_start);
    free(done_by);
    return ok;
}

/* Monotone: S[v][t] <= S[v][t+1] inside v's window. */
static void monotone(olla_ilp_matrix *m, const olla_order_vars *w, int n)
{
    for (int v = 0; v < n; v++)
        for (int t = w->asap[v]; t + 1 < w->alap[v]; t++) {
            int r = olla_ilp_row(m, -INFINITY, 0);
            olla_ilp_add(m, r, olla_order_col(w, v, t), 1.0);
            olla_ilp_add(m, r, olla_order_col(w, v, t + 1), -1.0);
        }
}

/* Precedence over direct edges, once per producer and consumer (stamp[u]
 * is the last consumer whose rows for u were written). Both S terms are
 * columns at every step of [lo, hi]. */
static int precedence(olla_ilp_matrix *m, const olla_order_vars *w, const olla_dag *dag)
{
    int n = dag->n_nodes;
    int *stamp = malloc((size_t)n * sizeof(int));
    if (!stamp)
        return 0;
    for (int v = 0; v < n; v++)
        stamp[v] = -1;
    for (int wv = 0; wv < n; wv++)
        for (int k = dag->in_start[wv]; k < dag->in_start[wv + 1]; k++) {
            int u = dag->producer[dag->in_list[k]];
            if (stamp[u] == wv)
                continue;
            stamp[u] = wv;
            int lo = w->asap[wv] > w->asap[u] + 1 ? w->asap[wv] : w->asap[u] + 1;
            int hi = w->alap[wv] - 1 < w->alap[u] ? w->alap[wv] - 1 : w->alap[u];
            for (int t = lo; t <= hi; t++) {
                int r = olla_ilp_row(m, -INFINITY, 0);
                olla_ilp_add(m, r, olla_order_col(w, wv, t), 1.0);
                olla_ilp_add(m, r, olla_order_col(w, u, t - 1), -1.0);
            }
        }
    free(stamp);
    return 1;
}

/* The three families of rows, in the order of olla_order_ilp.h. */
int olla_order_rows(olla_ilp_matrix *m, const olla_order_vars *w, const olla_dag *dag)
{
    int n = dag->n_nodes;
    if (n == 0)
        return 1;
    if (!one_per_step(m, w, n))
        return 0;
    monotone(m, w, n);
    return precedence(m, w, dag);
}
