/* olla-onnx batch IN_DIR OUT_DIR [-j N] [--shard K/N] [--report FILE.jsonl] [--force] [options]
 *
 * Converts every .onnx file under IN_DIR into the same relative path under
 * OUT_DIR, N at a time, each in its own process so that one bad model never
 * stops the batch.
 *
 * What a user can count on:
 * - OUT_DIR inside IN_DIR is never read as input (its folder is skipped).
 * - A model is skipped as "unchanged" only when neither it nor any option
 *   that changes the plan has changed since its output was written, and
 *   that output is still there as written (cli/batch_stamps.c); --force
 *   converts everything again.
 * - On a terminal one progress line: counts and the model last started.
 *   Every failure's reason is printed as it happens; a table closes the run.
 * - Ctrl-C: the running conversions stop and leave no partial file, the
 *   finished ones are kept (outputs, stamps and --report lines), and one
 *   message says so. Exit 130.
 * - --report FILE.jsonl is written whole at the end: one line per model.
 * - --shard K/N takes a share of the models that no other K takes, so that
 *   N machines or job-array tasks convert one folder together
 *   (cli/batch_shard.c). */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "util/olla_clock.h"
#include "util/olla_file.h"
#include "util/olla_grow.h"
#include "util/olla_arith.h"

#define LINE_WIDTH 79

typedef struct {
    char *rel; /* path below IN_DIR */
    pid_t pid;
    char result[64]; /* temp file with the child's JSON line */
    double started, seconds;
    char status[16]; /* "" while pending or running; "ok", "failed", "unchanged" */
    char *json;      /* the --report line */
    char *error;     /* why it failed */
    char key[17];    /* of its input and the options */
    int64_t held_input, held_planned; /* what the runtime holds (report saving_input_bytes, ..._planned_...) */
    int nodes;
    int n_warnings;  /* report "warnings": the first ones are shown as it happens */
    char *warning[3];
} job;

typedef struct {
    const char *in_dir, *out_dir, *report;
    long long workers;
    int cpus;               /* this process may run on (the default -j follows) */
    olla_batch_shard shard; /* n 0: every model */
    int force, verbosity, tty;
    olla_options opt;
    char **plan_args;        /* the planning options as given, each with its value: "--dim a=1" */
    int n_plan_args;
    char *options_text;      /* every option that changes the written file (malloc'd) */
    job *jobs;
    int n_jobs;
    size_t cap;
    dev_t out_dev;
    ino_t out_ino;
    olla_batch_stamps stamps;
    int done, ok, unchanged, failed, running;
    const char *current; /* the model last started */
} batch;

static volatile sig_atomic_t batch_signal;

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

static const char batch_usage[] =
    "usage: olla-onnx batch IN_DIR OUT_DIR [-j N] [--shard K/N] [--report FILE.jsonl] [--force] [options]\n";

static void help(void)
{
    fputs(batch_usage, stdout);
    fputs("\n"
          "Converts every .onnx file under IN_DIR into the same relative path under\n"
          "OUT_DIR, each in its own process. OUT_DIR inside IN_DIR is skipped.\n"
          "\n"
          "  -j N                 conversions at a time (default: half the CPUs this\n"
          "                       process may use, at least 1: each conversion's solver\n"
          "                       may use two)\n"
          "  --shard K/N          convert only share K (0 to N-1) of N: the models whose\n"
          "                       path hashes to K; N runs over one folder share it out\n"
          "  --report FILE.jsonl  one JSON line per model: its report and status\n"
          "  --force              convert every model, also those unchanged since their\n"
          "                       output was written with the same options\n"
          "  -q, --quiet          no progress, failures, warnings or table\n"
          "  -v, --verbose        a line per model instead of the progress line\n"
          "  -h, --help\n"
          "and the planning options, as olla-onnx --help describes them:\n"
          "  --dim NAME=VALUE, --input-shape NAME=D1,D2,...\n"
          "                       applied to each model that has the name; a model\n"
          "                       without it is planned as if it were not given (the\n"
          "                       report's bindings_not_applied lists it)\n"
          "  --strict-shapes, --time-limit SECONDS, --align BYTES, --keep-order,\n"
          "  --runtime NAME, --sharing MODE, --memory-limit SIZE, --joint,\n"
          "  --allow-unknown-sizes\n"
          "A model is skipped as unchanged when neither it nor any of these options\n"
          "changed since its output was written.\n"
          "\n"
          "exit codes: 0 all converted or unchanged, 1 some model failed, 2 usage,\n"
          "3 internal error, 130 interrupted\n",
          stdout);
}

/* ---- arguments ---- */

/* Options of olla-onnx that change what is shown, never the written file. */
static int output_neutral(const char *flag)
{
    return strcmp(flag, "-q") == 0 || strcmp(flag, "--quiet") == 0 || strcmp(flag, "-v") == 0 ||
           strcmp(flag, "--verbose") == 0;
}

/* Keeps argv[from..to] (a planning option and its value) for the key. */
static int keep_plan_arg(batch *b, char **argv, int from, int to)
{
    if (output_neutral(argv[from]))
        return 1;
    size_t len = 1;
    for (int k = from; k <= to; k++)
        len += strlen(argv[k]) + 1;
    char **grown = realloc(b->plan_args, ((size_t)b->n_plan_args + 1) * sizeof *grown);
    char *text = malloc(len);
    if (!grown || !text) {
        free(text);
        b->plan_args = grown ? grown : b->plan_args;
        return 0;
    }
    b->plan_args = grown;
    text[0] = '\0';
    for (int k = from; k <= to; k++)
        strcat(strcat(text, k > from ? " " : ""), argv[k]);
    b->plan_args[b->n_plan_args++] = text;
    return 1;
}

/* -1: go on; else the exit code. */
static int parse_args(batch *b, olla_cli_plan_opts *po, int argc, char **argv)
{
    b->cpus = olla_batch_cpus();
    b->workers = olla_batch_default_jobs(b->cpus);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int from = i;
        int r = olla_cli_plan_option(po, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0 && !keep_plan_arg(b, argv, from, i)) {
            fprintf(stderr, "olla-onnx batch: out of memory\n");
            return 3;
        }
        if (r > 0)
            continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help();
            return 0;
        } else if (strcmp(a, "-j") == 0) {
            if (i + 1 >= argc || !olla_cli_parse_i64(argv[++i], &b->workers) || b->workers < 1 || b->workers > 1024) {
                fprintf(stderr, "olla-onnx batch: -j needs a number of parallel conversions from 1 to 1024\n");
                return 2;
            }
        } else if (strcmp(a, "--report") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "olla-onnx batch: --report needs a file name\n");
                return 2;
            }
            b->report = argv[++i];
        } else if (strcmp(a, "--shard") == 0) {
            const char *val = i + 1 < argc ? argv[++i] : "";
            if (!olla_batch_parse_shard(val, &b->shard)) {
                fprintf(stderr, "olla-onnx batch: --shard '%s': needs K/N, share K of N with 0 <= K < N <= 1000000, "
                                "such as --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\n",
                        val);
                return 2;
            }
        } else if (strcmp(a, "--force") == 0) {
            b->force = 1;
        } else if (a[0] == '-' || (b->in_dir && b->out_dir)) {
            if (a[0] == '-')
                fprintf(stderr, "olla-onnx batch: unknown option '%s'\n", a);
            fputs(batch_usage, stderr);
            return 2;
        } else if (!b->in_dir) {
            b->in_dir = a;
        } else {
            b->out_dir = a;
        }
    }
    if (!b->in_dir || !b->out_dir) {
        fputs(batch_usage, stderr);
        return 2;
    }
    return olla_cli_plan_opts_env(po, "olla-onnx batch") ? -1 : 2;
}

static int cmp_text(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* What changes the written file, as text: part of every model's key. It is
 * derived from the planning options as given (olla_cli_plan_option decides
 * which those are, so an option added there is covered), in any order, but
 * for the ones that only change what is shown; and the time limit in force
 * ($OLLA_TIME_LIMIT included). 0 when out of memory. */
static int describe_options(batch *b)
{
    if (b->n_plan_args > 1)
        qsort(b->plan_args, (size_t)b->n_plan_args, sizeof *b->plan_args, cmp_text);
    size_t len = 128;
    for (int k = 0; k < b->n_plan_args; k++)
        len += strlen(b->plan_args[k]) + 3;
    if (!(b->options_text = malloc(len)))
        return 0;
    int at = snprintf(b->options_text, len, "olla-onnx %s; time-limit %.6g", OLLA_VERSION_STRING, b->opt.time_limit);
    for (int k = 0; k < b->n_plan_args; k++)
        at += snprintf(b->options_text + at, len - (size_t)at, "; %s", b->plan_args[k]);
    return 1;
}

/* ---- the models ---- */

static int add_job(batch *b, const char *rel)
{
    job *p = olla_grow(b->jobs, &b->cap, (size_t)b->n_jobs + 1, sizeof *p);
    if (!p)
        return 0;
    b->jobs = p;
    memset(&b->jobs[b->n_jobs], 0, sizeof(job));
    return (b->jobs[b->n_jobs++].rel = strdup(rel)) != NULL;
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The entries of a folder, sorted (so runs and reports are repeatable);
 * NULL on failure. */
static char **list_folder(const char *path, int *n)
{
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    char **names = NULL;
    int cap = 0, ok = 1;
    struct dirent *e;
    *n = 0;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            char **p = realloc(names, (size_t)cap * sizeof *p);
            ok = p != NULL;
            names = p ? p : names;
        }
        if (ok)
            ok = (names[(*n)++] = strdup(e->d_name)) != NULL;
    }
    closedir(d);
    if (ok && *n)
        qsort(names, (size_t)*n, sizeof *names, cmp_names);
    if (!ok) {
        for (int i = 0; i < *n; i++)
            free(names[i]);
        free(names);
        return NULL;
    }
    return names ? names : calloc(1, sizeof *names);
}

static int is_onnx(const char *name)
{
    size_t len = strlen(name);
    return len > 5 && strcmp(name + len - 5, ".onnx") == 0;
}

/* Every .onnx file under IN_DIR/rel, except in OUT_DIR. 0 on failure. */
static int collect(batch *b, const char *rel)
{
    char path[8192];
    snprintf(path, sizeof path, "%s%s%s", b->in_dir, rel[0] ? "/" : "", rel);
    int n = 0;
    char **names = list_folder(path, &n);
    if (!names)
        return 0;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        char sub[4096], full[8192];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        snprintf(full, sizeof full, "%s/%s", b->in_dir, sub);
        struct stat sb;
        if (lstat(full, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode) && !(sb.st_dev == b->out_dev && sb.st_ino == b->out_ino))
            ok = collect(b, sub);
        else if (S_ISREG(sb.st_mode) && is_onnx(names[i]) && olla_batch_in_shard(&b->shard, sub))
            ok = add_job(b, sub);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ok;
}

static int make_parents(const char *path)
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

/* ---- one model ---- */

static void paths_of(const batch *b, const job *j, char *in, char *out, size_t n)
{
    snprintf(in, n, "%s/%s", b->in_dir, j->rel);
    snprintf(out, n, "%s/%s", b->out_dir, j->rel);
}

/* The key of a model: its file's identity (size, modification time, inode)
 * and the options. */
static void job_key(const batch *b, job *j, const struct stat *si)
{
    char id[160];
    snprintf(id, sizeof id, "|%s|%lld|%lld.%09ld|%llu", j->rel, (long long)si->st_size, (long long)si->st_mtim.tv_sec,
             si->st_mtim.tv_nsec, (unsigned long long)si->st_ino);
    uint64_t h = olla_fnv1a(olla_fnv1a(OLLA_FNV1A_START, b->options_text), id);
    snprintf(j->key, sizeof j->key, "%016llx", (unsigned long long)h);
}

static long long mtime_ns(const struct stat *s)
{
    return (long long)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec;
}

static char *status_line(json_object *o, const char *status)
{
    json_object_object_add(o, "status", json_object_new_string(status));
    const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *s = t ? strdup(t) : NULL;
    json_object_put(o);
    return s;
}

/* The figures of the table, and the warnings, from a report. */
static void read_numbers(job *j, json_object *o)
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

/* 1 when the model's output is up to date: same key, output as written. */
static int is_unchanged(batch *b, job *j, const char *out)
{
    const olla_batch_stamp *s = olla_batch_stamps_find(&b->stamps, j->rel);
    struct stat so;
    if (b->force || !s || strcmp(s->key, j->key) != 0 || stat(out, &so) != 0 || so.st_size != s->out_bytes ||
        mtime_ns(&so) != s->out_mtime_ns)
        return 0;
    json_object *o = json_tokener_parse(s->report);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = json_object_new_object();
    }
    read_numbers(j, o);
    snprintf(j->status, sizeof j->status, "unchanged");
    j->json = status_line(o, "unchanged");
    return 1;
}

static void fail_job(job *j, const char *in, const char *msg, int code)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "model", json_object_new_string(in));
    json_object_object_add(o, "exit_code", json_object_new_int(code));
    json_object_object_add(o, "error", json_object_new_string(msg));
    snprintf(j->status, sizeof j->status, "failed");
    free(j->error);
    j->error = strdup(msg);
    j->json = status_line(o, "failed");
}

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
        snprintf(text + at, sizeof text - at, ": %s", su[j] == 2 ? "the model's graph input of this name has another rank"
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
    if (!make_parents(out))
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
        line = status_line(o, "failed");
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
static void finish(job *j, const char *in, int wstatus)
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
        fail_job(j, in, msg, 3);
        return;
    }
    json_object *v;
    json_object_object_add(o, "seconds", json_object_new_double(j->seconds));
    if (json_object_object_get_ex(o, "status", &v)) {
        json_object_object_add(o, "model", json_object_new_string(in));
        if (json_object_object_get_ex(o, "error", &v))
            j->error = strdup(json_object_get_string(v));
        snprintf(j->status, sizeof j->status, "failed");
        j->json = status_line(o, "failed");
        return;
    }
    read_numbers(j, o);
    snprintf(j->status, sizeof j->status, "ok");
    j->json = status_line(o, "ok");
}

/* ---- what the user sees ---- */

static void progress_line(batch *b)
{
    if (!b->tty || b->verbosity != 1)
        return;
    char head[160], line[256];
    int k = snprintf(head, sizeof head, "[%d/%d] %d ok, %d unchanged, %d failed", b->done, b->n_jobs, b->ok,
                     b->unchanged, b->failed);
    const char *cur = b->running > 0 && b->current ? b->current : "";
    int room = LINE_WIDTH - k - 2, len = (int)strlen(cur);
    if (!cur[0] || room < 8)
        snprintf(line, sizeof line, "%s", head);
    else if (len > room)
        snprintf(line, sizeof line, "%s; ...%s", head, cur + len - (room - 3));
    else
        snprintf(line, sizeof line, "%s; %s", head, cur);
    line[LINE_WIDTH] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
}

static void clear_line(const batch *b)
{
    if (b->tty && b->verbosity == 1)
        fprintf(stderr, "\r\033[K");
}

/* A model is done: counts, stamp, and what the terminal shows. */
static void job_done(batch *b, job *j, const char *out)
{
    b->done++;
    if (strcmp(j->status, "ok") == 0) {
        struct stat so;
        b->ok++;
        if (stat(out, &so) == 0)
            olla_batch_stamps_set(&b->stamps, j->rel, j->key, (long long)so.st_size, mtime_ns(&so), j->json);
        if (j->n_warnings > 0 && b->verbosity > 0) /* the first ones: the bindings' come first */
            clear_line(b);
        for (int k = 0; k < j->n_warnings && k < 3 && b->verbosity > 0; k++)
            fprintf(stderr, "olla-onnx batch: %s: warning: %s\n", j->rel, j->warning[k] ? j->warning[k] : "");
        if (j->n_warnings > 3 && b->verbosity > 0)
            fprintf(stderr, "olla-onnx batch: %s: %d more warnings (the report lists them)\n", j->rel,
                    j->n_warnings - 3);
    } else if (strcmp(j->status, "unchanged") == 0) {
        b->unchanged++;
    } else {
        b->failed++;
        /* the old output, if any, belongs to another model or options */
        olla_batch_stamps_drop(&b->stamps, j->rel);
        unlink(out);
        if (b->verbosity > 0) {
            clear_line(b);
            fprintf(stderr, "olla-onnx batch: %s: %s\n", j->rel, j->error ? j->error : "failed");
        }
    }
    if (b->verbosity > 1)
        fprintf(stderr, "[%d/%d] %s: %s (%.2f s)\n", b->done, b->n_jobs, j->rel, j->status, j->seconds);
    progress_line(b);
}

/* ---- running ---- */

static void start_job(batch *b, job *j)
{
    char in[8192], out[8192];
    paths_of(b, j, in, out, sizeof in);
    struct stat si, so;
    if (stat(in, &si) != 0) {
        fail_job(j, in, "the model disappeared during the batch", 1);
        job_done(b, j, out);
        return;
    }
    job_key(b, j, &si);
    if (is_unchanged(b, j, out)) {
        job_done(b, j, out);
        return;
    }
    if (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
        fail_job(j, in, "its output would be the model itself; choose an OUT_DIR outside IN_DIR's models", 2);
        job_done(b, j, out);
        return;
    }
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
        _exit(run_one(in, out, &b->opt, j->result));
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        unlink(j->result);
        fail_job(j, in, "cannot start a process for it", 3);
        job_done(b, j, out);
        return;
    }
    j->pid = pid;
    b->running++;
    b->current = j->rel;
    progress_line(b);
}

static job *job_of(batch *b, pid_t pid)
{
    for (int k = 0; k < b->n_jobs; k++)
        if (b->jobs[k].pid == pid)
            return &b->jobs[k];
    return NULL;
}

/* Waits for one conversion to end and records it; 0 when interrupted. */
static int reap_one(batch *b)
{
    int wstatus;
    pid_t pid = wait(&wstatus);
    if (pid < 0)
        return errno == EINTR && batch_signal ? 0 : (b->running = 0, 1);
    job *j = job_of(b, pid);
    if (!j)
        return 1;
    char in[8192], out[8192];
    paths_of(b, j, in, out, sizeof in);
    j->pid = 0;
    j->seconds = olla_now() - j->started;
    b->running--;
    if (batch_signal && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) < 128)) {
        /* stopped by the same Ctrl-C, before we saw it: not a result (one
         * that ended on its own before is one, Ctrl-C or not) */
        unlink(j->result);
        return 0;
    }
    finish(j, in, wstatus);
    job_done(b, j, out);
    return 1;
}

/* After Ctrl-C: the running conversions are stopped (each removes its own
 * partial output) and waited for; their records are dropped. */
static void stop_running(batch *b)
{
    for (int k = 0; k < b->n_jobs; k++)
        if (b->jobs[k].pid > 0)
            kill(b->jobs[k].pid, SIGTERM);
    for (int k = 0; k < b->n_jobs; k++) {
        job *j = &b->jobs[k];
        if (j->pid <= 0)
            continue;
        while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        unlink(j->result);
        j->pid = 0;
    }
    b->running = 0;
}

static void run_all(batch *b)
{
    int next = 0;
    while (!batch_signal && (next < b->n_jobs || b->running > 0)) {
        while (!batch_signal && b->running < b->workers && next < b->n_jobs)
            start_job(b, &b->jobs[next++]);
        if (b->running > 0 && !reap_one(b))
            break;
    }
    if (batch_signal)
        stop_running(b);
}

/* ---- results ---- */

static olla_status write_report(const batch *b, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, b->report, err);
    if (st != OLLA_OK)
        return st;
    for (int k = 0; k < b->n_jobs; k++)
        if (b->jobs[k].json)
            fprintf(out.f, "%s\n", b->jobs[k].json);
    return olla_text_file_write(&out, b->report, 0, err);
}

/* " in shard K/N" with --shard, else "". */
static const char *shard_text(const batch *b, char *buf, size_t n)
{
    if (b->shard.n == 0)
        return "";
    snprintf(buf, n, " in shard %d/%d", b->shard.k, b->shard.n);
    return buf;
}

/* What the runtime holds for each model, input and written (the report's
 * saving_input_bytes and saving_planned_bytes), and the total saving over
 * the models that have both. */
static void print_table(const batch *b, double seconds)
{
    fprintf(stderr, "\n%-48s %7s %12s %12s %8s %8s  %s\n", "model", "nodes", "input", "planned", "saving",
            "seconds", "status");
    int64_t sum_in = 0, sum_planned = 0;
    for (int k = 0; k < b->n_jobs; k++) {
        const job *j = &b->jobs[k];
        char a[32] = "-", c[32] = "-", s[16] = "-", st[40];
        if (j->held_input > 0 && strcmp(j->status, "failed") != 0) {
            olla_cli_human_bytes(j->held_input, a, sizeof a);
            olla_cli_human_bytes(j->held_planned, c, sizeof c);
            snprintf(s, sizeof s, "%.1f%%", olla_cli_pct(j->held_input - j->held_planned, j->held_input));
            sum_in += j->held_input;
            sum_planned += j->held_planned;
        }
        snprintf(st, sizeof st, "%s%s", j->status, j->n_warnings > 0 && strcmp(j->status, "failed") != 0
                                                        ? j->n_warnings == 1 ? ", 1 warning" : ", warnings" : "");
        fprintf(stderr, "%-48s %7d %12s %12s %8s %8.2f  %s\n", j->rel, j->nodes, a, c, s, j->seconds, st);
    }
    char sh[48];
    fprintf(stderr, "%d %s%s: %d converted, %d unchanged, %d failed; total saving %.1f%% of what the runtimes hold; "
                    "%.1f s\n", b->n_jobs,
            olla_cli_plural(b->n_jobs, "model", "models"), shard_text(b, sh, sizeof sh), b->ok, b->unchanged,
            b->failed, olla_cli_pct(sum_in - sum_planned, sum_in), seconds);
}

/* ---- the command ---- */

/* OUT_DIR made, checked against IN_DIR, and remembered so that the walk
 * skips it; the report path checked. -1: go on; else the exit code. */
static int prepare(batch *b)
{
    struct stat si, so;
    if (stat(b->in_dir, &si) != 0 || !S_ISDIR(si.st_mode)) {
        fprintf(stderr, "olla-onnx batch: %s is not a folder\n", b->in_dir);
        return 1;
    }
    char probe[8192];
    snprintf(probe, sizeof probe, "%s/x", b->out_dir);
    if (!make_parents(probe) || stat(b->out_dir, &so) != 0 || !S_ISDIR(so.st_mode)) {
        fprintf(stderr, "olla-onnx batch: OUT_DIR %s: cannot create this folder (%s)\n", b->out_dir, strerror(errno));
        return 2;
    }
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
        fprintf(stderr, "olla-onnx batch: OUT_DIR %s is IN_DIR; the outputs would replace the models\n", b->out_dir);
        return 2;
    }
    b->out_dev = so.st_dev;
    b->out_ino = so.st_ino;
    olla_cli_output outs[] = {{"--report", b->report}};
    if (!olla_cli_check_outputs("olla-onnx batch", NULL, outs, 1))
        return 2;
    if (!collect(b, "")) {
        fprintf(stderr, "olla-onnx batch: cannot list %s\n", b->in_dir);
        return 1;
    }
    if (!olla_batch_stamps_load(&b->stamps, b->out_dir, &b->shard)) {
        fprintf(stderr, "olla-onnx batch: out of memory reading the stamps of %s\n", b->out_dir);
        return 3;
    }
    return -1;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: wait() returns at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Runs the batch and writes its records; the exit code. */
static int convert_all(batch *b)
{
    double t0 = olla_now();
    char sh[48];
    if (b->verbosity > 1)
        fprintf(stderr, "olla-onnx batch: %d %s%s, %lld at a time (%d %s this process may use)\n", b->n_jobs,
                olla_cli_plural(b->n_jobs, "model", "models"), shard_text(b, sh, sizeof sh), b->workers, b->cpus,
                olla_cli_plural(b->cpus, "CPU", "CPUs"));
    catch_signals();
    run_all(b);
    clear_line(b);
    olla_error err = {0};
    olla_status st = olla_batch_stamps_save(&b->stamps, &err);
    if (st == OLLA_OK && b->report)
        st = write_report(b, &err);
    if (st != OLLA_OK)
        fprintf(stderr, "olla-onnx batch: %s\n", err.message);
    if (batch_signal) {
        fprintf(stderr, "olla-onnx batch: interrupted; %d of %d %s finished and kept%s, the rest left no output\n",
                b->done, b->n_jobs, olla_cli_plural(b->n_jobs, "model", "models"),
                b->report ? " (and in the report)" : "");
        return 128 + batch_signal;
    }
    if (b->verbosity > 0)
        print_table(b, olla_now() - t0);
    return st != OLLA_OK ? 3 : b->failed ? 1 : 0;
}

int olla_cmd_batch(int argc, char **argv)
{
    batch b;
    memset(&b, 0, sizeof b);
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    int rc = parse_args(&b, &po, argc, argv);
    if (rc < 0) {
        b.opt = po.opt;
        b.verbosity = b.opt.verbosity;
        b.opt.verbosity = 0;
        b.tty = isatty(2);
        rc = describe_options(&b) ? prepare(&b) : (fprintf(stderr, "olla-onnx batch: out of memory\n"), 3);
    }
    if (rc < 0)
        rc = convert_all(&b);
    for (int k = 0; k < b.n_jobs; k++) {
        free(b.jobs[k].rel);
        free(b.jobs[k].json);
        free(b.jobs[k].error);
        for (int w = 0; w < 3; w++)
            free(b.jobs[k].warning[w]);
    }
    free(b.jobs);
    for (int k = 0; k < b.n_plan_args; k++)
        free(b.plan_args[k]);
    free(b.plan_args);
    free(b.options_text);
    olla_batch_stamps_free(&b.stamps);
    olla_cli_plan_opts_free(&po);
    return rc;
}
