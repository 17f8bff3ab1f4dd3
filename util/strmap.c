/* olla-onnx: the string -> index hash map of olla_strmap.h (open
 * addressing, linear probing, FNV-1a). */
#include "util/olla_strmap.h"
#include "util/olla_arith.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    return olla_fnv1a(OLLA_FNV1A_START, s);
}

int olla_strmap_init(olla_strmap *m, size_t expected)
{
    size_t cap = 16; /* a power of two, as the probe masks with cap - 1: not olla_grow */
    while (cap < expected * 2 + 1)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->values = malloc(cap * sizeof *m->values);
    m->cap = cap;
    m->count = 0;
    if (!m->keys || !m->values) {
        olla_strmap_free(m);
        return 0;
    }
    return 1;
}

void olla_strmap_free(olla_strmap *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->cap = m->count = 0;
}

/* The slot of key, or of the empty slot where it would go; cap > 0. */
static size_t slot_of(const olla_strmap *m, const char *key)
{
    size_t i = (size_t)hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int olla_strmap_find(const olla_strmap *m, const char *key, size_t *value)
{
    if (!m->cap)
        return 0;
    size_t i = slot_of(m, key);
    if (!m->keys[i])
        return 0;
    if (value)
        *value = m->values[i];
    return 1;
}

int olla_strmap_get(const olla_strmap *m, const char *key)
{
    size_t v;
    return olla_strmap_find(m, key, &v) ? (int)v : -1;
}

const char *olla_strmap_key(const olla_strmap *m, const char *key)
{
    return m->cap ? m->keys[slot_of(m, key)] : NULL;
}

static int grow(olla_strmap *m)
{
    olla_strmap bigger;
    if (!olla_strmap_init(&bigger, m->cap ? m->cap : 8))
        return 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = slot_of(&bigger, m->keys[i]);
            bigger.keys[j] = m->keys[i];
            bigger.values[j] = m->values[i];
            bigger.count++;
        }
    olla_strmap_free(m);
    *m = bigger;
    return 1;
}

int olla_strmap_put(olla_strmap *m, const char *key, size_t value)
{
    if ((m->count + 1) * 2 > m->cap && !grow(m))
        return 0;
    size_t i = slot_of(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->values[i] = value;
    return 1;
}
