/* Parts of more than 10,000 buffers (place.c's big parts): on generated
 * perfect tilings (blocks of time cut into rectangles that fill the strip
 * below max live exactly, so max live is the optimum), joined into one
 * part by a thin buffer live across all of them, the heuristics end above
 * max live and the exact search reaches it within a fixed work limit and
 * no deadline; the placement is checked by the validator. */
#include <stdlib.h>

#include "olla_test.h"
#include "olla_test_gen.h"
#include "solver/olla_place.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static int64_t rnd(int64_t lo, int64_t hi) /* in [lo, hi] */
{
    return olla_test_rng_range(&rng_state, lo, hi);
}

/* The rectangle [t0, t1) x [y0, y1) cut into pieces: stops at random once
 * small, else cuts across time or across addresses at a random point; each
 * piece becomes a buffer at b[*n] (its offset kept as the known answer). */
static void tile(olla_buffer *b, size_t *n, int64_t t0, int64_t t1, int64_t y0, int64_t y1)
{
    int64_t w = t1 - t0, h = y1 - y0;
    int stop = (w == 1 && h <= 2) || (w * h <= 12 && rnd(0, 2) == 0);
    if (stop) {
        b[(*n)++] = (olla_buffer){t0, t1, h, y0};
        return;
    }
    if (h == 1 || (w > 1 && rnd(0, 1) == 0)) {
        int64_t t = rnd(t0 + 1, t1 - 1);
        tile(b, n, t0, t, y0, y1);
        tile(b, n, t, t1, y0, y1);
    } else {
        int64_t y = rnd(y0 + 1, y1 - 1);
        tile(b, n, t0, t1, y0, y);
        tile(b, n, t0, t1, y, y1);
    }
}

/* blocks blocks of width steps and height 16 from time 0, tiled apart, on
 * top of one buffer of size 1 live across them all: its buffers in b
 * (room for 64 a block and one), returned in number. Max live is 17 at
 * every step. */
static size_t tilings(olla_buffer *b, int blocks, int64_t width)
{
    size_t n = 0;
    b[n++] = (olla_buffer){0, blocks * width, 1, 0};
    for (int k = 0; k < blocks; k++)
        tile(b, &n, k * width, (k + 1) * width, 1, 17);
    return n;
}

/* One part of over 10,000 buffers placed at max live within 2e9 units and
 * no deadline, where the heuristics alone end above it. */
OLLA_TEST(test_big_part_reaches_max_live)
{
    enum { BLOCKS = 400, WIDTH = 6 };
    olla_buffer *b = malloc((BLOCKS * 64 + 1) * sizeof *b);
    OLLA_CHECK(b != NULL);
    if (!b)
        return;
    size_t n = tilings(b, BLOCKS, WIDTH);
    fprintf(stderr, "%zu buffers\n", n);
    OLLA_CHECK(n > 10000);
    OLLA_CHECK_EQ_I64(olla_place_validate(b, n, 17, 1, &(olla_error){0}), OLLA_OK); /* the tiling itself */
    OLLA_CHECK_EQ_I64(olla_place_max_live(b, n, 1), 17);
    olla_error err = {0};
    olla_place_result heur, r;
    olla_place_options o = {1, 0, 0, NULL, 2000000000LL};
    OLLA_CHECK(olla_place_heuristics(b, n, &o, &heur, &err) == OLLA_OK);
    fprintf(stderr, "heuristics: %lld\n", (long long)heur.arena_bytes);
    OLLA_CHECK(heur.arena_bytes > 17);
    OLLA_CHECK(olla_place(b, n, &o, &r, &err) == OLLA_OK);
    fprintf(stderr, "placed: %lld after %lld units\n", (long long)r.arena_bytes, r.work);
    OLLA_CHECK_EQ_I64(r.arena_bytes, 17);
    OLLA_CHECK(r.status == OLLA_PLACE_OPTIMAL);
    OLLA_CHECK(r.work <= 2000000000LL);
    OLLA_CHECK_EQ_I64(olla_place_validate(b, n, r.arena_bytes, 1, &err), OLLA_OK);
    free(b);
}

OLLA_TEST_MAIN(OLLA_T(test_big_part_reaches_max_live))
