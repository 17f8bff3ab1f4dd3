/* olla-onnx: shape rules for image, text and attention operators:
 * GridSample, AffineGrid, ImageDecoder, CenterCropPad, the string operators,
 * TfIdfVectorizer, RotaryEmbedding and Attention. */
#include <stdint.h>
#include <string.h>

#include "passes/shapes/olla_shape_dims.h"
#include "passes/shapes/olla_shape_rules.h"

/* GridSample: [N, C, grid spatial dims...]. */
static olla_status rule_grid_sample(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int gr = olla_shape_in_rank(c, 1), xr = olla_shape_in_rank(c, 0);
    int rank = gr >= 3 ? gr : xr;
    if (rank < 3 || rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = olla_dim_unknown();
    if (xr >= 2) {
        dims[0] = olla_shape_in(c, 0)->dims[0];
        dims[1] = olla_shape_in(c, 0)->dims[1];
    }
    if (gr == rank)
        for (int i = 1; i < rank - 1; i++) dims[i + 1] = olla_shape_in(c, 1)->dims[i];
    return olla_shape_set_out(c, 0, elem, rank, dims);
}

/* AffineGrid: theta [N, 2, 3] or [N, 3, 4], size (N, C, [D,] H, W) ->
 * [N, [D,] H, W, 2 or 3]. */
static olla_status rule_affine_grid(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    olla_dim size[5];
    int known = 0;
    int64_t n = olla_shape_in_dims(c, 1, size, 5, &known);
    int nsp = -1;
    if (n == 4 || n == 5) nsp = (int)n - 2;
    else if (olla_shape_in_rank(c, 0) == 3 && olla_dim_is_known(olla_shape_in(c, 0)->dims[1]))
        nsp = (int)olla_shape_in(c, 0)->dims[1].value;
    if (nsp != 2 && nsp != 3) return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim dims[5];
    dims[0] = olla_shape_in_rank(c, 0) == 3 ? olla_shape_in(c, 0)->dims[0] : olla_dim_unknown();
    int unknown = 0;
    if (n == nsp + 2 && (olla_dim_is_known(size[0]) || size[0].param)) dims[0] = size[0];
    for (int i = 0; i < nsp; i++) {
        dims[1 + i] = n == nsp + 2 ? size[2 + i] : olla_dim_unknown();
        if (!olla_dim_is_known(dims[1 + i]) && !dims[1 + i].param) unknown = 1;
    }
    dims[1 + nsp] = olla_dim_known(nsp);
    olla_status st = olla_shape_set_out(c, 0, elem, nsp + 2, dims);
    if (st == OLLA_OK && unknown)
        olla_shape_set_unknown(c, 0, "grid size is the run-time value of input '%s'",
                               olla_shape_input_name(c, 1));
    return st;
}

/* ImageDecoder: [H, W, channels] with H and W read from the encoded image. */
static olla_status rule_image_decoder(olla_shape_ctx *c)
{
    const char *fmt = olla_shape_attr_string(c, "pixel_format", "RGB");
    olla_dim dims[3] = {olla_dim_unknown(), olla_dim_unknown(),
                        olla_dim_known(strcmp(fmt, "Grayscale") == 0 ? 1 : 3)};
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_UINT8, 3, dims);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "data-dependent output of ImageDecoder (image size is in the encoded data)");
    return st;
}

/* CenterCropPad: input with the listed axes set to the values of 'shape'. */
static olla_status rule_center_crop_pad(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 0 || rank > OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, elem, -1, NULL);
    const olla_value_type *x = olla_shape_in(c, 0);
    int64_t axes[OLLA_SHAPE_MAX_RANK];
    olla_dim shape[OLLA_SHAPE_MAX_RANK];
    const int64_t *av = NULL;
    int64_t na = olla_shape_attr_ints(c, "axes", &av);
    if (na < 0) {
        na = rank;
        for (int i = 0; i < rank; i++) axes[i] = i;
    } else {
        if (na > rank) return olla_shape_fail(c, "attribute 'axes' has more entries than the rank");
        for (int64_t i = 0; i < na; i++)
            if (!olla_shape_axis(av[i], rank, &axes[i]))
                return olla_shape_fail(c, "attribute 'axes' value %lld is out of range for rank %d",
                                       (long long)av[i], rank);
    }
    int64_t ns = olla_shape_in_dims(c, 1, shape, OLLA_SHAPE_MAX_RANK, NULL);
    if (ns >= 0 && ns != na)
        return olla_shape_fail(c, "'shape' has %lld values for %lld axes", (long long)ns, (long long)na);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int unknown = 0;
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    for (int64_t i = 0; i < na; i++) {
        dims[axes[i]] = ns >= 0 ? shape[i] : olla_dim_unknown();
        if (!olla_dim_is_known(dims[axes[i]]) && !dims[axes[i]].param) unknown = 1;
    }
    olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
    if (st == OLLA_OK && unknown)
        olla_shape_set_unknown(c, 0, "target shape is the run-time value of input '%s'",
                               olla_shape_input_name(c, 1));
    return st;
}

/* StringNormalizer: removing stop words changes the last axis by the data. */
static olla_status rule_string_normalizer(olla_shape_ctx *c)
{
    const ProtobufCBinaryData *sw = NULL;
    int64_t nsw = olla_shape_attr_strings(c, "stopwords", &sw);
    if (nsw <= 0) return olla_shape_pass(c, 0, 0);
    int rank = olla_shape_in_rank(c, 0);
    if (rank < 1 || rank > 2) return olla_shape_set_out(c, 0, OLLA_DT_STRING, -1, NULL);
    olla_dim dims[2] = {olla_shape_in(c, 0)->dims[0], olla_dim_unknown()};
    if (rank == 1) dims[0] = olla_dim_unknown();
    olla_status st = olla_shape_set_out(c, 0, OLLA_DT_STRING, rank, dims);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "data-dependent output of StringNormalizer (stop words removed)");
    return st;
}

static olla_status rule_regex_full_match(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    return olla_shape_set_out(c, 0, OLLA_DT_BOOL, x ? x->rank : -1, x ? x->dims : NULL);
}

static olla_status rule_string_concat(olla_shape_ctx *c)
{
    int idx[2] = {0, 1}, rank;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (olla_shape_broadcast(c, idx, 2, &rank, dims) != 0)
        return olla_shape_fail(c, "inputs do not broadcast");
    return olla_shape_set_out(c, 0, OLLA_DT_STRING, rank, rank >= 0 ? dims : NULL);
}

/* StringSplit: substrings [x..., max count] (data-dependent), length x. */
static olla_status rule_string_split(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    int rank = x ? x->rank : -1;
    olla_status st = OLLA_OK;
    if (olla_shape_has_output(c, 1))
        st = olla_shape_set_out(c, 1, OLLA_DT_INT64, rank, rank >= 0 ? x->dims : NULL);
    if (st != OLLA_OK || !olla_shape_has_output(c, 0)) return st;
    if (rank < 0 || rank >= OLLA_SHAPE_MAX_RANK) return olla_shape_set_out(c, 0, OLLA_DT_STRING, -1, NULL);
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
    dims[rank] = olla_dim_unknown();
    st = olla_shape_set_out(c, 0, OLLA_DT_STRING, rank + 1, dims);
    if (st == OLLA_OK)
        olla_shape_set_unknown(c, 0, "data-dependent output of StringSplit (largest number of substrings)");
    return st;
}

/* TfIdfVectorizer: [C] or [N, C] with C = max(ngram_indexes) + 1, float. */
static olla_status rule_tfidf(olla_shape_ctx *c)
{
    const int64_t *ix = NULL;
    int64_t n = olla_shape_attr_ints(c, "ngram_indexes", &ix);
    if (n < 0) return olla_shape_fail(c, "attribute 'ngram_indexes' is missing");
    int64_t m = -1;
    for (int64_t i = 0; i < n; i++) {
        if (ix[i] < 0 || ix[i] >= INT64_MAX / 2)
            return olla_shape_fail(c, "attribute 'ngram_indexes' has an invalid value %lld", (long long)ix[i]);
        if (ix[i] > m) m = ix[i];
    }
    olla_dim out = olla_dim_known(m + 1);
    int rank = olla_shape_in_rank(c, 0);
    if (rank == 1) return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 1, &out);
    if (rank == 2) {
        olla_dim dims[2] = {olla_shape_in(c, 0)->dims[0], out};
        return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, 2, dims);
    }
    return olla_shape_set_out(c, 0, OLLA_DT_FLOAT, -1, NULL);
}

static olla_status rule_same_as_input(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

/* Attention (opset 23): Q, K, V are 4-D [B, heads, seq, head_size] or 3-D
 * [B, seq, heads*head_size] (q_num_heads, kv_num_heads). Outputs Y (Q's form
 * with V's head size), present key/value [B, kv_heads, past+kv_seq, size]
 * and the QK product [B, q_heads, q_seq, past+kv_seq]. */
static olla_status rule_attention(olla_shape_ctx *c)
{
    int32_t elem = olla_shape_in_elem(c, 0);
    int rq = olla_shape_in_rank(c, 0), rk = olla_shape_in_rank(c, 1), rv = olla_shape_in_rank(c, 2);
    if ((rq != 3 && rq != 4) || (rk != 3 && rk != 4) || (rv != 3 && rv != 4)) {
        for (int o = 0; o < olla_shape_n_outputs(c); o++) {
            /* present_value has V's type (T2), the others Q's (T1) */
            olla_status st = olla_shape_set_out(c, o, o == 2 ? olla_shape_in_elem(c, 2) : elem, -1, NULL);
            if (st != OLLA_OK) return st;
        }
        return OLLA_OK;
    }
    const olla_value_type *q = olla_shape_in(c, 0), *k = olla_shape_in(c, 1), *v = olla_shape_in(c, 2);
    olla_dim qh = rq == 4 ? q->dims[1] : olla_dim_known(olla_shape_attr_int(c, "q_num_heads", 0));
    olla_dim kvh = rk == 4 ? k->dims[1] : olla_dim_known(olla_shape_attr_int(c, "kv_num_heads", 0));
    if (rq == 3 && !olla_shape_attr_has(c, "q_num_heads")) qh = olla_dim_unknown();
    if (rk == 3 && !olla_shape_attr_has(c, "kv_num_heads")) kvh = olla_dim_unknown();
    olla_dim batch = q->dims[0];
    olla_dim q_seq = rq == 4 ? q->dims[2] : q->dims[1];
    olla_dim kv_seq = rk == 4 ? k->dims[2] : k->dims[1];
    olla_dim k_size = rk == 4 ? k->dims[3] : olla_dim_div(c, k->dims[2], kvh);
    olla_dim v_size = rv == 4 ? v->dims[3] : olla_dim_div(c, v->dims[2], kvh);
    olla_dim total = kv_seq;
    if (olla_shape_in_rank(c, 4) == 4)
        total = olla_dim_add(c, olla_shape_in(c, 4)->dims[2], kv_seq);
    olla_status st = OLLA_OK;
    if (olla_shape_has_output(c, 0)) {
        if (rq == 4) {
            olla_dim y[4] = {batch, qh, q_seq, v_size};
            st = olla_shape_set_out(c, 0, elem, 4, y);
        } else {
            olla_dim y[3] = {batch, q_seq, olla_dim_mul(c, qh, v_size)};
            st = olla_shape_set_out(c, 0, elem, 3, y);
        }
    }
    if (st == OLLA_OK && olla_shape_has_output(c, 1)) {
        olla_dim pk[4] = {batch, kvh, total, k_size};
        st = olla_shape_set_out(c, 1, olla_shape_in_elem(c, 1), 4, pk);
    }
    if (st == OLLA_OK && olla_shape_has_output(c, 2)) {
        olla_dim pv[4] = {batch, kvh, total, v_size};
        st = olla_shape_set_out(c, 2, olla_shape_in_elem(c, 2), 4, pv);
    }
    if (st == OLLA_OK && olla_shape_has_output(c, 3)) {
        olla_dim qk[4] = {batch, qh, q_seq, total};
        st = olla_shape_set_out(c, 3, elem, 4, qk);
    }
    return st;
}

const olla_shape_rule_entry olla_shape_rules_misc[] = {
    {"", "GridSample", rule_grid_sample},
    {"", "AffineGrid", rule_affine_grid},
    {"", "ImageDecoder", rule_image_decoder},
    {"", "CenterCropPad", rule_center_crop_pad},
    {"", "StringNormalizer", rule_string_normalizer},
    {"", "RegexFullMatch", rule_regex_full_match},
    {"", "StringConcat", rule_string_concat},
    {"", "StringSplit", rule_string_split},
    {"", "TfIdfVectorizer", rule_tfidf},
    {"", "RotaryEmbedding", rule_same_as_input},
    {"", "Attention", rule_attention},
    {NULL, NULL, NULL}};
