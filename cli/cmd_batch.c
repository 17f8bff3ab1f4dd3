/* olla-onnx batch IN_DIR OUT_DIR [-j N] [--report FILE.jsonl] [planning options]
 *
 * Converts every .onnx file under IN_DIR into the same relative path under
 * OUT_DIR, N at a time, each in its own process so that one bad model never
 * stops the batch. Outputs newer than their inputs are left alone. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/olla_clock.h"

typedef struct {
    char *rel; /* path below IN_DIR */
    pid_t pid;
    char result[64]; /* temp file with the child's JSON line */
    double started;
    /* filled when done */
    char status[16]; /* "ok", "failed", "unchanged" */
    char *json;      /* the report or error line */
    int64_t input_peak, arena;
    int nodes;
    double seconds;
} job;

typedef struct {
    job *v;
    int n, cap;
} job_list;

static int collect(const char *root, const char *rel, job_list *jobs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    char **names = NULL;
    int n = 0, ok = 1;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **p = realloc(names, ((size_t)n + 1) * sizeof *p);
        if (!p) {
            ok = 0;
            break;
        }
        names = p;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    /* sorted, so runs and reports are repeatable */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < n && ok; i++) {
        char sub[4096], full[8200];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat sb;
        if (lstat(full, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            ok = collect(root, sub, jobs);
        } else if (S_ISREG(sb.st_mode)) {
            size_t len = strlen(names[i]);
            if (len > 5 && strcmp(names[i] + len - 5, ".onnx") == 0) {
                if (jobs->n == jobs->cap) {
                    int nc = jobs->cap ? jobs->cap * 2 : 64;
                    job *p = realloc(jobs->v, (size_t)nc * sizeof *p);
                    if (!p) {
                        ok = 0;
                        break;
                    }
                    jobs->v = p;
                    jobs->cap = nc;
                }
                memset(&jobs->v[jobs->n], 0, sizeof(job));
                jobs->v[jobs->n++].rel = strdup(sub);
            }
        }
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ok;
}

static int make_parents(const char *path)
{
    char buf[4096];
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

static char *error_line(const char *model, const char *msg, int code)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "model", json_object_new_string(model));
    json_object_object_add(o, "status", json_object_new_string("failed"));
    json_object_object_add(o, "exit_code", json_object_new_int(code));
    json_object_object_add(o, "error", json_object_new_string(msg));
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
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
    int rc = 0;
    if (!make_parents(out)) {
        olla_error_set(&err, OLLA_ERR_INTERNAL, "cannot create the folder for %s: %s", out, strerror(errno));
    } else if (olla_model_load(in, &m, &err) == OLLA_OK && olla_optimize(m, opt, &plan, &rep, &err) == OLLA_OK &&
               olla_write_model(m, plan, out, &err) == OLLA_OK) {
        line = olla_report_to_json(&rep, 0);
    }
    if (err.code != OLLA_OK) {
        rc = (int)err.code;
        line = error_line(in, err.message, rc);
    }
    FILE *f = fopen(result_path, "w");
    if (f) {
        fputs(line ? line : "{}", f);
        fclose(f);
    }
    free(line);
    olla_report_clear(&rep);
    olla_plan_free(plan);
    olla_model_free(m);
    return rc;
}

static void finish(job *j, const char *in_dir, int wstatus)
{
    FILE *f = fopen(j->result, "r");
    char *text = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc((size_t)(n > 0 ? n : 0) + 1);
        if (text) {
            size_t got = fread(text, 1, (size_t)(n > 0 ? n : 0), f);
            text[got] = '\0';
        }
        fclose(f);
    }
    unlink(j->result);
    char in[4096];
    snprintf(in, sizeof in, "%s/%s", in_dir, j->rel);
    json_object *o = text ? json_tokener_parse(text) : NULL;
    free(text);
    if (!o || !json_object_is_type(o, json_type_object)) {
        char msg[128];
        if (WIFSIGNALED(wstatus))
            snprintf(msg, sizeof msg, "the conversion crashed (signal %d)", WTERMSIG(wstatus));
        else
            snprintf(msg, sizeof msg, "the conversion exited with %d and no report", WEXITSTATUS(wstatus));
        json_object_put(o);
        snprintf(j->status, sizeof j->status, "failed");
        j->json = error_line(in, msg, 3);
        return;
    }
    json_object *v;
    if (json_object_object_get_ex(o, "status", &v)) {
        snprintf(j->status, sizeof j->status, "failed");
    } else {
        snprintf(j->status, sizeof j->status, "ok");
        json_object_object_add(o, "status", json_object_new_string("ok"));
        if (json_object_object_get_ex(o, "input_order_peak_bytes", &v))
            j->input_peak = json_object_get_int64(v);
        if (json_object_object_get_ex(o, "arena_bytes", &v))
            j->arena = json_object_get_int64(v);
        if (json_object_object_get_ex(o, "nodes", &v))
            j->nodes = json_object_get_int(v);
    }
    json_object_object_add(o, "seconds", json_object_new_double(j->seconds));
    j->json = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

int olla_cmd_batch(int argc, char **argv)
{
    olla_cli_plan_opts po;
    olla_cli_plan_opts_init(&po);
    const char *in_dir = NULL, *out_dir = NULL, *report = NULL;
    long long workers = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 0;
    job_list jobs = {0};
    FILE *rf = NULL;
    for (int i = 1; i < argc; i++) {
        int r = olla_cli_plan_option(&po, argc, argv, &i);
        if (r < 0) {
            rc = 2;
            goto out;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) {
            if (!olla_cli_parse_i64(argv[++i], &workers) || workers < 1 || workers > 1024) {
                fprintf(stderr, "olla-onnx batch: -j needs a number of parallel conversions from 1 to 1024\n");
                rc = 2;
                goto out;
            }
        } else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) {
            report = argv[++i];
        } else if (argv[i][0] == '-' || (in_dir && out_dir)) {
            fprintf(stderr, "usage: olla-onnx batch IN_DIR OUT_DIR [-j N] [--report FILE.jsonl] [options]\n");
            rc = 2;
            goto out;
        } else if (!in_dir) {
            in_dir = argv[i];
        } else {
            out_dir = argv[i];
        }
    }
    if (!in_dir || !out_dir) {
        fprintf(stderr, "usage: olla-onnx batch IN_DIR OUT_DIR [-j N] [--report FILE.jsonl] [options]\n");
        rc = 2;
        goto out;
    }
    if (workers < 1)
        workers = 1;
    struct stat sb;
    if (stat(in_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "olla-onnx batch: %s is not a folder\n", in_dir);
        rc = 1;
        goto out;
    }
    if (!collect(in_dir, "", &jobs)) {
        fprintf(stderr, "olla-onnx batch: cannot list %s\n", in_dir);
        rc = 1;
        goto out;
    }
    if (report && !(rf = fopen(report, "w"))) {
        fprintf(stderr, "olla-onnx batch: cannot write %s: %s\n", report, strerror(errno));
        rc = 3;
        goto out;
    }
    olla_options opt = po.opt;
    int verbose = opt.verbosity;
    opt.verbosity = 0;
    int next = 0, running = 0, done = 0, failed = 0, unchanged = 0;
    double t0 = olla_now();
    while (done < jobs.n) {
        while (running < workers && next < jobs.n) {
            job *j = &jobs.v[next++];
            char in[4096], outp[4096];
            snprintf(in, sizeof in, "%s/%s", in_dir, j->rel);
            snprintf(outp, sizeof outp, "%s/%s", out_dir, j->rel);
            struct stat si, so;
            if (stat(in, &si) == 0 && stat(outp, &so) == 0 &&
                (so.st_mtim.tv_sec > si.st_mtim.tv_sec ||
                 (so.st_mtim.tv_sec == si.st_mtim.tv_sec && so.st_mtim.tv_nsec >= si.st_mtim.tv_nsec))) {
                snprintf(j->status, sizeof j->status, "unchanged");
                json_object *o = json_object_new_object();
                json_object_object_add(o, "model", json_object_new_string(in));
                json_object_object_add(o, "status", json_object_new_string("unchanged"));
                j->json = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
                unchanged++;
                done++;
                if (rf && j->json)
                    fprintf(rf, "%s\n", j->json);
                continue;
            }
            snprintf(j->result, sizeof j->result, "/tmp/olla-batch-XXXXXX");
            int fd = mkstemp(j->result);
            if (fd >= 0)
                close(fd);
            fflush(NULL);
            j->started = olla_now();
            pid_t pid = fork();
            if (pid == 0)
                _exit(run_one(in, outp, &opt, j->result));
            if (pid < 0) {
                snprintf(j->status, sizeof j->status, "failed");
                j->json = error_line(in, "cannot start a process for it", 3);
                unlink(j->result);
                failed++;
                done++;
                continue;
            }
            j->pid = pid;
            running++;
        }
        if (running == 0)
            continue;
        int wstatus;
        pid_t pid = wait(&wstatus);
        if (pid < 0)
            break;
        for (int k = 0; k < jobs.n; k++) {
            job *j = &jobs.v[k];
            if (j->pid != pid)
                continue;
            j->pid = 0;
            j->seconds = olla_now() - j->started;
            finish(j, in_dir, wstatus);
            if (strcmp(j->status, "ok") != 0)
                failed++;
            running--;
            done++;
            if (rf && j->json)
                fprintf(rf, "%s\n", j->json);
            if (verbose > 0)
                fprintf(stderr, "[%d/%d] %s: %s\n", done, jobs.n, j->rel, j->status);
            break;
        }
    }
    if (verbose > 0) {
        fprintf(stderr, "\n%-48s %7s %12s %12s %8s %8s  %s\n", "model", "nodes", "input peak", "arena", "saving",
                "seconds", "status");
        int64_t sum_in = 0, sum_arena = 0;
        for (int k = 0; k < jobs.n; k++) {
            job *j = &jobs.v[k];
            char a[32] = "-", b[32] = "-", s[16] = "-";
            if (strcmp(j->status, "ok") == 0) {
                olla_cli_human_bytes(j->input_peak, a, sizeof a);
                olla_cli_human_bytes(j->arena, b, sizeof b);
                snprintf(s, sizeof s, "%.1f%%", olla_cli_pct(j->input_peak - j->arena, j->input_peak));
                sum_in += j->input_peak;
                sum_arena += j->arena;
            }
            fprintf(stderr, "%-48s %7d %12s %12s %8s %8.2f  %s\n", j->rel, j->nodes, a, b, s, j->seconds, j->status);
        }
        fprintf(stderr, "%d models: %d converted, %d unchanged, %d failed; total saving %.1f%%; %.1f s\n", jobs.n,
                jobs.n - failed - unchanged, unchanged, failed, olla_cli_pct(sum_in - sum_arena, sum_in),
                olla_now() - t0);
    }
    rc = failed ? 1 : 0;
out:
    if (rf && fclose(rf) != 0 && rc == 0)
        rc = 3;
    for (int k = 0; k < jobs.n; k++) {
        free(jobs.v[k].rel);
        free(jobs.v[k].json);
    }
    free(jobs.v);
    olla_cli_plan_opts_free(&po);
    return rc;
}
