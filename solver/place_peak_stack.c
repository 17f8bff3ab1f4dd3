/* olla-onnx: the peak stack, a greedy placement for parts whose busiest
 * time is a one-step spike (compiler-traced training steps).
 *
 * Greedy by size puts the spike's large short buffers at the bottom and
 * the long buffers live across the spike wherever their whole lifetimes
 * leave room; what those long buffers leave free at the spike (gaps between
 * them, never filled before a gradient takes them later) is what the arena
 * loses there. Here the buffers live at the busiest time are stacked first,
 * without a gap, from address 0, in order of start (ties: the latest end
 * lowest) or of end (the latest end lowest; ties: the earliest start
 * lowest); every other buffer is then placed by size, first fit, around
 * them. The stack is pinned, so the busiest time holds no hole; the rest
 * may still go higher. The driver (place.c) shakes each order's placement
 * (olla_place_shake: buffers pushed up, then down, which never raises the
 * arena and moves the rest out of the holes the greedy order left) and
 * keeps it when it is lower than the portfolio's.
 *
 * A call is one greedy pass (olla_place_greedy: O(log T) merged runs of
 * addresses a buffer), the cost of a heuristic of the portfolio; it is
 * deterministic and always valid. */
#include <stdlib.h>

#include "solver/place_internal.h"

/* The first time at which the load reaches max live; keys holds 2n. */
static int64_t busiest_time(const olla_pitem *it, size_t n, olla_pkey *keys)
{
    int64_t max = 0;
    size_t events = olla_place_items_loads(it, n, keys, &max);
    for (size_t k = 0; k < events; k++)
        if (keys[k].k2 == max)
            return keys[k].k1;
    return 0;
}

/* order[0..n): the buffers live at t in the stack's order, then the others
 * by size (ties by start); pinned gets the stack's offsets, -1 elsewhere. */
static void stack_order(const olla_pitem *it, size_t n, int64_t t, int by, olla_pkey *keys, int *order,
                        int64_t *pinned)
{
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        pinned[i] = -1;
        if (it[i].lower <= t && t < it[i].upper)
            keys[live++] = by == OLLA_PEAK_STACK_BY_START ? (olla_pkey){it[i].lower, -it[i].upper, (int)i}
                                                     : (olla_pkey){-it[i].upper, it[i].lower, (int)i};
    }
    olla_place_sort_keys(keys, live);
    int64_t top = 0;
    for (size_t e = 0; e < live; e++) {
        order[e] = keys[e].idx;
        pinned[keys[e].idx] = top;
        top += it[keys[e].idx].size;
    }
    size_t rest = 0;
    for (size_t i = 0; i < n; i++)
        if (pinned[i] < 0)
            keys[rest++] = (olla_pkey){-it[i].size, it[i].lower, (int)i};
    olla_place_sort_keys(keys, rest);
    for (size_t e = 0; e < rest; e++)
        order[live + e] = keys[e].idx;
}

int64_t olla_place_peak_stack(const olla_pitem *it, size_t n, int by, int64_t *off)
{
    if (n == 0)
        return 0;
    olla_pkey *keys = malloc(2 * n * sizeof *keys);
    int *order = malloc(n * sizeof *order);
    int64_t *pinned = malloc(n * sizeof *pinned);
    int64_t arena = -1;
    if (keys && order && pinned) {
        stack_order(it, n, busiest_time(it, n, keys), by, keys, order, pinned);
        arena = olla_place_greedy(it, n, order, pinned, 0, off);
    }
    free(keys);
    free(order);
    free(pinned);
    return arena;
}
