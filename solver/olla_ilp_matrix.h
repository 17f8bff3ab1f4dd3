/* olla-onnx: a sparse constraint matrix built row by row as triplets, then
 * handed to CBC column by column. Shared by the scheduling and joint ILPs. */
#ifndef OLLA_ILP_MATRIX_H
#define OLLA_ILP_MATRIX_H

#include <stddef.h>

typedef struct olla_ilp_matrix {
    int *row, *col;
    double *val;
    long n;
    size_t cap; /* of row, col and val (olla_grow) */
    long max_nz; /* 0 = no limit; the coefficient after the first max_nz marks the matrix oom */
    double *rlo, *rhi;
    int nrows;
    size_t caprows; /* of rlo and rhi */
    int oom; /* an allocation failed or max_nz was passed; further calls do nothing */
} olla_ilp_matrix;

/* A binary column reads as 1 in a solution above this (CBC's values lie
 * within its tolerance of 0 or 1). */
#define OLLA_ILP_BINARY_ONE 0.5

/* Adds coefficient v at (r, c); ignored when r < 0 (a row that failed). */
void olla_ilp_add(olla_ilp_matrix *m, int r, int c, double v);
/* Adds a row lo <= a.x <= hi and returns its index, or -1 once oom. */
int olla_ilp_row(olla_ilp_matrix *m, double lo, double hi);
/* Column-major copy for Cbc_loadProblem (start has ncols + 1 entries);
 * returns 0 when out of memory. The caller frees the three arrays. */
int olla_ilp_columns(const olla_ilp_matrix *m, int ncols, int **start, int **index, double **value);
void olla_ilp_matrix_free(olla_ilp_matrix *m);

#endif
