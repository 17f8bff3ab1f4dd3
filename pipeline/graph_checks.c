/* olla-onnx: what a graph must satisfy before it is planned: every planned
 * tensor has a size (or the user leaves it out), no size overflows, and the
 * planned tensors together stay far from 64-bit overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analysis/olla_graph_dag.h"
#include "passes/shapes/olla_shapes.h"
#include "pipeline/olla_pipeline.h"
#include "util/olla_line.h"

/* The produced tensors of unknown size that planning needs: tensors (not
 * sequences, maps, optionals), not strings, not held outside the plan. */
static int needs_size(const olla_graph *g, int t)
{
    const olla_tensor *ten = &g->tensors[t];
    return !olla_tensor_is_held(g, t) && ten->bytes < 0 && ten->type.kind == OLLA_VALUE_TENSOR &&
           ten->type.elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
}

static int has_symbolic_dim(const olla_tensor *ten)
{
    for (int d = 0; d < ten->type.rank; d++)
        if (ten->type.dims[d].value < 0 && ten->type.dims[d].param)
            return 1;
    return 0;
}

/* Sizes that wait on graph inputs with open dimensions, or on symbolic
 * dimensions with no value: one error with the flags that give them
 * (olla_shape_size_advice, the advice `olla-onnx shapes` gives too). A size
 * that waits on a symbolic dimension is always an error; other unknown
 * sizes only when they may not be left out. */
static olla_status check_open_sizes(const olla_graph *g, const olla_shape_table *types, int allow_unknown_sizes,
                                    olla_error *err)
{
    int n = 0, symbolic = 0;
    const char **names = malloc(((size_t)g->n_tensors + 1) * sizeof *names);
    if (!names)
        return olla_error_set(err, OLLA_ERR_INTERNAL, "out of memory checking the sizes of %s", g->model->path);
    for (int t = 0; t < g->n_tensors; t++)
        if (needs_size(g, t)) {
            names[n++] = g->tensors[t].name;
            symbolic |= has_symbolic_dim(&g->tensors[t]);
        }
    olla_status st = OLLA_OK;
    char advice[sizeof err->message];
    size_t room = sizeof advice - strlen(g->model->path) - 2;
    if (n > 0 && (symbolic || !allow_unknown_sizes) && room >= 256 &&
        olla_shape_size_advice(types, names, (size_t)n, advice, room))
        st = olla_error_set(err, OLLA_ERR_INPUT, "%s: %s", g->model->path, advice);
    free(names);
    return st;
}

/* A tensor of unknown size cannot be planned; unless the user accepts leaving
 * it out, that is an error naming it. Sequences, maps and optionals are never
 * planned and are not errors. */
static olla_status check_unknown(const olla_graph *g, olla_error *err)
{
    static const char tail[] = ", or pass --allow-unknown-sizes to leave it out of the plan";
    for (int t = 0; t < g->n_tensors; t++) {
        const olla_tensor *ten = &g->tensors[t];
        if (!needs_size(g, t))
            continue;
        /* the reason may open with the tensor's own name: said once */
        const char *why = ten->unknown_reason;
        size_t len = strlen(ten->name);
        if (why && why[0] == '\'' && strncmp(why + 1, ten->name, len) == 0 && strncmp(why + 1 + len, "': ", 3) == 0)
            why += len + 4;
        /* whole pieces only: a name or reason too long to fit is left to olla-onnx shapes, never cut */
        char msg[sizeof err->message], label[sizeof err->message];
        olla_line l;
        olla_line_init(&l, msg, sizeof msg);
        olla_op_label(g, ten->producer, label, sizeof label);
        size_t reserve = sizeof tail + 80;
        if (!olla_line_add(&l, reserve, "%s: cannot plan '%s' (output of node %s): ", g->model->path, ten->name,
                           label) &&
            !olla_line_add(&l, reserve, "%s: cannot plan a tensor of unknown size (olla-onnx shapes names it): ",
                           g->model->path))
            olla_line_add(&l, reserve, "cannot plan a tensor of unknown size (olla-onnx shapes names it): ");
        if (!why)
            olla_line_add(&l, reserve, "its size is unknown; declare its shape in value_info");
        else if (!olla_line_add(&l, reserve, "%s", why))
            olla_line_add(&l, reserve, "its size is unknown (olla-onnx shapes gives the reason)");
        olla_line_add(&l, 0, "%s", tail);
        return olla_error_set(err, OLLA_ERR_INPUT, "%s", msg);
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

olla_status olla_pipeline_check_graph(const olla_graph *g, const olla_shape_table *types, int allow_unknown_sizes,
                                      int64_t align, olla_error *err)
{
    olla_status st = check_open_sizes(g, types, allow_unknown_sizes, err);
    if (st == OLLA_OK)
        st = check_overflow(g, err);
    if (st == OLLA_OK && !allow_unknown_sizes)
        st = check_unknown(g, err);
    if (st == OLLA_OK)
        st = check_total(g, align, err);
    return st;
}
