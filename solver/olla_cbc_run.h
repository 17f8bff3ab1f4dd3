/* olla-onnx: running CBC under a hard wall-clock deadline (solver/cbc_run.c).
 *
 * CBC's own time limit is not checked while it solves the root LP, and its
 * solver installs a SIGINT handler of its own. So the solve runs in a child
 * process: the caller's signal handlers stay in place, and a child still
 * busy at the deadline is killed and reports nothing. */
#ifndef OLLA_CBC_RUN_H
#define OLLA_CBC_RUN_H

#include <coin/Cbc_C_Interface.h>

#include "olla_error.h"

typedef struct olla_cbc_outcome {
    int has_solution;     /* 1: sol holds the best solution CBC found */
    int proven_optimal;   /* CBC proved sol optimal */
    int stopped;          /* no answer: the deadline passed first (the child was killed) or it died */
    int crashed;          /* the signal that ended the child when CBC itself crashed, else 0 */
    double best_possible; /* CBC's bound on the objective; NAN when none */
    double *sol;          /* n_cols values when has_solution (malloc'd), else NULL */
} olla_cbc_outcome;

/* Solves the loaded model with the limit seconds (<= 0: none). CBC is told
 * the limit; the child gets a short grace beyond it to return what it found
 * and is then killed. When no child can be started the outcome is empty
 * (nothing found), never an error: the ILPs only improve on heuristics.
 * Errors: OLLA_ERR_INTERNAL when out of memory. */
olla_status olla_cbc_solve(Cbc_Model *model, int n_cols, double seconds, olla_cbc_outcome *out, olla_error *err);
void olla_cbc_outcome_free(olla_cbc_outcome *out);

#endif
