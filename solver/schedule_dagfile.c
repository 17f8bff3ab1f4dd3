/* olla-onnx: reader for the text DAG format (bench/DAGFORMAT.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_schedule.h"

/* The most nodes, and the most tensors, a file may declare. */
#define DAGFILE_MAX_COUNT 100000000L
/* Buffers with their NUL: a line as fgets reads it, a keyword (the "%31s"
 * of read_line) and a node's name or type (the "%1023s" of read_node). */
#define DAGFILE_LINE_BYTES 4096
#define DAGFILE_KEYWORD_BYTES 32
#define DAGFILE_WORD_BYTES 1024


void olla_dagfile_free(olla_dagfile *f)
{
    if (!f)
        return;
    int n = f->dag.n_nodes;
    if (f->op_type)
        for (int v = 0; v < n; v++)
            free(f->op_type[v]);
    if (f->op_domain)
        for (int v = 0; v < n; v++)
            free(f->op_domain[v]);
    free(f->op_type);
    free(f->op_domain);
    olla_dag_free(&f->dag);
    memset(f, 0, sizeof *f);
}

/* A DAG file being read: where, the counts its header gives, the builder
 * and the names of the nodes read so far. */
typedef struct dagfile_reader {
    const char *path;
    int lineno;
    int n, nt;       /* nodes and tensors the header declares; -1 before it */
    int next_tensor; /* tensors listed so far (ids are consecutive) */
    olla_dag_builder *b;
    char **types, **domains; /* n + 1 entries each, NULL for a node not named yet */
    olla_error *err;
} dagfile_reader;

/* The 'nodes N tensors M' header: the builder and the name arrays. */
static olla_status read_header(dagfile_reader *r, const char *line)
{
    long a, c;
    if (sscanf(line, "nodes %ld tensors %ld", &a, &c) != 2 || a < 0 || c < 0 || a > DAGFILE_MAX_COUNT || c > DAGFILE_MAX_COUNT ||
        r->n >= 0)
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%d: bad or repeated 'nodes N tensors M' line", r->path,
                              r->lineno);
    r->n = (int)a;
    r->nt = (int)c;
    r->b = olla_dag_builder_new(r->n, r->nt);
    r->types = calloc((size_t)r->n + 1, sizeof *r->types);
    r->domains = calloc((size_t)r->n + 1, sizeof *r->domains);
    if (!r->b || !r->types || !r->domains)
        return olla_error_set(r->err, OLLA_ERR_INTERNAL, "out of memory reading %s", r->path);
    return OLLA_OK;
}

/* A 'node ID DOMAIN OP' line: the node's names. */
static olla_status read_node(dagfile_reader *r, const char *line)
{
    char s1[DAGFILE_WORD_BYTES], s2[DAGFILE_WORD_BYTES];
    long a;
    if (sscanf(line, "node %ld %1023s %1023s", &a, s1, s2) != 3 || a < 0 || a >= r->n || r->types[a])
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%d: bad 'node ID DOMAIN OP' line", r->path, r->lineno);
    r->types[a] = strdup(s2);
    r->domains[a] = strdup(strcmp(s1, "-") == 0 ? "" : s1);
    if (!r->types[a] || !r->domains[a])
        return olla_error_set(r->err, OLLA_ERR_INTERNAL, "out of memory reading %s", r->path);
    return OLLA_OK;
}

/* A 'tensor ID PRODUCER BYTES IS_OUTPUT' line, into the builder. */
static olla_status read_tensor(dagfile_reader *r, const char *line)
{
    long a, c, d;
    long long bytes;
    if (sscanf(line, "tensor %ld %ld %lld %ld", &a, &c, &bytes, &d) != 4 || a != r->next_tensor || a >= r->nt ||
        c < 0 || c >= r->n || bytes < 0 || (d != 0 && d != 1))
        return olla_error_set(r->err, OLLA_ERR_INPUT,
                              "%s:%d: bad 'tensor ID PRODUCER BYTES IS_OUTPUT' line (ids must be "
                              "consecutive from 0, producers below %d)",
                              r->path, r->lineno, r->n);
    olla_dag_builder_tensor(r->b, (int)c, (int64_t)bytes, (int)d);
    r->next_tensor++;
    return OLLA_OK;
}

/* A 'use NODE TENSOR' line, into the builder. */
static olla_status read_use(dagfile_reader *r, const char *line)
{
    long a, c;
    if (sscanf(line, "use %ld %ld", &a, &c) != 2 || a < 0 || a >= r->n || c < 0 || c >= r->next_tensor)
        return olla_error_set(r->err, OLLA_ERR_INPUT,
                              "%s:%d: bad 'use NODE TENSOR' line (the tensor must be declared first)", r->path,
                              r->lineno);
    olla_dag_builder_use(r->b, (int)a, (int)c);
    return OLLA_OK;
}

/* One line of the file, by its keyword; comments and blank lines pass. */
static olla_status read_line(dagfile_reader *r, const char *line)
{
    char kw[DAGFILE_KEYWORD_BYTES];
    if (line[0] == '#' || line[0] == '\n' || sscanf(line, "%31s", kw) != 1 || strcmp(kw, "olla-dag") == 0)
        return OLLA_OK;
    if (strcmp(kw, "nodes") == 0)
        return read_header(r, line);
    if (r->n < 0)
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%d: '%s' before the 'nodes N tensors M' line", r->path,
                              r->lineno, kw);
    if (strcmp(kw, "node") == 0)
        return read_node(r, line);
    if (strcmp(kw, "tensor") == 0)
        return read_tensor(r, line);
    if (strcmp(kw, "use") == 0)
        return read_use(r, line);
    return olla_error_set(r->err, OLLA_ERR_INPUT, "%s:%d: unknown line kind '%s'", r->path, r->lineno, kw);
}

/* After the last line: the counts agree, the DAG is built into out, and
 * the nodes no line named get "?" (domain ""). */
static olla_status finish(dagfile_reader *r, olla_dagfile *out)
{
    if (r->n < 0)
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s: no 'nodes N tensors M' line; is it an olla DAG file?",
                              r->path);
    if (r->next_tensor != r->nt)
        return olla_error_set(r->err, OLLA_ERR_INPUT, "%s: %d tensors declared but %d listed", r->path, r->nt,
                              r->next_tensor);
    olla_status st = olla_dag_build(r->b, r->n, &out->dag, r->err);
    r->b = NULL;
    if (st != OLLA_OK)
        return st;
    for (int v = 0; v < r->n; v++)
        if (!r->types[v]) {
            r->types[v] = strdup("?");
            r->domains[v] = strdup("");
            if (!r->types[v] || !r->domains[v])
                return olla_error_set(r->err, OLLA_ERR_INTERNAL, "out of memory reading %s", r->path);
        }
    return OLLA_OK;
}

olla_status olla_dagfile_read(const char *path, olla_dagfile *out, olla_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return olla_error_set(err, OLLA_ERR_INPUT, "cannot open DAG file %s: %s; check the path", path,
                              strerror(errno));
    dagfile_reader r = {path, 0, -1, -1, 0, NULL, NULL, NULL, err};
    char line[DAGFILE_LINE_BYTES];
    olla_status st = OLLA_OK;
    while (st == OLLA_OK && fgets(line, sizeof line, fp)) {
        r.lineno++;
        st = read_line(&r, line);
    }
    fclose(fp);
    if (st == OLLA_OK)
        st = finish(&r, out);
    if (st != OLLA_OK) {
        olla_dag_builder_free(r.b);
        if (r.types && r.domains) /* both or no names were allocated */
            for (int v = 0; v < r.n; v++) {
                free(r.types[v]);
                free(r.domains[v]);
            }
        free(r.types);
        free(r.domains);
        olla_dag_free(&out->dag);
        return st;
    }
    out->op_type = r.types;
    out->op_domain = r.domains;
    out->dag.op_type = (const char *const *)r.types;
    out->dag.op_domain = (const char *const *)r.domains;
    return OLLA_OK;
}
