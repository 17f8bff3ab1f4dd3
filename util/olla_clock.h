/* olla-onnx: time and interruption. One monotonic clock for every deadline,
 * and the stop request a signal handler sets to end long phases early. */
#ifndef OLLA_CLOCK_H
#define OLLA_CLOCK_H

#include <signal.h>
#include <time.h>

#include "olla_error.h"

/* Seconds on CLOCK_MONOTONIC. Deadlines are values of this clock; a
 * deadline <= 0 means none. */
static inline double olla_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Set (from a signal handler, say) to ask long phases to stop early; public
 * (include/olla.h), so its definition is exported like the declaration. */
OLLA_API extern volatile sig_atomic_t olla_stop_requested;

/* How much work a search may do: a budget in its own unit of work (each
 * search says which; <= 0: none), deterministic whatever the machine's load,
 * and a deadline (<= 0: none) as a safety net. */
typedef struct olla_limit {
    long budget;
    double deadline;
} olla_limit;

/* 1 when a stop was requested or the deadline (> 0) has passed. */
static inline int olla_past(double deadline)
{
    return olla_stop_requested || (deadline > 0 && olla_now() > deadline);
}

#endif
