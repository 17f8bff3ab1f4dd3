/* olla-onnx batch: the stamps that tell an unchanged model (cli/batch_stamps.c). */
#ifndef OLLA_CLI_BATCH_H
#define OLLA_CLI_BATCH_H

#include "olla_error.h"
#include "util/olla_strmap.h"

typedef struct olla_batch_stamp {
    char *rel;                          /* the model's path below IN_DIR */
    char *key;                          /* NULL: dropped */
    long long out_bytes, out_mtime_ns;  /* the output as it was written */
    char *report;                       /* its report, JSON */
} olla_batch_stamp;

typedef struct olla_batch_stamps {
    olla_batch_stamp *v;
    int n, cap;
    olla_strmap index; /* rel -> position in v */
    char *path;        /* OUT_DIR/.olla-batch-stamps */
} olla_batch_stamps;

/* Reads OUT_DIR's stamps (none on a first run); 0 on out of memory. */
int olla_batch_stamps_load(olla_batch_stamps *s, const char *out_dir);
const olla_batch_stamp *olla_batch_stamps_find(const olla_batch_stamps *s, const char *rel);
/* Adds or replaces the stamp of rel; 0 on out of memory. */
int olla_batch_stamps_set(olla_batch_stamps *s, const char *rel, const char *key, long long out_bytes,
                          long long out_mtime_ns, const char *report_json);
void olla_batch_stamps_drop(olla_batch_stamps *s, const char *rel);
/* Rewrites the file whole (atomically). */
olla_status olla_batch_stamps_save(const olla_batch_stamps *s, olla_error *err);
void olla_batch_stamps_free(olla_batch_stamps *s);

#endif
