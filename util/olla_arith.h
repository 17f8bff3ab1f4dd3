/* olla-onnx: the one way to multiply sizes without overflow, the one
 * greatest common divisor, and the one FNV-1a hash. */
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

#endif
