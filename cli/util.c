/* olla-onnx: small helpers of the command line: strict number parsing for
 * option values, and singular or plural words for messages. */
#include <errno.h>
#include <stdlib.h>

#include "cli/cli.h"

int olla_cli_parse_i64(const char *s, long long *out)
{
    if (!s || !*s)
        return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end)
        return 0;
    *out = v;
    return 1;
}

int olla_cli_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || !end || *end || v != v)
        return 0;
    *out = v;
    return 1;
}

const char *olla_cli_plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}
