/* olla-onnx: checks shared by the fuzz targets (included by each). */
#ifndef OLLA_FUZZ_COMMON_H
#define OLLA_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/olla_fuzz.h"

static void olla_fuzz_fail(const char *what, const char *why, const olla_error *err)
{
    fprintf(stderr, "olla fuzz: %s: %s (code %d, message \"%s\")\n", what, why, err ? (int)err->code : 0,
            err ? err->message : "");
    abort();
}

static void olla_fuzz_status(olla_status st, const olla_error *err, const char *what)
{
    if (st == OLLA_OK)
        return;
    if (st != OLLA_ERR_INPUT && st != OLLA_ERR_INTERNAL)
        olla_fuzz_fail(what, "unexpected status", err);
    if (err->code != st)
        olla_fuzz_fail(what, "the status differs from the recorded error", err);
    if (err->message[0] == '\0')
        olla_fuzz_fail(what, "a failure without a message", err);
    if (strchr(err->message, '\n'))
        olla_fuzz_fail(what, "a message of more than one line", err);
    if (st == OLLA_ERR_INTERNAL && !strstr(err->message, "out of memory") && !strstr(err->message, "too large"))
        olla_fuzz_fail(what, "an internal error on input bytes", err);
}

#endif
