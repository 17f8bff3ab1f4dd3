/* olla-onnx: checking a plan against its graph (plan/olla_verify.h).
 *
 * Buffers, not tensors, are what may not overlap: every declared share joins
 * a tensor to the buffer of the tensor it names, and a buffer is live from
 * the first step of any of its tensors to the last. Each share is judged on
 * its own first: a rule of the runtime's kernels must allow it at the
 * producing node, both tensors have the same size and offset, and an
 * in-place write must be the last use of its input's buffer (no later reader
 * of the input or of any view of it, none of them a graph output). */
#include "plan/olla_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_graph_dag.h"
#include "passes/runtime/olla_graph_shares.h"
#include "util/olla_treap.h"

typedef struct {
    const olla_graph *g;
    const olla_plan_layout *p;
    const char *file;
    olla_error *err;
    int *step;        /* per op */
    int *first, *last; /* per graph tensor (planned ones) */
    int *view_root;   /* per graph tensor: root of its class under declared views */
    int *class_head, *class_next; /* the listed tensors of each class, as linked lists */
    int *buf;         /* per graph tensor: root of its buffer under all declared shares */
} checker;

static int find(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

static const char *label(const checker *c, int op, char *buf, int n)
{
    return olla_op_label(c->g, op, buf, n);
}

/* never a Constant: its output is held with the initializers */
static int op_runs(const checker *c, int op)
{
    return !olla_op_is_constant(c->g, op) && (!c->p->view || !c->p->view->runs || c->p->view->runs[op]);
}

/* what a reader of t reads when the plan's runtime runs the graph */
static int read_as(const checker *c, int t)
{
    return c->p->view && c->p->view->reads_as ? c->p->view->reads_as[t] : t;
}

/* 1 when tensor t takes no arena memory: made by an op the runtime does not
 * run (it is an initializer then), or a view (a rule's alias) of a graph
 * input, an initializer, or such a tensor: never a copy, with or without
 * the sharing rules. */
static int caller_view(const checker *c, int t, const unsigned char *free_view)
{
    const olla_graph *g = c->g;
    int v = g->tensors[t].producer;
    if (v >= 0 && !op_runs(c, v))
        return 1;
    if (v < 0 || g->tensors[t].bytes < 0)
        return 0;
    const olla_op *op = &g->ops[v];
    for (int o = 0; o < op->n_outputs; o++) {
        if (g->output_list[op->first_output + o] != t)
            continue;
        for (int i = 0; i < op->n_explicit_inputs; i++) {
            int s = g->input_list[op->first_input + i];
            s = s >= 0 ? read_as(c, s) : s;
            if (s >= 0 && (g->tensors[s].producer < 0 || free_view[s]) && g->tensors[s].bytes == g->tensors[t].bytes &&
                olla_graph_share_rule(g, v, i, o, 0))
                return 1;
        }
    }
    return 0;
}

/* every planned tensor is in the plan with its true size, aligned, inside
 * the arena; the views of caller-owned tensors are left out */
static olla_status check_entries(checker *c)
{
    const olla_graph *g = c->g;
    const olla_plan_layout *p = c->p;
    unsigned char *free_view = calloc((size_t)g->n_tensors + 1, 1);
    if (!free_view)
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
    olla_status st = OLLA_OK;
    for (int s = 0; s < g->n_ops && st == OLLA_OK; s++) {
        const olla_op *op = &g->ops[p->order[s]];
        for (int k = 0; k < op->n_outputs && st == OLLA_OK; k++) {
            int t = g->output_list[op->first_output + k];
            if (t < 0)
                continue;
            const olla_tensor *ten = &g->tensors[t];
            free_view[t] = (unsigned char)caller_view(c, t, free_view);
            int planned = ten->bytes >= 0 && !free_view[t];
            int64_t want = olla_align_up(ten->bytes, p->alignment);
            if (!planned && p->offset[t] >= 0)
                st = olla_error_set(c->err, OLLA_ERR_INPUT,
                                    "%s: the plan lists '%s', which %s", c->file, ten->name,
                                    free_view[t] ? "takes no arena memory (a view of a graph input or initializer, or "
                                                   "made by an op the runtime does not run)"
                                                 : "is not a planned tensor");
            else if (planned && p->offset[t] < 0)
                st = olla_error_set(c->err, OLLA_ERR_INPUT, "%s: planned tensor '%s' is missing from the plan", c->file,
                                    ten->name);
            else if (planned && p->bytes[t] != want)
                st = olla_error_set(c->err, OLLA_ERR_INPUT,
                                    "%s: the plan gives '%s' %lld bytes, but it needs %lld (%lld rounded up to %lld)",
                                    c->file, ten->name, (long long)p->bytes[t], (long long)want,
                                    (long long)ten->bytes, (long long)p->alignment);
            else if (planned && p->offset[t] % p->alignment != 0)
                st = olla_error_set(c->err, OLLA_ERR_INPUT,
                                    "%s: offset %lld of '%s' is not a multiple of the alignment %lld", c->file,
                                    (long long)p->offset[t], ten->name, (long long)p->alignment);
            else if (planned && (p->offset[t] > p->arena_bytes || p->bytes[t] > p->arena_bytes - p->offset[t]))
                st = olla_error_set(c->err, OLLA_ERR_INPUT,
                                    "%s: '%s' at offset %lld + %lld bytes lies beyond the arena of %lld", c->file,
                                    ten->name, (long long)p->offset[t], (long long)p->bytes[t],
                                    (long long)p->arena_bytes);
        }
    }
    for (int t = 0; t < g->n_tensors && st == OLLA_OK; t++)
        if (g->tensors[t].producer < 0 && p->offset[t] >= 0)
            st = olla_error_set(c->err, OLLA_ERR_INPUT, "%s: the plan lists '%s', which is not a planned tensor",
                                c->file, g->tensors[t].name);
    free(free_view);
    return st;
}

/* the output slot of t at its producer; the input slot of s there that a
 * rule of the given kind lets t share, or -1 */
static int share_slot(const checker *c, int t, int s, int inplace)
{
    const olla_graph *g = c->g;
    int v = g->tensors[t].producer;
    const olla_op *op = &g->ops[v];
    for (int o = 0; o < op->n_outputs; o++)
        if (g->output_list[op->first_output + o] == t)
            for (int i = 0; i < op->n_explicit_inputs; i++)
                if (g->input_list[op->first_input + i] >= 0 && read_as(c, g->input_list[op->first_input + i]) == s &&
                    olla_graph_share_rule(g, v, i, o, inplace))
                    return i;
    return -1;
}

/* The input s of an in-place write at v has no reader after v, and no tensor
 * of its class (s and the views around it) is a graph output or read later. */
static olla_status check_dies(const checker *c, int t, int s, int v)
{
    const olla_graph *g = c->g;
    char l[300];
    for (int m = c->class_head[c->view_root[s]]; m >= 0; m = c->class_next[m]) {
        const olla_tensor *mt = &g->tensors[m];
        if (mt->is_output)
            return olla_error_set(c->err, OLLA_ERR_INPUT,
                                  "%s: '%s' is written in place over '%s' at node %s, but '%s' is a graph output",
                                  c->file, g->tensors[t].name, g->tensors[s].name, label(c, v, l, sizeof l), mt->name);
        for (int k = 0; k < mt->n_consumers; k++) {
            int reader = g->consumer_list[mt->first_consumer + k];
            if (op_runs(c, reader) && c->step[reader] > c->step[v]) {
                char l2[300];
                return olla_error_set(c->err, OLLA_ERR_INPUT,
                                      "%s: '%s' is written in place over '%s' at node %s, but node %s reads '%s' later",
                                      c->file, g->tensors[t].name, g->tensors[s].name, label(c, v, l, sizeof l),
                                      label(c, reader, l2, sizeof l2), mt->name);
            }
        }
        if (c->last[m] > c->step[v]) /* read later through an op the runtime drops */
            return olla_error_set(c->err, OLLA_ERR_INPUT,
                                  "%s: '%s' is written in place over '%s' at node %s, but '%s' is read later", c->file,
                                  g->tensors[t].name, g->tensors[s].name, label(c, v, l, sizeof l), mt->name);
    }
    return OLLA_OK;
}

/* Each declared share on its own: an allowed rule, equal sizes and offsets,
 * and for an in-place write, the last use of its input's buffer. */
static olla_status check_shares(checker *c)
{
    const olla_graph *g = c->g;
    const olla_plan_layout *p = c->p;
    for (int t = 0; t < g->n_tensors; t++)
        c->view_root[t] = c->buf[t] = t;
    if (!p->share)
        return OLLA_OK;
    for (int t = 0; t < g->n_tensors; t++)
        if (p->offset[t] >= 0 && p->share[t] == OLLA_BUFFER_VIEW && p->shares[t] >= 0)
            c->view_root[find(c->view_root, t)] = find(c->view_root, p->shares[t]);
    for (int t = 0; t < g->n_tensors; t++) {
        c->view_root[t] = find(c->view_root, t);
        c->class_head[t] = -1;
    }
    for (int t = g->n_tensors - 1; t >= 0; t--)
        if (p->offset[t] >= 0) {
            c->class_next[t] = c->class_head[c->view_root[t]];
            c->class_head[c->view_root[t]] = t;
        }
    for (int t = 0; t < g->n_tensors; t++) {
        if (p->offset[t] < 0 || p->share[t] == OLLA_BUFFER_OWN)
            continue;
        int s = p->shares[t], inplace = p->share[t] == OLLA_BUFFER_INPLACE;
        int v = g->tensors[t].producer;
        const char *kind = inplace ? "written in place over" : "a view of";
        char l[300];
        if (s < 0 || p->offset[s] < 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT, "%s: '%s' is %s a tensor the plan does not list", c->file,
                                  g->tensors[t].name, kind);
        if (share_slot(c, t, s, inplace) < 0)
            return olla_error_set(c->err, OLLA_ERR_INPUT,
                                  "%s: '%s' cannot be %s '%s': no sharing rule of node %s allows it (the rules: "
                                  "passes/runtime/sharing_rules.c)",
                                  c->file, g->tensors[t].name, kind, g->tensors[s].name, label(c, v, l, sizeof l));
        if (g->tensors[t].bytes != g->tensors[s].bytes || p->offset[t] != p->offset[s])
            return olla_error_set(c->err, OLLA_ERR_INPUT,
                                  "%s: '%s' is %s '%s' at node %s, but their sizes (%lld, %lld) or offsets (%lld, "
                                  "%lld) differ",
                                  c->file, g->tensors[t].name, kind, g->tensors[s].name, label(c, v, l, sizeof l),
                                  (long long)g->tensors[t].bytes, (long long)g->tensors[s].bytes,
                                  (long long)p->offset[t], (long long)p->offset[s]);
        if (inplace) {
            olla_status st = check_dies(c, t, s, v);
            if (st != OLLA_OK)
                return st;
        }
        c->buf[find(c->buf, t)] = find(c->buf, s);
    }
    for (int t = 0; t < g->n_tensors; t++)
        c->buf[t] = find(c->buf, t);
    return OLLA_OK;
}

/* lifetimes of the graph's tensors under the order, from its DAG without
 * shares: first = the producer's step, last = the last reader's (or the end) */
static olla_status lifetimes(checker *c, olla_dag *dag, olla_graph_dag_map *map)
{
    int nt = dag->n_tensors;
    int *first = malloc(((size_t)nt + 1) * sizeof(int)), *last = malloc(((size_t)nt + 1) * sizeof(int));
    olla_status st = first && last ? OLLA_OK : olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
    if (st == OLLA_OK)
        st = olla_dag_lifetimes(dag, c->p->order, first, last, c->err);
    for (int e = 0; st == OLLA_OK && e < nt; e++) {
        c->first[map->graph_tensor[e]] = first[e];
        c->last[map->graph_tensor[e]] = last[e];
    }
    free(first);
    free(last);
    return st;
}

typedef struct {
    int64_t lo, hi; /* [lo, hi) */
    int last;       /* last live step */
    int tensor;
} live_range;

typedef struct {
    int first, tensor;
} by_first;

static int cmp_first(const void *a, const void *b)
{
    const by_first *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

static olla_status overlap_error(const checker *c, int t, int64_t lo, int64_t hi, const live_range *o, int step)
{
    return olla_error_set(c->err, OLLA_ERR_INPUT,
                          "%s: '%s' [%lld, %lld) overlaps '%s' [%lld, %lld) while both are live at step %d", c->file,
                          c->g->tensors[t].name, (long long)lo, (long long)hi, c->g->tensors[o->tensor].name,
                          (long long)o->lo, (long long)o->hi, step);
}

/* ---- the live ranges: disjoint, in a treap keyed by their start ----
 *
 * Each range is one entry of an array (its index the treap's node,
 * util/olla_treap.h), so finding the ranges a new buffer meets, dropping the
 * dead ones and adding the buffer take O(log n) each instead of moving the
 * ranges after it. */

/* 1 when range u starts at or below range k (the split keeps those left) */
static int starts_by(const void *ctx, int u, int k)
{
    const live_range *a = ctx;
    return a[u].lo <= a[k].lo;
}

/* Adds range k ([lo, hi) of tensor t, first live at step) to the treap: the
 * ranges it meets must be dead by then, and are dropped (the one starting at
 * or below lo first, then those above in address order). */
static olla_status range_add(const checker *c, live_range *a, olla_treap *t, int k, int step)
{
    int l, r;
    olla_treap_split(t, t->root, k, starts_by, a, &l, &r);
    olla_status st = OLLA_OK;
    while (st == OLLA_OK && l >= 0 && a[olla_treap_last(t, l)].hi > a[k].lo) { /* predecessor */
        int q = olla_treap_last(t, l);
        if (a[q].last >= step)
            st = overlap_error(c, a[k].tensor, a[k].lo, a[k].hi, &a[q], step);
        else
            l = olla_treap_drop_last(t, l);
    }
    while (st == OLLA_OK && r >= 0 && a[olla_treap_first(t, r)].lo < a[k].hi) { /* successors */
        int q = olla_treap_first(t, r);
        if (a[q].last >= step)
            st = overlap_error(c, a[k].tensor, a[k].lo, a[k].hi, &a[q], step);
        else
            r = olla_treap_drop_first(t, r);
    }
    if (st == OLLA_OK)
        l = olla_treap_merge(t, l, k);
    t->root = olla_treap_merge(t, l, r);
    return st;
}

/* each buffer's first and last step (bfirst, blast: -1 when it has none),
 * and the buffers with a step into idx by first step; returns their number */
static int buffer_steps(const checker *c, int *bfirst, int *blast, by_first *idx)
{
    const olla_plan_layout *p = c->p;
    int nt = c->g->n_tensors, n = 0;
    for (int t = 0; t < nt; t++) {
        bfirst[t] = -1;
        blast[t] = -1;
    }
    for (int t = 0; t < nt; t++) {
        if (p->offset[t] < 0 || p->bytes[t] <= 0)
            continue;
        int b = c->buf[t];
        if (bfirst[b] < 0 || c->first[t] < bfirst[b])
            bfirst[b] = c->first[t];
        if (c->last[t] > blast[b])
            blast[b] = c->last[t];
    }
    for (int t = 0; t < nt; t++)
        if (bfirst[t] >= 0 && c->buf[t] == t)
            idx[n++] = (by_first){bfirst[t], t};
    qsort(idx, (size_t)n, sizeof *idx, cmp_first);
    return n;
}

/* the buffers' bytes over the steps, through a difference array: the peak */
static olla_status bytes_peak(const checker *c, const by_first *idx, int n, const int *bfirst, const int *blast,
                              int64_t *peak)
{
    int steps = c->g->n_ops;
    int64_t *delta = calloc((size_t)steps + 2, sizeof *delta);
    if (!delta)
        return olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
    for (int k = 0; k < n; k++) {
        int t = idx[k].tensor;
        delta[bfirst[t]] += c->p->bytes[t];
        delta[blast[t] + 1] -= c->p->bytes[t];
    }
    int64_t live = 0;
    *peak = 0;
    for (int s = 0; s < steps; s++) {
        live += delta[s];
        if (live > *peak)
            *peak = live;
    }
    free(delta);
    return OLLA_OK;
}

/* No two buffers live at the same step overlap: sweep the buffers by their
 * first step, keeping the live ranges in address order (disjoint by
 * construction). A buffer spans its tensors' lifetimes and its owner's bytes. */
static olla_status sweep(checker *c, int64_t *peak)
{
    const olla_plan_layout *p = c->p;
    int nt = c->g->n_tensors;
    olla_treap tree;
    olla_treap_init(&tree);
    by_first *idx = malloc(((size_t)nt + 1) * sizeof *idx);
    live_range *act = malloc(((size_t)nt + 1) * sizeof *act);
    int *bfirst = malloc(((size_t)nt + 1) * sizeof(int)), *blast = malloc(((size_t)nt + 1) * sizeof(int));
    olla_status st = OLLA_OK;
    if (!idx || !act || !bfirst || !blast || !olla_treap_reserve(&tree, (size_t)nt + 1)) {
        st = olla_error_set(c->err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
        goto done;
    }
    int n = buffer_steps(c, bfirst, blast, idx);
    if (peak && (st = bytes_peak(c, idx, n, bfirst, blast, peak)) != OLLA_OK)
        goto done;
    for (int k = 0; k < n && st == OLLA_OK; k++) {
        int t = idx[k].tensor;
        act[k] = (live_range){p->offset[t], p->offset[t] + p->bytes[t], blast[t], t};
        st = range_add(c, act, &tree, k, idx[k].first);
    }
done:
    olla_treap_free(&tree);
    free(idx);
    free(act);
    free(bfirst);
    free(blast);
    return st;
}

olla_status olla_plan_verify(const olla_graph *g, const olla_plan_layout *p, int64_t *peak, olla_error *err)
{
    checker c = {g, p, g->model->path, err, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if (p->alignment < 1)
        return olla_error_set(err, OLLA_ERR_INPUT, "%s: plan alignment %lld is not positive", c.file,
                              (long long)p->alignment);
    olla_dag dag;
    olla_graph_dag_map map;
    olla_status st = olla_graph_dag(g, 1, &(olla_dag_sharing){NULL, 0, p->view}, &dag, &map, err);
    if (st != OLLA_OK)
        return st;
    size_t nt = (size_t)g->n_tensors + 1;
    c.step = malloc(((size_t)g->n_ops + 1) * sizeof(int));
    c.first = malloc(nt * sizeof(int));
    c.last = malloc(nt * sizeof(int));
    c.view_root = malloc(nt * sizeof(int));
    c.buf = malloc(nt * sizeof(int));
    c.class_head = malloc(nt * sizeof(int));
    c.class_next = malloc(nt * sizeof(int));
    if (!c.step || !c.first || !c.last || !c.view_root || !c.buf || !c.class_head || !c.class_next)
        st = olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking the plan");
    else if (!olla_dag_is_topological(&dag, p->order))
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: the nodes are not in a valid topological order", c.file);
    if (st == OLLA_OK) {
        for (int s = 0; s < g->n_ops; s++)
            c.step[p->order[s]] = s;
        st = lifetimes(&c, &dag, &map);
    }
    if (st == OLLA_OK)
        st = check_entries(&c);
    if (st == OLLA_OK)
        st = check_shares(&c);
    if (st == OLLA_OK)
        st = sweep(&c, peak);
    free(c.step);
    free(c.first);
    free(c.last);
    free(c.view_root);
    free(c.buf);
    free(c.class_head);
    free(c.class_next);
    olla_graph_dag_map_free(&map);
    olla_dag_free(&dag);
    return st;
}
