/* olla-onnx: diagnostics without printing. A stage that has something to
 * say formats it with olla_log(); the line goes to the host's callback
 * (olla_options.log, include/olla_error.h) when its level is wanted, and
 * nowhere otherwise. */
#ifndef OLLA_LOG_H
#define OLLA_LOG_H

#include "olla_error.h"

/* Where a stage's diagnostics go. */
typedef struct olla_logger {
    olla_log_fn fn; /* NULL: every line is dropped */
    void *ctx;
    int level;      /* lines of this level or below are delivered (olla_options.verbosity);
                       OLLA_LOG_SOLVER_OUTPUT or more also lets CBC print its own log */
} olla_logger;

/* At this level the ILP solver (CBC) prints its own log on stdout: the one
 * output the library cannot route through the callback. */
#define OLLA_LOG_SOLVER_OUTPUT 3

/* 1 when lg (may be NULL) delivers lines of this level. */
int olla_log_wants(const olla_logger *lg, int level);
/* Formats one line (printf-style, no newline) and delivers it when wanted. */
void olla_log(const olla_logger *lg, olla_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
