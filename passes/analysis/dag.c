/* olla-onnx: the scheduling DAG, its builder, topological orders and the
 * liveness rules every other stage relies on. */
#include "passes/analysis/olla_dag.h"
#include "util/olla_grow.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int node, tensor;
} dag_use;

struct olla_dag_builder {
    int *producer;
    int64_t *bytes;
    unsigned char *is_output;
    int n_tensors;
    size_t cap_producer, cap_bytes, cap_is_output;
    dag_use *uses;
    int n_uses;
    size_t cap_uses;
    int *ip_node, *ip_in, *ip_out; /* in-place candidates in the order given */
    int n_inplace;
    size_t cap_ip_node, cap_ip_in, cap_ip_out;
    int oom;
};

/* Makes *ints hold need entries (olla_grow); 0 when out of memory. */
static int grow_ints(int **ints, size_t *cap, size_t need)
{
    int *g = olla_grow(*ints, cap, need, sizeof *g);
    if (g)
        *ints = g;
    return g != NULL;
}

olla_dag_builder *olla_dag_builder_new(int n_nodes_hint, int n_tensors_hint)
{
    olla_dag_builder *b = calloc(1, sizeof *b);
    (void)n_nodes_hint;
    (void)n_tensors_hint;
    return b;
}

void olla_dag_builder_free(olla_dag_builder *b)
{
    if (!b)
        return;
    free(b->producer);
    free(b->bytes);
    free(b->is_output);
    free(b->uses);
    free(b->ip_node);
    free(b->ip_in);
    free(b->ip_out);
    free(b);
}

int olla_dag_builder_tensor(olla_dag_builder *b, int producer, int64_t bytes, int is_output)
{
    int n = b->n_tensors;
    size_t need = (size_t)n + 1;
    int64_t *by = grow_ints(&b->producer, &b->cap_producer, need)
                      ? olla_grow(b->bytes, &b->cap_bytes, need, sizeof *by) : NULL;
    if (by)
        b->bytes = by;
    unsigned char *out = by ? olla_grow(b->is_output, &b->cap_is_output, need, sizeof *out) : NULL;
    if (!out) {
        b->oom = 1;
        return -1;
    }
    b->is_output = out;
    b->producer[n] = producer;
    b->bytes[n] = bytes;
    b->is_output[n] = (unsigned char)(is_output != 0);
    b->n_tensors = n + 1;
    return n;
}

void olla_dag_builder_use(olla_dag_builder *b, int node, int tensor)
{
    if (tensor < 0)
        return;
    dag_use *uses = olla_grow(b->uses, &b->cap_uses, (size_t)b->n_uses + 1, sizeof *uses);
    if (!uses) {
        b->oom = 1;
        return;
    }
    b->uses = uses;
    b->uses[b->n_uses].node = node;
    b->uses[b->n_uses].tensor = tensor;
    b->n_uses++;
}

void olla_dag_builder_inplace(olla_dag_builder *b, int node, int in, int out)
{
    int n = b->n_inplace;
    size_t need = (size_t)n + 1;
    if (!grow_ints(&b->ip_node, &b->cap_ip_node, need) || !grow_ints(&b->ip_in, &b->cap_ip_in, need) ||
        !grow_ints(&b->ip_out, &b->cap_ip_out, need)) {
        b->oom = 1;
        return;
    }
    b->ip_node[n] = node;
    b->ip_in[n] = in;
    b->ip_out[n] = out;
    b->n_inplace = n + 1;
}

static int cmp_use_node(const void *a, const void *b)
{
    const dag_use *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

void olla_dag_free(olla_dag *dag)
{
    if (!dag)
        return;
    free(dag->in_start);
    free(dag->in_list);
    free(dag->out_start);
    free(dag->out_list);
    free(dag->sink_start);
    free(dag->sink_list);
    free(dag->producer);
    free(dag->bytes);
    free(dag->is_output);
    free(dag->inplace_start);
    free(dag->inplace_in);
    free(dag->inplace_out);
    memset(dag, 0, sizeof *dag);
}

/* 1 when node v reads tensor e */
static int reads(const olla_dag *dag, int v, int e)
{
    for (int k = dag->in_start[v]; k < dag->in_start[v + 1]; k++)
        if (dag->in_list[k] == e)
            return 1;
    return 0;
}

/* The builder's in-place candidates into CSR form by node, in the order
 * given within a node, without a second candidate of a node for the same
 * input or output. Needs the rest of the DAG built. */
static olla_status freeze_inplace(olla_dag_builder *b, olla_dag *dag, olla_error *err)
{
    int n = dag->n_nodes, m = b->n_inplace;
    if (m <= 0)
        return OLLA_OK;
    for (int k = 0; k < m; k++) {
        int v = b->ip_node[k], in = b->ip_in[k], out = b->ip_out[k];
        if (v < 0 || v >= n || in < 0 || in >= dag->n_tensors || out < 0 || out >= dag->n_tensors ||
            dag->producer[out] != v || !reads(dag, v, in) || dag->bytes[in] != dag->bytes[out] || dag->is_output[in])
            return olla_error_set(err, OLLA_ERR_INTERNAL,
                                  "in-place candidate %d (node %d, tensors %d -> %d) does not fit the graph", k, v, in,
                                  out);
    }
    size_t cap = (size_t)m + 1;
    int *pos = calloc((size_t)n + 1, sizeof(int)), *by_node = malloc(cap * sizeof(int));
    dag->inplace_start = calloc((size_t)n + 1, sizeof(int));
    dag->inplace_in = malloc(cap * sizeof(int));
    dag->inplace_out = malloc(cap * sizeof(int));
    if (!pos || !by_node || !dag->inplace_start || !dag->inplace_in || !dag->inplace_out) {
        free(pos);
        free(by_node);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory while building the graph");
    }
    /* a stable counting sort by node */
    for (int k = 0; k < m; k++)
        pos[b->ip_node[k]]++;
    for (int v = 0, acc = 0; v < n; v++) {
        int c = pos[v];
        pos[v] = acc;
        acc += c;
    }
    for (int k = 0; k < m; k++)
        by_node[pos[b->ip_node[k]]++] = k;
    int w = 0;
    for (int i = 0, v = 0; v < n; v++) {
        dag->inplace_start[v] = w;
        for (; i < m && b->ip_node[by_node[i]] == v; i++) {
            int k = by_node[i], dup = 0;
            for (int j = dag->inplace_start[v]; j < w; j++)
                dup |= dag->inplace_in[j] == b->ip_in[k] || dag->inplace_out[j] == b->ip_out[k];
            if (dup)
                continue;
            dag->inplace_in[w] = b->ip_in[k];
            dag->inplace_out[w++] = b->ip_out[k];
        }
    }
    dag->inplace_start[n] = w;
    dag->n_inplace = w;
    free(pos);
    free(by_node);
    return OLLA_OK;
}

olla_status olla_dag_build(olla_dag_builder *b, int n_nodes, olla_dag *dag, olla_error *err)
{
    memset(dag, 0, sizeof *dag);
    if (!b || b->oom) {
        olla_dag_builder_free(b);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory while building the graph");
    }
    int nt = b->n_tensors;
    for (int e = 0; e < nt; e++)
        if (b->producer[e] < 0 || b->producer[e] >= n_nodes) {
            olla_dag_builder_free(b);
            return olla_error_set(err, OLLA_ERR_INTERNAL, "tensor %d has an invalid producer", e);
        }
    /* sort uses by node, drop duplicates */
    if (b->n_uses > 0)
        qsort(b->uses, (size_t)b->n_uses, sizeof *b->uses, cmp_use_node);
    int nu = 0;
    for (int i = 0; i < b->n_uses; i++) {
        if (nu > 0 && b->uses[nu - 1].node == b->uses[i].node && b->uses[nu - 1].tensor == b->uses[i].tensor)
            continue;
        b->uses[nu++] = b->uses[i];
    }
    dag->n_nodes = n_nodes;
    dag->n_tensors = nt;
    dag->in_start = calloc((size_t)n_nodes + 1, sizeof(int));
    dag->in_list = malloc(((size_t)nu + 1) * sizeof(int));
    dag->out_start = calloc((size_t)n_nodes + 1, sizeof(int));
    dag->out_list = malloc(((size_t)nt + 1) * sizeof(int));
    dag->sink_start = calloc((size_t)nt + 1, sizeof(int));
    dag->sink_list = malloc(((size_t)nu + 1) * sizeof(int));
    dag->producer = b->producer;
    dag->bytes = b->bytes;
    dag->is_output = b->is_output;
    b->producer = NULL;
    b->bytes = NULL;
    b->is_output = NULL;
    if (!dag->in_start || !dag->in_list || !dag->out_start || !dag->out_list || !dag->sink_start ||
        !dag->sink_list || (nt > 0 && (!dag->producer || !dag->bytes || !dag->is_output))) {
        olla_dag_builder_free(b);
        olla_dag_free(dag);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory while building the graph");
    }
    for (int i = 0; i < nu; i++) {
        dag->in_start[b->uses[i].node + 1]++;
        dag->sink_start[b->uses[i].tensor + 1]++;
    }
    for (int e = 0; e < nt; e++)
        dag->out_start[dag->producer[e] + 1]++;
    for (int v = 0; v < n_nodes; v++) {
        dag->in_start[v + 1] += dag->in_start[v];
        dag->out_start[v + 1] += dag->out_start[v];
    }
    for (int e = 0; e < nt; e++)
        dag->sink_start[e + 1] += dag->sink_start[e];
    for (int i = 0; i < nu; i++)
        dag->in_list[i] = b->uses[i].tensor; /* uses are sorted by node */
    int *fill = calloc((size_t)(n_nodes > nt ? n_nodes : nt) + 1, sizeof(int));
    if (!fill) {
        olla_dag_builder_free(b);
        olla_dag_free(dag);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory while building the graph");
    }
    for (int e = 0; e < nt; e++) {
        int v = dag->producer[e];
        dag->out_list[dag->out_start[v] + fill[v]++] = e;
    }
    memset(fill, 0, ((size_t)(n_nodes > nt ? n_nodes : nt) + 1) * sizeof(int));
    for (int i = 0; i < nu; i++) {
        int e = b->uses[i].tensor;
        dag->sink_list[dag->sink_start[e] + fill[e]++] = b->uses[i].node;
    }
    free(fill);
    olla_status st = freeze_inplace(b, dag, err);
    olla_dag_builder_free(b);
    if (st != OLLA_OK)
        olla_dag_free(dag);
    return st;
}

int olla_dag_is_topological(const olla_dag *dag, const int *order)
{
    int n = dag->n_nodes;
    int *step = malloc(((size_t)n + 1) * sizeof(int));
    if (!step)
        return 0;
    for (int v = 0; v < n; v++)
        step[v] = -1;
    int ok = 1;
    for (int t = 0; t < n && ok; t++) {
        int v = order[t];
        if (v < 0 || v >= n || step[v] >= 0)
            ok = 0;
        else
            step[v] = t;
    }
    for (int e = 0; e < dag->n_tensors && ok; e++)
        for (int i = dag->sink_start[e]; i < dag->sink_start[e + 1]; i++)
            if (step[dag->sink_list[i]] <= step[dag->producer[e]])
                ok = 0;
    free(step);
    return ok;
}

olla_status olla_dag_stable_topo(const olla_dag *dag, int *order, olla_error *err)
{
    int n = dag->n_nodes;
    int *indeg = calloc((size_t)n + 1, sizeof(int));
    /* min-heap of ready node ids keeps the sort stable */
    int *heap = malloc(((size_t)n + 1) * sizeof(int));
    if (!indeg || !heap) {
        free(indeg);
        free(heap);
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory in topological sort");
    }
    for (int v = 0; v < n; v++)
        for (int i = dag->in_start[v]; i < dag->in_start[v + 1]; i++)
            indeg[v]++;
    int hn = 0;
    for (int v = 0; v < n; v++)
        if (indeg[v] == 0) {
            heap[hn++] = v; /* ascending insert keeps heap property */
        }
    int done = 0;
    while (hn > 0) {
        int v = heap[0];
        heap[0] = heap[--hn];
        for (int i = 0;;) {
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < hn && heap[l] < heap[m])
                m = l;
            if (r < hn && heap[r] < heap[m])
                m = r;
            if (m == i)
                break;
            int tmp = heap[i];
            heap[i] = heap[m];
            heap[m] = tmp;
            i = m;
        }
        order[done++] = v;
        for (int o = dag->out_start[v]; o < dag->out_start[v + 1]; o++) {
            int e = dag->out_list[o];
            for (int s = dag->sink_start[e]; s < dag->sink_start[e + 1]; s++) {
                int w = dag->sink_list[s];
                if (--indeg[w] == 0) {
                    int i = hn++;
                    heap[i] = w;
                    while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
                        int p = (i - 1) / 2, tmp = heap[p];
                        heap[p] = heap[i];
                        heap[i] = tmp;
                        i = p;
                    }
                }
            }
        }
    }
    free(indeg);
    free(heap);
    if (done != n)
        return olla_error_set(err, OLLA_ERR_INPUT, "the graph has a cycle: %d of %d nodes can never run", n - done, n);
    return OLLA_OK;
}

/* first/last from the step of every node. */
static void lifetimes_from_steps(const olla_dag *dag, const int *step, int *first, int *last)
{
    int n = dag->n_nodes;
    for (int e = 0; e < dag->n_tensors; e++) {
        int f = step[dag->producer[e]];
        int l = f;
        if (dag->is_output[e])
            l = n - 1;
        else
            for (int i = dag->sink_start[e]; i < dag->sink_start[e + 1]; i++)
                if (step[dag->sink_list[i]] > l)
                    l = step[dag->sink_list[i]];
        first[e] = f;
        last[e] = l;
    }
}

olla_status olla_dag_lifetimes(const olla_dag *dag, const int *order, int *first, int *last, olla_error *err)
{
    int n = dag->n_nodes;
    int *step = malloc(((size_t)n + 1) * sizeof(int));
    if (!step)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing tensor lifetimes (%d nodes)", n);
    for (int t = 0; t < n; t++)
        step[order[t]] = t;
    lifetimes_from_steps(dag, step, first, last);
    free(step);
    return OLLA_OK;
}

void olla_dag_inplace_applied(const olla_dag *dag, const int *step, const int *last, unsigned char *applies)
{
    for (int v = 0; dag->n_inplace > 0 && v < dag->n_nodes; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++)
            applies[k] = last[dag->inplace_in[k]] == step[v];
}

int64_t olla_dag_profile(const olla_dag *dag, const int *step, int *first, int *last, int64_t *delta, int64_t *live)
{
    int n = dag->n_nodes;
    memset(delta, 0, ((size_t)n + 1) * sizeof *delta);
    lifetimes_from_steps(dag, step, first, last);
    for (int e = 0; e < dag->n_tensors; e++) {
        delta[first[e]] += dag->bytes[e];
        delta[last[e] + 1] -= dag->bytes[e];
    }
    /* an in-place output and its input count once at the node's step */
    for (int v = 0; dag->n_inplace > 0 && v < n; v++)
        for (int k = dag->inplace_start[v]; k < dag->inplace_start[v + 1]; k++)
            if (last[dag->inplace_in[k]] == step[v]) {
                delta[step[v]] -= dag->bytes[dag->inplace_out[k]];
                delta[step[v] + 1] += dag->bytes[dag->inplace_out[k]];
            }
    int64_t cur = 0, peak = 0;
    for (int t = 0; t < n; t++) {
        cur += delta[t];
        live[t] = cur;
        if (cur > peak)
            peak = cur;
    }
    return peak;
}

olla_status olla_dag_peak(const olla_dag *dag, const int *order, int64_t *peak_out, int64_t *live, int *peak_step,
                          olla_error *err)
{
    int n = dag->n_nodes, nt = dag->n_tensors;
    int *first = malloc(((size_t)nt + 1) * sizeof(int));
    int *last = malloc(((size_t)nt + 1) * sizeof(int));
    int *step = calloc((size_t)n + 1, sizeof(int));
    int64_t *delta = malloc(((size_t)n + 1) * sizeof(int64_t));
    int64_t *prof = live ? live : malloc(((size_t)n + 1) * sizeof(int64_t));
    olla_status st = OLLA_OK;
    if (!first || !last || !step || !delta || !prof) {
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory computing the peak (%d nodes)", n);
    } else {
        for (int t = 0; t < n; t++)
            step[order[t]] = t;
        int64_t peak = olla_dag_profile(dag, step, first, last, delta, prof);
        int at = 0;
        while (at < n && prof[at] != peak)
            at++;
        *peak_out = peak;
        if (peak_step)
            *peak_step = at < n ? at : 0;
    }
    free(first);
    free(last);
    free(step);
    free(delta);
    if (prof != live)
        free(prof);
    return st;
}
