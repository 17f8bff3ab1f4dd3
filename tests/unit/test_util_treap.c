/* The ordered set of util/olla_treap.h against a sorted array: random
 * inserts and erases under keys that repeat (ties broken by index), the
 * in-order walk, first and last, and splits at a key with the two sides
 * dropped from either end and joined again. */
#include <stdint.h>
#include <stdlib.h>

#include "olla_test.h"
#include "util/olla_treap.h"

enum { MAX_NODES = 300, ROUNDS = 40 };

typedef struct {
    int64_t key[MAX_NODES];
} keys;

/* (key, index) order: the keys repeat, the pairs do not */
static int below(const void *ctx, int u, int k)
{
    const keys *c = ctx;
    return c->key[u] != c->key[k] ? c->key[u] < c->key[k] : u < k;
}

/* the tree at u in order into out; returns the count (or -1 past cap) */
static int walk(const olla_treap *t, int u, int *out, int n, int cap)
{
    if (u < 0)
        return n;
    n = walk(t, t->left[u], out, n, cap);
    if (n < 0 || n >= cap)
        return -1;
    out[n++] = u;
    return walk(t, t->right[u], out, n, cap);
}

/* the members (in[i] != 0) in (key, index) order, by insertion sort */
static int sorted_members(const keys *c, const unsigned char *in, int n, int *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!in[i])
            continue;
        int j = m++;
        while (j > 0 && below(c, i, out[j - 1])) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
    }
    return m;
}

static int same(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

OLLA_TEST(test_treap_against_sorted_array)
{
    static keys c;
    static unsigned char in[MAX_NODES];
    static int want[MAX_NODES], got[MAX_NODES];
    unsigned s = 12345;
    int bad_order = 0, bad_ends = 0, bad_split = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int n = 1 + round * (MAX_NODES - 1) / (ROUNDS - 1), spread = 1 + round % 7;
        olla_treap t;
        olla_treap_init(&t);
        OLLA_CHECK(olla_treap_reserve(&t, (size_t)n / 2 + 1) && olla_treap_reserve(&t, (size_t)n));
        for (int i = 0; i < n; i++) {
            s = s * 1103515245u + 12345u;
            c.key[i] = (int64_t)((s >> 16) % (unsigned)spread) - 2;
            in[i] = 0;
        }
        for (int op = 0; op < 4 * n; op++) {
            s = s * 1103515245u + 12345u;
            int i = (int)((s >> 16) % (unsigned)n);
            if (in[i]) {
                olla_treap_erase(&t, i, below, &c);
                in[i] = 0;
            } else {
                olla_treap_insert(&t, i, below, &c);
                in[i] = 1;
            }
            int nw = sorted_members(&c, in, n, want), ng = walk(&t, t.root, got, 0, MAX_NODES);
            bad_order += !same(want, nw, got, ng);
            if (nw > 0)
                bad_ends += olla_treap_first(&t, t.root) != want[0] || olla_treap_last(&t, t.root) != want[nw - 1];
            if (op % 17 == 0 && nw > 0) { /* split at a member's key, trim both sides, join */
                int k = want[(s >> 8) % (unsigned)nw], l, r, nl = 0;
                while (nl < nw && below(&c, want[nl], k))
                    nl++;
                olla_treap_split(&t, t.root, k, below, &c, &l, &r);
                int gl = walk(&t, l, got, 0, MAX_NODES);
                bad_split += !same(want, nl, got, gl);
                if (l >= 0) {
                    in[olla_treap_last(&t, l)] = 0;
                    l = olla_treap_drop_last(&t, l);
                }
                if (r >= 0) {
                    in[olla_treap_first(&t, r)] = 0;
                    r = olla_treap_drop_first(&t, r);
                }
                t.root = olla_treap_merge(&t, l, r);
            }
        }
        olla_treap_free(&t);
        OLLA_CHECK(t.root == -1 && t.cap == 0);
    }
    OLLA_CHECK(bad_order == 0);
    OLLA_CHECK(bad_ends == 0);
    OLLA_CHECK(bad_split == 0);
}

/* the same calls build the same tree: priorities come from one sequence */
OLLA_TEST(test_treap_same_tree_every_run)
{
    static keys c;
    olla_treap a, b;
    olla_treap_init(&a);
    olla_treap_init(&b);
    OLLA_CHECK(olla_treap_reserve(&a, 64) && olla_treap_reserve(&b, 10) && olla_treap_reserve(&b, 64));
    for (int i = 0; i < 64; i++) {
        c.key[i] = (i * 37) % 11;
        olla_treap_insert(&a, i, below, &c);
        olla_treap_insert(&b, i, below, &c);
    }
    int same_shape = a.root == b.root;
    for (int i = 0; i < 64; i++)
        same_shape &= a.left[i] == b.left[i] && a.right[i] == b.right[i] && a.pri[i] == b.pri[i];
    OLLA_CHECK(same_shape);
    olla_treap_free(&a);
    olla_treap_free(&b);
}

OLLA_TEST_MAIN(OLLA_T(test_treap_against_sorted_array), OLLA_T(test_treap_same_tree_every_run))
