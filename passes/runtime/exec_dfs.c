/* olla-onnx: ONNX Runtime's depth-first order with chosen choices, and the
 * listing that makes ORT take them (olla_exec_order.h, rules 1-3).
 *
 * The search enters, at every expansion, only the maximal unvisited
 * producers (those that are not an ancestor of another unvisited producer
 * of the node), in key order. Maximality is read from ancestor bitsets of
 * the running ops. The choice points of the last run are kept: they are the
 * index constraints of the listing, and the moves of the order search. */
#include <stdlib.h>
#include <string.h>

#include "passes/runtime/exec_heap.h"
#include "passes/runtime/olla_exec_order.h"

struct olla_exec_dfs {
    const olla_exec_graph *eg;
    int words;
    int *dense;         /* n_ops: index among running ops, -1 when the op does not run */
    uint64_t *anc;      /* n_running rows of words: proper ancestors (dense bits) */
    unsigned char *visited;
    const int64_t *key; /* of the current run */
    /* frames of the iterative search and the children they will enter */
    int *frame_node, *frame_off, *frame_cnt, *frame_next;
    int *child_buf;
    int *cand, *sort_tmp, *leaves;
    /* choice points of the last run: node (-1 = roots), children in CSR */
    int n_points;
    int *point_node, *point_start, *point_children;
};

/* ================================================================
 * Workspace
 * ================================================================ */

void olla_exec_dfs_free(olla_exec_dfs *d)
{
    if (!d)
        return;
    free(d->dense);
    free(d->anc);
    free(d->visited);
    free(d->frame_node);
    free(d->frame_off);
    free(d->frame_cnt);
    free(d->frame_next);
    free(d->child_buf);
    free(d->cand);
    free(d->sort_tmp);
    free(d->leaves);
    free(d->point_node);
    free(d->point_start);
    free(d->point_children);
    free(d);
}

/* Ancestor bitsets, rows filled in a topological order of the running ops
 * (Kahn over the runtime's edges). Returns 0 on a cycle or out of memory. */
static int build_ancestors(olla_exec_dfs *d)
{
    const olla_exec_graph *eg = d->eg;
    int n = eg->n_ops;
    int *indeg = malloc(((size_t)n + 1) * sizeof(int)), *queue = malloc(((size_t)n + 1) * sizeof(int));
    if (!indeg || !queue) {
        free(indeg);
        free(queue);
        return 0;
    }
    int head = 0, tail = 0;
    for (int v = 0; v < n; v++) {
        indeg[v] = eg->pred_start[v + 1] - eg->pred_start[v];
        if (eg->runs[v] && indeg[v] == 0)
            queue[tail++] = v;
    }
    while (head < tail) {
        int v = queue[head++];
        uint64_t *row = d->anc + (size_t)d->dense[v] * (size_t)d->words;
        for (int j = eg->pred_start[v]; j < eg->pred_start[v + 1]; j++) {
            int p = eg->pred_list[j], dp = d->dense[p];
            const uint64_t *prow = d->anc + (size_t)dp * (size_t)d->words;
            for (int w = 0; w < d->words; w++)
                row[w] |= prow[w];
            row[dp >> 6] |= (uint64_t)1 << (dp & 63);
        }
        for (int j = eg->succ_start[v]; j < eg->succ_start[v + 1]; j++)
            if (--indeg[eg->succ_list[j]] == 0)
                queue[tail++] = eg->succ_list[j];
    }
    free(indeg);
    free(queue);
    return tail == eg->n_running;
}

olla_status olla_exec_dfs_new(const olla_exec_graph *eg, olla_exec_dfs **out, olla_error *err)
{
    *out = NULL;
    if (eg->n_running > OLLA_EXEC_DFS_MAX_RUNNING)
        return olla_error_set(err, OLLA_ERR_INTERNAL,
                              "%d running ops: the depth-first order search handles at most %d", eg->n_running,
                              OLLA_EXEC_DFS_MAX_RUNNING);
    olla_exec_dfs *d = calloc(1, sizeof *d);
    if (!d)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    size_t n = (size_t)eg->n_ops + 1, m = (size_t)eg->pred_start[eg->n_ops] + n;
    d->eg = eg;
    d->words = (eg->n_running + 63) / 64 + 1;
    d->dense = malloc(n * sizeof(int));
    d->anc = calloc((size_t)eg->n_running + 1, (size_t)d->words * sizeof(uint64_t));
    d->visited = calloc(n, 1);
    d->frame_node = malloc(n * sizeof(int));
    d->frame_off = malloc(n * sizeof(int));
    d->frame_cnt = malloc(n * sizeof(int));
    d->frame_next = malloc(n * sizeof(int));
    d->child_buf = malloc(m * sizeof(int));
    d->cand = malloc(n * sizeof(int));
    d->sort_tmp = malloc(n * sizeof(int));
    d->leaves = malloc(n * sizeof(int));
    d->point_node = malloc(n * sizeof(int));
    d->point_start = malloc((n + 1) * sizeof(int));
    d->point_children = malloc(m * sizeof(int));
    if (!d->dense || !d->anc || !d->visited || !d->frame_node || !d->frame_off || !d->frame_cnt ||
        !d->frame_next || !d->child_buf || !d->cand || !d->sort_tmp || !d->leaves || !d->point_node || !d->point_start ||
        !d->point_children) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    }
    int k = 0;
    for (int v = 0; v < eg->n_ops; v++)
        d->dense[v] = eg->runs[v] ? k++ : -1;
    if (!build_ancestors(d)) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INPUT, "the running ops form a cycle; no order exists");
    }
    *out = d;
    return OLLA_OK;
}

/* ================================================================
 * The search
 * ================================================================ */

static int key_less(const olla_exec_dfs *d, int a, int b)
{
    return d->key[a] < d->key[b] || (d->key[a] == d->key[b] && a < b);
}

/* Stable merge sort of a[0..n) by (key, op). */
static void sort_by_key(const olla_exec_dfs *d, int *a, int n)
{
    int *tmp = d->sort_tmp;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = key_less(d, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof(int));
    }
}

static int is_ancestor(const olla_exec_dfs *d, int u, int w)
{
    int du = d->dense[u];
    return (int)((d->anc[(size_t)d->dense[w] * (size_t)d->words + (size_t)(du >> 6)] >> (du & 63)) & 1);
}

/* The maximal unvisited producers of v into out, sorted by key; returns
 * their number. */
static int maximal_producers(olla_exec_dfs *d, int v, int *out)
{
    const olla_exec_graph *eg = d->eg;
    int nu = 0;
    for (int j = eg->pred_start[v]; j < eg->pred_start[v + 1]; j++)
        if (!d->visited[eg->pred_list[j]])
            d->cand[nu++] = eg->pred_list[j];
    int nm = 0;
    for (int i = 0; i < nu; i++) {
        int u = d->cand[i], covered = 0;
        for (int j = 0; j < nu && !covered; j++)
            covered = j != i && is_ancestor(d, u, d->cand[j]);
        if (!covered)
            out[nm++] = u;
    }
    sort_by_key(d, out, nm);
    return nm;
}

static void record_point(olla_exec_dfs *d, int node, const int *children, int n, int *used)
{
    if (n < 2)
        return;
    int p = d->n_points++;
    d->point_node[p] = node;
    d->point_start[p] = *used;
    memcpy(d->point_children + *used, children, (size_t)n * sizeof(int));
    *used += n;
    d->point_start[p + 1] = *used;
}

/* Depth-first from root r; emits into executed at *k. */
static void search_from(olla_exec_dfs *d, int r, int *executed, int *k, int *used)
{
    int sp = 0, buf_top = 0;
    d->visited[r] = 1;
    d->frame_node[0] = r;
    d->frame_off[0] = 0;
    d->frame_cnt[0] = maximal_producers(d, r, d->child_buf);
    d->frame_next[0] = 0;
    record_point(d, r, d->child_buf, d->frame_cnt[0], used);
    buf_top = d->frame_cnt[0];
    sp = 1;
    while (sp > 0) {
        int f = sp - 1;
        if (d->frame_next[f] == d->frame_cnt[f]) {
            executed[(*k)++] = d->frame_node[f];
            buf_top = d->frame_off[f];
            sp--;
            continue;
        }
        int c = d->child_buf[d->frame_off[f] + d->frame_next[f]++];
        d->visited[c] = 1;
        d->frame_node[sp] = c;
        d->frame_off[sp] = buf_top;
        d->frame_cnt[sp] = maximal_producers(d, c, d->child_buf + buf_top);
        d->frame_next[sp] = 0;
        record_point(d, c, d->child_buf + buf_top, d->frame_cnt[sp], used);
        buf_top += d->frame_cnt[sp];
        sp++;
    }
}

void olla_exec_dfs_run(olla_exec_dfs *d, const int64_t *key, int *executed)
{
    const olla_exec_graph *eg = d->eg;
    d->key = key;
    d->n_points = 0;
    d->point_start[0] = 0;
    memset(d->visited, 0, (size_t)eg->n_ops);
    int n_leaves = 0, used = 0, k = 0;
    for (int v = 0; v < eg->n_ops; v++)
        if (eg->runs[v] && eg->succ_start[v] == eg->succ_start[v + 1])
            d->leaves[n_leaves++] = v;
    sort_by_key(d, d->leaves, n_leaves);
    record_point(d, -1, d->leaves, n_leaves, &used);
    for (int i = 0; i < n_leaves; i++)
        search_from(d, d->leaves[i], executed, &k, &used);
}

int olla_exec_dfs_points(const olla_exec_dfs *d)
{
    return d->n_points;
}

int olla_exec_dfs_point(const olla_exec_dfs *d, int p, const int **children, int *node)
{
    *children = d->point_children + d->point_start[p];
    *node = d->point_node[p];
    return d->point_start[p + 1] - d->point_start[p];
}

/* ================================================================
 * The listing
 * ================================================================ */

/* The "before" relation of a listing as CSR: a -> b when a must be listed
 * before b: every dependency, and each entered child after the child
 * entered next at the same point. */
typedef struct before_rel {
    int *start, *adj, *indeg;
} before_rel;

static void each_before(const olla_exec_dfs *d, before_rel *r, int fill)
{
    const olla_exec_graph *eg = d->eg;
    for (int v = 0; v < eg->n_ops; v++)
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++) {
            int a = eg->dep_list[j];
            if (fill)
                r->adj[r->start[a + 1]++] = v;
            else
                r->start[a + 2]++, r->indeg[v]++;
        }
    for (int p = 0; p < d->n_points; p++)
        for (int j = d->point_start[p] + 1; j < d->point_start[p + 1]; j++) {
            int a = d->point_children[j], b = d->point_children[j - 1];
            if (fill)
                r->adj[r->start[a + 1]++] = b;
            else
                r->start[a + 2]++, r->indeg[b]++;
        }
}

/* Kahn over the before relation; ties: lowest rank in reference. */
olla_status olla_exec_dfs_listing(olla_exec_dfs *d, const int *reference, int *listing, olla_error *err)
{
    int n = d->eg->n_ops, m = d->eg->dep_start[n] + d->point_start[d->n_points];
    before_rel r = {calloc((size_t)n + 2, sizeof(int)), malloc(((size_t)m + 1) * sizeof(int)),
                    calloc((size_t)n + 1, sizeof(int))};
    int *rank = malloc(((size_t)n + 1) * sizeof(int)), *by_rank = malloc(((size_t)n + 1) * sizeof(int));
    int64_t *heap = malloc(((size_t)n + 1) * sizeof(int64_t));
    olla_status st = OLLA_OK;
    if (!r.start || !r.adj || !r.indeg || !rank || !by_rank || !heap) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing a listing for ONNX Runtime");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        by_rank[i] = reference ? reference[i] : i;
        rank[by_rank[i]] = i;
    }
    each_before(d, &r, 0);
    for (int v = 0; v < n; v++)
        r.start[v + 2] += r.start[v + 1];
    each_before(d, &r, 1);
    int hn = 0, k = 0;
    for (int v = 0; v < n; v++)
        if (r.indeg[v] == 0)
            exec_heap_push(heap, &hn, rank[v]);
    while (hn > 0) {
        int v = by_rank[exec_heap_pop(heap, &hn)];
        listing[k++] = v;
        for (int j = r.start[v]; j < r.start[v + 1]; j++)
            if (--r.indeg[r.adj[j]] == 0)
                exec_heap_push(heap, &hn, rank[r.adj[j]]);
    }
    if (k != n)
        st = olla_error_set(err, OLLA_ERR_INTERNAL,
                            "the index constraints of a depth-first order are cyclic (%d of %d ops listed)", k, n);
done:
    free(r.start);
    free(r.adj);
    free(r.indeg);
    free(rank);
    free(by_rank);
    free(heap);
    return st;
}

olla_status olla_exec_listing_for(const olla_exec_graph *eg, const int *wanted, int n_wanted, const int *reference,
                                  int *listing, int *found, olla_error *err)
{
    *found = 0;
    int n = eg->n_ops;
    int64_t *key = malloc(((size_t)n + 1) * sizeof(int64_t));
    int *got = malloc(((size_t)n + 1) * sizeof(int)), *check = malloc(((size_t)n + 1) * sizeof(int));
    int *running = malloc(((size_t)n + 1) * sizeof(int));
    olla_exec_dfs *d = NULL;
    olla_status st = OLLA_OK;
    if (!key || !got || !check || !running) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory writing a listing for ONNX Runtime");
        goto done;
    }
    for (int v = 0; v < n; v++)
        key[v] = -1;
    int n_run = 0;
    for (int i = 0; i < n_wanted; i++) {
        int v = wanted[i];
        if (v < 0 || v >= n || key[v] >= 0)
            goto done; /* not a permutation: no listing runs it */
        key[v] = i;
        if (eg->runs[v])
            running[n_run++] = v;
    }
    if (n_run != eg->n_running)
        goto done;
    if ((st = olla_exec_dfs_new(eg, &d, err)) != OLLA_OK)
        goto done;
    olla_exec_dfs_run(d, key, got);
    if (memcmp(got, running, (size_t)n_run * sizeof(int)) != 0)
        goto done;
    if ((st = olla_exec_dfs_listing(d, reference, listing, err)) != OLLA_OK)
        goto done;
    int n_check = 0;
    if ((st = olla_exec_order_of(eg, OLLA_RUNTIME_ORT, listing, check, &n_check, err)) != OLLA_OK)
        goto done;
    if (n_check != n_run || memcmp(check, running, (size_t)n_run * sizeof(int)) != 0) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "the listing written for a depth-first order runs another order");
        goto done;
    }
    *found = 1;
done:
    olla_exec_dfs_free(d);
    free(key);
    free(got);
    free(check);
    free(running);
    return st;
}
