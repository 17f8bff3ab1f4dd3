/* olla-onnx batch: the process pool of cli/batch_pool.h: one process per
 * conversion, at most `workers` at a time, each leaving its JSON line in a
 * temporary file; Ctrl-C stops the running ones, which leave no partial
 * output. */
#include "cli/batch_pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/olla_clock.h"

/* ---- signals ---- */

static volatile sig_atomic_t batch_signal;

/* In the batch's process: remember the signal; the loop stops at once. */
static void on_signal(int sig)
{
    batch_signal = sig;
}

/* In a conversion's process: leave nothing behind and stop, silently (the
 * batch says it once). */
static void child_on_signal(int sig)
{
    olla_stop_requested = 1;
    olla_write_abandon();
    _exit(128 + sig);
}

void olla_batch_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: wait() returns at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int olla_batch_signal(void)
{
    return batch_signal;
}

/* ---- the record of a job ---- */

int olla_batch_make_parents(const char *path)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return 0;
        *p = '/';
    }
    return 1;
}

char *olla_batch_status_line(json_object *o, const char *status)
{
    json_object_object_add(o, "status", json_object_new_string(status));
    const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *s = t ? strdup(t) : NULL;
    json_object_put(o);
    return s;
}

void olla_batch_read_numbers(olla_batch_job *j, json_object *o)
{
    json_object *v;
    /* what the runtime holds; a report of an older version: the input-order peak and the arena */
    if (json_object_object_get_ex(o, "saving_input_bytes", &v) ||
        json_object_object_get_ex(o, "input_order_peak_bytes", &v))
        j->held_input = json_object_get_int64(v);
    if (json_object_object_get_ex(o, "saving_planned_bytes", &v) || json_object_object_get_ex(o, "arena_bytes", &v))
        j->held_planned = json_object_get_int64(v);
    if (json_object_object_get_ex(o, "nodes", &v))
        j->nodes = json_object_get_int(v);
    if (json_object_object_get_ex(o, "warnings", &v) && json_object_is_type(v, json_type_array))
        j->n_warnings = (int)json_object_array_length(v);
    for (int k = 0; k < j->n_warnings && k < 3; k++) {
        free(j->warning[k]);
        j->warning[k] = strdup(json_object_get_string(json_object_array_get_idx(v, k)));
    }
}

void olla_batch_fail_job(olla_batch_job *j, const char *in, const char *msg, int code)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "model", json_object_new_string(in));
    json_object_object_add(o, "exit_code", json_object_new_int(code));
    json_object_object_add(o, "error", json_object_new_string(msg));
    snprintf(j->status, sizeof j->status, "failed");
    free(j->error);
    j->error = strdup(msg);
    j->json = olla_batch_status_line(o, "failed");
}

/* ---- the conversion, in its own process ---- */

/* "--input-shape x=1,3,-1" as given */
static void shape_text(const olla_input_shape *s, char *buf, size_t size)
{
    int k = snprintf(buf, size, "--input-shape %s=", s->name);
    for (int d = 0; d < s->rank && k > 0 && (size_t)k < size; d++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", d ? "," : "", (long long)s->dims[d]);
}

/* The bindings of the batch that model m takes: a --dim whose name none of
 * its dimensions uses, an --input-shape that names none of its graph
 * inputs (or one of another rank), is left out (planned as if not given)
 * and listed in not_applied with the reason.
 * *mine owns the arrays it points to (free them). 0 when out of memory. */
static int model_bindings(const olla_model *m, const olla_options *opt, olla_options *mine, json_object *not_applied)
{
    int nd = opt->n_dims, ns = opt->n_input_shapes;
    unsigned char *du = calloc((size_t)nd + 1, 1), *su = calloc((size_t)ns + 1, 1);
    olla_dim_binding *dims = calloc((size_t)nd + 1, sizeof *dims);
    olla_input_shape *shapes = calloc((size_t)ns + 1, sizeof *shapes);
    *mine = *opt;
    mine->dims = dims;
    mine->input_shapes = shapes;
    mine->n_dims = mine->n_input_shapes = 0;
    if (!du || !su || !dims || !shapes) {
        free(du);
        free(su);
        return 0;
    }
    olla_model_bindings_used(m, opt->dims, nd, du, opt->input_shapes, ns, su);
    char text[1024];
    for (int i = 0; i < nd; i++) {
        if (du[i]) {
            dims[mine->n_dims++] = opt->dims[i];
            continue;
        }
        snprintf(text, sizeof text, "--dim %s=%lld: no dimension of the model has this name", opt->dims[i].name,
                 (long long)opt->dims[i].value);
        json_object_array_add(not_applied, json_object_new_string(text));
    }
    for (int j = 0; j < ns; j++) {
        if (su[j] == 1) {
            shapes[mine->n_input_shapes++] = opt->input_shapes[j];
            continue;
        }
        shape_text(&opt->input_shapes[j], text, sizeof text);
        size_t at = strlen(text);
        snprintf(text + at, sizeof text - at, ": %s",
                 su[j] == 2 ? "the model's graph input of this name has another rank"
                            : "no graph input of the model has this name");
        json_object_array_add(not_applied, json_object_new_string(text));
    }
    free(du);
    free(su);
    return 1;
}

/* The child: convert one model and leave one JSON line in result_path. */
static int run_one(const char *in, const char *out, const olla_options *opt, const char *result_path)
{
    olla_error err = {0};
    olla_model *m = NULL;
    olla_plan *plan = NULL;
    olla_report rep;
    memset(&rep, 0, sizeof rep);
    char *line = NULL;
    olla_options mine = *opt;
    mine.dims = NULL;
    mine.input_shapes = NULL;
    json_object *not_applied = json_object_new_array();
    if (!olla_batch_make_parents(out))
        olla_error_set(&err, OLLA_ERR_INTERNAL, "cannot create the folder for %s: %s", out, strerror(errno));
    else if (olla_model_load(in, &m, &err) == OLLA_OK) {
        if (!not_applied || !model_bindings(m, opt, &mine, not_applied))
            olla_error_set(&err, OLLA_ERR_INTERNAL, "out of memory converting %s", in);
        else if (olla_optimize(m, &mine, &plan, &rep, &err) == OLLA_OK &&
                 olla_write_model(m, plan, out, &err) == OLLA_OK)
            line = olla_report_to_json(&rep, 0);
    }
    free((olla_dim_binding *)mine.dims);
    free((olla_input_shape *)mine.input_shapes);
    if (err.code != OLLA_OK) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "error", json_object_new_string(err.message));
        json_object_object_add(o, "exit_code", json_object_new_int((int)err.code));
        line = olla_batch_status_line(o, "failed");
    }
    /* which of the batch's bindings this model was planned without */
    json_object *o = line ? json_tokener_parse(line) : NULL;
    if (o && json_object_is_type(o, json_type_object)) {
        json_object_object_add(o, "bindings_not_applied", not_applied ? json_object_get(not_applied) : NULL);
        const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        char *with = t ? strdup(t) : NULL;
        if (with) {
            free(line);
            line = with;
        }
    }
    json_object_put(o);
    json_object_put(not_applied);
    FILE *f = fopen(result_path, "w");
    if (f) {
        fputs(line ? line : "{}", f);
        fclose(f);
    }
    free(line);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
    return err.code;
}

/* ---- the conversion's result ---- */

/* The whole file at path (malloc'd), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&text, &cap, '\0', f);
    fclose(f);
    if (n < 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The child has ended: its result becomes the job's record. */
static void finish(olla_batch_job *j, const char *in, int wstatus)
{
    char *text = slurp(j->result);
    unlink(j->result);
    json_object *o = text ? json_tokener_parse(text) : NULL;
    free(text);
    if (!o || !json_object_is_type(o, json_type_object)) {
        char msg[128];
        if (WIFSIGNALED(wstatus))
            snprintf(msg, sizeof msg, "the conversion crashed (signal %d)", WTERMSIG(wstatus));
        else
            snprintf(msg, sizeof msg, "the conversion exited with %d and no report", WEXITSTATUS(wstatus));
        json_object_put(o);
        olla_batch_fail_job(j, in, msg, 3);
        return;
    }
    json_object *v;
    json_object_object_add(o, "seconds", json_object_new_double(j->seconds));
    if (json_object_object_get_ex(o, "status", &v)) {
        json_object_object_add(o, "model", json_object_new_string(in));
        if (json_object_object_get_ex(o, "error", &v))
            j->error = strdup(json_object_get_string(v));
        snprintf(j->status, sizeof j->status, "failed");
        j->json = olla_batch_status_line(o, "failed");
        return;
    }
    olla_batch_read_numbers(j, o);
    snprintf(j->status, sizeof j->status, "ok");
    j->json = olla_batch_status_line(o, "ok");
}

/* ---- running ---- */

/* The model and output paths of job j. */
static void paths_of(const olla_batch_pool *p, const olla_batch_job *j, char *in, char *out, size_t n)
{
    snprintf(in, n, "%s/%s", p->in_dir, j->rel);
    snprintf(out, n, "%s/%s", p->out_dir, j->rel);
}

/* Starts job j's conversion in a process of its own, unless the command
 * settles it without one. */
static void start_job(olla_batch_pool *p, olla_batch_job *j)
{
    char in[8192], out[8192];
    paths_of(p, j, in, out, sizeof in);
    if (p->settled(p->ctx, j, in, out))
        return;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(j->result, sizeof j->result, "%s/olla-batch-XXXXXX", tmpdir && strlen(tmpdir) < 40 ? tmpdir : "/tmp");
    int fd = mkstemp(j->result);
    if (fd >= 0)
        close(fd);
    fflush(NULL);
    j->started = olla_now();
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, child_on_signal);
        signal(SIGTERM, child_on_signal);
        sigprocmask(SIG_SETMASK, &old, NULL);
        _exit(run_one(in, out, p->opt, j->result));
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        unlink(j->result);
        olla_batch_fail_job(j, in, "cannot start a process for it", 3);
        p->done(p->ctx, j, out);
        return;
    }
    j->pid = pid;
    p->running++;
    p->started(p->ctx, j);
}

/* The job whose conversion runs in process pid, or NULL. */
static olla_batch_job *job_of(olla_batch_pool *p, pid_t pid)
{
    for (int k = 0; k < p->n_jobs; k++)
        if (p->jobs[k].pid == pid)
            return &p->jobs[k];
    return NULL;
}

/* Waits for one conversion to end and records it; 0 when interrupted. */
static int reap_one(olla_batch_pool *p)
{
    int wstatus;
    pid_t pid = wait(&wstatus);
    if (pid < 0)
        return errno == EINTR && batch_signal ? 0 : (p->running = 0, 1);
    olla_batch_job *j = job_of(p, pid);
    if (!j)
        return 1;
    char in[8192], out[8192];
    paths_of(p, j, in, out, sizeof in);
    j->pid = 0;
    j->seconds = olla_now() - j->started;
    p->running--;
    if (batch_signal && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) < 128)) {
        /* stopped by the same Ctrl-C, before we saw it: not a result (one
         * that ended on its own before is one, Ctrl-C or not) */
        unlink(j->result);
        return 0;
    }
    finish(j, in, wstatus);
    p->done(p->ctx, j, out);
    return 1;
}

/* After Ctrl-C: the running conversions are stopped (each removes its own
 * partial output) and waited for; their records are dropped. */
static void stop_running(olla_batch_pool *p)
{
    for (int k = 0; k < p->n_jobs; k++)
        if (p->jobs[k].pid > 0)
            kill(p->jobs[k].pid, SIGTERM);
    for (int k = 0; k < p->n_jobs; k++) {
        olla_batch_job *j = &p->jobs[k];
        if (j->pid <= 0)
            continue;
        while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        unlink(j->result);
        j->pid = 0;
    }
    p->running = 0;
}

void olla_batch_pool_run(olla_batch_pool *p)
{
    int next = 0;
    while (!batch_signal && (next < p->n_jobs || p->running > 0)) {
        while (!batch_signal && p->running < p->workers && next < p->n_jobs)
            start_job(p, &p->jobs[next++]);
        if (p->running > 0 && !reap_one(p))
            break;
    }
    if (batch_signal)
        stop_running(p);
}
