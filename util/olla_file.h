/* olla-onnx: writing output files whole or not at all. */
#ifndef OLLA_FILE_H
#define OLLA_FILE_H

#include <stddef.h>

#include "olla_error.h"

/* Writes len bytes to path through a temporary file beside it, fsync and a
 * rename: path ends up complete or untouched, never partial. */
olla_status olla_write_file_atomic(const char *path, const void *data, size_t len, olla_error *err);

/* Renames the finished temporary tmp to path and records path as an
 * output of this run (removed by olla_file_abandon), with SIGINT and SIGTERM
 * held back meanwhile; rename's result. */
int olla_file_commit(const char *tmp, const char *path);

/* Can a file be created in dir? Asked by creating and removing one (which
 * also answers for read-only file systems and for root), with SIGINT and
 * SIGTERM held back meanwhile. 0 and *why (an errno value) when not. */
int olla_folder_writable(const char *dir, int *why);

/* Async-signal-safe: removes the temporary file being written, if any, and
 * the files this process already renamed into place, so an
 * interrupted run leaves none of its output behind. */
void olla_file_abandon(void);

#endif
