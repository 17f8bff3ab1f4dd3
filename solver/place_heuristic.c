/* olla-onnx: the portfolio of greedy placements. Each one takes the
 * buffers in some order and puts each at the lowest (first fit) or tightest
 * (best fit) gap left by the already placed buffers live at the same time
 * (place_greedy.c, place_sweep.c). The orders are the published ones: by
 * size, largest first (TFLite's "greedy by size"), with two tie rules; by
 * size times lifetime; by lifetime; by start time (an online allocator's
 * order); and the paper's pyramid (PreAllocateAddresses: nested long-lived
 * buffers stacked from address 0) before the rest by size or lifetime; and
 * two of our own for compiler traces: size classes then start time, and
 * size times a small power of the lifetime.
 * No single one wins everywhere (bench/place_portfolio.sh measures each),
 * so all are run and the best is kept; the portfolio is never worse than
 * any of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* The paper's PreAllocateAddresses: repeatedly take the longest-lived buffer
 * nested inside the previous one and stack it on top. By length, longest
 * first, the next one taken is the first later in that order nested in the
 * last one taken, so one pass over the sorted buffers does it. */
static void pyramid(const olla_pitem *it, size_t n, olla_pkey *keys, int64_t *pinned)
{
    for (size_t i = 0; i < n; i++) {
        pinned[i] = -1;
        keys[i] = (olla_pkey){it[i].lower - it[i].upper, 0, (int)i};
    }
    olla_place_sort_keys(keys, n);
    int64_t lo = INT64_MIN, hi = INT64_MAX, base = 0;
    for (size_t e = 0; e < n; e++) {
        int i = keys[e].idx;
        if (it[i].lower < lo || it[i].upper > hi)
            continue;
        pinned[i] = base;
        base += it[i].size;
        lo = it[i].lower;
        hi = it[i].upper;
    }
}

enum { ORD_SIZE, ORD_SIZE_START, ORD_AREA, ORD_LIFE, ORD_CLASS_START, ORD_SIZE_LIFE };

typedef struct heuristic {
    const char *name;
    int order; /* -1: the sweeps by start time */
    int best_fit;
    int pyramid;
    int class_bits; /* ORD_CLASS_START: sizes in classes of 2^class_bits (factor);
                       ORD_SIZE_LIFE: the lifetime's exponent in hundredths */
} heuristic;

/* Cheapest and most often best first (bench/place_portfolio.sh): the
 * portfolio stops at the bound, and on large inputs after the first
 * OLLA_PLACE_ALWAYS_RUN when its cost estimate is spent (the size classes
 * with an estimate of their own). Best fit cannot
 * stop at the first gap that holds a buffer, so it costs more. */
static const heuristic portfolio[] = {
    {"start, first fit", -1, 0, 0, 0},
    {"start, best fit", -1, 1, 0, 0},
    {"size, first fit", ORD_SIZE, 0, 0, 0},
    /* size classes, largest first, each class by start time: buffers of
     * about the same size stacked in the order they appear, which leaves
     * the holes the next ones fill (compiler traces whose freeing order is
     * not the mirror of their creation, bench/place_compiler_traces.sh) */
    {"size class x4, then start, best fit", ORD_CLASS_START, 1, 0, 2},
    {"size class x8, then start, first fit", ORD_CLASS_START, 0, 0, 3},
    {"size class x4, then start, first fit", ORD_CLASS_START, 0, 0, 2},
    {"size class x2, then start, first fit", ORD_CLASS_START, 0, 0, 1},
    {"size class x16, then start, first fit", ORD_CLASS_START, 0, 0, 4},
    /* size times a small power of the lifetime: between greedy by size
     * and by area, the long-lived buffers of one size before the short
     * ones a little larger, which leaves the short ones' holes to their
     * like (compiler traces with large short gradients) */
    {"size x lifetime^0.2, first fit", ORD_SIZE_LIFE, 0, 0, 20},
    {"size x lifetime^0.3, first fit", ORD_SIZE_LIFE, 0, 0, 30},
    {"size (ties by start), first fit", ORD_SIZE_START, 0, 0, 0},
    {"size x lifetime, first fit", ORD_AREA, 0, 0, 0},
    {"lifetime, first fit", ORD_LIFE, 0, 0, 0},
    {"pyramid, then size, first fit", ORD_SIZE, 0, 1, 0},
    {"pyramid, then lifetime, first fit", ORD_LIFE, 0, 1, 0},
    {"size, best fit", ORD_SIZE, 1, 0, 0},
    {"size (ties by start), best fit", ORD_SIZE_START, 1, 0, 0},
    {"size x lifetime, best fit", ORD_AREA, 1, 0, 0},
    {"lifetime, best fit", ORD_LIFE, 1, 0, 0},
};
/* The two sweeps and greedy by size always run. */
#define OLLA_PLACE_ALWAYS_RUN 3
/* Cost estimate of the whole portfolio, in pairs of a buffer and a buffer
 * starting within its lifetime (the greedy engine's runs of addresses grow
 * with them; best fit reads the same runs as first fit, to their top): about
 * 4 s of one core. */
#define OLLA_PLACE_PORTFOLIO_PAIRS 400000000LL
/* The same for the size classes, with a cut of their own (so the others
 * run as they did without them). */
#define OLLA_PLACE_CLASS_PAIRS 600000000LL
/* The same for the orders by size times a power of the lifetime. */
#define OLLA_PLACE_WEIGHTED_PAIRS 400000000LL
/* The size classes' and the weighted orders' placements kept and shaken
 * after the portfolio. */
#define OLLA_PLACE_KEPT 7
/* Shakes of one kept placement at most (each while it helps), each
 * charged as this many passes (its two passes scan every buffer below the
 * old place: about five times a pass in an order by size), and the pairs
 * all the shakes may charge: about 4 s of one core. */
#define OLLA_PLACE_SHAKES 2
#define OLLA_PLACE_SHAKE_PASSES 10
#define OLLA_PLACE_SHAKE_PAIRS 1500000000LL
#define NHEUR ((int)(sizeof portfolio / sizeof portfolio[0]))
/* The promotion rounds after the portfolio (promoted()): at most this
 * many greedy passes, on parts of more buffers than this (place.c's
 * OLLA_PLACE_BIG_PART: smaller ones get every search, bigger ones one probe),
 * from the best heuristic's order, or greedy by size's when a sweep was
 * the best. */
#define OLLA_PLACE_PROMOTE_ROUNDS 4
#define OLLA_PLACE_PROMOTE_MIN_BUFFERS 10000
#define OLLA_PLACE_PROMOTE_FALLBACK 2

int olla_place_heuristic_count(void) { return NHEUR; }

const char *olla_place_heuristic_name(int k)
{
    return k >= 0 && k < NHEUR ? portfolio[k].name : "none";
}

/* floor(log2(size)) / bits: the size class of a buffer, classes growing
 * by a factor of 2^bits. */
static int64_t size_class(int64_t size, int bits)
{
    int64_t lg = 0;
    while (size >>= 1)
        lg++;
    return lg / bits;
}

/* The order of one heuristic; pinned buffers (if any) first. */
static void make_order(const olla_pitem *it, size_t n, const heuristic *h, const int64_t *pinned,
                       olla_pkey *keys, int *order)
{
    int kind = h->order;
    for (size_t i = 0; i < n; i++) {
        int64_t len = it[i].upper - it[i].lower;
        int64_t k1 = 0, k2 = 0;
        switch (kind) {
        case ORD_SIZE: k1 = -it[i].size; k2 = -len; break;
        case ORD_SIZE_START: k1 = -it[i].size; k2 = it[i].lower; break;
        case ORD_AREA: {
            double a = (double)len * (double)it[i].size;
            k1 = a > OLLA_PLACE_AREA_MAX ? INT64_MIN : -(int64_t)a;
            k2 = -it[i].size;
            break;
        }
        case ORD_CLASS_START: k1 = -size_class(it[i].size, h->class_bits); k2 = it[i].lower; break;
        case ORD_SIZE_LIFE: {
            double a = (double)it[i].size * pow((double)(len > 1 ? len : 1), h->class_bits / 100.0);
            k1 = a > OLLA_PLACE_AREA_MAX ? INT64_MIN : -(int64_t)a;
            k2 = -it[i].lower; /* alike: the later first */
            break;
        }
        default: k1 = -len; k2 = -it[i].size; break;
        }
        if (pinned && pinned[i] >= 0) /* before all others, in stacking order */
            k1 = INT64_MIN, k2 = pinned[i];
        keys[i] = (olla_pkey){k1, k2, (int)i};
    }
    olla_place_sort_keys(keys, n);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].idx;
}

int64_t olla_place_heuristic_one(const olla_pitem *it, size_t n, int k, int64_t *off)
{
    if (n == 0)
        return 0;
    const heuristic *h = &portfolio[k];
    if (h->order < 0)
        return h->best_fit ? olla_place_sweep_best_fit(it, n, off) : olla_place_sweep_first_fit(it, n, off);
    olla_pkey *keys = malloc(n * sizeof *keys);
    int *order = malloc(n * sizeof *order);
    int64_t *pinned = h->pyramid ? malloc(n * sizeof *pinned) : NULL;
    int64_t arena = -1;
    if (keys && order && (pinned || !h->pyramid)) {
        if (pinned)
            pyramid(it, n, keys, pinned);
        make_order(it, n, h, pinned, keys, order);
        arena = olla_place_greedy(it, n, order, pinned, h->best_fit, off);
    }
    free(keys);
    free(order);
    free(pinned);
    return arena;
}

/* Pairs (i, j) with j starting strictly within i's lifetime, plus n: the
 * part of a greedy pass that depends on the input's shape. -1 when out of
 * memory. */
static long long pass_cost(const olla_pitem *it, size_t n)
{
    int64_t *starts = malloc((n + 1) * sizeof *starts);
    if (!starts)
        return -1;
    for (size_t i = 0; i < n; i++)
        starts[i] = it[i].lower;
    olla_place_sort_i64(starts, n);
    long long pairs = (long long)n;
    for (size_t i = 0; i < n; i++) /* starts in (lower, upper) */
        pairs += (long long)(olla_place_count_below(starts, n, it[i].upper) -
                             olla_place_count_below(starts, n, it[i].lower + 1));
    free(starts);
    return pairs;
}

/* Work space of the shakes: keys and an order for n buffers, a second
 * placement, the cost of one greedy pass (pairs) and the pairs charged. */
typedef struct shake_space {
    olla_pkey *keys;
    int *order;
    int64_t *tmp;
    long long cost, spent;
} shake_space;

/* One first-fit pass over the buffers in order of key[i] = addr[i] (ties:
 * larger first) into out: the arena. Taken in order of address, every
 * buffer finds its old place still free (the ones before it that it meets
 * lay below it and have only moved down), so none moves up. */
static int64_t settle(const olla_pitem *it, size_t n, const int64_t *addr, shake_space *s, int64_t *out)
{
    for (size_t i = 0; i < n; i++)
        s->keys[i] = (olla_pkey){addr[i], -it[i].size, (int)i};
    olla_place_sort_keys(s->keys, n);
    for (size_t i = 0; i < n; i++)
        s->order[i] = s->keys[i].idx;
    return olla_place_greedy(it, n, s->order, NULL, 0, out);
}

/* One shake of the placement off (arena a): every buffer pushed up as far
 * as it goes (settled in the addresses seen from the top), then down again.
 * Neither pass moves a buffer the wrong way, so the arena never grows, and
 * the buffers that fell into the holes a greedy order left are moved out
 * of them. Returns the new arena (off updated), or -1 when out of memory. */
static int64_t shake(const olla_pitem *it, size_t n, int64_t *off, int64_t a, shake_space *s)
{
    for (size_t i = 0; i < n; i++)
        off[i] = a - off[i] - it[i].size; /* seen from the top */
    int64_t b = settle(it, n, off, s, s->tmp);
    if (b < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        s->tmp[i] = b - s->tmp[i] - it[i].size;
    return settle(it, n, s->tmp, s, off);
}

/* Shakes of the placement off (arena a) while they lower the arena, at
 * most OLLA_PLACE_SHAKES, each charged OLLA_PLACE_SHAKE_PASSES passes
 * (s->cost pairs each) to s->spent while it stays within
 * OLLA_PLACE_SHAKE_PAIRS, and while w's deadline (a safety net) is not
 * past: the arena reached, or -1 when out of memory. */
static int64_t shaken(const olla_pitem *it, size_t n, int64_t *off, int64_t a, shake_space *s, olla_pwork *w)
{
    long long pass = OLLA_PLACE_SHAKE_PASSES * s->cost;
    for (int r = 0; r < OLLA_PLACE_SHAKES && s->spent + pass <= OLLA_PLACE_SHAKE_PAIRS && !olla_pwork_late(w); r++) {
        s->spent += pass;
        int64_t b = shake(it, n, off, a, s);
        if (b < 0 || b >= a)
            return b < 0 ? -1 : a;
        a = b;
    }
    return a;
}

int64_t olla_place_shake(const olla_pitem *it, size_t n, int64_t *off, int64_t arena, int rounds)
{
    shake_space s = {malloc((n + 1) * sizeof *s.keys), malloc((n + 1) * sizeof *s.order),
                     malloc((n + 1) * sizeof *s.tmp), 0, 0};
    int64_t a = s.keys && s.order && s.tmp ? arena : -1;
    for (int r = 0; r < rounds && a >= 0; r++) {
        int64_t b = shake(it, n, off, a, &s);
        if (b < 0 || b >= a) {
            a = b < 0 ? -1 : b;
            break;
        }
        a = b;
    }
    free(s.keys);
    free(s.order);
    free(s.tmp);
    return a;
}

/* The portfolio's placements kept for the shakes (the size classes'),
 * and the heuristic whose placement is the best so far. */
typedef struct kept {
    int64_t *off[OLLA_PLACE_KEPT];
    int64_t arena[OLLA_PLACE_KEPT];
    int heur[OLLA_PLACE_KEPT];
    int n;
    int best;
} kept;

/* Every heuristic in turn (within the deterministic cuts on large inputs)
 * until one reaches lb: the best into off, the size classes' placements
 * into kp. Returns the best arena, or -1 when out of memory. */
static int64_t run_portfolio(const olla_pitem *it, size_t n, int64_t *off, int64_t lb, olla_pwork *w,
                             const olla_logger *log, kept *kp)
{
    /* spent: the others', the size classes', the weighted orders' */
    long long cost = pass_cost(it, n), spent[3] = {0, 0, 0};
    static const long long cut[3] = {OLLA_PLACE_PORTFOLIO_PAIRS, OLLA_PLACE_CLASS_PAIRS, OLLA_PLACE_WEIGHTED_PAIRS};
    int64_t *tmp = malloc(n * sizeof *tmp), best = tmp && cost >= 0 ? INT64_MAX : -1;
    for (int k = 0; k < NHEUR && best > lb; k++) {
        if (k > 0 && olla_pwork_late(w))
            break; /* the safety net: the first one always runs */
        long long c = portfolio[k].order < 0 ? 0 : cost;
        int group = portfolio[k].order == ORD_CLASS_START ? 1 : portfolio[k].order == ORD_SIZE_LIFE ? 2 : 0;
        if (k >= OLLA_PLACE_ALWAYS_RUN && spent[group] + c > cut[group])
            continue; /* a deterministic cut on large inputs */
        spent[group] += c;
        double t = olla_now();
        int64_t a = olla_place_heuristic_one(it, n, k, tmp);
        if (a < 0) {
            best = -1;
            break;
        }
        olla_log(log, OLLA_LOG_DETAIL, "place: heuristic %s: %lld (%.3f s)", portfolio[k].name, (long long)a,
                 olla_now() - t);
        if (a < best) {
            best = a;
            kp->best = k;
            memcpy(off, tmp, n * sizeof *off);
        }
        if (group > 0 && kp->n < OLLA_PLACE_KEPT) {
            memcpy(kp->off[kp->n], tmp, n * sizeof *tmp);
            kp->arena[kp->n] = a;
            kp->heur[kp->n++] = k;
        }
    }
    free(tmp);
    return best;
}

/* The promotion rounds: the best heuristic's order again, with the buffers
 * that ended above the bound (those of every round so far) taken first, in
 * that order; the greedy pass then finds them room before the buffers
 * that took it. At most OLLA_PLACE_PROMOTE_ROUNDS passes, on parts of more
 * than OLLA_PLACE_PROMOTE_MIN_BUFFERS buffers (the exact searches leave
 * those to the heuristics: place.c). Improves off in place:
 * the arena reached, or -1 when out of memory. s's arrays are scratch. */
static int64_t promoted(const olla_pitem *it, size_t n, int64_t *off, int64_t lb, int k, shake_space *s,
                        const olla_logger *log)
{
    int64_t best = olla_place_items_arena(it, off, n);
    heuristic h = portfolio[k];
    if (h.order < 0)
        h = portfolio[OLLA_PLACE_PROMOTE_FALLBACK];
    h.pyramid = 0;
    char *up = calloc(n, 1);
    int *order = malloc(n * sizeof *order);
    if (!up || !order) {
        free(up);
        free(order);
        return -1;
    }
    make_order(it, n, &h, NULL, s->keys, s->order);
    const int64_t *from = off; /* the placement whose buffers above lb join the promoted */
    for (int r = 0; r < OLLA_PLACE_PROMOTE_ROUNDS && best > lb; r++) {
        for (size_t i = 0; i < n; i++)
            up[i] |= from[i] + it[i].size > lb;
        size_t m = 0;
        for (size_t e = 0; e < n; e++)
            if (up[s->order[e]])
                order[m++] = s->order[e];
        for (size_t e = 0; e < n; e++)
            if (!up[s->order[e]])
                order[m++] = s->order[e];
        double t = olla_now();
        int64_t a = olla_place_greedy(it, n, order, NULL, h.best_fit, s->tmp);
        if (a < 0) {
            best = -1;
            break;
        }
        olla_log(log, OLLA_LOG_DETAIL, "place: heuristic %s, buffers above the bound first: %lld (%.3f s)", h.name,
                 (long long)a, olla_now() - t);
        if (a < best) {
            best = a;
            memcpy(off, s->tmp, n * sizeof *off);
        }
        from = s->tmp;
    }
    free(up);
    free(order);
    return best;
}

int64_t olla_place_heuristic(const olla_pitem *it, size_t n, int64_t *off, int64_t lb,
                             olla_pwork *w, const olla_logger *log)
{
    if (n == 0)
        return 0;
    kept kp = {{0}, {0}, {0}, 0, 0};
    shake_space s = {malloc(n * sizeof *s.keys), malloc(n * sizeof *s.order), malloc(n * sizeof *s.tmp),
                     pass_cost(it, n), 0};
    int ok = s.keys && s.order && s.tmp;
    for (int c = 0; c < OLLA_PLACE_KEPT; c++)
        ok &= (kp.off[c] = malloc(n * sizeof *kp.off[c])) != NULL;
    int64_t best = ok ? run_portfolio(it, n, off, lb, w, log, &kp) : -1;
    /* then the kept placements shaken, in the portfolio's order */
    for (int c = 0; c < kp.n && best > lb && s.cost >= 0; c++) {
        double t = olla_now();
        int64_t a = shaken(it, n, kp.off[c], kp.arena[c], &s, w);
        if (a < kp.arena[c])
            olla_log(log, OLLA_LOG_DETAIL, "place: heuristic %s, shaken: %lld (%.3f s)",
                     portfolio[kp.heur[c]].name, (long long)a, olla_now() - t);
        if (a < 0) {
            best = -1;
        } else if (a < best) {
            best = a;
            kp.best = kp.heur[c];
            memcpy(off, kp.off[c], n * sizeof *off);
        }
    }
    if (best > lb && n > OLLA_PLACE_PROMOTE_MIN_BUFFERS && ok)
        best = promoted(it, n, off, lb, kp.best, &s, log);
    for (int c = 0; c < OLLA_PLACE_KEPT; c++)
        free(kp.off[c]);
    free(s.keys);
    free(s.order);
    free(s.tmp);
    return best;
}
