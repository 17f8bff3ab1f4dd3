/* olla-onnx: the sparse ILP matrix of olla_ilp_matrix.h: triplets added
 * row by row, then converted to CBC's column-major arrays. */
#include "solver/olla_ilp_matrix.h"

#include <stdlib.h>

#include "util/olla_grow.h"

void olla_ilp_add(olla_ilp_matrix *m, int r, int c, double v)
{
    if (m->oom || r < 0)
        return;
    if (m->max_nz > 0 && m->n >= m->max_nz) {
        m->oom = 1;
        return;
    }
    size_t need = (size_t)m->n + 1, cap_col = m->cap, cap_val = m->cap;
    int *r2 = olla_grow(m->row, &m->cap, need, sizeof *r2);
    if (r2)
        m->row = r2;
    int *c2 = r2 ? olla_grow(m->col, &cap_col, need, sizeof *c2) : NULL;
    if (c2)
        m->col = c2;
    double *v2 = c2 ? olla_grow(m->val, &cap_val, need, sizeof *v2) : NULL;
    if (!v2) {
        m->oom = 1;
        return;
    }
    m->val = v2; /* the three grew alike */
    m->row[m->n] = r;
    m->col[m->n] = c;
    m->val[m->n] = v;
    m->n++;
}

int olla_ilp_row(olla_ilp_matrix *m, double lo, double hi)
{
    if (m->oom)
        return -1;
    size_t need = (size_t)m->nrows + 1, cap_rhi = m->caprows;
    double *a = olla_grow(m->rlo, &m->caprows, need, sizeof *a);
    if (a)
        m->rlo = a;
    double *b = a ? olla_grow(m->rhi, &cap_rhi, need, sizeof *b) : NULL;
    if (!b) {
        m->oom = 1;
        return -1;
    }
    m->rhi = b; /* the two grew alike */
    m->rlo[m->nrows] = lo;
    m->rhi[m->nrows] = hi;
    return m->nrows++;
}

int olla_ilp_columns(const olla_ilp_matrix *m, int ncols, int **start, int **index, double **value)
{
    int *cs = calloc((size_t)ncols + 1, sizeof *cs);
    int *fill = calloc((size_t)ncols + 1, sizeof *fill);
    int *ci = malloc(((size_t)m->n + 1) * sizeof *ci);
    double *cv = malloc(((size_t)m->n + 1) * sizeof *cv);
    if (!cs || !fill || !ci || !cv) {
        free(cs);
        free(fill);
        free(ci);
        free(cv);
        return 0;
    }
    for (long i = 0; i < m->n; i++)
        cs[m->col[i] + 1]++;
    for (int c = 0; c < ncols; c++)
        cs[c + 1] += cs[c];
    for (long i = 0; i < m->n; i++) {
        int c = m->col[i];
        ci[cs[c] + fill[c]] = m->row[i];
        cv[cs[c] + fill[c]] = m->val[i];
        fill[c]++;
    }
    free(fill);
    *start = cs;
    *index = ci;
    *value = cv;
    return 1;
}

void olla_ilp_matrix_free(olla_ilp_matrix *m)
{
    free(m->row);
    free(m->col);
    free(m->val);
    free(m->rlo);
    free(m->rhi);
}
