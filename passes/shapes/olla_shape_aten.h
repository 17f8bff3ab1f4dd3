/* olla-onnx: the ATen shape rules' shared helpers. The argument readers
 * (shape_aten_args.c) read a PyTorch operation's argument from the attribute
 * of its name, or else from the node input at its position in PyTorch's
 * signature; the pooling, upsampling and normalization rules are in
 * shape_aten_nn.c. */
#ifndef OLLA_SHAPE_ATEN_H
#define OLLA_SHAPE_ATEN_H

#include "passes/shapes/olla_shape_rules.h"

typedef olla_status (*olla_aten_fn)(olla_shape_ctx *c);
typedef struct olla_aten_rule {
    const char *name; /* the "operator" attribute */
    olla_aten_fn fn;
} olla_aten_rule;

/* An integer argument; 1 when known. */
int olla_aten_int(olla_shape_ctx *c, const char *name, int input, int64_t *out);
/* An integer-list argument (a single integer counts as a list of one);
 * the count, or -1 when unknown or longer than max. */
int64_t olla_aten_ints(olla_shape_ctx *c, const char *name, int input, int64_t *out, int64_t max);
/* The dtype argument as an ONNX element type; 0 when absent or unknown. */
int32_t olla_aten_dtype(olla_shape_ctx *c, int input);
/* Output out gets input in's shape and elem (input's type when elem is 0). */
olla_status olla_aten_like(olla_shape_ctx *c, int out, int in, int32_t elem);
/* A size-list argument (size, input_sizes, input_size) as dimensions into
 * dims[0..OLLA_SHAPE_MAX_RANK) (a negative size unknown); the rank, or -1
 * when the list is not known. */
int olla_aten_size_dims(olla_shape_ctx *c, const char *name, int input, olla_dim *dims);
/* The gradient of an operation has the type and shape of its input self
 * (input 1): nll_loss_backward, the pooling backwards, *_backward(grad, self...). */
olla_status olla_aten_grad_of_self(olla_shape_ctx *c);
/* The pooling, upsampling and group-normalization rule for op, or NULL. */
olla_aten_fn olla_aten_nn_rule(const char *op);
/* The rule of a view or new tensor of another geometry (select, squeeze,
 * unsqueeze, transpose, t, as_strided, resize_, new_empty...; in-place
 * forms included: shape_aten_view.c), or NULL. */
olla_aten_fn olla_aten_view_rule(const char *op);
/* The rule of op's schema kind (shape_aten_kind.c): in place, point-wise,
 * the backward of a point-wise operation, a point-wise predicate; *kind
 * names it. NULL (and *kind NULL) for an operator of none of them. */
olla_aten_fn olla_aten_kind_rule(const char *op, const char **kind);

#endif
