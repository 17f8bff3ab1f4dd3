/* olla-onnx: the arithmetic of dimensions: a dimension is a known size or a
 * symbolic expression ("batch", "8*batch", "seq+1"); shape rules add,
 * subtract, multiply and divide them, keeping products in one canonical
 * spelling so that equal products compare equal. Then the values of
 * symbolic dimensions from --dim bindings. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "passes/shapes/olla_shapes.h"
#include "passes/shapes/shape_engine.h"

/* ---- known and symbolic dimensions ---- */

olla_dim olla_dim_known(int64_t v)
{
    olla_dim d = {v >= 0 ? v : -1, NULL};
    return d;
}

olla_dim olla_dim_unknown(void)
{
    olla_dim d = {-1, NULL};
    return d;
}

int olla_dim_is_known(olla_dim d)
{
    return d.value >= 0;
}

/* A product k * atoms (sorted). An expression that is not a plain product
 * is one atom. */
#define MAX_ATOMS 16
typedef struct {
    int64_t k;
    int n;
    const char *atom[MAX_ATOMS];
    size_t len[MAX_ATOMS];
} prod;

/* Reads d as a product into p; 0 when it is not one that fits. */
static int parse_prod(olla_dim d, prod *p)
{
    p->k = 1;
    p->n = 0;
    if (d.value >= 0) {
        p->k = d.value;
        return 1;
    }
    if (!d.param)
        return 0;
    const char *s = d.param;
    if (strpbrk(s, "+-/() ")) {
        p->atom[0] = s;
        p->len[0] = strlen(s);
        p->n = 1;
        return 1;
    }
    while (*s) {
        const char *e = strchr(s, '*');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 0)
            return 0;
        int digits = 1;
        for (size_t k = 0; k < len; k++)
            if (s[k] < '0' || s[k] > '9')
                digits = 0;
        if (digits) {
            int64_t v = 0;
            for (size_t k = 0; k < len; k++) {
                if (v > (INT64_MAX - 9) / 10)
                    return 0;
                v = v * 10 + (s[k] - '0');
            }
            if (v != 0 && p->k > INT64_MAX / v)
                return 0;
            p->k *= v;
        } else {
            if (p->n == MAX_ATOMS)
                return 0;
            p->atom[p->n] = s;
            p->len[p->n] = len;
            p->n++;
        }
        s += len;
        if (*s == '*')
            s++;
    }
    return 1;
}

/* Orders two atoms (names of lengths la and lb) as strcmp would. */
static int atom_cmp(const char *a, size_t la, const char *b, size_t lb)
{
    size_t m = la < lb ? la : lb;
    int r = strncmp(a, b, m);
    if (r)
        return r;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

/* Sorts the atoms of p (insertion: products are short). */
static void sort_atoms(prod *p)
{
    for (int i = 1; i < p->n; i++)
        for (int j = i; j > 0 && atom_cmp(p->atom[j - 1], p->len[j - 1], p->atom[j], p->len[j]) > 0; j--) {
            const char *ta = p->atom[j];
            size_t tl = p->len[j];
            p->atom[j] = p->atom[j - 1];
            p->len[j] = p->len[j - 1];
            p->atom[j - 1] = ta;
            p->len[j - 1] = tl;
        }
}

int olla_dim_equal(olla_dim a, olla_dim b)
{
    if (a.value >= 0 || b.value >= 0)
        return a.value == b.value;
    if (!a.param || !b.param)
        return 0;
    if (a.param == b.param || strcmp(a.param, b.param) == 0)
        return 1;
    /* the same product written differently: "8*batch" and "batch*8" */
    prod pa, pb;
    if (!parse_prod(a, &pa) || !parse_prod(b, &pb) || pa.k != pb.k || pa.n != pb.n)
        return 0;
    sort_atoms(&pa);
    sort_atoms(&pb);
    for (int i = 0; i < pa.n; i++)
        if (atom_cmp(pa.atom[i], pa.len[i], pb.atom[i], pb.len[i]) != 0)
            return 0;
    return 1;
}

/* The dimension of product p in its canonical spelling (atoms sorted, the
 * constant last), interned in the table. */
static olla_dim prod_to_dim(olla_shape_ctx *c, prod *p)
{
    if (p->k == 0)
        return olla_dim_known(0);
    if (p->n == 0)
        return olla_dim_known(p->k);
    sort_atoms(p);
    char buf[512];
    size_t at = 0;
    for (int i = 0; i < p->n; i++) {
        int paren = (p->n > 1 || p->k != 1) && strpbrk(p->atom[i], "+-/") && memchr(p->atom[i], '(', 1) == NULL;
        int w = snprintf(buf + at, sizeof buf - at, "%s%s%.*s%s", i ? "*" : "", paren ? "(" : "", (int)p->len[i],
                         p->atom[i], paren ? ")" : "");
        if (w < 0 || (size_t)w >= sizeof buf - at)
            return olla_dim_unknown();
        at += (size_t)w;
    }
    if (p->k != 1) {
        int w = snprintf(buf + at, sizeof buf - at, "*%lld", (long long)p->k);
        if (w < 0 || (size_t)w >= sizeof buf - at)
            return olla_dim_unknown();
    }
    olla_dim d = {-1, olla_shape__intern(c->t, buf)};
    return d;
}

olla_dim olla_dim_mul(olla_shape_ctx *c, olla_dim a, olla_dim b)
{
    if (a.value >= 0 && b.value >= 0) {
        if (a.value != 0 && b.value > INT64_MAX / a.value)
            return olla_dim_unknown();
        return olla_dim_known(a.value * b.value);
    }
    if (a.value == 0 || b.value == 0)
        return olla_dim_known(0);
    if (a.value == 1)
        return b;
    if (b.value == 1)
        return a;
    prod pa, pb;
    if (!parse_prod(a, &pa) || !parse_prod(b, &pb) || pa.n + pb.n > MAX_ATOMS)
        return olla_dim_unknown();
    if (pb.k != 0 && pa.k > INT64_MAX / pb.k)
        return olla_dim_unknown();
    pa.k *= pb.k;
    for (int i = 0; i < pb.n; i++) {
        pa.atom[pa.n] = pb.atom[i];
        pa.len[pa.n++] = pb.len[i];
    }
    return prod_to_dim(c, &pa);
}

/* a / b, rounded down or (ceil) up; symbolic when b's atoms are among a's. */
static olla_dim dim_div(olla_shape_ctx *c, olla_dim a, olla_dim b, int ceil)
{
    if (b.value == 0)
        return olla_dim_unknown();
    if (a.value >= 0 && b.value > 0)
        return olla_dim_known(ceil ? (a.value + b.value - 1) / b.value : a.value / b.value);
    if (b.value == 1)
        return a;
    prod pa, pb;
    if (!parse_prod(a, &pa) || !parse_prod(b, &pb) || pb.k == 0 || pa.k % pb.k != 0)
        return olla_dim_unknown();
    for (int i = 0; i < pb.n; i++) {
        int found = -1;
        for (int j = 0; j < pa.n && found < 0; j++)
            if (atom_cmp(pa.atom[j], pa.len[j], pb.atom[i], pb.len[i]) == 0)
                found = j;
        if (found < 0)
            return olla_dim_unknown();
        pa.atom[found] = pa.atom[pa.n - 1];
        pa.len[found] = pa.len[pa.n - 1];
        pa.n--;
    }
    pa.k /= pb.k;
    return prod_to_dim(c, &pa);
}

olla_dim olla_dim_div(olla_shape_ctx *c, olla_dim a, olla_dim b)
{
    return dim_div(c, a, b, 0);
}
olla_dim olla_dim_ceil_div(olla_shape_ctx *c, olla_dim a, olla_dim b)
{
    return dim_div(c, a, b, 1);
}

/* The symbolic dimension "a op b", b in parentheses after a minus when it
 * is a sum. */
static olla_dim dim_expr(olla_shape_ctx *c, olla_dim a, const char *op, olla_dim b)
{
    char buf[512], sa[64], sb[64];
    const char *ta = a.param, *tb = b.param;
    if (!ta) {
        snprintf(sa, sizeof sa, "%lld", (long long)a.value);
        ta = sa;
    }
    if (!tb) {
        snprintf(sb, sizeof sb, "%lld", (long long)b.value);
        tb = sb;
    }
    int paren_b = op[0] == '-' && strpbrk(tb, "+-");
    int w = snprintf(buf, sizeof buf, "%s%s%s%s%s", ta, op, paren_b ? "(" : "", tb, paren_b ? ")" : "");
    if (w < 0 || (size_t)w >= sizeof buf)
        return olla_dim_unknown();
    olla_dim d = {-1, olla_shape__intern(c->t, buf)};
    return d;
}

olla_dim olla_dim_add(olla_shape_ctx *c, olla_dim a, olla_dim b)
{
    if (a.value >= 0 && b.value >= 0)
        return a.value > INT64_MAX - b.value ? olla_dim_unknown() : olla_dim_known(a.value + b.value);
    if (a.value == 0)
        return b;
    if (b.value == 0)
        return a;
    if ((a.value < 0 && !a.param) || (b.value < 0 && !b.param))
        return olla_dim_unknown();
    return dim_expr(c, a, "+", b);
}

olla_dim olla_dim_sub(olla_shape_ctx *c, olla_dim a, olla_dim b)
{
    if (a.value >= 0 && b.value >= 0)
        return a.value >= b.value ? olla_dim_known(a.value - b.value) : olla_dim_unknown();
    if (b.value == 0)
        return a;
    if (olla_dim_equal(a, b))
        return olla_dim_known(0);
    if ((a.value < 0 && !a.param) || (b.value < 0 && !b.param))
        return olla_dim_unknown();
    return dim_expr(c, a, "-", b);
}

/* ---- values from --dim bindings ---- */

/* Recursive descent over names, integers, + - * and parentheses. */
typedef struct {
    const char *p;
    const olla_dim_binding *dims;
    int n_dims;
    int depth;
} dim_parser;

static int parse_sum(dim_parser *ps, int64_t *v);

static void skip_spaces(dim_parser *ps)
{
    while (*ps->p == ' ')
        ps->p++;
}

static int parse_factor(dim_parser *ps, int64_t *v)
{
    skip_spaces(ps);
    if (*ps->p == '(') {
        if (++ps->depth > 32)
            return 0;
        ps->p++;
        if (!parse_sum(ps, v))
            return 0;
        skip_spaces(ps);
        if (*ps->p != ')')
            return 0;
        ps->p++;
        ps->depth--;
        return 1;
    }
    if (*ps->p >= '0' && *ps->p <= '9') {
        int64_t x = 0;
        while (*ps->p >= '0' && *ps->p <= '9') {
            if (x > (INT64_MAX - 9) / 10)
                return 0;
            x = x * 10 + (*ps->p++ - '0');
        }
        *v = x;
        return 1;
    }
    const char *s = ps->p;
    while (*ps->p && !strchr("+-*() ", *ps->p))
        ps->p++;
    size_t len = (size_t)(ps->p - s);
    for (int i = 0; len && i < ps->n_dims; i++)
        if (ps->dims[i].name && strlen(ps->dims[i].name) == len && strncmp(ps->dims[i].name, s, len) == 0) {
            *v = ps->dims[i].value;
            return 1;
        }
    return 0;
}

static int parse_product(dim_parser *ps, int64_t *v)
{
    if (!parse_factor(ps, v))
        return 0;
    for (;;) {
        skip_spaces(ps);
        if (*ps->p != '*')
            return 1;
        ps->p++;
        int64_t r;
        if (!parse_factor(ps, &r) || (r != 0 && (*v > INT64_MAX / r || *v < -INT64_MAX / r)))
            return 0;
        *v *= r;
    }
}

static int parse_sum(dim_parser *ps, int64_t *v)
{
    if (!parse_product(ps, v))
        return 0;
    for (;;) {
        skip_spaces(ps);
        char op = *ps->p;
        if (op != '+' && op != '-')
            return 1;
        ps->p++;
        int64_t r;
        if (!parse_product(ps, &r) || r > INT64_MAX / 4 || r < -INT64_MAX / 4 || *v > INT64_MAX / 4 ||
            *v < -INT64_MAX / 4)
            return 0;
        *v = op == '+' ? *v + r : *v - r;
    }
}

/* A dimension parameter is a name, or an exporter's expression over names
 * and integers with +, -, * and parentheses (such as "8*batch",
 * "batch*seq+1" or "(seq-1)*2"). */
int olla_dim_param_eval(const char *param, const olla_dim_binding *dims, int n_dims, int64_t *value)
{
    if (!param || n_dims <= 0 || !dims)
        return 0;
    dim_parser ps = {param, dims, n_dims, 0};
    int64_t v;
    if (!parse_sum(&ps, &v))
        return 0;
    skip_spaces(&ps);
    if (*ps.p != '\0' || v < 0)
        return 0;
    *value = v;
    return 1;
}
