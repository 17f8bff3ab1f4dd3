/* olla-onnx batch: the stamps that tell an unchanged model (cli/batch_stamps.c)
 * and the share of the models a run takes (cli/batch_shard.c). */
#ifndef OLLA_CLI_BATCH_H
#define OLLA_CLI_BATCH_H

#include <stdint.h>

#include "olla_error.h"
#include "util/olla_strmap.h"

/* --shard K/N: this run takes the models whose path below IN_DIR hashes to
 * K modulo N. n 0: no --shard (every model). */
typedef struct olla_batch_shard {
    int k, n;
} olla_batch_shard;

/* "K/N" with 0 <= K < N <= 1,000,000, decimal digits only; 0 when not. */
int olla_batch_parse_shard(const char *text, olla_batch_shard *out);
/* FNV-1a, 64 bits, of the path's bytes: the hash --shard takes modulo N. */
uint64_t olla_batch_path_hash(const char *rel);
/* 1 when the model at rel (its path below IN_DIR) is in the shard. */
int olla_batch_in_shard(const olla_batch_shard *sh, const char *rel);
/* The CPUs this process may run on (sched_getaffinity: what a scheduler
 * such as Slurm gave the job, or taskset), else the node's online CPUs. */
int olla_batch_cpus(void);
/* The default -j for that many CPUs: half of them, at least 1 (each
 * conversion's placement search may run two threads). */
long long olla_batch_default_jobs(int cpus);

typedef struct olla_batch_stamp {
    char *rel;                          /* the model's path below IN_DIR */
    char *key;                          /* NULL: dropped */
    long long out_bytes, out_mtime_ns;  /* the output as it was written */
    char *report;                       /* its report, JSON */
} olla_batch_stamp;

typedef struct olla_batch_stamps {
    olla_batch_stamp *v;
    int n;
    size_t cap; /* of v (olla_grow) */
    olla_strmap index; /* rel -> position in v */
    char *path;        /* the file this run writes: OUT_DIR/.olla-batch-stamps, or .olla-batch-stamps.K-of-N */
    olla_batch_shard shard;
    char **read;       /* the files read (n_read) */
    int n_read;
} olla_batch_stamps;

/* Reads every stamps file of OUT_DIR: .olla-batch-stamps and each shard's
 * .olla-batch-stamps.K-of-N, whatever N (none on a first run). A model
 * stamped in several keeps the stamp of its latest output. The run writes
 * its shard's file (shard->n > 0) or, without --shard, the plain one.
 * 0 on out of memory. */
int olla_batch_stamps_load(olla_batch_stamps *s, const char *out_dir, const olla_batch_shard *shard);
const olla_batch_stamp *olla_batch_stamps_find(const olla_batch_stamps *s, const char *rel);
/* Adds or replaces the stamp of rel; 0 on out of memory. */
int olla_batch_stamps_set(olla_batch_stamps *s, const char *rel, const char *key, long long out_bytes,
                          long long out_mtime_ns, const char *report_json);
void olla_batch_stamps_drop(olla_batch_stamps *s, const char *rel);
/* Rewrites the run's file whole (atomically): with --shard, the stamps of
 * the shard's models; without, every stamp, after which the shards' files
 * that were read are removed (folded into the plain one). */
olla_status olla_batch_stamps_save(const olla_batch_stamps *s, olla_error *err);
void olla_batch_stamps_free(olla_batch_stamps *s);

#endif
