/* olla-onnx: the ordering rows of the OLLA paper's scheduling ILP (eq. 12),
 * written once for the scheduling ILP (schedule_ilp.c) and the joint ILP
 * (joint_ilp.c).
 *
 * Binary S[v][t] = 1 when node v has run at or before step t. It is a
 * column only inside v's window [asap[v], alap[v]): before the window it is
 * the constant 0, from alap[v] on the constant 1 (asap[v] <= alap[v]). The
 * rows, in this order:
 *   one node per step  sum_v S[v][t] = t + 1, for t = 0 .. n-1;
 *   monotone           S[v][t] <= S[v][t+1] inside v's window;
 *   precedence         S[w][t] <= S[u][t-1] for each producer u of an input
 *                      of w (once per pair u, w), at the steps where both
 *                      are columns (elsewhere the windows already hold it). */
#ifndef OLLA_ORDER_ILP_H
#define OLLA_ORDER_ILP_H

#include "passes/analysis/olla_dag.h"
#include "solver/olla_ilp_matrix.h"

/* What S[v][t] is when it is no column. */
#define OLLA_S_ZERO (-1)
#define OLLA_S_ONE (-2)

/* Where the S columns are: S[v][t] is column sidx[v] + t - asap[v] inside
 * the window. Each array holds one entry per node. */
typedef struct olla_order_vars {
    const int *asap, *alap, *sidx;
} olla_order_vars;

/* S[v][t] as a column index, or OLLA_S_ZERO / OLLA_S_ONE. */
static inline int olla_order_col(const olla_order_vars *w, int v, int t)
{
    if (t < w->asap[v])
        return OLLA_S_ZERO;
    if (t >= w->alap[v])
        return OLLA_S_ONE;
    return w->sidx[v] + (t - w->asap[v]);
}

/* Adds coef * S[v][t] to row r, or its constant value to *konst. */
static inline void olla_order_add(olla_ilp_matrix *m, const olla_order_vars *w, int r, int v, int t, double coef,
                                  double *konst)
{
    int c = olla_order_col(w, v, t);
    if (c == OLLA_S_ONE)
        *konst += coef;
    else if (c >= 0)
        olla_ilp_add(m, r, c, coef);
}

/* Appends the three families of rows above to m. Returns 0 when out of
 * memory (then m may hold part of them). */
int olla_order_rows(olla_ilp_matrix *m, const olla_order_vars *w, const olla_dag *dag);

#endif
