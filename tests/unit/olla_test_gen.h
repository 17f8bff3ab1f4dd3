/* olla-onnx: what the placement and generated-instance unit tests share: one
 * pseudo-random generator, and placement checks independent of the solver.
 *
 * The generator is xorshift64 with its state held by the caller, so each
 * test file keeps its own seed and its own sequence (a test's instances do
 * not change when another file draws numbers). A state must never be 0.
 *
 * The checks take buffers as olla_pitem (live on [lower, upper), half-open,
 * size in units): two buffers collide when they live at once and their byte
 * ranges [offset, offset + size) meet. olla_test_fits_brute is plain
 * backtracking over every offset, the reference the exact searches are
 * compared with; keep instances tiny (a few buffers, arenas of tens).
 * olla_test_check_valid asks the library's own validator, which shares no
 * code with the searches. */
#ifndef OLLA_TEST_GEN_H
#define OLLA_TEST_GEN_H

#include <stdint.h>
#include <stdlib.h>

#include "olla_test.h"
#include "solver/olla_place.h"
#include "solver/place_internal.h"

/* The next 64 pseudo-random bits (xorshift64, shifts 13, 7, 17). */
static inline uint64_t olla_test_rng_next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* A pseudo-random integer in [lo, hi], both included (lo <= hi). */
static inline int64_t olla_test_rng_range(uint64_t *state, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(olla_test_rng_next(state) % (uint64_t)(hi - lo + 1));
}

/* A pseudo-random integer in [0, n); 0 when n is 0. */
static inline uint32_t olla_test_rng_below(uint64_t *state, uint32_t n)
{
    uint64_t x = olla_test_rng_next(state);
    return n ? (uint32_t)(x % n) : 0;
}

/* Do a at offset oa and b at offset ob live at once and share a byte? */
static inline int olla_test_collide(const olla_pitem *a, int64_t oa, const olla_pitem *b, int64_t ob)
{
    return a->lower < b->upper && b->lower < a->upper && oa < ob + b->size && ob < oa + a->size;
}

/* Buffers already placed that a brute-force search must keep clear of. */
typedef struct olla_test_fixed {
    const olla_pitem *items;
    const int64_t *offsets;
    int n;
} olla_test_fixed;

/* Is there a placement of b[k..n) inside [0, arena), clear of b[0..k) at
 * off[0..k) and of the fixed buffers (NULL: none)? On success off[k..n)
 * holds one. Plain backtracking over every offset. */
static inline int olla_test_fits_brute(const olla_pitem *b, int n, int64_t *off, int k, int64_t arena,
                                       const olla_test_fixed *fixed)
{
    if (k == n)
        return 1;
    for (int64_t o = 0; o + b[k].size <= arena; o++) {
        int ok = 1;
        for (int j = 0; j < k && ok; j++)
            ok = !olla_test_collide(&b[k], o, &b[j], off[j]);
        for (int j = 0; fixed && j < fixed->n && ok; j++)
            ok = !olla_test_collide(&b[k], o, &fixed->items[j], fixed->offsets[j]);
        if (!ok)
            continue;
        off[k] = o;
        if (olla_test_fits_brute(b, n, off, k + 1, arena, fixed))
            return 1;
    }
    return 0;
}

/* The least arena brute force can fit b[0..n) in (n <= 8). */
static inline int64_t olla_test_brute_optimum(const olla_pitem *b, int n)
{
    int64_t off[8];
    int64_t arena = 0;
    while (!olla_test_fits_brute(b, n, off, 0, arena, NULL))
        arena++;
    return arena;
}

/* Checks, through olla_place_validate (alignment 1), that it[i] at off[i]
 * is a valid placement within arena: offsets in range, no two collide. */
static inline void olla_test_check_valid(const olla_pitem *it, size_t n, const int64_t *off, int64_t arena)
{
    olla_buffer *b = malloc((n + 1) * sizeof *b);
    OLLA_CHECK(b != NULL);
    if (!b)
        return;
    for (size_t i = 0; i < n; i++)
        b[i] = (olla_buffer){it[i].lower, it[i].upper, it[i].size, off[i]};
    olla_error err = {0};
    OLLA_CHECK(olla_place_validate(b, n, arena, 1, &err) == OLLA_OK);
    free(b);
}

#endif
