/* olla-onnx: sets of small integers as bit arrays, 64 to a uint64_t word
 * (bit i is bit i % 64 of word i / 64). The caller owns the words. */
#ifndef OLLA_BITS_H
#define OLLA_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Words that hold n bits. */
static inline size_t olla_bits_words(size_t n)
{
    return (n + 63) / 64;
}

static inline int olla_bit_get(const uint64_t *words, size_t i)
{
    return (int)((words[i >> 6] >> (i & 63)) & 1u);
}

static inline void olla_bit_set(uint64_t *words, size_t i)
{
    words[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void olla_bit_clear(uint64_t *words, size_t i)
{
    words[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

#endif
