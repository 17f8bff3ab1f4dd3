/* olla-onnx: values of symbolic dimensions from --dim bindings. */
#include <stdint.h>
#include <string.h>

#include "passes/shapes/olla_shapes.h"

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
