/* olla-onnx: lines built from whole pieces (util/olla_line.h). */
#include "util/olla_line.h"

#include <stdarg.h>
#include <stdio.h>

void olla_line_init(olla_line *l, char *buf, size_t size)
{
    l->buf = buf;
    l->size = size;
    l->len = 0;
    if (size > 0)
        buf[0] = '\0';
}

int olla_line_add(olla_line *l, size_t reserve, const char *fmt, ...)
{
    if (l->size == 0 || l->len >= l->size - 1)
        return 0;
    size_t room = l->size - l->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 + reserve > room) {
        l->buf[l->len] = '\0';
        return 0;
    }
    l->len += (size_t)n;
    return 1;
}

void olla_human_bytes(int64_t b, char *buf, size_t n)
{
    if (b >= 10LL * 1024 * 1024 * 1024)
        snprintf(buf, n, "%.1f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
    else if (b >= 10LL * 1024 * 1024)
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else if (b >= 10LL * 1024)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, n, "%lld B", (long long)b);
}

void olla_human_change(int64_t before, int64_t after, char *buf, size_t size)
{
    if (before == after) {
        snprintf(buf, size, "the same");
        return;
    }
    int64_t by = before > after ? before - after : after - before;
    const char *way = before > after ? "less" : "more";
    double pct = before > 0 ? 100.0 * (double)by / (double)before : 0.0;
    if (pct >= 0.05) {
        snprintf(buf, size, "%.1f%% %s", pct, way);
    } else {
        char b[32];
        olla_human_bytes(by, b, sizeof b);
        snprintf(buf, size, "%s %s", b, way);
    }
}

/* Where a saving from before to after falls: more, equal, less than would
 * print as 0.1%, or a percentage to print. */
enum { SAVING_MORE, SAVING_NONE, SAVING_TINY, SAVING_PCT };

static int saving_kind(int64_t before, int64_t after, double *pct)
{
    *pct = before > 0 ? 100.0 * (double)(before - after) / (double)before : 0.0;
    if (after > before)
        return *pct > -0.05 ? SAVING_MORE : SAVING_PCT;
    if (after == before)
        return SAVING_NONE;
    return *pct < 0.05 ? SAVING_TINY : SAVING_PCT;
}

void olla_human_saving(int64_t before, int64_t after, char *buf, size_t size)
{
    double pct;
    int kind = saving_kind(before, after, &pct);
    if (kind == SAVING_MORE)
        snprintf(buf, size, "none");
    else if (kind == SAVING_TINY)
        snprintf(buf, size, "<0.1%%");
    else
        snprintf(buf, size, "%.1f%%", pct);
}

void olla_human_headline(int64_t before, int64_t after, char *buf, size_t size)
{
    double pct;
    int kind = saving_kind(before, after, &pct);
    char b[32];
    olla_human_bytes(before > after ? before - after : after - before, b, sizeof b);
    if (after > before)
        snprintf(buf, size, "none (%s more)", b);
    else if (kind == SAVING_TINY)
        snprintf(buf, size, "%s (under 0.1%%)", b);
    else
        snprintf(buf, size, "%.1f%%", pct);
}
