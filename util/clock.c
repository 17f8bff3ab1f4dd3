/* olla-onnx: deadlines that count the time the process runs. A deadline is a
 * value of the wall clock (olla_now); it passes when the wall clock is past it
 * and, counted from the start of the run (or from the first time the
 * deadline is asked about), the process has used as many CPU seconds as the
 * wall clock says. A busy machine slows
 * the wall clock's seconds, not the work done in them, so the searches that
 * a deadline guards end after the same work on a quiet or a busy machine
 * (until the CPU time itself runs out). */
#include "util/olla_clock.h"

#include <sys/resource.h>

/* the deadlines asked about lately, each with the wall clock and the CPU
 * time at its first question; the oldest is replaced */
enum { DEADLINE_SLOTS = 8 };

typedef struct {
    double deadline, wall, cpu;
} deadline_slot;

static _Thread_local deadline_slot slots[DEADLINE_SLOTS];
static _Thread_local int next_slot;
/* the start of the run: wall clock and CPU time (wall 0: none); one for the
 * process, so that the threads a search starts count from it too (runs do
 * not overlap: the library plans one model at a time) */
static deadline_slot run;

double olla_clock_start(void)
{
    run = (deadline_slot){0, olla_now(), olla_cpu_now()};
    for (int i = 0; i < DEADLINE_SLOTS; i++)
        slots[i].deadline = 0;
    return run.wall;
}

double olla_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    double self = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return self;
    return self + (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* the slot of a deadline, made when it is first asked about */
static deadline_slot *slot_of(double deadline, double now)
{
    int i = 0;
    while (i < DEADLINE_SLOTS && slots[i].deadline != deadline)
        i++;
    if (i == DEADLINE_SLOTS) { /* first asked now: counted from the run's start, or from now */
        i = next_slot;
        next_slot = (next_slot + 1) % DEADLINE_SLOTS;
        slots[i] = run.wall > 0 ? (deadline_slot){deadline, run.wall, run.cpu}
                                : (deadline_slot){deadline, now, olla_cpu_now()};
    }
    return &slots[i];
}

/* The hard stop: a machine so loaded that the process got less than one
 * CPU second in OLLA_DEADLINE_WALL_FACTOR of the wall clock ends the run
 * there, so that a time limit still bounds the wall clock. */
static int hard_stop(double elapsed, double limit)
{
    return elapsed > OLLA_DEADLINE_WALL_FACTOR * limit;
}

/* the deadline rule on any clocks (olla_clock.h) */
int olla_limit_passed(double elapsed, double limit, olla_cpu_seconds cpu, const void *ctx)
{
    if (elapsed <= limit)
        return 0;
    if (hard_stop(elapsed, limit))
        return 1;
    double used = cpu(ctx);
    return used >= 0 && used > limit;
}

/* the process's CPU seconds since a deadline's slot started counting */
static double slot_cpu(const void *ctx)
{
    return olla_cpu_now() - ((const deadline_slot *)ctx)->cpu;
}

int olla_deadline_passed(double deadline)
{
    double now = olla_now();
    const deadline_slot *s = slot_of(deadline, now);
    return olla_limit_passed(now - s->wall, deadline - s->wall, slot_cpu, s);
}

double olla_deadline_left(double deadline)
{
    double now = olla_now();
    const deadline_slot *s = slot_of(deadline, now);
    if (hard_stop(now - s->wall, deadline - s->wall))
        return 0;
    double wall_left = deadline - now, cpu_left = deadline - (s->wall + (olla_cpu_now() - s->cpu));
    double left = wall_left > cpu_left ? wall_left : cpu_left;
    return left > 0 ? left : 0;
}
