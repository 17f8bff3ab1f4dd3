/* olla-onnx example: a runtime executing a planned model over one arena.
 *
 *   olla-arena-exec [--corrupt | --corrupt-share] model.planned.onnx
 *
 * It runs the nodes in the order the plan was made for (graph.node's, or the
 * one its runtime executes, as the plan records) and serves each allocation
 * from the plan (the k-th allocation gets the k-th planned offset; frees are
 * no-ops).
 * Instead of computing, each node writes a pattern unique to each output over
 * the output's range, and checks that every planned input still holds its
 * producer's pattern before and after the node writes. The plan's buffer
 * sharing is executed as a runtime would: a view writes nothing (it holds its
 * input's pattern), an in-place kernel reads its input's pattern and writes
 * its output's pattern over it. A plan that let a live tensor be overwritten
 * fails here.
 *
 * --corrupt moves one output onto an input that a later node still reads;
 * --corrupt-share makes one output an in-place write over such an input (a
 * share the sharing rules do not allow). Both must be caught. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"

typedef struct {
    int64_t offset, bytes;
    uint32_t tag;
    olla_buffer_share share;
    int shares; /* the slot whose buffer it takes, or -1 */
    int produced;
} slot;

/* One node of the graph: borrowed from the model (olla_model_node). */
typedef struct {
    const char *op_type;
    size_t n_input, n_output;
    const char *const *input, *const *output;
} node_view;

/* Tensor name -> slot, open addressing over a power-of-two table. */
typedef struct {
    const char **names;
    int *slots;
    size_t mask;
} name_index;

typedef struct {
    const olla_model *m;
    size_t n_node;
    const int *order; /* node positions in execution order, or NULL: graph.node's */
    slot *slots;
    size_t n;
    name_index idx;
    uint8_t *arena;
    int64_t arena_bytes;
} exec;

static size_t name_hash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static int index_init(name_index *ix, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 1)
        cap *= 2;
    ix->names = calloc(cap, sizeof *ix->names);
    ix->slots = calloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    return ix->names && ix->slots;
}

/* The position of name in the table, or of the empty entry where it goes. */
static size_t index_find(const name_index *ix, const char *name)
{
    size_t i = name_hash(name) & ix->mask;
    while (ix->names[i] && strcmp(ix->names[i], name) != 0)
        i = (i + 1) & ix->mask;
    return i;
}

static int index_get(const name_index *ix, const char *name)
{
    size_t i = index_find(ix, name);
    return ix->names[i] ? ix->slots[i] : -1;
}

static void index_put(name_index *ix, const char *name, int slot_k)
{
    size_t i = index_find(ix, name);
    ix->names[i] = name;
    ix->slots[i] = slot_k;
}

static void index_free(name_index *ix)
{
    free(ix->names);
    free(ix->slots);
}

static node_view node(const exec *x, size_t v)
{
    node_view nv;
    nv.op_type = olla_model_node(x->m, v, &nv.n_input, &nv.input, &nv.n_output, &nv.output);
    return nv;
}

static uint32_t word_at(uint32_t tag, uint64_t addr)
{
    return tag * 2654435761u ^ (uint32_t)(addr / 4);
}

static void fill(uint8_t *arena, const slot *s)
{
    uint64_t a = ((uint64_t)s->offset + 3) & ~3ull, end = (uint64_t)(s->offset + s->bytes);
    for (; a + 4 <= end; a += 4) {
        uint32_t w = word_at(s->tag, a);
        memcpy(arena + a, &w, 4);
    }
}

/* Samples every 64 bytes and the last word. Returns 1 when intact. */
static int intact(const uint8_t *arena, const slot *s)
{
    uint64_t a = ((uint64_t)s->offset + 3) & ~3ull, end = (uint64_t)(s->offset + s->bytes);
    if (a + 4 > end)
        return 1;
    for (uint64_t p = a;; p += 64) {
        if (p + 4 > end)
            p = (end - 4) & ~3ull;
        uint32_t w;
        memcpy(&w, arena + p, 4);
        if (w != word_at(s->tag, p))
            return 0;
        if (p + 64 + 4 > end)
            break;
    }
    uint64_t last = (end - 4) & ~3ull;
    uint32_t w;
    memcpy(&w, arena + last, 4);
    return w == word_at(s->tag, last);
}

static int slot_of(const exec *x, const char *name)
{
    return name && name[0] ? index_get(&x->idx, name) : -1;
}

/* the node run at step s */
static size_t node_at(const exec *x, size_t s)
{
    return x->order ? (size_t)x->order[s] : s;
}

/* 1 when a node after step s reads the tensor of slot k, or it is a graph output */
static int read_after(const exec *x, size_t s, int k)
{
    for (size_t w = s + 1; w < x->n_node; w++) {
        node_view nv = node(x, node_at(x, w));
        for (size_t i = 0; i < nv.n_input; i++)
            if (slot_of(x, nv.input[i]) == k)
                return 1;
    }
    for (size_t i = 0; i < olla_model_output_count(x->m); i++)
        if (slot_of(x, olla_model_output_name(x->m, i)) == k)
            return 1;
    return 0;
}

/* The first node output that can be put over an input still needed after
 * its node: its offset moves there; with as_share, the runtime is also told
 * it is an in-place write (so the node's own reading of that input is not
 * checked after it writes, as for a real one). */
static int corrupt(exec *x, int as_share)
{
    for (size_t st = 0; st < x->n_node; st++) {
        node_view nv = node(x, node_at(x, st));
        for (size_t i = 0; i < nv.n_input; i++) {
            int in = slot_of(x, nv.input[i]);
            if (in < 0 || x->slots[in].bytes < 4 || !read_after(x, st, in))
                continue;
            for (size_t o = 0; o < nv.n_output; o++) {
                int out = slot_of(x, nv.output[o]);
                if (out < 0 || x->slots[out].bytes < 4 || x->slots[out].offset == x->slots[in].offset)
                    continue;
                slot *s = &x->slots[out];
                s->offset = x->slots[in].offset;
                if (s->bytes > x->arena_bytes - s->offset)
                    s->bytes = x->arena_bytes - s->offset;
                if (as_share) {
                    s->share = OLLA_BUFFER_INPLACE;
                    s->shares = in;
                }
                fprintf(stderr, "olla-arena-exec: corrupting: '%s' %s '%s'\n", nv.output[o],
                        as_share ? "written in place over" : "moved onto", nv.input[i]);
                return 1;
            }
        }
    }
    return 0;
}

/* Reads the plan into slots; a view holds the pattern of the buffer it views. */
static int load_slots(exec *x, const olla_runtime_plan *plan)
{
    x->n = olla_runtime_plan_allocation_count(plan);
    x->arena_bytes = olla_runtime_plan_arena_bytes(plan);
    x->slots = calloc(x->n + 1, sizeof *x->slots);
    if (!x->slots || !index_init(&x->idx, x->n))
        return 0;
    for (size_t k = 0; k < x->n; k++) {
        const olla_allocation *a = olla_runtime_plan_allocation(plan, k);
        slot *s = &x->slots[k];
        s->offset = a->offset;
        s->bytes = a->bytes;
        s->tag = (uint32_t)k + 1;
        s->share = a->share;
        s->shares = a->shares ? index_get(&x->idx, a->shares) : -1;
        if (s->share == OLLA_BUFFER_VIEW && s->shares >= 0)
            s->tag = x->slots[s->shares].tag;
        index_put(&x->idx, a->name, (int)k);
    }
    return 1;
}

/* 1 when output slot k of node v is an in-place write over its input slot in */
static int written_over(const exec *x, const node_view *nv, int in)
{
    for (size_t o = 0; o < nv->n_output; o++) {
        int k = slot_of(x, nv->output[o]);
        if (k >= 0 && x->slots[k].share == OLLA_BUFFER_INPLACE && x->slots[k].shares == in)
            return 1;
    }
    return 0;
}

/* Checks node v's planned inputs (after: once it wrote its outputs; then an
 * input it wrote over in place is gone on purpose). */
static int check_inputs(exec *x, size_t v, int after, size_t *checks)
{
    node_view nv = node(x, v);
    for (size_t i = 0; i < nv.n_input; i++) {
        int k = slot_of(x, nv.input[i]);
        if (k < 0 || (after && written_over(x, &nv, k)))
            continue;
        (*checks)++;
        if (!x->slots[k].produced || !intact(x->arena, &x->slots[k])) {
            fprintf(stderr, "olla-arena-exec: '%s' was overwritten before node %zu (%s) %s it\n", nv.input[i], v,
                    nv.op_type, after ? "finished reading" : "read");
            return 1;
        }
    }
    return 0;
}

/* Node v makes its outputs: the k-th allocation of the plan each; a view
 * writes nothing, anything else writes its pattern. */
static int write_outputs(exec *x, const olla_runtime_plan *plan, size_t v, size_t *next_alloc)
{
    node_view nv = node(x, v);
    for (size_t o = 0; o < nv.n_output; o++) {
        int k = slot_of(x, nv.output[o]);
        if (k < 0)
            continue;
        if ((size_t)k != *next_alloc) {
            fprintf(stderr, "olla-arena-exec: node %zu allocates '%s', but allocation %zu of the plan is '%s'\n", v,
                    nv.output[o], *next_alloc,
                    *next_alloc < x->n ? olla_runtime_plan_allocation(plan, *next_alloc)->name : "(none)");
            return 1;
        }
        (*next_alloc)++;
        if (x->slots[k].share != OLLA_BUFFER_VIEW)
            fill(x->arena, &x->slots[k]);
        x->slots[k].produced = 1;
    }
    return 0;
}

static int run(exec *x, const olla_runtime_plan *plan, size_t *checks)
{
    size_t next_alloc = 0;
    for (size_t s = 0; s < x->n_node; s++) {
        size_t v = node_at(x, s);
        if (check_inputs(x, v, 0, checks) || write_outputs(x, plan, v, &next_alloc) || check_inputs(x, v, 1, checks))
            return 1;
    }
    for (size_t i = 0; i < olla_model_output_count(x->m); i++) {
        int k = slot_of(x, olla_model_output_name(x->m, i));
        if (k >= 0 && !intact(x->arena, &x->slots[k])) {
            fprintf(stderr, "olla-arena-exec: graph output '%s' was overwritten before the end\n",
                    olla_model_output_name(x->m, i));
            return 1;
        }
    }
    if (next_alloc != x->n) {
        fprintf(stderr, "olla-arena-exec: the plan has %zu allocations, the nodes made %zu\n", x->n, next_alloc);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int corrupt_mode = 0; /* 1: an offset, 2: a share */
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--corrupt") == 0)
            corrupt_mode = 1;
        else if (strcmp(argv[i], "--corrupt-share") == 0)
            corrupt_mode = 2;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: olla-arena-exec [--corrupt | --corrupt-share] model.planned.onnx\n");
        return 2;
    }
    olla_error err = {0};
    olla_runtime_plan *plan = NULL;
    olla_model *m = NULL;
    if (olla_runtime_plan_load(path, &plan, &err) != OLLA_OK || olla_model_load(path, &m, &err) != OLLA_OK) {
        fprintf(stderr, "olla-arena-exec: %s\n", err.message);
        olla_runtime_plan_free(plan);
        return 1;
    }
    exec x;
    memset(&x, 0, sizeof x);
    x.m = m;
    x.n_node = olla_model_node_count(m);
    size_t n_order = 0;
    x.order = olla_runtime_plan_order(plan, &n_order);
    int rc = 0;
    if (x.order && n_order != x.n_node) {
        fprintf(stderr, "olla-arena-exec: the plan's order has %zu nodes, the model %zu\n", n_order, x.n_node);
        olla_runtime_plan_free(plan);
        olla_model_free(m);
        return 1;
    }
    size_t checks = 0;
    if (!load_slots(&x, plan) || !(x.arena = malloc((size_t)x.arena_bytes + 4))) {
        fprintf(stderr, "olla-arena-exec: out of memory (arena of %lld bytes)\n", (long long)x.arena_bytes);
        rc = 3;
    } else if (corrupt_mode && !corrupt(&x, corrupt_mode == 2)) {
        fprintf(stderr, "olla-arena-exec: nothing to corrupt: no planned input is read after its node\n");
        rc = 2;
    } else if ((rc = run(&x, plan, &checks)) == 0) {
        printf("%s: %zu allocations over a %lld-byte arena, %zu input checks, no tensor overwritten\n", path, x.n,
               (long long)x.arena_bytes, checks);
    }
    free(x.arena);
    free(x.slots);
    index_free(&x.idx);
    olla_runtime_plan_free(plan);
    olla_model_free(m);
    return rc;
}
