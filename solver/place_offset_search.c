/* olla-onnx: the offset-order search, the second exact search of
 * place_search.c's schedule. Branching on buffers, not on sections, it
 * builds the placement in order of increasing offset (ties in candidate
 * order), each buffer at the lowest offset the placed buffers live beside
 * it allow (its height h). A node tries every buffer still to place, lowest
 * first, except
 *   - those that would break the order (below the last offset, or at it
 *     but earlier in candidate order),
 *   - those at or above the lowest top any buffer still to place could
 *     have: that buffer fits entirely below, so a placement built in offset
 *     order takes it first;
 * and after a buffer that no buffer still to place is live beside, no
 * other: it was free to go first whatever comes after, and nothing placed
 * after it can make room for it. Every section must keep room for its
 * bytes still to place above the highest of its floor, the last offset and
 * (where heights rose) the lowest height of its buffers. Parts that no
 * buffer still to place spans are searched one after the other, each from
 * offset 0 in an order ranked anew by the bytes still to place. These are
 * the rules of minimalloc's solver (google/minimalloc). The schedule takes its
 * placements only: an exhausted run proves nothing there (the section
 * search's proofs do), though the tests check that it exhausts exactly
 * where no placement exists. */
#include <stdlib.h>
#include <string.h>

#include "solver/place_search_state.h"

/* "crowd" is the most bytes still to place in one of b's sections. */
order_key olla_search_offset_key(const sctx *c, int b)
{
    const olla_pitem *x = &c->it[b];
    int64_t len = x->upper - x->lower, crowd = 0;
    double area = (double)len * (double)x->size;
    int64_t neg_area = area > OLLA_PLACE_AREA_MAX ? INT64_MIN : -(int64_t)area;
    for (int j = c->sb[b]; j < c->se[b]; j++)
        if (c->rem[j] > crowd)
            crowd = c->rem[j];
    switch (c->order) {
    case BYORDER_LIFE_AREA_CROWD: return (order_key){{-len, neg_area, -crowd}, b};
    case BYORDER_CROWD_AREA_LIFE: return (order_key){{-crowd, neg_area, -len}, b};
    case BYORDER_CROWD_LIFE_AREA: return (order_key){{-crowd, -len, neg_area}, b};
    default: return (order_key){{-x->size, -len, 0}, b};
    }
}

static int okeys_reserve(sctx *c, size_t need)
{
    olla_pkey *grown = olla_grow(c->okeys, &c->okeys_cap, need, sizeof *c->okeys);
    if (!grown)
        return OLLA_SEARCH_NOMEM;
    c->okeys = grown;
    return 0;
}

static int ftrail_push(sctx *c, int j)
{
    trail_entry *grown = olla_grow(c->ftrail, &c->ftrail_cap, c->ftrail_top + 1,
                                          sizeof *c->ftrail);
    if (!grown)
        return OLLA_SEARCH_NOMEM;
    c->ftrail = grown;
    c->ftrail[c->ftrail_top++] = (trail_entry){j, c->floor_[j]};
    return 0;
}

/* The lowest height of the buffers still to place live in section j (the
 * front of its list), or any height at most room once one is seen (the
 * section then has room whatever the others' heights): only the entries
 * read are charged. */
static int64_t lowest_height(sctx *c, int j, int64_t room)
{
    int64_t low = INT64_MAX, p = c->sec_start[j];
    for (; p < c->sec_start[j] + c->ucnt[j] && low > room; p++) {
        int b = c->sec_buf[p];
        if (!c->placed[b] && c->h[b] < low)
            low = c->h[b];
    }
    c->work += p - c->sec_start[j] + 1;
    return low;
}

/* Every section of the part keeps room for its bytes still to place above
 * its floor and the offset o; in sections [lo, hi) (where heights rose),
 * above the lowest height of its buffers still to place too. Every section
 * read. */
static int offset_room(sctx *c, int64_t o, int lo, int hi)
{
    c->work += (long long)(c->hi_sec - c->lo_sec);
    for (size_t j = c->lo_sec; j < c->hi_sec; j++) {
        int64_t fl = c->floor_[j] > o ? c->floor_[j] : o;
        if (c->rem[j] > 0 && fl + c->rem[j] > c->cap)
            return 0;
    }
    for (int j = lo; j < hi; j++) {
        int64_t room = c->cap - c->rem[j]; /* the highest a floor may be */
        if (c->rem[j] > 0 && (o > room || lowest_height(c, j, room) > room))
            return 0;
    }
    return 1;
}

/* Section j (with bytes still to place) has a buffer still to place low
 * enough for them all to fit above it. */
static int low_enough(sctx *c, int j)
{
    int64_t room = c->cap - c->rem[j];
    return lowest_height(c, j, room) <= room;
}

/* The part keeps room once b is placed at o: its bytes still to place fit
 * above o, and those of b's sections above b's top. No buffer needs to be
 * raised to know (the raise only adds the lowest heights' checks,
 * room_raised), and most children of an LLM training step's nodes fail
 * here. b's bytes leave its sections in rem's tree first, and come back
 * when there is no room. */
static int room_before(sctx *c, int b, int64_t o)
{
    olla_oset_add(c, c->sb[b], c->se[b], -c->it[b].size);
    int room = o + olla_oset_most(c, (int)c->lo_sec, (int)c->hi_sec) <= c->cap &&
               o + c->it[b].size + olla_oset_most(c, c->sb[b], c->se[b]) <= c->cap;
    if (!room)
        olla_oset_add(c, c->sb[b], c->se[b], c->it[b].size);
    return room;
}

/* For tests (c->check_order): room_before's answer from the bytes still to
 * place read section by section, an error counted in c->order_errors when
 * they differ. Charges no work. */
static void check_room_before(sctx *c, int b, int64_t o, int room)
{
    int64_t top = o + c->it[b].size;
    int full = 1;
    for (size_t j = c->lo_sec; j < c->hi_sec; j++) {
        int in_b = (int)j >= c->sb[b] && (int)j < c->se[b];
        int64_t left = c->rem[j] - (in_b ? c->it[b].size : 0);
        if (left > 0 && (o + left > c->cap || (in_b && top + left > c->cap)))
            full = 0;
    }
    c->order_errors += full != room;
}

/* offset_room's answer after b was placed at o (top its top) from a node
 * whose sections all had room (every node below a run's first level: the
 * first level's checks cover the sections of the buffers they raise, and
 * before, every height is 0), room_before having passed. Only what the
 * raise changed is read: in b's sections (b left them) the lowest heights;
 * in the other sections of [lo, hi), only those with more bytes still to
 * place than fit above top, since those that hold a buffer raised to top
 * have room, and those that do not are as they were. */
static int room_raised(sctx *c, int b, int64_t o, int lo, int hi)
{
    int64_t top = o + c->it[b].size;
    c->work += c->se[b] - c->sb[b];
    for (int j = c->sb[b]; j < c->se[b]; j++)
        if (c->rem[j] > 0 && !low_enough(c, j))
            return 0;
    return olla_oset_each_above(c, lo, c->sb[b], c->cap - top, low_enough) &&
           olla_oset_each_above(c, c->se[b], hi, c->cap - top, low_enough);
}

static int offset_dfs(sctx *c, int64_t last_off, int last_rank);

/* Outcome r of a child ends the whole run: it gave up, ran out of memory,
 * or found a placement that no part searched after it can undo. The state
 * is then left as it is (olla_search_reset makes it anew for the next
 * run): undoing a dive of thousands of levels, each putting back the keys
 * of the buffers it raised, cost as much as the dive and was never
 * charged. */
static int run_ends(const sctx *c, int r)
{
    return r == OLLA_SEARCH_GAVE_UP || r == OLLA_SEARCH_NOMEM || (r == OLLA_SEARCH_FOUND && c->parts_after == 0);
}

/* Units of one pass over the buffers that start in the part's sections
 * (each listed once, in the section it starts in). */
static long long start_units(const sctx *c)
{
    return (long long)(c->hi_sec - c->lo_sec) + (c->beg_start[c->hi_sec] - c->beg_start[c->lo_sec]);
}

/* Ranks the buffers still to place in sections [lo_sec, hi_sec) anew, by
 * the bytes still to place, saving their ranks on the key stack, and moves
 * them from the candidate tree at *parent into a tree of their own. */
static int rank_part(sctx *c, int *parent)
{
    size_t m = 0;
    c->work += start_units(c);
    c->troot = *parent;
    for (size_t j = c->lo_sec; j < c->hi_sec; j++)
        for (int64_t p = c->beg_start[j]; p < c->beg_start[j + 1]; p++) {
            int b = c->beg_buf[p];
            if (c->placed[b])
                continue;
            if (okeys_reserve(c, c->okeys_top + 1) < 0) {
                *parent = c->troot;
                return OLLA_SEARCH_NOMEM;
            }
            c->okeys[c->okeys_top++] = (olla_pkey){c->rank[b], 0, b};
            olla_oset_erase(c, b);
            c->work += c->se[b] - c->sb[b]; /* the key reads its sections */
            c->rkeys[m++] = olla_search_offset_key(c, b);
        }
    *parent = c->troot;
    if (m > 1)
        qsort(c->rkeys, m, sizeof *c->rkeys, olla_search_cmp_key);
    c->troot = -1;
    for (size_t k = 0; k < m; k++) {
        c->rank[c->rkeys[k].idx] = (int)k;
        olla_oset_insert(c, c->rkeys[k].idx);
    }
    c->work += OLLA_SEARCH_UNITS_SORT_KEY * (long long)m;
    return 0;
}

/* The parts of the node, one after the other, each from offset 0 in an
 * order ranked anew, in a candidate tree of its own; the node's tree is
 * whole again on return. */
static int offset_parts(sctx *c, int parts)
{
    size_t base = c->cand_top, lo = c->lo_sec, hi = c->hi_sec;
    int root = c->troot;
    c->cand_top += 2 * (size_t)parts;
    int r = OLLA_SEARCH_FOUND;
    for (int k = 0; k < parts && r == OLLA_SEARCH_FOUND; k++) {
        size_t saved = c->okeys_top;
        c->lo_sec = (size_t)c->cand[base + 2 * (size_t)k];
        c->hi_sec = (size_t)c->cand[base + 2 * (size_t)k + 1];
        r = rank_part(c, &root);
        c->parts_after += parts - 1 - k;
        c->changed_lo = c->changed_hi = c->lo_sec; /* a part as the split found it */
        if (r == 0) /* ranked */
            r = offset_dfs(c, 0, -1);
        int ends = run_ends(c, r); /* counting the parts after this one */
        c->parts_after -= parts - 1 - k;
        if (ends)
            break; /* nothing is undone: the run's state is reset before the next */
        c->troot = root; /* the part's tree is whole: its buffers go back */
        while (c->okeys_top > saved) {
            olla_pkey e = c->okeys[--c->okeys_top];
            c->rank[e.idx] = (int)e.k1;
            olla_oset_insert(c, e.idx);
        }
        root = c->troot;
    }
    c->cand_top = base;
    c->lo_sec = lo;
    c->hi_sec = hi;
    return r;
}

/* For tests (c->check_order): the candidates as the tree orders them
 * against the buffers still to place gathered from the part's sections and
 * sorted by (height, rank), the tree's lowest top against theirs, and each
 * section list's front against its buffers still to place; a difference
 * counts in c->order_errors. Charges no work. 0, or
 * OLLA_SEARCH_NOMEM. */
static int check_order(sctx *c)
{
    long long work = c->work;
    size_t base = c->okeys_top, m = 0;
    int64_t min_top = INT64_MAX;
    for (size_t j = c->lo_sec; j < c->hi_sec; j++)
        for (int64_t p = c->beg_start[j]; p < c->beg_start[j + 1]; p++) {
            int b = c->beg_buf[p];
            if (c->placed[b])
                continue;
            if (okeys_reserve(c, base + m + 1) < 0)
                return OLLA_SEARCH_NOMEM;
            c->okeys[base + m++] = (olla_pkey){c->h[b], c->rank[b], b};
            if (c->h[b] + c->it[b].size < min_top)
                min_top = c->h[b] + c->it[b].size;
        }
    olla_place_sort_keys(c->okeys + base, m);
    int bad = olla_oset_min_top(c) != min_top;
    size_t k = 0;
    for (int b = olla_oset_first_at(c, INT64_MIN, INT32_MIN); b >= 0; b = olla_oset_next(c, b), k++)
        bad |= k >= m || c->okeys[base + k].idx != b || c->th[b] != c->h[b];
    for (size_t j = c->lo_sec; j < c->hi_sec; j++) { /* each list's front: its buffers still to place */
        int64_t left = 0, p = c->sec_start[j];
        for (; p < c->sec_start[j + 1]; p++)
            left += !c->placed[c->sec_buf[p]];
        for (p = c->sec_start[j]; p < c->sec_start[j] + c->ucnt[j]; p++)
            bad |= c->placed[c->sec_buf[p]];
        bad |= left != c->ucnt[j];
    }
    c->order_errors += bad || k != m;
    c->work = work;
    return 0;
}

/* Raises to v every buffer still to place live beside b: those live in
 * b's first section, and those that start in its later ones (each met once,
 * however many of b's sections it spans; the first section's front read
 * only). 0, or -1 when out of memory. */
static int raise_beside(sctx *c, int b, int64_t v, int *lo, int *hi)
{
    int64_t s = c->sec_start[c->sb[b]];
    c->work += c->ucnt[c->sb[b]];
    for (int64_t p = s; p < s + c->ucnt[c->sb[b]]; p++)
        if (olla_search_raise_one(c, c->sec_buf[p], v, lo, hi) < 0)
            return -1;
    int first = c->sb[b] + 1, last = c->se[b];
    c->work += (long long)(last - first) + (c->beg_start[last] - c->beg_start[first]);
    for (int64_t p = c->beg_start[first]; p < c->beg_start[last]; p++)
        if (olla_search_raise_one(c, c->beg_buf[p], v, lo, hi) < 0)
            return -1;
    return 0;
}

/* Brings the candidate tree's keys of the buffers raised since the trail's
 * mark up to their heights (back to the heights before, with back set:
 * charged as well, it costs as much; a run that ends skips it). */
static void rekey_raised(sctx *c, size_t mark, int back)
{
    for (size_t p = mark; p < c->trail_top; p++) {
        int x = c->trail[p].buf;
        olla_oset_rekey(c, x, back ? c->trail[p].old : c->h[x]);
    }
}

/* Buffer b placed at its height o, the search above it, then b taken back:
 * an OLLA_SEARCH_ outcome (OLLA_SEARCH_NONE: not with b there); *hatless
 * set when no buffer still to place is live beside b. A child without
 * room (room_before) changes nothing. The candidate tree follows only the
 * heights of a child searched. */
static int offset_child(sctx *c, int b, int64_t o, int *hatless)
{
    *hatless = 1;
    for (int j = c->sb[b]; j < c->se[b] && *hatless; j++)
        *hatless = c->rem[j] == c->it[b].size;
    int fits = room_before(c, b, o);
    if (c->check_order)
        check_room_before(c, b, o, fits);
    if (!fits)
        return OLLA_SEARCH_NONE;
    int64_t top = o + c->it[b].size;
    size_t mark = c->trail_top, fmark = c->ftrail_top;
    int r = OLLA_SEARCH_NONE;
    olla_oset_erase(c, b);
    c->placed[b] = 1;
    c->off[b] = o;
    olla_oset_unlist(c, b);
    /* the floors are read by offset_room only: at the first two levels
     * and when checking. Below, keeping them would serve nothing, and
     * their trail held an entry per section of every buffer of a dive
     * (17 million, 277 MB, on a 48-layer LLM training step). */
    int floors = c->depth < 2 || c->nfixed > 0 || c->check_order;
    for (int j = c->sb[b]; j < c->se[b] && r == OLLA_SEARCH_NONE; j++) {
        if (floors) {
            if (ftrail_push(c, j) < 0)
                r = OLLA_SEARCH_NOMEM;
            c->floor_[j] = top;
        }
        c->rem[j] -= c->it[b].size;
    }
    for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
        c->cut[j]--;
    int lo = c->sb[b], hi = c->se[b];
    if (r == OLLA_SEARCH_NONE && raise_beside(c, b, top, &lo, &hi) < 0)
        r = OLLA_SEARCH_NOMEM;
    int room = r == OLLA_SEARCH_NONE &&
               (c->depth >= 2 && c->nfixed == 0 ? room_raised(c, b, o, lo, hi) : offset_room(c, o, lo, hi));
    if (c->check_order && r == OLLA_SEARCH_NONE && c->depth >= 2) {
        long long work = c->work;
        c->order_errors += room != offset_room(c, o, lo, hi);
        c->work = work;
    }
    if (room) {
        rekey_raised(c, mark, 0);
        size_t changed_hi, changed_lo = olla_search_changed_to(c, b, &changed_hi);
        r = offset_dfs(c, o, c->rank[b]);
        if (run_ends(c, r))
            return r;
        olla_search_changed_back(c, changed_lo, changed_hi);
        rekey_raised(c, mark, 1);
    }
    c->work += (long long)(c->trail_top - mark); /* the undo, charged as the moves were */
    olla_search_undo(c, mark);
    while (c->ftrail_top > fmark) {
        trail_entry e = c->ftrail[--c->ftrail_top];
        c->floor_[e.buf] = e.old;
    }
    c->placed[b] = 0;
    olla_oset_relist(c, b);
    for (int j = c->sb[b]; j < c->se[b]; j++)
        c->rem[j] += c->it[b].size;
    olla_oset_add(c, c->sb[b], c->se[b], c->it[b].size);
    for (int j = c->sb[b]; j + 1 < c->se[b]; j++)
        c->cut[j]++;
    olla_oset_insert(c, b);
    return r;
}

/* A node: the parts searched one after the other, else every buffer still
 * to place in order of (height, rank) from the last placed one's, up to
 * the lowest top of them all. */
static int offset_node(sctx *c, int64_t last_off, int last_rank)
{
    if (olla_search_node_stops(c))
        return OLLA_SEARCH_GAVE_UP;
    int parts = olla_search_split(c);
    if (parts < 0)
        return parts;
    if (parts == 0)
        return OLLA_SEARCH_FOUND; /* nothing left to place */
    if (parts > 1)
        return offset_parts(c, parts);
    if (c->check_order && check_order(c) < 0)
        return OLLA_SEARCH_NOMEM;
    int64_t min_top = olla_oset_min_top(c);
    c->depth++;
    int r = OLLA_SEARCH_NONE;
    for (int b = olla_oset_first_at(c, last_off, last_rank); b >= 0; b = olla_oset_next(c, b)) {
        if (olla_search_over(c)) {
            r = OLLA_SEARCH_GAVE_UP;
            break;
        }
        int64_t o = c->th[b];
        if (o >= min_top)
            break; /* the keys are in order of height: so are all that follow */
        if (o + c->it[b].size > c->cap)
            continue;
        int hatless;
        r = offset_child(c, b, o, &hatless);
        if (r != OLLA_SEARCH_NONE || hatless)
            break; /* (the tree is not whole after an outcome that ends the run) */
    }
    c->depth--;
    return r;
}

static int offset_dfs(sctx *c, int64_t last_off, int last_rank)
{
    size_t lo = c->lo_sec, hi = c->hi_sec;
    int r = offset_node(c, last_off, last_rank);
    c->lo_sec = lo;
    c->hi_sec = hi;
    return r;
}

int olla_search_offset_run(sctx *c) { return offset_dfs(c, 0, -1); }
