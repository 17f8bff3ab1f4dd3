/* olla-onnx: minimalloc's CSV format: `id,lower,upper,size`, one buffer per
 * line, live on [lower, upper). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "util/olla_file.h"
#include "util/olla_grow.h"

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_NEEDED };
static const char *const col_names[COL_NEEDED] = {"id", "lower", "upper", "size"};

void olla_place_table_free(olla_place_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        if (t->ids)
            free(t->ids[i]);
        if (t->rows)
            free(t->rows[i]);
    }
    free(t->ids);
    free(t->rows);
    free(t->bufs);
    free(t->header);
    memset(t, 0, sizeof *t);
}

/* Splits line in place at commas; trims spaces. Returns the field count or -1. */
static int split(char *line, char ***fields, size_t *cap)
{
    int k = 0;
    char *p = line;
    for (;;) {
        char **g = olla_grow(*fields, cap, (size_t)k + 1, sizeof *g);
        if (!g)
            return -1;
        *fields = g;
        char *end = strchr(p, ',');
        if (end)
            *end = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        (*fields)[k++] = p;
        if (!end)
            return k;
        p = end + 1;
    }
}

/* 1 ok, 0 not a non-negative integer, -1 overflow. */
static int parse_nonneg(const char *s, int64_t *out)
{
    if (!*s)
        return 0;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        int d = *p - '0';
        if (v > (INT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static char *join_without(char **f, int nf, int skip)
{
    size_t len = 1;
    for (int i = 0; i < nf; i++)
        len += strlen(f[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    int first = 1;
    for (int i = 0; i < nf; i++) {
        if (i == skip)
            continue;
        if (!first)
            *p++ = ',';
        first = 0;
        size_t l = strlen(f[i]);
        memcpy(p, f[i], l);
        p += l;
    }
    *p = '\0';
    return s;
}

typedef struct idkey {
    const char *id;
    size_t row;
} idkey;

static int cmp_id(const void *a, const void *b)
{
    const idkey *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->row < y->row ? -1 : x->row > y->row);
}

static olla_status check_ids(const char *path, const olla_place_table *t, const size_t *lines,
                             olla_error *err)
{
    if (t->n < 2)
        return OLLA_OK;
    idkey *k = malloc(t->n * sizeof *k);
    if (!k)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "%s: out of memory", path);
    for (size_t i = 0; i < t->n; i++)
        k[i] = (idkey){t->ids[i], i};
    qsort(k, t->n, sizeof *k, cmp_id);
    olla_status st = OLLA_OK;
    for (size_t i = 1; i < t->n; i++)
        if (strcmp(k[i].id, k[i - 1].id) == 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s:%zu: duplicate id \"%s\" (first on line %zu); ids must be unique",
                                path, lines[k[i].row], k[i].id, lines[k[i - 1].row]);
            break;
        }
    free(k);
    return st;
}

/* Reads the table from fp (closed here); path names it in messages. */
static olla_status read_stream(FILE *fp, const char *path, olla_place_table *t, olla_error *err)
{
    char *line = NULL, **f = NULL;
    size_t lcap = 0, fcap = 0, rcap = 0, lineno = 0, *lines = NULL;
    int col[COL_NEEDED] = {-1, -1, -1, -1}, offcol = -1, nhead = 0;
    olla_status st = OLLA_OK;
    ssize_t len;
    while ((len = getline(&line, &lcap, fp)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if ((size_t)len != strlen(line)) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%zu: contains a NUL byte; not a CSV file",
                                path, lineno);
            break;
        }
        int blank = 1;
        for (ssize_t i = 0; i < len; i++)
            if (line[i] != ' ' && line[i] != '\t')
                blank = 0;
        if (blank)
            continue;
        int nf = split(line, &f, &fcap);
        if (nf < 0) {
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", path, lineno);
            break;
        }
        if (nhead == 0) {
            nhead = nf;
            for (int i = 0; i < nf && st == OLLA_OK; i++) {
                int known = -1;
                for (int c = 0; c < COL_NEEDED; c++)
                    if (strcmp(f[i], col_names[c]) == 0)
                        known = c;
                if (known >= 0) {
                    if (col[known] >= 0)
                        st = olla_error_set(err, OLLA_ERR_INPUT,
                                            "%s:%zu: column \"%s\" appears twice in the header",
                                            path, lineno, f[i]);
                    col[known] = i;
                } else if (strcmp(f[i], "offset") == 0) {
                    offcol = i;
                }
            }
            for (int c = 0; c < COL_NEEDED && st == OLLA_OK; c++)
                if (col[c] < 0)
                    st = olla_error_set(err, OLLA_ERR_INPUT,
                                        "%s:%zu: the header has no \"%s\" column; expected id,lower,upper,size",
                                        path, lineno, col_names[c]);
            if (st == OLLA_OK && !(t->header = join_without(f, nf, offcol)))
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "%s: out of memory", path);
            if (st != OLLA_OK)
                break;
            continue;
        }
        if (nf != nhead) {
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s:%zu: %d fields where the header has %d", path, lineno, nf,
                                nhead);
            break;
        }
        if (t->n == rcap) {
            size_t nc = rcap ? rcap * 2 : 256;
            olla_buffer *b = realloc(t->bufs, nc * sizeof *b);
            if (b)
                t->bufs = b;
            char **ids = realloc(t->ids, nc * sizeof *ids);
            if (ids)
                t->ids = ids;
            char **rows = realloc(t->rows, nc * sizeof *rows);
            if (rows)
                t->rows = rows;
            size_t *ln = realloc(lines, nc * sizeof *ln);
            if (ln)
                lines = ln;
            if (!b || !ids || !rows || !ln) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", path, lineno);
                break;
            }
            rcap = nc;
        }
        olla_buffer b = {0, 0, 0, 0};
        int64_t *dst[3] = {&b.lower, &b.upper, &b.size};
        for (int c = COL_LOWER; c <= COL_SIZE && st == OLLA_OK; c++) {
            const char *v = f[col[c]];
            int r = parse_nonneg(v, dst[c - COL_LOWER]);
            if (r == 0 && v[0] == '-' && parse_nonneg(v + 1, dst[c - COL_LOWER]) != 0)
                st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%zu: %s %s is negative", path,
                                    lineno, col_names[c], v);
            else if (r == 0)
                st = olla_error_set(err, OLLA_ERR_INPUT,
                                    "%s:%zu: %s is not a non-negative integer: \"%s\"", path,
                                    lineno, col_names[c], v);
            else if (r < 0)
                st = olla_error_set(err, OLLA_ERR_INPUT,
                                    "%s:%zu: %s %s overflows 64 bits", path, lineno,
                                    col_names[c], v);
        }
        if (st == OLLA_OK && f[col[COL_ID]][0] == '\0')
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%zu: empty id", path, lineno);
        if (st == OLLA_OK && b.upper < b.lower)
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "%s:%zu: inverted interval: upper %lld is below lower %lld",
                                path, lineno, (long long)b.upper, (long long)b.lower);
        if (st == OLLA_OK && b.size > INT64_MAX / 8)
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%zu: size %lld is too large", path,
                                lineno, (long long)b.size);
        if (st != OLLA_OK)
            break;
        char *id = strdup(f[col[COL_ID]]);
        char *row = join_without(f, nf, offcol);
        if (!id || !row) {
            free(id);
            free(row);
            st = olla_error_set(err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", path, lineno);
            break;
        }
        t->bufs[t->n] = b;
        t->ids[t->n] = id;
        t->rows[t->n] = row;
        lines[t->n] = lineno;
        t->n++;
    }
    if (st == OLLA_OK && ferror(fp))
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: read error: %s", path, strerror(errno));
    if (st == OLLA_OK && nhead == 0)
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s: empty file; expected a header id,lower,upper,size", path);
    if (st == OLLA_OK)
        st = check_ids(path, t, lines, err);
    fclose(fp);
    free(line);
    free(f);
    free(lines);
    if (st != OLLA_OK)
        olla_place_table_free(t);
    return st;
}

olla_status olla_place_csv_read(const char *path, olla_place_table *t, olla_error *err)
{
    memset(t, 0, sizeof *t);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    return read_stream(fp, path, t, err);
}

olla_status olla_place_csv_read_buffer(const char *data, size_t len, const char *name, olla_place_table *t,
                                       olla_error *err)
{
    memset(t, 0, sizeof *t);
    if (len == 0)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: empty file; expected a header id,lower,upper,size", name);
    FILE *fp = fmemopen((void *)data, len, "r");
    if (!fp)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "%s: cannot read from memory: %s", name, strerror(errno));
    return read_stream(fp, name, t, err);
}

olla_status olla_place_csv_write(const char *path, const olla_place_table *t, olla_error *err)
{
    olla_text_file out;
    olla_status st = olla_text_file_open(&out, path, err);
    if (st != OLLA_OK)
        return st;
    fprintf(out.f, "%s,offset\n", t->header ? t->header : "id,lower,upper,size");
    for (size_t i = 0; i < t->n; i++)
        fprintf(out.f, "%s,%lld\n", t->rows[i], (long long)t->bufs[i].offset);
    return olla_text_file_write(&out, path, 0, err);
}
