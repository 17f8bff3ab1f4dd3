/* olla-onnx batch across machines: --shard K/N, and the CPUs a run may use.
 *
 * N runs that see the same IN_DIR (N machines, or the N tasks of a job
 * array) each take the models whose path below IN_DIR hashes to their K:
 * FNV-1a (64 bits) of the path's bytes, modulo N. A model's shard depends
 * on its path alone, so no two shards ever take the same model, even when
 * their listings of the folder differ (a model added between two runs goes
 * to exactly one). Each shard keeps its own stamps (cli/batch_stamps.c) and
 * writes its own --report; the reports of the N runs concatenated are the
 * report of the whole folder. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "util/olla_arith.h"

#define MAX_SHARDS 1000000

/* A count of 1 to MAX_SHARDS digits' worth, from *p; -1 when none. */
static long read_count(const char **p)
{
    long v = 0;
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > MAX_SHARDS)
            return -1;
    }
    *p = s;
    return v;
}

int olla_batch_parse_shard(const char *text, olla_batch_shard *out)
{
    const char *p = text;
    long k = read_count(&p);
    if (k < 0 || *p++ != '/')
        return 0;
    long n = read_count(&p);
    if (n < 1 || *p != '\0' || k >= n)
        return 0;
    out->k = (int)k;
    out->n = (int)n;
    return 1;
}

uint64_t olla_batch_path_hash(const char *rel)
{
    return olla_fnv1a(OLLA_FNV1A_START, rel);
}

int olla_batch_in_shard(const olla_batch_shard *sh, const char *rel)
{
    return sh->n <= 1 || olla_batch_path_hash(rel) % (uint64_t)sh->n == (uint64_t)sh->k;
}

int olla_batch_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

long long olla_batch_default_jobs(int cpus)
{
    return cpus / 2 > 1 ? cpus / 2 : 1; /* each conversion's solver may use two CPUs */
}
