/* olla-onnx: running a CBC solve in a child process with a hard deadline.
 * CBC does not check its own time limit while building or solving the root
 * relaxation, and a failure inside it must not take the caller down. */
#ifndef OLLA_CBC_CHILD_H
#define OLLA_CBC_CHILD_H

#include <stddef.h>

#include "olla_error.h"

/* The solve: writes its result (out_len bytes) to out. cbc_limit is the
 * time limit to give CBC itself (seconds of CPU time, CBC's "timeMode"
 * "cpu"; <= 0: none). */
typedef olla_status (*olla_cbc_solve_fn)(void *ctx, double cbc_limit, void *out, olla_error *err);

/* A solve to run: fn(ctx, ...) writes out_len bytes to out. */
typedef struct olla_cbc_job {
    olla_cbc_solve_fn fn;
    void *ctx;
    void *out;
    size_t out_len;
} olla_cbc_job;

/* How a run ended: finished is 1 when fn returned in time; crash_signal the
 * signal that ended the child if the solver crashed, else 0. */
typedef struct olla_cbc_outcome {
    int finished, crash_signal;
} olla_cbc_outcome;

/* time_limit <= 0: runs job->fn in this process with no limit. Otherwise
 * runs it in a forked child given a little less than time_limit seconds of
 * CPU time, and kills it once it has run time_limit seconds of both the wall
 * clock and its own CPU time, or OLLA_DEADLINE_WALL_FACTOR times that on the
 * wall clock (util/olla_clock.h), so that a busy machine gives the solver
 * the same work as a quiet one. The parent counts the child's CPU time as
 * its own once it has ended (olla_cpu_now). outcome (may be NULL) receives
 * how it ended: when finished, job->out holds the result (on OLLA_OK) or
 * its error is returned; when not, OLLA_OK is returned and job->out is left
 * as it was, and a crash of the solver is never fatal to the caller. The child ends
 * when the caller does, and a pending SIGINT/SIGTERM (olla_stop_requested)
 * stops the wait. */
olla_status olla_cbc_child_run(const olla_cbc_job *job, double time_limit, olla_cbc_outcome *outcome, olla_error *err);

#endif
