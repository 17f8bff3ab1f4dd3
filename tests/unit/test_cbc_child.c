/* The solver's child process (solver/olla_cbc_child.h) counts its limit like
 * a deadline: a child that waits (sleeps, as on a busy machine) is not cut
 * short when the wall clock passes its limit, only at the hard stop
 * (OLLA_DEADLINE_WALL_FACTOR times the limit); a child that runs is killed
 * once it has used its limit of CPU time; a child that returns in time
 * hands back its result; and the parent's CPU clock (olla_cpu_now) counts
 * the child's CPU time once it has ended. Also olla_deadline_left. */
#include <string.h>
#include <time.h>

#include "olla_test.h"
#include "solver/olla_cbc_child.h"
#include "util/olla_clock.h"

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static double own_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* a job that sleeps ctx's seconds, then writes its limit as its result */
static olla_status sleeper(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    (void)err;
    sleep_seconds(*(const double *)ctx);
    memcpy(out, &cbc_limit, sizeof cbc_limit);
    return OLLA_OK;
}

/* a job that runs for ctx's seconds of its CPU time, then writes 1 */
static olla_status spinner(void *ctx, double cbc_limit, void *out, olla_error *err)
{
    (void)err;
    (void)cbc_limit;
    double start = own_cpu();
    volatile unsigned long x = 0;
    while (own_cpu() - start < *(const double *)ctx)
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
    double one = 1.0;
    memcpy(out, &one, sizeof one);
    return OLLA_OK;
}

/* runs fn(ctx) with the limit; returns whether it finished, its result in *got */
static int run_job(olla_cbc_solve_fn fn, double ctx, double limit, double *got, double *wall)
{
    olla_error err = {0};
    olla_cbc_outcome outcome;
    *got = -1.0;
    double t0 = olla_now();
    olla_status st = olla_cbc_child_run(&(olla_cbc_job){fn, &ctx, got, sizeof *got}, limit, &outcome, &err);
    *wall = olla_now() - t0;
    OLLA_CHECK(st == OLLA_OK);
    OLLA_CHECK(outcome.crash_signal == 0);
    return outcome.finished;
}

OLLA_TEST(test_waiting_child_is_not_cut_short)
{
    const double limit = 0.1;
    double got, wall;
    /* sleeps three times its limit: no CPU time used, under the hard stop */
    OLLA_CHECK(run_job(sleeper, 3 * limit, limit, &got, &wall));
    OLLA_CHECK(wall >= 3 * limit);
    OLLA_CHECK(got > 0 && got < limit); /* the solver's own limit: a little under it */
}

OLLA_TEST(test_waiting_child_ends_at_the_hard_stop)
{
    const double limit = 0.05;
    double got, wall;
    OLLA_CHECK(!run_job(sleeper, 60.0, limit, &got, &wall));
    OLLA_CHECK(got == -1.0); /* out left as it was */
    OLLA_CHECK(wall >= OLLA_DEADLINE_WALL_FACTOR * limit);
    OLLA_CHECK(wall < 30.0);
}

OLLA_TEST(test_running_child_is_killed_and_counted)
{
    const double limit = 0.2;
    double got, wall;
    double cpu0 = olla_cpu_now(), own0 = own_cpu();
    /* asks for 60 CPU seconds: killed after its limit of CPU time */
    OLLA_CHECK(!run_job(spinner, 60.0, limit, &got, &wall));
    OLLA_CHECK(got == -1.0);
    OLLA_CHECK(wall < 30.0);
    double child = (olla_cpu_now() - cpu0) - (own_cpu() - own0);
    OLLA_CHECK(child >= limit); /* the ended child's CPU time counts */
    /* a short run finishes with its result */
    OLLA_CHECK(run_job(spinner, 0.01, 2.0, &got, &wall));
    OLLA_CHECK(got == 1.0);
}

OLLA_TEST(test_deadline_left)
{
    double t0 = olla_clock_start();
    double d = t0 + 0.2;
    double left = olla_deadline_left(d);
    OLLA_CHECK(left > 0.1 && left <= 0.2);
    double c0 = olla_cpu_now();
    sleep_seconds(0.3); /* the wall clock passes it; the CPU time does not */
    if (olla_cpu_now() - c0 >= 0.1) {
        olla_test_skip("sleeping used CPU time");
        return;
    }
    left = olla_deadline_left(d);
    OLLA_CHECK(!olla_past(d) == (left > 0));
    OLLA_CHECK(left > 0.05);
    sleep_seconds(OLLA_DEADLINE_WALL_FACTOR * 0.2); /* past the hard stop */
    OLLA_CHECK(olla_deadline_left(d) == 0);
    OLLA_CHECK(olla_past(d));
}

OLLA_TEST_MAIN(OLLA_T(test_waiting_child_is_not_cut_short), OLLA_T(test_waiting_child_ends_at_the_hard_stop),
               OLLA_T(test_running_child_is_killed_and_counted), OLLA_T(test_deadline_left))
