/* The library never prints: with the options of `olla-onnx -v` a planning
 * call writes nothing to stderr or stdout itself, and its diagnostics reach
 * the log callback instead, a line each, at the levels olla_options.verbosity
 * asks for. The placement alone (olla_place, what `olla-onnx place -v` runs)
 * delivers its lines the same way. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "olla.h"
#include "olla_test.h"
#include "solver/olla_place.h"

typedef struct collected {
    int n, n_detail, n_warning, bad_line;
    char lines[512][256];
} collected;

static void collect(void *ctx, olla_log_level level, const char *message)
{
    collected *c = ctx;
    if (strchr(message, '\n') || !message[0])
        c->bad_line++;
    if (level == OLLA_LOG_DETAIL)
        c->n_detail++;
    else if (level == OLLA_LOG_WARNING)
        c->n_warning++;
    else
        c->bad_line++;
    if (c->n < 512)
        snprintf(c->lines[c->n], sizeof c->lines[c->n], "%s", message);
    c->n++;
}

/* What the process writes to fds 1 and 2 while it is captured. */
typedef struct capture {
    int saved_out, saved_err, fd;
    char path[64];
} capture;

static int capture_start(capture *k)
{
    snprintf(k->path, sizeof k->path, "/tmp/olla-test-log-XXXXXX");
    fflush(stdout);
    fflush(stderr);
    k->fd = mkstemp(k->path);
    k->saved_out = dup(1);
    k->saved_err = dup(2);
    if (k->fd < 0 || k->saved_out < 0 || k->saved_err < 0)
        return 0;
    dup2(k->fd, 1);
    dup2(k->fd, 2);
    return 1;
}

/* Restores fds 1 and 2; returns the bytes written meanwhile (-1 on failure). */
static long capture_end(capture *k)
{
    fflush(stdout);
    fflush(stderr);
    dup2(k->saved_out, 1);
    dup2(k->saved_err, 2);
    close(k->saved_out);
    close(k->saved_err);
    struct stat st;
    long size = fstat(k->fd, &st) == 0 ? (long)st.st_size : -1;
    if (size > 0) { /* show what leaked */
        char buf[512];
        ssize_t r = pread(k->fd, buf, sizeof buf - 1, 0);
        buf[r > 0 ? r : 0] = '\0';
        fprintf(stderr, "printed by the library: %s\n", buf);
    }
    close(k->fd);
    unlink(k->path);
    return size;
}

static int has_line(const collected *c, const char *prefix)
{
    for (int i = 0; i < c->n && i < 512; i++)
        if (strncmp(c->lines[i], prefix, strlen(prefix)) == 0)
            return 1;
    return 0;
}

/* Plans the bundled CNN training step with --joint (skipped under the default
 * runtime: a detail line from the pipeline itself) at this verbosity. */
static int plan_quietly(int verbosity, olla_log_fn fn, collected *c, long *printed)
{
    olla_model *m = NULL;
    olla_error err = {0};
    if (olla_model_load(OLLA_SOURCE_DIR "/models/cnn_train.onnx", &m, &err) != OLLA_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 0;
    }
    olla_options opt;
    olla_options_init(&opt);
    opt.verbosity = verbosity;
    opt.joint = 1;
    opt.log = fn;
    opt.log_ctx = c;
    olla_plan *plan = NULL;
    olla_report rep;
    capture k;
    int ok = capture_start(&k);
    olla_status st = olla_optimize(m, &opt, &plan, &rep, &err);
    *printed = capture_end(&k);
    if (st != OLLA_OK)
        fprintf(stderr, "planning failed: %s\n", err.message);
    ok = ok && st == OLLA_OK;
    if (st == OLLA_OK) {
        olla_plan_free(plan);
        olla_report_clear(&rep);
    }
    olla_model_free(m);
    return ok;
}

/* -v: details from the ordering, the placement and the pipeline reach the
 * callback, one line each without a newline; nothing is printed. */
OLLA_TEST(test_details_reach_the_callback_and_nothing_is_printed)
{
    static collected c;
    memset(&c, 0, sizeof c);
    long printed = -1;
    OLLA_CHECK(plan_quietly(2, collect, &c, &printed));
    OLLA_CHECK_EQ_I64(printed, 0);
    OLLA_CHECK(c.n_detail > 0);
    OLLA_CHECK_EQ_I64(c.bad_line, 0);
    OLLA_CHECK(has_line(&c, "olla: heuristic peak "));        /* the ordering */
    OLLA_CHECK(has_line(&c, "place: "));                      /* the placement */
    OLLA_CHECK(has_line(&c, "olla: joint ILP skipped: "));    /* the pipeline */
    for (int i = 0; i < c.n && i < 512; i++)
        OLLA_CHECK(!strncmp(c.lines[i], "olla: ", 6) || !strncmp(c.lines[i], "place: ", 7));
}

/* The default verbosity (1) delivers warnings only, 0 nothing; without a
 * callback nothing is printed whatever the verbosity. */
OLLA_TEST(test_levels_follow_verbosity)
{
    static collected c;
    long printed = -1;
    for (int v = 0; v <= 1; v++) {
        memset(&c, 0, sizeof c);
        OLLA_CHECK(plan_quietly(v, collect, &c, &printed));
        OLLA_CHECK_EQ_I64(printed, 0);
        OLLA_CHECK_EQ_I64(c.n_detail, 0);
        OLLA_CHECK_EQ_I64(c.bad_line, 0);
        if (v == 0)
            OLLA_CHECK_EQ_I64(c.n, 0);
    }
    OLLA_CHECK(plan_quietly(2, NULL, NULL, &printed));
    OLLA_CHECK_EQ_I64(printed, 0);
}

/* olla_place with a logger: a line for the heuristics and a closing line
 * whose work units are the result's; a NULL logger and a logger at level 0
 * get nothing and print nothing. */
OLLA_TEST(test_placement_lines)
{
    enum { N = 60 };
    olla_buffer bufs[N];
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        int64_t lo = (s >> 8) % 40;
        s = s * 1103515245u + 12345u;
        bufs[i] = (olla_buffer){lo, lo + 1 + (int64_t)((s >> 8) % 12), 1 + (int64_t)((s >> 4) % 1000), 0};
    }
    for (int level = 0; level <= OLLA_LOG_DETAIL; level++) {
        static collected c;
        memset(&c, 0, sizeof c);
        olla_logger lg = {collect, &c, level};
        olla_place_options o = {1, 10.0, 0, &lg, 0};
        olla_place_result res;
        olla_error err = {0};
        capture k;
        OLLA_CHECK(capture_start(&k));
        olla_status st = olla_place(bufs, N, &o, &res, &err);
        OLLA_CHECK_EQ_I64(capture_end(&k), 0);
        OLLA_CHECK(st == OLLA_OK);
        if (st != OLLA_OK)
            continue;
        if (level < OLLA_LOG_DETAIL) {
            OLLA_CHECK_EQ_I64(c.n, 0);
            continue;
        }
        OLLA_CHECK(has_line(&c, "place: heuristic "));
        char units[64];
        snprintf(units, sizeof units, ", %lld work units, stopped by ", res.work);
        OLLA_CHECK(c.n > 0 && c.n <= 512);
        if (c.n > 0 && c.n <= 512)
            OLLA_CHECK_STR_CONTAINS(c.lines[c.n - 1], units);
        OLLA_CHECK_EQ_I64(c.bad_line, 0);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_details_reach_the_callback_and_nothing_is_printed), OLLA_T(test_levels_follow_verbosity),
               OLLA_T(test_placement_lines))
