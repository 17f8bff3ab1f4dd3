/* olla-onnx: a string -> index hash map (open addressing, FNV-1a). Keys are
 * borrowed: they must outlive the map. A zeroed map is an empty map, and
 * olla_strmap_init only sizes it ahead. */
#ifndef OLLA_STRMAP_H
#define OLLA_STRMAP_H

#include <stddef.h>

typedef struct olla_strmap {
    const char **keys;
    size_t *values;
    size_t cap, count;
} olla_strmap;

int olla_strmap_init(olla_strmap *m, size_t expected); /* 0 on out of memory */
void olla_strmap_free(olla_strmap *m);
/* 1 and *value (when value is not NULL) when key is present, else 0. */
int olla_strmap_find(const olla_strmap *m, const char *key, size_t *value);
/* The value as an int, or -1 when absent (for maps whose values are ints). */
int olla_strmap_get(const olla_strmap *m, const char *key);
/* The stored key equal to key, or NULL: for interning strings. */
const char *olla_strmap_key(const olla_strmap *m, const char *key);
/* Inserts or replaces. Returns 0 on out of memory. */
int olla_strmap_put(olla_strmap *m, const char *key, size_t value);

#endif
