/* olla-onnx tests: the DAG's liveness functions as plain values. An error
 * (only out of memory) ends the test program. */
#ifndef OLLA_TEST_DAG_EVAL_H
#define OLLA_TEST_DAG_EVAL_H

#include <stdio.h>
#include <stdlib.h>

#include "passes/analysis/olla_dag.h"

static inline int64_t peak_live(const olla_dag *d, const int *order, int64_t *live, int *at)
{
    int64_t p = -1;
    olla_error e = {0};
    if (olla_dag_peak(d, order, &p, live, at, &e) != OLLA_OK) {
        fprintf(stderr, "olla_dag_peak: %s\n", e.message);
        exit(2);
    }
    return p;
}

static inline int64_t peak_of(const olla_dag *d, const int *order)
{
    return peak_live(d, order, NULL, NULL);
}

static inline void lifetimes_of(const olla_dag *d, const int *order, int *first, int *last)
{
    olla_error e = {0};
    if (olla_dag_lifetimes(d, order, first, last, &e) != OLLA_OK) {
        fprintf(stderr, "olla_dag_lifetimes: %s\n", e.message);
        exit(2);
    }
}

#endif
