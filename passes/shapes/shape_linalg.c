/* olla-onnx: shape rules for matrix products (MatMul, MatMulInteger, Gemm,
 * Einsum) and for Softmax, LogSoftmax, Hardmax and Dropout. */
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

/* Broadcast two dims (batch dims of matmul, ellipsis of einsum). */
static int bdim(olla_dim a, olla_dim b, olla_dim *out)
{
    if (a.value == 1) {
        *out = b;
    } else if (b.value == 1) {
        *out = a;
    } else if (a.value >= 0 && b.value >= 0) {
        if (a.value != b.value)
            return 0;
        *out = a;
    } else if (a.value >= 0) {
        *out = a;
    } else if (b.value >= 0) {
        *out = b;
    } else {
        *out = olla_dim_equal(a, b) ? a : olla_dim_unknown();
    }
    return 1;
}

static olla_status matmul(olla_shape_ctx *c, int32_t elem)
{
    const olla_value_type *a = olla_shape_in(c, 0), *b = olla_shape_in(c, 1);
    if (!a || !b || a->rank < 1 || b->rank < 1)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    olla_dim ad[OLLA_SHAPE_MAX_RANK + 1], bd[OLLA_SHAPE_MAX_RANK + 1], out[OLLA_SHAPE_MAX_RANK + 1];
    int ra = a->rank, rb = b->rank;
    memcpy(ad, a->dims, sizeof *ad * (size_t)ra);
    memcpy(bd, b->dims, sizeof *bd * (size_t)rb);
    int a_vec = ra == 1, b_vec = rb == 1;
    if (a_vec) {
        ad[1] = ad[0];
        ad[0] = olla_dim_known(1);
        ra = 2;
    }
    if (b_vec) {
        bd[1] = olla_dim_known(1);
        rb = 2;
    }
    olla_dim ka = ad[ra - 1], kb = bd[rb - 2];
    if (ka.value >= 0 && kb.value >= 0 && ka.value != kb.value)
        return olla_shape_fail(c, "inner dimensions %lld and %lld differ", (long long)ka.value, (long long)kb.value);
    int batch = (ra > rb ? ra : rb) - 2;
    if (batch + 2 > OLLA_SHAPE_MAX_RANK)
        return olla_shape_set_out(c, 0, elem, -1, NULL);
    for (int d = 0; d < batch; d++) {
        int ia = d - (batch - (ra - 2)), ib = d - (batch - (rb - 2));
        olla_dim x = ia >= 0 ? ad[ia] : olla_dim_known(1), y = ib >= 0 ? bd[ib] : olla_dim_known(1);
        if (!bdim(x, y, &out[d]))
            return olla_shape_fail(c, "batch dimensions %lld and %lld cannot be broadcast", (long long)x.value,
                                   (long long)y.value);
    }
    int r = batch;
    if (!a_vec)
        out[r++] = ad[ra - 2];
    if (!b_vec)
        out[r++] = bd[rb - 1];
    return olla_shape_set_out(c, 0, elem, r, out);
}

static olla_status rule_matmul(olla_shape_ctx *c) { return matmul(c, olla_shape_in_elem(c, 0)); }
static olla_status rule_matmul_integer(olla_shape_ctx *c) { return matmul(c, OLLA_DT_INT32); }

static olla_status rule_gemm(olla_shape_ctx *c)
{
    const olla_value_type *a = olla_shape_in(c, 0), *b = olla_shape_in(c, 1);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!a || !b || a->rank != 2 || b->rank != 2)
        return olla_shape_set_out(c, 0, elem, 2, NULL);
    int ta = olla_shape_attr_int(c, "transA", 0) != 0, tb = olla_shape_attr_int(c, "transB", 0) != 0;
    olla_dim dims[2] = {a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1]};
    return olla_shape_set_out(c, 0, elem, 2, dims);
}

/* ---- Einsum ---- */

static int letter_index(char ch)
{
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a';
    if (ch >= 'A' && ch <= 'Z')
        return 26 + ch - 'A';
    return -1;
}

/* What the terms of an Einsum equation say of the inputs: each letter's
 * dimension and how many terms use it, and the ellipsis dimensions
 * broadcast together. */
typedef struct einsum_dims {
    olla_dim letter[52];
    int count[52], seen[52];
    olla_dim ell[OLLA_SHAPE_MAX_RANK];
    int ell_rank;
} einsum_dims;

/* Reads one term of the equation against its input's type t into ed. */
static olla_status einsum_term(olla_shape_ctx *c, const char *term, const olla_value_type *t, einsum_dims *ed)
{
    int letters = 0, has_ell = strstr(term, "...") != NULL;
    for (const char *p = term; *p; p++)
        if (letter_index(*p) >= 0)
            letters++;
    int er = has_ell ? t->rank - letters : 0;
    if (er < 0 || (!has_ell && letters != t->rank))
        return olla_shape_fail(c, "term '%s' does not match input rank %d", term, t->rank);
    int d = 0;
    for (const char *p = term; *p;) {
        if (strncmp(p, "...", 3) == 0) {
            /* right-aligned broadcast of ellipsis dims */
            if (er > ed->ell_rank) {
                for (int m = ed->ell_rank - 1; m >= 0; m--)
                    ed->ell[m + er - ed->ell_rank] = ed->ell[m];
                for (int m = 0; m < er - ed->ell_rank; m++)
                    ed->ell[m] = olla_dim_known(1);
                ed->ell_rank = er;
            }
            for (int m = 0; m < er; m++) {
                olla_dim *slot = &ed->ell[ed->ell_rank - er + m];
                if (!bdim(*slot, t->dims[d + m], slot))
                    return olla_shape_fail(c, "ellipsis dimensions cannot be broadcast");
            }
            d += er;
            p += 3;
            continue;
        }
        int li = letter_index(*p);
        if (li < 0)
            return olla_shape_fail(c, "bad character '%c' in equation", *p);
        ed->count[li]++;
        if (!ed->seen[li] || (ed->letter[li].value < 0 && t->dims[d].value >= 0) ||
            (ed->letter[li].value == 1 && t->dims[d].value != 1))
            ed->letter[li] = t->dims[d];
        ed->seen[li] = 1;
        d++;
        p++;
    }
    return OLLA_OK;
}

/* The output's dims: the explicit subscripts after "->" (out NULL: the
 * implicit output, the ellipsis then the letters used once). */
static olla_status einsum_output(olla_shape_ctx *c, const char *out, const einsum_dims *ed, olla_dim *dims, int *rank)
{
    int r = 0;
    if (out) {
        for (const char *p = out; *p;) {
            if (strncmp(p, "...", 3) == 0) {
                for (int m = 0; m < ed->ell_rank && r < OLLA_SHAPE_MAX_RANK; m++)
                    dims[r++] = ed->ell[m];
                p += 3;
                continue;
            }
            int li = letter_index(*p);
            if (li < 0 || !ed->seen[li] || r >= OLLA_SHAPE_MAX_RANK)
                return olla_shape_fail(c, "output subscript '%c' does not appear in the inputs", *p);
            dims[r++] = ed->letter[li];
            p++;
        }
    } else {
        for (int m = 0; m < ed->ell_rank; m++)
            dims[r++] = ed->ell[m];
        /* implicit output: letters appearing once, upper case first (ASCII order) */
        for (int li = 26; li < 52; li++)
            if (ed->count[li] == 1 && r < OLLA_SHAPE_MAX_RANK)
                dims[r++] = ed->letter[li];
        for (int li = 0; li < 26; li++)
            if (ed->count[li] == 1 && r < OLLA_SHAPE_MAX_RANK)
                dims[r++] = ed->letter[li];
    }
    *rank = r;
    return OLLA_OK;
}

/* Einsum: the output subscripts over the dimensions the input terms give. */
static olla_status rule_einsum(olla_shape_ctx *c)
{
    const char *eq = olla_shape_attr_string(c, "equation", NULL);
    int32_t elem = olla_shape_in_elem(c, 0);
    if (!eq)
        return olla_shape_fail(c, "Einsum needs an equation");
    char buf[512];
    size_t L = 0;
    for (const char *p = eq; *p && L + 1 < sizeof buf; p++)
        if (*p != ' ')
            buf[L++] = *p;
    buf[L] = '\0';
    char *arrow = strstr(buf, "->");
    if (arrow)
        *arrow = '\0';
    einsum_dims ed;
    memset(&ed, 0, sizeof ed);
    int n_in = olla_shape_n_inputs(c), k = 0;
    char *term = buf;
    for (;; k++) {
        char *comma = strchr(term, ',');
        if (comma)
            *comma = '\0';
        if (k >= n_in)
            return olla_shape_fail(c, "equation has more terms than inputs");
        const olla_value_type *t = olla_shape_in(c, k);
        if (!t || t->rank < 0)
            return olla_shape_set_out(c, 0, elem, -1, NULL);
        olla_status st = einsum_term(c, term, t, &ed);
        if (st != OLLA_OK)
            return st;
        if (!comma)
            break;
        term = comma + 1;
    }
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int r = 0;
    olla_status st = einsum_output(c, arrow ? arrow + 2 : NULL, &ed, dims, &r);
    return st == OLLA_OK ? olla_shape_set_out(c, 0, elem, r, dims) : st;
}

/* ---- Softmax family, Dropout ---- */

static olla_status rule_same(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

static olla_status rule_dropout(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    olla_status st = olla_shape_pass(c, 0, 0);
    if (st != OLLA_OK || !x)
        return st;
    int32_t mask = olla_shape_opset(c) >= 10 ? OLLA_DT_BOOL : x->elem_type;
    return olla_shape_set_out(c, 1, mask, x->rank, x->dims);
}

const olla_shape_rule_entry olla_shape_rules_linalg[] = {
    {"", "MatMul", rule_matmul}, {"", "MatMulInteger", rule_matmul_integer}, {"", "Gemm", rule_gemm},
    {"", "Einsum", rule_einsum}, {"", "Softmax", rule_same}, {"", "LogSoftmax", rule_same},
    {"", "Hardmax", rule_same}, {"", "Dropout", rule_dropout},
    {NULL, NULL, NULL}};
