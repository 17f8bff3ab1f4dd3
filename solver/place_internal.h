/* olla-onnx: helpers shared by the solver/place_*.c files (not public). */
#ifndef OLLA_PLACE_INTERNAL_H
#define OLLA_PLACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "solver/olla_place.h"

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
/* An area (lifetime x size, computed as a double) above this sorts as the
 * largest of all, since its negation as an int64_t would overflow. */
#define OLLA_PLACE_AREA_MAX 9e18
/* Sorts a[0..n) ascending. */
void olla_place_sort_i64(int64_t *a, size_t n);
/* Sorts key[0..m) ascending, stably, through tkey (room for m), and with
 * id (may be NULL) moves id[] along through tid (room for m): a radix sort
 * in linear time (place_search_state.c). */
void olla_place_radix_sort(uint64_t *key, int *id, size_t m, uint64_t *tkey, int *tid);
/* Number of values below v in the sorted a[0..n): the index of the first
 * value not below v. */
size_t olla_place_count_below(const int64_t *a, size_t n, int64_t v);

/* Max live units over time. */
int64_t olla_place_items_max_live(const olla_pitem *it, size_t n);
/* The load profile: for each time at which a buffer starts or ends, in
 * order, the units live from it on, as keys[k].k1 (time) and keys[k].k2
 * (load) for k below the returned count; keys holds 2n entries; *max gets
 * max live. (Within a time, ends come before starts, so the load after a
 * time's last event is its largest.) */
size_t olla_place_items_loads(const olla_pitem *it, size_t n, olla_pkey *keys, int64_t *max);
/* Max over items of offset + size. */
int64_t olla_place_items_arena(const olla_pitem *it, const int64_t *off, size_t n);

/* A deterministic work budget shared by the phases of one placement. The
 * unit is one entry of a section list visited by the exact search (builds,
 * resets and fixed-span checks are counted in the same unit), so the same
 * instance and budget always do the same work and give the same result,
 * whatever the machine's load. The deadline is only a safety net: when it
 * cuts a phase short, OLLA_PLACE_STOPPED_TIME is recorded and the result
 * may differ from run to run. Every phase checks what is left before it
 * charges work, so a part never ends above its limit, nor the whole
 * placement above its budget (tests/unit/test_place_budget.c). */
typedef struct olla_pwork {
    long long limit; /* units this phase may spend */
    long long used;  /* units spent (the same on every run unless the deadline hit) */
    double deadline; /* wall clock, 0: none */
    int stopped;     /* bits: 1 << OLLA_PLACE_STOPPED_BUDGET, 1 << OLLA_PLACE_STOPPED_TIME */
} olla_pwork;

/* A part of what w has left: at most units (and at least one). */
olla_pwork olla_pwork_part(const olla_pwork *w, long long units);
/* Charges a part's work and stop reasons to w. */
void olla_pwork_join(olla_pwork *w, const olla_pwork *part);
long long olla_pwork_left(const olla_pwork *w);
/* The deadline has passed (records OLLA_PLACE_STOPPED_TIME). */
int olla_pwork_late(olla_pwork *w);

/* First fit by start time (place_sweep.c): off for every item; returns the
 * arena, or -1 when out of memory. Fast for any number of buffers. */
int64_t olla_place_sweep_first_fit(const olla_pitem *it, size_t n, int64_t *off);
/* Best fit in the same order (place_sweep.c): each buffer in the tightest
 * gap that holds it among the live ones, the lowest of equal ones, else on
 * top of them. O(log n) a buffer, for any sizes (0 too) and lifetimes. */
int64_t olla_place_sweep_best_fit(const olla_pitem *it, size_t n, int64_t *off);

/* One greedy placement (place_greedy.c): the buffers in order[0..n), each
 * at the lowest (first fit) or tightest (best fit) gap among the buffers
 * already placed that live at the same time; pinned[i] >= 0 puts buffer i
 * there instead (pinned buffers must come first in the order and must not
 * overlap). Overlaps are found through a segment tree over time holding
 * unions of address ranges, so a buffer costs O(log T) merged runs of
 * addresses, never a scan over all placed ones (nor all overlapping ones).
 * Best fit takes the tightest free gap of a positive length, the lowest of
 * equal ones. Returns the arena, or -1 when out of memory. */
int64_t olla_place_greedy(const olla_pitem *it, size_t n, const int *order,
                          const int64_t *pinned, int best_fit, int64_t *off);

/* The heuristic portfolio (place_heuristic.c). Heuristic k in [0,
 * olla_place_heuristic_count()) on its own: fills off, returns the arena or
 * -1 when out of memory. */
int olla_place_heuristic_count(void);
const char *olla_place_heuristic_name(int k);
int64_t olla_place_heuristic_one(const olla_pitem *it, size_t n, int k, int64_t *off);

/* The best of the portfolio: fills off, returns its arena (never above any
 * single heuristic's), or -1 when out of memory. Stops early once the arena
 * reaches lb; the deadline of w (a safety net) stops it too. */
int64_t olla_place_heuristic(const olla_pitem *it, size_t n, int64_t *off, int64_t lb,
                             olla_pwork *w, const olla_logger *log);

/* Shakes of the placement off (arena) while they lower it, at most rounds
 * (place_heuristic.c): every buffer pushed up as far as it goes, then down
 * again; never raises the arena. Returns the arena reached (off holds it),
 * or -1 when out of memory (off then undefined). */
int64_t olla_place_shake(const olla_pitem *it, size_t n, int64_t *off, int64_t arena, int rounds);

/* The peak stack (place_peak_stack.c): the buffers live at the busiest
 * time stacked from address 0 without a gap, in order of start (by 0) or
 * of end (by 1), the others by size, first fit, around them: fills off,
 * returns the arena, or -1 when out of memory (off then undefined). */
enum { OLLA_PEAK_STACK_BY_START, OLLA_PEAK_STACK_BY_END, OLLA_PEAK_STACK_ORDERS };
int64_t olla_place_peak_stack(const olla_pitem *it, size_t n, int by, int64_t *off);

/* The most section-list entries the exact search takes on: a part whose
 * lists would hold more gets OLLA_SEARCH_TOO_LARGE (the search's memory
 * grows with the entries: the lists, and a position for each entry). */
#define OLLA_SEARCH_MAX_ENTRIES 50000000
/* Entries of the exact search's section lists for it[0..n): in each time
 * section (between two consecutive start or end times) the buffers live
 * there, summed, which is the buffers times the sections each spans; what
 * the search compares with OLLA_SEARCH_MAX_ENTRIES and what one pass of it
 * over its lists visits. -1 when out of memory. */
long long olla_place_section_entries(const olla_pitem *it, size_t n);

/* Outcomes of the exact search. */
enum {
    OLLA_SEARCH_TOO_LARGE = -3, /* too many section entries to search */
    OLLA_SEARCH_NOMEM = -2,
    OLLA_SEARCH_GAVE_UP = -1,   /* budget or deadline (see w->stopped) */
    OLLA_SEARCH_NONE = 0,       /* proven: no placement within the capacity */
    OLLA_SEARCH_FOUND = 1
};

/* Exact search (place_search.c) for a placement within capacity, spending
 * at most w's limit; returns an OLLA_SEARCH_ outcome and charges w. */
int olla_place_search(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                      int64_t *off);

/* Buffers already placed, in the same units as the others: it[f] at
 * off[f] for f in [0, n). */
typedef struct olla_pfixed {
    const olla_pitem *it;
    const int64_t *off;
    size_t n;
} olla_pfixed;

/* The same search with buffers already fixed (fixed may be NULL: none): in
 * every time section the others are placed above the highest fixed buffer
 * live there (holes below it stay unused). */
int olla_place_search_fixed(const olla_pitem *it, size_t n, const olla_pfixed *fixed,
                            int64_t capacity, olla_pwork *w, int64_t *off);

/* What one run of the offset-order search cost: its nodes, its work units
 * and the entries of its section lists; and, when it was asked to check,
 * the nodes whose candidate tree differed from the candidates gathered and
 * sorted anew (0 unless the tree is wrong). */
typedef struct {
    long long nodes, work, entries, order_errors;
} olla_search_cost;

/* The offset-order search of place_search.c alone, in buffer order order
 * (0-3), with no budget: for tests. OLLA_SEARCH_FOUND (off filled) or
 * OLLA_SEARCH_NONE when exhausted; cost (may be NULL) receives what the
 * search itself cost, its build left out. With check > 0, every node also
 * sorts its candidates anew and compares them with its tree (cost's work
 * leaves that out), and the search gives up (OLLA_SEARCH_GAVE_UP) after
 * check nodes. */
int olla_place_offset_search(const olla_pitem *it, size_t n, int64_t capacity, int order, int64_t *off,
                             olla_search_cost *cost, int check);

/* Peak split (place_split.c): stacks the buffers live at the busiest time
 * from address 0 (by end, start or length) and places the buffers before
 * and after that time separately around them (greedily when that fits,
 * else split again at their own busiest time, else searched), then tries
 * the buffers near that time as one window and lets each side choose the
 * stack, within capacity. Only tried when at least one buffer in 8 is live
 * at that time.
 * Returns OLLA_SEARCH_FOUND (off filled), OLLA_SEARCH_NONE (not tried or
 * not found within w) or OLLA_SEARCH_NOMEM. */
int olla_place_split(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                     int64_t *off, const olla_logger *log);
/* The split's rounds of attempts and its attempts a round (place_split.c);
 * its first rounds are those where the sides' greedy placements fit. */
#define OLLA_PLACE_SPLIT_ROUNDS 4
#define OLLA_PLACE_SPLIT_FIRST_ROUNDS 2
#define OLLA_PLACE_SPLIT_ATTEMPTS 6
/* Where a split's rounds stand between two calls: the round a call stops
 * before (the caller's), the budget the round caps come from, the next
 * round to run (0: none run yet) and the attempts left open. */
typedef struct olla_split_progress {
    int until;
    long long share;
    int round;
    unsigned char open[OLLA_PLACE_SPLIT_ATTEMPTS];
} olla_split_progress;
/* The same split's rounds from pr->round (a split that starts: 0, its round
 * caps then taken from what w has left) up to round pr->until: the rounds
 * before it of the split with that budget, and with the same pr (until
 * raised, and w the budget the split had left there) the rounds after
 * them. Each call cuts the instance anew; an attempt depends only on the
 * cut and its units. OLLA_SEARCH_GAVE_UP when attempts are left for the
 * later rounds (pr then where they stand). */
int olla_place_split_rounds(const olla_pitem *it, size_t n, int64_t capacity, olla_split_progress *pr, olla_pwork *w,
                            int64_t *off, const olla_logger *log);

/* The buffers it[idx[e]], e < k, placed around the buffers fixed (may be
 * NULL: none) as a side of the split is (place_split.c: greedily, else split
 * at its own busiest time, else searched), within cap: an OLLA_SEARCH_
 * outcome, off[idx[e]] filled when found. */
int olla_place_split_side(const olla_pitem *it, int64_t cap, const int *idx, size_t k, const olla_pfixed *fixed,
                          olla_pwork *w, int64_t *off);

/* Placement from windows of time around the busiest times
 * (place_window.c): the buffers that start or end in a window placed
 * below those live across it (by the split's first rounds, else the exact
 * search), then the buffers before and after it placed
 * around them as the split's sides are, within capacity; the windows are
 * the spans of time whose load is near max live; when the sides do not fit
 * around a window's placement, its buffers are placed again by the exact
 * search, forwards, then backwards in time, and the sides tried around
 * each placement. Pass 0 gives each window
 * an equal share of w, pass 1 half of what is left. A window whose sides
 * hold more than OLLA_WINDOW_MAX_SIDES buffers is not tried, as a part of
 * over OLLA_PLACE_BIG_PART buffers gets no windows: on the traced training
 * steps and the LLM steps, windows were placed with sides of up to 4,115
 * buffers, and never with 8,587 to 8,686 (the 32-layer Llama-like AdamW
 * step, which the exact search at the bound then places at max live).
 * An OLLA_SEARCH_ outcome:
 * FOUND (off filled), NONE (a window's search proved that nothing fits
 * within capacity), GAVE_UP or NOMEM. */
#define OLLA_WINDOW_MAX_SIDES 5000
int olla_place_window(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w, int64_t *off,
                      const olla_logger *log, int pass);

/* Where buffer x lies against the window of steps [a, b]: ended before it,
 * starting after it, live across all of it (the window's block), or
 * starting or ending inside it (then cut to it by olla_place_window_clip). */
enum { OLLA_WINDOW_BEFORE, OLLA_WINDOW_AFTER, OLLA_WINDOW_ACROSS, OLLA_WINDOW_INSIDE };

static inline int olla_place_window_side(olla_pitem x, int64_t a, int64_t b)
{
    if (x.upper <= a)
        return OLLA_WINDOW_BEFORE;
    if (x.lower > b)
        return OLLA_WINDOW_AFTER;
    return x.lower <= a && x.upper > b ? OLLA_WINDOW_ACROSS : OLLA_WINDOW_INSIDE;
}

/* buffer x's lifetime cut to the window [a, b] */
static inline olla_pitem olla_place_window_clip(olla_pitem x, int64_t a, int64_t b)
{
    x.lower = x.lower < a ? a : x.lower;
    x.upper = x.upper > b + 1 ? b + 1 : x.upper;
    return x;
}

/* Lower bounds from windows of time (place_bound.c). The buffers of it
 * live in the window [a, b] (neither empty nor of size 0): those live
 * across all of it, their units summed into *block, and the others cut to
 * the window into win (at most max): their number, or max + 1 when more. */
size_t olla_place_window_cut(const olla_pitem *it, size_t n, int64_t a, int64_t b, olla_pitem *win, size_t max,
                             int64_t *block);
/* A window's optimum bounded by bisection on [lo, hi] with the exact
 * search (the k cut buffers win below the block, within w): *bound gets
 * the least capacity not proven infeasible (lo when none is); returns 1
 * when a search gave up, OLLA_SEARCH_NOMEM when out of memory, else 0. */
int olla_place_window_bound_at(const olla_pitem *win, size_t k, int64_t block, int64_t lo, int64_t hi,
                               olla_pwork *w, int64_t *bound);
/* Raises *lb (below ub) from windows around the busiest times of the part
 * it, the buffers live across a window collapsed into one block, within
 * w: 0, or OLLA_SEARCH_NOMEM when out of memory. */
int olla_place_bound_windows(const olla_pitem *it, size_t n, int64_t *lb, int64_t ub, olla_pwork *w,
                             const olla_logger *log);

/* What the address ILP solves: the n buffers it, the warm placement warm
 * (its arena ub) and a known lower bound lb. */
typedef struct olla_place_ilp_problem {
    const olla_pitem *it;
    size_t n;
    const int64_t *warm;
    int64_t ub, lb;
} olla_place_ilp_problem;

/* The exact search and the split on the buffers mirrored in time
 * (place_reverse.c): the same pairs live together, so the same outcomes and
 * placements are valid, but the searches, which are not symmetric in time,
 * take another path. */
int olla_place_search_reversed(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                               int64_t *off);
int olla_place_split_reversed(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                              int64_t *off, const olla_logger *log);

/* Address ILP (place_ilp.c): minimizes the arena starting from warm (arena ub).
 * On return *arena and off hold the best placement found (never worse than
 * warm) and *bound a proven lower bound. CBC gets a node limit from w's
 * budget (one node per 4096 units) and w's deadline. Returns OLLA_OK or an
 * error. */
olla_status olla_place_ilp(const olla_place_ilp_problem *pb, olla_pwork *w, const olla_logger *log, int64_t *off,
                           int64_t *arena, int64_t *bound, olla_error *err);

#endif
