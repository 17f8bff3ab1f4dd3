/* olla-onnx: reading a model file into protobuf-c, and checking what the
 * bytes alone can tell: a graph is present, external data is safe and there.
 * External data is never read, only referenced. */
#include "onnx/olla_model.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/olla_external.h"
#include "onnx/olla_wire.h"

/* protobuf messages are limited to 2 GiB. */
#define OLLA_MAX_MODEL_BYTES ((uint64_t)2147483647)


static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

void olla_model_destroy(olla_model *m)
{
    if (!m)
        return;
    if (m->proto)
        onnx__model_proto__free_unpacked(m->proto, NULL);
    free(m->path);
    free(m->dir);
    free(m);
}

int64_t olla_model_opset(const Onnx__ModelProto *m, const char *domain)
{
    int want_default = !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        const char *d = o->domain ? o->domain : "";
        int is_default = !*d || strcmp(d, "ai.onnx") == 0;
        if ((want_default && is_default) || (!want_default && strcmp(d, domain) == 0))
            return o->has_version ? o->version : 0;
    }
    return 0;
}

olla_status olla_model_load_buffer(const uint8_t *data, size_t len, const char *name, const char *dir,
                                   olla_model **out, olla_error *err)
{
    *out = NULL;
    if ((uint64_t)len > OLLA_MAX_MODEL_BYTES)
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: the file is %zu bytes, over protobuf's 2 GiB limit; store the weights as external data",
                              name, len);
    olla_status st = olla_wire_scan_model(data, len, name, OLLA_MAX_GRAPH_DEPTH, err);
    if (st != OLLA_OK)
        return st;
    Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, len, data);
    if (!proto)
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: malformed model: protobuf-c could not decode it (a field has the wrong type or bad contents)",
                              name);
    if (!proto->graph) {
        onnx__model_proto__free_unpacked(proto, NULL);
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: the model has no graph", name);
    }
    olla_model *m = calloc(1, sizeof *m);
    if (!m) {
        onnx__model_proto__free_unpacked(proto, NULL);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory loading %s", name);
    }
    m->proto = proto;
    m->path = strdup(name);
    m->dir = dir ? strdup(dir) : NULL;
    if (!m->path || (dir && !m->dir)) {
        olla_model_destroy(m);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory loading %s", name);
    }
    st = olla_external_check(m, err);
    if (st != OLLA_OK) {
        olla_model_destroy(m);
        return st;
    }
    *out = m;
    return OLLA_OK;
}

olla_status olla_model_load_file(const char *path, olla_model **out, olla_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > OLLA_MAX_MODEL_BYTES) {
        close(fd);
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: the file is %lld bytes, over protobuf's 2 GiB limit; store the weights as external data",
                              path, (long long)sb.st_size);
    }
    size_t len = (size_t)sb.st_size;
    const uint8_t *data = NULL;
    void *map = MAP_FAILED;
    if (len > 0) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            return olla_error_set(err, OLLA_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
        }
        data = map;
    }
    close(fd);
    char *dir = dir_of(path);
    olla_status st;
    if (!dir)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory loading %s", path);
    else
        st = olla_model_load_buffer(data ? data : (const uint8_t *)"", len, path, dir, out, err);
    free(dir);
    if (map != MAP_FAILED)
        munmap(map, len);
    return st;
}
