/* Deadlines count the time the process runs (util/olla_clock.h): a deadline
 * passes only when the wall clock is past it and the process has also used
 * that many CPU seconds, counted from the start of the run (or, before any
 * run started, from the first time the deadline is asked about). Seconds
 * spent waiting for the CPU, here sleeping, do not use up a deadline; seconds
 * spent running do; and no deadline passes before the wall clock says so. */
#include <stdint.h>
#include <time.h>

#include "olla_test.h"
#include "util/olla_clock.h"

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Spins until the deadline passes (or `cap` seconds of wall clock go by);
 * returns 1 when it passed, and checks it never passes before the wall
 * clock does. */
static int spin_until_past(double deadline, double cap)
{
    double stop = olla_now() + cap;
    volatile unsigned long x = 0;
    while (olla_now() < stop) {
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
        if (olla_past(deadline)) {
            OLLA_CHECK(olla_now() > deadline);
            return 1;
        }
    }
    return 0;
}

/* Whether the wall clock, `since` the start of the count, is still well short
 * of the hard stop for a deadline `limit` seconds after it: on a machine busy
 * enough that the process gets less than 1/OLLA_DEADLINE_WALL_FACTOR of a
 * core, the hard stop (tested below) is what ends the wait, not CPU time. */
static int before_hard_stop(double since, double limit)
{
    return olla_now() - since < 0.8 * OLLA_DEADLINE_WALL_FACTOR * limit;
}

/* one test: the first part needs a thread in which no run has started */
OLLA_TEST(test_waiting_does_not_use_up_a_deadline)
{
    const double wait = 0.3, limit = 0.1;
    /* no run started: counted from the first question */
    double c0 = olla_cpu_now(), w0 = olla_now();
    double d = w0 + limit;
    OLLA_CHECK(!olla_past(d));
    sleep_seconds(wait);
    if (olla_cpu_now() - c0 >= limit) {
        olla_test_skip("sleeping used CPU time");
        return;
    }
    OLLA_CHECK(olla_now() > d); /* the wall clock is past it */
    if (before_hard_stop(w0, limit))
        OLLA_CHECK(!olla_past(d)); /* the process has not run that long */
    OLLA_CHECK(spin_until_past(d, 30.0));
    if (before_hard_stop(w0, limit))
        OLLA_CHECK(olla_cpu_now() - c0 >= limit);

    /* a run: counted from its start, also for a deadline first asked late */
    double t0 = olla_clock_start();
    c0 = olla_cpu_now();
    sleep_seconds(wait);
    d = t0 + limit;
    if (olla_cpu_now() - c0 >= limit) {
        olla_test_skip("sleeping used CPU time");
        return;
    }
    OLLA_CHECK(olla_now() > d);
    if (before_hard_stop(t0, limit))
        OLLA_CHECK(!olla_past(d));
    OLLA_CHECK(spin_until_past(d, 30.0));
    if (before_hard_stop(t0, limit))
        OLLA_CHECK(olla_cpu_now() - c0 >= limit);

    /* a new run, running all along: the deadline passes, never before the
     * wall clock reaches it (checked in spin_until_past) */
    t0 = olla_clock_start();
    c0 = olla_cpu_now();
    d = olla_now() + limit;
    OLLA_CHECK(spin_until_past(d, 30.0));
    if (before_hard_stop(t0, limit))
        OLLA_CHECK(olla_cpu_now() - c0 >= limit - 0.01); /* the clocks' resolutions apart */
}

/* The hard stop: past OLLA_DEADLINE_WALL_FACTOR times its seconds on the
 * wall clock a deadline passes, whatever CPU time the process had. */
OLLA_TEST(test_hard_stop_on_the_wall_clock)
{
    const double limit = 0.05;
    double t0 = olla_clock_start(), c0 = olla_cpu_now();
    double d = t0 + limit;
    sleep_seconds(limit * (OLLA_DEADLINE_WALL_FACTOR - 4.0));
    if (olla_cpu_now() - c0 >= limit) {
        olla_test_skip("sleeping used CPU time");
        return;
    }
    if (before_hard_stop(t0, limit)) /* a sleep that overran on a busy machine may end past it */
        OLLA_CHECK(!olla_past(d)); /* past it on the wall clock, not at the hard stop */
    sleep_seconds(limit * 5.0);
    OLLA_CHECK(olla_now() - t0 > OLLA_DEADLINE_WALL_FACTOR * limit);
    OLLA_CHECK(olla_past(d));
}

OLLA_TEST(test_stop_request_and_no_deadline)
{
    olla_clock_start();
    OLLA_CHECK(!olla_past(0));                  /* no deadline */
    OLLA_CHECK(!olla_past(olla_now() + 100.0)); /* far ahead */
    olla_stop_requested = 1;
    OLLA_CHECK(olla_past(0));
    OLLA_CHECK(olla_past(olla_now() + 100.0));
    olla_stop_requested = 0;
}

/* a CPU clock the test sets, counting how often it is read */
typedef struct {
    double seconds;
    int reads;
} fake_cpu;

/* fake_cpu's reader for olla_limit_passed */
static double read_fake_cpu(const void *ctx)
{
    fake_cpu *f = (fake_cpu *)ctx;
    f->reads++;
    return f->seconds;
}

/* The rule on clocks the test sets, every case of it on random limits: the
 * CPU time read only once the wall clock is past the limit and before the
 * hard stop, an unreadable one never passing the limit before the hard stop. */
OLLA_TEST(test_limit_rule_on_given_clocks)
{
    uint64_t st = 77;
    for (int i = 0; i < 500; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double limit = 0.001 + (double)(st >> 40) / (double)(1ull << 24) * 50.0;
        double frac = (double)((st >> 8) & 0xffff) / 65536.0; /* in [0, 1) */
        fake_cpu f = {limit * 2, 0};
        /* within the limit on the wall clock: never passed, CPU not read */
        OLLA_CHECK(!olla_limit_passed(limit * frac, limit, read_fake_cpu, &f));
        OLLA_CHECK_EQ_I64(f.reads, 0);
        /* past it, before the hard stop: the CPU time decides */
        double wall = limit * (1.0 + frac * (OLLA_DEADLINE_WALL_FACTOR - 1.0) * 0.99) + limit * 1e-9;
        f.seconds = limit * frac;
        OLLA_CHECK(!olla_limit_passed(wall, limit, read_fake_cpu, &f));
        f.seconds = limit * (1.0 + frac) + 1e-9;
        OLLA_CHECK(olla_limit_passed(wall, limit, read_fake_cpu, &f));
        f.seconds = -1; /* unreadable */
        OLLA_CHECK(!olla_limit_passed(wall, limit, read_fake_cpu, &f));
        OLLA_CHECK_EQ_I64(f.reads, 3);
        /* the hard stop: passed whatever the CPU time, which is not read */
        OLLA_CHECK(olla_limit_passed(limit * OLLA_DEADLINE_WALL_FACTOR * (1.0 + frac) + 1e-6, limit, read_fake_cpu, &f));
        OLLA_CHECK_EQ_I64(f.reads, 3);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_waiting_does_not_use_up_a_deadline), OLLA_T(test_hard_stop_on_the_wall_clock),
               OLLA_T(test_stop_request_and_no_deadline), OLLA_T(test_limit_rule_on_given_clocks))
