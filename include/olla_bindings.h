/* olla-onnx: the concrete sizes a plan is made for. A model may leave
 * dimensions symbolic ("batch"); planning binds each such name to a value. */
#ifndef OLLA_BINDINGS_H
#define OLLA_BINDINGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A symbolic dimension bound to a value: --dim NAME=VALUE. */
typedef struct olla_dim_binding {
    const char *name;
    int64_t value;
} olla_dim_binding;

#ifdef __cplusplus
}
#endif
#endif
