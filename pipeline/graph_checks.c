/* olla-onnx: what a graph must satisfy before it is planned: every planned
 * tensor has a size (or the user leaves it out), no size overflows, and the
 * planned tensors together stay far from 64-bit overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_graph_dag.h"
#include "pipeline/olla_pipeline.h"

/* Lists tensors whose size waits on an unbound symbolic dimension. */
static olla_status check_symbolic(const olla_graph *g, olla_error *err)
{
    char names[600] = "", dims[300] = "";
    int count = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes >= 0 || ten->type.rank < 0)
            continue;
        const char *sym = NULL;
        for (int d = 0; d < ten->type.rank && !sym; d++)
            if (ten->type.dims[d].value < 0 && ten->type.dims[d].param)
                sym = ten->type.dims[d].param;
        if (!sym)
            continue;
        if (count < 3) {
            size_t n = strlen(names);
            snprintf(names + n, sizeof names - n, "%s'%s'", count ? ", " : "", ten->name);
        }
        count++;
        for (int d = 0; d < ten->type.rank; d++) {
            const char *p = ten->type.dims[d].param;
            if (ten->type.dims[d].value >= 0 || !p)
                continue;
            char key[128];
            snprintf(key, sizeof key, " --dim %s=N", p);
            if (!strstr(dims, key) && strlen(dims) + strlen(key) + 1 < sizeof dims)
                strcat(dims, key);
        }
    }
    if (!count)
        return OLLA_OK;
    return olla_error_set(err, OLLA_ERR_INPUT,
                          "%s: %d tensor%s (%s%s) %s symbolic dimensions with no value; pass%s",
                          g->model->path, count, count == 1 ? "" : "s", names, count > 3 ? ", ..." : "",
                          count == 1 ? "has" : "have", dims);
}

/* A tensor of unknown size cannot be planned; unless the user accepts leaving
 * it out, that is an error naming it. Sequences, maps and optionals are never
 * planned and are not errors. */
static olla_status check_unknown(const olla_graph *g, olla_error *err)
{
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes >= 0 || ten->type.kind != OLLA_VALUE_TENSOR)
            continue;
        if (ten->type.elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING)
            continue; /* strings have no fixed size: never planned, listed in the report */
        char l[300];
        if (ten->unknown_reason) {
            /* the reason may open with the tensor's own name: said once */
            const char *why = ten->unknown_reason;
            size_t len = strlen(ten->name);
            if (why[0] == '\'' && strncmp(why + 1, ten->name, len) == 0 && strncmp(why + 1 + len, "': ", 3) == 0)
                why += len + 4;
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: cannot plan '%s' (output of node %s): %s, or pass --allow-unknown-sizes to "
                                  "leave it out of the plan",
                                  g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l), why);
        }
        return olla_error_set(err, OLLA_ERR_INPUT,
                              "%s: cannot plan '%s' (output of node %s): its size is unknown; declare its shape in value_info, or pass "
                              "--allow-unknown-sizes to leave it out of the plan",
                              g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l));
    }
    return OLLA_OK;
}

/* A shape whose size overflows 64 bits is bad input, never just unknown. */
static olla_status check_overflow(const olla_graph *g, olla_error *err)
{
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0)
            continue;
        char l[300];
        if (ten->type.kind == OLLA_VALUE_TENSOR && olla_value_bytes(&ten->type) == -2) {
            char dims[400] = "";
            for (int d = 0; d < ten->type.rank; d++) {
                size_t k = strlen(dims);
                snprintf(dims + k, sizeof dims - k, "%s%lld", d ? ", " : "", (long long)ten->type.dims[d].value);
            }
            const char *et = olla_elem_type_name(ten->type.elem_type);
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: tensor '%s' (output of node %s) has shape [%s] of %s, whose size in bytes overflows 64 bits; "
                                  "check its declared dimensions",
                                  g->model->path, ten->name, olla_op_label(g, ten->producer, l, sizeof l), dims,
                                  et ? et : "?");
        }
    }
    return OLLA_OK;
}

/* Every sum of tensor sizes the planner forms must stay far from 64-bit
 * overflow: the planned tensors together are limited to 2^61 bytes. */
static olla_status check_total(const olla_graph *g, int64_t align, olla_error *err)
{
    const int64_t limit = INT64_MAX / 4;
    int64_t total = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (ten->producer < 0 || ten->bytes < 0)
            continue;
        int64_t b = ten->bytes > limit ? limit + 1 : olla_align_up(ten->bytes, align);
        if (b > limit - total)
            return olla_error_set(err, OLLA_ERR_INPUT,
                                  "%s: the planned tensors need more than 2^61 bytes together (the limit is passed at "
                                  "'%s'); check the declared dimensions",
                                  g->model->path, ten->name);
        total += b;
    }
    return OLLA_OK;
}

olla_status olla_pipeline_check_graph(const olla_graph *g, int allow_unknown_sizes, int64_t align, olla_error *err)
{
    olla_status st = check_symbolic(g, err);
    if (st == OLLA_OK)
        st = check_overflow(g, err);
    if (st == OLLA_OK && !allow_unknown_sizes)
        st = check_unknown(g, err);
    if (st == OLLA_OK)
        st = check_total(g, align, err);
    return st;
}
