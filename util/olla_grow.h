/* olla-onnx: the one growth helper for every dynamic array. */
#ifndef OLLA_GROW_H
#define OLLA_GROW_H

#include <stddef.h>

/* The array items of *cap item_size-byte items, grown to hold at least need
 * of them (doubling, so that pushes cost amortized constant time): the same
 * or a moved array (never NULL when it succeeds, even for need 0), *cap
 * updated; NULL when out of memory or when the size overflows, items and
 * *cap unchanged. */
void *olla_grow(void *items, size_t *cap, size_t need, size_t item_size);

#endif
