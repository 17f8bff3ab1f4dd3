/* olla-onnx: writing the planned model. Only the node order and the olla.*
 * metadata change; everything else, unknown fields included, is packed back
 * as it was read. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/olla_plan_json.h"
#include "olla.h"
#include "onnx/olla_external.h"

static char *parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* The temporary file being written, so a signal handler can remove it. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending_set;

/* Outputs already renamed into place by this process: an interruption
 * after that removes them too, so that the run leaves all of its output
 * (it finished) or none (it was interrupted, and says so). */
#define OLLA_MAX_COMMITTED 8
static char committed[OLLA_MAX_COMMITTED][PATH_MAX];
static volatile sig_atomic_t n_committed;

void olla_write_abandon(void)
{
    if (pending_set)
        unlink(pending_tmp);
    for (int i = 0; i < n_committed; i++)
        unlink(committed[i]);
    olla_external_abandon();
}

/* rename with SIGINT/SIGTERM held back, so that a handler sees the file
 * either as pending or as committed */
static int commit_rename(const char *tmp, const char *path)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    int r = rename(tmp, path);
    if (r == 0 && path[0] == '/' && strlen(path) < PATH_MAX && n_committed < OLLA_MAX_COMMITTED) {
        strcpy(committed[n_committed], path);
        n_committed = n_committed + 1;
    } else if (r == 0 && path[0] != '/' && n_committed < OLLA_MAX_COMMITTED) {
        char *d = committed[n_committed];
        if (getcwd(d, PATH_MAX)) {
            size_t lc = strlen(d), lp = strlen(path);
            if (lc + 1 + lp < PATH_MAX) {
                d[lc] = '/';
                memcpy(d + lc + 1, path, lp + 1);
                n_committed = n_committed + 1;
            }
        }
    }
    pending_set = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return r;
}

static void set_pending(const char *tmp)
{
    pending_set = 0;
    if (tmp && strlen(tmp) < sizeof pending_tmp) {
        strcpy(pending_tmp, tmp);
        pending_set = 1;
    }
}

static olla_status write_file_atomic(const char *path, const uint8_t *data, size_t len, olla_error *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        olla_status st = olla_error_set(err, OLLA_ERR_INTERNAL, "cannot create a file next to %s: %s", path,
                                        strerror(errno));
        free(tmp);
        return st;
    }
    set_pending(tmp);
    fchmod(fd, 0644);
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            unlink(tmp);
            set_pending(NULL);
            free(tmp);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot write %s: %s; nothing was written", path,
                                  strerror(e));
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        set_pending(NULL);
        free(tmp);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot write %s: %s; nothing was written", path, strerror(e));
    }
    int renamed = commit_rename(tmp, path);
    if (renamed != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot write %s: %s; nothing was written", path, strerror(e));
    }
    free(tmp);
    return OLLA_OK;
}

olla_status olla_write_file_atomic(const char *path, const void *data, size_t len, olla_error *err)
{
    return write_file_atomic(path, data, len, err);
}

olla_status olla_write_model(const olla_model *m, const olla_plan *plan, const char *out_path, olla_error *err)
{
    Onnx__ModelProto *mp = m->proto; /* swapped fields are restored below */
    Onnx__GraphProto *g = mp->graph;
    if (plan->n_nodes != (int)g->n_node)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "internal error: the plan orders %d nodes, the model has %zu",
                              plan->n_nodes, g->n_node);
    Onnx__NodeProto **nodes = malloc((g->n_node + 1) * sizeof *nodes);
    Onnx__StringStringEntryProto **props = malloc((mp->n_metadata_props + 4) * sizeof *props);
    char *plan_json = olla_plan_to_json(plan);
    char arena[32];
    Onnx__StringStringEntryProto kv[3];
    uint8_t *buf = NULL;
    olla_status st = OLLA_OK;
    if (!nodes || !props || !plan_json) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
        goto done;
    }
    for (int i = 0; i < plan->n_nodes; i++)
        nodes[i] = g->node[plan->order[i]];
    size_t np = 0;
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const char *k = mp->metadata_props[i]->key;
        if (k && strncmp(k, "olla.", 5) == 0)
            continue; /* a rewritten model gets its plan replaced */
        props[np++] = mp->metadata_props[i];
    }
    snprintf(arena, sizeof arena, "%lld", (long long)plan->arena_bytes);
    const char *keys[3] = {OLLA_META_VERSION, OLLA_META_ARENA, OLLA_META_PLAN};
    const char *vals[3] = {OLLA_VERSION_STRING, arena, plan_json};
    for (int i = 0; i < 3; i++) {
        onnx__string_string_entry_proto__init(&kv[i]);
        kv[i].key = (char *)keys[i];
        kv[i].value = (char *)vals[i];
        props[np++] = &kv[i];
    }
    Onnx__NodeProto **old_nodes = g->node;
    Onnx__StringStringEntryProto **old_props = mp->metadata_props;
    size_t old_np = mp->n_metadata_props;
    g->node = nodes;
    mp->metadata_props = props;
    mp->n_metadata_props = np;
    size_t len = onnx__model_proto__get_packed_size(mp);
    if (len > (size_t)INT32_MAX) {
        st = olla_error_set(err, OLLA_ERR_INPUT,
                            "%s would be %zu bytes, over protobuf's 2 GiB limit; store the weights as external data",
                            out_path, len);
    } else if (!(buf = malloc(len ? len : 1))) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
    } else {
        onnx__model_proto__pack(mp, buf);
    }
    g->node = old_nodes;
    mp->metadata_props = old_props;
    mp->n_metadata_props = old_np;
    if (st != OLLA_OK)
        goto done;
    char *dir = parent_dir(out_path);
    if (!dir) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", out_path);
        goto done;
    }
    st = olla_external_mirror(m, dir, err);
    free(dir);
    if (st == OLLA_OK)
        st = write_file_atomic(out_path, buf, len, err);
done:
    free(buf);
    free(nodes);
    free(props);
    free(plan_json);
    return st;
}
