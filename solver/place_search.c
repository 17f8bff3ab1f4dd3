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
 * identical buffers are placed in a fixed order only. The search stops at
 * the first placement found. Restarts with several candidate orders and
 * growing node budgets avoid the heavy tail of a single order; an
 * exhausted search is a proof whatever the order. */
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"

enum { ORDER_LIFE, ORDER_SIZE, ORDER_AREA, ORDER_COUNT };

typedef struct trail_entry {
    int buf;
    int64_t old;
} trail_entry;

typedef struct sctx {
    const olla_pitem *it;
    size_t n;
    int64_t cap;
    double deadline;
    long long node_limit;
    size_t nsec;
    int *sb, *se;        /* buffer i spans sections [sb[i], se[i]) */
    int64_t *sec_start;  /* nsec + 1: buffers live in each section, in candidate order */
    int *sec_buf;
    int64_t *floor_, *rem, *h;
    char *placed;
    int *twin;           /* previous identical buffer or -1 */
    int64_t *off;
    long long nodes;
    int *cand;
    size_t cand_top, cand_cap;
    trail_entry *trail;
    size_t trail_top, trail_cap;
    size_t depth, max_depth;
} sctx;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Raises the height of every remaining buffer live in section j to at least v;
 * widens [*lo, *hi) to the sections those buffers span. */
static int raise_section(sctx *c, size_t j, int64_t v, int *lo, int *hi)
{
    for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
        int b = c->sec_buf[p];
        if (c->placed[b] || c->h[b] >= v)
            continue;
        if (c->trail_top == c->trail_cap) {
            size_t nc = c->trail_cap * 2 + 64;
            trail_entry *g = realloc(c->trail, nc * sizeof *g);
            if (!g)
                return -1;
            c->trail = g;
            c->trail_cap = nc;
        }
        c->trail[c->trail_top++] = (trail_entry){b, c->h[b]};
        c->h[b] = v;
        if (c->sb[b] < *lo)
            *lo = c->sb[b];
        if (c->se[b] > *hi)
            *hi = c->se[b];
    }
    return 0;
}

static void undo(sctx *c, size_t mark)
{
    while (c->trail_top > mark) {
        trail_entry e = c->trail[--c->trail_top];
        c->h[e.buf] = e.old;
    }
}

/* Every section in [lo, hi): the remaining bytes fit above the lowest height. */
static int range_ok(const sctx *c, int lo, int hi)
{
    for (int j = lo; j < hi; j++) {
        if (c->rem[j] == 0)
            continue;
        int64_t room = c->cap - c->rem[j];
        if (c->floor_[j] > room)
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
static int64_t next_floor(const sctx *c, size_t s, int64_t f)
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

static int dfs(sctx *c)
{
    c->nodes++;
    /* a node costs at least a pass over the sections, so the clock is cheap
     * by comparison: on large instances a few nodes already take long */
    if (c->deadline > 0 && olla_place_now() > c->deadline)
        return -1;
    if (c->nodes > c->node_limit || c->depth >= c->max_depth)
        return -1;
    size_t s = c->nsec;
    int64_t f = INT64_MAX, most = -1;
    for (size_t j = 0; j < c->nsec; j++)
        if (c->rem[j] > 0 && (c->floor_[j] < f || (c->floor_[j] == f && c->rem[j] > most))) {
            f = c->floor_[j];
            s = j;
            most = c->rem[j];
        }
    if (s == c->nsec)
        return 1;
    {
        /* among the sections at floor f, the one with the fewest options */
        int best_count = -1;
        for (size_t j = 0; j < c->nsec; j++) {
            if (c->rem[j] == 0 || c->floor_[j] != f)
                continue;
            /* leaving a gap is possible while one unit fits: a gap can be as
             * small as that when a buffer rests on one live elsewhere */
            int count = f + 1 + c->rem[j] <= c->cap;
            for (int64_t p = c->sec_start[j]; p < c->sec_start[j + 1]; p++) {
                int b = c->sec_buf[p];
                if (c->placed[b] || c->h[b] > f || f + c->it[b].size > c->cap ||
                    (c->twin[b] >= 0 && !c->placed[c->twin[b]]))
                    continue;
                count++;
            }
            if (count == 0)
                return 0;
            if (best_count < 0 || count < best_count ||
                (count == best_count && c->rem[j] > c->rem[s])) {
                best_count = count;
                s = j;
            }
        }
    }
    size_t base = c->cand_top, nc = 0;
    size_t need = base + (size_t)(c->sec_start[s + 1] - c->sec_start[s]);
    if (need > c->cand_cap) {
        size_t cap = need * 2;
        int *grown = realloc(c->cand, cap * sizeof *grown);
        if (!grown)
            return -2;
        c->cand = grown;
        c->cand_cap = cap;
    }
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
            c->floor_[j] = top;
            c->rem[j] -= c->it[b].size;
        }
        for (int j = c->sb[b]; j < c->se[b] && r == 0; j++)
            if (raise_section(c, (size_t)j, top, &lo, &hi) < 0)
                r = -2;
        if (r == 0 && range_ok(c, lo, hi))
            r = dfs(c);
        undo(c, mark);
        c->placed[b] = 0;
        for (int j = c->sb[b]; j < c->se[b]; j++) {
            c->floor_[j] = f;
            c->rem[j] += c->it[b].size;
        }
    }
    c->cand_top -= nc;
    if (r == 0)
        nf = next_floor(c, s, f);
    if (r == 0 && nf <= c->cap - c->rem[s]) {
        size_t mark = c->trail_top;
        int lo = (int)s, hi = (int)s + 1;
        c->floor_[s] = nf;
        if (raise_section(c, s, nf, &lo, &hi) < 0)
            r = -2;
        else if (range_ok(c, lo, hi))
            r = dfs(c);
        undo(c, mark);
        c->floor_[s] = f;
    }
    c->depth--;
    return r;
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
        return -2;
    }
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        pts[np++] = it[i].lower;
        pts[np++] = it[i].upper;
    }
    qsort(pts, np, sizeof *pts, cmp_i64);
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
    free(pts);
    if (total > 50000000 || (c->deadline > 0 && olla_place_now() > c->deadline)) {
        free(keys);
        return -1;
    }
    c->sec_start = calloc(c->nsec + 1, sizeof *c->sec_start);
    c->sec_buf = malloc(((size_t)total + 1) * sizeof *c->sec_buf);
    c->floor_ = calloc(c->nsec + 1, sizeof *c->floor_);
    c->rem = calloc(c->nsec + 1, sizeof *c->rem);
    c->cand_cap = n + 16;
    c->cand = malloc(c->cand_cap * sizeof *c->cand);
    if (!c->sec_start || !c->sec_buf || !c->floor_ || !c->rem || !c->cand) {
        free(keys);
        return -2;
    }
    /* identical buffers: sorted next to each other by (lower, upper, size) */
    for (size_t i = 0; i < n; i++)
        keys[i] = (olla_pkey){it[i].lower, it[i].upper, (int)i};
    olla_place_sort_keys(keys, n);
    for (size_t k = 0; k < n; k++) {
        if ((k & 1023) == 0 && c->deadline > 0 && olla_place_now() > c->deadline) {
            free(keys);
            return -1;
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

/* Fills the per-section lists in the given candidate order and resets the state. */
static int reset(sctx *c, int order)
{
    const olla_pitem *it = c->it;
    size_t n = c->n;
    olla_pkey *keys = malloc((n + 1) * sizeof *keys);
    int64_t *fill = malloc((c->nsec + 1) * sizeof *fill);
    if (!keys || !fill) {
        free(keys);
        free(fill);
        return -2;
    }
    uint64_t seed = (uint64_t)order * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        double area = (double)len * (double)it[i].size;
        switch (order) {
        case ORDER_LIFE: keys[i] = (olla_pkey){-len, -it[i].size, (int)i}; break;
        case ORDER_SIZE: keys[i] = (olla_pkey){-it[i].size, -len, (int)i}; break;
        case ORDER_AREA:
            keys[i] = (olla_pkey){area > 9e18 ? INT64_MIN : -(int64_t)area, -it[i].size, (int)i};
            break;
        default: /* a pseudo-random order, fixed by the order number */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            keys[i] = (olla_pkey){(int64_t)(seed >> 33), 0, (int)i};
            break;
        }
    }
    olla_place_sort_keys(keys, n);
    memcpy(fill, c->sec_start, (c->nsec + 1) * sizeof *fill);
    memset(c->rem, 0, c->nsec * sizeof *c->rem);
    memset(c->floor_, 0, c->nsec * sizeof *c->floor_);
    for (size_t k = 0; k < n; k++) {
        if ((k & 1023) == 0 && c->deadline > 0 && olla_place_now() > c->deadline) {
            free(keys);
            free(fill);
            return -1; /* out of time: the search gives up */
        }
        int i = keys[k].idx;
        for (int j = c->sb[i]; j < c->se[i]; j++) {
            c->sec_buf[fill[j]++] = i;
            c->rem[j] += it[i].size;
        }
        c->placed[i] = 0;
        c->h[i] = 0;
    }
    c->nodes = 0;
    c->cand_top = 0;
    c->trail_top = 0;
    c->depth = 0;
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
    free(c->rem);
    free(c->cand);
    free(c->trail);
}

int olla_place_search(const olla_pitem *it, size_t n, int64_t capacity, double deadline,
                      int64_t *off, long long *nodes)
{
    sctx c;
    memset(&c, 0, sizeof c);
    c.it = it;
    c.n = n;
    c.cap = capacity;
    c.deadline = deadline;
    c.off = off;
    c.max_depth = 20000;
    if (nodes)
        *nodes = 0;
    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (it[i].size > capacity)
            return 0;
    int r = build(&c);
    long long total = 0;
    if (r == 0) {
        if ((r = reset(&c, 0)) == 0)
            for (size_t j = 0; j < c.nsec; j++)
                if (c.rem[j] > capacity)
                    r = 0, j = c.nsec, c.node_limit = -1;
    }
    if (r == 0 && c.node_limit == 0) {
        /* restarts: each order in turn, node budget doubling every round */
        long long budget = 4096;
        for (int round = 0;; round++) {
            int done = 0;
            for (int k = 0; k <= ORDER_COUNT && !done; k++) {
                int order = k < ORDER_COUNT ? k : ORDER_COUNT + round;
                if ((r = reset(&c, order)) != 0) {
                    done = 1;
                    break;
                }
                c.node_limit = budget;
                r = dfs(&c);
                total += c.nodes;
                if (r != -1 || (c.deadline > 0 && olla_place_now() > c.deadline) ||
                    c.depth >= c.max_depth)
                    done = 1;
            }
            if (done || r == -2)
                break;
            if (budget > (1LL << 40))
                break;
            budget *= 2;
        }
    }
    if (nodes)
        *nodes = total;
    sctx_free(&c);
    return r;
}
