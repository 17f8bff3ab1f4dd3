/* olla-onnx: the one ordered set of array indices (a treap), for every search that needs the first key at or above a value. */
#ifndef OLLA_TREAP_H
#define OLLA_TREAP_H

#include <stddef.h>
#include <stdint.h>

/* Nodes are the indices 0..cap-1 of the caller's own items; the caller
 * orders them through `below` and walks the tree through left and right
 * (-1: none). Priorities come from the library's one pseudo-random sequence,
 * so the same calls build the same tree on every run. */
typedef struct olla_treap {
    int *left, *right;
    unsigned *pri;
    size_t cap;
    int root;      /* -1 when empty */
    uint64_t seed; /* the last priority drawn */
} olla_treap;

/* 1 when node u's key is below node k's (for the split at k's key) */
typedef int (*olla_treap_below)(const void *ctx, int u, int k);

/* an empty treap with room for none */
void olla_treap_init(olla_treap *t);
/* room for nodes 0..n-1, each new one a leaf with its priority drawn;
 * 0 when out of memory (the treap unchanged) */
int olla_treap_reserve(olla_treap *t, size_t n);
void olla_treap_free(olla_treap *t);

/* the tree at u split into the keys below k's (*l) and the rest (*r) */
void olla_treap_split(olla_treap *t, int u, int k, olla_treap_below below, const void *ctx, int *l, int *r);
/* the trees a and b joined, every key of a below every key of b */
int olla_treap_merge(olla_treap *t, int a, int b);
/* the node of the smallest (largest) key of the tree at u (u >= 0) */
int olla_treap_first(const olla_treap *t, int u);
int olla_treap_last(const olla_treap *t, int u);
/* the tree at u without its smallest (largest) key (u >= 0) */
int olla_treap_drop_first(olla_treap *t, int u);
int olla_treap_drop_last(olla_treap *t, int u);

/* node k, not in the treap, joins it under its current key */
void olla_treap_insert(olla_treap *t, int k, olla_treap_below below, const void *ctx);
/* node k leaves the treap; its key must not have changed since it joined,
 * and keys must be distinct */
void olla_treap_erase(olla_treap *t, int k, olla_treap_below below, const void *ctx);

#endif
