/* olla-onnx: the ordered set of array indices (see olla_treap.h). */
#include <stdlib.h>

#include "util/olla_arith.h"
#include "util/olla_grow.h"
#include "util/olla_treap.h"

void olla_treap_init(olla_treap *t)
{
    *t = (olla_treap){NULL, NULL, NULL, 0, -1, OLLA_GOLDEN_GAMMA};
}

int olla_treap_reserve(olla_treap *t, size_t n)
{
    if (n <= t->cap)
        return 1;
    size_t cl = t->cap, cr = t->cap, cp = t->cap;
    int *l = olla_grow(t->left, &cl, n, sizeof *l);
    if (l)
        t->left = l;
    int *r = l ? olla_grow(t->right, &cr, n, sizeof *r) : NULL;
    if (r)
        t->right = r;
    unsigned *p = r ? olla_grow(t->pri, &cp, n, sizeof *p) : NULL;
    if (!p)
        return 0; /* the arrays grown so far keep their old items; cap unchanged */
    t->pri = p;
    size_t cap = cl; /* the three grew alike */
    for (size_t i = t->cap; i < cap; i++) {
        t->seed = olla_lcg_next(t->seed);
        t->left[i] = t->right[i] = -1;
        t->pri[i] = (unsigned)olla_lcg_bits(t->seed);
    }
    t->cap = cap;
    return 1;
}

void olla_treap_free(olla_treap *t)
{
    free(t->left);
    free(t->right);
    free(t->pri);
    olla_treap_init(t);
}

void olla_treap_split(olla_treap *t, int u, int k, olla_treap_below below, const void *ctx, int *l, int *r)
{
    if (u < 0) {
        *l = *r = -1;
    } else if (below(ctx, u, k)) {
        olla_treap_split(t, t->right[u], k, below, ctx, &t->right[u], r);
        *l = u;
    } else {
        olla_treap_split(t, t->left[u], k, below, ctx, l, &t->left[u]);
        *r = u;
    }
}

int olla_treap_merge(olla_treap *t, int a, int b)
{
    if (a < 0 || b < 0)
        return a < 0 ? b : a;
    if (t->pri[a] > t->pri[b]) {
        t->right[a] = olla_treap_merge(t, t->right[a], b);
        return a;
    }
    t->left[b] = olla_treap_merge(t, a, t->left[b]);
    return b;
}

int olla_treap_first(const olla_treap *t, int u)
{
    while (t->left[u] >= 0)
        u = t->left[u];
    return u;
}

int olla_treap_last(const olla_treap *t, int u)
{
    while (t->right[u] >= 0)
        u = t->right[u];
    return u;
}

int olla_treap_drop_first(olla_treap *t, int u)
{
    if (t->left[u] < 0)
        return t->right[u];
    t->left[u] = olla_treap_drop_first(t, t->left[u]);
    return u;
}

int olla_treap_drop_last(olla_treap *t, int u)
{
    if (t->right[u] < 0)
        return t->left[u];
    t->right[u] = olla_treap_drop_last(t, t->right[u]);
    return u;
}

void olla_treap_insert(olla_treap *t, int k, olla_treap_below below, const void *ctx)
{
    int l, r;
    t->left[k] = t->right[k] = -1;
    olla_treap_split(t, t->root, k, below, ctx, &l, &r);
    t->root = olla_treap_merge(t, olla_treap_merge(t, l, k), r);
}

void olla_treap_erase(olla_treap *t, int k, olla_treap_below below, const void *ctx)
{
    int l, r;
    olla_treap_split(t, t->root, k, below, ctx, &l, &r); /* k is the smallest key of r */
    t->root = olla_treap_merge(t, l, olla_treap_drop_first(t, r));
}
