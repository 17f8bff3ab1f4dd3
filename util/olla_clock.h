/* olla-onnx: time and interruption. One monotonic clock for every deadline
 * (which also counts the process's CPU time, see olla_deadline_passed), and
 * the stop request a signal handler sets to end long phases early. */
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

/* Seconds of CPU time this process has used, and the processes it started
 * and waited for (CBC's, solver/cbc_child.c): the time a run spends in a
 * solver's process counts against its deadlines as its own. (util/clock.c) */
double olla_cpu_now(void);

/* 1 when the deadline has passed on the wall clock and the process has also
 * run that long: the seconds to the deadline are seconds of the process's own
 * CPU time as well as of the wall clock, counted from the start of the run
 * (olla_clock_start) or else from the first time the deadline is asked
 * about. On a quiet machine the two agree; on a busy one the process gets
 * the CPU seconds it would have had, so the safety net does not end a search
 * earlier because other work shares the machine. (util/clock.c) */
int olla_deadline_passed(double deadline);

/* Whatever the CPU time, a deadline passes at this many times its seconds
 * on the wall clock (counted as above): the hard stop. */
#define OLLA_DEADLINE_WALL_FACTOR 10.0

/* The CPU seconds a clock has counted since its start, for
 * olla_limit_passed; a negative value: not readable. */
typedef double (*olla_cpu_seconds)(const void *ctx);

/* The deadline rule, on any pair of clocks: a limit of `limit` seconds
 * passes once `elapsed` wall seconds exceed it and the CPU seconds that
 * cpu(ctx) reads do too, or at once when `elapsed` exceeds
 * OLLA_DEADLINE_WALL_FACTOR times it (the hard stop). The CPU time is read
 * only after the wall clock has passed the limit, so a hot loop polls it
 * cheaply; an unreadable CPU time (negative) leaves the limit unpassed up to
 * the hard stop. olla_deadline_passed applies it to the process's own
 * clocks, the CBC child's wait (solver/cbc_child.c) to the child's.
 * (util/clock.c) */
int olla_limit_passed(double elapsed, double limit, olla_cpu_seconds cpu, const void *ctx);

/* Seconds a process that runs from now on without waiting has before the
 * deadline passes: the larger of the wall clock's and the CPU time's seconds
 * left (as olla_deadline_passed counts them), 0 once it has passed. A solver
 * given this many seconds of its own CPU time stops when the deadline would
 * have, on a quiet machine or a busy one. */
double olla_deadline_left(double deadline);

/* A run starts: the deadlines first asked about from now on, in any thread,
 * count CPU time (the whole process's) from here. Returns olla_now(). */
double olla_clock_start(void);

/* 1 when a stop was requested or the deadline (> 0) has passed, as
 * olla_deadline_passed says. */
static inline int olla_past(double deadline)
{
    return olla_stop_requested || (deadline > 0 && olla_deadline_passed(deadline));
}

#endif
