/* olla-onnx: reading a --memory-limit as the command line and the library's
 * callers write it: bytes, a size with a decimal (K/M/G) or binary
 * (Ki/Mi/Gi) suffix, or a percentage of the peak planned without a limit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "olla.h"

static olla_status bad(olla_error *err, const char *text, const char *why)
{
    return olla_error_set(err, OLLA_ERR_USAGE, "--memory-limit %s: %s", text, why);
}

/* The multiplier of a size suffix, 0 when the suffix is not one. */
static double suffix_scale(const char *s)
{
    static const struct {
        const char *name;
        double scale;
    } units[] = {{"", 1.0},           {"K", 1e3},        {"M", 1e6},        {"G", 1e9},
                 {"Ki", 1024.0},      {"Mi", 1048576.0}, {"Gi", 1073741824.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(s, units[i].name) == 0)
            return units[i].scale;
    return 0.0;
}

olla_status olla_memory_limit_parse(const char *text, olla_memory_limit *out, olla_error *err)
{
    const char *what = "needs a size in bytes (with K, M, G, Ki, Mi or Gi) or a percentage such as 60%";
    out->bytes = 0;
    out->fraction = 0.0;
    if (!text || !*text)
        return bad(err, "''", what);
    if (isspace((unsigned char)text[0]) || text[0] == '+')
        return bad(err, text, what);
    if (text[0] == '-')
        return bad(err, text, "a limit must be positive");
    /* digits with at most one decimal point, then the suffix */
    size_t digits = 0, dots = 0, k = 0;
    for (; isdigit((unsigned char)text[k]) || text[k] == '.'; k++) {
        if (text[k] == '.')
            dots++;
        else
            digits++;
    }
    if (!digits || dots > 1)
        return bad(err, text, what);
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end != text + k || errno == ERANGE || !isfinite(v))
        return bad(err, text, what);
    if (strcmp(end, "%") == 0) {
        if (!(v > 0.0))
            return bad(err, text, "a percentage must be above 0");
        if (v > 100.0)
            return bad(err, text, "a percentage is at most 100 (a limit above the peak changes nothing)");
        out->fraction = v / 100.0;
        return OLLA_OK;
    }
    double scale = suffix_scale(end);
    if (scale == 0.0)
        return bad(err, text, what);
    if (scale == 1.0 && dots)
        return bad(err, text, "a size in bytes is a whole number");
    double bytes = floor(v * scale);
    if (!(bytes >= 1.0))
        return bad(err, text, "a limit must be at least 1 byte");
    if (bytes >= 9.2e18)
        return bad(err, text, "too large for 64 bits");
    out->bytes = (int64_t)bytes;
    return OLLA_OK;
}
