/* olla-onnx: tensors whose data lives in external files. */
#ifndef OLLA_EXTERNAL_H
#define OLLA_EXTERNAL_H

#include "onnx/olla_model.h"

/* Calls fn for every TensorProto stored externally, anywhere in the model
 * (initializers, sparse initializers, Constant attributes, subgraphs,
 * training_info, functions). Stops at the first non-OLLA_OK return. */
typedef olla_status (*olla_external_fn)(const Onnx__TensorProto *t, const char *location, void *ctx);
olla_status olla_external_foreach(const Onnx__ModelProto *m, olla_external_fn fn, void *ctx);

/* Checks every external reference: a relative path that stays inside the
 * model's folder, a regular file that exists, and offset + length within it. */
olla_status olla_external_check(const olla_model *m, olla_error *err);

/* Makes the external data of a model loaded from src_dir available next to a
 * model written in dst_dir, under the same relative locations: a hard link
 * when possible, else a streamed copy. Nothing when both are the same folder. */
olla_status olla_external_mirror(const olla_model *m, const char *dst_dir, olla_error *err);

/* Async-signal-safe: removes the temporary copy olla_external_mirror() is
 * writing, if any (the pipeline's olla_write_abandon() calls it). */
void olla_external_abandon(void);

#endif
