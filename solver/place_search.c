/* olla-onnx: exact branch-and-bound search for a placement within a
 * capacity.
 *
 * Time is cut into sections (between consecutive start/end times). Every
 * placement can be compacted downwards until each buffer rests on address 0
 * or on a buffer live at the same time, and the buffers can then be taken in
 * order of increasing offset. The search builds exactly these canonical
 * placements: each section keeps a floor (no remaining buffer live there can
 * go lower), and each remaining buffer its height, the highest floor along
 * its lifetime. At each node the lowest section is examined (lowest floor,
 * then fewest options). Either some remaining buffer live there sits
 * on that floor f (branch on each buffer whose height is f), or none does
 * and the section's floor rises to the next height a buffer could rest on.
 * Among the sections at floor f the one with the fewest options is taken
 * (a section with none is a dead end); candidates that fill the valley
 * around it exactly are tried first.
 *
 * Pruning: in every section, the bytes still to place must fit between the
 * lowest height of the buffers live there and the capacity (this catches
 * both gaps left under a buffer and buffers pushed up by their neighbours);
 * identical buffers are placed in a fixed order only. Where no buffer still
 * to place is live across a section boundary, the parts on either side are
 * searched one after the other: they no longer constrain each other, so a
 * part without a placement fails the node without trying the other parts'
 * alternatives. The search stops at the first placement found. Restarts
 * with several candidate orders and growing node budgets avoid the heavy
 * tail of a single order; an exhausted search is a proof whatever the
 * order.
 *
 * The schedule (place_search_threads.c) also runs a second search,
 * branching on buffers in order of offset (place_offset_search.c), whose
 * placements count and whose exhaustion does not; it shares the runs and
 * the work budget between two threads so that the answer, the offsets and
 * the work charged are the same on every run. The state both searches work
 * on is built and reset in place_search_state.c.
 *
 * Fixed buffers (olla_place_search_fixed) are obstacles: each section keeps
 * their merged busy spans, a floor never rests inside one, a buffer is only
 * placed where it meets none along its lifetime, the tops of the spans are
 * heights a buffer may rest on, and the pruning counts the fixed bytes above
 * each floor as used. */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_search_state.h"

/* No section: the node has none left to place, or found a dead end. */
#define NO_SECTION SIZE_MAX

/* ---- pruning and the next floor ---- */

/* Buffer b at f meets no fixed span along its lifetime. */
static int clear_of_fixed(sctx *c, int b, int64_t f)
{
    if (!c->ob_start)
        return 1;
    c->work += OLLA_SEARCH_UNITS_BINARY_SEARCH * (long long)(c->se[b] - c->sb[b]); /* one per section */
    int64_t top = f + c->it[b].size;
    for (int j = c->sb[b]; j < c->se[b]; j++) {
        int64_t k = olla_search_first_span(c, (size_t)j, f);
        if (k < olla_search_spans_end(c, (size_t)j) && c->ob_lo[k] < top)
            return 0;
    }
    return 1;
}

/* Every section in [lo, hi): the remaining bytes fit above the lowest height. */
static int range_ok(sctx *c, int lo, int hi)
{
    c->work += c->sec_start[hi] - c->sec_start[lo];
    for (int j = lo; j < hi; j++) {
        if (c->rem[j] == 0)
            continue;
        int64_t room = c->cap - c->rem[j];
        if (c->floor_[j] + olla_search_fixed_above(c, (size_t)j, c->floor_[j]) > room)
            return 0;
        int ok = 0;
        for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1] && !ok; p++) {
            int b = c->sec_buf[p];
            ok = !c->placed[b] && c->h[b] <= room;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* If no remaining buffer live in section s sits at f, the lowest one, x,
 * rests higher: on a placed buffer (then at its height h[x] > f) or on a
 * buffer z still to place that is live beside s but not in s (then at
 * least max(f, h[z]) + size of z). Returns the least such height, or
 * INT64_MAX when there is none. */
static int64_t next_floor(sctx *c, size_t s, int64_t f)
{
    int64_t nf = INT64_MAX;
    int lo = (int)s, hi = (int)s + 1, resting = 0;
    for (int64_t p = c->sec_start[s]; p < c->sec_start[s + 1]; p++) {
        int x = c->sec_buf[p];
        if (c->placed[x])
            continue;
        if (c->h[x] > f) {
            if (c->h[x] < nf)
                nf = c->h[x];
        } else {
            resting = 1;
            if (c->sb[x] < lo)
                lo = c->sb[x];
            if (c->se[x] > hi)
                hi = c->se[x];
        }
    }
    if (!resting)
        return nf;
    if (c->ob_start) /* x may rest on a fixed span */
        for (int j = lo; j < hi; j++) {
            int64_t k = olla_search_first_span(c, (size_t)j, f);
            for (int64_t end = olla_search_spans_end(c, (size_t)j); k < end; k++)
                if (c->ob_hi[k] > f && c->ob_hi[k] < nf)
                    nf = c->ob_hi[k];
        }
    c->work += c->sec_start[hi] - c->sec_start[lo];
    for (int j = lo; j < hi; j++) {
        if ((size_t)j == s)
            continue;
        for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
            int z = c->sec_buf[p];
            if (c->placed[z] || ((size_t)c->sb[z] <= s && s < (size_t)c->se[z]))
                continue;
            int64_t t = (c->h[z] > f ? c->h[z] : f) + c->it[z].size;
            if (t < nf)
                nf = t;
        }
    }
    return nf;
}

/* ---- a node of the search ---- */

static int dfs(sctx *c);

/* Places the parts olla_search_split pushed one after the other: they are
 * independent (no buffer still to place is live in two of them, and the
 * placed ones are fixed), so a part without a placement ends the search of
 * this node without trying the others' alternatives. The placement of a
 * part stays in off[] when the search moves on to the next. */
static int search_parts(sctx *c, int parts)
{
    size_t base = c->cand_top, lo = c->lo_sec, hi = c->hi_sec;
    c->cand_top += 2 * (size_t)parts;
    int r = 1;
    for (int k = 0; k < parts && r == 1; k++) {
        c->lo_sec = (size_t)c->cand[base + 2 * (size_t)k];
        c->hi_sec = (size_t)c->cand[base + 2 * (size_t)k + 1];
        c->changed_lo = c->changed_hi = c->lo_sec; /* a part as the split found it */
        r = dfs(c);
    }
    c->cand_top = base;
    c->lo_sec = lo;
    c->hi_sec = hi;
    return r;
}

/* The lowest section of the part with bytes still to place (the most bytes
 * among equals), its floor in *f; NO_SECTION when nothing is left. */
static size_t lowest_floor(sctx *c, int64_t *f)
{
    size_t s = NO_SECTION;
    int64_t most = -1;
    *f = INT64_MAX;
    c->work += (long long)(c->hi_sec - c->lo_sec) + OLLA_SEARCH_UNITS_NODE;
    for (size_t j = c->lo_sec; j < c->hi_sec; j++)
        if (c->rem[j] > 0 && (c->floor_[j] < *f || (c->floor_[j] == *f && c->rem[j] > most))) {
            *f = c->floor_[j];
            s = j;
            most = c->rem[j];
        }
    return s;
}

/* Buffer b, still to place and no higher than f, can rest on f: it fits
 * below the capacity, its twin (if any) is placed, and it meets no fixed
 * span there. */
static int can_rest(sctx *c, int b, int64_t f)
{
    return f + c->it[b].size <= c->cap && (c->twin[b] < 0 || c->placed[c->twin[b]]) && clear_of_fixed(c, b, f);
}

/* The options of section j at floor f: the buffers that can rest on f, and
 * one more when the floor may rise instead (a gap); -1 as soon as they
 * exceed best (when best >= 0). */
static int section_options(sctx *c, size_t j, int64_t f, int best)
{
    c->work += c->sec_start[j + 1] - c->sec_start[j];
    int count = 0;
    /* lowest the floor can rise to: one unit, since a gap can be as small
     * as that when a buffer rests on one live elsewhere */
    int64_t above = f + 1;
    for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
        int b = c->sec_buf[p];
        if (c->placed[b])
            continue;
        if (c->h[b] > f) {
            if (c->h[b] < above)
                above = c->h[b];
            continue;
        }
        if (!can_rest(c, b, f))
            continue;
        if (++count > best && best >= 0)
            return -1; /* cannot beat the best section */
    }
    return count + (above <= c->cap - c->rem[j]);
}

/* Among the sections at floor f, the one with the fewest options (ties:
 * the rightmost, or the one with the most bytes still to place, s the
 * first compared); NO_SECTION when one has none (a dead end). */
static size_t fewest_options(sctx *c, size_t s, int64_t f)
{
    int best = -1;
    for (size_t j = c->lo_sec; j < c->hi_sec && !olla_search_over(c); j++) {
        if (c->rem[j] == 0 || c->floor_[j] != f)
            continue;
        int count = section_options(c, j, f, best);
        if (count < 0)
            continue;
        if (count == 0)
            return NO_SECTION;
        if (best < 0 || count < best || (count == best && (c->rightmost || c->rem[j] > c->rem[s]))) {
            best = count;
            s = j;
        }
    }
    return s;
}

/* Moves the candidates cand[base..base + nc) that fill the valley around
 * s at floor f in width to the front, then those flush with one of its
 * ends, each group in its order. */
static void valley_first(sctx *c, size_t base, size_t nc, size_t s, int64_t f)
{
    size_t L = s, R = s + 1;
    while (L > 0 && c->floor_[L - 1] == f)
        L--;
    while (R < c->nsec && c->floor_[R] == f)
        R++;
    size_t w = 0;
    for (size_t k = 0; k < nc; k++) {
        int b = c->cand[base + k];
        if ((size_t)c->sb[b] == L && (size_t)c->se[b] == R) {
            memmove(c->cand + base + w + 1, c->cand + base + w, (k - w) * sizeof *c->cand);
            c->cand[base + w++] = b;
        }
    }
    for (size_t k = w; k < nc; k++) {
        int b = c->cand[base + k];
        if ((size_t)c->sb[b] == L || (size_t)c->se[b] == R) {
            memmove(c->cand + base + w + 1, c->cand + base + w, (k - w) * sizeof *c->cand);
            c->cand[base + w++] = b;
        }
    }
}

/* Writes the buffers of section s that can rest on its floor f from
 * cand[c->cand_top], the valley's fillers first; their number in *nc. 0,
 * or OLLA_SEARCH_NOMEM. */
static int gather_candidates(sctx *c, size_t s, int64_t f, size_t *nc)
{
    size_t base = c->cand_top;
    *nc = 0;
    if (olla_search_cand_reserve(c, base + (size_t)(c->sec_start[s + 1] - c->sec_start[s])) < 0)
        return OLLA_SEARCH_NOMEM;
    for (int64_t p = c->sec_start[s]; p < c->sec_start[s + 1]; p++) {
        int b = c->sec_buf[p];
        if (c->placed[b] || c->h[b] > f || !can_rest(c, b, f))
            continue;
        c->cand[base + (*nc)++] = b;
    }
    if (*nc > 1)
        valley_first(c, base, *nc, s, f);
    return 0;
}

/* Buffer b placed at f, the search of the rest, then b taken back: an
 * OLLA_SEARCH_ outcome (OLLA_SEARCH_NONE: not with b there). */
static int place_at(sctx *c, int b, int64_t f)
{
    int64_t top = f + c->it[b].size;
    size_t mark = c->trail_top;
    int r = OLLA_SEARCH_NONE;
    c->placed[b] = 1;
    c->off[b] = f;
    int lo = c->sb[b], hi = c->se[b];
    for (int j = c->sb[b]; j < c->se[b]; j++) {
        c->floor_[j] = olla_search_lift(c, (size_t)j, top);
        c->rem[j] -= c->it[b].size;
    }
    for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
        c->cut[j]--;
    for (int j = c->sb[b]; j < c->se[b] && r == OLLA_SEARCH_NONE; j++)
        if (olla_search_raise(c, (size_t)j, c->floor_[j], &lo, &hi) < 0)
            r = OLLA_SEARCH_NOMEM;
    if (r == OLLA_SEARCH_NONE && range_ok(c, lo, hi)) {
        size_t changed_hi, changed_lo = olla_search_changed_to(c, b, &changed_hi);
        r = dfs(c);
        olla_search_changed_back(c, changed_lo, changed_hi);
    }
    olla_search_undo(c, mark);
    c->placed[b] = 0;
    for (int j = c->sb[b]; j < c->se[b]; j++) {
        c->floor_[j] = f;
        c->rem[j] += c->it[b].size;
    }
    for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
        c->cut[j]++;
    return r;
}

/* No buffer rests on floor f of section s: the floor rises to the next
 * height a buffer could rest on, and the search goes on from there. */
static int raise_floor(sctx *c, size_t s, int64_t f)
{
    int64_t nf = next_floor(c, s, f);
    if (nf != INT64_MAX)
        nf = olla_search_lift(c, s, nf);
    if (nf > c->cap - c->rem[s])
        return OLLA_SEARCH_NONE;
    size_t mark = c->trail_top;
    int lo = (int)s, hi = (int)s + 1, r = OLLA_SEARCH_NONE;
    c->floor_[s] = nf;
    if (olla_search_raise(c, s, nf, &lo, &hi) < 0)
        r = OLLA_SEARCH_NOMEM;
    else if (range_ok(c, lo, hi))
        r = dfs(c);
    olla_search_undo(c, mark);
    c->floor_[s] = f;
    return r;
}

/* A node: independent parts searched one after the other, else the lowest
 * section with the fewest options, each buffer that can rest on its floor
 * tried there, then the floor raised. An OLLA_SEARCH_ outcome. */
static int dfs_node(sctx *c)
{
    if (olla_search_node_stops(c))
        return OLLA_SEARCH_GAVE_UP;
    int parts = olla_search_split(c);
    if (parts < 0)
        return parts;
    if (parts > 1)
        return search_parts(c, parts);
    int64_t f;
    size_t s = lowest_floor(c, &f);
    if (s == NO_SECTION)
        return OLLA_SEARCH_FOUND;
    s = fewest_options(c, s, f);
    if (olla_search_over(c))
        return OLLA_SEARCH_GAVE_UP;
    if (s == NO_SECTION)
        return OLLA_SEARCH_NONE;
    size_t base = c->cand_top, nc;
    if (gather_candidates(c, s, f, &nc) != 0)
        return OLLA_SEARCH_NOMEM;
    c->cand_top += nc;
    c->depth++;
    int r = OLLA_SEARCH_NONE;
    for (size_t k = 0; k < nc && r == OLLA_SEARCH_NONE; k++)
        r = olla_search_over(c) ? OLLA_SEARCH_GAVE_UP : place_at(c, c->cand[base + k], f);
    c->cand_top -= nc;
    if (r == OLLA_SEARCH_NONE)
        r = olla_search_over(c) ? OLLA_SEARCH_GAVE_UP : raise_floor(c, s, f);
    c->depth--;
    return r;
}

/* A node of the search; the part it narrows to is its own. */
static int dfs(sctx *c)
{
    size_t lo = c->lo_sec, hi = c->hi_sec;
    int r = dfs_node(c);
    c->lo_sec = lo;
    c->hi_sec = hi;
    return r;
}

int olla_search_section_run(sctx *c)
{
    return dfs(c);
}

/* ---- entry points ---- */

int olla_place_search(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w, int64_t *off)
{
    return olla_place_search_fixed(it, n, NULL, capacity, w, off);
}

int olla_place_search_fixed(const olla_pitem *it, size_t n, const olla_pfixed *fixed, int64_t capacity, olla_pwork *w,
                            int64_t *off)
{
    if (n == 0)
        return OLLA_SEARCH_FOUND;
    for (size_t i = 0; i < n; i++)
        if (it[i].size > capacity)
            return OLLA_SEARCH_NONE;
    const search_input in = {it, n, fixed ? *fixed : (olla_pfixed){NULL, NULL, 0}, capacity, w->deadline,
                             olla_pwork_left(w)};
    return olla_search_schedule(&in, w, off);
}

int olla_place_offset_search(const olla_pitem *it, size_t n, int64_t capacity, int order, int64_t *off,
                             olla_search_cost *cost, int check)
{
    if (n == 0)
        return OLLA_SEARCH_FOUND;
    if (order < 0 || order >= BYORDER_COUNT)
        return OLLA_SEARCH_GAVE_UP;
    atomic_int stop_pos;
    atomic_init(&stop_pos, INT32_MAX);
    const search_input in = {it, n, {NULL, NULL, 0}, capacity, 0, LLONG_MAX};
    sctx c;
    olla_search_init(&c, &in, off, &stop_pos);
    int r = olla_search_build(&c);
    if (r == 0)
        r = olla_search_reset(&c, 1, order);
    long long before = c.work;
    if (r == 0) {
        c.node_limit = check > 0 ? check : LLONG_MAX;
        c.work_limit = LLONG_MAX;
        c.check_order = check > 0;
        r = olla_search_offset_run(&c);
    }
    if (cost)
        *cost = (olla_search_cost){c.nodes, c.work - before, c.sec_start ? (long long)c.sec_start[c.nsec] : 0,
                                   c.order_errors};
    olla_search_free(&c);
    return r;
}
