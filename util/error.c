/* olla-onnx: the error record every fallible function fills, and the stop
 * request of util/olla_clock.h. */
#include "olla_error.h"

#include <stdarg.h>
#include <signal.h>
#include <stdio.h>

#include "util/olla_clock.h"

volatile sig_atomic_t olla_stop_requested;

olla_status olla_error_set(olla_error *err, olla_status code, const char *fmt, ...)
{
    if (!err || err->code != OLLA_OK)
        return err ? err->code : code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    /* names from a model may hold newlines or terminal escapes: the message
     * stays one plain line */
    for (char *p = err->message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return code;
}

void olla_error_clear(olla_error *err)
{
    if (!err)
        return;
    err->code = OLLA_OK;
    err->message[0] = '\0';
}
