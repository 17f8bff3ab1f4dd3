/* olla-onnx: placement checks independent of the solver, and the max-live
 * lower bound. */
#include <stdlib.h>
#include <string.h>

#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* Sizes and their aligned total stay below this: room for the searches'
 * sums of offsets and sizes above it. */
#define OLLA_PLACE_MAX_TOTAL (INT64_MAX / 4)

static int cmp_pkey(const void *a, const void *b)
{
    const olla_pkey *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void olla_place_sort_keys(olla_pkey *keys, size_t n)
{
    if (n > 1)
        qsort(keys, n, sizeof *keys, cmp_pkey);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void olla_place_sort_i64(int64_t *a, size_t n)
{
    if (n > 1)
        qsort(a, n, sizeof *a, cmp_i64);
}

size_t olla_place_count_below(const int64_t *a, size_t n, int64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (a[m] < v)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

olla_pwork olla_pwork_part(const olla_pwork *w, long long units)
{
    long long left = olla_pwork_left(w);
    if (units > left)
        units = left;
    if (units < 1)
        units = 1;
    return (olla_pwork){units, 0, w->deadline, 0};
}

void olla_pwork_join(olla_pwork *w, const olla_pwork *part)
{
    w->used += part->used;
    w->stopped |= part->stopped;
}

long long olla_pwork_left(const olla_pwork *w)
{
    return w->limit > w->used ? w->limit - w->used : 0;
}

int olla_pwork_late(olla_pwork *w)
{
    if (w->deadline > 0 && olla_deadline_passed(w->deadline)) {
        w->stopped |= 1 << OLLA_PLACE_STOPPED_TIME;
        return 1;
    }
    return 0;
}

const char *olla_place_stop_name(olla_place_stop s)
{
    switch (s) {
    case OLLA_PLACE_STOPPED_NONE: return "none";
    case OLLA_PLACE_STOPPED_BUDGET: return "budget";
    case OLLA_PLACE_STOPPED_TIME: return "time";
    }
    return "unknown";
}

const char *olla_place_status_name(olla_place_status s)
{
    switch (s) {
    case OLLA_PLACE_HEURISTIC: return "heuristic";
    case OLLA_PLACE_FEASIBLE: return "feasible";
    case OLLA_PLACE_OPTIMAL: return "optimal";
    case OLLA_PLACE_NO_FIT: return "no-fit";
    case OLLA_PLACE_NOT_FOUND: return "not-found";
    }
    return "unknown";
}

olla_status olla_place_check_input(const olla_buffer *bufs, size_t n, int64_t alignment,
                                   olla_error *err)
{
    if (alignment < 1)
        return olla_error_set(err, OLLA_ERR_USAGE,
                              "placement: alignment %lld is not positive; use 1 or more",
                              (long long)alignment);
    if (n > 0 && !bufs)
        return olla_error_set(err, OLLA_ERR_USAGE, "placement: no buffer array given");
    if (n > (size_t)INT32_MAX)
        return olla_error_set(err, OLLA_ERR_INPUT, "placement: %zu buffers is too many",
                              n);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const olla_buffer *b = &bufs[i];
        if (b->lower < 0 || b->upper < 0)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: negative lifetime [%lld, %lld); times must be >= 0",
                                  i, (long long)b->lower, (long long)b->upper);
        if (b->upper < b->lower)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: inverted lifetime [%lld, %lld); upper must be >= lower",
                                  i, (long long)b->lower, (long long)b->upper);
        if (b->size < 0)
            return olla_error_set(err, OLLA_ERR_INPUT, "buffer %zu: negative size %lld", i,
                                  (long long)b->size);
        if (b->size > OLLA_PLACE_MAX_TOTAL - alignment)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: size %lld is too large to place", i,
                                  (long long)b->size);
        int64_t a = (b->size + alignment - 1) / alignment * alignment;
        if (total > OLLA_PLACE_MAX_TOTAL - a)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: the total size of all buffers overflows 64 bits",
                                  i);
        total += a;
    }
    return OLLA_OK;
}

/* Sorted (time, index) events: removals before insertions at equal times. */
static olla_pkey *make_events(const olla_buffer *bufs, size_t n, size_t *m)
{
    olla_pkey *ev = malloc((2 * n + 1) * sizeof *ev);
    if (!ev)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (bufs[i].upper <= bufs[i].lower || bufs[i].size <= 0)
            continue;
        ev[k++] = (olla_pkey){bufs[i].upper, 0, (int)i};
        ev[k++] = (olla_pkey){bufs[i].lower, 1, (int)i};
    }
    olla_place_sort_keys(ev, k);
    *m = k;
    return ev;
}

int64_t olla_place_max_live(const olla_buffer *bufs, size_t n, int64_t alignment)
{
    size_t m = 0;
    olla_pkey *ev = make_events(bufs, n, &m);
    if (!ev)
        return -1;
    int64_t cur = 0, best = 0;
    for (size_t e = 0; e < m; e++) {
        const olla_buffer *b = &bufs[ev[e].idx];
        int64_t a = (b->size + alignment - 1) / alignment * alignment;
        cur += ev[e].k2 ? a : -a;
        if (cur > best)
            best = cur;
    }
    free(ev);
    return best;
}

size_t olla_place_items_loads(const olla_pitem *it, size_t n, olla_pkey *keys, int64_t *max)
{
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        keys[2 * i] = (olla_pkey){it[i].lower, 1, (int)i};
        keys[2 * i + 1] = (olla_pkey){it[i].upper, 0, (int)i}; /* ends first */
    }
    olla_place_sort_keys(keys, 2 * n);
    int64_t cur = 0;
    *max = 0;
    for (size_t e = 0; e < 2 * n; e++) {
        cur += keys[e].k2 ? it[keys[e].idx].size : -it[keys[e].idx].size;
        if (e + 1 == 2 * n || keys[e + 1].k1 != keys[e].k1) {
            keys[nt++] = (olla_pkey){keys[e].k1, cur, 0}; /* nt <= e: not yet read again */
            *max = cur > *max ? cur : *max;
        }
    }
    return nt;
}

int64_t olla_place_items_max_live(const olla_pitem *it, size_t n)
{
    olla_pkey *ev = malloc((2 * n + 1) * sizeof *ev);
    if (!ev)
        return -1;
    int64_t best;
    olla_place_items_loads(it, n, ev, &best);
    free(ev);
    return best;
}

int64_t olla_place_items_arena(const olla_pitem *it, const int64_t *off, size_t n)
{
    int64_t a = 0;
    for (size_t i = 0; i < n; i++)
        if (off[i] + it[i].size > a)
            a = off[i] + it[i].size;
    return a;
}

/* Position of (offset, idx) in the offset-sorted active list. */
static size_t active_pos(const int *act, size_t k, const olla_buffer *bufs, int idx)
{
    size_t lo = 0, hi = k;
    int64_t o = bufs[idx].offset;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t om = bufs[act[mid]].offset;
        if (om < o || (om == o && act[mid] < idx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

olla_status olla_place_validate(const olla_buffer *bufs, size_t n, int64_t arena_bytes,
                                int64_t alignment, olla_error *err)
{
    olla_status st = olla_place_check_input(bufs, n, alignment, err);
    if (st != OLLA_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        const olla_buffer *b = &bufs[i];
        int64_t a = (b->size + alignment - 1) / alignment * alignment;
        if (b->offset < 0)
            return olla_error_set(err, OLLA_ERR_INPUT, "buffer %zu: negative offset %lld", i,
                                  (long long)b->offset);
        if (b->offset % alignment != 0)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: offset %lld is not a multiple of the alignment %lld",
                                  i, (long long)b->offset, (long long)alignment);
        if (b->upper > b->lower && b->size > 0 && b->offset > arena_bytes - a) /* never live: needs no room */
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "buffer %zu: [%lld, %lld) lies beyond the arena of %lld bytes",
                                  i, (long long)b->offset, (long long)(b->offset + a),
                                  (long long)arena_bytes);
    }
    size_t m = 0;
    olla_pkey *ev = make_events(bufs, n, &m);
    int *act = malloc((n + 1) * sizeof *act);
    if (!ev || !act) {
        free(ev);
        free(act);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "placement check: out of memory");
    }
    size_t k = 0;
    for (size_t e = 0; e < m && st == OLLA_OK; e++) {
        int idx = ev[e].idx;
        size_t p = active_pos(act, k, bufs, idx);
        if (ev[e].k2 == 0) { /* removal */
            if (p < k && act[p] == idx) {
                memmove(act + p, act + p + 1, (k - p - 1) * sizeof *act);
                k--;
            }
            continue;
        }
        const olla_buffer *b = &bufs[idx];
        int64_t a = (b->size + alignment - 1) / alignment * alignment;
        int other = -1;
        if (p > 0) {
            const olla_buffer *q = &bufs[act[p - 1]];
            int64_t qa = (q->size + alignment - 1) / alignment * alignment;
            if (q->offset + qa > b->offset)
                other = act[p - 1];
        }
        if (other < 0 && p < k && bufs[act[p]].offset < b->offset + a)
            other = act[p];
        if (other >= 0) {
            const olla_buffer *q = &bufs[other];
            int64_t qa = (q->size + alignment - 1) / alignment * alignment;
            st = olla_error_set(err, OLLA_ERR_INPUT,
                                "buffers %d and %d overlap: both live at time %lld, bytes [%lld, %lld) and [%lld, %lld)",
                                other < idx ? other : idx, other < idx ? idx : other,
                                (long long)ev[e].k1,
                                (long long)(other < idx ? q->offset : b->offset),
                                (long long)(other < idx ? q->offset + qa : b->offset + a),
                                (long long)(other < idx ? b->offset : q->offset),
                                (long long)(other < idx ? b->offset + a : q->offset + qa));
            break;
        }
        memmove(act + p + 1, act + p, (k - p) * sizeof *act);
        act[p] = idx;
        k++;
    }
    free(ev);
    free(act);
    return st;
}
