/* olla-onnx: the types a model declares for itself (graph inputs and
 * outputs, value_info, initializers), with symbolic dimensions bound. */
#ifndef OLLA_DECLARED_H
#define OLLA_DECLARED_H

#include "onnx/olla_graph.h"

typedef struct olla_declared_types olla_declared_types;

olla_status olla_declared_types_build(const Onnx__ModelProto *m, const olla_dim_binding *dims, int n_dims,
                                      olla_declared_types **out, olla_error *err);
void olla_declared_types_free(olla_declared_types *d);
/* A type source for olla_graph_build. */
olla_type_source olla_declared_types_source(olla_declared_types *d);

#endif
