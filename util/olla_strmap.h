/* olla-onnx: a string -> int hash map (open addressing). Keys are borrowed. */
#ifndef OLLA_STRMAP_H
#define OLLA_STRMAP_H

#include <stddef.h>

typedef struct olla_strmap {
    const char **keys;
    int *values;
    size_t cap, count;
} olla_strmap;

int olla_strmap_init(olla_strmap *m, size_t expected); /* 0 on out of memory */
void olla_strmap_free(olla_strmap *m);
/* Returns the value, or -1 when absent. */
int olla_strmap_get(const olla_strmap *m, const char *key);
/* Inserts or replaces. Returns 0 on out of memory. */
int olla_strmap_put(olla_strmap *m, const char *key, int value);

#endif
