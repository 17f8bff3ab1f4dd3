/* olla-onnx: running a CBC solve in a child process with a hard deadline.
 * CBC does not check its own time limit while building or solving the root
 * relaxation, and a failure inside it must not take the caller down. */
#ifndef OLLA_CBC_CHILD_H
#define OLLA_CBC_CHILD_H

#include <stddef.h>

#include "olla_error.h"

/* The solve: writes its result (out_len bytes) to out. cbc_limit is the
 * time limit to give CBC itself (seconds, <= 0: none). */
typedef olla_status (*olla_cbc_solve_fn)(void *ctx, double cbc_limit, void *out, olla_error *err);

/* time_limit <= 0: runs fn in this process with no limit. Otherwise runs fn
 * in a forked child given a little less than time_limit, and kills it at
 * the deadline. *finished (may be NULL) is 1 when fn returned in time: then
 * out holds its result (on OLLA_OK) or its error is returned; when it did
 * not, OLLA_OK is returned and out is left as it was; *crash_signal (may be
 * NULL) then holds the signal that ended the child if the solver crashed
 * (never fatal to the caller), else 0. The child ends when the caller does,
 * and a pending SIGINT/SIGTERM (olla_stop_requested) stops the wait. */
olla_status olla_cbc_child_run(olla_cbc_solve_fn fn, void *ctx, void *out, size_t out_len, double time_limit,
                               int *finished, int *crash_signal, olla_error *err);

#endif
