/* olla-onnx: shape rules for ATen fallback nodes (domain org.pytorch.aten,
 * op ATen), which PyTorch exporters emit for operations ONNX lacks. The
 * PyTorch operation is the "operator" attribute (with "overload_name"); its
 * arguments are either attributes named as in PyTorch's signature (traced
 * graphs) or node inputs in signature order (ONNX Runtime training exports).
 * Each rule follows the PyTorch operation's semantics; the pooling,
 * upsampling and normalization ones are in shape_aten_nn.c, views and new
 * tensors of another geometry in shape_aten_view.c, and the readers
 * of their arguments in shape_aten_args.c. An operator without a rule of
 * its own gets the rule of its schema's kind (in place, point-wise, the
 * backward of a point-wise operation: shape_aten_kind.c); one of no kind
 * keeps its outputs unknown with a reason naming it. */
#include <string.h>

#include "passes/shapes/olla_shape_aten.h"

/* ---- element-wise and "like" operations ---- */

/* empty_like, ones_like, zeros_like, full_like, rand_like, randn_like:
 * input 0's shape, the dtype argument's type or input 0's. */
static olla_status aten_like(olla_shape_ctx *c) { return olla_aten_like(c, 0, 0, olla_aten_dtype(c, 1)); }

/* bernoulli, native_dropout_backward...: input 0 again. */
static olla_status aten_same(olla_shape_ctx *c) { return olla_aten_like(c, 0, 0, 0); }

/* empty.memory_format(size, dtype...): the size argument's shape. */
static olla_status aten_empty(olla_shape_ctx *c)
{
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = olla_aten_size_dims(c, "size", 0, dims);
    int32_t elem = olla_aten_dtype(c, 1);
    return olla_shape_set_out(c, 0, elem ? elem : OLLA_DT_FLOAT, rank, rank >= 0 ? dims : NULL);
}

/* slice_backward, select_backward, diagonal_backward, unfold_backward
 * (grad_output, input_sizes, ...): the input's sizes, grad_output's type. */
static olla_status aten_to_input_sizes(olla_shape_ctx *c)
{
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = olla_aten_size_dims(c, "input_sizes", 1, dims);
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), rank, rank >= 0 ? dims : NULL);
}

/* native_dropout(input, p, train) -> output, mask (bool), both input's shape. */
static olla_status aten_native_dropout(olla_shape_ctx *c)
{
    olla_status st = olla_aten_like(c, 0, 0, 0);
    return st == OLLA_OK ? olla_aten_like(c, 1, 0, OLLA_DT_BOOL) : st;
}

/* bitwise_or, bitwise_and(self, other): broadcast, self's type. */
static olla_status aten_bitwise(olla_shape_ctx *c)
{
    static const int idx[2] = {0, 1};
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank;
    if (olla_shape_broadcast(c, idx, 2, &rank, dims) != 0)
        return olla_shape_fail(c, "the inputs of %s do not broadcast", "bitwise_or/bitwise_and");
    return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), rank, rank >= 0 ? dims : NULL);
}

/* ---- losses ---- */

/* PyTorch's reduction: 0 none, 1 mean (the default), 2 sum. */
static int64_t reduction(olla_shape_ctx *c, int input)
{
    int64_t r = 1;
    return olla_aten_int(c, "reduction", input, &r) ? r : 1;
}

/* nll_loss_forward(self, target, weight, reduction, ignore_index) -> output
 * (target's shape with reduction none, else a scalar), total_weight (scalar). */
static olla_status aten_nll_loss_forward(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    olla_status st = reduction(c, 3) == 0 ? olla_aten_like(c, 0, 1, elem) : olla_shape_set_out(c, 0, elem, 0, NULL);
    return st == OLLA_OK ? olla_shape_set_out(c, 1, elem, 0, NULL) : st;
}

/* mse_loss(self, target, reduction): the broadcast shape or a scalar. */
static olla_status aten_mse_loss(olla_shape_ctx *c)
{
    if (reduction(c, 2) != 0)
        return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), 0, NULL);
    return aten_bitwise(c);
}

/* ---- linear algebra and indexing ---- */

/* baddbmm(self, batch1 [b,n,m], batch2 [b,m,p]) -> [b,n,p]. */
static olla_status aten_baddbmm(olla_shape_ctx *c)
{
    const olla_value_type *a = olla_shape_in(c, 1), *b = olla_shape_in(c, 2);
    int32_t elem = olla_shape_in_elem(c, 1) ? olla_shape_in_elem(c, 1) : olla_shape_in_elem(c, 0);
    if (!a || !b || a->rank != 3 || b->rank != 3)
        return olla_shape_set_out(c, 0, elem, 3, NULL);
    olla_dim dims[3] = {a->dims[0], a->dims[1], b->dims[2]};
    return olla_shape_set_out(c, 0, elem, 3, dims);
}

/* embedding(weight [n, d], indices, ...) -> indices' shape + [d]. */
static olla_status aten_embedding(olla_shape_ctx *c)
{
    const olla_value_type *w = olla_shape_in(c, 0), *idx = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!w || !idx || w->rank != 2 || idx->rank < 0 || idx->rank >= OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, idx->dims, sizeof *dims * (size_t)idx->rank);
    dims[idx->rank] = w->dims[1];
    return olla_shape_set_out(c, 0, elem, idx->rank + 1, dims);
}

/* embedding_backward / embedding_dense_backward(grad [..., d], indices,
 * num_weights, ...) -> [num_weights, d]. */
static olla_status aten_embedding_backward(olla_shape_ctx *c)
{
    const olla_value_type *g = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t n;
    if (!g || g->rank < 1 || !olla_aten_int(c, "num_weights", 2, &n) || n < 0)
        return olla_shape_set_out(c, 0, elem, 2, NULL);
    olla_dim dims[2] = {olla_dim_known(n), g->dims[g->rank - 1]};
    return olla_shape_set_out(c, 0, elem, 2, dims);
}

/* numpy_T(self): the dimensions reversed. */
static olla_status aten_numpy_t(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x || x->rank < 0)
        return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        dims[d] = x->dims[x->rank - 1 - d];
    return olla_shape_set_out(c, 0, x->elem_type, x->rank, dims);
}

/* diagonal(self, offset, dim1, dim2): dim1 and dim2 removed, the diagonal's
 * length appended. */
static olla_status aten_diagonal(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int64_t off = 0, d1 = 0, d2 = 1;
    olla_aten_int(c, "offset", 1, &off);
    olla_aten_int(c, "dim1", 2, &d1);
    olla_aten_int(c, "dim2", 3, &d2);
    if (!x || x->rank < 2 || !olla_shape_axis(d1, x->rank, &d1) || !olla_shape_axis(d2, x->rank, &d2) || d1 == d2)
        return olla_shape_set_out(c, 0, olla_shape_in_elem(c, 0), x && x->rank >= 2 ? x->rank - 1 : -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != d1 && d != d2)
            dims[r++] = x->dims[d];
    olla_dim a = x->dims[d1], b = x->dims[d2];
    dims[r] = olla_dim_unknown();
    if (a.value >= 0 && b.value >= 0) {
        int64_t len = off >= 0 ? (a.value < b.value - off ? a.value : b.value - off)
                               : (a.value + off < b.value ? a.value + off : b.value);
        dims[r] = olla_dim_known(len > 0 ? len : 0);
    }
    return olla_shape_set_out(c, 0, x->elem_type, r + 1, dims);
}

/* Reduction over one dimension: dim removed, or kept as 1. */
static olla_status reduce_dim(olla_shape_ctx *c, int out, int32_t elem, int64_t dim, int keep)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x || x->rank < 1 || !olla_shape_axis(dim, x->rank, &dim))
        return olla_shape_set_out(c, out, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != dim)
            dims[r++] = x->dims[d];
        else if (keep)
            dims[r++] = olla_dim_known(1);
    return olla_shape_set_out(c, out, elem, r, dims);
}

/* max, min(self) -> scalar; (self, dim, keepdim) -> values, indices (int64). */
static olla_status aten_minmax(olla_shape_ctx *c)
{
    int64_t dim, keep = 0;
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!olla_aten_int(c, "dim", 1, &dim))
        return olla_shape_set_out(c, 0, elem, 0, NULL);
    olla_aten_int(c, "keepdim", 2, &keep);
    olla_status st = reduce_dim(c, 0, elem, dim, keep != 0);
    return st == OLLA_OK ? reduce_dim(c, 1, OLLA_DT_INT64, dim, keep != 0) : st;
}

/* argmax(self, dim, keepdim) -> int64; with no dim a scalar. */
static olla_status aten_argmax(olla_shape_ctx *c)
{
    int64_t dim, keep = 0;
    if (!olla_aten_int(c, "dim", 1, &dim))
        return olla_shape_set_out(c, 0, OLLA_DT_INT64, 0, NULL);
    olla_aten_int(c, "keepdim", 2, &keep);
    return reduce_dim(c, 0, OLLA_DT_INT64, dim, keep != 0);
}

/* multinomial(self [.., n], num_samples) -> [.., num_samples] of int64. */
static olla_status aten_multinomial(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int64_t k;
    if (!x || x->rank < 1 || x->rank > 2)
        return olla_shape_set_out(c, 0, OLLA_DT_INT64, -1, NULL);
    olla_dim dims[2] = {x->dims[0], olla_dim_unknown()};
    if (olla_aten_int(c, "num_samples", 1, &k) && k >= 0)
        dims[x->rank - 1] = olla_dim_known(k);
    return olla_shape_set_out(c, 0, OLLA_DT_INT64, x->rank, dims);
}

/* unfold(self, dimension, size, step): dimension becomes (n - size) / step
 * + 1 windows, and a last dimension of size. */
static olla_status aten_unfold(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int64_t dim, size, step;
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!x || x->rank < 0 || x->rank >= OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
    if (!olla_aten_int(c, "dimension", 1, &dim) || !olla_aten_int(c, "size", 2, &size) ||
        !olla_aten_int(c, "step", 3, &step) || step < 1 || size < 0 || !olla_shape_axis(dim, x->rank > 0 ? x->rank : 1, &dim))
        return olla_shape_set_out(c, 0, elem, x->rank + 1, NULL);
    if (x->rank > 0) {
        olla_dim n = x->dims[dim];
        dims[dim] = n.value >= size ? olla_dim_known((n.value - size) / step + 1) : olla_dim_unknown();
    }
    dims[x->rank] = olla_dim_known(size);
    return olla_shape_set_out(c, 0, elem, x->rank + 1, dims);
}

/* ---- dispatch ---- */

static const olla_aten_rule rules[] = {
    {"empty_like", aten_like},
    {"ones_like", aten_like},
    {"zeros_like", aten_like},
    {"full_like", aten_like},
    {"rand_like", aten_like},
    {"randn_like", aten_like},
    {"bernoulli", aten_same},
    {"native_dropout_backward", aten_same},
    {"empty", aten_empty},
    {"slice_backward", aten_to_input_sizes},
    {"select_backward", aten_to_input_sizes},
    {"diagonal_backward", aten_to_input_sizes},
    {"unfold_backward", aten_to_input_sizes},
    {"native_dropout", aten_native_dropout},
    {"bitwise_or", aten_bitwise},
    {"bitwise_and", aten_bitwise},
    {"nll_loss_forward", aten_nll_loss_forward},
    {"nll_loss_backward", olla_aten_grad_of_self},
    {"mse_loss", aten_mse_loss},
    {"mse_loss_backward", olla_aten_grad_of_self},
    {"baddbmm", aten_baddbmm},
    {"embedding", aten_embedding},
    {"embedding_backward", aten_embedding_backward},
    {"embedding_dense_backward", aten_embedding_backward},
    {"numpy_T", aten_numpy_t},
    {"diagonal", aten_diagonal},
    {"max", aten_minmax},
    {"min", aten_minmax},
    {"argmax", aten_argmax},
    {"multinomial", aten_multinomial},
    {"unfold", aten_unfold},
    {NULL, NULL}};

static olla_status rule_aten(olla_shape_ctx *c)
{
    const char *op = olla_shape_attr_string(c, "operator", "");
    const char *overload = olla_shape_attr_string(c, "overload_name", "");
    olla_aten_fn fn = NULL;
    for (const olla_aten_rule *r = rules; r->name && !fn; r++)
        if (strcmp(r->name, op) == 0)
            fn = r->fn;
    if (!fn)
        fn = olla_aten_nn_rule(op);
    if (!fn)
        fn = olla_aten_view_rule(op);
    const char *kind = NULL;
    if (!fn)
        fn = olla_aten_kind_rule(op, &kind);
    if (fn)
        return fn(c);
    for (int i = 0; i < olla_shape_n_outputs(c); i++)
        olla_shape_set_unknown(c, i, "ATen operator '%s%s%s' has no shape rule; declare its outputs in value_info",
                               op[0] ? op : "?", overload[0] ? "." : "", overload);
    return OLLA_OK;
}

const olla_shape_rule_entry olla_shape_rules_aten[] = {
    {"org.pytorch.aten", "ATen", rule_aten},
    {NULL, NULL, NULL}};
