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
 * The schedule also runs a second search, branching on buffers in order of
 * offset (place_offset_search.c), whose placements count and whose
 * exhaustion does not.
 *
 * Determinism: the runs form a fixed schedule (round r, configuration k,
 * node budget 4096 * 2^r) cut where the caller's work budget ends. Two
 * workers, the second on its own thread, take half of each round's
 * configurations: the section search in each candidate order with one tie
 * rule, then two orders of the offset-order search. The answer is that of the earliest run in the schedule
 * that finishes; a worker only abandons a run that comes after a finished
 * one, so every run before the answer is done in full and the answer, the
 * offsets and the work charged are the same on every run, however the two
 * threads are scheduled.
 *
 * Fixed buffers (olla_place_search_fixed) are obstacles: each section keeps
 * their merged busy spans, a floor never rests inside one, a buffer is only
 * placed where it meets none along its lifetime, the tops of the spans are
 * heights a buffer may rest on, and the pruning counts the fixed bytes above
 * each floor as used. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_search_state.h"
#include "util/olla_clock.h"

/* First fixed span of section j ending above v. */
static int64_t ob_first(const sctx *c, size_t j, int64_t v)
{
    int64_t lo = c->ob_start[j], hi = c->ob_start[j + 1];
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (c->ob_hi[m] <= v) lo = m + 1; else hi = m;
    }
    return lo;
}

/* The lowest address >= v in section j outside the fixed spans. */
static int64_t lift(const sctx *c, size_t j, int64_t v)
{
    if (!c->ob_start)
        return v;
    int64_t k = ob_first(c, j, v);
    if (k < c->ob_start[j + 1] && c->ob_lo[k] <= v)
        v = c->ob_hi[k]; /* spans are disjoint and not adjacent */
    return v;
}

/* Bytes of fixed spans at or above v (v outside every span) in section j. */
static int64_t fixed_above(const sctx *c, size_t j, int64_t v)
{
    if (!c->ob_start)
        return 0;
    int64_t k = ob_first(c, j, v);
    return k < c->ob_start[j + 1] ? c->ob_suf[k] : 0;
}

/* Buffer b at f meets no fixed span along its lifetime. */
static int clear_of_fixed(sctx *c, int b, int64_t f)
{
    if (!c->ob_start)
        return 1;
    c->work += 4 * (long long)(c->se[b] - c->sb[b]); /* a binary search per section */
    int64_t top = f + c->it[b].size;
    for (int j = c->sb[b]; j < c->se[b]; j++) {
        int64_t k = ob_first(c, (size_t)j, f);
        if (k < c->ob_start[j + 1] && c->ob_lo[k] < top)
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
        if (c->floor_[j] + fixed_above(c, (size_t)j, c->floor_[j]) > room)
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
            int64_t k = ob_first(c, (size_t)j, f);
            for (; k < c->ob_start[j + 1]; k++)
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
        r = dfs(c);
    }
    c->cand_top = base;
    c->lo_sec = lo;
    c->hi_sec = hi;
    return r;
}

static int dfs_node(sctx *c)
{
    if (olla_search_node_stops(c))
        return OLLA_SEARCH_GAVE_UP;
    int parts = olla_search_split(c);
    if (parts < 0)
        return parts;
    if (parts > 1)
        return search_parts(c, parts);
    size_t s = c->hi_sec;
    int64_t f = INT64_MAX, most = -1;
    c->work += (long long)(c->hi_sec - c->lo_sec) + 8;
    for (size_t j = c->lo_sec; j < c->hi_sec; j++)
        if (c->rem[j] > 0 && (c->floor_[j] < f || (c->floor_[j] == f && c->rem[j] > most))) {
            f = c->floor_[j];
            s = j;
            most = c->rem[j];
        }
    if (s == c->hi_sec)
        return 1;
    {
        /* among the sections at floor f, the one with the fewest options */
        int best_count = -1;
        for (size_t j = c->lo_sec; j < c->hi_sec; j++) {
            if (c->rem[j] == 0 || c->floor_[j] != f)
                continue;
            c->work += c->sec_start[j + 1] - c->sec_start[j];
            int count = 0, beaten = 0;
            /* lowest the floor can rise to: one unit, since a gap can be as
             * small as that when a buffer rests on one live elsewhere */
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
                if (f + c->it[b].size > c->cap || (c->twin[b] >= 0 && !c->placed[c->twin[b]]) ||
                    !clear_of_fixed(c, b, f))
                    continue;
                if (++count > best_count && best_count >= 0) {
                    beaten = 1; /* cannot beat the best section */
                    break;
                }
            }
            if (beaten)
                continue;
            count += above <= c->cap - c->rem[j]; /* a gap may be possible */
            if (count == 0)
                return 0;
            if (best_count < 0 || count < best_count ||
                (count == best_count && (c->rightmost || c->rem[j] > c->rem[s]))) {
                best_count = count;
                s = j;
            }
        }
    }
    size_t base = c->cand_top, nc = 0;
    if (olla_search_cand_reserve(c, base + (size_t)(c->sec_start[s + 1] - c->sec_start[s])) < 0)
        return OLLA_SEARCH_NOMEM;
    int64_t nf;
    for (int64_t p = c->sec_start[s]; p < c->sec_start[s + 1]; p++) {
        int b = c->sec_buf[p];
        if (c->placed[b])
            continue;
        if (c->h[b] > f)
            continue;
        if (f + c->it[b].size > c->cap)
            continue;
        if (c->twin[b] >= 0 && !c->placed[c->twin[b]])
            continue;
        if (!clear_of_fixed(c, b, f))
            continue;
        c->cand[base + nc++] = b;
    }
    if (nc > 1) {
        /* buffers that fill the valley around s in width go first, then
         * those flush with one of its ends */
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
    c->cand_top += nc;
    c->depth++;
    int r = 0;
    for (size_t k = 0; k < nc && r == 0; k++) {
        int b = c->cand[base + k];
        int64_t top = f + c->it[b].size;
        size_t mark = c->trail_top;
        c->placed[b] = 1;
        c->off[b] = f;
        int lo = c->sb[b], hi = c->se[b];
        for (int j = c->sb[b]; j < c->se[b]; j++) {
            c->floor_[j] = lift(c, (size_t)j, top);
            c->rem[j] -= c->it[b].size;
        }
        for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
            c->cut[j]--;
        for (int j = c->sb[b]; j < c->se[b] && r == 0; j++)
            if (olla_search_raise(c, (size_t)j, c->floor_[j], &lo, &hi) < 0)
                r = OLLA_SEARCH_NOMEM;
        if (r == 0 && range_ok(c, lo, hi))
            r = dfs(c);
        olla_search_undo(c, mark);
        c->placed[b] = 0;
        for (int j = c->sb[b]; j < c->se[b]; j++) {
            c->floor_[j] = f;
            c->rem[j] += c->it[b].size;
        }
        for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
            c->cut[j]++;
    }
    c->cand_top -= nc;
    if (r == 0) {
        nf = next_floor(c, s, f);
        if (nf != INT64_MAX)
            nf = lift(c, s, nf);
    }
    if (r == 0 && nf <= c->cap - c->rem[s]) {
        size_t mark = c->trail_top;
        int lo = (int)s, hi = (int)s + 1;
        c->floor_[s] = nf;
        if (olla_search_raise(c, s, nf, &lo, &hi) < 0)
            r = OLLA_SEARCH_NOMEM;
        else if (range_ok(c, lo, hi))
            r = dfs(c);
        olla_search_undo(c, mark);
        c->floor_[s] = f;
    }
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

/* The fixed buffers' spans per section, merged, and each section's floor. */
static int build_fixed(sctx *c, const int64_t *pts)
{
    if (c->nfixed == 0)
        return 0;
    c->ob_start = calloc(c->nsec + 2, sizeof *c->ob_start);
    if (!c->ob_start)
        return OLLA_SEARCH_NOMEM;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t f = 0; f < c->nfixed; f++) {
            if (c->fixed[f].size <= 0)
                continue;
            for (size_t j = 0; j < c->nsec; j++) {
                if (!(c->fixed[f].lower < pts[j + 1] && c->fixed[f].upper > pts[j]))
                    continue;
                if (pass == 0) {
                    c->ob_start[j + 1]++;
                    total++;
                } else {
                    int64_t k = c->ob_start[j + 1]++;
                    c->ob_lo[k] = c->fixed_off[f];
                    c->ob_hi[k] = c->fixed_off[f] + c->fixed[f].size;
                }
            }
        }
        if (pass == 0) {
            for (size_t j = 0; j < c->nsec; j++)
                c->ob_start[j + 1] += c->ob_start[j];
            c->ob_lo = malloc((total + 1) * sizeof *c->ob_lo);
            c->ob_hi = malloc((total + 1) * sizeof *c->ob_hi);
            c->ob_suf = malloc((total + 1) * sizeof *c->ob_suf);
            if (!c->ob_lo || !c->ob_hi || !c->ob_suf)
                return OLLA_SEARCH_NOMEM;
            /* the second pass advances ob_start[j + 1] from ob_start[j] */
            memmove(c->ob_start + 1, c->ob_start, c->nsec * sizeof *c->ob_start);
            c->ob_start[0] = 0;
        }
    }
    /* sort each section's spans (insertion sort: the lists are short), merge
     * touching ones in place, compact */
    size_t w = 0;
    for (size_t j = 0; j < c->nsec; j++) {
        int64_t a = c->ob_start[j], b = c->ob_start[j + 1];
        for (int64_t k = a + 1; k < b; k++) {
            int64_t lo = c->ob_lo[k], hi = c->ob_hi[k], q = k;
            while (q > a && c->ob_lo[q - 1] > lo) {
                c->ob_lo[q] = c->ob_lo[q - 1];
                c->ob_hi[q] = c->ob_hi[q - 1];
                q--;
            }
            c->ob_lo[q] = lo;
            c->ob_hi[q] = hi;
        }
        size_t first = w;
        for (int64_t k = a; k < b; k++) {
            if (w > first && c->ob_lo[k] <= c->ob_hi[w - 1]) {
                if (c->ob_hi[k] > c->ob_hi[w - 1])
                    c->ob_hi[w - 1] = c->ob_hi[k];
            } else {
                c->ob_lo[w] = c->ob_lo[k];
                c->ob_hi[w] = c->ob_hi[k];
                w++;
            }
        }
        c->ob_start[j] = (int64_t)first;
        int64_t sum = 0;
        for (size_t k = w; k > first; k--) {
            sum += c->ob_hi[k - 1] - c->ob_lo[k - 1];
            c->ob_suf[k - 1] = sum;
        }
    }
    c->ob_start[c->nsec] = (int64_t)w;
    for (size_t j = 0; j < c->nsec; j++)
        c->floor0[j] = lift(c, j, 0);
    return 0;
}

static int build(sctx *c)
{
    const olla_pitem *it = c->it;
    size_t n = c->n;
    int64_t *pts = malloc((2 * n + 1) * sizeof *pts);
    olla_pkey *keys = malloc((n + 1) * sizeof *keys);
    c->sb = malloc((n + 1) * sizeof *c->sb);
    c->se = malloc((n + 1) * sizeof *c->se);
    c->twin = malloc((n + 1) * sizeof *c->twin);
    c->placed = calloc(n + 1, 1);
    c->h = calloc(n + 1, sizeof *c->h);
    if (!pts || !keys || !c->sb || !c->se || !c->twin || !c->placed || !c->h) {
        free(pts);
        free(keys);
        return OLLA_SEARCH_NOMEM;
    }
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        pts[np++] = it[i].lower;
        pts[np++] = it[i].upper;
    }
    olla_place_sort_i64(pts, np);
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || pts[i] != pts[u - 1])
            pts[u++] = pts[i];
    c->nsec = u > 0 ? u - 1 : 0;
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = u;
        while (lo < hi) { /* first point >= lower */
            size_t m = (lo + hi) / 2;
            if (pts[m] < it[i].lower) lo = m + 1; else hi = m;
        }
        c->sb[i] = (int)lo;
        lo = 0, hi = u;
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (pts[m] < it[i].upper) lo = m + 1; else hi = m;
        }
        c->se[i] = (int)lo;
        total += c->se[i] - c->sb[i];
    }
    if (total > 50000000) { /* too large to search */
        free(pts);
        free(keys);
        return OLLA_SEARCH_TOO_LARGE;
    }
    if (c->deadline > 0 && olla_deadline_passed(c->deadline)) { /* out of time */
        c->timed_out = 1;
        free(pts);
        free(keys);
        return OLLA_SEARCH_GAVE_UP;
    }
    c->floor0 = calloc(c->nsec + 1, sizeof *c->floor0);
    if (!c->floor0) {
        free(pts);
        free(keys);
        return OLLA_SEARCH_NOMEM;
    }
    int r = build_fixed(c, pts);
    free(pts);
    if (r != 0) {
        free(keys);
        return r;
    }
    c->sec_start = calloc(c->nsec + 1, sizeof *c->sec_start);
    c->sec_buf = malloc(((size_t)total + 1) * sizeof *c->sec_buf);
    c->floor_ = calloc(c->nsec + 1, sizeof *c->floor_);
    c->rem = calloc(c->nsec + 1, sizeof *c->rem);
    c->cut = calloc(c->nsec + 1, sizeof *c->cut);
    c->rank = calloc(n + 1, sizeof *c->rank);
    c->rkeys = malloc((n + 1) * sizeof *c->rkeys);
    c->cand_cap = n + 16;
    c->cand = malloc(c->cand_cap * sizeof *c->cand);
    if (!c->sec_start || !c->sec_buf || !c->floor_ || !c->rem || !c->cut || !c->rank || !c->rkeys || !c->cand) {
        free(keys);
        return OLLA_SEARCH_NOMEM;
    }
    /* identical buffers: sorted next to each other by (lower, upper, size) */
    for (size_t i = 0; i < n; i++)
        keys[i] = (olla_pkey){it[i].lower, it[i].upper, (int)i};
    olla_place_sort_keys(keys, n);
    for (size_t k = 0; k < n; k++) {
        if ((k & 1023) == 0 && c->deadline > 0 && olla_deadline_passed(c->deadline)) {
            c->timed_out = 1;
            free(keys);
            return OLLA_SEARCH_GAVE_UP;
        }
        int i = keys[k].idx;
        c->twin[i] = -1;
        for (size_t q = k; q > 0; q--) {
            int p = keys[q - 1].idx;
            if (it[p].lower != it[i].lower || it[p].upper != it[i].upper)
                break;
            if (it[p].size == it[i].size) {
                c->twin[i] = p;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        for (int j = c->sb[i]; j < c->se[i]; j++)
            c->sec_start[j + 1]++;
    for (size_t j = 0; j < c->nsec; j++)
        c->sec_start[j + 1] += c->sec_start[j];
    free(keys);
    return 0;
}

/* Fills the per-section lists in the given candidate order and resets the
 * state: order is one of the section search's (ORDER_*, or a random one
 * beyond them) or, with offset_order set, one of the offset-order search's
 * (BYORDER_*). */
static int reset(sctx *c, int offset_order, int order)
{
    const olla_pitem *it = c->it;
    size_t n = c->n;
    order_key *keys = malloc((n + 1) * sizeof *keys);
    int64_t *fill = malloc((c->nsec + 1) * sizeof *fill);
    if (!keys || !fill) {
        free(keys);
        free(fill);
        return OLLA_SEARCH_NOMEM;
    }
    c->order = order;
    if (offset_order) { /* the bytes live in each section, for offset_key */
        memset(c->rem, 0, c->nsec * sizeof *c->rem);
        for (size_t i = 0; i < n; i++)
            for (int j = c->sb[i]; j < c->se[i]; j++)
                c->rem[j] += it[i].size;
    }
    uint64_t seed = (uint64_t)order * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        double area = (double)len * (double)it[i].size;
        int64_t neg_area = area > 9e18 ? INT64_MIN : -(int64_t)area;
        if (offset_order) {
            keys[i] = olla_search_offset_key(c, (int)i);
            continue;
        }
        switch (order) {
        case ORDER_LIFE: keys[i] = (order_key){{-len, -it[i].size, 0}, (int)i}; break;
        case ORDER_SIZE: keys[i] = (order_key){{-it[i].size, -len, 0}, (int)i}; break;
        case ORDER_AREA: keys[i] = (order_key){{neg_area, -it[i].size, 0}, (int)i}; break;
        default: /* a pseudo-random order, fixed by the order number */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            keys[i] = (order_key){{(int64_t)(seed >> 33), 0, 0}, (int)i};
            break;
        }
    }
    if (n > 1)
        qsort(keys, n, sizeof *keys, olla_search_cmp_key);
    memcpy(fill, c->sec_start, (c->nsec + 1) * sizeof *fill);
    memset(c->rem, 0, c->nsec * sizeof *c->rem);
    memset(c->cut, 0, c->nsec * sizeof *c->cut);
    memcpy(c->floor_, c->floor0, c->nsec * sizeof *c->floor_);
    for (size_t k = 0; k < n; k++) {
        if ((k & 1023) == 0 && c->deadline > 0 && olla_deadline_passed(c->deadline)) {
            c->timed_out = 1;
            free(keys);
            free(fill);
            return OLLA_SEARCH_GAVE_UP; /* out of time: the search gives up */
        }
        int i = keys[k].idx;
        c->rank[i] = (int)k;
        c->h[i] = 0;
        for (int j = c->sb[i]; j < c->se[i]; j++) {
            c->sec_buf[fill[j]++] = i;
            c->rem[j] += it[i].size;
            if (c->floor0[j] > c->h[i])
                c->h[i] = c->floor0[j];
        }
        for (int j = c->sb[i]; j + 1 < c->se[i]; j++)
            c->cut[j]++;
        c->placed[i] = 0;
    }
    c->nodes = 0;
    c->work = (long long)c->sec_start[c->nsec] + 8 * (long long)n; /* the reset itself */
    c->cand_top = 0;
    c->trail_top = 0;
    c->depth = 0;
    c->lo_sec = 0;
    c->hi_sec = c->nsec;
    c->okeys_top = 0;
    c->ftrail_top = 0;
    free(keys);
    free(fill);
    return 0;
}

static void sctx_free(sctx *c)
{
    free(c->sb);
    free(c->se);
    free(c->twin);
    free(c->placed);
    free(c->h);
    free(c->sec_start);
    free(c->sec_buf);
    free(c->floor_);
    free(c->floor0);
    free(c->ob_start);
    free(c->ob_lo);
    free(c->ob_hi);
    free(c->ob_suf);
    free(c->rem);
    free(c->cut);
    free(c->rank);
    free(c->rkeys);
    free(c->okeys);
    free(c->ftrail);
    free(c->cand);
    free(c->trail);
}

/* A configuration is a candidate order (the three fixed ones and a random
 * one that changes every round) and a tie rule between sections: the
 * section with the most bytes still to place, or the rightmost one (the
 * mirror image in time of the leftmost). */
#define OLLA_SEARCH_CONFIGS (2 * (ORDER_COUNT + 1) + BYORDER_COUNT)
_Static_assert(BYORDER_COUNT == 4, "two offset-order search orders in each half of a round");
#define OLLA_SEARCH_ROUNDS 40
#define OLLA_SEARCH_FIRST_BUDGET 4096LL
/* Stack per search thread and recursion depth limits (a frame takes under
 * 0.5 KiB even in sanitizer builds). */
#define OLLA_SEARCH_STACK ((size_t)64 << 20)
#define OLLA_SEARCH_DEPTH_THREAD 60000
#define OLLA_SEARCH_DEPTH_CALLER 8000

/* The shared schedule. A round starts only when every worker has left
 * the round before and the work of all earlier rounds is below the total:
 * the decision then depends on the work done, never on the threads'
 * timing. */
typedef struct schedule {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int workers;
    int left_round[OLLA_SEARCH_ROUNDS]; /* workers that have left each round */
    long long done;                     /* work of the rounds left so far */
    long long done_at[OLLA_SEARCH_ROUNDS]; /* done when the last worker left each round */
    long long total;                    /* work budget of the whole schedule */
    atomic_int stop_pos;                /* earliest finished run */
} schedule;

typedef struct worker {
    sctx c;
    schedule *sch;
    int first, last;    /* runs the configurations [first, last) each round */
    int r, pos;         /* outcome of the last run and its place */
    int cut_pos;        /* the place of the run the clock cut, or INT32_MAX */
    long long units[OLLA_SEARCH_ROUNDS * OLLA_SEARCH_CONFIGS]; /* work of each run */
} worker;

static void finish_at(atomic_int *stop_pos, int pos)
{
    int cur = atomic_load(stop_pos);
    while (pos < cur && !atomic_compare_exchange_weak(stop_pos, &cur, pos)) {
    }
}

/* Leaves a round: adds this worker's work in it, waits for the others and
 * returns the work of all rounds so far. */
static long long leave_round(worker *w, int round)
{
    schedule *sch = w->sch;
    long long mine = 0;
    for (int k = w->first; k < w->last; k++)
        mine += w->units[round * OLLA_SEARCH_CONFIGS + k];
    pthread_mutex_lock(&sch->mu);
    sch->done += mine;
    if (++sch->left_round[round] == sch->workers) {
        /* a snapshot: a fast worker may add its next round's work to done
         * before a slow one wakes up here */
        sch->done_at[round] = sch->done;
        pthread_cond_broadcast(&sch->cv);
    }
    while (sch->left_round[round] < sch->workers)
        pthread_cond_wait(&sch->cv, &sch->mu);
    long long done = sch->done_at[round];
    pthread_mutex_unlock(&sch->mu);
    return done;
}

/* One round of the worker's runs, sharing share units in turn; returns 1
 * when the worker is done. */
static int run_round(worker *w, int round, long long share)
{
    sctx *c = &w->c;
    for (int k = w->first; k < w->last; k++) {
        int pos = round * OLLA_SEARCH_CONFIGS + k;
        if (atomic_load(c->stop_pos) < pos)
            return 1;
        /* each half of a round: the section search with every candidate
         * order and one tie rule, then two orders of the offset-order search */
        int half = OLLA_SEARCH_CONFIGS / 2, q = k % half;
        int offset_order = q > ORDER_COUNT;
        if (offset_order && c->nfixed > 0)
            continue; /* the offset-order search knows no fixed buffers */
        int order = offset_order ? 2 * (k / half) + q - (ORDER_COUNT + 1) : q < ORDER_COUNT ? q : ORDER_COUNT + round;
        c->rightmost = k / half == 1;
        c->pos = pos;
        int r = reset(c, offset_order, order);
        if (r == 0) {
            c->node_limit = OLLA_SEARCH_FIRST_BUDGET << round;
            c->work_limit = share > c->work ? share : c->work;
            r = offset_order ? olla_search_offset_run(c) : dfs(c);
            if (offset_order && r == 0)
                r = OLLA_SEARCH_GAVE_UP; /* exhausted: no proof (see the offset-order search) */
            w->units[pos] = c->work;
            share -= c->work;
        }
        if (r != OLLA_SEARCH_GAVE_UP) {
            w->r = r;
            w->pos = pos;
            finish_at(c->stop_pos, pos);
            return 1;
        }
        if (c->timed_out) {
            w->cut_pos = pos;
            return 1;
        }
    }
    return 0;
}

/* The worker's runs in schedule order until one finishes (found, proven
 * none, out of memory), the budget ends, a run earlier in the schedule has
 * finished, or the deadline passes. A run stops at its round's node budget
 * or when the worker's equal share of the work left at the round's start
 * is spent (so only the last round is cut short). */
static void *run_worker(void *arg)
{
    worker *w = arg;
    long long done = 0;
    int round = 0;
    for (; round < OLLA_SEARCH_ROUNDS && done < w->sch->total; round++) {
        long long share = (w->sch->total - done) / w->sch->workers;
        int over = run_round(w, round, share > 0 ? share : 1);
        done = leave_round(w, round);
        if (over) {
            round++;
            break;
        }
    }
    /* leave every later round too, so no other worker waits for this one */
    pthread_mutex_lock(&w->sch->mu);
    for (; round < OLLA_SEARCH_ROUNDS; round++)
        w->sch->left_round[round]++;
    pthread_cond_broadcast(&w->sch->cv);
    pthread_mutex_unlock(&w->sch->mu);
    return NULL;
}

/* A run's state for n buffers within capacity, offsets written to off, on
 * the caller's stack depth, with no fixed buffers, limits or deadline yet;
 * build() then cuts the instance into sections. */
static void sctx_init(sctx *c, const olla_pitem *it, size_t n, int64_t capacity, int64_t *off,
                      atomic_int *stop_pos)
{
    memset(c, 0, sizeof *c);
    c->it = it;
    c->n = n;
    c->cap = capacity;
    c->off = off;
    c->stop_pos = stop_pos;
    c->max_depth = OLLA_SEARCH_DEPTH_CALLER;
}

static int worker_init(worker *w, const olla_pitem *it, size_t n, const olla_pitem *fixed,
                       const int64_t *fixed_off, size_t nfixed, int64_t capacity,
                       double deadline, int64_t *off, schedule *sch, int parity)
{
    memset(w, 0, sizeof *w);
    sctx_init(&w->c, it, n, capacity, off, &sch->stop_pos);
    w->c.fixed = fixed;
    w->c.fixed_off = fixed_off;
    w->c.nfixed = nfixed;
    w->c.deadline = deadline;
    w->sch = sch;
    w->first = parity * (OLLA_SEARCH_CONFIGS / 2);
    w->last = w->first + OLLA_SEARCH_CONFIGS / 2;
    w->r = OLLA_SEARCH_GAVE_UP;
    w->pos = INT32_MAX;
    w->cut_pos = INT32_MAX;
    return build(&w->c);
}

int olla_place_search(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w,
                      int64_t *off)
{
    return olla_place_search_fixed(it, n, NULL, NULL, 0, capacity, w, off);
}

static void schedule_reset(schedule *sch, int workers)
{
    sch->workers = workers;
    memset(sch->left_round, 0, sizeof sch->left_round);
    sch->done = 0;
    atomic_store(&sch->stop_pos, INT32_MAX);
}

/* Both workers on threads of their own with a large stack, so the
 * recursion can go deep. Returns 0 when the threads could not be started
 * (nothing is left running then). */
static int run_threads(worker *w, int64_t *off2)
{
    pthread_t th[2];
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return 0;
    int ok = pthread_attr_setstacksize(&attr, OLLA_SEARCH_STACK) == 0 && off2 &&
             worker_init(&w[1], w[0].c.it, w[0].c.n, w[0].c.fixed, w[0].c.fixed_off,
                         w[0].c.nfixed, w[0].c.cap, w[0].c.deadline, off2, w[0].sch, 1) == 0;
    /* the workers start with every signal blocked, so that signals (and
     * their handlers) stay the calling thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int started = 0;
    if (ok) {
        w[0].c.max_depth = w[1].c.max_depth = OLLA_SEARCH_DEPTH_THREAD;
        started = pthread_create(&th[0], &attr, run_worker, &w[0]) == 0;
        started += started && pthread_create(&th[1], &attr, run_worker, &w[1]) == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started == 1) {
        /* the first runs alone: stop it, and let it pass every round */
        pthread_mutex_lock(&w[0].sch->mu);
        atomic_store(&w[0].sch->stop_pos, -1);
        for (int round = 0; round < OLLA_SEARCH_ROUNDS; round++)
            w[0].sch->left_round[round]++;
        pthread_cond_broadcast(&w[0].sch->cv);
        pthread_mutex_unlock(&w[0].sch->mu);
        pthread_join(th[0], NULL);
    } else if (started == 2) {
        pthread_join(th[1], NULL);
        pthread_join(th[0], NULL);
    }
    pthread_attr_destroy(&attr);
    return started == 2;
}

/* Runs the schedule on two threads; without threads, one worker takes
 * every configuration in the same order on the caller's stack (with a
 * shallower depth limit). */
static void run_schedule(worker *w, int64_t *off2)
{
    schedule_reset(w[0].sch, 2);
    if (run_threads(w, off2))
        return;
    sctx_free(&w[1].c); /* all pointers NULL if never built */
    memset(&w[1], 0, sizeof w[1]);
    w[1].r = OLLA_SEARCH_GAVE_UP;
    w[1].pos = INT32_MAX;
    schedule_reset(w[0].sch, 1);
    memset(w[0].units, 0, sizeof w[0].units);
    w[0].r = OLLA_SEARCH_GAVE_UP;
    w[0].pos = INT32_MAX;
    w[0].c.timed_out = 0;
    w[0].c.max_depth = OLLA_SEARCH_DEPTH_CALLER;
    w[0].first = 0;
    w[0].last = OLLA_SEARCH_CONFIGS;
    run_worker(&w[0]);
}

/* The answer: the earliest finished run, and the work of every run up to it. */
static int collect(worker *w, int64_t *off, const int64_t *off2, size_t n, olla_pwork *pw)
{
    int win = atomic_load(&w[0].sch->stop_pos);
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < OLLA_SEARCH_ROUNDS * OLLA_SEARCH_CONFIGS && p <= win; p++)
            pw->used += w[k].units[p];
    if (win == INT32_MAX) {
        int timed = w[0].c.timed_out || w[1].c.timed_out;
        pw->stopped |= 1 << (timed ? OLLA_PLACE_STOPPED_TIME : OLLA_PLACE_STOPPED_BUDGET);
        return OLLA_SEARCH_GAVE_UP;
    }
    /* a run before the answer that the clock cut might have finished first:
     * the answer then depends on the load */
    if (w[0].cut_pos < win || w[1].cut_pos < win)
        pw->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
    worker *x = w[0].pos == win ? &w[0] : &w[1];
    if (x == &w[1] && x->r == OLLA_SEARCH_FOUND)
        memcpy(off, off2, n * sizeof *off);
    return x->r;
}

int olla_place_search_fixed(const olla_pitem *it, size_t n, const olla_pitem *fixed,
                            const int64_t *fixed_off, size_t nfixed, int64_t capacity,
                            olla_pwork *pw, int64_t *off)
{
    if (n == 0)
        return OLLA_SEARCH_FOUND;
    for (size_t i = 0; i < n; i++)
        if (it[i].size > capacity)
            return OLLA_SEARCH_NONE;
    schedule sch;
    memset(&sch, 0, sizeof sch);
    sch.total = olla_pwork_left(pw);
    atomic_init(&sch.stop_pos, INT32_MAX);
    worker w[2];
    memset(&w[1], 0, sizeof w[1]);
    int r = worker_init(&w[0], it, n, fixed, fixed_off, nfixed, capacity, pw->deadline, off,
                        &sch, 0);
    if (r == 0 && (r = reset(&w[0].c, 0, 0)) == 0) {
        for (size_t j = 0; j < w[0].c.nsec; j++)
            if (w[0].c.rem[j] + w[0].c.floor0[j] + fixed_above(&w[0].c, j, w[0].c.floor0[j]) >
                capacity) {
                sctx_free(&w[0].c);
                return OLLA_SEARCH_NONE; /* more bytes live at one time than the capacity */
            }
    }
    if (r != 0) {
        if (w[0].c.timed_out)
            pw->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
        sctx_free(&w[0].c);
        return r;
    }
    if (pthread_mutex_init(&sch.mu, NULL) != 0 || pthread_cond_init(&sch.cv, NULL) != 0) {
        sctx_free(&w[0].c);
        return OLLA_SEARCH_NOMEM;
    }
    /* building the section lists and the fixed spans, for each worker */
    pw->used += 2 * ((long long)w[0].c.sec_start[w[0].c.nsec] + (long long)nfixed * (long long)w[0].c.nsec +
                     16 * (long long)n + (long long)w[0].c.nsec);
    int64_t *off2 = malloc((n + 1) * sizeof *off2);
    run_schedule(w, off2);
    r = collect(w, off, off2, n, pw);
    pthread_mutex_destroy(&sch.mu);
    pthread_cond_destroy(&sch.cv);
    sctx_free(&w[1].c);
    free(off2);
    sctx_free(&w[0].c);
    return r;
}

int olla_place_offset_search(const olla_pitem *it, size_t n, int64_t capacity, int order, int64_t *off)
{
    if (n == 0)
        return OLLA_SEARCH_FOUND;
    if (order < 0 || order >= BYORDER_COUNT)
        return OLLA_SEARCH_GAVE_UP;
    atomic_int stop_pos;
    atomic_init(&stop_pos, INT32_MAX);
    sctx c;
    sctx_init(&c, it, n, capacity, off, &stop_pos);
    int r = build(&c);
    if (r == 0)
        r = reset(&c, 1, order);
    if (r == 0) {
        c.node_limit = LLONG_MAX;
        c.work_limit = LLONG_MAX;
        r = olla_search_offset_run(&c);
    }
    sctx_free(&c);
    return r;
}
