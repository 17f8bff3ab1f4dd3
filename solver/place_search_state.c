/* olla-onnx: the moves shared by the two exact placement searches (the
 * section search, place_search.c, and the offset-order search,
 * place_offset_search.c): key order, raising heights with a trail and
 * undoing it, growing the search's stacks, splitting the buffers still to
 * place into independent parts, and the limits checked at every node. */
#include <stdatomic.h>
#include <stdlib.h>

#include "solver/place_search_state.h"
#include "util/olla_clock.h"

int olla_search_cmp_key(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    for (int q = 0; q < 3; q++)
        if (x->k[q] != y->k[q])
            return x->k[q] < y->k[q] ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Raises the height of every remaining buffer live in section j to at least v;
 * widens [*lo, *hi) to the sections those buffers span. */
int olla_search_raise(sctx *c, size_t j, int64_t v, int *lo, int *hi)
{
    c->work += c->sec_start[j + 1] - c->sec_start[j];
    for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
        int b = c->sec_buf[p];
        if (c->placed[b] || c->h[b] >= v)
            continue;
        trail_entry *trail = olla_grow(c->trail, &c->trail_cap, c->trail_top + 1,
                                              sizeof *c->trail);
        if (!trail)
            return -1;
        c->trail = trail;
        c->trail[c->trail_top++] = (trail_entry){b, c->h[b]};
        c->h[b] = v;
        if (c->sb[b] < *lo)
            *lo = c->sb[b];
        if (c->se[b] > *hi)
            *hi = c->se[b];
    }
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
 * memory). With one part, the range narrows to it instead. */
int olla_search_split(sctx *c)
{
    size_t lo = c->lo_sec, hi = c->hi_sec, base = c->cand_top;
    int parts = 0;
    size_t start = hi;
    c->work += (long long)(hi - lo);
    for (size_t j = lo; j < hi; j++) {
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
    }
    return parts;
}

/* Counts a node of either search; 1 when the search must stop there: a run
 * earlier in the schedule has finished, the deadline has passed (timed_out
 * set), or a node, work or depth limit is reached. */
int olla_search_node_stops(sctx *c)
{
    c->nodes++;
    if ((c->nodes & 255) == 0 && atomic_load(c->stop_pos) < c->pos)
        return 1;
    /* a node costs at least a pass over the sections, so the clock is cheap
     * by comparison: on large instances a few nodes already take long */
    if (c->deadline > 0 && olla_deadline_passed(c->deadline)) {
        c->timed_out = 1;
        return 1;
    }
    return c->nodes > c->node_limit || c->work > c->work_limit || c->depth >= c->max_depth;
}
