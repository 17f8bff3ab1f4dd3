/* olla-onnx: ONNX Runtime's depth-first order with chosen choices, and the
 * listing that makes ORT take them (olla_exec_order.h, rules 1-3).
 *
 * The listing must be a topological order of the whole file, ops that do
 * not run included; write u < w when the file's edges force u before w. At
 * every expansion (and at the roots) ORT enters the unvisited candidate with
 * the highest index, so the candidate entered next must not be below (<)
 * another unvisited candidate. The search therefore enters, each time, the
 * unvisited candidate with the smallest key that is below no other unvisited
 * candidate. Every ORT order arises so (with keys = positions), and each
 * run's index constraints (the file's edges, and every child entered at a
 * point listed after the child entered next there) decide whether a listing
 * exists: when every u < w comes from the runtime's own edges they always
 * do (rule 3); a Cast removed at load whose producer is a kept Cast adds
 * file edges the runtime does not follow, and can make them cyclic.
 *
 * The relation < is kept as bitsets: row w holds the running ops below w. */
#include <stdlib.h>
#include <string.h>

#include "passes/runtime/exec_heap.h"
#include "passes/runtime/olla_exec_order.h"

struct olla_exec_dfs {
    const olla_exec_graph *eg;
    int words;
    int *dense;         /* n_ops: index among running ops, -1 when the op does not run */
    uint64_t *below;    /* n_ops rows of words: the running ops the file forces before the op */
    uint64_t *scratch;  /* words */
    unsigned char *visited;
    const int64_t *key; /* of the current run */
    /* frames of the iterative search; candidates of a frame in cand_buf
     * [frame_off, frame_off + frame_cnt), blocked[] beside them */
    int *frame_node, *frame_off, *frame_cnt, *frame_first; /* first: no visited candidate before it */
    int *cand_buf;
    unsigned char *blocked;
    int *sort_tmp;
    /* (parent, child) of every entry of the last run, parent -1 = roots */
    int n_log;
    int *log_parent, *log_child;
    /* choice points of the last run: node (-1 = roots), children in CSR */
    int n_points;
    int *point_node, *point_start, *point_children, *point_of;
};

/* ================================================================
 * Workspace
 * ================================================================ */

void olla_exec_dfs_free(olla_exec_dfs *d)
{
    if (!d)
        return;
    free(d->dense);
    free(d->below);
    free(d->scratch);
    free(d->visited);
    free(d->frame_node);
    free(d->frame_off);
    free(d->frame_cnt);
    free(d->frame_first);
    free(d->cand_buf);
    free(d->blocked);
    free(d->sort_tmp);
    free(d->log_parent);
    free(d->log_child);
    free(d->point_node);
    free(d->point_start);
    free(d->point_children);
    free(d->point_of);
    free(d);
}

/* Rows of the relation, filled in a topological order of the file's edges
 * (Kahn over dep lists). Returns 0 on a cycle or out of memory. */
static int build_below(olla_exec_dfs *d)
{
    const olla_exec_graph *eg = d->eg;
    int n = eg->n_ops, m = eg->dep_start[n];
    int *indeg = calloc((size_t)n + 1, sizeof(int)), *queue = malloc(((size_t)n + 1) * sizeof(int));
    int *start = calloc((size_t)n + 2, sizeof(int)), *adj = malloc(((size_t)m + 1) * sizeof(int));
    int ok = indeg && queue && start && adj, head = 0, tail = 0;
    for (int v = 0; ok && v < n; v++)
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++)
            start[eg->dep_list[j] + 2]++, indeg[v]++;
    for (int v = 0; ok && v < n; v++)
        start[v + 2] += start[v + 1];
    for (int v = 0; ok && v < n; v++) {
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++)
            adj[start[eg->dep_list[j] + 1]++] = v;
        if (indeg[v] == 0)
            queue[tail++] = v;
    }
    while (ok && head < tail) {
        int v = queue[head++];
        uint64_t *row = d->below + (size_t)v * (size_t)d->words;
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++) {
            int p = eg->dep_list[j], dp = d->dense[p];
            const uint64_t *prow = d->below + (size_t)p * (size_t)d->words;
            for (int w = 0; w < d->words; w++)
                row[w] |= prow[w];
            if (dp >= 0)
                row[dp >> 6] |= (uint64_t)1 << (dp & 63);
        }
        for (int j = start[v]; j < start[v + 1]; j++)
            if (--indeg[adj[j]] == 0)
                queue[tail++] = adj[j];
    }
    free(indeg);
    free(queue);
    free(start);
    free(adj);
    return ok && tail == n;
}

olla_status olla_exec_dfs_new(const olla_exec_graph *eg, olla_exec_dfs **out, olla_error *err)
{
    *out = NULL;
    if (eg->n_ops > OLLA_EXEC_DFS_MAX_OPS)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "%d ops: the depth-first order search handles at most %d",
                              eg->n_ops, OLLA_EXEC_DFS_MAX_OPS);
    olla_exec_dfs *d = calloc(1, sizeof *d);
    if (!d)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    size_t n = (size_t)eg->n_ops + 1, m = (size_t)eg->pred_start[eg->n_ops] + n;
    d->eg = eg;
    d->words = (eg->n_running + 63) / 64 + 1;
    d->dense = malloc(n * sizeof(int));
    d->below = calloc(n, (size_t)d->words * sizeof(uint64_t));
    d->scratch = malloc((size_t)d->words * sizeof(uint64_t));
    d->visited = calloc(n, 1);
    d->frame_node = malloc((n + 1) * sizeof(int));
    d->frame_off = malloc((n + 1) * sizeof(int));
    d->frame_cnt = malloc((n + 1) * sizeof(int));
    d->frame_first = malloc((n + 1) * sizeof(int));
    d->cand_buf = malloc(m * sizeof(int));
    d->blocked = malloc(m);
    d->sort_tmp = malloc(n * sizeof(int));
    d->log_parent = malloc(n * sizeof(int));
    d->log_child = malloc(n * sizeof(int));
    d->point_node = malloc(n * sizeof(int));
    d->point_start = malloc((n + 1) * sizeof(int));
    d->point_children = malloc(n * sizeof(int));
    d->point_of = malloc((n + 1) * sizeof(int));
    if (!d->dense || !d->below || !d->scratch || !d->visited || !d->frame_node || !d->frame_off ||
        !d->frame_cnt || !d->frame_first || !d->cand_buf || !d->blocked || !d->sort_tmp || !d->log_parent || !d->log_child ||
        !d->point_node || !d->point_start || !d->point_children || !d->point_of) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    }
    int k = 0;
    for (int v = 0; v < eg->n_ops; v++)
        d->dense[v] = eg->runs[v] ? k++ : -1;
    if (!build_below(d)) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle; no order exists");
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

/* 1 when the file forces running op u before op w. */
static int is_below(const olla_exec_dfs *d, int u, int w)
{
    int du = d->dense[u];
    return (int)((d->below[(size_t)w * (size_t)d->words + (size_t)(du >> 6)] >> (du & 63)) & 1);
}

/* Marks the candidates c[0..n) that lie below another of them. */
static void mark_blocked(olla_exec_dfs *d, const int *c, int n, unsigned char *blocked)
{
    if (n <= d->words) {
        for (int i = 0; i < n; i++) {
            blocked[i] = 0;
            for (int j = 0; j < n && !blocked[i]; j++)
                blocked[i] = j != i && is_below(d, c[i], c[j]);
        }
        return;
    }
    for (int w = 0; w < d->words; w++)
        d->scratch[w] = 0;
    for (int j = 0; j < n; j++) {
        const uint64_t *row = d->below + (size_t)c[j] * (size_t)d->words;
        for (int w = 0; w < d->words; w++)
            d->scratch[w] |= row[w];
    }
    for (int i = 0; i < n; i++) {
        int du = d->dense[c[i]];
        blocked[i] = (unsigned char)((d->scratch[du >> 6] >> (du & 63)) & 1);
    }
}

/* Opens a frame for node v (-1: the roots, whose candidates are already at
 * cand_buf + off) with its unvisited producers sorted by key. */
static void open_frame(olla_exec_dfs *d, int sp, int v, int off, int n_roots)
{
    const olla_exec_graph *eg = d->eg;
    int n = n_roots;
    if (v >= 0) {
        n = 0;
        for (int j = eg->pred_start[v]; j < eg->pred_start[v + 1]; j++)
            if (!d->visited[eg->pred_list[j]])
                d->cand_buf[off + n++] = eg->pred_list[j];
    }
    sort_by_key(d, d->cand_buf + off, n);
    mark_blocked(d, d->cand_buf + off, n, d->blocked + off);
    d->frame_node[sp] = v;
    d->frame_off[sp] = off;
    d->frame_cnt[sp] = n;
    d->frame_first[sp] = 0;
}

/* The candidate of frame f to enter next, or -1 when all are visited. */
static int next_child(olla_exec_dfs *d, int f)
{
    const int *c = d->cand_buf + d->frame_off[f];
    const unsigned char *blocked = d->blocked + d->frame_off[f];
    int n = d->frame_cnt[f];
    while (d->frame_first[f] < n && d->visited[c[d->frame_first[f]]])
        d->frame_first[f]++;
    for (int i = d->frame_first[f]; i < n; i++) {
        if (d->visited[c[i]])
            continue;
        int held = 0;
        for (int j = 0; blocked[i] && j < n && !held; j++)
            held = j != i && !d->visited[c[j]] && is_below(d, c[i], c[j]);
        if (!held)
            return c[i];
    }
    return -1;
}

/* Groups the log by parent into choice points (parents entering two or
 * more children), in the order of each parent's first entry. */
static void build_points(olla_exec_dfs *d)
{
    int n = d->eg->n_ops, used = 0;
    int *count = d->sort_tmp; /* n_ops + 1 buckets: parent + 1 */
    memset(count, 0, ((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < d->n_log; i++)
        count[d->log_parent[i] + 1]++;
    for (int b = 0; b <= n; b++)
        d->point_of[b] = -1;
    d->n_points = 0;
    for (int i = 0; i < d->n_log; i++) {
        int b = d->log_parent[i] + 1;
        if (d->point_of[b] < 0) {
            if (count[b] < 2)
                continue;
            int p = d->n_points++;
            d->point_of[b] = p;
            d->point_node[p] = b - 1;
            d->point_start[p] = used;
            used += count[b];
            count[b] = d->point_start[p]; /* from now on: the next free slot of the point */
        }
        d->point_children[count[b]++] = d->log_child[i];
    }
    d->point_start[d->n_points] = used;
}

void olla_exec_dfs_run(olla_exec_dfs *d, const int64_t *key, int *executed)
{
    const olla_exec_graph *eg = d->eg;
    d->key = key;
    d->n_log = 0;
    memset(d->visited, 0, (size_t)eg->n_ops);
    int n_leaves = 0, k = 0;
    for (int v = 0; v < eg->n_ops; v++)
        if (eg->runs[v] && eg->succ_start[v] == eg->succ_start[v + 1])
            d->cand_buf[n_leaves++] = v;
    open_frame(d, 0, -1, 0, n_leaves);
    int sp = 1, top = n_leaves;
    while (sp > 0) {
        int f = sp - 1, c = next_child(d, f);
        if (c < 0) {
            if (d->frame_node[f] >= 0)
                executed[k++] = d->frame_node[f];
            top = d->frame_off[f];
            sp--;
            continue;
        }
        d->log_parent[d->n_log] = d->frame_node[f];
        d->log_child[d->n_log++] = c;
        d->visited[c] = 1;
        open_frame(d, sp, c, top, 0);
        top += d->frame_cnt[sp++];
    }
    build_points(d);
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
olla_status olla_exec_dfs_listing(olla_exec_dfs *d, const int *reference, int *listing, int *found,
                                  olla_error *err)
{
    *found = 0;
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
    *found = k == n;
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
    int listed = 0;
    if ((st = olla_exec_dfs_listing(d, reference, listing, &listed, err)) != OLLA_OK || !listed)
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
