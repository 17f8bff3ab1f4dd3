/* olla-onnx: the growth helper of util/olla_grow.h. */
#include "util/olla_grow.h"

#include <stdlib.h>

#include "util/olla_arith.h"

void *olla_grow(void *items, size_t *cap, size_t need, size_t item_size)
{
    if (items && need <= *cap)
        return items;
    size_t grown_cap, bytes;
    if (!olla_mul_size(need, 2, &grown_cap) || (grown_cap += 64) < 64 ||
        !olla_mul_size(grown_cap, item_size, &bytes))
        return NULL;
    void *grown = realloc(items, bytes);
    if (grown)
        *cap = grown_cap;
    return grown;
}
