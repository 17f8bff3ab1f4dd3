/* olla-onnx: the one way the library says something (util/olla_log.h). */
#include "util/olla_log.h"

#include <stdarg.h>
#include <stdio.h>

int olla_log_wants(const olla_logger *lg, int level)
{
    return lg && lg->fn && level <= lg->level;
}

void olla_log(const olla_logger *lg, olla_log_level level, const char *fmt, ...)
{
    if (!olla_log_wants(lg, (int)level))
        return;
    char line[2048]; /* an error message (1024) and the words around it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    lg->fn(lg->ctx, level, line);
}
