/* The one hash, growth helper, overflow guard and bit array of util/:
 * FNV-1a against the published test vectors, growth that keeps the items and
 * refuses a size that overflows, and bit arrays and bit positions against a
 * byte per bit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olla_test.h"
#include "util/olla_arith.h"
#include "util/olla_bits.h"
#include "util/olla_grow.h"

/* The FNV-1a 64 vectors of the reference page (isthe.com/chongo/tech/comp/fnv). */
OLLA_TEST(test_fnv1a_vectors)
{
    OLLA_CHECK(olla_fnv1a(OLLA_FNV1A_START, "") == 0xcbf29ce484222325ULL);
    OLLA_CHECK(olla_fnv1a(OLLA_FNV1A_START, "a") == 0xaf63dc4c8601ec8cULL);
    OLLA_CHECK(olla_fnv1a(OLLA_FNV1A_START, "foobar") == 0x85944171f73967e8ULL);
    /* feeding in pieces is feeding the whole */
    OLLA_CHECK(olla_fnv1a(olla_fnv1a(OLLA_FNV1A_START, "foo"), "bar") == 0x85944171f73967e8ULL);
}

OLLA_TEST(test_grow_keeps_items_and_refuses_overflow)
{
    size_t cap = 0;
    int *a = NULL;
    unsigned s = 7;
    for (int i = 0; i < 5000; i++) {
        s = s * 1103515245u + 12345u;
        size_t need = (size_t)i + 1 + (s >> 16) % 3; /* sometimes more than one at a time */
        int *g = olla_grow(a, &cap, need, sizeof *g);
        OLLA_CHECK(g != NULL && cap >= need);
        if (!g)
            break;
        a = g;
        a[i] = i * 3;
    }
    int intact = 1;
    for (int i = 0; a && i < 5000; i++)
        intact &= a[i] == i * 3;
    OLLA_CHECK(intact);
    size_t before = cap;
    OLLA_CHECK(olla_grow(a, &cap, SIZE_MAX / 2, sizeof *a) == NULL); /* bytes overflow */
    OLLA_CHECK(olla_grow(a, &cap, SIZE_MAX, 1) == NULL);             /* count overflows */
    OLLA_CHECK_EQ_I64((int64_t)cap, (int64_t)before);
    OLLA_CHECK(olla_grow(a, &cap, 3, sizeof *a) == a); /* enough already */
    free(a);
    int *z = olla_grow(NULL, &cap, 0, sizeof *z); /* never NULL on success, even for 0 */
    OLLA_CHECK(z != NULL);
    free(z);
}

OLLA_TEST(test_mul_and_gcd)
{
    size_t out = 0;
    OLLA_CHECK(olla_mul_size(3, 5, &out) && out == 15);
    OLLA_CHECK(!olla_mul_size(SIZE_MAX / 2 + 1, 2, &out));
    uint64_t u = 0;
    OLLA_CHECK(olla_mul_u64(UINT64_MAX / 3, 3, &u) && u == UINT64_MAX / 3 * 3);
    OLLA_CHECK(!olla_mul_u64(UINT64_MAX / 3 + 1, 3, &u));
    OLLA_CHECK_EQ_I64(olla_gcd64(12, 18), 6);
    OLLA_CHECK_EQ_I64(olla_gcd64(7, 0), 7);
    OLLA_CHECK_EQ_I64(olla_gcd64(0, 9), 9);
    OLLA_CHECK_EQ_I64(olla_gcd64(1LL << 40, 3LL << 20), 1LL << 20);
}

OLLA_TEST(test_bits_against_bytes)
{
    enum { N = 1000 };
    uint64_t words[16] = {0};
    unsigned char ref[N] = {0};
    OLLA_CHECK(olla_bits_words(N) == 16 && olla_bits_words(64) == 1 && olla_bits_words(65) == 2 &&
               olla_bits_words(0) == 0);
    unsigned s = 99;
    for (int k = 0; k < 5000; k++) {
        s = s * 1103515245u + 12345u;
        size_t i = (s >> 8) % N;
        if ((s >> 4) & 1) {
            olla_bit_set(words, i);
            ref[i] = 1;
        } else {
            olla_bit_clear(words, i);
            ref[i] = 0;
        }
    }
    int same = 1;
    for (size_t i = 0; i < N; i++)
        same &= olla_bit_get(words, i) == ref[i];
    OLLA_CHECK(same);
}

/* Word and bit positions, the mask through a bit and the lowest and highest
 * set bit of a word, against a scan of a byte per bit. */
OLLA_TEST(test_bit_positions_against_bytes)
{
    enum { N = 640, WORDS = N / 64 };
    unsigned s = 5;
    int same = 1;
    for (int round = 0; round < 200; round++) {
        uint64_t words[WORDS] = {0};
        unsigned char ref[N] = {0};
        for (int k = round % 7; k < 40; k++) { /* from 0 to 40 bits set, some words empty */
            s = s * 1103515245u + 12345u;
            size_t i = (s >> 8) % N;
            olla_bit_set(words, i);
            ref[i] = 1;
        }
        for (size_t w = 0; w < WORDS; w++) {
            size_t lo = SIZE_MAX, hi = SIZE_MAX;
            for (size_t i = w * 64; i < w * 64 + 64; i++)
                if (ref[i]) {
                    lo = lo == SIZE_MAX ? i : lo;
                    hi = i;
                }
            if (words[w]) {
                same &= olla_bit_lowest(w, words[w]) == lo && olla_bit_highest(w, words[w]) == hi;
            } else {
                same &= lo == SIZE_MAX;
            }
        }
        s = s * 1103515245u + 12345u;
        size_t i = (s >> 8) % N, w = olla_bit_word(i);
        same &= w == i / 64 && olla_bit_index(w, (unsigned)(i % 64)) == i;
        uint64_t through = words[w] & olla_bits_through(i);
        for (size_t j = w * 64; j < w * 64 + 64; j++) /* a set bit survives the mask iff it is at or below i */
            same &= (int)((through >> (j % 64)) & 1u) == (ref[j] && j <= i);
    }
    OLLA_CHECK(same);
    OLLA_CHECK(olla_bits_through(63) == ~(uint64_t)0 && olla_bits_through(64) == 1 && olla_bits_through(0) == 1);
    OLLA_CHECK(olla_bit_highest(3, (uint64_t)1 << 63) == 255 && olla_bit_lowest(3, (uint64_t)1 << 63) == 255);
}

OLLA_TEST_MAIN(OLLA_T(test_fnv1a_vectors), OLLA_T(test_grow_keeps_items_and_refuses_overflow), OLLA_T(test_mul_and_gcd),
               OLLA_T(test_bits_against_bytes), OLLA_T(test_bit_positions_against_bytes))
