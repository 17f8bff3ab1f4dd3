/* olla-onnx: the one way to multiply sizes without overflow, the one
 * greatest common divisor, the one FNV-1a hash of strings, the one hash of
 * words and the one pseudo-random sequence. */
#ifndef OLLA_ARITH_H
#define OLLA_ARITH_H

#include <stddef.h>
#include <stdint.h>

/* *out = a * b; 0 when the product does not fit (then *out is unspecified). */
static inline int olla_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static inline int olla_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* The greatest common divisor of a and b (>= 0; gcd(a, 0) = a). */
static inline int64_t olla_gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* 64-bit FNV-1a: start from OLLA_FNV1A_START and feed strings in turn. The
 * values are part of what the program promises (batch shards and cache keys
 * are made of them), so the function never changes. */
#define OLLA_FNV1A_START 14695981039346656037ULL
static inline uint64_t olla_fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* A hash of n 64-bit words in which every bit of every word moves the low
 * bits a table indexes by (a multiply alone leaves the low bits blind to the
 * high ones): each word folded in and mixed, then a finishing mix (the
 * multipliers of SplitMix64's finaliser). Hash tables of the library index
 * by it; nothing stored depends on its values. */
#define OLLA_MIX_MULTIPLIER_1 0xbf58476d1ce4e5b9ULL
#define OLLA_MIX_MULTIPLIER_2 0x94d049bb133111ebULL
static inline uint64_t olla_hash_words(const uint64_t *w, size_t n)
{
    uint64_t h = OLLA_FNV1A_START;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= OLLA_MIX_MULTIPLIER_1;
        h ^= h >> 31;
    }
    h ^= h >> 30;
    h *= OLLA_MIX_MULTIPLIER_2;
    return h ^ (h >> 31);
}

/* The library's one pseudo-random sequence, Knuth's MMIX linear
 * congruential step: searches that shuffle must repeat themselves, so its
 * constants never change. Its low bits have short periods: take
 * olla_lcg_bits. */
static inline uint64_t olla_lcg_next(uint64_t s)
{
    return s * 6364136223846793005ULL + 1442695040888963407ULL;
}

/* The 31 high bits of a state of olla_lcg_next, the ones that look random. */
static inline uint64_t olla_lcg_bits(uint64_t s)
{
    return s >> 33;
}

/* 2^64 divided by the golden ratio, odd: a seed multiplied by it (or xored
 * with it) starts a sequence far from its neighbours'. */
#define OLLA_GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL

#endif
