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

/* A graph input's shape given for planning: --input-shape NAME=D1,D2,...
 * dims[i] >= 0 is a size, -1 unknown. It replaces the declared shape; the
 * declared element type is kept. */
typedef struct olla_input_shape {
    const char *name;
    int rank;
    const int64_t *dims; /* rank entries */
} olla_input_shape;

#ifdef __cplusplus
}
#endif
#endif
