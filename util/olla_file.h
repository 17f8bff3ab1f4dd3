/* olla-onnx: writing output files whole or not at all. */
#ifndef OLLA_FILE_H
#define OLLA_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "olla_error.h"

/* Writes len bytes to path through a temporary file beside it, fsync and a
 * rename: path ends up complete or untouched, never partial. */
olla_status olla_write_file_atomic(const char *path, const void *data, size_t len, olla_error *err);

/* A text file built in memory and then written whole: olla_text_file_open
 * starts one (an error when out of memory); print to its stream f; then
 * olla_text_file_write closes the stream and writes the text to path with
 * olla_write_file_atomic, or, when failed is set or the stream reports an
 * error, writes nothing and returns an error. Either way the memory is
 * released. */
typedef struct olla_text_file {
    FILE *f;
    char *buf;
    size_t len;
} olla_text_file;
olla_status olla_text_file_open(olla_text_file *t, const char *path, olla_error *err);
olla_status olla_text_file_write(olla_text_file *t, const char *path, int failed, olla_error *err);

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

/* Forgets the files renamed into place so far: a later olla_file_abandon()
 * leaves them. For a process that writes one run's outputs after another
 * (a library caller), once a run is complete. */
void olla_file_forget(void);

#endif
