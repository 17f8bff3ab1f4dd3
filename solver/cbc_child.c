/* olla-onnx: a CBC solve in a child process killed when its limit passes. */
#include "solver/olla_cbc_child.h"
#include "util/olla_clock.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "solver/olla_schedule.h"

/* CBC's own limit in the child: this share of the time limit less a margin,
 * so that it stops by itself and reports its best result before the parent's
 * deadline; never below the floor. */
#define OLLA_CBC_TIME_SHARE 0.85
#define OLLA_CBC_TIME_MARGIN 0.05
#define OLLA_CBC_MIN_SECONDS 0.01
/* Grace after the limit for the child's status word, its error message
 * and its result: it may still be writing them. */
#define OLLA_CBC_GRACE_CODE 0.05
#define OLLA_CBC_GRACE_MESSAGE 0.2
#define OLLA_CBC_GRACE_RESULT 0.3

/* writes all of buf, returns 0 on failure */
static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        p += w;
        len -= (size_t)w;
    }
    return 1;
}

/* How often, in milliseconds, the wait for the solver looks at
 * olla_stop_requested and at the child's CPU time. */
#define STOP_POLL_MS 100

/* The child's limit as the parent counts it: like a deadline
 * (olla_deadline_passed), it passes when the wall clock and the child's own
 * CPU time have both run `seconds` since the start, or at
 * OLLA_DEADLINE_WALL_FACTOR times that on the wall clock (the hard stop). A
 * child waiting for a busy machine's CPU is not cut short. */
typedef struct {
    double start, seconds;
    clockid_t cpu; /* the child's CPU clock */
    int has_cpu;   /* 0: not readable here, the wall clock alone counts up to the hard stop */
} child_limit;

/* the child's CPU seconds, negative when they cannot be read (an ended
 * child: its result or the end of the pipe comes) */
static double child_cpu(const void *ctx)
{
    const child_limit *c = ctx;
    struct timespec ts;
    if (!c->has_cpu || clock_gettime(c->cpu, &ts) != 0)
        return -1;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 when the child has used up its limit plus `grace` seconds */
static int child_past(const child_limit *c, double grace)
{
    return olla_limit_passed(olla_now() - c->start, c->seconds + grace, child_cpu, c);
}

/* reads all of buf before the child's limit plus grace, returns 0 on failure
 * or timeout */
static int read_all_until(int fd, void *buf, size_t len, const child_limit *c, double grace)
{
    char *p = buf;
    while (len > 0) {
        if (child_past(c, grace) || olla_stop_requested)
            return 0;
        /* a stop request set by another thread (a host's caller waiting on
         * Ctrl-C) interrupts no poll here: wake up every STOP_POLL_MS to see it */
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, STOP_POLL_MS);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return 0;
        if (pr == 0)
            continue; /* the limit is checked above */
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        p += r;
        len -= (size_t)r;
    }
    return 1;
}

/* In the child: default actions, so that a crash inside CBC ends only the
 * child, quietly (no report from handlers inherited from a sanitizer or a
 * fuzzer), and SIGINT/SIGTERM end it at once; it never outlives the caller. */
static void child_signals(pid_t parent)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(1);
}

/* In the child: runs the job with CBC's own limit (CPU seconds, CBC's
 * "timeMode" "cpu") a little under time_limit, writes its status word and
 * then its error message or its result (into buf first) to fd, and exits. */
static _Noreturn void child_main(const olla_cbc_job *job, double time_limit, void *buf, int fd, pid_t parent)
{
    child_signals(parent);
    olla_error cerr = {0};
    /* leave CBC a margin to stop by itself and report its best result */
    double lim = OLLA_CBC_TIME_SHARE * time_limit - OLLA_CBC_TIME_MARGIN;
    if (lim < OLLA_CBC_MIN_SECONDS)
        lim = OLLA_CBC_MIN_SECONDS;
    int code = (int)job->fn(job->ctx, lim, buf, &cerr);
    int sent = write_all(fd, &code, sizeof code);
    if (sent && code != OLLA_OK)
        sent = write_all(fd, cerr.message, sizeof cerr.message);
    else if (sent)
        sent = write_all(fd, buf, job->out_len);
    _exit(sent ? 0 : 1);
}

/* Forks, waits for the result until the child's limit, and reads it back
 * (olla_cbc_child.h). */
olla_status olla_cbc_child_run(const olla_cbc_job *job, double time_limit, olla_cbc_outcome *outcome, olla_error *err)
{
    olla_cbc_outcome unused;
    if (!outcome)
        outcome = &unused;
    outcome->finished = outcome->crash_signal = 0;
    if (time_limit <= 0) {
        olla_status st = job->fn(job->ctx, 0, job->out, err);
        outcome->finished = 1;
        return st;
    }
    child_limit lim = {olla_now(), time_limit, 0, 0};
    size_t out_len = job->out_len;
    void *buf = malloc(out_len + 1);
    if (!buf)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory starting the ILP solver");
    int fds[2];
    if (pipe(fds) != 0) {
        free(buf);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot create a pipe for the ILP solver: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(buf);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot start the ILP solver process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(job, time_limit, buf, fds[1], parent);
    }
    close(fds[1]);
    lim.has_cpu = clock_getcpuclockid(pid, &lim.cpu) == 0;
    int code = -1;
    char msg[sizeof err->message];
    int ok = read_all_until(fds[0], &code, sizeof code, &lim, OLLA_CBC_GRACE_CODE);
    if (ok && code != OLLA_OK)
        ok = read_all_until(fds[0], msg, sizeof msg, &lim, OLLA_CBC_GRACE_MESSAGE);
    else if (ok)
        ok = read_all_until(fds[0], buf, out_len, &lim, OLLA_CBC_GRACE_RESULT);
    close(fds[0]);
    if (!ok)
        kill(pid, SIGKILL);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
#ifdef OLLA_SANITIZER_EXIT
    /* sanitizer builds: a report in the child ends this process the same way,
     * so that it cannot pass for "the solver found nothing" */
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == OLLA_SANITIZER_EXIT) {
        free(buf);
        _exit(OLLA_SANITIZER_EXIT);
    }
#endif
    if (!ok) {
        /* a signal other than our SIGKILL: the solver crashed */
        if (WIFSIGNALED(wst) && WTERMSIG(wst) != SIGKILL)
            outcome->crash_signal = WTERMSIG(wst);
        free(buf);
        return OLLA_OK; /* nothing in time */
    }
    outcome->finished = 1;
    if (code != OLLA_OK) {
        free(buf);
        msg[sizeof msg - 1] = '\0';
        return olla_error_set(err, code == OLLA_ERR_INPUT ? OLLA_ERR_INPUT : OLLA_ERR_INTERNAL, "%s", msg);
    }
    memcpy(job->out, buf, out_len);
    free(buf);
    return OLLA_OK;
}
