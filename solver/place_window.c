/* olla-onnx: placement from a window of time around the busiest time. The
 * buffers live in a window [a, b] are searched first, cut to the window;
 * those live across all of it meet every other buffer of the window, so
 * they can sit on top of the others as one block in any order, and the
 * buffers that start or end inside the window are placed below the
 * capacity less the block (by the split's first rounds, else the exact
 * search). The window's buffers are then fixed
 * with their whole lifetimes (two of them that live on past a window's end
 * both live at that end, so they do not overlap there either), and the
 * buffers wholly before and wholly after the window are placed around them
 * as the split places a side (place_split.c); when they do not fit, the
 * window's buffers are placed again by the exact search, forwards, then
 * backwards in time (place_reverse.c), each finding another placement of
 * them, and the sides are tried around each. On training steps, the
 * buffers live across a window of a few hundred steps around the busiest
 * time are most of its peak, so the search there is small even where the
 * whole instance is far past what it can finish. */
#include <stdlib.h>

#include "solver/place_internal.h"

/* Orders of the block of buffers live across the window, from its bottom:
 * latest end first (what dies first is on top), or earliest start first. */
enum { BLOCK_BY_END, BLOCK_BY_START, BLOCK_ORDERS };
/* The windows tried: the busy spans, the first and last times at which the
 * load is at least this many thousandths of max live, in turn. The last is
 * the narrowest: fewer buffers to search in it and more on its sides, which
 * places what the wider ones give up on (MobileNet v3 large at batch 1,
 * whose windows at 970-990 hold 305-310 buffers that the search does not
 * place within its share, while the one at 995 holds 191 that the split
 * places at once, and its sides fit around them). */
#ifndef OLLA_WINDOW_BUSY_PER_MILLE
#define OLLA_WINDOW_BUSY_PER_MILLE {980, 990, 970, 995}
#endif
/* The sides of a window get this fraction of its search's budget. */
#define OLLA_WINDOW_SIDES_PART 3

/* The state of one placement from a window. */
typedef struct wctx {
    const olla_pitem *it;
    size_t n;
    int64_t cap;
    int64_t *off;   /* every buffer's offset, filled as placed */
    const olla_logger *log;
    olla_pitem *win; /* n + 1: the window's cut buffers that start or end in it */
    int64_t *woff;
    int *in;        /* their indexes */
    int *full;      /* n + 1: the buffers live across the window */
    int *before, *after;
    olla_pitem *fx; /* n + 1: the window's buffers, fixed */
    int64_t *fx_off;
    olla_pkey *keys;
    size_t nw, nfull, nb, na;
} wctx;

/* Cuts the instance at the window [a, b]: returns the block's units. */
static int64_t classify(wctx *c, int64_t a, int64_t b)
{
    int64_t block = 0;
    c->nw = c->nfull = c->nb = c->na = 0;
    for (size_t i = 0; i < c->n; i++) {
        int side = olla_place_window_side(c->it[i], a, b);
        if (side == OLLA_WINDOW_BEFORE) {
            c->before[c->nb++] = (int)i;
        } else if (side == OLLA_WINDOW_AFTER) {
            c->after[c->na++] = (int)i;
        } else if (side == OLLA_WINDOW_ACROSS) {
            c->full[c->nfull++] = (int)i;
            block += c->it[i].size;
        } else {
            c->win[c->nw] = olla_place_window_clip(c->it[i], a, b);
            c->in[c->nw++] = (int)i;
        }
    }
    return block;
}

/* Fixes the window's buffers: the searched ones at their offsets, the block
 * from base up in the order kind. */
static void fix_window(wctx *c, int64_t base, int kind)
{
    size_t k = 0;
    for (size_t e = 0; e < c->nw; e++) {
        c->off[c->in[e]] = c->woff[e];
        c->fx[k] = c->it[c->in[e]];
        c->fx_off[k++] = c->woff[e];
    }
    for (size_t e = 0; e < c->nfull; e++) {
        const olla_pitem *x = &c->it[c->full[e]];
        c->keys[e] = kind == BLOCK_BY_END ? (olla_pkey){-x->upper, x->lower, c->full[e]}
                                          : (olla_pkey){x->lower, -x->upper, c->full[e]};
    }
    olla_place_sort_keys(c->keys, c->nfull);
    for (size_t e = 0; e < c->nfull; e++) {
        int i = c->keys[e].idx;
        c->off[i] = base;
        c->fx[k] = c->it[i];
        c->fx_off[k++] = base;
        base += c->it[i].size;
    }
}

/* The sides after and before the window, its buffers fixed at c->woff and
 * the block in each order in turn, with an equal share of at most sides
 * units of w. An OLLA_SEARCH_ outcome. */
static int place_sides(wctx *c, int64_t a, int64_t b, int64_t block, long long sides, olla_pwork *w)
{
    int r = OLLA_SEARCH_GAVE_UP;
    olla_pwork all_sides = olla_pwork_part(w, sides);
    for (int kind = 0; kind < BLOCK_ORDERS && r != OLLA_SEARCH_NOMEM; kind++) {
        if (olla_pwork_left(&all_sides) == 0 || olla_pwork_late(&all_sides))
            break;
        fix_window(c, c->cap - block, kind);
        olla_pfixed fixed = {c->fx, c->fx_off, c->nw + c->nfull};
        olla_pwork sp = olla_pwork_part(&all_sides, olla_pwork_left(&all_sides) / (BLOCK_ORDERS - kind));
        r = olla_place_split_side(c->it, c->cap, c->after, c->na, &fixed, &sp, c->off);
        if (r == OLLA_SEARCH_FOUND)
            r = olla_place_split_side(c->it, c->cap, c->before, c->nb, &fixed, &sp, c->off);
        olla_pwork_join(&all_sides, &sp);
        olla_log(c->log, OLLA_LOG_DETAIL, "place: window %lld..%lld, block by %s: sides %s after %lld units",
                 (long long)a, (long long)b, kind == BLOCK_BY_END ? "end" : "start",
                 r == OLLA_SEARCH_FOUND ? "placed" : "not placed", sp.used);
        if (r == OLLA_SEARCH_FOUND)
            break;
    }
    olla_pwork_join(w, &all_sides);
    return r;
}

/* How a window's buffers are placed below its block, in turn until the
 * sides fit around them: the split's first rounds (place_split.c; on a
 * tight window they can place in a fraction of what the exact search
 * spends there), the exact search, and the exact search backwards in time
 * (another placement, for sides that do not fit around the first). */
enum { WINDOW_SPLIT, WINDOW_SEARCH, WINDOW_BACKWARDS, WINDOW_WAYS };

/* The window's buffers placed below capacity cap in the way way, within w:
 * an OLLA_SEARCH_ outcome (c->woff filled when found; the split proves
 * nothing, so it only finds or gives up). */
static int place_window_buffers(wctx *c, int way, int64_t cap, olla_pwork *w)
{
    if (way == WINDOW_SPLIT) {
        olla_split_progress pr = {0};
        pr.until = OLLA_PLACE_SPLIT_FIRST_ROUNDS;
        int r = olla_place_split_rounds(c->win, c->nw, cap, &pr, w, c->woff, NULL);
        return r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NOMEM ? r : OLLA_SEARCH_GAVE_UP;
    }
    return way == WINDOW_SEARCH ? olla_place_search(c->win, c->nw, cap, w, c->woff)
                                : olla_place_search_reversed(c->win, c->nw, cap, w, c->woff);
}

/* One window [a, b]: its buffers placed in each way in turn with at most
 * search units of w each, and each placement found tried with the sides
 * (place_sides, at most sides units); the exact search backwards only
 * after the one forwards found a placement the sides did not fit around.
 * An OLLA_SEARCH_ outcome (off filled when found; OLLA_SEARCH_NONE: the
 * window's search proved that nothing fits). */
static int try_window(wctx *c, int64_t a, int64_t b, long long search, long long sides, olla_pwork *w)
{
    static const char *const way_name[WINDOW_WAYS] = {" by the split", "", " backwards in time"};
    int64_t block = classify(c, a, b);
    if (block > c->cap || c->nb + c->na == 0 || c->nb + c->na > OLLA_WINDOW_MAX_SIDES)
        return OLLA_SEARCH_GAVE_UP;
    int r = OLLA_SEARCH_GAVE_UP;
    for (int way = 0; way < WINDOW_WAYS; way++) {
        olla_pwork part = olla_pwork_part(w, search);
        r = place_window_buffers(c, way, c->cap - block, &part);
        olla_pwork_join(w, &part);
        olla_log(c->log, OLLA_LOG_DETAIL,
                 "place: window %lld..%lld%s (%zu buffers searched, %zu live across, %zu before, %zu after): %s after %lld units",
                 (long long)a, (long long)b, way_name[way], c->nw, c->nfull, c->nb, c->na,
                 r == OLLA_SEARCH_FOUND ? "found" : r == OLLA_SEARCH_NONE ? "none exists" : "gave up", part.used);
        if (r == OLLA_SEARCH_NOMEM || r == OLLA_SEARCH_NONE || (r == OLLA_SEARCH_GAVE_UP && way == WINDOW_SEARCH))
            return r;
        if (r != OLLA_SEARCH_FOUND)
            continue;
        r = place_sides(c, a, b, block, sides, w);
        if (r == OLLA_SEARCH_FOUND || r == OLLA_SEARCH_NOMEM)
            return r;
    }
    return OLLA_SEARCH_GAVE_UP;
}

/* The busy span at per_mille: the first and last times at which the load is
 * at least per_mille / 1000 of max live, from the nt loads of c->keys. */
static void busy_span(const wctx *c, size_t nt, int64_t max, int per_mille, int64_t *a, int64_t *b)
{
    *a = *b = -1;
    for (size_t e = 0; e < nt; e++)
        if (c->keys[e].k2 * 1000 >= max * per_mille) {
            if (*a < 0)
                *a = c->keys[e].k1;
            *b = c->keys[e].k1;
        }
}

/* Tries the busy windows in turn until one places everything (see
 * place_internal.h). */
int olla_place_window(const olla_pitem *it, size_t n, int64_t capacity, olla_pwork *w, int64_t *off,
                      const olla_logger *log, int pass)
{
    wctx c = {it, n, capacity, off, log, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0};
    c.win = malloc((n + 1) * sizeof *c.win);
    c.woff = malloc((n + 1) * sizeof *c.woff);
    c.in = malloc((n + 1) * sizeof *c.in);
    c.full = malloc((n + 1) * sizeof *c.full);
    c.before = malloc((n + 1) * sizeof *c.before);
    c.after = malloc((n + 1) * sizeof *c.after);
    c.fx = malloc((n + 1) * sizeof *c.fx);
    c.fx_off = malloc((n + 1) * sizeof *c.fx_off);
    c.keys = malloc((2 * n + 1) * sizeof *c.keys);
    int r = OLLA_SEARCH_NOMEM;
    if (c.win && c.woff && c.in && c.full && c.before && c.after && c.fx && c.fx_off && c.keys) {
        /* the spans first, then the attempts (which reuse keys) */
        static const int per_mille[] = OLLA_WINDOW_BUSY_PER_MILLE;
        enum { NA = sizeof per_mille / sizeof per_mille[0] };
        int64_t max, a[NA], b[NA];
        size_t nt = olla_place_items_loads(c.it, c.n, c.keys, &max);
        for (int k = 0; k < NA; k++)
            busy_span(&c, nt, max, per_mille[k], &a[k], &b[k]);
        r = OLLA_SEARCH_GAVE_UP;
        long long total = olla_pwork_left(w);
        for (int k = 0; k < NA && r == OLLA_SEARCH_GAVE_UP; k++) {
            if (olla_pwork_left(w) == 0 || olla_pwork_late(w))
                break;
            /* the first pass: an equal share each; the second: half of
             * what is left each (the exact search's last round is cut
             * short, so one long run finds what several short ones miss) */
            long long search = pass == 0 ? total / NA : olla_pwork_left(w) / 2;
            int again = 0; /* the same span as an earlier window */
            for (int j = 0; j < k; j++)
                again |= a[j] == a[k] && b[j] == b[k];
            if (a[k] >= 0 && !again)
                r = try_window(&c, a[k], b[k], search, search / OLLA_WINDOW_SIDES_PART, w);
        }
    }
    free(c.win);
    free(c.woff);
    free(c.in);
    free(c.full);
    free(c.before);
    free(c.after);
    free(c.fx);
    free(c.fx_off);
    free(c.keys);
    return r;
}
