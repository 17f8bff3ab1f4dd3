/* The live progress line of one conversion, on stderr.
 *
 * On a terminal one line, rewritten in place and never wider than 79
 * columns: the phase, the seconds so far, the best peak (arena once placed)
 * and the proven lower bound, and the model's name, shortened from the left
 * to fit. A ticker thread redraws it four times a second, so the seconds go
 * on counting inside long phases. In a log (not a terminal), with -v, it is
 * one plain line per phase instead. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/olla_clock.h"

#define LINE_WIDTH 79

/* The line for the current state, into buf (at most LINE_WIDTH columns). */
static void format_line(const olla_cli_progress *p, double elapsed, char *buf, size_t n)
{
    char head[LINE_WIDTH + 1], a[32], b[32];
    int k = snprintf(head, sizeof head, "%s %.1f s", p->phase, elapsed);
    if (p->best >= 0 && k < (int)sizeof head) {
        olla_cli_human_bytes(p->best, a, sizeof a);
        /* the arena exists once placement is done; before that the best
         * order's peak is what the arena will be placed into */
        k += snprintf(head + k, sizeof head - (size_t)k, ", %s %s", strcmp(p->phase, "checking") == 0 ? "arena" : "peak",
                      a);
    }
    if (p->bound >= 0 && k < (int)sizeof head) {
        olla_cli_human_bytes(p->bound, b, sizeof b);
        k += snprintf(head + k, sizeof head - (size_t)k, ", bound %s", b);
    }
    if (k >= (int)sizeof head)
        k = (int)sizeof head - 1;
    /* "<model>: <head>", the model shortened from the left */
    int room = LINE_WIDTH - k - 2;
    int len = (int)strlen(p->model);
    if (room >= 8 && len > room)
        snprintf(buf, n, "...%s: %s", p->model + len - (room - 3), head);
    else if (room >= 8)
        snprintf(buf, n, "%s: %s", p->model, head);
    else
        snprintf(buf, n, "%s", head);
    if (n > LINE_WIDTH)
        buf[LINE_WIDTH] = '\0';
}

static void draw(olla_cli_progress *p)
{
    char line[256];
    format_line(p, p->elapsed + (olla_now() - p->seen_at), line, sizeof line);
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->shown = 1;
}

static void *ticker(void *arg)
{
    olla_cli_progress *p = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the main thread's */
    struct timespec quarter = {0, 250000000L};
    for (;;) {
        nanosleep(&quarter, NULL);
        pthread_mutex_lock(&p->lock);
        int stop = p->stop;
        if (!stop && p->phase[0])
            draw(p);
        pthread_mutex_unlock(&p->lock);
        if (stop)
            return NULL;
    }
}

static void on_progress(void *ctx, const char *phase, double elapsed, int64_t best, int64_t bound)
{
    olla_cli_progress *p = ctx;
    pthread_mutex_lock(&p->lock);
    int new_phase = strcmp(phase, p->phase) != 0;
    snprintf(p->phase, sizeof p->phase, "%s", phase);
    p->elapsed = elapsed;
    p->seen_at = olla_now();
    p->best = best;
    p->bound = bound;
    if (p->live) {
        draw(p);
    } else if (new_phase) {
        char line[256];
        format_line(p, elapsed, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    pthread_mutex_unlock(&p->lock);
}

void olla_cli_progress_start(olla_cli_progress *p, olla_options *opt, const char *model)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    const char *slash = strrchr(model, '/');
    p->model = slash && slash[1] ? slash + 1 : model;
    p->best = p->bound = -1;
    int tty = isatty(2);
    /* on a terminal by default; in logs only with -v, one line a phase. With
     * -v on a terminal the library's own detail lines would cut into a
     * redrawn line, so the line is plain there too. */
    if (opt->verbosity >= 2 || (opt->verbosity >= 1 && tty)) {
        opt->progress = on_progress;
        opt->progress_ctx = p;
        p->live = tty && opt->verbosity == 1;
        if (p->live)
            p->ticking = pthread_create(&p->thread, NULL, ticker, p) == 0;
    }
}

void olla_cli_progress_end(olla_cli_progress *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_mutex_unlock(&p->lock);
    if (p->ticking)
        pthread_join(p->thread, NULL);
    p->ticking = 0;
    if (p->shown)
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
    pthread_mutex_destroy(&p->lock);
}
