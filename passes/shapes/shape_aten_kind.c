/* olla-onnx: shape rules for ATen operators by the kind of their schema,
 * not by name. Most of PyTorch's operators fall into a few kinds whose
 * result has the shape of an argument:
 *   - in place: the schema mutates self and returns it (`Tensor(a!) self`
 *     -> `Tensor(a!)`), which PyTorch spells with a trailing underscore
 *     (fill_, zero_, copy_, clamp_, silu_, bernoulli_, masked_fill_, ...;
 *     __iadd__ and the other __i*__ too): the result is self, input 0;
 *     except the few that change self's geometry (as_strided_, resize_,
 *     squeeze_, unsqueeze_, transpose_, t_...: shape_aten_view.c);
 *   - point-wise with one tensor (the `pointwise` tag of PyTorch's
 *     native_functions.yaml: an element-wise function of self, scalars
 *     beside it): silu, gelu, hardswish, mish, clamp, fill.Scalar, zero,
 *     copy (self's shape, src broadcast into it) ...: input 0's shape and
 *     element type;
 *   - the backward of such an operation (silu_backward(grad_output, self),
 *     tanh_backward(grad_output, output), ...): grad_output's, input 0;
 *   - point-wise predicates (isnan, logical_not, signbit ...): input 0's
 *     shape, bool;
 *   - point-wise operations of two tensors (add, mul, pow, maximum ...,
 *     a scalar other as an attribute): the broadcast of inputs 0 and 1;
 *     comparisons and logical operations of two (eq, ne, lt, logical_and
 *     ...): the same broadcast, bool;
 *   - written into a copy of self (masked_fill, index_put, scatter ...):
 *     input 0's shape and element type.
 * The names of the point-wise operations are PyTorch's; the in-place kind
 * needs no list. An operator of no kind keeps its outputs unknown, with a
 * reason naming it (shape_aten.c). */
#include <stdlib.h>
#include <string.h>

#include "passes/shapes/olla_shape_aten.h"

/* Point-wise operations of one tensor that keep its element type, sorted
 * (strcmp) for bsearch. */
static const char *const pointwise[] = {
    "abs",       "absolute",    "acos",     "acosh",      "alias",         "alpha_dropout",
    "asin",      "asinh",       "atan",     "atanh",      "bitwise_not",   "ceil",
    "celu",      "clamp",       "clamp_max", "clamp_min", "clip",          "clone",
    "copy",      "cos",         "cosh",     "deg2rad",    "detach",        "digamma",
    "dropout",   "elu",         "erf",      "erfc",       "erfinv",        "exp",
    "exp2",      "expm1",       "feature_alpha_dropout",  "feature_dropout", "fill",
    "fix",       "floor",       "frac",     "gelu",       "hardshrink",    "hardsigmoid",
    "hardswish", "hardtanh",    "i0",       "leaky_relu", "lgamma",        "lift_fresh_copy",
    "log",       "log10",       "log1p",    "log2",       "logit",         "mish",
    "nan_to_num", "neg",        "negative", "positive",   "rad2deg",       "reciprocal",
    "relu",      "relu6",       "round",    "rrelu",      "rrelu_with_noise", "rsqrt",
    "selu",      "sgn",         "sigmoid",  "sign",       "silu",          "sin",
    "sinc",      "sinh",        "softplus", "softshrink", "sqrt",          "square",
    "tan",       "tanh",        "threshold", "trunc",     "zero",
};

/* Point-wise predicates: self's shape, bool. Sorted. */
static const char *const predicates[] = {"isfinite", "isinf", "isnan", "isneginf", "isposinf", "logical_not",
                                         "signbit"};

/* Point-wise operations of two tensors, self and other (a tensor, or a
 * scalar attribute): their broadcast, self's element type (other's when
 * only other is floating). Sorted. */
static const char *const binary[] = {"add",     "atan2",   "div", "floor_divide", "fmod", "hypot",       "maximum",
                                     "minimum", "mul",     "pow", "remainder",    "rsub", "sub",         "true_divide",
                                     "xlogy"};

/* Comparisons and logical operations of two: their broadcast, bool. Sorted. */
static const char *const comparisons[] = {"eq",          "ge",          "gt", "le", "logical_and",
                                          "logical_or",  "logical_xor", "lt", "ne"};

/* Operations that write into a copy of self (masked_fill(self, mask,
 * value), index_put(self, indices, values), scatter...): self's shape and
 * element type. Sorted. */
static const char *const into_self[] = {"index_add",      "index_copy", "index_fill",  "index_put",     "masked_fill",
                                        "masked_scatter", "scatter",    "scatter_add", "scatter_reduce"};

static int by_name(const void *key, const void *entry)
{
    return strcmp((const char *)key, *(const char *const *)entry);
}

static int listed(const char *name, const char *const *list, size_t n)
{
    return bsearch(name, list, n, sizeof *list, by_name) != NULL;
}

#define LISTED(name, list) listed(name, list, sizeof list / sizeof list[0])

/* the result keeps input 0's shape and element type */
static olla_status kind_same(olla_shape_ctx *c)
{
    return olla_aten_like(c, 0, 0, 0);
}

/* input 0's shape, bool */
static olla_status kind_predicate(olla_shape_ctx *c)
{
    return olla_aten_like(c, 0, 0, OLLA_DT_BOOL);
}

/* In-place operations that change self's geometry (a view of another shape
 * or a new size): not of the in-place kind. Those with a rule of their own
 * are in shape_aten_view.c. Sorted. */
static const char *const reshaping_in_place[] = {"as_strided_", "resize_",    "resize_as_", "set_",
                                                 "squeeze_",    "swapaxes_",  "swapdims_",  "t_",
                                                 "transpose_",  "unsqueeze_"};

/* 1 for a floating element type */
static int floating(int32_t elem)
{
    return elem == OLLA_DT_FLOAT || elem == OLLA_DT_DOUBLE || elem == OLLA_DT_FLOAT16 || elem == OLLA_DT_BFLOAT16;
}

/* inputs 0 and 1 broadcast; elem, or (elem 0) the promoted type of the two */
static olla_status broadcast_two(olla_shape_ctx *c, int32_t elem)
{
    static const int idx[2] = {0, 1};
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank;
    if (olla_shape_broadcast(c, idx, 2, &rank, dims) != 0)
        return olla_shape_fail(c, "the inputs of ATen '%s' do not broadcast",
                               olla_shape_attr_string(c, "operator", "?"));
    if (!elem) {
        int32_t a = olla_shape_in_elem(c, 0), b = olla_shape_has_input(c, 1) ? olla_shape_in_elem(c, 1) : 0;
        elem = floating(b) && !floating(a) ? b : a;
    }
    return olla_shape_set_out(c, 0, elem, rank, rank >= 0 ? dims : NULL);
}

/* the broadcast of self and other, the promoted element type */
static olla_status kind_binary(olla_shape_ctx *c) { return broadcast_two(c, 0); }

/* the broadcast of self and other, bool */
static olla_status kind_comparison(olla_shape_ctx *c) { return broadcast_two(c, OLLA_DT_BOOL); }

/* 1 when op names an in-place operation that keeps self's geometry: a
 * trailing underscore, but not a dunder other than __i*__ (__and__ is
 * binary, __iand__ in place), nor one of reshaping_in_place */
static int in_place(const char *op)
{
    size_t n = strlen(op);
    if (n < 2 || op[n - 1] != '_' || LISTED(op, reshaping_in_place))
        return 0;
    if (strncmp(op, "__", 2) == 0)
        return n > 5 && op[2] == 'i' && strcmp(op + n - 2, "__") == 0;
    return 1;
}

olla_aten_fn olla_aten_kind_rule(const char *op, const char **kind)
{
    char base[64];
    size_t n = strlen(op);
    if (in_place(op)) {
        *kind = "in place";
        return kind_same;
    }
    if (LISTED(op, pointwise)) {
        *kind = "point-wise";
        return kind_same;
    }
    if (LISTED(op, predicates)) {
        *kind = "point-wise predicate";
        return kind_predicate;
    }
    if (LISTED(op, binary)) {
        *kind = "point-wise of two tensors";
        return kind_binary;
    }
    if (LISTED(op, comparisons)) {
        *kind = "comparison";
        return kind_comparison;
    }
    if (LISTED(op, into_self)) {
        *kind = "written into self";
        return kind_same;
    }
    static const char suffix[] = "_backward";
    size_t ns = sizeof suffix - 1;
    if (n > ns && n - ns < sizeof base && strcmp(op + n - ns, suffix) == 0) {
        memcpy(base, op, n - ns);
        base[n - ns] = '\0';
        if (LISTED(base, pointwise)) {
            *kind = "backward of a point-wise operation";
            return kind_same; /* grad_output's shape and type */
        }
    }
    *kind = NULL;
    return NULL;
}
