/* A live progress line on stderr: rewritten in place on a terminal, plain
 * lines (one per phase) otherwise. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static void show(void *ctx, const char *phase, double elapsed, int64_t best, int64_t bound)
{
    olla_cli_progress *p = ctx;
    char line[200], a[32], b[32];
    int n = snprintf(line, sizeof line, "%s: %s %.1f s", p->model, phase, elapsed);
    if (best >= 0 && n < (int)sizeof line) {
        olla_cli_human_bytes(best, a, sizeof a);
        n += snprintf(line + n, sizeof line - (size_t)n, ", best %s", a);
    }
    if (bound >= 0 && n < (int)sizeof line) {
        olla_cli_human_bytes(bound, b, sizeof b);
        snprintf(line + n, sizeof line - (size_t)n, ", bound %s", b);
    }
    if (p->tty) {
        fprintf(stderr, "\r\033[K%s", line);
        p->shown = 1;
    } else if (strcmp(phase, p->last_phase) != 0) {
        fprintf(stderr, "%s\n", line);
    }
    snprintf(p->last_phase, sizeof p->last_phase, "%s", phase);
    fflush(stderr);
}

void olla_cli_progress_start(olla_cli_progress *p, olla_options *opt, const char *model)
{
    memset(p, 0, sizeof *p);
    p->model = model;
    p->tty = isatty(2);
    /* on a terminal by default; in logs only with -v */
    if (opt->verbosity >= 2 || (opt->verbosity >= 1 && p->tty)) {
        opt->progress = show;
        opt->progress_ctx = p;
    }
}

void olla_cli_progress_end(olla_cli_progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
}
