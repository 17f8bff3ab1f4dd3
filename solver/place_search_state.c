/* olla-onnx: the state of the two exact placement searches (the section
 * search, place_search.c, and the offset-order search,
 * place_offset_search.c): building it (the instance cut into time
 * sections, the fixed buffers' spans in each, identical buffers), resetting
 * it before each run of the schedule, and the moves both searches make on
 * it: key order, raising heights with a trail and undoing it, growing the
 * search's stacks, splitting the buffers still to place into independent
 * parts, and the limits checked at every node. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_search_state.h"
#include "util/olla_arith.h"
#include "util/olla_clock.h"

long long olla_place_section_entries(const olla_pitem *it, size_t n)
{
    olla_pitem *ones = malloc((n + 1) * sizeof *ones);
    olla_pkey *loads = malloc((2 * n + 1) * sizeof *loads);
    long long entries = -1;
    if (ones && loads) {
        for (size_t i = 0; i < n; i++)
            ones[i] = (olla_pitem){it[i].lower, it[i].upper, 1};
        int64_t most;
        size_t nt = olla_place_items_loads(ones, n, loads, &most);
        entries = 0;
        for (size_t k = 0; k < nt; k++) /* the buffers live from each time on */
            entries += loads[k].k2;
    }
    free(ones);
    free(loads);
    return entries;
}

/* ---- a run's state, made and freed ---- */

/* A run's state for the input in, offsets written to off, on the caller's
 * stack depth, with no limits yet; olla_search_build() then cuts the
 * instance into sections. */
void olla_search_init(sctx *c, const search_input *in, int64_t *off, atomic_int *stop_pos)
{
    memset(c, 0, sizeof *c);
    c->it = in->it;
    c->n = in->n;
    c->cap = in->cap;
    c->fixed = in->fixed.it;
    c->fixed_off = in->fixed.off;
    c->nfixed = in->fixed.n;
    c->deadline = in->deadline;
    c->budget = in->budget;
    c->off = off;
    c->stop_pos = stop_pos;
    c->max_depth = OLLA_SEARCH_DEPTH_CALLER;
}

/* Frees every array of c (all NULL when never built). */
void olla_search_free(sctx *c)
{
    free(c->sb);
    free(c->se);
    free(c->twin);
    free(c->placed);
    free(c->h);
    free(c->sec_start);
    free(c->sec_buf);
    free(c->beg_start);
    free(c->beg_buf);
    free(c->floor_);
    free(c->floor0);
    free(c->ob_start);
    free(c->ob_lo);
    free(c->ob_hi);
    free(c->ob_suf);
    free(c->fseg);
    free(c->rem);
    free(c->cut);
    free(c->rank);
    free(c->rkeys);
    free(c->okeys);
    free(c->tl);
    free(c->tr);
    free(c->tpri);
    free(c->th);
    free(c->tmin);
    free(c->smax);
    free(c->ucnt);
    free(c->epos);
    free(c->ebase);
    free(c->sadd);
    free(c->ftrail);
    free(c->cand);
    free(c->trail);
}

/* ---- building the sections ---- */

/* A byte a pass from the lowest, skipping the bytes every key shares, so a
 * build sorts its times in linear time (a sort by comparisons cost it
 * several times what it charged). */
void olla_place_radix_sort(uint64_t *key, int *id, size_t m, uint64_t *tkey, int *tid)
{
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t e = 0; e < m; e++)
            count[((key[e] >> shift) & 0xff) + 1]++;
        int one = 0; /* every key has the same byte here */
        for (int d = 0; d < 256; d++)
            one |= count[d + 1] == m;
        if (one)
            continue;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (size_t e = 0; e < m; e++) {
            size_t to = count[(key[e] >> shift) & 0xff]++;
            tkey[to] = key[e];
            if (id)
                tid[to] = id[e];
        }
        memcpy(key, tkey, m * sizeof *key);
        if (id)
            memcpy(id, tid, m * sizeof *id);
    }
}

/* The distinct start and end times of the buffers, sorted, in pts (room
 * for 2n), and each buffer's sections [sb, se) between them: returns the
 * number of points, *total the section-list entries; 0 and *total -1 when
 * out of memory. */
static size_t section_points(sctx *c, int64_t *pts, int64_t *total)
{
    size_t m = 2 * c->n, u = 0;
    uint64_t *key = malloc((m + 1) * sizeof *key), *tkey = malloc((m + 1) * sizeof *tkey);
    int *id = malloc((m + 1) * sizeof *id), *tid = malloc((m + 1) * sizeof *tid);
    *total = -1;
    if (key && tkey && id && tid) {
        for (size_t i = 0; i < c->n; i++) { /* the sign bit flipped: unsigned order is signed order */
            key[2 * i] = (uint64_t)c->it[i].lower ^ (UINT64_C(1) << 63);
            key[2 * i + 1] = (uint64_t)c->it[i].upper ^ (UINT64_C(1) << 63);
            id[2 * i] = (int)(2 * i);
            id[2 * i + 1] = (int)(2 * i + 1);
        }
        olla_place_radix_sort(key, id, m, tkey, tid);
        *total = 0;
        for (size_t e = 0; e < m; e++) {
            if (e == 0 || key[e] != key[e - 1])
                pts[u++] = (int64_t)(key[e] ^ (UINT64_C(1) << 63));
            int b = id[e] / 2;
            if (id[e] % 2)
                c->se[b] = (int)u - 1;
            else
                c->sb[b] = (int)u - 1;
        }
        for (size_t i = 0; i < c->n; i++)
            *total += c->se[i] - c->sb[i];
    }
    free(key);
    free(tkey);
    free(id);
    free(tid);
    return u;
}

/* The index of the first of the sorted points pts[0..u) not below v. */
static int first_point(const int64_t *pts, size_t u, int64_t v)
{
    size_t lo = 0, hi = u;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (pts[m] < v)
            lo = m + 1;
        else
            hi = m;
    }
    return (int)lo;
}

/* The sections [*ja, *jb) that fixed buffer f meets (none when *ja >= *jb),
 * between the points pts[0..nsec]. */
static void fixed_range(const sctx *c, const int64_t *pts, size_t f, int *ja, int *jb)
{
    int a = c->nsec > 0 ? first_point(pts, c->nsec + 1, c->fixed[f].lower + 1) : 0;
    int b = c->nsec > 0 ? first_point(pts, c->nsec + 1, c->fixed[f].upper) : 0;
    *ja = a > 0 ? a - 1 : 0;
    *jb = b < (int)c->nsec ? b : (int)c->nsec;
    if (c->fixed[f].size <= 0)
        *jb = *ja;
}

/* The segments of the sections (fseg, runs of sections that the same
 * fixed buffers meet: a segment begins where a fixed buffer begins or ends)
 * and the fixed buffers' segments summed in fixed_entries: 0, or
 * OLLA_SEARCH_NOMEM. */
static int fixed_segments(sctx *c, const int64_t *pts)
{
    c->fseg = calloc(c->nsec + 1, sizeof *c->fseg);
    if (!c->fseg)
        return OLLA_SEARCH_NOMEM;
    for (size_t f = 0; f < c->nfixed; f++) {
        int ja, jb;
        fixed_range(c, pts, f, &ja, &jb);
        if (ja < jb) {
            c->fseg[ja] = 1;
            c->fseg[jb] = 1;
        }
    }
    c->fseg[0] = 0;
    for (size_t j = 1; j < c->nsec; j++)
        c->fseg[j] += c->fseg[j - 1];
    c->fixed_entries = 0;
    for (size_t f = 0; f < c->nfixed; f++) {
        int ja, jb;
        fixed_range(c, pts, f, &ja, &jb);
        if (ja < jb)
            c->fixed_entries += c->fseg[jb - 1] - c->fseg[ja] + 1;
    }
    return 0;
}

/* Each segment's spans (in order of offset), touching ones merged in
 * place, compacted, with their suffix sums; nseg segments. */
static void merge_spans(sctx *c, size_t nseg)
{
    size_t w = 0;
    for (size_t g = 0; g < nseg; g++) {
        int64_t a = c->ob_start[g], b = c->ob_start[g + 1];
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
        c->ob_start[g] = (int64_t)first;
        int64_t sum = 0;
        for (size_t k = w; k > first; k--) {
            sum += c->ob_hi[k - 1] - c->ob_lo[k - 1];
            c->ob_suf[k - 1] = sum;
        }
    }
    c->ob_start[nseg] = (int64_t)w;
}

/* The fixed buffers' spans per segment of sections (fixed_segments()),
 * merged, and each section's floor. The spans are filled in in the order
 * of their offsets, so each segment's list comes out sorted: a window's
 * search fixes hundreds of buffers live across every section, where
 * sorting each list anew cost its square; and a list per segment, not per
 * section, since those buffers met thousands of sections each with the
 * same spans. */
static int build_fixed(sctx *c, const int64_t *pts)
{
    if (c->nfixed == 0)
        return 0;
    size_t nseg = c->nsec > 0 ? (size_t)c->fseg[c->nsec - 1] + 1 : 0;
    c->ob_start = calloc(nseg + 2, sizeof *c->ob_start);
    olla_pkey *by_off = malloc(c->nfixed * sizeof *by_off);
    c->ob_lo = malloc(((size_t)c->fixed_entries + 1) * sizeof *c->ob_lo);
    c->ob_hi = malloc(((size_t)c->fixed_entries + 1) * sizeof *c->ob_hi);
    c->ob_suf = malloc(((size_t)c->fixed_entries + 1) * sizeof *c->ob_suf);
    if (!c->ob_start || !by_off || !c->ob_lo || !c->ob_hi || !c->ob_suf) {
        free(by_off);
        return OLLA_SEARCH_NOMEM;
    }
    for (size_t f = 0; f < c->nfixed; f++)
        by_off[f] = (olla_pkey){c->fixed_off[f], 0, (int)f};
    olla_place_sort_keys(by_off, c->nfixed);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t e = 0; e < c->nfixed; e++) {
            size_t f = (size_t)by_off[e].idx;
            int ja, jb;
            fixed_range(c, pts, f, &ja, &jb);
            for (int g = ja < jb ? c->fseg[ja] : 1, last = ja < jb ? c->fseg[jb - 1] : 0; g <= last; g++) {
                if (pass == 0) {
                    c->ob_start[g + 1]++;
                } else {
                    int64_t k = c->ob_start[g + 1]++;
                    c->ob_lo[k] = c->fixed_off[f];
                    c->ob_hi[k] = c->fixed_off[f] + c->fixed[f].size;
                }
            }
        }
        if (pass == 0) {
            for (size_t g = 0; g < nseg; g++)
                c->ob_start[g + 1] += c->ob_start[g];
            /* the second pass advances ob_start[g + 1] from ob_start[g] */
            memmove(c->ob_start + 1, c->ob_start, nseg * sizeof *c->ob_start);
            c->ob_start[0] = 0;
        }
    }
    free(by_off);
    merge_spans(c, nseg);
    for (size_t j = 0; j < c->nsec; j++)
        c->floor0[j] = olla_search_lift(c, j, 0);
    return 0;
}

/* The per-section arrays (for total section-list entries) and the
 * search's per-buffer arrays and candidate stack: 0 or OLLA_SEARCH_NOMEM. */
static int alloc_sections(sctx *c, int64_t total)
{
    size_t n = c->n;
    c->sec_start = calloc(c->nsec + 1, sizeof *c->sec_start);
    c->sec_buf = malloc(((size_t)total + 1) * sizeof *c->sec_buf);
    c->beg_start = calloc(c->nsec + 2, sizeof *c->beg_start);
    c->beg_buf = malloc((n + 1) * sizeof *c->beg_buf);
    c->floor_ = calloc(c->nsec + 1, sizeof *c->floor_);
    c->rem = calloc(c->nsec + 1, sizeof *c->rem);
    c->cut = calloc(c->nsec + 1, sizeof *c->cut);
    c->rank = calloc(n + 1, sizeof *c->rank);
    c->rkeys = malloc((n + 1) * sizeof *c->rkeys);
    c->cand_cap = n + OLLA_SEARCH_CAND_SLACK;
    c->cand = malloc(c->cand_cap * sizeof *c->cand);
    c->tl = malloc((n + 1) * sizeof *c->tl);
    c->tr = malloc((n + 1) * sizeof *c->tr);
    c->tpri = malloc((n + 1) * sizeof *c->tpri);
    c->th = malloc((n + 1) * sizeof *c->th);
    c->tmin = malloc((n + 1) * sizeof *c->tmin);
    if (!c->sec_start || !c->sec_buf || !c->beg_start || !c->beg_buf || !c->floor_ || !c->rem || !c->cut || !c->rank || !c->rkeys || !c->cand)
        return OLLA_SEARCH_NOMEM;
    for (c->sleaves = 1; c->sleaves < c->nsec; c->sleaves *= 2) {
    }
    c->smax = calloc(2 * c->sleaves, sizeof *c->smax);
    c->sadd = calloc(2 * c->sleaves, sizeof *c->sadd);
    if (!c->tl || !c->tr || !c->tpri || !c->th || !c->tmin || !c->smax || !c->sadd)
        return OLLA_SEARCH_NOMEM;
    if (c->nfixed == 0) { /* the offset-order search runs: its lists' fronts */
        c->ucnt = calloc(c->nsec + 1, sizeof *c->ucnt);
        c->epos = malloc(((size_t)total + 1) * sizeof *c->epos);
        c->ebase = malloc((n + 1) * sizeof *c->ebase);
        if (!c->ucnt || !c->epos || !c->ebase)
            return OLLA_SEARCH_NOMEM;
        c->ebase[0] = 0;
        for (size_t i = 0; i < n; i++)
            c->ebase[i + 1] = c->ebase[i] + (c->se[i] - c->sb[i]);
    }
    olla_oset_priorities(c);
    return 0;
}

/* The buffers in order[0..n) by (sb, se), in index order among equals,
 * through tmp (room for n) and cnt (room for nsec + 2): two passes of a
 * counting sort. */
static void by_sections(const sctx *c, int *order, int *tmp, int64_t *cnt)
{
    for (int pass = 0; pass < 2; pass++) {
        const int *key = pass == 0 ? c->se : c->sb;
        memset(cnt, 0, (c->nsec + 2) * sizeof *cnt);
        for (size_t i = 0; i < c->n; i++)
            cnt[key[pass == 0 ? i : (size_t)tmp[i]] + 1]++;
        for (size_t j = 0; j <= c->nsec; j++)
            cnt[j + 1] += cnt[j];
        for (size_t i = 0; i < c->n; i++) {
            int x = pass == 0 ? (int)i : tmp[i];
            (pass == 0 ? tmp : order)[cnt[key[x]]++] = x;
        }
    }
}

/* Each buffer's twin: the previous identical one (same lifetime and size)
 * in (lower, upper) order, then index order, or -1. 0, OLLA_SEARCH_NOMEM,
 * or OLLA_SEARCH_GAVE_UP when the deadline passes. */
static int find_twins(sctx *c)
{
    const olla_pitem *it = c->it;
    size_t n = c->n;
    /* identical buffers: next to each other by (sb, se), the sections
     * between the distinct times, in the order of (lower, upper) */
    int *order = malloc((n + 1) * sizeof *order), *tmp = malloc((n + 1) * sizeof *tmp);
    int64_t *cnt = malloc((c->nsec + 2) * sizeof *cnt);
    int r = order && tmp && cnt ? 0 : OLLA_SEARCH_NOMEM;
    if (r == 0)
        by_sections(c, order, tmp, cnt);
    for (size_t k = 0; k < n && r == 0; k++) {
        if ((k & (OLLA_SEARCH_BUILD_POLL - 1)) == 0 && c->deadline > 0 && olla_deadline_passed(c->deadline)) {
            c->timed_out = 1;
            r = OLLA_SEARCH_GAVE_UP;
            break;
        }
        int i = order[k];
        c->twin[i] = -1;
        for (size_t q = k; q > 0; q--) {
            int p = order[q - 1];
            if (it[p].lower != it[i].lower || it[p].upper != it[i].upper)
                break;
            if (it[p].size == it[i].size) {
                c->twin[i] = p;
                break;
            }
        }
    }
    free(order);
    free(tmp);
    free(cnt);
    return r;
}

/* Each section's list start in sec_buf, from the number of buffers live
 * there: counted by differences (sec_start[j + 1] gains one where a span
 * begins at section j and loses it after its last section), summed into
 * counts, then into starts. */
static void count_sections(sctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->sb[i] < c->se[i]) {
            c->sec_start[c->sb[i] + 1]++;
            if ((size_t)c->se[i] < c->nsec)
                c->sec_start[c->se[i] + 1]--;
        }
    for (size_t j = 1; j < c->nsec; j++)
        c->sec_start[j + 1] += c->sec_start[j];
    for (size_t j = 0; j < c->nsec; j++)
        c->sec_start[j + 1] += c->sec_start[j];
    /* the buffers by the section they start in, in index order */
    for (size_t i = 0; i < c->n; i++)
        if (c->sb[i] < c->se[i])
            c->beg_start[c->sb[i] + 2]++;
    for (size_t j = 0; j < c->nsec; j++)
        c->beg_start[j + 2] += c->beg_start[j + 1];
    for (size_t i = 0; i < c->n; i++)
        if (c->sb[i] < c->se[i])
            c->beg_buf[c->beg_start[c->sb[i] + 1]++] = (int)i;
}

long long olla_search_build_units(const sctx *c, int64_t entries)
{
    return 2 * ((long long)entries + c->fixed_entries + OLLA_SEARCH_UNITS_BUILD_BUFFER * (long long)(c->n + c->nfixed) +
                (long long)c->nsec);
}

long long olla_search_reset_units(const sctx *c, int offset_order)
{
    long long entries = (long long)c->sec_start[c->nsec];
    return entries + OLLA_SEARCH_UNITS_RESET_BUFFER * (long long)c->n +
           (offset_order ? OLLA_SEARCH_UNITS_OFFSET_RESET_ENTRY * entries : 0);
}

long long olla_search_node_units(const sctx *c)
{
    return OLLA_SEARCH_NODE_PASSES * ((long long)c->sec_start[c->nsec] + (long long)c->nsec) + OLLA_SEARCH_UNITS_NODE;
}

int olla_search_build(sctx *c)
{
    size_t n = c->n;
    int64_t *pts = malloc((2 * n + 1) * sizeof *pts);
    c->sb = malloc((n + 1) * sizeof *c->sb);
    c->se = malloc((n + 1) * sizeof *c->se);
    c->twin = malloc((n + 1) * sizeof *c->twin);
    c->placed = calloc(n + 1, 1);
    c->h = calloc(n + 1, sizeof *c->h);
    int r = 0;
    if (!pts || !c->sb || !c->se || !c->twin || !c->placed || !c->h) {
        r = OLLA_SEARCH_NOMEM;
    } else {
        int64_t total;
        size_t u = section_points(c, pts, &total);
        c->nsec = u > 0 ? u - 1 : 0;
        if (total < 0 || (c->nfixed > 0 && fixed_segments(c, pts) != 0)) {
            r = OLLA_SEARCH_NOMEM;
        } else if (total > OLLA_SEARCH_MAX_ENTRIES) {
            r = OLLA_SEARCH_TOO_LARGE;
        } else if (olla_search_build_units(c, total) > c->budget) { /* the budget cannot pay for it */
            c->over_budget = 1;
            r = OLLA_SEARCH_GAVE_UP;
        } else if (c->deadline > 0 && olla_deadline_passed(c->deadline)) { /* out of time */
            c->timed_out = 1;
            r = OLLA_SEARCH_GAVE_UP;
        } else if (!(c->floor0 = calloc(c->nsec + 1, sizeof *c->floor0))) {
            r = OLLA_SEARCH_NOMEM;
        } else if ((r = build_fixed(c, pts)) == 0 && (r = alloc_sections(c, total)) == 0 &&
                   (r = find_twins(c)) == 0) {
            count_sections(c);
        }
    }
    free(pts);
    return r;
}

/* ---- resetting before each run ---- */

/* The bytes live in each section (rem) and the buffers live in both
 * section j and j + 1 (cut), by differences over each buffer's span: two
 * entries a buffer instead of one per section it spans. */
static void section_sums(sctx *c)
{
    memset(c->rem, 0, (c->nsec + 1) * sizeof *c->rem);
    memset(c->cut, 0, (c->nsec + 1) * sizeof *c->cut);
    for (size_t i = 0; i < c->n; i++) {
        c->rem[c->sb[i]] += c->it[i].size;
        c->rem[c->se[i]] -= c->it[i].size;
        if (c->se[i] - c->sb[i] > 1) {
            c->cut[c->sb[i]]++;
            c->cut[c->se[i] - 1]--;
        }
    }
    for (size_t j = 1; j <= c->nsec; j++) {
        c->rem[j] += c->rem[j - 1];
        c->cut[j] += c->cut[j - 1];
    }
}

/* Each section's list in candidate order, section by section: section j's
 * is section j - 1's without the buffers that end there, merged by rank
 * with the buffers that start in j (by_first, bucketed by first section
 * in candidate order, m of them: those that span a section). Reads and writes the lists
 * in address order, where appending buffer by buffer to every section it
 * spans writes all over them. -1 when the deadline passed. */
static int fill_lists(sctx *c, const int *by_first, size_t m)
{
    int64_t prev_lo = 0, prev_hi = 0, first = 0;
    for (size_t j = 0; j < c->nsec; j++) {
        if ((j & (OLLA_SEARCH_BUILD_POLL - 1)) == 0 && c->deadline > 0 && olla_deadline_passed(c->deadline)) {
            c->timed_out = 1;
            return -1;
        }
        int64_t out = c->sec_start[j], a = prev_lo, b = first;
        int64_t b_end = b;
        while (b_end < (int64_t)m && c->sb[by_first[b_end]] == (int)j)
            b_end++;
        for (;;) {
            while (a < prev_hi && c->se[c->sec_buf[a]] <= (int)j)
                a++; /* ended before section j */
            if (a < prev_hi && (b == b_end || c->rank[c->sec_buf[a]] < c->rank[by_first[b]]))
                c->sec_buf[out++] = c->sec_buf[a++];
            else if (b < b_end)
                c->sec_buf[out++] = by_first[b++];
            else
                break;
        }
        prev_lo = c->sec_start[j];
        prev_hi = out;
        first = b_end;
    }
    return 0;
}

/* Fills the per-section lists in the given candidate order and resets the
 * state: order is one of the section search's (ORDER_*, or a random one
 * beyond them) or, with offset_order set, one of the offset-order search's
 * (BYORDER_*). */
int olla_search_reset(sctx *c, int offset_order, int order)
{
    const olla_pitem *it = c->it;
    size_t n = c->n;
    order_key *keys = malloc((n + 1) * sizeof *keys);
    int64_t *fill = malloc((c->nsec + 1) * sizeof *fill);
    int *by_first = malloc((n + 1) * sizeof *by_first);
    if (!keys || !fill || !by_first) {
        free(keys);
        free(fill);
        free(by_first);
        return OLLA_SEARCH_NOMEM;
    }
    c->order = order;
    section_sums(c);
    uint64_t seed = (uint64_t)order * OLLA_GOLDEN_GAMMA + 1;
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        double area = (double)len * (double)it[i].size;
        int64_t neg_area = area > OLLA_PLACE_AREA_MAX ? INT64_MIN : -(int64_t)area;
        if (offset_order) {
            keys[i] = olla_search_offset_key(c, (int)i);
            continue;
        }
        switch (order) {
        case ORDER_LIFE: keys[i] = (order_key){{-len, -it[i].size, 0}, (int)i}; break;
        case ORDER_SIZE: keys[i] = (order_key){{-it[i].size, -len, 0}, (int)i}; break;
        case ORDER_AREA: keys[i] = (order_key){{neg_area, -it[i].size, 0}, (int)i}; break;
        default: /* a pseudo-random order, fixed by the order number */
            seed = olla_lcg_next(seed);
            keys[i] = (order_key){{(int64_t)olla_lcg_bits(seed), 0, 0}, (int)i};
            break;
        }
    }
    if (n > 1)
        qsort(keys, n, sizeof *keys, olla_search_cmp_key);
    memcpy(c->floor_, c->floor0, c->nsec * sizeof *c->floor_);
    /* by_first: the buffers by their first section, each section's in
     * candidate order (fill[j]: where section j's begin) */
    memset(fill, 0, (c->nsec + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        if (c->se[i] > c->sb[i])
            fill[c->sb[i] + 1]++;
    for (size_t j = 0; j < c->nsec; j++)
        fill[j + 1] += fill[j];
    for (size_t k = 0; k < n; k++) {
        int i = keys[k].idx;
        c->rank[i] = (int)k;
        c->placed[i] = 0;
        c->h[i] = 0;
        if (c->nfixed > 0)
            for (int j = c->sb[i]; j < c->se[i]; j++)
                if (c->floor0[j] > c->h[i])
                    c->h[i] = c->floor0[j];
        if (c->se[i] > c->sb[i])
            by_first[fill[c->sb[i]]++] = i;
    }
    if (fill_lists(c, by_first, (size_t)fill[c->nsec]) != 0) {
        free(keys);
        free(fill);
        free(by_first);
        return OLLA_SEARCH_GAVE_UP; /* out of time: the search gives up */
    }
    c->nodes = 0;
    c->work = olla_search_reset_units(c, offset_order); /* the reset itself */
    c->cand_top = 0;
    c->trail_top = 0;
    c->depth = 0;
    c->lo_sec = 0;
    c->hi_sec = c->nsec;
    c->changed_lo = 0;
    c->changed_hi = c->nsec;
    c->okeys_top = 0;
    c->parts_after = 0;
    c->ftrail_top = 0;
    c->troot = -1;
    if (offset_order) {
        olla_oset_sections(c);
        for (size_t j = 0; j < c->nsec; j++) {
            c->ucnt[j] = (int)(c->sec_start[j + 1] - c->sec_start[j]);
            for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
                int x = c->sec_buf[p];
                c->epos[c->ebase[x] + (int64_t)j - c->sb[x]] = (int)(p - c->sec_start[j]);
            }
        }
    }
    if (offset_order && olla_oset_build(c, keys, n) < 0) { /* heights not all equal: one at a time */
        c->troot = -1;
        for (size_t k = 0; k < n; k++)
            olla_oset_insert(c, keys[k].idx);
    }
    free(keys);
    free(fill);
    free(by_first);
    return 0;
}

/* ---- the moves of both searches ---- */

int olla_search_cmp_key(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    for (size_t q = 0; q < sizeof x->k / sizeof x->k[0]; q++)
        if (x->k[q] != y->k[q])
            return x->k[q] < y->k[q] ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int olla_search_raise_one(sctx *c, int b, int64_t v, int *lo, int *hi)
{
    if (c->placed[b] || c->h[b] >= v)
        return 0;
    trail_entry *trail = olla_grow(c->trail, &c->trail_cap, c->trail_top + 1, sizeof *c->trail);
    if (!trail)
        return -1;
    c->trail = trail;
    c->trail[c->trail_top++] = (trail_entry){b, c->h[b]};
    c->h[b] = v;
    if (c->sb[b] < *lo)
        *lo = c->sb[b];
    if (c->se[b] > *hi)
        *hi = c->se[b];
    return 0;
}

/* Raises the height of every remaining buffer live in section j to at least v;
 * widens [*lo, *hi) to the sections those buffers span. */
int olla_search_raise(sctx *c, size_t j, int64_t v, int *lo, int *hi)
{
    c->work += c->sec_start[j + 1] - c->sec_start[j];
    for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++)
        if (olla_search_raise_one(c, c->sec_buf[p], v, lo, hi) < 0)
            return -1;
    return 0;
}

void olla_search_undo(sctx *c, size_t mark)
{
    while (c->trail_top > mark) {
        trail_entry e = c->trail[--c->trail_top];
        c->h[e.buf] = e.old;
    }
}

/* Grows the candidate stack to hold need entries. */
int olla_search_cand_reserve(sctx *c, size_t need)
{
    int *grown = olla_grow(c->cand, &c->cand_cap, need, sizeof *c->cand);
    if (!grown)
        return -2;
    c->cand = grown;
    return 0;
}

/* The buffers still to place in sections [lo_sec, hi_sec) fall into parts
 * that share no section: a boundary that none of them crosses separates
 * two parts. Pushes each part with bytes still to place as a section range
 * [a, b) on the candidate stack and returns their number (-2: out of
 * memory). With one part, the range narrows to it instead.
 *
 * Within a part, only the boundaries in the changed sections are read:
 * the range was one part (every boundary inside crossed) when a buffer
 * was last placed or taken back, and that buffer changed the cuts and
 * bytes of its own sections only, so the others are still crossed and a
 * part that reaches one goes on to the next changed section or to the
 * range's last. A placement then costs the sections of its buffer, not
 * those of the whole part (thousands of sections on LLM training steps,
 * at every node). */
int olla_search_split(sctx *c)
{
    size_t lo = c->lo_sec, hi = c->hi_sec, base = c->cand_top;
    size_t from = c->changed_lo > lo ? c->changed_lo : lo, to = c->changed_hi < hi ? c->changed_hi : hi;
    int parts = 0;
    size_t start = hi;
    for (size_t j = lo; j < hi; j++) {
        c->work++;
        if (start != hi && j + 1 < hi && (j < from || j >= to)) { /* a crossed boundary */
            size_t next = j < from && from < hi - 1 ? from : hi - 1;
            j = next - 1; /* the loop's step lands on it */
            continue;
        }
        if (c->rem[j] > 0 && start == hi)
            start = j;
        if (start != hi && (j + 1 == hi || c->cut[j] == 0)) {
            if (olla_search_cand_reserve(c, base + 2 * (size_t)parts + 2) < 0)
                return -2;
            c->cand[base + 2 * (size_t)parts] = (int)start;
            c->cand[base + 2 * (size_t)parts + 1] = (int)(j + 1);
            parts++;
            start = hi;
        }
    }
    if (parts == 1) {
        c->lo_sec = (size_t)c->cand[base];
        c->hi_sec = (size_t)c->cand[base + 1];
        c->changed_lo = c->changed_hi = c->lo_sec;
    }
    return parts;
}

/* Counts a node of either search; 1 when the search must stop there: a run
 * earlier in the schedule has finished, the deadline has passed (timed_out
 * set), or a node, work or depth limit is reached. */
int olla_search_node_stops(sctx *c)
{
    c->nodes++;
    if ((c->nodes & (OLLA_SEARCH_STOP_POLL - 1)) == 0 && atomic_load(c->stop_pos) < c->pos)
        return 1;
    /* a node costs at least a pass over the sections, so the clock is cheap
     * by comparison: on large instances a few nodes already take long */
    if (c->deadline > 0 && olla_deadline_passed(c->deadline)) {
        c->timed_out = 1;
        return 1;
    }
    return c->nodes > c->node_limit || c->work > c->work_limit || c->depth >= c->max_depth;
}
