/* olla-onnx: tensor placement. Every planned tensor has a fixed lifetime;
 * olla_place() gives each one an offset in a single arena so that tensors
 * live at the same time never overlap, with the arena as small as possible
 * (or within a given capacity). */
#ifndef OLLA_PLACE_H
#define OLLA_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "util/olla_log.h"

typedef struct olla_buffer {
    int64_t lower, upper; /* live on [lower, upper) */
    int64_t size;
    int64_t offset; /* output */
} olla_buffer;

typedef struct olla_place_options {
    int64_t alignment; /* >= 1; sizes are rounded up to it, offsets are multiples of it */
    double time_limit; /* seconds, <= 0: no overall limit (each exact search is
                        * then stopped after 10 s and the ILP after 60 s) */
    int64_t capacity;  /* 0: minimize the arena; > 0: find a placement within it */
    const olla_logger *log; /* NULL: quiet; an OLLA_LOG_DETAIL line a phase */
    long long work_limit; /* searches' total work budget in units (about one
                           * section-list entry visited by the exact search);
                           * 0: OLLA_PLACE_WORK_PER_SECOND * time_limit / 2,
                           * or 30 s worth without a time limit. The result
                           * depends only on the buffers and this budget
                           * unless the time limit stops a phase first. */
} olla_place_options;

/* Work units the exact search does per second on one core of a 2-core AMD
 * EPYC virtual machine (0.4-1.4e9 measured, bench/RESULTS.md). Deriving the
 * budget from half the time limit leaves room for a machine twice as
 * slow or busy before the clock, not the budget, ends a search. */
#define OLLA_PLACE_WORK_PER_SECOND 1000000000LL

/* What ended the placement before every phase had run to its end. */
typedef enum olla_place_stop {
    OLLA_PLACE_STOPPED_NONE,   /* nothing: proven, or every phase finished */
    OLLA_PLACE_STOPPED_BUDGET, /* the work budget (same result on any machine) */
    OLLA_PLACE_STOPPED_TIME    /* the time limit cut a phase: the result, even an
                                * optimal arena's offsets, may depend on the load */
} olla_place_stop;

typedef enum olla_place_status {
    OLLA_PLACE_HEURISTIC, /* a heuristic placement, nothing proven */
    OLLA_PLACE_FEASIBLE,  /* fits the capacity, or improved by search; not proven optimal */
    OLLA_PLACE_OPTIMAL,   /* arena == lower bound, or proven by exhaustive search */
    OLLA_PLACE_NO_FIT,    /* proven: no placement within the capacity */
    OLLA_PLACE_NOT_FOUND  /* none found within the capacity and time limit */
} olla_place_status;

typedef struct olla_place_result {
    int64_t arena_bytes; /* max over buffers of offset + aligned size (0 if none) */
    int64_t lower_bound; /* max live bytes (aligned sizes), or a stronger proven bound */
    olla_place_status status;
    double seconds;
    olla_place_stop stopped_by;
    long long work;        /* work units spent by the searches */
    int64_t heuristic_bytes; /* the best heuristic's arena, before any search */
} olla_place_result;

/* Places bufs[i].offset for every buffer: the instance is cut where no
 * buffer is live across a time (the parts are independent); in each part a
 * portfolio of greedy heuristics, then the split at the busiest time and
 * the exact search, then (small parts) the address ILP. Buffers of size 0 or with
 * an empty lifetime get offset 0. On NO_FIT / NOT_FOUND the offsets hold the
 * best placement found (which exceeds the capacity). Uses a second thread
 * for the exact search. */
olla_status olla_place(olla_buffer *bufs, size_t n, const olla_place_options *opt,
                       olla_place_result *res, olla_error *err);

/* The same with the heuristic portfolio alone on each part (no search, no
 * ILP; opt->capacity is ignored and the arena minimized): the arena
 * olla_place's first phase reaches, in milliseconds. */
olla_status olla_place_heuristics(olla_buffer *bufs, size_t n, const olla_place_options *opt,
                                  olla_place_result *res, olla_error *err);

/* Checks a placement independently of the solver: OLLA_ERR_INPUT names two
 * overlapping buffers, an unaligned offset or a buffer beyond the arena. */
olla_status olla_place_validate(const olla_buffer *bufs, size_t n, int64_t arena_bytes,
                                int64_t alignment, olla_error *err);

/* "heuristic", "feasible", "optimal", "no-fit", "not-found". */
const char *olla_place_status_name(olla_place_status s);
/* "none", "budget", "time". */
const char *olla_place_stop_name(olla_place_stop s);

/* Checks the buffers themselves (intervals, sizes, overflow of aligned sizes). */
olla_status olla_place_check_input(const olla_buffer *bufs, size_t n, int64_t alignment,
                                   olla_error *err);

/* Max over time of the total aligned size of live buffers. */
int64_t olla_place_max_live(const olla_buffer *bufs, size_t n, int64_t alignment);

/* A minimalloc CSV table (solver/place_csv.c): a header naming id, lower,
 * upper and size in any order, extra columns kept as they are. An offset
 * column in the input is dropped and written afresh. */
typedef struct olla_place_table {
    size_t n;
    olla_buffer *bufs;
    char **ids;    /* one per row */
    char **rows;   /* each row's text without any offset column */
    char *header;  /* likewise */
} olla_place_table;

olla_status olla_place_csv_read(const char *path, olla_place_table *t, olla_error *err);
/* The same from len bytes in memory; name stands for the file in messages. */
olla_status olla_place_csv_read_buffer(const char *data, size_t len, const char *name, olla_place_table *t,
                                       olla_error *err);
/* Writes header and rows plus an offset column, via a temporary file and a
 * rename, so a failure never leaves a partial file at path. */
olla_status olla_place_csv_write(const char *path, const olla_place_table *t, olla_error *err);
void olla_place_table_free(olla_place_table *t);

#endif
