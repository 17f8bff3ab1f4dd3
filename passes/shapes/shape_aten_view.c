/* olla-onnx: shape rules for ATen operators that give a tensor another
 * geometry: views that drop, add or swap dimensions (select, squeeze,
 * unsqueeze, transpose, t and their in-place forms), a view or a new tensor
 * of a size given as an argument (as_strided, resize_, new_empty,
 * new_empty_strided, new_zeros, new_ones, new_full), rolled, padded and
 * indexed (roll, constant_pad_nd, index.Tensor). In-place forms change
 * self's geometry, so they are not of the in-place kind of
 * shape_aten_kind.c (result = self unchanged) and are listed here by name.
 * Arguments are read by name, else at their position in PyTorch's
 * signature (shape_aten_args.c). */
#include <string.h>

#include "passes/shapes/olla_shape_aten.h"

/* ---- a size given as an argument ---- */

/* Output 0 has the "size" argument (position 1) as its shape, and the
 * dtype argument's element type (position dtype_at; none when 0) or self's. */
static olla_status sized(olla_shape_ctx *c, int dtype_at)
{
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int rank = olla_aten_size_dims(c, "size", 1, dims);
    int32_t elem = dtype_at > 0 ? olla_aten_dtype(c, dtype_at) : 0;
    return olla_shape_set_out(c, 0, elem ? elem : olla_shape_in_elem(c, 0), rank, rank >= 0 ? dims : NULL);
}

/* as_strided(self, size, stride, storage_offset), as_strided_, resize_(self,
 * size): self's type, the size. */
static olla_status aten_as_strided(olla_shape_ctx *c) { return sized(c, 0); }

/* new_empty, new_zeros, new_ones(self, size, dtype...). */
static olla_status aten_new_sized(olla_shape_ctx *c) { return sized(c, 2); }

/* new_empty_strided(self, size, stride, dtype...), new_full(self, size,
 * fill_value, dtype...). */
static olla_status aten_new_sized_3(olla_shape_ctx *c) { return sized(c, 3); }

/* ---- views that drop, add or swap dimensions ---- */

/* select(self, dim, index): dim removed. */
static olla_status aten_select(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t dim;
    if (!x || x->rank < 1 || !olla_aten_int(c, "dim", 1, &dim) || !olla_shape_axis(dim, x->rank, &dim))
        return olla_shape_set_out(c, 0, elem, x && x->rank >= 1 ? x->rank - 1 : -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != dim)
            dims[r++] = x->dims[d];
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* squeeze(self) drops every dimension of 1; squeeze(self, dim) drops dim
 * when it is 1 (a no-op otherwise). A dimension of unknown size leaves the
 * rank unknown. */
static olla_status aten_squeeze(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t dim = -1;
    int one_dim = olla_aten_int(c, "dim", 1, &dim);
    if (!x || x->rank < 0 || (one_dim && !olla_shape_axis(dim, x->rank > 0 ? x->rank : 1, &dim)))
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (one_dim && d != dim) {
            dims[r++] = x->dims[d];
            continue;
        }
        if (x->dims[d].value < 0)
            return olla_shape_set_out(c, 0, elem, -1, NULL);
        if (x->dims[d].value != 1)
            dims[r++] = x->dims[d];
    }
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* unsqueeze(self, dim): a dimension of 1 inserted at dim (of rank + 1). */
static olla_status aten_unsqueeze(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t dim;
    if (!x || x->rank < 0 || x->rank >= OLLA_SHAPE_MAX_RANK || !olla_aten_int(c, "dim", 1, &dim) ||
        !olla_shape_axis(dim, x->rank + 1, &dim))
        return olla_shape_set_out(c, 0, elem, x && x->rank >= 0 ? x->rank + 1 : -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int d = 0, r = 0; d <= x->rank; d++)
        dims[d] = d == dim ? olla_dim_known(1) : x->dims[r++];
    return olla_shape_set_out(c, 0, elem, x->rank + 1, dims);
}

/* transpose(self, dim0, dim1), swapaxes(self, axis0, axis1), swapdims;
 * t(self): the last two of a matrix (a vector or scalar unchanged). */
static olla_status aten_transpose(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    const char *op = olla_shape_attr_string(c, "operator", "");
    int64_t d0 = 0, d1 = 1;
    int is_t = strcmp(op, "t") == 0 || strcmp(op, "t_") == 0;
    if (!is_t && !(olla_aten_int(c, "dim0", 1, &d0) || olla_aten_int(c, "axis0", 1, &d0)))
        return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, NULL);
    if (!is_t && !(olla_aten_int(c, "dim1", 2, &d1) || olla_aten_int(c, "axis1", 2, &d1)))
        return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, NULL);
    if (!x || x->rank < 0 || (is_t && x->rank < 2))
        return x ? olla_aten_like(c, 0, 0, 0) : olla_shape_set_out(c, 0, elem, -1, NULL);
    if (!olla_shape_axis(d0, x->rank, &d0) || !olla_shape_axis(d1, x->rank, &d1))
        return olla_shape_fail(c, "transpose dimensions %lld and %lld are outside rank %d", (long long)d0,
                               (long long)d1, x->rank);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
    dims[d0] = x->dims[d1];
    dims[d1] = x->dims[d0];
    return olla_shape_set_out(c, 0, elem, x->rank, dims);
}

/* roll(self, shifts, dims): self's shape. */
static olla_status aten_roll(olla_shape_ctx *c) { return olla_aten_like(c, 0, 0, 0); }

/* constant_pad_nd(self, pad, value): pad holds (before, after) pairs from
 * the last dimension backwards; a negative pad crops. */
static olla_status aten_constant_pad_nd(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int64_t pad[2 * OLLA_SHAPE_MAX_RANK];
    int64_t n = olla_aten_ints(c, "pad", 1, pad, 2 * OLLA_SHAPE_MAX_RANK);
    if (!x || x->rank < 0 || n < 0 || n % 2 != 0 || n / 2 > x->rank)
        return olla_shape_set_out(c, 0, elem, x ? x->rank : -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    memcpy(dims, x->dims, sizeof *dims * (size_t)x->rank);
    for (int64_t i = 0; i < n / 2; i++) {
        int d = x->rank - 1 - (int)i;
        int64_t p = pad[2 * i] + pad[2 * i + 1]; /* a known dimension is >= 0 */
        if (x->dims[d].value >= 0 && x->dims[d].value + p < 0)
            return olla_shape_fail(c, "constant_pad_nd crops dimension %d of %lld below 0", d,
                                   (long long)x->dims[d].value);
        dims[d] = p >= 0 ? olla_dim_add(c, x->dims[d], olla_dim_known(p))
                         : olla_dim_sub(c, x->dims[d], olla_dim_known(-p));
    }
    return olla_shape_set_out(c, 0, elem, x->rank, dims);
}

/* index.Tensor(self, indices): the integer index tensors (inputs 1.., ''
 * for a dimension taken whole) replace the dimensions they index by their
 * broadcast shape, where they are when adjacent, in front otherwise. A
 * bool or uint8 mask selects a count known only from the data: unknown. */
static olla_status aten_index(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int32_t elem = olla_shape_in_elem(c, 0);
    int n = olla_shape_n_inputs(c) - 1, idx[OLLA_SHAPE_MAX_RANK], k = 0, first = -1, last = -1;
    if (!x || x->rank < 0 || n > x->rank)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    for (int i = 1; i <= n; i++) {
        if (!olla_shape_has_input(c, i))
            continue;
        int32_t e = olla_shape_in_elem(c, i);
        if (e == 0 || e == OLLA_DT_BOOL || e == OLLA_DT_UINT8)
            return olla_shape_set_out(c, 0, elem, -1, NULL);
        idx[k++] = i;
        first = first < 0 ? i - 1 : first;
        last = i - 1;
    }
    if (k == 0)
        return olla_aten_like(c, 0, 0, 0);
    olla_dim b[OLLA_SHAPE_MAX_RANK], dims[OLLA_SHAPE_MAX_RANK];
    int brank, r = 0, adjacent = last - first + 1 == k;
    if (olla_shape_broadcast(c, idx, k, &brank, b) != 0)
        return olla_shape_fail(c, "the index tensors of index.Tensor do not broadcast");
    if (brank < 0 || x->rank - k + brank > OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    for (int d = 0; d < brank && !adjacent; d++)
        dims[r++] = b[d];
    for (int d = 0; d < x->rank; d++) {
        if (d >= n || !olla_shape_has_input(c, d + 1))
            dims[r++] = x->dims[d];
        else
            for (int j = 0; j < brank && adjacent && d == first; j++)
                dims[r++] = b[j];
    }
    return olla_shape_set_out(c, 0, elem, r, dims);
}

/* ---- dispatch ---- */

static const olla_aten_rule view_rules[] = {
    {"as_strided", aten_as_strided},
    {"as_strided_", aten_as_strided},
    {"resize_", aten_as_strided},
    {"new_empty", aten_new_sized},
    {"new_zeros", aten_new_sized},
    {"new_ones", aten_new_sized},
    {"new_empty_strided", aten_new_sized_3},
    {"new_full", aten_new_sized_3},
    {"select", aten_select},
    {"squeeze", aten_squeeze},
    {"squeeze_", aten_squeeze},
    {"unsqueeze", aten_unsqueeze},
    {"unsqueeze_", aten_unsqueeze},
    {"transpose", aten_transpose},
    {"transpose_", aten_transpose},
    {"swapaxes", aten_transpose},
    {"swapaxes_", aten_transpose},
    {"swapdims", aten_transpose},
    {"swapdims_", aten_transpose},
    {"t", aten_transpose},
    {"t_", aten_transpose},
    {"roll", aten_roll},
    {"constant_pad_nd", aten_constant_pad_nd},
    {"index", aten_index},
    {NULL, NULL}};

olla_aten_fn olla_aten_view_rule(const char *op)
{
    for (const olla_aten_rule *r = view_rules; r->name; r++)
        if (strcmp(r->name, op) == 0)
            return r->fn;
    return NULL;
}
