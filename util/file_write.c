/* olla-onnx: writing a file whole or not at all. The bytes go to a
 * temporary file beside the target, are synced, and renamed into place with
 * SIGINT and SIGTERM held back, so a signal handler sees the file either as
 * pending (the temporary) or as committed (renamed), and olla_file_abandon()
 * can remove both: an interrupted run leaves no output behind. */
#include "util/olla_file.h"

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

/* Outputs already renamed into place by this process: an interruption
 * after that removes them too, so that the run leaves all of its output
 * (it finished) or none (it was interrupted, and says so). */
#define OLLA_MAX_COMMITTED 8
static char committed[OLLA_MAX_COMMITTED][PATH_MAX];
static volatile sig_atomic_t n_committed;

void olla_file_abandon(void)
{
    if (pending_set)
        unlink(pending_tmp);
    for (int i = 0; i < n_committed; i++)
        unlink(committed[i]);
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

olla_status olla_write_file_atomic(const char *path, const void *bytes, size_t len, olla_error *err)
{
    const uint8_t *data = bytes;
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
