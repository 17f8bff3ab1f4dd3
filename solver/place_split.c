/* olla-onnx: placement split at the busiest time. In a placement that
 * reaches max live, the buffers live at the peak time p are stacked without
 * a gap; the buffers that end by p and those that start after p never meet,
 * so once the stack is fixed the two sides are independent problems. In
 * training graphs lifetimes nest (what the forward pass makes early, the
 * backward pass frees late), so stacking the peak buffers by start time
 * (the longest-nested at the bottom, as the paper's pyramid) leaves each
 * side a floor without holes. Several stacking orders are tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"

enum { STACK_START, STACK_END, STACK_LENGTH, STACK_COUNT };

/* The split is only tried when at least one buffer in this many is live at
 * the peak time, as in training graphs (the forward pass's saved
 * activations all live across the turn to the backward pass). */
#define OLLA_SPLIT_MIN_SHARE 8

/* Time of maximum live units (the earliest if several). */
static int64_t peak_time(const olla_pitem *it, size_t n, olla_pkey *ev)
{
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (olla_pkey){it[i].lower, 1, (int)i};
        ev[2 * i + 1] = (olla_pkey){it[i].upper, 0, (int)i}; /* ends before starts */
    }
    olla_place_sort_keys(ev, 2 * n);
    int64_t cur = 0, best = -1, t = 0;
    for (size_t e = 0; e < 2 * n; e++) {
        cur += ev[e].k2 ? it[ev[e].idx].size : -it[ev[e].idx].size;
        if (ev[e].k2 && cur > best) {
            best = cur;
            t = ev[e].k1;
        }
    }
    return t;
}

/* Searches the buffers of one side (idx[0..k)) above the fixed stack. */
static int side(const olla_pitem *it, const int *idx, size_t k, const olla_pitem *fx,
                const int64_t *fx_off, size_t nfx, int64_t cap, double deadline,
                olla_pitem *sub, int64_t *sub_off, int64_t *off)
{
    if (k == 0)
        return 1;
    for (size_t e = 0; e < k; e++)
        sub[e] = it[idx[e]];
    long long nodes = 0;
    int r = olla_place_search_fixed(sub, k, fx, fx_off, nfx, cap, deadline, sub_off, &nodes);
    if (r == 1)
        for (size_t e = 0; e < k; e++)
            off[idx[e]] = sub_off[e];
    return r;
}

/* One side searched with the stacked buffers free (cut at the peak), which
 * chooses their order; then the other side above that stack. */
static int free_side(const olla_pitem *it, const int *stack, size_t ns, const int *idx,
                     size_t k, int64_t p, int later, int64_t cap, double deadline,
                     olla_pitem *fx, int64_t *fx_off, olla_pitem *sub, int64_t *sub_off,
                     int64_t *off)
{
    size_t m = 0;
    for (size_t e = 0; e < k; e++)
        sub[m++] = it[idx[e]];
    for (size_t e = 0; e < ns; e++) {
        olla_pitem b = it[stack[e]];
        fx[e] = b;
        if (later)
            b.lower = p;
        else
            b.upper = p + 1;
        sub[m++] = b;
    }
    long long nodes = 0;
    int r = olla_place_search_fixed(sub, m, NULL, NULL, 0, cap, deadline, sub_off, &nodes);
    if (r != 1)
        return r;
    for (size_t e = 0; e < k; e++)
        off[idx[e]] = sub_off[e];
    for (size_t e = 0; e < ns; e++) {
        fx_off[e] = sub_off[k + e];
        off[stack[e]] = fx_off[e];
    }
    return 1;
}

int olla_place_split(const olla_pitem *it, size_t n, int64_t capacity, double deadline,
                     int64_t *off, int verbosity)
{
    if (n == 0)
        return 1;
    olla_pkey *keys = malloc((2 * n + 1) * sizeof *keys);
    int *before = malloc((n + 1) * sizeof *before);
    int *after = malloc((n + 1) * sizeof *after);
    int *stack = malloc((n + 1) * sizeof *stack);
    olla_pitem *fx = malloc((n + 1) * sizeof *fx);
    olla_pitem *sub = malloc((n + 1) * sizeof *sub);
    int64_t *fx_off = malloc((n + 1) * sizeof *fx_off);
    int64_t *sub_off = malloc((n + 1) * sizeof *sub_off);
    int r = 0;
    if (!keys || !before || !after || !stack || !fx || !sub || !fx_off || !sub_off) {
        r = -2;
        goto done;
    }
    int64_t p = peak_time(it, n, keys);
    size_t nl = 0, nr = 0, ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (it[i].upper <= p)
            before[nl++] = (int)i;
        else if (it[i].lower > p)
            after[nr++] = (int)i;
        else
            stack[ns++] = (int)i;
    }
    int64_t peak = 0;
    for (size_t e = 0; e < ns; e++)
        peak += it[stack[e]].size;
    if (peak > capacity)
        goto done; /* more live at p than the capacity */
    if (ns * OLLA_SPLIT_MIN_SHARE < n)
        goto done; /* few long-lived buffers: not a nested trace */
    /* attempts: the later side chooses the stack, the stack by end time,
     * the earlier side chooses, by start time, by length */
    static const int attempts[] = {-2, STACK_END, -1, STACK_START, STACK_LENGTH};
    const int na = (int)(sizeof attempts / sizeof attempts[0]);
    for (int a = 0; a < na && r == 0; a++) {
        double now = olla_place_now();
        if (deadline > 0 && now >= deadline)
            break;
        /* the first attempt gets half the time, the others equal shares */
        double until = deadline > 0 ? now + (deadline - now) / (a == 0 ? 2 : na - a) : 0;
        int kind = attempts[a], r1, r2;
        if (kind < 0) {
            int later = kind == -2;
            r1 = free_side(it, stack, ns, later ? after : before, later ? nr : nl, p, later,
                           capacity, until, fx, fx_off, sub, sub_off, off);
            r2 = r1 == 1 ? side(it, later ? before : after, later ? nl : nr, fx, fx_off, ns,
                                capacity, until, sub, sub_off, off)
                         : 0;
        } else {
            for (size_t e = 0; e < ns; e++) {
                const olla_pitem *b = &it[stack[e]];
                keys[e] = kind == STACK_START ? (olla_pkey){b->lower, -b->upper, stack[e]}
                          : kind == STACK_END ? (olla_pkey){-b->upper, b->lower, stack[e]}
                                              : (olla_pkey){b->lower - b->upper, b->lower,
                                                            stack[e]};
            }
            olla_place_sort_keys(keys, ns);
            int64_t base = 0;
            for (size_t e = 0; e < ns; e++) {
                int i = keys[e].idx;
                fx[e] = it[i];
                fx_off[e] = base;
                off[i] = base;
                base += it[i].size;
            }
            r1 = side(it, before, nl, fx, fx_off, ns, capacity, until, sub, sub_off, off);
            r2 = r1 == 1 ? side(it, after, nr, fx, fx_off, ns, capacity, until, sub, sub_off, off)
                         : 0;
        }
        if (verbosity)
            fprintf(stderr, "place: split at time %lld (%zu stacked, %zu before, %zu after), "
                    "attempt %d: %d, %d, %.3f s\n", (long long)p, ns, nl, nr, a, r1, r2,
                    olla_place_now() - now);
        if (r1 == -2 || r2 == -2)
            r = -2;
        else if (r1 == 1 && r2 == 1)
            r = 1;
    }
done:
    free(keys);
    free(before);
    free(after);
    free(stack);
    free(fx);
    free(sub);
    free(fx_off);
    free(sub_off);
    return r;
}
