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
 * Only candidates of one expansion are ever compared: the producers of one
 * op, or the leaves. For each such set the relation < among its members is
 * a small bit matrix (k x k for k members, in the set's own order), found
 * once by passes over the file's edges that carry, per op, which of 1,024
 * queried ops lie below it: memory grows with the ops and time with ops x
 * edges / 64, where the whole relation would take ops^2 bits. */
#include <stdlib.h>
#include <string.h>

#include "passes/runtime/exec_heap.h"
#include "passes/runtime/olla_exec_order.h"
#include "util/olla_bits.h"

struct olla_exec_dfs {
    const olla_exec_graph *eg;
    /* the candidate sets: set v (an op) is its producers pred_list[pred_start
     * [v] ..), set n_ops the leaves; bits rel_bits[rel_start[s] + i * k + j]:
     * member i lies below member j (the file forces it first); below_any[s
     * member's slot]: member i lies below some other member */
    int n_leaves, *leaves;
    long *rel_start;
    uint64_t *rel_bits;
    unsigned char *below_any; /* by slot: pred_start[v] + i, or pred_start[n_ops] + i for the leaves */
    unsigned char *visited;
    const int64_t *key; /* of the current run */
    /* frames of the iterative search; candidates of a frame in cand_buf
     * [frame_off, frame_off + frame_cnt), blocked[] beside them */
    int *frame_node, *frame_off, *frame_cnt, *frame_first; /* first: no visited candidate before it */
    int *cand_buf, *cand_slot; /* a candidate and its index in its set */
    unsigned char *blocked;
    int *sort_tmp;
    /* (parent, child) of every entry of the last run, parent -1 = roots */
    int n_log;
    int *log_parent, *log_child;
    /* choice points of the last run: node (-1 = roots), children in CSR */
    int n_points;
    int *point_node, *point_start, *point_children, *point_of;
    int *entered_from; /* n_ops: the node (-1: the roots) that entered each op in the last run */
};

/* ---- Workspace ---- */

void olla_exec_dfs_free(olla_exec_dfs *d)
{
    if (!d)
        return;
    free(d->leaves);
    free(d->rel_start);
    free(d->rel_bits);
    free(d->below_any);
    free(d->visited);
    free(d->frame_node);
    free(d->frame_off);
    free(d->frame_cnt);
    free(d->frame_first);
    free(d->cand_buf);
    free(d->cand_slot);
    free(d->blocked);
    free(d->sort_tmp);
    free(d->log_parent);
    free(d->log_child);
    free(d->point_node);
    free(d->point_start);
    free(d->point_children);
    free(d->point_of);
    free(d->entered_from);
    free(d);
}

/* ---- the relation within each candidate set ---- */

#define REL_WORDS 16 /* queried ops per pass: 64 * REL_WORDS */

/* the file's edges in a topological order (Kahn over dep lists); 0 on a
 * cycle or out of memory */
static int file_topo(const olla_exec_graph *eg, int *order)
{
    int n = eg->n_ops, m = eg->dep_start[n];
    int *indeg = calloc((size_t)n + 1, sizeof(int)), *start = calloc((size_t)n + 2, sizeof(int));
    int *adj = malloc(((size_t)m + 1) * sizeof(int));
    int ok = indeg && start && adj, head = 0, tail = 0;
    for (int v = 0; ok && v < n; v++)
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++)
            start[eg->dep_list[j] + 2]++, indeg[v]++;
    for (int v = 0; ok && v < n; v++)
        start[v + 2] += start[v + 1];
    for (int v = 0; ok && v < n; v++) {
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++)
            adj[start[eg->dep_list[j] + 1]++] = v;
        if (indeg[v] == 0)
            order[tail++] = v;
    }
    while (ok && head < tail) {
        int v = order[head++];
        for (int j = start[v]; j < start[v + 1]; j++)
            if (--indeg[adj[j]] == 0)
                order[tail++] = adj[j];
    }
    free(indeg);
    free(start);
    free(adj);
    return ok && tail == n;
}

/* the members of candidate set s (an op's producers, or the leaves) */
static const int *set_members(const olla_exec_dfs *d, int s, int *k)
{
    const olla_exec_graph *eg = d->eg;
    if (s == eg->n_ops) {
        *k = d->n_leaves;
        return d->leaves;
    }
    *k = eg->pred_start[s + 1] - eg->pred_start[s];
    return eg->pred_list + eg->pred_start[s];
}

static long set_slot(const olla_exec_dfs *d, int s, int i)
{
    return (long)d->eg->pred_start[s] + i; /* the leaves' set s = n_ops starts at pred_start[n_ops] */
}

static int rel_get(const olla_exec_dfs *d, int s, int k, int i, int j)
{
    long b = d->rel_start[s] + (long)i * k + j;
    return olla_bit_get(d->rel_bits, (size_t)b);
}

/* One pass: rows[v] gets the queried ops with qidx in [lo, lo + 64 *
 * REL_WORDS) the file forces before v; then every pair of every set whose
 * first member is in that range is answered. */
static void rel_pass(olla_exec_dfs *d, const int *order, const int *qidx, int lo, uint64_t *rows)
{
    const olla_exec_graph *eg = d->eg;
    int n = eg->n_ops, hi = lo + 64 * REL_WORDS;
    memset(rows, 0, (size_t)n * REL_WORDS * sizeof *rows);
    for (int i = 0; i < n; i++) {
        int v = order[i];
        uint64_t *row = rows + (size_t)v * REL_WORDS;
        for (int j = eg->dep_start[v]; j < eg->dep_start[v + 1]; j++) {
            int p = eg->dep_list[j], q = qidx[p];
            const uint64_t *pr = rows + (size_t)p * REL_WORDS;
            for (int w = 0; w < REL_WORDS; w++)
                row[w] |= pr[w];
            if (q >= lo && q < hi)
                olla_bit_set(row, (size_t)(q - lo));
        }
    }
    for (int s = 0; s <= n; s++) {
        int k;
        const int *mem = set_members(d, s, &k);
        if (k < 2 || d->rel_start[s] < 0)
            continue;
        for (int a = 0; a < k; a++) {
            int q = qidx[mem[a]];
            if (q < lo || q >= hi)
                continue;
            for (int b = 0; b < k; b++) {
                const uint64_t *rb = rows + (size_t)mem[b] * REL_WORDS;
                if (b != a && olla_bit_get(rb, (size_t)(q - lo))) {
                    long bit = d->rel_start[s] + (long)a * k + b;
                    olla_bit_set(d->rel_bits, (size_t)bit);
                    d->below_any[set_slot(d, s, a)] = 1;
                }
            }
        }
    }
}

/* The relation within every candidate set of two or more running ops.
 * Returns 0 on a cycle or out of memory. */
static int build_relation(olla_exec_dfs *d)
{
    const olla_exec_graph *eg = d->eg;
    int n = eg->n_ops, nq = 0;
    int *order = malloc(((size_t)n + 1) * sizeof(int)), *qidx = malloc(((size_t)n + 1) * sizeof(int));
    uint64_t *rows = malloc(((size_t)n + 1) * REL_WORDS * sizeof *rows);
    int ok = order && qidx && rows && file_topo(eg, order);
    long bits = 0;
    for (int v = 0; ok && v < n; v++)
        qidx[v] = -1;
    for (int s = 0; ok && s <= n; s++) {
        int k;
        const int *mem = set_members(d, s, &k);
        d->rel_start[s] = k >= 2 ? bits : -1;
        if (k < 2)
            continue;
        bits += (long)k * k;
        for (int i = 0; i < k; i++)
            if (qidx[mem[i]] < 0)
                qidx[mem[i]] = nq++;
    }
    if (ok) {
        d->rel_bits = calloc(olla_bits_words((size_t)bits) + 1, sizeof *d->rel_bits);
        ok = d->rel_bits != NULL;
    }
    for (int lo = 0; ok && lo < nq; lo += 64 * REL_WORDS)
        rel_pass(d, order, qidx, lo, rows);
    free(order);
    free(qidx);
    free(rows);
    return ok;
}

olla_status olla_exec_dfs_new(const olla_exec_graph *eg, olla_exec_dfs **out, olla_error *err)
{
    *out = NULL;
    olla_exec_dfs *d = calloc(1, sizeof *d);
    if (!d)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    size_t n = (size_t)eg->n_ops + 1, m = (size_t)eg->pred_start[eg->n_ops] + n;
    d->eg = eg;
    d->leaves = malloc(n * sizeof(int));
    d->rel_start = malloc((n + 1) * sizeof(long));
    d->below_any = calloc(m, 1);
    d->visited = calloc(n, 1);
    d->frame_node = malloc((n + 1) * sizeof(int));
    d->frame_off = malloc((n + 1) * sizeof(int));
    d->frame_cnt = malloc((n + 1) * sizeof(int));
    d->frame_first = malloc((n + 1) * sizeof(int));
    d->cand_buf = malloc(m * sizeof(int));
    d->cand_slot = malloc(m * sizeof(int));
    d->blocked = malloc(m);
    d->sort_tmp = malloc(2 * (n + 1) * sizeof(int));
    d->log_parent = malloc(n * sizeof(int));
    d->log_child = malloc(n * sizeof(int));
    d->point_node = malloc(n * sizeof(int));
    d->point_start = malloc((n + 1) * sizeof(int));
    d->point_children = malloc(n * sizeof(int));
    d->point_of = malloc((n + 1) * sizeof(int));
    d->entered_from = malloc(n * sizeof(int));
    if (!d->entered_from || !d->leaves || !d->rel_start || !d->below_any || !d->visited || !d->frame_node || !d->frame_off ||
        !d->frame_cnt || !d->frame_first || !d->cand_buf || !d->cand_slot || !d->blocked || !d->sort_tmp || !d->log_parent || !d->log_child ||
        !d->point_node || !d->point_start || !d->point_children || !d->point_of) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory preparing the depth-first order search");
    }
    for (int v = 0; v < eg->n_ops; v++)
        if (eg->runs[v] && eg->succ_start[v] == eg->succ_start[v + 1])
            d->leaves[d->n_leaves++] = v;
    if (!build_relation(d)) {
        olla_exec_dfs_free(d);
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle; no order exists");
    }
    *out = d;
    return OLLA_OK;
}

/* ---- The search ---- */

static int key_less(const olla_exec_dfs *d, int a, int b)
{
    return d->key[a] < d->key[b] || (d->key[a] == d->key[b] && a < b);
}

/* Stable merge sort of a[0..n) by (key, op), slot[] moved alongside. */
static void sort_by_key(const olla_exec_dfs *d, int *a, int *slot, int n)
{
    int *tmp = d->sort_tmp, *tmp_slot = d->sort_tmp + d->eg->n_ops + 1;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid || j < hi) {
                int from = j >= hi || (i < mid && !key_less(d, a[j], a[i])) ? i++ : j++;
                tmp[k] = a[from];
                tmp_slot[k++] = slot[from];
            }
        }
        memcpy(a, tmp, (size_t)n * sizeof(int));
        memcpy(slot, tmp_slot, (size_t)n * sizeof(int));
    }
}

/* the candidate set of frame f: its node's producers, or the leaves */
static int frame_set(const olla_exec_dfs *d, int f)
{
    return d->frame_node[f] >= 0 ? d->frame_node[f] : d->eg->n_ops;
}

/* Marks the candidates c[0..n) of set s (their slots in slot[]) that lie
 * below another of them. */
static void mark_blocked(olla_exec_dfs *d, int s, const int *slot, int n, unsigned char *blocked)
{
    int k;
    set_members(d, s, &k);
    for (int i = 0; i < n; i++) {
        blocked[i] = 0;
        if (!d->below_any[set_slot(d, s, slot[i])])
            continue;
        for (int j = 0; j < n && !blocked[i]; j++)
            blocked[i] = j != i && rel_get(d, s, k, slot[i], slot[j]);
    }
}

/* Opens a frame for node v (-1: the roots, the leaves) with its unvisited
 * producers sorted by key. */
static void open_frame(olla_exec_dfs *d, int sp, int v, int off)
{
    const olla_exec_graph *eg = d->eg;
    int n = 0, s = v >= 0 ? v : eg->n_ops, k;
    const int *mem = set_members(d, s, &k);
    for (int i = 0; i < k; i++)
        if (v < 0 || !d->visited[mem[i]]) {
            d->cand_buf[off + n] = mem[i];
            d->cand_slot[off + n++] = i;
        }
    sort_by_key(d, d->cand_buf + off, d->cand_slot + off, n);
    mark_blocked(d, s, d->cand_slot + off, n, d->blocked + off);
    d->frame_node[sp] = v;
    d->frame_off[sp] = off;
    d->frame_cnt[sp] = n;
    d->frame_first[sp] = 0;
}

/* The candidate of frame f to enter next, or -1 when all are visited. */
static int next_child(olla_exec_dfs *d, int f)
{
    const int *c = d->cand_buf + d->frame_off[f], *slot = d->cand_slot + d->frame_off[f];
    const unsigned char *blocked = d->blocked + d->frame_off[f];
    int n = d->frame_cnt[f], s = frame_set(d, f), k;
    set_members(d, s, &k);
    while (d->frame_first[f] < n && d->visited[c[d->frame_first[f]]])
        d->frame_first[f]++;
    for (int i = d->frame_first[f]; i < n; i++) {
        if (d->visited[c[i]])
            continue;
        int held = 0;
        for (int j = 0; blocked[i] && j < n && !held; j++)
            held = j != i && !d->visited[c[j]] && rel_get(d, s, k, slot[i], slot[j]);
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
    int k = 0;
    open_frame(d, 0, -1, 0);
    int sp = 1, top = d->n_leaves;
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
        d->entered_from[c] = d->frame_node[f];
        d->visited[c] = 1;
        open_frame(d, sp, c, top);
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

int olla_exec_dfs_entry(const olla_exec_dfs *d, int v, int *point)
{
    int u = d->visited[v] ? d->entered_from[v] : -2;
    *point = u >= -1 ? d->point_of[u + 1] : -1;
    return u;
}

/* ---- The listing ---- */

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
