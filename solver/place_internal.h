/* olla-onnx: helpers shared by the solver/place_*.c files (not public). */
#ifndef OLLA_PLACE_INTERNAL_H
#define OLLA_PLACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"

/* One buffer in alignment units: live on [lower, upper), size > 0. */
typedef struct olla_pitem {
    int64_t lower, upper, size;
} olla_pitem;

/* (key, index) pair for sorting with qsort. */
typedef struct olla_pkey {
    int64_t k1, k2;
    int idx;
} olla_pkey;
void olla_place_sort_keys(olla_pkey *keys, size_t n);

/* Max live units over time. */
int64_t olla_place_items_max_live(const olla_pitem *it, size_t n);
/* Max over items of offset + size. */
int64_t olla_place_items_arena(const olla_pitem *it, const int64_t *off, size_t n);

/* First fit by start time (place_sweep.c): off for every item; returns the
 * arena, or -1 when out of memory. Fast for any number of buffers. */
int64_t olla_place_sweep_first_fit(const olla_pitem *it, size_t n, int64_t *off);

/* Heuristics (place_heuristic.c): fills off with the best of several greedy
 * placements and returns its arena, or -1 when out of memory. Stops early
 * once the arena reaches lb or the deadline (if > 0) passes. */
int64_t olla_place_heuristic(const olla_pitem *it, size_t n, int64_t *off, int64_t lb,
                             double deadline, int verbosity);

/* Exact search (place_search.c) for a placement within capacity. Returns 1
 * (found, off filled), 0 (proven none), -1 (deadline reached), -2 (out of
 * memory), -3 (instance too large to search). */
int olla_place_search(const olla_pitem *it, size_t n, int64_t capacity, double deadline,
                      int64_t *off, long long *nodes);

/* The same search with buffers already fixed (fixed[f] at fixed_off[f], in
 * the same units): in every time section the others are placed above the
 * highest fixed buffer live there (holes below it stay unused). */
int olla_place_search_fixed(const olla_pitem *it, size_t n, const olla_pitem *fixed,
                            const int64_t *fixed_off, size_t nfixed, int64_t capacity,
                            double deadline, int64_t *off, long long *nodes);

/* Peak split (place_split.c): stacks the buffers live at the busiest time
 * from address 0 (longest-nested first) and searches the buffers before and
 * after that time separately above them (first trying the buffers near
 * that time as one window; sides too hard are split again), within
 * capacity. Only tried when at least one buffer in 8 is live at that time. Returns 1 (off filled), 0
 * (not tried or not found in time), -2 (out of memory). */
int olla_place_split(const olla_pitem *it, size_t n, int64_t capacity, double deadline,
                     int64_t *off, int verbosity);

/* Address ILP (place_ilp.c): minimizes the arena starting from warm (arena ub).
 * On return *arena and off hold the best placement found (never worse than
 * warm) and *bound a proven lower bound. Returns OLLA_OK or an error. */
olla_status olla_place_ilp(const olla_pitem *it, size_t n, const int64_t *warm, int64_t ub,
                           int64_t lb, double seconds, int64_t *off, int64_t *arena,
                           int64_t *bound, int verbosity, olla_error *err);

#endif
