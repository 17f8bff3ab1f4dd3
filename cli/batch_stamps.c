/* The stamps of a batch's output folder, OUT_DIR/.olla-batch-stamps (and,
 * for runs with --shard K/N, one file per shard, .olla-batch-stamps.K-of-N,
 * so that shards writing one folder at once never overwrite each other's):
 * one JSON line per converted model, {"model": its path below IN_DIR, "key": a
 * hash of the input file's identity and of every option that changes the
 * plan, "output_bytes" and "output_mtime_ns": the output as written, and
 * "report": the conversion's report}. A model is "unchanged", and skipped,
 * only when its key is the same and its output is still the file that was
 * written; so a changed model, a changed option, or an output edited or
 * removed by hand is converted again. The file is rewritten whole at the
 * end of a run (util/olla_file.h): never partial.
 *
 * Every run reads all the files; where two stamp one model (a shard's run
 * after a plain one, or runs with another N), the stamp of the latest
 * output wins, since only it can match the output still there. */
#include <ctype.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "util/olla_file.h"
#include "util/olla_grow.h"

#define STAMPS_NAME ".olla-batch-stamps"

static char *dup_str(json_object *o, const char *field)
{
    json_object *v;
    if (!json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return strdup(json_object_get_string(v));
}

static long long get_i64(json_object *o, const char *field)
{
    json_object *v;
    return json_object_object_get_ex(o, field, &v) ? (long long)json_object_get_int64(v) : -1;
}

/* One line of a file; a malformed one (say, cut by a crash) is skipped,
 * and so is one older than a stamp of the same model already read. */
static int load_line(olla_batch_stamps *s, const char *line)
{
    json_object *o = json_tokener_parse(line);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return 1;
    }
    json_object *rep = NULL;
    json_object_object_get_ex(o, "report", &rep);
    char *rel = dup_str(o, "model"), *key = dup_str(o, "key");
    const char *rep_text = rep ? json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN) : "{}";
    long long mtime = get_i64(o, "output_mtime_ns");
    const olla_batch_stamp *had = rel ? olla_batch_stamps_find(s, rel) : NULL;
    int ok = !rel || !key || (had && had->out_mtime_ns >= mtime) ||
             olla_batch_stamps_set(s, rel, key, get_i64(o, "output_bytes"), mtime, rep_text);
    free(rel);
    free(key);
    json_object_put(o);
    return ok;
}

static int load_file(olla_batch_stamps *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* a first run, or removed meanwhile by a run folding the shards */
    char *line = NULL;
    size_t cap = 0;
    int ok = 1;
    while (ok && getline(&line, &cap, f) > 0)
        ok = load_line(s, line);
    free(line);
    fclose(f);
    return ok;
}

/* 1 for ".olla-batch-stamps.K-of-N" (digits), not a temporary beside it. */
static int is_shard_file(const char *name)
{
    size_t len = strlen(STAMPS_NAME);
    unsigned k, n;
    int end = -1, sep = -1;
    if (strncmp(name, STAMPS_NAME, len) != 0 ||
        sscanf(name + len, ".%u-of-%n%u%n", &k, &sep, &n, &end) != 2 || end < 0)
        return 0;
    /* digits only: sscanf would also take a sign or blanks */
    return isdigit((unsigned char)name[len + 1]) && isdigit((unsigned char)name[len + (size_t)sep]) &&
           name[len + (size_t)end] == '\0';
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The shards' files in out_dir, in name order, into s->read. */
static int list_shard_files(olla_batch_stamps *s, const char *out_dir)
{
    DIR *d = opendir(out_dir);
    if (!d)
        return 1;
    int ok = 1;
    size_t cap = 0;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (!is_shard_file(e->d_name))
            continue;
        char **grown = olla_grow(s->read, &cap, (size_t)s->n_read + 1, sizeof *grown);
        ok = grown != NULL;
        s->read = grown ? grown : s->read;
        size_t n = strlen(out_dir) + strlen(e->d_name) + 2;
        char *path = ok ? malloc(n) : NULL;
        if ((ok = path != NULL)) {
            snprintf(path, n, "%s/%s", out_dir, e->d_name);
            s->read[s->n_read++] = path;
        }
    }
    closedir(d);
    if (ok && s->n_read > 1)
        qsort(s->read, (size_t)s->n_read, sizeof *s->read, cmp_names);
    return ok;
}

int olla_batch_stamps_load(olla_batch_stamps *s, const char *out_dir, const olla_batch_shard *shard)
{
    memset(s, 0, sizeof *s);
    s->shard = *shard;
    size_t n = strlen(out_dir) + sizeof STAMPS_NAME + 48;
    if (!(s->path = malloc(n)) || !olla_strmap_init(&s->index, 64))
        return 0;
    snprintf(s->path, n, "%s/%s", out_dir, STAMPS_NAME);
    int ok = load_file(s, s->path) && list_shard_files(s, out_dir);
    for (int i = 0; ok && i < s->n_read; i++)
        ok = load_file(s, s->read[i]);
    if (shard->n > 0)
        snprintf(s->path, n, "%s/%s.%d-of-%d", out_dir, STAMPS_NAME, shard->k, shard->n);
    return ok;
}

const olla_batch_stamp *olla_batch_stamps_find(const olla_batch_stamps *s, const char *rel)
{
    int k = olla_strmap_get(&s->index, rel);
    return k >= 0 && s->v[k].key ? &s->v[k] : NULL;
}

int olla_batch_stamps_set(olla_batch_stamps *s, const char *rel, const char *key, long long out_bytes,
                          long long out_mtime_ns, const char *report_json)
{
    int k = olla_strmap_get(&s->index, rel);
    if (k < 0) {
        olla_batch_stamp *v = olla_grow(s->v, &s->cap, (size_t)s->n + 1, sizeof *v);
        if (!v)
            return 0;
        s->v = v;
        k = s->n;
        memset(&s->v[k], 0, sizeof s->v[k]);
        if (!(s->v[k].rel = strdup(rel)) || !olla_strmap_put(&s->index, s->v[k].rel, k)) {
            free(s->v[k].rel);
            return 0;
        }
        s->n++;
    }
    olla_batch_stamp *e = &s->v[k];
    free(e->key);
    free(e->report);
    e->key = strdup(key);
    e->report = strdup(report_json ? report_json : "{}");
    e->out_bytes = out_bytes;
    e->out_mtime_ns = out_mtime_ns;
    return e->key && e->report;
}

void olla_batch_stamps_drop(olla_batch_stamps *s, const char *rel)
{
    int k = olla_strmap_get(&s->index, rel);
    if (k < 0)
        return;
    free(s->v[k].key);
    s->v[k].key = NULL; /* the slot stays, empty, so the index stays valid */
}

static int write_line(FILE *f, const olla_batch_stamp *e)
{
    json_object *o = json_object_new_object(), *rep = json_tokener_parse(e->report);
    if (!o)
        return 0;
    json_object_object_add(o, "model", json_object_new_string(e->rel));
    json_object_object_add(o, "key", json_object_new_string(e->key));
    json_object_object_add(o, "output_bytes", json_object_new_int64(e->out_bytes));
    json_object_object_add(o, "output_mtime_ns", json_object_new_int64(e->out_mtime_ns));
    json_object_object_add(o, "report", rep ? rep : json_object_new_object());
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    int ok = text && fprintf(f, "%s\n", text) > 0;
    json_object_put(o);
    return ok;
}

olla_status olla_batch_stamps_save(const olla_batch_stamps *s, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, s->path, err);
    if (st != OLLA_OK)
        return st;
    int ok = 1;
    for (int k = 0; k < s->n && ok; k++)
        if (s->v[k].key && olla_batch_in_shard(&s->shard, s->v[k].rel))
            ok = write_line(out.f, &s->v[k]);
    st = olla_text_file_write(&out, s->path, !ok, err);
    /* a plain run holds every stamp now: the shards' files are folded in */
    for (int i = 0; st == OLLA_OK && s->shard.n == 0 && i < s->n_read; i++)
        unlink(s->read[i]);
    return st;
}

void olla_batch_stamps_free(olla_batch_stamps *s)
{
    for (int k = 0; k < s->n; k++) {
        free(s->v[k].rel);
        free(s->v[k].key);
        free(s->v[k].report);
    }
    free(s->v);
    free(s->path);
    for (int i = 0; i < s->n_read; i++)
        free(s->read[i]);
    free(s->read);
    olla_strmap_free(&s->index);
    memset(s, 0, sizeof *s);
}
