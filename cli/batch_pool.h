/* olla-onnx batch: the process pool (cli/batch_pool.c). Each model is
 * converted in a process of its own, at most `workers` at a time, so that
 * one bad model never stops the batch; the child leaves one JSON line in a
 * temporary file, which becomes the job's record when it ends. Ctrl-C
 * stops the running conversions (each removes its partial output) and
 * drops their records. The command (cli/cmd_batch.c) decides which models
 * need a conversion and what the user sees, through the pool's callbacks. */
#ifndef OLLA_CLI_BATCH_POOL_H
#define OLLA_CLI_BATCH_POOL_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "olla.h"

/* One model of the batch and its record. */
typedef struct olla_batch_job {
    char *rel; /* path below IN_DIR */
    pid_t pid;
    char result[64]; /* temp file with the child's JSON line */
    double started, seconds;
    char status[16];                  /* "" while pending or running; "ok", "failed", "unchanged" */
    char *json;                       /* the --report line */
    char *error;                      /* why it failed */
    char key[17];                     /* of its input and the options */
    int64_t held_input, held_planned; /* what the runtime holds (report saving_input_bytes, ..._planned_...) */
    int nodes;
    int n_warnings; /* report "warnings": the first ones are shown as it happens */
    char *warning[3];
} olla_batch_job;

typedef struct olla_batch_pool {
    const char *in_dir, *out_dir;
    olla_batch_job *jobs;
    int n_jobs;
    long long workers;       /* conversions at a time */
    int running;             /* conversions running now */
    const olla_options *opt; /* each conversion's */
    /* Before job j would start (in and out its model and output paths):
     * 1 when it is settled without a conversion (its record set and done
     * called), 0 when it needs one. */
    int (*settled)(void *ctx, olla_batch_job *j, const char *in, const char *out);
    /* Job j has a record now (j->status set): out is its output path. */
    void (*done)(void *ctx, olla_batch_job *j, const char *out);
    /* Job j's conversion has started. */
    void (*started)(void *ctx, olla_batch_job *j);
    void *ctx;
} olla_batch_pool;

/* Catches SIGINT and SIGTERM for the pool (no SA_RESTART, so that a wait
 * returns at once); olla_batch_signal() then names the signal, else 0. */
void olla_batch_catch_signals(void);
int olla_batch_signal(void);
/* Converts every job of p not settled before, workers at a time, until
 * all are done or a signal is caught (the running ones stopped then). */
void olla_batch_pool_run(olla_batch_pool *p);

/* The folders of path made (mkdir -p of its parent); 0 on failure. */
int olla_batch_make_parents(const char *path);
/* o (consumed) with its "status" set, as one plain JSON line (malloc'd). */
char *olla_batch_status_line(json_object *o, const char *status);
/* The figures of the table, and the warnings, from a report into j. */
void olla_batch_read_numbers(olla_batch_job *j, json_object *o);
/* j failed before or without a conversion: its record says why (msg) with
 * the exit code the conversion would have had. */
void olla_batch_fail_job(olla_batch_job *j, const char *in, const char *msg, int code);

#endif
