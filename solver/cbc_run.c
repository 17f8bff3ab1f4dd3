/* olla-onnx: CBC in a child process with a hard deadline (see olla_cbc_run.h).
 * The child solves, writes a small header and the solution vector into a
 * pipe, and exits; the parent reads until the deadline and kills the child
 * if it is still busy then. */
#include "solver/olla_cbc_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "olla.h"

typedef struct cbc_header {
    int32_t has_solution, proven_optimal;
    double best_possible;
} cbc_header;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time CBC may take beyond its limit to stop and hand back its solution. */
static double grace(double seconds)
{
    double g = 0.25 + 0.1 * seconds;
    return g > 1.0 ? 1.0 : g;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static void child(Cbc_Model *model, int n_cols, double seconds, int fd, pid_t parent)
{
    /* default actions: a crash inside CBC ends the child quietly (the
     * parent keeps its heuristic result), with no report from handlers
     * inherited from a sanitizer or fuzzer */
    static const int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the parent */
#endif
    if (getppid() != parent)
        _exit(1);
    if (seconds > 0) {
        Cbc_setParameter(model, "timeMode", "elapsed");
        Cbc_setMaximumSeconds(model, seconds);
    }
    Cbc_solve(model);
    const double *sol = Cbc_bestSolution(model);
    cbc_header h = {sol != NULL, Cbc_isProvenOptimal(model) != 0, Cbc_getBestPossibleObjValue(model)};
    if (write_all(fd, &h, sizeof h) != 0 || (sol && write_all(fd, sol, (size_t)n_cols * sizeof(double)) != 0))
        _exit(1);
    _exit(0);
}

void olla_cbc_outcome_free(olla_cbc_outcome *out)
{
    free(out->sol);
    out->sol = NULL;
    out->has_solution = 0;
}

olla_status olla_cbc_solve(Cbc_Model *model, int n_cols, double seconds, olla_cbc_outcome *out, olla_error *err)
{
    memset(out, 0, sizeof *out);
    out->best_possible = NAN;
    double *sol = malloc(((size_t)n_cols + 1) * sizeof *sol);
    if (!sol)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory for a solution of %d columns", n_cols);
    int fds[2];
    if (pipe(fds) != 0) {
        free(sol);
        return OLLA_OK; /* no child: nothing found */
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(sol);
        return OLLA_OK;
    }
    if (pid == 0) {
        close(fds[0]);
        child(model, n_cols, seconds, fds[1], parent);
    }
    close(fds[1]);
    double deadline = seconds > 0 ? now_s() + seconds + grace(seconds) : 0;
    cbc_header h;
    size_t got = 0, need = sizeof h;
    int complete = 0;
    while (!olla_stop_requested) {
        int ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0)
                break;
            ms = (int)(left * 1000.0) + 1;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        char *dst = got < sizeof h ? (char *)&h + got : (char *)sol + (got - sizeof h);
        size_t want = got < sizeof h ? sizeof h - got : need - got;
        ssize_t k = read(fds[0], dst, want);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            break; /* the child ended without a full answer */
        got += (size_t)k;
        if (got == sizeof h && h.has_solution)
            need = sizeof h + (size_t)n_cols * sizeof(double);
        if (got == need) {
            complete = 1;
            break;
        }
    }
    close(fds[0]);
    int killed = !complete && kill(pid, SIGKILL) == 0;
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (!complete) {
        out->stopped = 1;
        if (WIFSIGNALED(wst) && !(killed && WTERMSIG(wst) == SIGKILL))
            out->crashed = WTERMSIG(wst);
        free(sol);
        return OLLA_OK;
    }
    out->proven_optimal = h.proven_optimal != 0;
    out->best_possible = h.best_possible;
    if (h.has_solution) {
        out->has_solution = 1;
        out->sol = sol;
    } else {
        free(sol);
    }
    return OLLA_OK;
}
