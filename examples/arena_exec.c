/* olla-onnx example: a runtime executing a planned model over one arena.
 *
 *   olla-arena-exec [--corrupt] model.planned.onnx
 *
 * It runs the nodes in the model's order and serves each allocation from the
 * plan (the k-th allocation gets the k-th planned offset; frees are no-ops).
 * Instead of computing, each node writes a pattern unique to each output over
 * the output's range, and checks that every planned input still holds its
 * producer's pattern before and after the node writes. A plan that let a live
 * tensor be overwritten fails here. --corrupt moves one output onto one of
 * its node's inputs first, to show that the check catches it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olla_plan.h"
#include "util/olla_strmap.h"
#include "onnx/olla_model.h"

typedef struct {
    int64_t offset, bytes;
    uint32_t tag;
    int produced;
} slot;

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

int main(int argc, char **argv)
{
    int corrupt = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--corrupt") == 0)
            corrupt = 1;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: olla-arena-exec [--corrupt] model.planned.onnx\n");
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
    size_t n = olla_runtime_plan_allocation_count(plan);
    slot *slots = calloc(n + 1, sizeof *slots);
    olla_strmap idx;
    int rc = 0;
    if (!slots || !olla_strmap_init(&idx, n)) {
        fprintf(stderr, "olla-arena-exec: out of memory\n");
        return 3;
    }
    for (size_t k = 0; k < n; k++) {
        const olla_allocation *a = olla_runtime_plan_allocation(plan, k);
        slots[k].offset = a->offset;
        slots[k].bytes = a->bytes;
        slots[k].tag = (uint32_t)k + 1;
        olla_strmap_put(&idx, a->name, (int)k);
    }
    const Onnx__GraphProto *g = m->proto->graph;
    if (corrupt) { /* first node with a planned input and output: put the output on the input */
        int done = 0;
        for (size_t v = 0; v < g->n_node && !done; v++)
            for (size_t i = 0; i < g->node[v]->n_input && !done; i++) {
                int in = g->node[v]->input[i][0] ? olla_strmap_get(&idx, g->node[v]->input[i]) : -1;
                for (size_t o = 0; o < g->node[v]->n_output && in >= 0 && !done; o++) {
                    int out = g->node[v]->output[o][0] ? olla_strmap_get(&idx, g->node[v]->output[o]) : -1;
                    if (out >= 0 && slots[in].bytes >= 4 && slots[out].bytes >= 4) {
                        slots[out].offset = slots[in].offset;
                        if (slots[out].bytes > olla_runtime_plan_arena_bytes(plan) - slots[out].offset)
                            slots[out].bytes = olla_runtime_plan_arena_bytes(plan) - slots[out].offset;
                        fprintf(stderr, "olla-arena-exec: corrupting: '%s' moved onto '%s'\n", g->node[v]->output[o],
                                g->node[v]->input[i]);
                        done = 1;
                    }
                }
            }
    }
    int64_t arena_bytes = olla_runtime_plan_arena_bytes(plan);
    uint8_t *arena = malloc((size_t)arena_bytes + 4);
    if (!arena) {
        fprintf(stderr, "olla-arena-exec: cannot allocate the %lld-byte arena\n", (long long)arena_bytes);
        return 3;
    }
    size_t next_alloc = 0, checks = 0;
    for (size_t v = 0; v < g->n_node && rc == 0; v++) {
        const Onnx__NodeProto *node = g->node[v];
        for (int pass = 0; pass < 2 && rc == 0; pass++) {
            if (pass == 1) /* the node writes its outputs */
                for (size_t o = 0; o < node->n_output && rc == 0; o++) {
                    int k = node->output[o][0] ? olla_strmap_get(&idx, node->output[o]) : -1;
                    if (k < 0)
                        continue;
                    if ((size_t)k != next_alloc) {
                        fprintf(stderr, "olla-arena-exec: node %zu allocates '%s', but allocation %zu of the plan is '%s'\n",
                                v, node->output[o], next_alloc,
                                next_alloc < n ? olla_runtime_plan_allocation(plan, next_alloc)->name : "(none)");
                        rc = 1;
                        break;
                    }
                    next_alloc++;
                    fill(arena, &slots[k]);
                    slots[k].produced = 1;
                }
            for (size_t i = 0; i < node->n_input && rc == 0; i++) {
                int k = node->input[i][0] ? olla_strmap_get(&idx, node->input[i]) : -1;
                if (k < 0)
                    continue;
                checks++;
                if (!slots[k].produced || !intact(arena, &slots[k])) {
                    fprintf(stderr, "olla-arena-exec: '%s' was overwritten before node %zu (%s) %s it\n",
                            node->input[i], v, node->op_type, pass ? "finished reading" : "read");
                    rc = 1;
                }
            }
        }
    }
    for (size_t i = 0; i < g->n_output && rc == 0; i++) {
        int k = olla_strmap_get(&idx, g->output[i]->name);
        if (k >= 0 && !intact(arena, &slots[k])) {
            fprintf(stderr, "olla-arena-exec: graph output '%s' was overwritten before the end\n", g->output[i]->name);
            rc = 1;
        }
    }
    if (rc == 0 && next_alloc != n) {
        fprintf(stderr, "olla-arena-exec: the plan has %zu allocations, the nodes made %zu\n", n, next_alloc);
        rc = 1;
    }
    if (rc == 0)
        printf("%s: %zu allocations over a %lld-byte arena, %zu input checks, no tensor overwritten\n", path, n,
               (long long)arena_bytes, checks);
    free(arena);
    free(slots);
    olla_strmap_free(&idx);
    olla_runtime_plan_free(plan);
    olla_model_free(m);
    return rc;
}
