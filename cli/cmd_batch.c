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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/batch_pool.h"
#include "cli/cli.h"
#include "util/olla_arith.h"
#include "util/olla_clock.h"
#include "util/olla_file.h"
#include "util/olla_grow.h"
#include "util/olla_line.h"

#define LINE_WIDTH 79

typedef olla_batch_job job;

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
    int done, ok, unchanged, failed;
    const char *current; /* the model last started */
    olla_batch_pool pool; /* the conversions' processes */
} batch;

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
    size_t cap = 0;
    int ok = 1;
    struct dirent *e;
    *n = 0;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **p = olla_grow(names, &cap, (size_t)*n + 1, sizeof *p);
        ok = p != NULL;
        names = p ? p : names;
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

/* ---- one model ---- */

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

/* A file's modification time in nanoseconds. */
static long long mtime_ns(const struct stat *s)
{
    return (long long)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec;
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
    olla_batch_read_numbers(j, o);
    snprintf(j->status, sizeof j->status, "unchanged");
    j->json = olla_batch_status_line(o, "unchanged");
    return 1;
}

/* ---- what the user sees ---- */

static void progress_line(batch *b)
{
    if (!b->tty || b->verbosity != 1)
        return;
    char head[160], line[256];
    int k = snprintf(head, sizeof head, "[%d/%d] %d ok, %d unchanged, %d failed", b->done, b->n_jobs, b->ok,
                     b->unchanged, b->failed);
    const char *cur = b->pool.running > 0 && b->current ? b->current : "";
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

/* The pool's settled: a model that disappeared, one unchanged since its
 * output was written, and one whose output would be itself get their
 * record without a conversion. */
static int settle(void *ctx, job *j, const char *in, const char *out)
{
    batch *b = ctx;
    struct stat si, so;
    if (stat(in, &si) != 0) {
        olla_batch_fail_job(j, in, "the model disappeared during the batch", 1);
        job_done(b, j, out);
        return 1;
    }
    job_key(b, j, &si);
    if (is_unchanged(b, j, out)) {
        job_done(b, j, out);
        return 1;
    }
    if (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
        olla_batch_fail_job(j, in, "its output would be the model itself; choose an OUT_DIR outside IN_DIR's models",
                            2);
        job_done(b, j, out);
        return 1;
    }
    return 0;
}

/* The pool's done. */
static void on_done(void *ctx, job *j, const char *out)
{
    job_done(ctx, j, out);
}

/* The pool's started: the progress line names the model. */
static void on_started(void *ctx, job *j)
{
    batch *b = ctx;
    b->current = j->rel;
    progress_line(b);
}

/* Every model through the pool. */
static void run_all(batch *b)
{
    olla_batch_pool *p = &b->pool;
    p->in_dir = b->in_dir;
    p->out_dir = b->out_dir;
    p->jobs = b->jobs;
    p->n_jobs = b->n_jobs;
    p->workers = b->workers;
    p->opt = &b->opt;
    p->settled = settle;
    p->done = on_done;
    p->started = on_started;
    p->ctx = b;
    olla_batch_pool_run(p);
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
            olla_human_saving(j->held_input, j->held_planned, s, sizeof s);
            sum_in += j->held_input;
            sum_planned += j->held_planned;
        }
        snprintf(st, sizeof st, "%s%s", j->status, j->n_warnings > 0 && strcmp(j->status, "failed") != 0
                                                        ? j->n_warnings == 1 ? ", 1 warning" : ", warnings" : "");
        fprintf(stderr, "%-48s %7d %12s %12s %8s %8.2f  %s\n", j->rel, j->nodes, a, c, s, j->seconds, st);
    }
    char sh[48], total[64];
    olla_human_headline(sum_in, sum_planned, total, sizeof total);
    fprintf(stderr, "%d %s%s: %d converted, %d unchanged, %d failed; total saving %s of what the runtimes hold; "
                    "%.1f s\n", b->n_jobs,
            olla_cli_plural(b->n_jobs, "model", "models"), shard_text(b, sh, sizeof sh), b->ok, b->unchanged,
            b->failed, total, seconds);
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
    if (!olla_batch_make_parents(probe) || stat(b->out_dir, &so) != 0 || !S_ISDIR(so.st_mode)) {
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

/* Runs the batch and writes its records; the exit code. */
static int convert_all(batch *b)
{
    double t0 = olla_now();
    char sh[48];
    if (b->verbosity > 1)
        fprintf(stderr, "olla-onnx batch: %d %s%s, %lld at a time (%d %s this process may use)\n", b->n_jobs,
                olla_cli_plural(b->n_jobs, "model", "models"), shard_text(b, sh, sizeof sh), b->workers, b->cpus,
                olla_cli_plural(b->cpus, "CPU", "CPUs"));
    olla_batch_catch_signals();
    run_all(b);
    clear_line(b);
    olla_error err = {0};
    olla_status st = olla_batch_stamps_save(&b->stamps, &err);
    if (st == OLLA_OK && b->report)
        st = write_report(b, &err);
    if (st != OLLA_OK)
        fprintf(stderr, "olla-onnx batch: %s\n", err.message);
    if (olla_batch_signal()) {
        fprintf(stderr, "olla-onnx batch: interrupted; %d of %d %s finished and kept%s, the rest left no output\n",
                b->done, b->n_jobs, olla_cli_plural(b->n_jobs, "model", "models"),
                b->report ? " (and in the report)" : "");
        return 128 + olla_batch_signal();
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
