/* olla-onnx: loading and writing ONNX model files (protobuf-c). */
#ifndef OLLA_MODEL_H
#define OLLA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"
#include "onnx.pb-c.h"

typedef struct olla_model {
    Onnx__ModelProto *proto; /* owned; unknown fields kept by protobuf-c */
    char *path;              /* as given, or "<memory>" */
    char *dir;               /* folder external data is relative to */
} olla_model;

/* Reads and validates a model file: protobuf well-formed, a graph present,
 * external data references safe and present (never read). */
olla_status olla_model_load(const char *path, olla_model **out, olla_error *err);
/* Same from bytes in memory; dir is the folder for external data (may be NULL:
 * then any external reference is an error). */
olla_status olla_model_load_buffer(const uint8_t *data, size_t len, const char *name, const char *dir,
                                   olla_model **out, olla_error *err);
void olla_model_free(olla_model *m);

/* Opset version imported for a domain ("" or "ai.onnx" = default domain);
 * 0 when the domain is not imported. */
int64_t olla_model_opset(const Onnx__ModelProto *m, const char *domain);

#endif
