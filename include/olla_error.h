/* olla-onnx: error reporting shared by every stage.
 * Every fallible function takes an olla_error* and returns an olla_status.
 * The message is one line that names the problem and where it is. */
#ifndef OLLA_ERROR_H
#define OLLA_ERROR_H

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
olla_status olla_error_set(olla_error *err, olla_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void olla_error_clear(olla_error *err);

#ifdef __cplusplus
}
#endif
#endif
