/* olla-onnx: shape rules for elementwise operators: unary, binary with
 * broadcasting, variadic (Sum/Mean/Max/Min), logical and comparison, Where,
 * Clip. Integer values are folded when the inputs are known. */
#include <math.h>
#include <string.h>

#include "passes/shapes/olla_shape_rules.h"

/* ---- value folding ---- */

typedef enum { EV_ADD, EV_SUB, EV_MUL, EV_DIV, EV_MOD, EV_FMOD, EV_POW, EV_MAX, EV_MIN, EV_EQ, EV_LT, EV_GT,
               EV_LE, EV_GE, EV_AND, EV_OR, EV_XOR, EV_BAND, EV_BOR, EV_BXOR, EV_SHL, EV_SHR } ev_op;

static int is_float_type(int32_t t)
{
    return t == OLLA_DT_FLOAT || t == OLLA_DT_DOUBLE || t == OLLA_DT_FLOAT16 || t == OLLA_DT_BFLOAT16;
}

static int static_numel(const olla_value_type *t, int64_t *n)
{
    if (!t || t->rank < 0)
        return 0;
    int64_t k = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d].value < 0 || t->dims[d].value > OLLA_SHAPE_MAX_VALUE)
            return 0;
        k *= t->dims[d].value;
        if (k > OLLA_SHAPE_MAX_VALUE)
            return 0;
    }
    *n = k;
    return 1;
}

static olla_sval sv_known_f(double v)
{
    olla_sval s = {OLLA_SV_KNOWN, olla_shape_f2i(v), v, NULL};
    return s;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static olla_sval eval_one(olla_shape_ctx *c, ev_op op, olla_sval a, olla_sval b, int fl, int fmod_attr)
{
    olla_sval u = {OLLA_SV_UNKNOWN, 0, 0, NULL};
    if (a.state != OLLA_SV_KNOWN || b.state != OLLA_SV_KNOWN) {
        /* symbolic arithmetic on dims */
        if (a.state == OLLA_SV_UNKNOWN || b.state == OLLA_SV_UNKNOWN || fl)
            return u;
        olla_dim da = olla_dim_of_sval(a), db = olla_dim_of_sval(b), r = {-1, NULL};
        if ((a.state == OLLA_SV_KNOWN && a.i < 0) || (b.state == OLLA_SV_KNOWN && b.i < 0))
            return u;
        switch (op) {
        case EV_ADD: r = olla_dim_add(c, da, db); break;
        case EV_SUB: r = olla_dim_sub(c, da, db); break;
        case EV_MUL: r = olla_dim_mul(c, da, db); break;
        case EV_DIV: r = olla_dim_div(c, da, db); break;
        case EV_EQ:
            if (a.state == OLLA_SV_SYMBOLIC && b.state == OLLA_SV_SYMBOLIC && olla_dim_equal(da, db))
                return olla_sval_int(1);
            return u;
        case EV_MAX:
        case EV_MIN:
            if (a.state == OLLA_SV_SYMBOLIC && b.state == OLLA_SV_SYMBOLIC && olla_dim_equal(da, db))
                return a;
            /* a dimension is at least 1 in practice: max(d, 1) = d, min(d, 1) = 1 */
            if (b.state == OLLA_SV_KNOWN && b.i <= 1)
                return op == EV_MAX ? a : (b.i == 1 ? b : u);
            if (a.state == OLLA_SV_KNOWN && a.i <= 1)
                return op == EV_MAX ? b : (a.i == 1 ? a : u);
            return u;
        default: return u;
        }
        return olla_sval_of_dim(r);
    }
    if (fl) {
        double x = a.f, y = b.f, r;
        switch (op) {
        case EV_ADD: r = x + y; break;
        case EV_SUB: r = x - y; break;
        case EV_MUL: r = x * y; break;
        case EV_DIV: r = x / y; break;
        case EV_MOD: r = fmod(x, y); break;
        case EV_FMOD: r = fmod(x, y); break;
        case EV_POW: r = pow(x, y); break;
        case EV_MAX: r = x > y ? x : y; break;
        case EV_MIN: r = x < y ? x : y; break;
        case EV_EQ: return olla_sval_int(x == y);
        case EV_LT: return olla_sval_int(x < y);
        case EV_GT: return olla_sval_int(x > y);
        case EV_LE: return olla_sval_int(x <= y);
        case EV_GE: return olla_sval_int(x >= y);
        default: return u;
        }
        if (!isfinite(r) || fabs(r) > 9e18)
            return u;
        return sv_known_f(r);
    }
    int64_t x = a.i, y = b.i;
    switch (op) {
    case EV_ADD: return olla_sval_int((int64_t)((uint64_t)x + (uint64_t)y));
    case EV_SUB: return olla_sval_int((int64_t)((uint64_t)x - (uint64_t)y));
    case EV_MUL: return olla_sval_int((int64_t)((uint64_t)x * (uint64_t)y));
    case EV_DIV:
        if (y == 0 || (x == INT64_MIN && y == -1))
            return u;
        return olla_sval_int(x / y); /* ONNX integer Div truncates */
    case EV_MOD:
    case EV_FMOD:
        if (y == 0 || (x == INT64_MIN && y == -1))
            return u;
        if (fmod_attr || op == EV_FMOD)
            return olla_sval_int(x % y);
        return olla_sval_int(x - floor_div(x, y) * y);
    case EV_POW: {
        if (y < 0 || y > 62)
            return u;
        uint64_t r = 1;
        for (int64_t k = 0; k < y; k++)
            r *= (uint64_t)x;
        return olla_sval_int((int64_t)r);
    }
    case EV_MAX: return olla_sval_int(x > y ? x : y);
    case EV_MIN: return olla_sval_int(x < y ? x : y);
    case EV_EQ: return olla_sval_int(x == y);
    case EV_LT: return olla_sval_int(x < y);
    case EV_GT: return olla_sval_int(x > y);
    case EV_LE: return olla_sval_int(x <= y);
    case EV_GE: return olla_sval_int(x >= y);
    case EV_AND: return olla_sval_int(x && y);
    case EV_OR: return olla_sval_int(x || y);
    case EV_XOR: return olla_sval_int(!x != !y);
    case EV_BAND: return olla_sval_int(x & y);
    case EV_BOR: return olla_sval_int(x | y);
    case EV_BXOR: return olla_sval_int(x ^ y);
    case EV_SHL: return y >= 0 && y < 64 ? olla_sval_int((int64_t)((uint64_t)x << y)) : u;
    case EV_SHR: return y >= 0 && y < 64 ? olla_sval_int((int64_t)((uint64_t)x >> y)) : u;
    }
    return u;
}

/* Folds out = a (op) b ... over inputs [0, n_in) when their values are known
 * (left fold for variadic ops). */
static olla_status fold_binary(olla_shape_ctx *c, ev_op op, int n_in)
{
    const olla_value_type *out = NULL;
    int64_t n;
    /* the output type was just set: read it back through a pass-through of input shapes */
    int rank;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    int idx[64];
    if (n_in > 64)
        return OLLA_OK;
    for (int k = 0; k < n_in; k++) {
        idx[k] = k;
        if (!olla_shape_in_value(c, k))
            return OLLA_OK;
    }
    if (olla_shape_broadcast(c, idx, n_in, &rank, dims) != 0 || rank < 0)
        return OLLA_OK;
    olla_value_type ot = {OLLA_VALUE_TENSOR, 0, rank, dims, OLLA_SRC_INFERRED};
    out = &ot;
    if (!static_numel(out, &n))
        return OLLA_OK;
    int fl = 0;
    for (int k = 0; k < n_in; k++)
        fl |= is_float_type(olla_shape_in_elem(c, k));
    int fmod_attr = op == EV_MOD ? (int)olla_shape_attr_int(c, "fmod", 0) : 0;
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(n ? n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < n; e++) {
        const olla_shape_value *v0 = olla_shape_in_value(c, 0);
        olla_sval acc = v0->e[olla_shape_bcast_index(olla_shape_in(c, 0), out, e)];
        for (int k = 1; k < n_in; k++) {
            const olla_shape_value *vk = olla_shape_in_value(c, k);
            acc = eval_one(c, op, acc, vk->e[olla_shape_bcast_index(olla_shape_in(c, k), out, e)], fl, fmod_attr);
        }
        res[e] = acc;
    }
    if (op == EV_ADD && n_in > 1 && strcmp(olla_shape_op(c), "Mean") == 0)
        return OLLA_OK; /* Mean not folded */
    return olla_shape_set_out_value(c, 0, res, n);
}

/* ---- rules ---- */

/* Output 0 has input 0's type; elementwise unary ops. */
static olla_status rule_unary(olla_shape_ctx *c)
{
    return olla_shape_pass(c, 0, 0);
}

static olla_status rule_neg_abs(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !v)
        return st;
    int neg = strcmp(olla_shape_op(c), "Neg") == 0;
    int fl = is_float_type(olla_shape_in_elem(c, 0));
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(v->n ? v->n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < v->n; e++) {
        olla_sval s = v->e[e];
        if (s.state == OLLA_SV_KNOWN) {
            if (fl)
                s = sv_known_f(neg ? -s.f : fabs(s.f));
            else
                s = olla_sval_int((neg || s.i < 0) ? (int64_t)(0 - (uint64_t)s.i) : s.i);
        } else if (s.state == OLLA_SV_SYMBOLIC && neg) {
            s.state = OLLA_SV_UNKNOWN;
        }
        res[e] = s;
    }
    return olla_shape_set_out_value(c, 0, res, v->n);
}

/* Floor, Ceil, Round: fold known values. */
static olla_status rule_rounding(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !v)
        return st;
    const char *op = olla_shape_op(c);
    int fl = is_float_type(olla_shape_in_elem(c, 0));
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(v->n ? v->n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < v->n; e++) {
        olla_sval s = v->e[e];
        if (s.state == OLLA_SV_KNOWN && fl) {
            double r = op[0] == 'F' ? floor(s.f) : op[0] == 'C' ? ceil(s.f) : nearbyint(s.f);
            s = fabs(r) < 9e18 ? sv_known_f(r) : s;
            if (fabs(r) >= 9e18)
                s.state = OLLA_SV_UNKNOWN;
        }
        res[e] = s;
    }
    return olla_shape_set_out_value(c, 0, res, v->n);
}

static olla_status rule_not(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !v)
        return st;
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(v->n ? v->n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < v->n; e++) {
        res[e] = v->e[e];
        if (res[e].state == OLLA_SV_KNOWN)
            res[e] = olla_sval_int(!res[e].i);
        else
            res[e].state = OLLA_SV_UNKNOWN;
    }
    return olla_shape_set_out_value(c, 0, res, v->n);
}

/* Unary ops with a boolean result. */
static olla_status rule_unary_bool(olla_shape_ctx *c)
{
    const olla_value_type *x = olla_shape_in(c, 0);
    if (!x)
        return OLLA_OK;
    return olla_shape_set_out(c, 0, OLLA_DT_BOOL, x->rank, x->dims);
}

static ev_op op_of(const char *op)
{
    static const struct {
        const char *name;
        ev_op op;
    } map[] = {{"Add", EV_ADD}, {"Sub", EV_SUB}, {"Mul", EV_MUL}, {"Div", EV_DIV}, {"Mod", EV_MOD},
               {"Pow", EV_POW}, {"Max", EV_MAX}, {"Min", EV_MIN}, {"Sum", EV_ADD}, {"Mean", EV_ADD},
               {"Equal", EV_EQ}, {"Less", EV_LT}, {"Greater", EV_GT}, {"LessOrEqual", EV_LE},
               {"GreaterOrEqual", EV_GE}, {"And", EV_AND}, {"Or", EV_OR}, {"Xor", EV_XOR},
               {"BitwiseAnd", EV_BAND}, {"BitwiseOr", EV_BOR}, {"BitwiseXor", EV_BXOR}};
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (strcmp(map[k].name, op) == 0)
            return map[k].op;
    return EV_ADD;
}

static int is_compare(const char *op)
{
    return strcmp(op, "Equal") == 0 || strcmp(op, "Less") == 0 || strcmp(op, "Greater") == 0 ||
           strcmp(op, "LessOrEqual") == 0 || strcmp(op, "GreaterOrEqual") == 0;
}

/* Binary and variadic broadcasting ops. Comparisons yield bool. Before
 * opset 7 the arithmetic ops broadcast B into A (output = A's shape). */
static olla_status rule_broadcast(olla_shape_ctx *c)
{
    const char *op = olla_shape_op(c);
    int n_in = olla_shape_n_inputs(c);
    int32_t elem = 0;
    int idx[64], n = 0;
    for (int k = 0; k < n_in && n < 64; k++) {
        if (!olla_shape_has_input(c, k))
            continue;
        idx[n++] = k;
        if (!elem)
            elem = olla_shape_in_elem(c, k);
    }
    if (n == 0)
        return OLLA_OK;
    if (is_compare(op))
        elem = OLLA_DT_BOOL;
    else if (strcmp(op, "Pow") == 0 || strcmp(op, "BitShift") == 0 || strcmp(op, "PRelu") == 0)
        elem = olla_shape_in_elem(c, 0);
    int legacy = olla_shape_opset(c) < 7 && olla_shape_domain(c)[0] == '\0' &&
                 (olla_shape_attr_has(c, "broadcast") || n == 2) &&
                 strcmp(op, "Max") != 0 && strcmp(op, "Min") != 0 && strcmp(op, "Sum") != 0 &&
                 strcmp(op, "Mean") != 0;
    if (legacy) {
        const olla_value_type *a = olla_shape_in(c, 0);
        return a ? olla_shape_set_out(c, 0, elem, a->rank, a->dims) : OLLA_OK;
    }
    int rank;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (olla_shape_broadcast(c, idx, n, &rank, dims) != 0)
        return olla_shape_fail(c, "inputs of %s cannot be broadcast together", op);
    olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
    if (st != OLLA_OK)
        return st;
    if (strcmp(op, "PRelu") == 0 || n != n_in)
        return OLLA_OK;
    if (strcmp(op, "BitShift") == 0) {
        const char *dir = olla_shape_attr_string(c, "direction", "");
        return fold_binary(c, strcmp(dir, "LEFT") == 0 ? EV_SHL : EV_SHR, n);
    }
    return fold_binary(c, op_of(op), n);
}

/* Where(cond, X, Y): broadcast of all three, X's type. */
static olla_status rule_where(olla_shape_ctx *c)
{
    int idx[3] = {0, 1, 2}, rank;
    olla_dim dims[OLLA_SHAPE_MAX_RANK];
    if (olla_shape_broadcast(c, idx, 3, &rank, dims) != 0)
        return olla_shape_fail(c, "inputs of Where cannot be broadcast together");
    int32_t elem = olla_shape_in_elem(c, 1);
    if (!elem)
        elem = olla_shape_in_elem(c, 2);
    olla_status st = olla_shape_set_out(c, 0, elem, rank, dims);
    const olla_shape_value *vc = olla_shape_in_value(c, 0), *vx = olla_shape_in_value(c, 1),
                           *vy = olla_shape_in_value(c, 2);
    if (st != OLLA_OK || rank < 0 || !vc || !vx || !vy)
        return st;
    olla_value_type ot = {OLLA_VALUE_TENSOR, elem, rank, dims, OLLA_SRC_INFERRED};
    int64_t n;
    if (!static_numel(&ot, &n))
        return OLLA_OK;
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(n ? n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < n; e++) {
        olla_sval cs = vc->e[olla_shape_bcast_index(olla_shape_in(c, 0), &ot, e)];
        olla_sval u = {OLLA_SV_UNKNOWN, 0, 0, NULL};
        if (cs.state != OLLA_SV_KNOWN)
            res[e] = u;
        else
            res[e] = cs.i ? vx->e[olla_shape_bcast_index(olla_shape_in(c, 1), &ot, e)]
                          : vy->e[olla_shape_bcast_index(olla_shape_in(c, 2), &ot, e)];
    }
    return olla_shape_set_out_value(c, 0, res, n);
}

/* Clip: X's type; min/max are attributes (< 11) or scalar inputs. */
static olla_status rule_clip(olla_shape_ctx *c)
{
    olla_status st = olla_shape_pass(c, 0, 0);
    const olla_shape_value *v = olla_shape_in_value(c, 0);
    if (st != OLLA_OK || !v || olla_shape_opset(c) < 11 || is_float_type(olla_shape_in_elem(c, 0)))
        return st;
    int64_t lo = INT64_MIN, hi = INT64_MAX, t;
    if (olla_shape_has_input(c, 1)) {
        if (olla_shape_in_ints(c, 1, &t, 1) != 1)
            return OLLA_OK;
        lo = t;
    }
    if (olla_shape_has_input(c, 2)) {
        if (olla_shape_in_ints(c, 2, &t, 1) != 1)
            return OLLA_OK;
        hi = t;
    }
    olla_sval *res = olla_shape_scratch(c, sizeof *res * (size_t)(v->n ? v->n : 1));
    if (!res)
        return OLLA_ERR_INTERNAL;
    for (int64_t e = 0; e < v->n; e++) {
        res[e] = v->e[e];
        if (res[e].state == OLLA_SV_KNOWN)
            res[e] = olla_sval_int(res[e].i < lo ? lo : res[e].i > hi ? hi : res[e].i);
        else
            res[e].state = OLLA_SV_UNKNOWN;
    }
    return olla_shape_set_out_value(c, 0, res, v->n);
}

const olla_shape_rule_entry olla_shape_rules_elementwise[] = {
    /* unary, same type */
    {"", "Abs", rule_neg_abs}, {"", "Neg", rule_neg_abs}, {"", "Exp", rule_unary},
    {"", "Log", rule_unary}, {"", "Sqrt", rule_unary}, {"", "Reciprocal", rule_unary},
    {"", "Relu", rule_unary}, {"", "Sigmoid", rule_unary}, {"", "Tanh", rule_unary},
    {"", "Floor", rule_rounding}, {"", "Ceil", rule_rounding}, {"", "Round", rule_rounding},
    {"", "Sin", rule_unary}, {"", "Cos", rule_unary}, {"", "Tan", rule_unary},
    {"", "Asin", rule_unary}, {"", "Acos", rule_unary}, {"", "Atan", rule_unary},
    {"", "Sinh", rule_unary}, {"", "Cosh", rule_unary}, {"", "Asinh", rule_unary},
    {"", "Acosh", rule_unary}, {"", "Atanh", rule_unary}, {"", "Erf", rule_unary},
    {"", "Sign", rule_unary}, {"", "Softplus", rule_unary}, {"", "Softsign", rule_unary},
    {"", "Elu", rule_unary}, {"", "Selu", rule_unary}, {"", "LeakyRelu", rule_unary},
    {"", "ThresholdedRelu", rule_unary}, {"", "HardSigmoid", rule_unary},
    {"", "HardSwish", rule_unary}, {"", "Mish", rule_unary}, {"", "Gelu", rule_unary},
    {"", "Celu", rule_unary}, {"", "Shrink", rule_unary}, {"", "BitwiseNot", rule_unary},
    {"", "Swish", rule_unary}, {"", "CumProd", rule_unary},
    {"", "Not", rule_not}, {"", "Clip", rule_clip},
    {"", "IsNaN", rule_unary_bool}, {"", "IsInf", rule_unary_bool},
    /* broadcasting */
    {"", "Add", rule_broadcast}, {"", "Sub", rule_broadcast}, {"", "Mul", rule_broadcast},
    {"", "Div", rule_broadcast}, {"", "Mod", rule_broadcast}, {"", "Pow", rule_broadcast},
    {"", "BitShift", rule_broadcast}, {"", "BitwiseAnd", rule_broadcast},
    {"", "BitwiseOr", rule_broadcast}, {"", "BitwiseXor", rule_broadcast},
    {"", "And", rule_broadcast}, {"", "Or", rule_broadcast}, {"", "Xor", rule_broadcast},
    {"", "Equal", rule_broadcast}, {"", "Less", rule_broadcast}, {"", "Greater", rule_broadcast},
    {"", "LessOrEqual", rule_broadcast}, {"", "GreaterOrEqual", rule_broadcast},
    {"", "Sum", rule_broadcast}, {"", "Mean", rule_broadcast}, {"", "Max", rule_broadcast},
    {"", "Min", rule_broadcast}, {"", "PRelu", rule_broadcast},
    {"", "Where", rule_where},
    {NULL, NULL, NULL}};
