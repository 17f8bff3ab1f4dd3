/* The exact search with fixed buffers (against brute force) and the split at
 * the busiest time on training-like nested instances (must reach max live). */
#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"
#include "util/olla_clock.h"

/* A budget no test instance exhausts, and no deadline. */
#define UNLIMITED (&(olla_pwork){1LL << 50, 0, 0, 0})

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static int64_t rnd(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return olla_test_rng_range(&rng_state, lo, hi);
}

static void check_clear(const olla_pitem *b, int n, const int64_t *off, int64_t arena,
                        const olla_pitem *fx, const int64_t *fx_off, int nf)
{
    for (int i = 0; i < n; i++) {
        OLLA_CHECK(off[i] >= 0 && off[i] + b[i].size <= arena);
        for (int j = 0; j < i; j++)
            OLLA_CHECK(!olla_test_collide(&b[i], off[i], &b[j], off[j]));
        for (int j = 0; j < nf; j++)
            OLLA_CHECK(!olla_test_collide(&b[i], off[i], &fx[j], fx_off[j]));
    }
}

/* Random fixed buffers (stacked without overlap) leave holes; the search
 * must use them exactly as brute force does: find a placement at the least
 * arena brute force needs, and prove there is none one unit below. */
OLLA_TEST(test_search_fixed_vs_brute)
{
    int with_holes = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = (int)rnd(1, 6), nf = (int)rnd(1, 3);
        olla_pitem it[8], fx[4];
        int64_t fx_off[4], off[8], tmp[8];
        int64_t top = 0;
        for (int i = 0; i < nf; i++) {
            int64_t l = rnd(0, 6);
            fx[i] = (olla_pitem){l, rnd(l + 1, 8), rnd(1, 4)};
            /* on top of the fixed ones it meets, sometimes leaving a gap */
            int64_t o = rnd(0, 2);
            for (int j = 0; j < i; j++)
                if (fx[j].lower < fx[i].upper && fx[i].lower < fx[j].upper &&
                    fx_off[j] + fx[j].size > o)
                    o = fx_off[j] + fx[j].size + rnd(0, 2);
            fx_off[i] = o;
            if (o + fx[i].size > top)
                top = o + fx[i].size;
            with_holes += o > 0;
        }
        for (int i = 0; i < n; i++) {
            int64_t l = rnd(0, 7);
            it[i] = (olla_pitem){l, rnd(l + 1, 8), rnd(1, 4)};
        }
        const olla_test_fixed fixed = {fx, fx_off, nf};
        int64_t opt = top;
        for (int i = 0; i < n; i++)
            if (it[i].size > opt)
                opt = it[i].size;
        while (!olla_test_fits_brute(it, n, tmp, 0, opt, &fixed))
            opt++;
        int before = olla_test_failures;
        const olla_pfixed fixed_set = {fx, fx_off, (size_t)nf};
        int r = olla_place_search_fixed(it, (size_t)n, &fixed_set, opt, UNLIMITED, off);
        OLLA_CHECK_EQ_I64(r, 1);
        if (r == 1)
            check_clear(it, n, off, opt, fx, fx_off, nf);
        if (opt > top) /* below the fixed top the question is moot */
            OLLA_CHECK_EQ_I64(olla_place_search_fixed(it, (size_t)n, &fixed_set, opt - 1, UNLIMITED, off), 0);
        if (olla_test_failures != before) {
            fprintf(stderr, "trial %d, optimum %lld\n", trial, (long long)opt);
            for (int i = 0; i < nf; i++)
                fprintf(stderr, "  fixed [%lld,%lld) size %lld at %lld\n", (long long)fx[i].lower,
                        (long long)fx[i].upper, (long long)fx[i].size, (long long)fx_off[i]);
            for (int i = 0; i < n; i++)
                fprintf(stderr, "  [%lld,%lld) size %lld\n", (long long)it[i].lower,
                        (long long)it[i].upper, (long long)it[i].size);
            return;
        }
    }
    OLLA_CHECK(with_holes > 0);
}

/* A training-like trace: L forward layers each save an activation until the
 * mirror step of the backward pass (with jitter, so nesting is not exact),
 * with temporaries, statistics kept to the end, and gradients. */
static size_t training_trace(olla_pitem *it, int layers)
{
    size_t n = 0;
    int64_t T = 6 * (int64_t)layers + 6;
    for (int i = 0; i < layers; i++) {
        int64_t f = 3 * (int64_t)i, size = 16 * rnd(1, 8);
        it[n++] = (olla_pitem){f, T - f + rnd(-2, 2), size};
        it[n++] = (olla_pitem){f, f + rnd(2, 5), size / 2 + rnd(0, 8)};
        it[n++] = (olla_pitem){f + 1, f + 3, rnd(1, 40)};
        if (i % 4 == 0)
            it[n++] = (olla_pitem){f + 2, T + 1, rnd(1, 3)};
        int64_t b = T - f;
        it[n++] = (olla_pitem){b - 3, b + rnd(1, 4), size + rnd(0, 16)};
        it[n++] = (olla_pitem){b - 2, b, rnd(1, 60)};
    }
    return n;
}

OLLA_TEST(test_split_training_traces)
{
    enum { LAYERS = 30 };
    static olla_pitem it[6 * LAYERS];
    static int64_t off[6 * LAYERS];
    for (int trial = 0; trial < 8; trial++) {
        size_t n = training_trace(it, LAYERS);
        int64_t live = olla_place_items_max_live(it, n);
        int r = olla_place_split(it, n, live, &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0}, off, 0);
        OLLA_CHECK_EQ_I64(r, 1);
        if (r != 1)
            continue;
        OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, n), live);
        olla_test_check_valid(it, n, off, live);
        /* and below max live it cannot succeed */
        OLLA_CHECK_EQ_I64(olla_place_split(it, n, live - 1, &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0}, off, 0), 0);
    }
}

/* A trace whose lifetimes do not nest: saved activations are freed up to
 * `jitter` steps away from the mirror step, and temporaries of both passes
 * overlap several neighbouring layers. */
static size_t crossing_trace(olla_pitem *it, int layers, int64_t jitter)
{
    size_t n = 0;
    int64_t T = 8 * (int64_t)layers + 8;
    for (int i = 0; i < layers; i++) {
        int64_t f = 4 * (int64_t)i, size = 16 * rnd(1, 8);
        int64_t u = T - f + rnd(-jitter, jitter);
        it[n++] = (olla_pitem){f, u > f ? u : f + 1, size};
        it[n++] = (olla_pitem){f, f + rnd(2, 9), size / 2 + rnd(0, 8)};
        it[n++] = (olla_pitem){f + 1, f + rnd(3, 12), rnd(1, 40)};
        it[n++] = (olla_pitem){f + 2, f + 3, rnd(1, 40)};
        int64_t b = T - f;
        it[n++] = (olla_pitem){b - 3, b + rnd(1, 12), size + rnd(0, 16)};
        it[n++] = (olla_pitem){b - 2, b + rnd(0, 6), rnd(1, 60)};
        it[n++] = (olla_pitem){b - 1, b + 1, rnd(1, 30)};
    }
    return n;
}

/* The split on crossing traces: every placement it returns is valid and
 * reaches max live, and it never succeeds below max live. */
OLLA_TEST(test_split_crossing_traces)
{
    enum { LAYERS = 60 };
    static olla_pitem it[7 * LAYERS];
    static int64_t off[7 * LAYERS];
    int found = 0;
    for (int trial = 0; trial < 6; trial++) {
        size_t n = crossing_trace(it, LAYERS, 4 + 4 * trial);
        int64_t live = olla_place_items_max_live(it, n);
        int r = olla_place_split(it, n, live, &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0}, off, 0);
        OLLA_CHECK(r == 1 || r == 0);
        if (r != 1)
            continue;
        found++;
        OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, n), live);
        olla_test_check_valid(it, n, off, live);
        OLLA_CHECK_EQ_I64(olla_place_split(it, n, live - 1, &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0}, off, 0), 0);
    }
    OLLA_CHECK(found > 0);
}

/* The split backwards in time (place_reverse.c) on training and crossing
 * traces: every placement it returns is one of the buffers as given (the
 * validator sees them in their own order and times), reaches max live, and
 * it never succeeds below max live. */
OLLA_TEST(test_split_backwards)
{
    enum { LAYERS = 60 };
    static olla_pitem it[7 * LAYERS];
    static int64_t off[7 * LAYERS];
    int found = 0;
    for (int trial = 0; trial < 8; trial++) {
        size_t n = trial < 4 ? training_trace(it, 30) : crossing_trace(it, LAYERS, 4 * trial - 12);
        int64_t live = olla_place_items_max_live(it, n);
        for (size_t i = 0; i < n; i++)
            off[i] = -1;
        int r = olla_place_split_reversed(it, n, live, &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0},
                                          off, 0);
        OLLA_CHECK(r == 1 || r == 0);
        if (r != 1)
            continue;
        found++;
        OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, n), live);
        olla_test_check_valid(it, n, off, live);
        OLLA_CHECK_EQ_I64(olla_place_split_reversed(it, n, live - 1,
                                                    &(olla_pwork){1LL << 50, 0, olla_now() + 30, 0},
                                                    off, 0),
                          0);
    }
    OLLA_CHECK(found >= 4);
}

/* The split's attempts share the budget in rounds: on the lifetimes of the
 * bundled cnn_train model in ONNX Runtime's order (sizes in units of 4
 * bytes), the stack by start time's earlier side and the later side's
 * choice give up whatever their share while the earlier side's choice fits
 * at once; with a budget of 5e9 units the split reaches max live for a
 * small part of it (all of a fifth before the rounds). */
OLLA_TEST(test_split_cheap_attempt_not_kept_waiting)
{
    static const olla_pitem it[] = {
        {0, 43, 32768}, {1, 49, 8192}, {3, 37, 32768}, {4, 6, 32768}, {5, 31, 8192}, {6, 28, 16384}, {7, 9, 16384},
        {8, 42, 4096}, {10, 13, 80}, {11, 13, 8}, {12, 17, 80}, {13, 22, 80}, {14, 22, 8}, {15, 17, 8}, {16, 18, 80},
        {17, 19, 80}, {18, 20, 8}, {19, 21, 1}, {20, 70, 1}, {21, 23, 80}, {22, 24, 80}, {23, 42, 80},
        {24, 27, 4096}, {26, 29, 16384}, {27, 30, 4096}, {28, 30, 16384}, {29, 36, 16384}, {30, 33, 8192},
        {31, 33, 16384}, {32, 34, 4608}, {33, 63, 4608}, {34, 65, 32}, {35, 38, 8192}, {36, 40, 8192},
        {37, 39, 32768}, {38, 40, 32768}, {39, 48, 32768}, {40, 69, 10}, {41, 67, 5120}, {42, 45, 32768},
        {43, 45, 32768}, {44, 46, 2304}, {45, 59, 2304}, {46, 61, 16}, {47, 49, 32768}, {48, 54, 32768},
        {49, 52, 6144}, {50, 52, 32768}, {51, 53, 432}, {52, 55, 432}, {53, 57, 16}, {54, 56, 432}, {55, 70, 432},
        {56, 58, 16}, {57, 70, 16}, {58, 60, 2304}, {59, 70, 2304}, {60, 62, 16}, {61, 70, 16}, {62, 64, 4608},
        {63, 70, 4608}, {64, 66, 32}, {65, 70, 32}, {66, 68, 5120}, {67, 70, 5120}, {68, 70, 10}, {69, 70, 10}};
    enum { N = sizeof it / sizeof it[0] };
    int64_t off[N];
    int64_t live = olla_place_items_max_live(it, N);
    olla_pwork w = {5000000000LL, 0, 0, 0};
    OLLA_CHECK_EQ_I64(olla_place_split(it, N, live, &w, off, 0), 1);
    OLLA_CHECK_EQ_I64(olla_place_items_arena(it, off, N), live);
    olla_test_check_valid(it, N, off, live);
    OLLA_CHECK(w.used < 100000000LL);
}

/* Through the driver: zero fragmentation on the same kind of trace. */
OLLA_TEST(test_place_training_trace_zero_fragmentation)
{
    enum { LAYERS = 40 };
    static olla_pitem it[6 * LAYERS];
    static olla_buffer b[6 * LAYERS];
    size_t n = training_trace(it, LAYERS);
    for (size_t i = 0; i < n; i++)
        b[i] = (olla_buffer){it[i].lower, it[i].upper, it[i].size * 64, 0};
    olla_place_options o = {64, 30.0, 0, 0, 0};
    olla_place_result r;
    olla_error err = {0};
    OLLA_CHECK(olla_place(b, n, &o, &r, &err) == OLLA_OK);
    OLLA_CHECK_EQ_I64(r.arena_bytes, olla_place_max_live(b, n, 64));
    OLLA_CHECK_EQ_I64(r.status, OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(olla_place_validate(b, n, r.arena_bytes, 64, &err) == OLLA_OK);
}

OLLA_TEST_MAIN(OLLA_T(test_search_fixed_vs_brute), OLLA_T(test_split_training_traces),
               OLLA_T(test_split_crossing_traces), OLLA_T(test_split_backwards),
               OLLA_T(test_split_cheap_attempt_not_kept_waiting), OLLA_T(test_place_training_trace_zero_fragmentation))
