/* olla-onnx: the offset-order search's candidates (place_offset_search.c)
 * kept in their order from node to node instead of being gathered and
 * sorted at each: a treap over the buffers still to place of the part
 * being searched, ordered by (height, rank), each subtree holding the
 * lowest top (height + size) of its buffers.
 *
 * Invariants: a buffer is in at most one tree (the part's; a node that
 * splits into parts moves each part's buffers into a tree of its own and
 * back); its key is the height th[] it joined under, which the search
 * brings up to date (olla_oset_rekey) only for the heights a child that it
 * recurses into raised, and brings back before undoing them, so the tree
 * at a node is the same on entry and on return. Ranks are distinct within
 * a part, so keys are. Priorities are a hash of the buffer's index: the
 * same keys always make the same tree, and every operation charges
 * c->work the tree nodes it visits, the same on every run.
 *
 * Beside it, the bytes still to place of every section in a segment tree
 * whose nodes hold an added value and the most of their subtree (added
 * values included): a buffer placed or taken back adds to the range of its
 * sections at once, and the room checks ask for the most in a range, or for
 * the sections above a value, in O(log sections) nodes a section.
 *
 * And each section list with its buffers still to place at its front: a
 * buffer placed is swapped behind the front of each of its sections, and
 * taken back (last placed, first taken back) it is the first entry behind
 * the front, which grows again by one. */
#include <stdint.h>

#include "solver/place_search_state.h"
#include "util/olla_arith.h"

/* ---- keys and priorities ---- */

/* Buffer x's key is below buffer y's. */
static int key_below(const sctx *c, int x, int y)
{
    if (c->th[x] != c->th[y])
        return c->th[x] < c->th[y];
    if (c->rank[x] != c->rank[y])
        return c->rank[x] < c->rank[y];
    return x < y;
}

/* Buffer x's key is below the key (h, rank). */
static int key_below_at(const sctx *c, int x, int64_t h, int rank)
{
    return c->th[x] < h || (c->th[x] == h && c->rank[x] < rank);
}

/* Node x goes above node y in the tree. */
static int pri_above(const sctx *c, int x, int y)
{
    return c->tpri[x] != c->tpri[y] ? c->tpri[x] > c->tpri[y] : x < y;
}

/* The lowest top in the subtree at x (INT64_MAX when empty). */
static int64_t sub_min(const sctx *c, int x)
{
    return x < 0 ? INT64_MAX : c->tmin[x];
}

/* Node x's lowest top from its own and its children's. */
static void pull(sctx *c, int x)
{
    int64_t m = c->th[x] + c->it[x].size, l = sub_min(c, c->tl[x]), r = sub_min(c, c->tr[x]);
    c->tmin[x] = m < l ? (m < r ? m : r) : (l < r ? l : r);
}

/* ---- the tree's operations ---- */

/* The tree at u split into the keys below x's (*l) and the rest (*r). */
static void split(sctx *c, int u, int x, int *l, int *r)
{
    if (u < 0) {
        *l = *r = -1;
        return;
    }
    c->work += OLLA_SEARCH_UNITS_TREE_NODE;
    if (key_below(c, u, x)) {
        split(c, c->tr[u], x, &c->tr[u], r);
        *l = u;
    } else {
        split(c, c->tl[u], x, l, &c->tl[u]);
        *r = u;
    }
    pull(c, u);
}

/* The trees a and b joined, every key of a below every key of b. */
static int merge(sctx *c, int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    c->work += OLLA_SEARCH_UNITS_TREE_NODE;
    if (pri_above(c, a, b)) {
        c->tr[a] = merge(c, c->tr[a], b);
        pull(c, a);
        return a;
    }
    c->tl[b] = merge(c, a, c->tl[b]);
    pull(c, b);
    return b;
}

/* The tree at u with x (not in it) inserted under its key th[x]. */
static int insert_at(sctx *c, int u, int x)
{
    c->work += OLLA_SEARCH_UNITS_TREE_NODE;
    if (u < 0 || pri_above(c, x, u)) {
        split(c, u, x, &c->tl[x], &c->tr[x]);
        pull(c, x);
        return x;
    }
    if (key_below(c, x, u))
        c->tl[u] = insert_at(c, c->tl[u], x);
    else
        c->tr[u] = insert_at(c, c->tr[u], x);
    pull(c, u);
    return u;
}

/* The tree at u without x (in it, under its key th[x]). */
static int erase_at(sctx *c, int u, int x)
{
    c->work += OLLA_SEARCH_UNITS_TREE_NODE;
    if (u == x)
        return merge(c, c->tl[x], c->tr[x]);
    if (key_below(c, x, u))
        c->tl[u] = erase_at(c, c->tl[u], x);
    else
        c->tr[u] = erase_at(c, c->tr[u], x);
    pull(c, u);
    return u;
}

void olla_oset_insert(sctx *c, int x)
{
    c->th[x] = c->h[x];
    c->tl[x] = c->tr[x] = -1;
    c->troot = insert_at(c, c->troot, x);
}

void olla_oset_erase(sctx *c, int x)
{
    c->troot = erase_at(c, c->troot, x);
}

void olla_oset_rekey(sctx *c, int x, int64_t h)
{
    if (c->th[x] == h)
        return;
    c->troot = erase_at(c, c->troot, x);
    c->th[x] = h;
    c->tl[x] = c->tr[x] = -1;
    c->troot = insert_at(c, c->troot, x);
}

int64_t olla_oset_min_top(const sctx *c)
{
    return sub_min(c, c->troot);
}

int olla_oset_first_at(sctx *c, int64_t h, int rank)
{
    int best = -1;
    for (int u = c->troot; u >= 0;) {
        c->work += OLLA_SEARCH_UNITS_TREE_NODE;
        if (key_below_at(c, u, h, rank)) {
            u = c->tr[u];
        } else {
            best = u;
            u = c->tl[u];
        }
    }
    return best;
}

int olla_oset_next(sctx *c, int x)
{
    int best = -1;
    for (int u = c->troot; u >= 0;) {
        c->work += OLLA_SEARCH_UNITS_TREE_NODE;
        if (u == x || key_below(c, u, x)) {
            u = c->tr[u];
        } else {
            best = u;
            u = c->tl[u];
        }
    }
    return best;
}

/* ---- building ---- */

void olla_oset_priorities(sctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        uint64_t w = (uint64_t)i;
        c->tpri[i] = (uint32_t)olla_hash_words(&w, 1);
    }
}

int olla_oset_build(sctx *c, const order_key *order, size_t m)
{
    int *stack = c->cand; /* room for n: the candidate stack is unused before a run */
    size_t top = 0;
    for (size_t k = 0; k < m; k++) {
        int x = order[k].idx, last = -1;
        c->th[x] = c->h[x];
        if (k > 0 && !key_below(c, order[k - 1].idx, x))
            return -1;
        c->tr[x] = -1;
        while (top > 0 && pri_above(c, x, stack[top - 1])) {
            last = stack[--top];
            pull(c, last);
        }
        c->tl[x] = last;
        if (top > 0)
            c->tr[stack[top - 1]] = x;
        stack[top++] = x;
    }
    while (top > 1)
        pull(c, stack[--top]);
    if (top == 1)
        pull(c, stack[0]);
    c->troot = m > 0 ? stack[0] : -1;
    return 0;
}

/* ---- the sections' bytes still to place ---- */

void olla_oset_sections(sctx *c)
{
    size_t L = c->sleaves;
    for (size_t k = 0; k < 2 * L; k++)
        c->sadd[k] = c->smax[k] = 0;
    for (size_t j = 0; j < c->nsec; j++)
        c->smax[L + j] = c->rem[j];
    for (size_t k = L - 1; k >= 1; k--)
        c->smax[k] = c->smax[2 * k] > c->smax[2 * k + 1] ? c->smax[2 * k] : c->smax[2 * k + 1];
}

/* v added over [a, b) in the subtree at k, which covers [l, r). */
static void seg_add(sctx *c, size_t k, size_t l, size_t r, const size_t ab[2], int64_t v)
{
    c->work++;
    if (ab[0] <= l && r <= ab[1]) {
        c->sadd[k] += v;
        c->smax[k] += v;
        return;
    }
    size_t m = (l + r) / 2;
    if (ab[0] < m)
        seg_add(c, 2 * k, l, m, ab, v);
    if (ab[1] > m)
        seg_add(c, 2 * k + 1, m, r, ab, v);
    int64_t x = c->smax[2 * k], y = c->smax[2 * k + 1];
    c->smax[k] = (x > y ? x : y) + c->sadd[k];
}

void olla_oset_add(sctx *c, int a, int b, int64_t v)
{
    if (a < b)
        seg_add(c, 1, 0, c->sleaves, (const size_t[2]){(size_t)a, (size_t)b}, v);
}

/* The most over [a, b) in the subtree at k, which covers [l, r), less the
 * values added above k. */
static int64_t seg_most(sctx *c, size_t k, size_t l, size_t r, const size_t ab[2])
{
    c->work++;
    if (ab[0] <= l && r <= ab[1])
        return c->smax[k];
    size_t m = (l + r) / 2;
    int64_t x = ab[0] < m ? seg_most(c, 2 * k, l, m, ab) : INT64_MIN;
    int64_t y = ab[1] > m ? seg_most(c, 2 * k + 1, m, r, ab) : INT64_MIN;
    return (x > y ? x : y) + c->sadd[k];
}

int64_t olla_oset_most(sctx *c, int a, int b)
{
    if (a >= b)
        return 0;
    return seg_most(c, 1, 0, c->sleaves, (const size_t[2]){(size_t)a, (size_t)b});
}

/* What olla_oset_each_above looks for: the sections of [a, b) above a
 * value, each passed to ok. */
typedef struct seg_find {
    size_t ab[2];
    int64_t above;
    int (*ok)(sctx *c, int j);
} seg_find;

/* The sections q asks for in the subtree at k, which covers [l, r), with
 * acc added above k, each passed to q->ok: 0 as soon as one fails. */
static int seg_each(sctx *c, size_t k, size_t l, size_t r, const seg_find *q, int64_t acc)
{
    c->work++;
    if (c->smax[k] + acc <= q->above)
        return 1;
    if (r - l == 1)
        return q->ok(c, (int)l);
    size_t m = (l + r) / 2;
    acc += c->sadd[k];
    if (q->ab[0] < m && !seg_each(c, 2 * k, l, m, q, acc))
        return 0;
    return q->ab[1] <= m || seg_each(c, 2 * k + 1, m, r, q, acc);
}

int olla_oset_each_above(sctx *c, int a, int b, int64_t above, int (*ok)(sctx *c, int j))
{
    if (a >= b)
        return 1;
    const seg_find q = {{(size_t)a, (size_t)b}, above, ok};
    return seg_each(c, 1, 0, c->sleaves, &q, 0);
}

/* ---- the fronts of the section lists ---- */

void olla_oset_unlist(sctx *c, int b)
{
    c->work += c->se[b] - c->sb[b];
    for (int j = c->sb[b]; j < c->se[b]; j++) {
        int64_t s = c->sec_start[j];
        int *pb = &c->epos[c->ebase[b] + j - c->sb[b]], q = --c->ucnt[j], p = *pb;
        int x = c->sec_buf[s + q];
        c->sec_buf[s + p] = x;
        c->sec_buf[s + q] = b;
        c->epos[c->ebase[x] + j - c->sb[x]] = p;
        *pb = q;
    }
}

void olla_oset_relist(sctx *c, int b)
{
    c->work += c->se[b] - c->sb[b];
    for (int j = c->sb[b]; j < c->se[b]; j++)
        c->ucnt[j]++; /* b is the first entry past the front */
}
