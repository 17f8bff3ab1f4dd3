/* olla-onnx: the run of a graph under a memory limit that frees tensors
 * when it must and recomputes them when they are read again (remat_sim.c),
 * shared by the search (remat.c) and the exact program's decoding. Private
 * to solver/. */
#ifndef OLLA_REMAT_SIM_H
#define OLLA_REMAT_SIM_H

#include "solver/olla_remat.h"

/* What the problem says once, for every run of the simulation. */
typedef struct remat_ctx {
    const olla_remat_problem *p;
    const olla_dag *dag;
    int n, nt;
    int *pos;                  /* per node: its step in the base order */
    int *use_start, *use_pos;  /* per tensor: the steps of its readers, ascending (CSR) */
    int *last_use;             /* per tensor: its last reader's step, its producer's when unread, n for outputs */
    int *view_start, *view_list; /* per tensor: the views whose buffer it holds (CSR) */
    unsigned char *eligible;   /* per tensor: may be freed before its last reader and recomputed */
    int *gap_start, *gap_end;  /* per tensor: the widest stretch of steps between its producer and readers
                                  that reads it (gap_start < step < gap_end); -1 when under REMAT_MIN_GAP of
                                  the order, or not eligible */
    unsigned char *always;     /* per tensor: takes no memory of its own, never freed (0 bytes, no root) */
    double total_cost;         /* of every node once */
} remat_ctx;

olla_status remat_ctx_init(remat_ctx *c, const olla_remat_problem *p, olla_error *err);
void remat_ctx_free(remat_ctx *c);

/* How the simulation picks what to free. */
enum { REMAT_SCORE_COST = 0, REMAT_SCORE_DISTANCE = 1, REMAT_SCORE_COST_SQUARED = 2 };
typedef struct remat_policy {
    int score;                     /* REMAT_SCORE_* */
    const unsigned char *protect;  /* per tensor, may be NULL: never freed early */
    const unsigned char *prefer;   /* per tensor, may be NULL: freed first */
    const unsigned char *drop;     /* per tensor, may be NULL: freed as soon as its gap starts (the
                                      checkpointing of Chen et al.: recomputed after the gap) */
} remat_policy;

/* A gap shorter than this fraction of the order is not worth a drop. */
#define REMAT_MIN_GAP 0.0625

/* The bytes one simulation keeps under, and the peak its plan must not
 * pass to be kept. */
typedef struct remat_limits {
    int64_t limit;  /* the simulation's bytes stay at most this */
    int64_t accept; /* the plan fits when its exact peak is at most this */
} remat_limits;

/* Runs the base order with the policy, keeping the simulation's bytes
 * under lim.limit. *fits is 1 when it could, and the plan it made peaks at
 * most lim.accept; then plan holds the runs (peak: exact, of the plan's
 * DAG). The simulation counts a tensor it frees under pressure until it
 * frees it, past its last reader, so a plan often peaks below its limit: a
 * limit above `accept` can give a plan that fits it. *work receives the
 * work done (runs simulated, scores evaluated, tensors walked). */
olla_status remat_simulate(const remat_ctx *c, const remat_policy *pol, remat_limits lim, olla_remat_plan *plan,
                           int *fits, long *work, olla_error *err);

/* A plan from a sequence of node runs, the first run of each node its
 * original: each run reads the latest version of each input; a view whose
 * buffer was written again since the view was made is made again (a copy
 * of its producer, inserted right before the reader), so that a reader
 * never reads a view of a dead version. Measured (plan->peak).
 * OLLA_ERR_INTERNAL when a run reads a tensor no earlier run wrote. */
olla_status remat_plan_from_runs(const olla_remat_problem *p, const int *nodes, int n, olla_remat_plan *plan,
                                 olla_error *err);

/* The exact peak of a plan (its DAG, runs in order); fills plan->peak. */
olla_status remat_plan_measure(const olla_remat_problem *p, olla_remat_plan *plan, olla_error *err);

#endif
