/* Options shared by the sub-commands that plan models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "passes/runtime/olla_exec_order.h"
#include "util/olla_line.h"

int olla_cli_parse_dim(const char *arg, olla_dim_binding *out)
{
    const char *eq = strchr(arg, '=');
    long long v;
    if (!eq || eq == arg || !olla_cli_parse_i64(eq + 1, &v) || v < 0)
        return 0;
    out->name = strndup(arg, (size_t)(eq - arg));
    out->value = v;
    return out->name != NULL;
}

int olla_cli_parse_alignment(const char *s, long long *out)
{
    long long v;
    if (!olla_cli_parse_i64(s, &v) || v < 1 || v > (1LL << 30) || (v & (v - 1)) != 0)
        return 0;
    *out = v;
    return 1;
}

int olla_cli_add_dim(const char *who, const char *arg, olla_dim_binding **dims, int *n)
{
    olla_dim_binding d;
    if (!arg || !olla_cli_parse_dim(arg, &d)) {
        fprintf(stderr, "%s: --dim %s: needs NAME=VALUE with a non-negative integer VALUE\n", who, arg ? arg : "");
        return 0;
    }
    for (int k = 0; k < *n; k++)
        if (strcmp((*dims)[k].name, d.name) == 0) {
            fprintf(stderr, "%s: --dim %s: '%s' is already bound to %lld; give each name once\n", who, arg, d.name,
                    (long long)(*dims)[k].value);
            free((char *)d.name);
            return 0;
        }
    olla_dim_binding *grown = realloc(*dims, ((size_t)*n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "%s: out of memory\n", who);
        free((char *)d.name);
        return 0;
    }
    grown[(*n)++] = d;
    *dims = grown;
    return 1;
}

int olla_cli_parse_input_shape(const char *arg, olla_input_shape *out, char *msg, size_t size)
{
    const char *eq = strchr(arg, '=');
    memset(out, 0, sizeof *out);
    if (!eq || eq == arg) {
        snprintf(msg, size, "--input-shape needs NAME=D1,D2,... (got '%s')", arg);
        return 0;
    }
    int64_t *dims = calloc(strlen(eq) + 1, sizeof *dims);
    int rank = 0;
    const char *p = eq + 1;
    while (dims && *p) { /* "NAME=" alone is a scalar */
        size_t len = strcspn(p, ",");
        char word[32];
        long long v = -1;
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        if (len && (len >= sizeof word || !olla_cli_parse_i64(word, &v) || v < -1)) {
            snprintf(msg, size, "--input-shape %.*s: dimension %d is '%.*s'; give sizes >= 0, or -1 or nothing for unknown",
                     (int)(eq - arg), arg, rank, (int)len, p);
            free(dims);
            return 0;
        }
        dims[rank++] = v;
        if (!p[len])
            break;
        p += len + 1;
        if (!*p)
            dims[rank++] = -1; /* a trailing comma: one more unknown dimension */
    }
    out->name = strndup(arg, (size_t)(eq - arg));
    out->rank = rank;
    out->dims = dims;
    if (!dims || !out->name) {
        free(dims);
        free((char *)out->name);
        snprintf(msg, size, "out of memory");
        return 0;
    }
    return 1;
}

/* --input-shape NAME=D1,D2,...: one more graph input shape. */
static int add_input_shape(olla_cli_plan_opts *po, const char *val)
{
    char msg[512];
    olla_input_shape *s = realloc(po->shapes, ((size_t)po->n_shapes + 1) * sizeof *s);
    if (!s)
        return -1;
    po->shapes = s;
    if (!val) {
        fprintf(stderr, "olla-onnx: --input-shape needs NAME=D1,D2,...\n");
        return -1;
    }
    if (!olla_cli_parse_input_shape(val, &po->shapes[po->n_shapes], msg, sizeof msg)) {
        fprintf(stderr, "olla-onnx: %s\n", msg);
        return -1;
    }
    po->n_shapes++;
    po->opt.input_shapes = po->shapes;
    po->opt.n_input_shapes = po->n_shapes;
    return 1;
}

int olla_cli_plan_option(olla_cli_plan_opts *po, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    olla_options *opt = &po->opt;
    if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
        opt->verbosity = 0;
        return 1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
        opt->verbosity = 2;
        return 1;
    }
    if (strcmp(a, "--keep-order") == 0) {
        opt->keep_order = 1;
        return 1;
    }
    if (strcmp(a, "--joint") == 0) {
        opt->joint = 1;
        return 1;
    }
    if (strcmp(a, "--strict-shapes") == 0) {
        opt->strict_shapes = 1;
        return 1;
    }
    if (strcmp(a, "--input-shape") == 0) {
        int r = add_input_shape(po, val);
        if (r > 0)
            (*i)++;
        return r;
    }
    if (strcmp(a, "--allow-unknown-sizes") == 0) {
        opt->allow_unknown_sizes = 1;
        return 1;
    }
    if (strcmp(a, "--dim") == 0) {
        if (!olla_cli_add_dim("olla-onnx", val, &po->dims, &po->n_dims))
            return -1;
        opt->dims = po->dims;
        opt->n_dims = po->n_dims;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--runtime") == 0) {
        olla_error err = {0};
        if (!val || olla_runtime_parse(val, &opt->runtime, &err) != OLLA_OK) {
            fprintf(stderr, "olla-onnx: --runtime needs 'ort' (ONNX Runtime's own order, the default), "
                            "'ort-priority' (its PRIORITY_BASED order) or 'listed' (a runtime that follows the file)\n");
            return -1;
        }
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--sharing") == 0) {
        if (!val || (strcmp(val, "runtime") != 0 && strcmp(val, "none") != 0)) {
            fprintf(stderr, "olla-onnx: --sharing needs 'runtime' (views and in-place kernels share buffers, the "
                            "default) or 'none' (every tensor a buffer of its own)\n");
            return -1;
        }
        opt->sharing = strcmp(val, "none") == 0 ? OLLA_SHARING_NONE : OLLA_SHARING_RUNTIME;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--memory-limit") == 0) {
        olla_error err = {0};
        if (olla_memory_limit_parse(val, &opt->memory_limit, &err) != OLLA_OK) {
            fprintf(stderr, "olla-onnx: %s\n", err.message);
            return -1;
        }
        po->memory_limit_given = 1;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--time-limit") == 0) {
        if (!val || !olla_cli_parse_double(val, &opt->time_limit) || opt->time_limit <= 0) {
            fprintf(stderr, "olla-onnx: --time-limit %s: needs a positive number of seconds\n", val ? val : "");
            return -1;
        }
        po->time_limit_given = 1;
        (*i)++;
        return 1;
    }
    if (strcmp(a, "--align") == 0) {
        long long v;
        if (!val || !olla_cli_parse_alignment(val, &v)) {
            fprintf(stderr, "olla-onnx: --align %s: needs a power of two from 1 to 1073741824 (bytes)\n",
                    val ? val : "");
            return -1;
        }
        opt->alignment = v;
        (*i)++;
        return 1;
    }
    return 0;
}

void olla_cli_log(void *ctx, olla_log_level level, const char *message)
{
    (void)ctx;
    (void)level; /* the levels wanted are chosen by olla_options.verbosity */
    fprintf(stderr, "%s\n", message);
}

void olla_cli_plan_opts_init(olla_cli_plan_opts *po)
{
    memset(po, 0, sizeof *po);
    olla_options_init(&po->opt);
    po->opt.log = olla_cli_log;
}

int olla_cli_plan_opts_env(olla_cli_plan_opts *po, const char *who)
{
    if (po->memory_limit_given && po->opt.keep_order) {
        fprintf(stderr, "%s: --memory-limit cannot be combined with --keep-order: recomputation adds nodes to "
                        "the order\n", who);
        return 0;
    }
    /* a site-wide default for unattended runs; --time-limit still wins */
    double t;
    const char *env = getenv("OLLA_TIME_LIMIT");
    if (!env)
        return 1;
    if (!olla_cli_parse_double(env, &t) || t <= 0) {
        fprintf(stderr, "%s: OLLA_TIME_LIMIT=%s: needs a positive number of seconds\n", who, env);
        return 0;
    }
    if (!po->time_limit_given)
        po->opt.time_limit = t;
    return 1;
}

void olla_cli_plan_opts_free(olla_cli_plan_opts *po)
{
    for (int i = 0; i < po->n_dims; i++)
        free((char *)po->dims[i].name);
    free(po->dims);
    po->dims = NULL;
    po->n_dims = 0;
    for (int i = 0; i < po->n_shapes; i++) {
        free((char *)po->shapes[i].name);
        free((int64_t *)po->shapes[i].dims);
    }
    free(po->shapes);
    po->shapes = NULL;
    po->n_shapes = 0;
}

double olla_cli_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

void olla_cli_human_bytes(int64_t b, char *buf, size_t n)
{
    olla_human_bytes(b, buf, n);
}
