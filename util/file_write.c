/* olla-onnx: writing a file whole or not at all. The bytes go to a
 * temporary file beside the target, are synced, and renamed into place with
 * SIGINT and SIGTERM held back, so a signal handler sees the file either as
 * pending (the temporary) or as committed (renamed), and olla_file_abandon()
 * can remove both: an interrupted run leaves no output behind. */
#include "util/olla_file.h"
#include "util/olla_grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file being written, so a signal handler can remove it. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending_set;

/* Outputs already renamed into place by this process, as absolute paths:
 * an interruption after that removes them too, so that the run leaves all
 * of its output (it finished) or none (it was interrupted, and says so).
 * The list grows with SIGINT and SIGTERM held back, so a handler on this
 * thread never sees it half changed; other threads of ours block both. */
static char **committed;
static size_t committed_cap;
static volatile sig_atomic_t n_committed;

void olla_file_abandon(void)
{
    if (pending_set)
        unlink(pending_tmp);
    for (int i = 0; i < n_committed; i++)
        unlink(committed[i]);
}

/* SIGINT and SIGTERM held back while a file is created and recorded, or
 * renamed, so that a handler never runs between the two */
static void hold_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, old);
}

static void release_signals(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

void olla_file_forget(void)
{
    sigset_t old;
    hold_signals(&old);
    int n = n_committed;
    n_committed = 0; /* first, so that no handler reaches a freed path */
    for (int i = 0; i < n; i++)
        free(committed[i]);
    release_signals(&old);
}

/* Records path as committed; called with the signals held back. A path
 * that cannot be recorded (out of memory) stays behind if interrupted. */
static void record_committed(const char *path)
{
    char cwd[PATH_MAX];
    const char *dir = path[0] == '/' ? NULL : getcwd(cwd, sizeof cwd);
    if (path[0] != '/' && !dir)
        return;
    size_t ld = dir ? strlen(dir) + 1 : 0, lp = strlen(path);
    char *abs = malloc(ld + lp + 1);
    if (!abs)
        return;
    if (dir) {
        memcpy(abs, dir, ld - 1);
        abs[ld - 1] = '/';
    }
    memcpy(abs + ld, path, lp + 1);
    char **grown = olla_grow(committed, &committed_cap, (size_t)n_committed + 1, sizeof *grown);
    if (!grown) {
        free(abs);
        return;
    }
    committed = grown;
    committed[n_committed] = abs;
    n_committed = n_committed + 1;
}

int olla_file_commit(const char *tmp, const char *path)
{
    sigset_t old;
    hold_signals(&old);
    int r = rename(tmp, path);
    if (r == 0)
        record_committed(path);
    release_signals(&old);
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

olla_status olla_write_file_atomic(const char *path, const void *bytes, size_t len, olla_error *err)
{
    const uint8_t *data = bytes;
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    sigset_t old;
    hold_signals(&old);
    int fd = mkstemp(tmp), e = errno;
    if (fd >= 0)
        set_pending(tmp);
    release_signals(&old);
    if (fd < 0) {
        olla_status st = olla_error_set(err, OLLA_ERR_INTERNAL, "cannot create a file next to %s: %s", path,
                                        strerror(e));
        free(tmp);
        return st;
    }
    fchmod(fd, 0644);
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 ? errno : ENOSPC;
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
        e = errno;
        unlink(tmp);
        set_pending(NULL);
        free(tmp);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot write %s: %s; nothing was written", path, strerror(e));
    }
    /* the rename, the record and the end of the pending state in one step
     * as far as a signal handler can see */
    hold_signals(&old);
    int renamed = rename(tmp, path);
    e = errno;
    if (renamed == 0)
        record_committed(path);
    else
        unlink(tmp);
    pending_set = 0;
    release_signals(&old);
    if (renamed != 0) {
        free(tmp);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "cannot write %s: %s; nothing was written", path, strerror(e));
    }
    free(tmp);
    return OLLA_OK;
}

int olla_folder_writable(const char *dir, int *why)
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.olla-probe-XXXXXX", dir) >= (int)sizeof probe) {
        *why = ENAMETOOLONG;
        return 0;
    }
    sigset_t old;
    hold_signals(&old);
    int fd = mkstemp(probe);
    if (fd < 0)
        *why = errno;
    else {
        close(fd);
        unlink(probe);
    }
    release_signals(&old);
    return fd >= 0;
}

olla_status olla_text_file_open(olla_text_file *t, const char *path, olla_error *err)
{
    t->buf = NULL;
    t->len = 0;
    t->f = open_memstream(&t->buf, &t->len);
    if (!t->f)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path);
    return OLLA_OK;
}

olla_status olla_text_file_write(olla_text_file *t, const char *path, int failed, olla_error *err)
{
    failed |= ferror(t->f);
    failed |= fclose(t->f) != 0;
    t->f = NULL;
    olla_status st = failed ? olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing %s", path)
                            : olla_write_file_atomic(path, t->buf, t->len, err);
    free(t->buf);
    t->buf = NULL;
    return st;
}
