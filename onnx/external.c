/* olla-onnx: validation and mirroring of external tensor data. */
#include "onnx/olla_external.h"
#include "util/olla_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static olla_status visit_tensor(const Onnx__TensorProto *t, olla_external_fn fn, void *ctx)
{
    if (!t || !t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return OLLA_OK;
    const char *location = NULL;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (e->key && strcmp(e->key, "location") == 0)
            location = e->value ? e->value : "";
    }
    return fn(t, location, ctx);
}

static olla_status visit_sparse(const Onnx__SparseTensorProto *s, olla_external_fn fn, void *ctx)
{
    if (!s)
        return OLLA_OK;
    olla_status st = visit_tensor(s->values, fn, ctx);
    if (st == OLLA_OK)
        st = visit_tensor(s->indices, fn, ctx);
    return st;
}

static olla_status visit_graph(const Onnx__GraphProto *g, olla_external_fn fn, void *ctx);

static olla_status visit_nodes(Onnx__NodeProto *const *nodes, size_t n, olla_external_fn fn, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        const Onnx__NodeProto *node = nodes[i];
        for (size_t a = 0; a < node->n_attribute; a++) {
            const Onnx__AttributeProto *at = node->attribute[a];
            olla_status st = visit_tensor(at->t, fn, ctx);
            if (st == OLLA_OK)
                st = visit_sparse(at->sparse_tensor, fn, ctx);
            for (size_t k = 0; st == OLLA_OK && k < at->n_tensors; k++)
                st = visit_tensor(at->tensors[k], fn, ctx);
            for (size_t k = 0; st == OLLA_OK && k < at->n_sparse_tensors; k++)
                st = visit_sparse(at->sparse_tensors[k], fn, ctx);
            if (st == OLLA_OK && at->g)
                st = visit_graph(at->g, fn, ctx);
            for (size_t k = 0; st == OLLA_OK && k < at->n_graphs; k++)
                st = visit_graph(at->graphs[k], fn, ctx);
            if (st != OLLA_OK)
                return st;
        }
    }
    return OLLA_OK;
}

static olla_status visit_graph(const Onnx__GraphProto *g, olla_external_fn fn, void *ctx)
{
    if (!g)
        return OLLA_OK;
    for (size_t i = 0; i < g->n_initializer; i++) {
        olla_status st = visit_tensor(g->initializer[i], fn, ctx);
        if (st != OLLA_OK)
            return st;
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        olla_status st = visit_sparse(g->sparse_initializer[i], fn, ctx);
        if (st != OLLA_OK)
            return st;
    }
    return visit_nodes(g->node, g->n_node, fn, ctx);
}

olla_status olla_external_foreach(const Onnx__ModelProto *m, olla_external_fn fn, void *ctx)
{
    olla_status st = visit_graph(m->graph, fn, ctx);
    for (size_t i = 0; st == OLLA_OK && i < m->n_training_info; i++) {
        st = visit_graph(m->training_info[i]->initialization, fn, ctx);
        if (st == OLLA_OK)
            st = visit_graph(m->training_info[i]->algorithm, fn, ctx);
    }
    for (size_t i = 0; st == OLLA_OK && i < m->n_functions; i++)
        st = visit_nodes(m->functions[i]->node, m->functions[i]->n_node, fn, ctx);
    return st;
}

typedef struct {
    const olla_model *model;
    olla_error *err;
    char root[PATH_MAX];
} check_ctx;

static int parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-')
        return 0;
    *out = v;
    return 1;
}

/* A location must be relative and must not climb out of the model's folder. */
static int location_is_safe(const char *loc)
{
    if (!loc[0] || loc[0] == '/' || strchr(loc, '\\'))
        return 0;
    const char *p = loc;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        if (!slash)
            break;
        p = slash + 1;
    }
    return 1;
}

static olla_status check_one(const Onnx__TensorProto *t, const char *loc, void *vctx)
{
    check_ctx *c = vctx;
    const char *model = c->model->path;
    const char *name = t->name ? t->name : "";
    if (!loc)
        return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: tensor '%s' is stored externally but has no location",
                              model, name);
    if (!location_is_safe(loc))
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: tensor '%s' has external data at '%s', a path that leaves the model's folder; "
                              "locations must be relative and must not contain '..'",
                              model, name, loc);
    if (!c->model->dir)
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: tensor '%s' has external data '%s' but the model was read from memory, with no "
                              "folder to find it in; give the model's path instead",
                              model, name, loc);
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s/%s", c->model->dir, loc) >= (int)sizeof full)
        return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: external data path for '%s' is too long", model, name);
    struct stat sb;
    if (stat(full, &sb) != 0)
        return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: tensor '%s': external data file '%s' is missing (%s)",
                              model, name, full, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: tensor '%s': external data '%s' is not a regular file",
                              model, name, full);
    /* a symbolic link may still point outside the folder */
    char real[PATH_MAX];
    if (!realpath(full, real))
        return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: tensor '%s': cannot resolve '%s': %s", model, name, full,
                              strerror(errno));
    size_t rn = strlen(c->root);
    if (strncmp(real, c->root, rn) != 0 || (real[rn] != '/' && !(rn == 1 && c->root[0] == '/')))
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: tensor '%s': external data '%s' resolves to '%s', outside the model's folder",
                              model, name, loc, real);
    unsigned long long offset = 0, length = 0;
    int has_length = 0;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (!e->key)
            continue;
        if (strcmp(e->key, "offset") == 0 && !parse_u64(e->value, &offset))
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: tensor '%s': external data offset '%s' is not a number",
                                  model, name, e->value ? e->value : "");
        if (strcmp(e->key, "length") == 0) {
            if (!parse_u64(e->value, &length))
                return olla_error_set(c->err, OLLA_ERR_INPUT,
                                      "%s: tensor '%s': external data length '%s' is not a number", model, name,
                                      e->value ? e->value : "");
            has_length = 1;
        }
    }
    unsigned long long size = (unsigned long long)sb.st_size;
    if (offset > size || (has_length && length > size - offset))
        return olla_error_set(c->err, OLLA_ERR_INPUT,
                              "%s: tensor '%s': external data '%s' is %llu bytes, too short for offset %llu + length %llu",
                              model, name, loc, size, offset, length);
    return OLLA_OK;
}

olla_status olla_external_check(const olla_model *m, olla_error *err)
{
    check_ctx c;
    c.model = m;
    c.err = err;
    c.root[0] = '\0';
    if (m->dir && !realpath(m->dir, c.root))
        c.root[0] = '\0';
    return olla_external_foreach(m->proto, check_one, &c);
}

typedef struct {
    const olla_model *model;
    const char *dst;
    olla_error *err;
} mirror_ctx;

static int make_parents(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = mkdir(path, 0777);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return 0;
    }
    return 1;
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY);
    if (in < 0)
        return 0;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out < 0) {
        close(in);
        return 0;
    }
    static char buf[1 << 16];
    int ok = 1;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0) {
            ok = 0;
            break;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w <= 0) {
                ok = 0;
                break;
            }
            done += w;
        }
        if (!ok)
            break;
    }
    if (close(out) != 0)
        ok = 0;
    close(in);
    return ok;
}

/* The copy being written, so an interrupted run can remove it. */
static char pending_copy[PATH_MAX + 16];
static volatile sig_atomic_t pending_copy_set;

void olla_external_abandon(void)
{
    if (pending_copy_set)
        unlink(pending_copy);
}

static olla_status mirror_one(const Onnx__TensorProto *t, const char *loc, void *vctx)
{
    mirror_ctx *c = vctx;
    char from[PATH_MAX], to[PATH_MAX], tmp[PATH_MAX + 16];
    snprintf(from, sizeof from, "%s/%s", c->model->dir, loc);
    if (snprintf(to, sizeof to, "%s/%s", c->dst, loc) >= (int)sizeof to)
        return olla_error_set(c->err, OLLA_ERR_INPUT, "output path for external data '%s' is too long", loc);
    struct stat a, b;
    if (stat(from, &a) != 0)
        return olla_error_set(c->err, OLLA_ERR_INPUT, "external data '%s' disappeared: %s", from, strerror(errno));
    if (stat(to, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return OLLA_OK; /* already there (same file) */
    if (!make_parents(to))
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "cannot create the folder for '%s': %s", to, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.olla-tmp", to);
    unlink(tmp);
    pending_copy_set = 0;
    memcpy(pending_copy, tmp, sizeof pending_copy);
    pending_copy_set = 1;
    int copied = link(from, tmp) == 0 || copy_file(from, tmp);
    int e = errno;
    if (copied && olla_file_commit(tmp, to) != 0) {
        e = errno;
        copied = -1;
    }
    pending_copy_set = 0;
    if (copied != 1) {
        unlink(tmp);
        if (copied == 0)
            return olla_error_set(c->err, OLLA_ERR_INTERNAL, "cannot copy external data '%s' to '%s': %s", from, to,
                                  strerror(e));
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "cannot write '%s': %s", to, strerror(e));
    }
    return OLLA_OK;
}

olla_status olla_external_mirror(const olla_model *m, const char *dst_dir, olla_error *err)
{
    if (!m->dir)
        return OLLA_OK;
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(m->dir, a) && realpath(dst_dir, b) && strcmp(a, b) == 0)
        return OLLA_OK;
    mirror_ctx c = {m, dst_dir, err};
    return olla_external_foreach(m->proto, mirror_one, &c);
}
