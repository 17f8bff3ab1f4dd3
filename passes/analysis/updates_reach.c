/* olla-onnx: the updates each node reaches, as runs of ranks, and what the
 * early-update search (analysis_updates.c) builds on them once per graph.
 *
 * The walk asks two things of every node it meets: is it an ancestor of
 * the update (in the graph with the edges added so far), and could its
 * descendants hold a candidate above the best found so far. Both are
 * answered from the updates a node reaches in the graph as given. The
 * updates are ranked in the order a depth-first search finishes them
 * (deepest reader first), so that the updates a node reaches form a few
 * runs of consecutive ranks, within [lo, hi]; a node with more than
 * OLLA_UPD_RUNS runs is "unknown".
 *
 * The ancestors of the update are the ancestors of a small set Z of
 * updates: the update itself and, again and again, every update whose added
 * edge points at an ancestor. A known node is an ancestor when a rank of Z
 * lies in one of its runs (unknown nodes ask the lazy ancestor search of
 * updates_order.c). A node that is no ancestor reaches only updates outside
 * Z, so each of its runs lies in a gap between ranks of Z. So the best
 * candidate below a node s is at most the highest level among: the known
 * nodes whose longest run lies in a gap between ranks of Z inside [lo, hi]
 * of s (a query on a merge-sort tree of those runs), and s's descendants
 * that reach no update or are unknown (kept per node). Candidates are only
 * ever met as readers: nodes with no predecessor are left out, and so,
 * when one node t reaches every update, are the nodes that descend from no
 * ancestor of t.
 *
 * Ranks know nothing of reachability: a node whose run lies in the right
 * gap need not descend from s. The labels of the same postorder do: a node
 * x descends from s only if x's place in it lies between the lowest place
 * among s's descendants and s's own, and so does x's lowest. The search
 * asks them of the few nodes of one level (kept by level, each level by
 * place) before it opens a subtree to look for that level. */
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/updates_internal.h"
#include "util/olla_grow.h"

/* frees the summary's arrays */
void olla_upd_reach_free(olla_upd_reach *r)
{
    free(r->rank);
    free(r->lo);
    free(r->hi);
    free(r->nr);
    free(r->run_at);
    free(r->runs);
    free(r->in_region);
    free(r->nu);
    free(r->ix);
    free(r->pt_lo);
    free(r->tree_hi);
    free(r->tree_top);
    free(r->first_k);
    free(r->first_s);
    free(r->up);
    free(r->post);
    free(r->low);
    free(r->lvl_start);
    free(r->lvl_node);
}

/* rising */
static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* post[] receives the nodes in the order a depth-first search finishes them
 * (a reverse topological order), the readers of a node taken deepest first
 * (highest backward level), so that the updates below a long chain are
 * finished before those beside it; updates are ranked in that order. rd:
 * scratch of the graph's reader slots; scratch: three arrays of n + 1. */
static void reach_postorder(const olla_dag *dag, olla_upd_reach *r, const int *bwd, int *post, uint64_t *rd,
                            int *const scratch[3])
{
    int *rd_start = scratch[0], *stk = scratch[1], *pos = scratch[2];
    int n = dag->n_nodes, np = 0, nr = 0, m = 0;
    signed char *seen = r->nr; /* scratch until the runs are made */
    memset(seen, 0, (size_t)n + 1);
    for (int y = 0; y < n; y++) { /* each key: the level (highest first), then the reader */
        rd_start[y] = m;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++, m++)
                rd[m] = (uint64_t)(INT32_MAX - bwd[dag->sink_list[q]]) << 32 | (uint64_t)(unsigned)dag->sink_list[q];
        }
        qsort(rd + rd_start[y], (size_t)(m - rd_start[y]), sizeof *rd, by_u64);
    }
    rd_start[n] = m;
    for (int root = 0; root < n; root++) {
        if (seen[root])
            continue;
        int sp = 0;
        seen[root] = 1;
        stk[sp] = root, pos[sp++] = rd_start[root];
        while (sp > 0) {
            int y = stk[sp - 1];
            while (pos[sp - 1] < rd_start[y + 1] && seen[(uint32_t)rd[pos[sp - 1]]])
                pos[sp - 1]++;
            if (pos[sp - 1] < rd_start[y + 1]) {
                int w = (int)(uint32_t)rd[pos[sp - 1]++];
                seen[w] = 1;
                stk[sp] = w, pos[sp++] = rd_start[w];
                continue;
            }
            post[np++] = y;
            r->rank[y] = olla_upd_is_update(dag, y) ? nr++ : -1;
            sp--;
        }
    }
    r->n_upd = nr;
}

/* by lo */
static int by_lo(const void *a, const void *b)
{
    const olla_upd_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* sorts parts[0..np) by lo (few: by insertion) */
static void sort_by_lo(olla_upd_range *parts, int np)
{
    for (int i = 1; i < np; i++)
        for (int j = i; j > 0 && parts[j - 1].lo > parts[j].lo; j--) {
            olla_upd_range t = parts[j];
            parts[j] = parts[j - 1];
            parts[j - 1] = t;
        }
}

/* the union of parts[0..np) (sorted by lo), consecutive ranks joined, as
 * (lo, hi) pairs into out; their number, -1 when more than OLLA_UPD_RUNS */
static int merge_runs(const olla_upd_range *parts, int np, int *out)
{
    int nr = 0;
    for (int i = 0; i < np; i++) {
        if (nr > 0 && parts[i].lo <= out[2 * nr - 1] + 1) {
            out[2 * nr - 1] = parts[i].hi > out[2 * nr - 1] ? parts[i].hi : out[2 * nr - 1];
            continue;
        }
        if (nr == OLLA_UPD_RUNS)
            return -1;
        out[2 * nr] = parts[i].lo;
        out[2 * nr + 1] = parts[i].hi;
        nr++;
    }
    return nr;
}

/* lo, hi, runs, nu and ix of node y from those of its readers; parts:
 * room for OLLA_UPD_RUNS runs per reader, and one (0: out of memory) */
static int reach_node(const olla_dag *dag, olla_upd_reach *r, const int *bwd, int y, olla_upd_range *parts)
{
    int np = 0, known = 1, nu = -1, ix = -1, lo = r->rank[y] >= 0 ? r->rank[y] : 1, hi = r->rank[y], one[2];
    int out[2 * OLLA_UPD_RUNS];
    if (r->rank[y] >= 0)
        parts[np++] = (olla_upd_range){r->rank[y], r->rank[y], -1};
    for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
        int e = dag->out_list[k];
        for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++) {
            int w = dag->sink_list[q];
            if (r->lo[w] > r->hi[w])
                nu = bwd[w] > nu ? bwd[w] : nu;
            else if (lo > hi)
                lo = r->lo[w], hi = r->hi[w];
            else
                lo = r->lo[w] < lo ? r->lo[w] : lo, hi = r->hi[w] > hi ? r->hi[w] : hi;
            if (r->nr[w] < 0) {
                known = 0;
                ix = bwd[w] > ix ? bwd[w] : ix;
            }
            const int *run = known && r->nr[w] > 0 ? olla_upd_reach_pairs(r, w, one) : NULL;
            for (int i = 0; run && i < r->nr[w]; i++)
                parts[np++] = (olla_upd_range){run[2 * i], run[2 * i + 1], w};
            nu = r->nu[w] > nu ? r->nu[w] : nu;
            ix = r->ix[w] > ix ? r->ix[w] : ix;
        }
    }
    r->lo[y] = lo, r->hi[y] = hi, r->nu[y] = nu, r->ix[y] = ix;
    if (!known) {
        r->nr[y] = -1;
        return 1;
    }
    if (np <= 16)
        sort_by_lo(parts, np);
    else
        qsort(parts, (size_t)np, sizeof *parts, by_lo);
    int nr = merge_runs(parts, np, out);
    r->nr[y] = (signed char)nr;
    if (nr <= 1)
        return 1;
    int *pool = olla_grow(r->runs, &r->runs_cap, (size_t)r->n_runs + 2 * (size_t)nr, sizeof(int));
    if (!pool)
        return 0;
    r->runs = pool;
    r->run_at[y] = r->n_runs;
    memcpy(pool + r->n_runs, out, 2 * (size_t)nr * sizeof(int));
    r->n_runs += 2 * nr;
    return 1;
}

/* the runs of node y (nr[y] >= 0) into out; their number */
int olla_upd_reach_runs(const olla_upd_reach *r, int y, olla_upd_range *out)
{
    int one[2];
    const int *run = r->nr[y] > 0 ? olla_upd_reach_pairs(r, y, one) : NULL;
    for (int i = 0; i < r->nr[y]; i++)
        out[i] = (olla_upd_range){run[2 * i], run[2 * i + 1], y};
    return r->nr[y];
}

/* in_region: when a node t reaches every update (exactly), the nodes that
 * descend from t's ancestors (the latest such t by forward level); else all.
 * Uses stack (n nodes) as scratch. */
static void reach_region(const olla_dag *dag, olla_upd_reach *r, const int *fwd, int *stack)
{
    int n = dag->n_nodes, t = -1, sp = 0;
    for (int y = 0; y < n; y++)
        if (r->n_upd > 0 && r->nr[y] == 1 && r->lo[y] == 0 && r->hi[y] == r->n_upd - 1 && (t < 0 || fwd[y] > fwd[t]))
            t = y;
    memset(r->in_region, t < 0, (size_t)n + 1);
    if (t < 0)
        return;
    unsigned char *up = r->in_region; /* 2: an ancestor of t; then 1: in the region */
    up[t] = 2;
    stack[sp++] = t;
    while (sp > 0) {
        int y = stack[--sp];
        for (int k = dag->in_start[y]; k < dag->in_start[y + 1]; k++) {
            int p = dag->producer[dag->in_list[k]];
            if (up[p] != 2)
                up[p] = 2, stack[sp++] = p;
        }
    }
    for (int y = 0; y < n; y++)
        if (up[y] == 2)
            stack[sp++] = y;
    while (sp > 0) {
        int y = stack[--sp];
        up[y] = 1;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
                if (up[dag->sink_list[q]] == 0)
                    up[dag->sink_list[q]] = 3, stack[sp++] = dag->sink_list[q];
        }
    }
}

typedef struct {
    int lo, hi, level;
} rank_point;

/* 1 when y is a point of the tree: in the region, with a predecessor, known
 * and reaching at least one update */
static int reach_point(const olla_dag *dag, const olla_upd_reach *r, int y)
{
    return r->in_region[y] && r->nr[y] > 0 && dag->in_start[y] < dag->in_start[y + 1];
}

/* y's point: its longest run (when y is no ancestor of the update, each of
 * its runs lies in a gap of Z, the longest too) */
static rank_point point_of(const olla_upd_reach *r, int y, int level)
{
    int one[2], best = 0;
    const int *run = olla_upd_reach_pairs(r, y, one);
    for (int i = 1; i < r->nr[y]; i++)
        if (run[2 * i + 1] - run[2 * i] > run[2 * best + 1] - run[2 * best])
            best = i;
    return (rank_point){run[2 * best], run[2 * best + 1], level};
}

/* by lo, then by hi */
static int by_point_lo(const void *a, const void *b)
{
    const rank_point *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* the merge-sort tree over the points */
static int reach_tree(const olla_dag *dag, olla_upd_reach *r, const int *bwd)
{
    int n = dag->n_nodes, np = 0;
    size_t most = (size_t)n + 1;
    rank_point *pt = malloc(most * sizeof *pt), *tmp = malloc(most * sizeof *tmp);
    if (!pt || !tmp) {
        free(pt);
        free(tmp);
        return 0;
    }
    for (int y = 0; y < n; y++)
        if (reach_point(dag, r, y))
            pt[np++] = point_of(r, y, bwd[y]);
    qsort(pt, (size_t)np, sizeof *pt, by_point_lo);
    int levels = 1;
    while ((1 << (levels - 1)) < np)
        levels++;
    r->np = np, r->levels = levels;
    r->pt_lo = malloc(((size_t)np + 1) * sizeof(int));
    r->tree_hi = malloc(((size_t)np * (size_t)levels + 1) * sizeof(int));
    r->tree_top = malloc(((size_t)np * (size_t)levels + 1) * sizeof(int));
    if (!r->pt_lo || !r->tree_hi || !r->tree_top) {
        free(pt);
        free(tmp);
        return 0;
    }
    for (int i = 0; i < np; i++)
        r->pt_lo[i] = pt[i].lo;
    for (int k = 0; k < levels; k++) {
        int width = 1 << k;
        for (int s = 0; s < np; s += width) { /* block [s, e) sorted by hi (merging the halves) */
            int e = s + width < np ? s + width : np, m = s + width / 2 < e ? s + width / 2 : e;
            int a = s, b = m, o = s;
            while (k > 0 && (a < m || b < e))
                tmp[o++] = b >= e || (a < m && pt[a].hi <= pt[b].hi) ? pt[a++] : pt[b++];
            if (k > 0)
                memcpy(pt + s, tmp + s, (size_t)(e - s) * sizeof *pt);
            for (int i = s; i < e; i++) {
                r->tree_hi[(size_t)k * np + i] = pt[i].hi;
                int prev = i > s ? r->tree_top[(size_t)k * np + i - 1] : -1;
                r->tree_top[(size_t)k * np + i] = pt[i].level > prev ? pt[i].level : prev;
            }
        }
    }
    free(pt);
    free(tmp);
    return 1;
}


/* the highest level among the points whose range lies in [a, b] (-1: none) */
int olla_upd_reach_query(const olla_upd_reach *r, int a, int b)
{
    if (a > b || r->np == 0)
        return -1;
    int lo = 0, hi = r->np; /* the first point with pt_lo >= a */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->pt_lo[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    int best = -1;
    for (int i = lo; i < r->np;) {
        int k = i == 0 ? r->levels - 1 : __builtin_ctz((unsigned)i);
        if (k > r->levels - 1)
            k = r->levels - 1;
        int e = i + (1 << k) < r->np ? i + (1 << k) : r->np;
        const int *h = r->tree_hi + (size_t)k * r->np;
        int l = i, u = e; /* the first entry of the block with hi > b */
        while (l < u) {
            int mid = l + (u - l) / 2;
            if (h[mid] <= b)
                l = mid + 1;
            else
                u = mid;
        }
        if (l > i && r->tree_top[(size_t)k * r->np + l - 1] > best)
            best = r->tree_top[(size_t)k * r->np + l - 1];
        i = e;
    }
    return best;
}

/* first readers and their jumps (0: out of memory) */
static int reach_first(const olla_dag *dag, olla_upd_reach *r)
{
    int n = dag->n_nodes, lv = 1;
    while ((1 << lv) < n)
        lv++;
    r->up_levels = lv;
    r->first_k = malloc(((size_t)n + 1) * sizeof(int));
    r->first_s = malloc(((size_t)n + 1) * sizeof(int));
    r->up = malloc(((size_t)n * (size_t)lv + 1) * sizeof(int));
    if (!r->first_k || !r->first_s || !r->up)
        return 0;
    for (int y = 0; y < n; y++) {
        r->up[y] = -1;
        for (int k = dag->out_start[y]; r->up[y] < 0 && k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            if (dag->sink_start[e] < dag->sink_start[e + 1])
                r->up[y] = dag->sink_list[dag->sink_start[e]], r->first_k[y] = k, r->first_s[y] = dag->sink_start[e];
        }
    }
    for (int l = 1; l < lv; l++)
        for (int y = 0; y < n; y++) {
            int h = r->up[(size_t)(l - 1) * n + y];
            r->up[(size_t)l * n + y] = h < 0 ? -1 : r->up[(size_t)(l - 1) * n + h];
        }
    return 1;
}


/* the labels from the postorder post[0..n), and the nodes by level (0: out
 * of memory) */
static int reach_labels(const olla_dag *dag, olla_upd_reach *r, const int *bwd, const int *post)
{
    int n = dag->n_nodes, top = 0;
    for (int y = 0; y < n; y++)
        top = bwd[y] > top ? bwd[y] : top;
    r->max_lvl = top;
    r->post = malloc(((size_t)n + 1) * sizeof(int));
    r->low = malloc(((size_t)n + 1) * sizeof(int));
    r->lvl_start = calloc((size_t)top + 3, sizeof(int));
    r->lvl_node = malloc(((size_t)n + 1) * sizeof(int));
    int *fill = malloc(((size_t)top + 2) * sizeof(int));
    if (!r->post || !r->low || !r->lvl_start || !r->lvl_node || !fill) {
        free(fill);
        return 0;
    }
    for (int i = 0; i < n; i++) { /* readers come first in the postorder */
        int y = post[i];
        r->post[y] = r->low[y] = i;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++) {
            int e = dag->out_list[k];
            for (int q = dag->sink_start[e]; q < dag->sink_start[e + 1]; q++)
                r->low[y] = r->low[dag->sink_list[q]] < r->low[y] ? r->low[dag->sink_list[q]] : r->low[y];
        }
        r->lvl_start[bwd[y] + 1]++;
    }
    for (int l = 0; l <= top; l++)
        r->lvl_start[l + 1] += r->lvl_start[l];
    memcpy(fill, r->lvl_start, ((size_t)top + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        r->lvl_node[fill[bwd[post[i]]]++] = post[i];
    free(fill);
    return 1;
}

/* the nodes of level l whose post lies in s's label, as [*a, *b) of lvl_node */
void olla_upd_reach_level(const olla_upd_reach *r, int s, int l, int *a, int *b)
{
    int lo = r->lvl_start[l], hi = r->lvl_start[l + 1];
    for (int u = hi; lo < u;) { /* the first with post >= low[s] */
        int mid = lo + (u - lo) / 2;
        if (r->post[r->lvl_node[mid]] < r->low[s])
            lo = mid + 1;
        else
            u = mid;
    }
    *a = lo;
    for (int u = hi; lo < u;) { /* the first with post > post[s] */
        int mid = lo + (u - lo) / 2;
        if (r->post[r->lvl_node[mid]] <= r->post[s])
            lo = mid + 1;
        else
            u = mid;
    }
    *b = lo;
}

/* the summary of dag: ranks, runs, region, tree, first readers and labels
 * (0: out of memory) */
int olla_upd_reach_build(const olla_dag *dag, const int *fwd, const int *bwd, olla_upd_reach *r)
{
    int n = dag->n_nodes, most = 1;
    size_t sz = (size_t)n + 1, ne = (size_t)dag->sink_start[dag->n_tensors] + 2;
    memset(r, 0, sizeof *r);
    for (int y = 0; y < n; y++) {
        int readers = 0;
        for (int k = dag->out_start[y]; k < dag->out_start[y + 1]; k++)
            readers += dag->sink_start[dag->out_list[k] + 1] - dag->sink_start[dag->out_list[k]];
        most = readers > most ? readers : most;
    }
    r->rank = malloc(sz * sizeof(int));
    r->lo = malloc(sz * sizeof(int));
    r->hi = malloc(sz * sizeof(int));
    r->nr = malloc(sz);
    r->run_at = malloc(sz * sizeof(int));
    r->in_region = malloc(sz);
    r->nu = malloc(sz * sizeof(int));
    r->ix = malloc(sz * sizeof(int));
    int *post = malloc(sz * sizeof(int)), *sv = malloc(sz * sizeof(int)), *sk = malloc(sz * sizeof(int));
    int *ss = malloc(sz * sizeof(int));
    olla_upd_range *parts = malloc(((size_t)most * OLLA_UPD_RUNS + 1) * sizeof *parts);
    uint64_t *rd = malloc(ne * sizeof *rd);
    int ok = r->rank && r->lo && r->hi && r->nr && r->run_at && r->in_region && r->nu && r->ix && post && sv && sk &&
             ss && parts && rd;
    if (ok) {
        int *const scratch[3] = {sk, sv, ss};
        reach_postorder(dag, r, bwd, post, rd, scratch);
        for (int i = 0; ok && i < n; i++)
            ok = reach_node(dag, r, bwd, post[i], parts);
    }
    if (ok) {
        reach_region(dag, r, fwd, sv);
        ok = reach_tree(dag, r, bwd) && reach_first(dag, r) && reach_labels(dag, r, bwd, post);
    }
    free(post);
    free(sv);
    free(sk);
    free(ss);
    free(parts);
    free(rd);
    return ok;
}
