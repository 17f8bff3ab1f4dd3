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
/* The largest size a row may give: room for alignment and sums above it. */
#define OLLA_CSV_MAX_SIZE (INT64_MAX / 8)

/* ---- fields, numbers and ids ---- */

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

/* ---- reading a table ---- */

/* One table being read: the current line and its fields, where the
 * columns are, the rows read so far with their line numbers. */
typedef struct csv_reader {
    const char *path; /* names the input in messages */
    olla_place_table *t;
    olla_error *err;
    char *line; /* the current line, split in place into f[0..nf) */
    size_t lcap, lineno;
    char **f;
    size_t fcap;
    int nf;
    int col[COL_NEEDED], offcol, nhead; /* column of each needed field, of "offset" (-1: none); header fields */
    size_t *lines;                      /* the line of each row, for messages */
    size_t bufs_cap, ids_cap, rows_cap, lines_cap;
} csv_reader;

/* The header in f[0..nf): where each needed column is (each once) and the
 * "offset" column, which the output drops and writes again. */
static olla_status read_header(csv_reader *r)
{
    olla_status st = OLLA_OK;
    r->nhead = r->nf;
    for (int i = 0; i < r->nf && st == OLLA_OK; i++) {
        int known = -1;
        for (int c = 0; c < COL_NEEDED; c++)
            if (strcmp(r->f[i], col_names[c]) == 0)
                known = c;
        if (known >= 0) {
            if (r->col[known] >= 0)
                st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: column \"%s\" appears twice in the header",
                                    r->path, r->lineno, r->f[i]);
            r->col[known] = i;
        } else if (strcmp(r->f[i], "offset") == 0) {
            r->offcol = i;
        }
    }
    for (int c = 0; c < COL_NEEDED && st == OLLA_OK; c++)
        if (r->col[c] < 0)
            st = olla_error_set(r->err, OLLA_ERR_INPUT,
                                "%s:%zu: the header has no \"%s\" column; expected id,lower,upper,size", r->path,
                                r->lineno, col_names[c]);
    if (st == OLLA_OK && !(r->t->header = join_without(r->f, r->nf, r->offcol)))
        st = olla_error_set(r->err, OLLA_ERR_INTERNAL, "%s: out of memory", r->path);
    return st;
}

/* Room for one more row in the table's arrays and the line numbers. */
static olla_status grow_rows(csv_reader *r)
{
    olla_place_table *t = r->t;
    size_t need = t->n + 1;
    olla_buffer *b = olla_grow(t->bufs, &r->bufs_cap, need, sizeof *b);
    if (b)
        t->bufs = b;
    char **ids = olla_grow(t->ids, &r->ids_cap, need, sizeof *ids);
    if (ids)
        t->ids = ids;
    char **rows = olla_grow(t->rows, &r->rows_cap, need, sizeof *rows);
    if (rows)
        t->rows = rows;
    size_t *ln = olla_grow(r->lines, &r->lines_cap, need, sizeof *ln);
    if (ln)
        r->lines = ln;
    if (!b || !ids || !rows || !ln)
        return olla_error_set(r->err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", r->path, r->lineno);
    return OLLA_OK;
}

/* The buffer of the row in f[0..nf): lower, upper and size non-negative
 * integers, upper not below lower, size within bounds, a non-empty id. */
static olla_status parse_row(const csv_reader *r, olla_buffer *b)
{
    olla_status st = OLLA_OK;
    int64_t *dst[] = {&b->lower, &b->upper, &b->size}; /* COL_LOWER to COL_SIZE */
    for (int c = COL_LOWER; c <= COL_SIZE && st == OLLA_OK; c++) {
        const char *v = r->f[r->col[c]];
        int ok = parse_nonneg(v, dst[c - COL_LOWER]);
        if (ok == 0 && v[0] == '-' && parse_nonneg(v + 1, dst[c - COL_LOWER]) != 0)
            st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: %s %s is negative", r->path, r->lineno, col_names[c],
                                v);
        else if (ok == 0)
            st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: %s is not a non-negative integer: \"%s\"", r->path,
                                r->lineno, col_names[c], v);
        else if (ok < 0)
            st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: %s %s overflows 64 bits", r->path, r->lineno,
                                col_names[c], v);
    }
    if (st == OLLA_OK && r->f[r->col[COL_ID]][0] == '\0')
        st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: empty id", r->path, r->lineno);
    if (st == OLLA_OK && b->upper < b->lower)
        st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: inverted interval: upper %lld is below lower %lld",
                            r->path, r->lineno, (long long)b->upper, (long long)b->lower);
    if (st == OLLA_OK && b->size > OLLA_CSV_MAX_SIZE)
        st = olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: size %lld is too large", r->path, r->lineno,
                            (long long)b->size);
    return st;
}

/* The row in f[0..nf) appended to the table, with its id and its text
 * without the offset column. */
static olla_status add_row(csv_reader *r)
{
    olla_place_table *t = r->t;
    if (r->nf != r->nhead)
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: %d fields where the header has %d", r->path, r->lineno,
                              r->nf, r->nhead);
    olla_status st = grow_rows(r);
    olla_buffer b = {0, 0, 0, 0};
    if (st == OLLA_OK)
        st = parse_row(r, &b);
    if (st != OLLA_OK)
        return st;
    char *id = strdup(r->f[r->col[COL_ID]]);
    char *row = join_without(r->f, r->nf, r->offcol);
    if (!id || !row) {
        free(id);
        free(row);
        return olla_error_set(r->err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", r->path, r->lineno);
    }
    t->bufs[t->n] = b;
    t->ids[t->n] = id;
    t->rows[t->n] = row;
    r->lines[t->n] = r->lineno;
    t->n++;
    return OLLA_OK;
}

/* The current line of len bytes with its line end taken off, split into
 * fields, unless blank (*blank set). */
static olla_status split_line(csv_reader *r, ssize_t len, int *blank)
{
    char *line = r->line;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    if ((size_t)len != strlen(line))
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%zu: contains a NUL byte; not a CSV file", r->path,
                              r->lineno);
    *blank = 1;
    for (ssize_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t')
            *blank = 0;
    if (*blank)
        return OLLA_OK;
    r->nf = split(line, &r->f, &r->fcap);
    if (r->nf < 0)
        return olla_error_set(r->err, OLLA_ERR_INTERNAL, "%s:%zu: out of memory", r->path, r->lineno);
    return OLLA_OK;
}

/* Reads the table from fp (closed here); path names it in messages. */
static olla_status read_stream(FILE *fp, const char *path, olla_place_table *t, olla_error *err)
{
    csv_reader r = {.path = path, .t = t, .err = err, .col = {-1, -1, -1, -1}, .offcol = -1};
    olla_status st = OLLA_OK;
    ssize_t len;
    while (st == OLLA_OK && (len = getline(&r.line, &r.lcap, fp)) >= 0) {
        r.lineno++;
        int blank = 0;
        st = split_line(&r, len, &blank);
        if (st == OLLA_OK && !blank)
            st = r.nhead == 0 ? read_header(&r) : add_row(&r);
    }
    if (st == OLLA_OK && ferror(fp))
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: read error: %s", path, strerror(errno));
    if (st == OLLA_OK && r.nhead == 0)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: empty file; expected a header id,lower,upper,size", path);
    if (st == OLLA_OK)
        st = check_ids(path, t, r.lines, err);
    fclose(fp);
    free(r.line);
    free(r.f);
    free(r.lines);
    if (st != OLLA_OK)
        olla_place_table_free(t);
    return st;
}

/* ---- the entry points ---- */

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
