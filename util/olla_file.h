/* olla-onnx: writing output files whole or not at all. */
#ifndef OLLA_FILE_H
#define OLLA_FILE_H

#include <stddef.h>

#include "olla_error.h"

/* Writes len bytes to path through a temporary file beside it, fsync and a
 * rename: path ends up complete or untouched, never partial. */
olla_status olla_write_file_atomic(const char *path, const void *data, size_t len, olla_error *err);

/* Async-signal-safe: removes the temporary file being written, if any, and
 * the files this process already renamed into place (up to 8), so an
 * interrupted run leaves none of its output behind. */
void olla_file_abandon(void);

#endif
