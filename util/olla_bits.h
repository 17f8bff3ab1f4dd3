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

/* The word that holds bit i. */
static inline size_t olla_bit_word(size_t i)
{
    return i >> 6;
}

/* The index of bit b (0 to 63) of word w. */
static inline size_t olla_bit_index(size_t w, unsigned b)
{
    return w * 64 + b;
}

/* The bits of i's word from its first up to and including bit i. */
static inline uint64_t olla_bits_through(size_t i)
{
    return ((uint64_t)2 << (i & 63)) - 1; /* for bit 63 the shift wraps to 0, and 0 - 1 is every bit */
}

/* The index of the lowest set bit of bits, word w of the array (bits != 0). */
static inline size_t olla_bit_lowest(size_t w, uint64_t bits)
{
    return olla_bit_index(w, (unsigned)__builtin_ctzll(bits));
}

/* The index of the highest set bit of bits, word w of the array (bits != 0). */
static inline size_t olla_bit_highest(size_t w, uint64_t bits)
{
    return olla_bit_index(w, 63u - (unsigned)__builtin_clzll(bits));
}

#endif
