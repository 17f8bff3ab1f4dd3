/* olla-onnx: error reporting shared by every stage.
 * Every fallible function takes an olla_error* and returns an olla_status.
 * The message is one line that names the problem and where it is.
 * The library prints nothing: its diagnostics go to a log callback the
 * host installs (olla_options.log), which prints, keeps or drops them. */
#ifndef OLLA_ERROR_H
#define OLLA_ERROR_H

/* Marks the public API: the only symbols a shared object built from the
 * library exports (the library is compiled with -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define OLLA_API __attribute__((visibility("default")))
#else
#define OLLA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Values double as the command's exit codes. */
typedef enum olla_status {
    OLLA_OK = 0,
    OLLA_ERR_INPUT = 1,    /* the model or file given is bad */
    OLLA_ERR_USAGE = 2,    /* the command line is wrong */
    OLLA_ERR_INTERNAL = 3  /* a bug, out of memory, or an I/O failure on our side */
} olla_status;

typedef struct olla_error {
    olla_status code;
    char message[1024];
} olla_error;

/* Sets code and message (printf-style) unless an error is already recorded,
 * so the first, most specific failure wins. Returns code. */
OLLA_API olla_status olla_error_set(olla_error *err, olla_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
OLLA_API void olla_error_clear(olla_error *err);

/* How much a diagnostic matters. olla_options.verbosity delivers the levels
 * up to its value: 0 none, 1 warnings, 2 details too. */
typedef enum olla_log_level {
    OLLA_LOG_WARNING = 1, /* something failed or was skipped and the plan is made another way */
    OLLA_LOG_DETAIL = 2   /* the solvers' progress, a line a stage (what `olla-onnx -v` prints) */
} olla_log_level;

/* Receives one diagnostic: message is one line without its newline, valid
 * during the call only. It is called from the thread that called the
 * library; the lines of the ILP solvers come from the child process they run
 * in (a fork of the caller), so a callback that only writes, as to stderr,
 * works there too, while one that keeps state sees none of theirs. */
typedef void (*olla_log_fn)(void *ctx, olla_log_level level, const char *message);

#ifdef __cplusplus
}
#endif
#endif
