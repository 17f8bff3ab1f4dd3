/* olla-onnx: the state of the exact placement search, shared by its two
 * searches, the section search (place_search.c) and the offset-order
 * search (place_offset_search.c), and by the schedule that runs both
 * (place_search_threads.c); it is built, reset and moved in
 * place_search_state.c. Private to solver/. */
#ifndef OLLA_PLACE_SEARCH_STATE_H
#define OLLA_PLACE_SEARCH_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "solver/place_internal.h"
#include "util/olla_grow.h"

/* the section search's candidate orders (then a random one each round) */
enum { ORDER_LIFE, ORDER_SIZE, ORDER_AREA, ORDER_COUNT };
/* the offset-order search's buffer orders (keys in order of priority) */
enum { BYORDER_LIFE_AREA_CROWD, BYORDER_CROWD_AREA_LIFE, BYORDER_CROWD_LIFE_AREA, BYORDER_SIZE_LIFE, BYORDER_COUNT };

/* Work units (olla_pwork) the searches charge beside one per section-list
 * entry visited: per key sorted or ranked, per binary search over a
 * section's fixed spans, per node (its fixed cost), per buffer of a reset,
 * and per buffer when each worker builds its state. They are part of the
 * budgets' meaning: changing one changes every budgeted result. */
#define OLLA_SEARCH_UNITS_SORT_KEY 4
#define OLLA_SEARCH_UNITS_BINARY_SEARCH 4
#define OLLA_SEARCH_UNITS_NODE 8
#define OLLA_SEARCH_UNITS_RESET_BUFFER 8
#define OLLA_SEARCH_UNITS_BUILD_BUFFER 16
/* per node of the offset-order search's candidate tree visited (a visit
 * reads and updates a node's key, children and lowest top at random
 * places: several times a section-list entry's cost) */
#define OLLA_SEARCH_UNITS_TREE_NODE 4
/* per section-list entry of an offset-order search's reset beyond the
 * section search's: the bytes and keys of each section, and where each
 * buffer sits in its sections' lists */
#define OLLA_SEARCH_UNITS_OFFSET_RESET_ENTRY 3
/* A node of either search visits the section lists at most about this
 * many times between two checks of its work limit (the options of the
 * sections at the floor, their fixed spans, the range check, the next
 * floor, the raise): each run's limit is its share less that much, so a
 * run stopped by its limit still ends within its share. */
#define OLLA_SEARCH_NODE_PASSES 8
/* The deadline is read once every this many buffers while a state is
 * built or reset, and another run's finish once every this many nodes
 * (powers of two). */
#define OLLA_SEARCH_BUILD_POLL 1024
#define OLLA_SEARCH_STOP_POLL 256
/* Room for this many more candidates than buffers when the list is made. */
#define OLLA_SEARCH_CAND_SLACK 16

typedef struct trail_entry {
    int buf;
    int64_t old;
} trail_entry;

/* A candidate-order key: three values, smallest first, then the index. */
typedef struct order_key {
    int64_t k[3];
    int idx;
} order_key;

/* What every run of a search is given: the buffers, the buffers already
 * fixed (fixed.n 0: none), the capacity and the deadline. */
typedef struct search_input {
    const olla_pitem *it;
    size_t n;
    olla_pfixed fixed;
    int64_t cap;
    double deadline; /* wall clock, a safety net; 0: none */
    long long budget; /* units the schedule may spend, building included */
} search_input;

/* One run of either search: the instance cut into time sections, and what
 * is placed so far. */
typedef struct sctx {
    const olla_pitem *it;
    size_t n;
    int64_t cap;
    double deadline;      /* safety net */
    int timed_out;        /* the deadline stopped a run */
    long long budget;     /* the schedule's units: no build above them */
    int over_budget;      /* building both workers would cost more */
    atomic_int *stop_pos; /* earliest finished run in the schedule */
    int pos;              /* this run's place in the schedule */
    int rightmost;        /* ties between sections: rightmost, else most bytes */
    long long node_limit;
    long long work, work_limit; /* units: section-list entries visited */
    size_t nsec;
    int *sb, *se;       /* buffer i spans sections [sb[i], se[i]) */
    int64_t *sec_start; /* nsec + 1: buffers live in each section, in candidate order */
    int *sec_buf;
    int64_t *beg_start; /* nsec + 1: the buffers that start in each section, */
    int *beg_buf;       /* n: listed in beg_buf[beg_start[j] .. beg_start[j + 1]) */
    int64_t *floor_, *rem, *h;
    int64_t *floor0;  /* nsec: lowest free address in each section */
    int *cut;         /* nsec: buffers still to place live in both section j and j + 1 */
    int *rank;        /* n: each buffer's place in the candidate order */
    int order;        /* the offset-order search's order (BYORDER_*) */
    order_key *rkeys; /* n: scratch for ranking a part */
    olla_pkey *okeys; /* the offset-order search's candidates, a stack */
    size_t okeys_cap, okeys_top;
    /* the offset-order search's candidates (place_offset_set.c): a treap
     * over buffers 0..n-1 keyed by (th, rank), troot its root (-1: empty) */
    int *tl, *tr;     /* n: children, -1 for none */
    uint32_t *tpri;   /* n: priorities, a hash of the index */
    int64_t *th;      /* n: the height each buffer is keyed on */
    int64_t *tmin;    /* n: the lowest th + size in each subtree */
    int troot;
    /* the bytes still to place of each section (rem) in a segment tree
     * with added values, for the offset-order search's room checks
     * (place_offset_set.c): nodes 1..2 * sleaves - 1, leaf j at sleaves + j */
    int64_t *smax, *sadd;
    size_t sleaves;
    /* the offset-order search keeps each section's list with its buffers
     * still to place first: ucnt[j] of them (nsec); buffer x's entry in
     * section j sits at sec_start[j] + epos[ebase[x] + j - sb[x]] */
    int *ucnt, *epos;
    int64_t *ebase; /* n + 1: where each buffer's sections begin in epos */
    int check_order;        /* tests: each node checks the tree against a sort */
    /* the offset-order search: parts still to search after the ones being
     * searched (offset_parts); 0 when a placement found ends the run */
    long long parts_after;
    long long order_errors; /* nodes where they differed */
    trail_entry *ftrail; /* the offset-order search's section floors, to undo */
    size_t ftrail_top, ftrail_cap;
    size_t lo_sec, hi_sec; /* the part being searched: sections [lo_sec, hi_sec) */
    /* the sections whose bytes still to place or cuts may have changed
     * since [lo_sec, hi_sec) was found to be one part (every boundary
     * inside it crossed): [changed_lo, changed_hi), the whole instance
     * after a reset, none (changed_lo == changed_hi) right after a split.
     * olla_search_split reads the boundaries there only: the others are
     * still crossed. */
    size_t changed_lo, changed_hi;
    /* fixed buffers: the sections fall into segments, runs of sections
     * that the same fixed buffers meet (fseg[j]: section j's); in segment
     * g, the disjoint busy spans [ob_lo, ob_hi) for k in [ob_start[g],
     * ob_start[g + 1]), by address; ob_suf[k] is the total length of spans
     * k.. of the segment. fixed_entries: the fixed buffers' segments
     * summed (what the spans are built from) */
    int64_t *ob_start, *ob_lo, *ob_hi, *ob_suf;
    int *fseg;
    long long fixed_entries;
    const olla_pitem *fixed;
    const int64_t *fixed_off;
    size_t nfixed;
    char *placed;
    int *twin; /* previous identical buffer or -1 */
    int64_t *off;
    long long nodes;
    int *cand;
    size_t cand_top, cand_cap;
    trail_entry *trail;
    size_t trail_top, trail_cap;
    size_t depth, max_depth;
} sctx;

/* Recursion depth limit of a run on the caller's stack (a frame takes
 * under 0.5 KiB even in sanitizer builds); the schedule's threads have
 * larger stacks and limits (place_search_threads.c). */
#define OLLA_SEARCH_DEPTH_CALLER 8000

/* ---- the fixed buffers' spans of a section ---- */

/* The end of section j's fixed spans (one past the last). */
static inline int64_t olla_search_spans_end(const sctx *c, size_t j)
{
    return c->ob_start[c->fseg[j] + 1];
}

/* First fixed span of section j ending above v. */
static inline int64_t olla_search_first_span(const sctx *c, size_t j, int64_t v)
{
    int64_t lo = c->ob_start[c->fseg[j]], hi = olla_search_spans_end(c, j);
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (c->ob_hi[m] <= v)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The lowest address >= v in section j outside the fixed spans. */
static inline int64_t olla_search_lift(const sctx *c, size_t j, int64_t v)
{
    if (!c->ob_start)
        return v;
    int64_t k = olla_search_first_span(c, j, v);
    if (k < olla_search_spans_end(c, j) && c->ob_lo[k] <= v)
        v = c->ob_hi[k]; /* spans are disjoint and not adjacent */
    return v;
}

/* Bytes of fixed spans at or above v (v outside every span) in section j. */
static inline int64_t olla_search_fixed_above(const sctx *c, size_t j, int64_t v)
{
    if (!c->ob_start)
        return 0;
    int64_t k = olla_search_first_span(c, j, v);
    return k < olla_search_spans_end(c, j) ? c->ob_suf[k] : 0;
}

/* ---- building and resetting (place_search_state.c) ---- */

/* A run's state for the input in, offsets written to off, on the caller's
 * stack depth (OLLA_SEARCH_DEPTH_CALLER), with no limits yet. */
void olla_search_init(sctx *c, const search_input *in, int64_t *off, atomic_int *stop_pos);
/* Cuts the instance into sections: each buffer's sections, the fixed
 * buffers' spans and each section's lowest free address, identical
 * buffers, the section lists' sizes. 0, or OLLA_SEARCH_NOMEM,
 * OLLA_SEARCH_TOO_LARGE or OLLA_SEARCH_GAVE_UP (deadline, timed_out set;
 * or building both workers would cost more than c->budget, over_budget set,
 * and nothing is built). */
int olla_search_build(sctx *c);
/* Units charged for building both workers' states of c, whose section
 * lists hold entries entries. */
long long olla_search_build_units(const sctx *c, int64_t entries);
/* Units of one reset of c (built) for a run of the section search, or
 * with offset_order of the offset-order search, and at most one node's
 * work between two checks of the work limit (OLLA_SEARCH_NODE_PASSES). */
long long olla_search_reset_units(const sctx *c, int offset_order);
long long olla_search_node_units(const sctx *c);
/* Fills the section lists in a candidate order and resets what is placed,
 * for one run: order is one of the section search's (ORDER_*, or a random
 * one beyond them) or, with offset_order set, one of the offset-order
 * search's (BYORDER_*). 0, or OLLA_SEARCH_NOMEM or OLLA_SEARCH_GAVE_UP
 * (deadline). The reset's own work is charged to c->work. */
int olla_search_reset(sctx *c, int offset_order, int order);
/* Frees every array of c (all NULL when never built). */
void olla_search_free(sctx *c);

/* ---- the moves of both searches (place_search_state.c) ---- */

/* Orders keys: k[0], k[1], k[2], then the index. */
int olla_search_cmp_key(const void *a, const void *b);
/* Grows the candidate stack to hold need entries; -2 when out of memory. */
int olla_search_cand_reserve(sctx *c, size_t need);
int olla_search_node_stops(sctx *c);
/* The run has spent more than its work limit: it stops before the next
 * candidate or section it would examine (and gives up). */
static inline int olla_search_over(const sctx *c)
{
    return c->work > c->work_limit;
}
/* Raises the height of every buffer still to place live in section j to at
 * least v (on the trail); widens [*lo, *hi) to the sections those buffers
 * span. -1 when out of memory. */
int olla_search_raise(sctx *c, size_t j, int64_t v, int *lo, int *hi);
/* Raises buffer b's height to at least v when it is still to place (on the
 * trail); widens [*lo, *hi) to its sections. 0, or -1 when out of memory. */
int olla_search_raise_one(sctx *c, int b, int64_t v, int *lo, int *hi);
/* Undoes the trail down to mark. */
void olla_search_undo(sctx *c, size_t mark);
/* The parts of [lo_sec, hi_sec) that no buffer still to place spans: each
 * with bytes to place is pushed as a section range on the candidate stack;
 * returns their number (-2: out of memory), and with one part narrows the
 * range to it instead (and marks no section changed). Reads only the
 * boundaries of [changed_lo, changed_hi). */
int olla_search_split(sctx *c);
/* Buffer b is placed or taken back in a part olla_search_split found:
 * its sections are the only ones changed (returned: what was marked
 * before, to put back with olla_search_changed_back). */
static inline size_t olla_search_changed_to(sctx *c, int b, size_t *old_hi)
{
    size_t old_lo = c->changed_lo;
    *old_hi = c->changed_hi;
    c->changed_lo = (size_t)c->sb[b];
    c->changed_hi = (size_t)c->se[b];
    return old_lo;
}
static inline void olla_search_changed_back(sctx *c, size_t lo, size_t hi)
{
    c->changed_lo = lo;
    c->changed_hi = hi;
}

/* ---- the searches and their schedule ---- */

/* One run of the section search (place_search.c) from the state
 * olla_search_reset() left: an OLLA_SEARCH_ outcome, c->off filled when
 * found. */
int olla_search_section_run(sctx *c);
/* The schedule of runs of both searches on two threads
 * (place_search_threads.c) for the input in (no buffer above the
 * capacity), spending what w has left: an OLLA_SEARCH_ outcome, off filled
 * when found; charges w. */
int olla_search_schedule(const search_input *in, olla_pwork *w, int64_t *off);

/* Buffer b's key in the offset-order search's order c->order, from the
 * bytes still to place in its sections. */
order_key olla_search_offset_key(const sctx *c, int b);
/* ---- the offset-order search's candidates (place_offset_set.c) ---- */

/* Draws the priorities of buffers 0..n-1. */
void olla_oset_priorities(sctx *c);
/* The tree made in one pass from the buffers order[0..m).idx, each keyed
 * on its height h[], in increasing key order: 0, or -1 when they are not in
 * that order (the tree is then unusable). Uses c->cand as scratch. */
int olla_oset_build(sctx *c, const order_key *order, size_t m);
/* Buffer x (not in the tree) joins it under its height h[x]. */
void olla_oset_insert(sctx *c, int x);
/* Buffer x leaves the tree. */
void olla_oset_erase(sctx *c, int x);
/* Buffer x (in the tree) keyed on height h instead. */
void olla_oset_rekey(sctx *c, int x, int64_t h);
/* The lowest top (height + size) of the buffers in the tree, INT64_MAX when
 * it is empty. */
int64_t olla_oset_min_top(const sctx *c);
/* The buffer of the first key at or above (h, rank), or -1. */
int olla_oset_first_at(sctx *c, int64_t h, int rank);
/* The buffer of the first key above buffer x's (x in the tree), or -1. */
int olla_oset_next(sctx *c, int x);

/* Buffer b, placed, leaves the front of its sections' lists; taken back,
 * it rejoins it (the lists' order within the front changes, never what
 * it holds). */
void olla_oset_unlist(sctx *c, int b);
void olla_oset_relist(sctx *c, int b);
/* The segment tree of rem[0..nsec) made anew. */
void olla_oset_sections(sctx *c);
/* v added to rem's tree over sections [a, b) (rem itself is the caller's). */
void olla_oset_add(sctx *c, int a, int b, int64_t v);
/* The most bytes still to place in one of sections [a, b) (0 when empty). */
int64_t olla_oset_most(sctx *c, int a, int b);
/* Calls ok(c, j) on every section j of [a, b) with more than above bytes
 * still to place, in order, until one returns 0: 0 then, else 1. */
int olla_oset_each_above(sctx *c, int a, int b, int64_t above, int (*ok)(sctx *c, int j));

/* One run of the offset-order search from the state olla_search_reset()
 * left: OLLA_SEARCH_FOUND (c->off filled), NONE (exhausted), GAVE_UP
 * (stopped) or NOMEM. */
int olla_search_offset_run(sctx *c);

#endif
