/* olla-onnx: Z, the updates whose ancestors are the current update's, as
 * a persistent set of ranks (for analysis_updates.c).
 *
 * Z of an update holds the Z of every update in it as that update found it
 * (those reached it then and reach it still, the graph only gaining edges),
 * so Z is kept per update as a persistent segment tree over the ranks: an
 * update's Z is its own rank joined with the trees of the updates it meets,
 * sharing their nodes. A tree node keeps the number of ranks below it, the
 * first and the last, and the highest tree answer (olla_upd_reach_query)
 * for a gap between two consecutive ranks below it, so that the bound of a
 * range costs a few queries whatever the size of Z. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/updates_internal.h"
#include "util/olla_grow.h"

/* an empty pool for the ranks of sum (0: out of memory) */
int olla_upd_zset_init(olla_upd_zset *z, const olla_upd_reach *sum)
{
    memset(z, 0, sizeof *z);
    z->sum = sum;
    z->size = 1;
    while (z->size < sum->n_upd)
        z->size *= 2;
    z->node = olla_grow(NULL, &z->cap, 1024, sizeof *z->node);
    if (!z->node)
        return 0;
    z->node[0] = (olla_upd_znode){0, 0, 0, -1, -1, -1};
    z->n = 1;
    return 1;
}

/* the summary of a then b (ranks of a before those of b) into out */
static void join(const olla_upd_zset *z, const olla_upd_znode *a, const olla_upd_znode *b, olla_upd_znode *out)
{
    if (a->cnt == 0 || b->cnt == 0) {
        *out = a->cnt ? *a : *b;
        return;
    }
    int q = olla_upd_reach_query(z->sum, a->last + 1, b->first - 1);
    out->cnt = a->cnt + b->cnt;
    out->first = a->first;
    out->last = b->last;
    out->inner = a->inner > b->inner ? a->inner : b->inner;
    out->inner = q > out->inner ? q : out->inner;
}

/* a new node over children l and r (a leaf of rank `leaf` when l = r = 0
 * and leaf >= 0); 0 when out of memory */
static int make(olla_upd_zset *z, int l, int r, int leaf)
{
    olla_upd_znode *p = olla_grow(z->node, &z->cap, (size_t)z->n + 1, sizeof *z->node);
    if (!p) {
        z->oom = 1;
        return 0;
    }
    z->node = p;
    int id = z->n++;
    if (leaf >= 0) {
        p[id] = (olla_upd_znode){0, 0, 1, leaf, leaf, -1};
    } else {
        join(z, &p[l], &p[r], &p[id]);
        p[id].l = l, p[id].r = r;
    }
    return id;
}

/* the union of trees a and b over the ranks [lo, hi] */
static int tree_union(olla_upd_zset *z, int a, int b, int lo, int hi)
{
    if (a == 0 || a == b)
        return b;
    if (b == 0 || lo == hi)
        return a;
    int mid = lo + (hi - lo) / 2;
    int l = tree_union(z, z->node[a].l, z->node[b].l, lo, mid);
    int r = tree_union(z, z->node[a].r, z->node[b].r, mid + 1, hi);
    if (l == z->node[a].l && r == z->node[a].r)
        return a;
    if (l == z->node[b].l && r == z->node[b].r)
        return b;
    return make(z, l, r, -1);
}

/* tree t with rank k added, over the ranks [lo, hi] */
static int tree_add(olla_upd_zset *z, int t, int k, int lo, int hi)
{
    if (lo == hi)
        return t ? t : make(z, 0, 0, k);
    int mid = lo + (hi - lo) / 2, l = z->node[t].l, r = z->node[t].r;
    if (k <= mid)
        l = tree_add(z, l, k, lo, mid);
    else
        r = tree_add(z, r, k, mid + 1, hi);
    return make(z, l, r, -1);
}

/* the summary of tree t's ranks in [qlo, qhi] (t over [lo, hi]) */
static olla_upd_znode tree_fold(const olla_upd_zset *z, int t, int lo, int hi, int qlo, int qhi)
{
    if (t == 0 || qhi < z->node[t].first || z->node[t].last < qlo)
        return z->node[0];
    if (qlo <= z->node[t].first && z->node[t].last <= qhi)
        return z->node[t];
    int mid = lo + (hi - lo) / 2;
    olla_upd_znode a = tree_fold(z, z->node[t].l, lo, mid, qlo, qhi), b = tree_fold(z, z->node[t].r, mid + 1, hi, qlo, qhi), out;
    join(z, &a, &b, &out);
    return out;
}

/* 1 when tree t (over [lo, hi]) holds a rank in [qlo, qhi] */
static int tree_any(const olla_upd_zset *z, int t, int lo, int hi, int qlo, int qhi)
{
    const olla_upd_znode *p = &z->node[t];
    if (t == 0 || qhi < p->first || p->last < qlo)
        return 0;
    if ((qlo <= p->first && p->first <= qhi) || (qlo <= p->last && p->last <= qhi))
        return 1;
    int mid = lo + (hi - lo) / 2; /* first < qlo and qhi < last: inside */
    return tree_any(z, p->l, lo, mid, qlo, qhi) || tree_any(z, p->r, mid + 1, hi, qlo, qhi);
}

/* frees the pool */
void olla_upd_zset_free(olla_upd_zset *z)
{
    free(z->node);
}

/* tree t with rank k added */
int olla_upd_zset_add(olla_upd_zset *z, int t, int k)
{
    return tree_add(z, t, k, 0, z->size - 1);
}

/* the union of trees a and b */
int olla_upd_zset_union(olla_upd_zset *z, int a, int b)
{
    return tree_union(z, a, b, 0, z->size - 1);
}

/* the summary of tree t's ranks in [qlo, qhi] */
olla_upd_znode olla_upd_zset_fold(const olla_upd_zset *z, int t, int qlo, int qhi)
{
    return tree_fold(z, t, 0, z->size - 1, qlo, qhi);
}

/* 1 when tree t holds a rank in [qlo, qhi] */
int olla_upd_zset_any(const olla_upd_zset *z, int t, int qlo, int qhi)
{
    return qlo <= qhi && tree_any(z, t, 0, z->size - 1, qlo, qhi);
}
