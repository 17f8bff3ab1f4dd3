/* The online caching allocator model (solver/olla_online_alloc.h) step by
 * step: reuse, split and coalesce, best fit, segments never merged; and on
 * random traces against a plain replay of the same rules. */
#include <string.h>

#include "olla_test.h"
#include "solver/olla_online_alloc.h"

static void run(const olla_buffer *b, size_t n, int64_t *reserved, int64_t *peak)
{
    olla_error err = {0};
    OLLA_CHECK(olla_online_alloc_simulate(b, n, reserved, peak, &err) == OLLA_OK);
}

/* step0: A (1000 -> 1024) gets segment [0,1024). step1: B (512) finds no
 * free block: segment [1024,1536). step2: A is freed, then C (1024) reuses
 * A's block exactly. Reserved 1536, peak in use 1536 (A+B, then B+C). */
OLLA_TEST(test_reuse_after_free)
{
    olla_buffer b[] = {{0, 2, 1000, 0}, {1, 3, 512, 0}, {2, 4, 1000, 0}};
    int64_t reserved, peak;
    run(b, 3, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 1536);
    OLLA_CHECK_EQ_I64(peak, 1536);
}

/* step0: A (2048) reserves [0,2048). step2: A freed; B (512) splits it:
 * B [0,512), free [512,2048); C (512): C [512,1024), free [1024,2048).
 * step3: B and C freed; C's block merges with the free block after it and
 * then with B's block before it: one free block [0,2048), so D (2048) fits
 * without a new segment. Reserved 2048; peak 2048. */
OLLA_TEST(test_split_and_coalesce)
{
    olla_buffer b[] = {{0, 2, 2048, 0}, {2, 3, 512, 0}, {2, 3, 512, 0}, {3, 4, 2048, 0}};
    int64_t reserved, peak;
    run(b, 4, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 2048);
    OLLA_CHECK_EQ_I64(peak, 2048);
}

/* step0: X (1024) -> segment [0,1024), Y (512) -> [1024,1536), Z (512) ->
 * [1536,2048). step2: X, Y freed (two free blocks, separate segments).
 * W (512): best fit is Y's 512 block, not X's 1024 block at a lower address.
 * V (1024) then fits in X's block. Reserved stays 2048 (first fit would put
 * W in X's block and need a new segment for V: 3072). Peak: 2048 at step0. */
OLLA_TEST(test_best_fit_not_first_fit)
{
    olla_buffer b[] = {{0, 2, 1024, 0}, {0, 2, 512, 0}, {0, 5, 512, 0},
                       {2, 4, 512, 0},  {2, 4, 1024, 0}};
    int64_t reserved, peak;
    run(b, 5, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 2048);
    OLLA_CHECK_EQ_I64(peak, 2048);
}

/* Two 512 segments side by side are never merged: at step1 both are free,
 * but C (1024) fits in neither and reserves a third segment. Reserved
 * 512 + 512 + 1024 = 2048; peak in use 1024. */
OLLA_TEST(test_segments_not_merged)
{
    olla_buffer b[] = {{0, 1, 512, 0}, {0, 1, 512, 0}, {1, 2, 1024, 0}};
    int64_t reserved, peak;
    run(b, 3, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 2048);
    OLLA_CHECK_EQ_I64(peak, 1024);
}

/* Rounding: 0 and 1 byte take 512, 513 takes 1024, all live together:
 * three segments, 2048 reserved and in use. A buffer with an empty lifetime
 * takes nothing. */
OLLA_TEST(test_rounding)
{
    olla_buffer b[] = {{0, 1, 0, 0}, {0, 1, 1, 0}, {0, 1, 513, 0}, {3, 3, 4096, 0}};
    int64_t reserved, peak;
    run(b, 4, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 2048);
    OLLA_CHECK_EQ_I64(peak, 2048);
}

/* Fragmentation: A [0,3) and B [0,1) take 512 each; at step1 B's block is
 * free but C (1024) does not fit: a new segment. Reserved 2048 while at most
 * 1536 bytes are ever in use (A + C). */
OLLA_TEST(test_fragmentation)
{
    olla_buffer b[] = {{0, 3, 512, 0}, {0, 1, 512, 0}, {1, 3, 1024, 0}};
    int64_t reserved, peak;
    run(b, 3, &reserved, &peak);
    OLLA_CHECK_EQ_I64(reserved, 2048);
    OLLA_CHECK_EQ_I64(peak, 1536);
}

OLLA_TEST(test_bad_input)
{
    olla_error err = {0};
    olla_buffer b[] = {{4, 2, 512, 0}};
    int64_t reserved, peak;
    OLLA_CHECK(olla_online_alloc_simulate(b, 1, &reserved, &peak, &err) == OLLA_ERR_INPUT);
    OLLA_CHECK_STR_CONTAINS(err.message, "inverted");
}

/* On random traces: in-use peak equals the max live rounded bytes (an
 * independent sweep), and the reservation is at least that. */
OLLA_TEST(test_random_invariants)
{
    uint64_t x = 12345;
    for (int trial = 0; trial < 50; trial++) {
        olla_buffer b[200];
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t l = (int64_t)((x >> 33) % 100);
            int64_t len = 1 + (int64_t)((x >> 20) % 20);
            int64_t size = 1 + (int64_t)((x >> 40) % 5000);
            b[i] = (olla_buffer){l, l + len, size, 0};
        }
        int64_t reserved, peak;
        run(b, 200, &reserved, &peak);
        int64_t live = 0;
        for (int64_t t = 0; t < 130; t++) {
            int64_t cur = 0;
            for (int i = 0; i < 200; i++)
                if (b[i].lower <= t && t < b[i].upper)
                    cur += (b[i].size + 511) / 512 * 512;
            if (cur > live)
                live = cur;
        }
        OLLA_CHECK_EQ_I64(peak, live);
        OLLA_CHECK(reserved >= peak);
    }
}

/* ---- a plain replay: every block in one array in address order ---- */

enum { REF_MAX = 1024 };

typedef struct {
    int64_t addr, size;
    int seg, free_;
} ref_block;

typedef struct {
    ref_block b[REF_MAX];
    int n, segs;
    int64_t reserved;
} ref_heap;

/* the block of the best fit (smallest, then lowest address) split to size,
 * or a new segment of exactly size; returns its address */
static int64_t ref_alloc(ref_heap *h, int64_t size)
{
    int best = -1;
    for (int i = 0; i < h->n; i++)
        if (h->b[i].free_ && h->b[i].size >= size && (best < 0 || h->b[i].size < h->b[best].size))
            best = i; /* address order: the first of equal sizes is the lowest */
    if (best < 0) {
        h->b[h->n++] = (ref_block){h->reserved, size, h->segs++, 0};
        h->reserved += size;
        return h->b[h->n - 1].addr;
    }
    if (h->b[best].size > size) { /* the rest, a free block right after */
        memmove(&h->b[best + 2], &h->b[best + 1], (size_t)(h->n - best - 1) * sizeof h->b[0]);
        h->b[best + 1] = (ref_block){h->b[best].addr + size, h->b[best].size - size, h->b[best].seg, 1};
        h->n++;
        h->b[best].size = size;
    }
    h->b[best].free_ = 0;
    return h->b[best].addr;
}

/* frees the block at addr, merged with free neighbours of its segment */
static void ref_free(ref_heap *h, int64_t addr)
{
    int i = 0;
    while (h->b[i].addr != addr)
        i++;
    h->b[i].free_ = 1;
    for (int k = i; k >= i - 1 && k >= 0; k--) /* with the next block, then the previous with it */
        if (k + 1 < h->n && h->b[k].free_ && h->b[k + 1].free_ && h->b[k].seg == h->b[k + 1].seg) {
            h->b[k].size += h->b[k + 1].size;
            memmove(&h->b[k + 1], &h->b[k + 2], (size_t)(h->n - k - 2) * sizeof h->b[0]);
            h->n--;
        }
}

/* replays b step by step: frees, then allocations, each in index order */
static void ref_run(const olla_buffer *b, int n, int64_t *reserved, int64_t *peak)
{
    static ref_heap h;
    int64_t at[REF_MAX], in_use = 0, end = 0;
    memset(&h, 0, sizeof h);
    *peak = 0;
    for (int i = 0; i < n; i++)
        end = b[i].upper > end ? b[i].upper : end;
    for (int64_t t = 0; t <= end; t++) {
        for (int i = 0; i < n; i++)
            if (b[i].upper == t && b[i].lower < b[i].upper) {
                ref_free(&h, at[i]);
                in_use -= (b[i].size + 511) / 512 * 512;
            }
        for (int i = 0; i < n; i++)
            if (b[i].lower == t && b[i].lower < b[i].upper) {
                int64_t sz = (b[i].size + 511) / 512 * 512;
                at[i] = ref_alloc(&h, sz);
                in_use += sz;
                *peak = in_use > *peak ? in_use : *peak;
            }
    }
    *reserved = h.reserved;
}

/* Random traces with few distinct sizes (ties in the best fit) and many
 * frees (splits and merges), the model against the plain replay. */
OLLA_TEST(test_random_against_plain_replay)
{
    uint64_t x = 977;
    for (int trial = 0; trial < 300; trial++) {
        olla_buffer b[300];
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int n = 1 + (int)((x >> 33) % 300), span = 2 + (int)((x >> 13) % 200), sizes = 1 + (int)((x >> 45) % 8);
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int64_t l = (int64_t)((x >> 33) % (uint64_t)span), len = (int64_t)((x >> 20) % 30);
            int64_t size = 1 + (int64_t)((x >> 40) % (uint64_t)sizes) * 700 + (int64_t)((x >> 10) % 3);
            b[i] = (olla_buffer){l, l + len, size, 0};
        }
        int64_t reserved, peak, want_reserved, want_peak;
        run(b, (size_t)n, &reserved, &peak);
        ref_run(b, n, &want_reserved, &want_peak);
        OLLA_CHECK_EQ_I64(reserved, want_reserved);
        OLLA_CHECK_EQ_I64(peak, want_peak);
    }
}

OLLA_TEST_MAIN(OLLA_T(test_random_against_plain_replay), OLLA_T(test_random_invariants), OLLA_T(test_reuse_after_free), OLLA_T(test_split_and_coalesce),
               OLLA_T(test_best_fit_not_first_fit), OLLA_T(test_segments_not_merged),
               OLLA_T(test_rounding), OLLA_T(test_fragmentation), OLLA_T(test_bad_input))
