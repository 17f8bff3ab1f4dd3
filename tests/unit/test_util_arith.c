/* The one hash, growth helper, overflow guard, bit array and pseudo-random
 * sequence of util/: FNV-1a against the published test vectors, growth that
 * keeps the items and refuses a size that overflows, bit arrays and bit
 * positions against a byte per bit, the sequence against big integers and
 * the hash of words by how it moves the low bits. */
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

/* The linear congruential step against values computed apart (Python's
 * big integers, modulo 2^64), and the golden-ratio constant against 2^64 / phi. */
OLLA_TEST(test_lcg_against_big_integers)
{
    uint64_t s = 0;
    s = olla_lcg_next(s);
    OLLA_CHECK(s == 1442695040888963407ULL && olla_lcg_bits(s) == 167951807u);
    s = olla_lcg_next(s);
    OLLA_CHECK(s == 1876011003808476466ULL && olla_lcg_bits(s) == 218396424u);
    s = olla_lcg_next(s);
    OLLA_CHECK(s == 11166244414315200793ULL && olla_lcg_bits(s) == 1299921937u);
    s = 12345;
    for (int i = 0; i < 1000; i++)
        s = olla_lcg_next(s);
    OLLA_CHECK(s == 3554153303644541409ULL);
    double ratio = (double)OLLA_GOLDEN_GAMMA * 1.6180339887498948482 / 18446744073709551616.0;
    OLLA_CHECK((OLLA_GOLDEN_GAMMA & 1u) && ratio > 1 - 1e-12 && ratio < 1 + 1e-12);
}

/* The hash of words: equal keys hash alike, and flipping any one bit of a
 * key changes about half of the low 16 bits a table indexes by (the
 * property the exact DP's table relies on). */
OLLA_TEST(test_hash_words_moves_low_bits)
{
    enum { W = 3 };
    uint64_t s = 77, key[W], copy[W];
    long flips = 0, unchanged = 0, low_bits_changed = 0;
    for (int round = 0; round < 300; round++) {
        for (int i = 0; i < W; i++) {
            s = olla_lcg_next(s);
            key[i] = s ^ (olla_lcg_next(s) >> 17);
            copy[i] = key[i];
        }
        uint64_t h = olla_hash_words(key, W);
        OLLA_CHECK(h == olla_hash_words(copy, W));
        for (int b = 0; b < 64 * W; b++) {
            copy[b / 64] ^= (uint64_t)1 << (b % 64);
            uint64_t d = (h ^ olla_hash_words(copy, W)) & 0xffffu;
            copy[b / 64] ^= (uint64_t)1 << (b % 64);
            flips++;
            unchanged += d == 0;
            low_bits_changed += __builtin_popcountll(d);
        }
    }
    double mean = (double)low_bits_changed / (double)flips; /* 8 for a perfect mix */
    OLLA_CHECK(unchanged <= 5 && mean > 7.5 && mean < 8.5);
    OLLA_CHECK(olla_hash_words(key, 0) == olla_hash_words(copy, 0));
    OLLA_CHECK(olla_hash_words(key, 1) != olla_hash_words(key, 2));
}

OLLA_TEST_MAIN(OLLA_T(test_fnv1a_vectors), OLLA_T(test_grow_keeps_items_and_refuses_overflow), OLLA_T(test_mul_and_gcd),
               OLLA_T(test_bits_against_bytes), OLLA_T(test_bit_positions_against_bytes),
               OLLA_T(test_lcg_against_big_integers), OLLA_T(test_hash_words_moves_low_bits))
