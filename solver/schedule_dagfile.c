/* olla-onnx: reader for the text DAG format (bench/DAGFORMAT.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/olla_schedule.h"


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

olla_status olla_dagfile_read(const char *path, olla_dagfile *out, olla_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return olla_error_set(err, OLLA_ERR_INPUT, "cannot open DAG file %s: %s; check the path", path,
                              strerror(errno));
    char line[4096];
    int n = -1, nt = -1, lineno = 0, next_tensor = 0;
    olla_dag_builder *b = NULL;
    char **types = NULL, **domains = NULL;
    olla_status st = OLLA_OK;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char kw[32], s1[1024], s2[1024];
        long a, c, d;
        long long bytes;
        if (sscanf(line, "%31s", kw) != 1)
            continue;
        if (strcmp(kw, "olla-dag") == 0)
            continue;
        if (strcmp(kw, "nodes") == 0) {
            if (sscanf(line, "nodes %ld tensors %ld", &a, &c) != 2 || a < 0 || c < 0 || a > 100000000 ||
                c > 100000000 || n >= 0) {
                st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%d: bad or repeated 'nodes N tensors M' line", path,
                                    lineno);
                break;
            }
            n = (int)a;
            nt = (int)c;
            b = olla_dag_builder_new(n, nt);
            types = calloc((size_t)n + 1, sizeof *types);
            domains = calloc((size_t)n + 1, sizeof *domains);
            if (!b || !types || !domains) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading %s", path);
                break;
            }
            continue;
        }
        if (n < 0) {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%d: '%s' before the 'nodes N tensors M' line", path,
                                lineno, kw);
            break;
        }
        if (strcmp(kw, "node") == 0) {
            if (sscanf(line, "node %ld %1023s %1023s", &a, s1, s2) != 3 || a < 0 || a >= n || types[a]) {
                st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%d: bad 'node ID DOMAIN OP' line", path, lineno);
                break;
            }
            types[a] = strdup(s2);
            domains[a] = strdup(strcmp(s1, "-") == 0 ? "" : s1);
            if (!types[a] || !domains[a]) {
                st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading %s", path);
                break;
            }
        } else if (strcmp(kw, "tensor") == 0) {
            if (sscanf(line, "tensor %ld %ld %lld %ld", &a, &c, &bytes, &d) != 4 || a != next_tensor || a >= nt ||
                c < 0 || c >= n || bytes < 0 || (d != 0 && d != 1)) {
                st = olla_error_set(err, OLLA_ERR_INPUT,
                                    "%s:%d: bad 'tensor ID PRODUCER BYTES IS_OUTPUT' line (ids must be "
                                    "consecutive from 0, producers below %d)",
                                    path, lineno, n);
                break;
            }
            olla_dag_builder_tensor(b, (int)c, (int64_t)bytes, (int)d);
            next_tensor++;
        } else if (strcmp(kw, "use") == 0) {
            if (sscanf(line, "use %ld %ld", &a, &c) != 2 || a < 0 || a >= n || c < 0 || c >= next_tensor) {
                st = olla_error_set(err, OLLA_ERR_INPUT,
                                    "%s:%d: bad 'use NODE TENSOR' line (the tensor must be declared first)", path,
                                    lineno);
                break;
            }
            olla_dag_builder_use(b, (int)a, (int)c);
        } else {
            st = olla_error_set(err, OLLA_ERR_INPUT, "%s:%d: unknown line kind '%s'", path, lineno, kw);
            break;
        }
    }
    fclose(fp);
    if (st == OLLA_OK && n < 0)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: no 'nodes N tensors M' line; is it an olla DAG file?", path);
    if (st == OLLA_OK && next_tensor != nt)
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: %d tensors declared but %d listed", path, nt, next_tensor);
    if (st == OLLA_OK) {
        st = olla_dag_build(b, n, &out->dag, err);
        b = NULL;
    }
    if (st == OLLA_OK)
        for (int v = 0; v < n; v++)
            if (!types[v]) {
                types[v] = strdup("?");
                domains[v] = strdup("");
                if (!types[v] || !domains[v]) {
                    st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory reading %s", path);
                    break;
                }
            }
    if (st != OLLA_OK) {
        olla_dag_builder_free(b);
        if (types)
            for (int v = 0; v < n; v++) {
                free(types[v]);
                free(domains[v]);
            }
        free(types);
        free(domains);
        olla_dag_free(&out->dag);
        return st;
    }
    out->op_type = types;
    out->op_domain = domains;
    out->dag.op_type = (const char *const *)types;
    out->dag.op_domain = (const char *const *)domains;
    return OLLA_OK;
}
