/* olla-onnx: values of symbolic dimensions from --dim bindings. */
#include <stdint.h>
#include <string.h>

#include "passes/olla_shapes.h"

static int bind_name(const char *name, size_t len, const olla_dim_binding *dims, int n_dims, int64_t *value)
{
    for (int i = 0; i < n_dims; i++)
        if (strlen(dims[i].name) == len && strncmp(dims[i].name, name, len) == 0) {
            *value = dims[i].value;
            return 1;
        }
    return 0;
}

/* A dimension parameter is a name, or an exporter's expression over names
 * and integers with + and * (such as "8*batch" or "batch*seq+1"). */
int olla_dim_param_eval(const char *param, const olla_dim_binding *dims, int n_dims, int64_t *value)
{
    if (bind_name(param, strlen(param), dims, n_dims, value))
        return 1;
    int64_t sum = 0, prod = 1;
    const char *p = param;
    for (;;) {
        while (*p == ' ')
            p++;
        const char *start = p;
        int64_t term;
        if (*p >= '0' && *p <= '9') {
            term = 0;
            while (*p >= '0' && *p <= '9') {
                if (term > (INT64_MAX - 9) / 10)
                    return 0;
                term = term * 10 + (*p++ - '0');
            }
        } else {
            while (*p && *p != '*' && *p != '+' && *p != ' ')
                p++;
            if (p == start || !bind_name(start, (size_t)(p - start), dims, n_dims, &term))
                return 0;
        }
        if (term != 0 && prod > INT64_MAX / term)
            return 0;
        prod *= term;
        while (*p == ' ')
            p++;
        if (*p == '*') {
            p++;
            continue;
        }
        if (prod > INT64_MAX - sum)
            return 0;
        sum += prod;
        prod = 1;
        if (*p == '+') {
            p++;
            continue;
        }
        if (*p)
            return 0;
        *value = sum;
        return 1;
    }
}

