/* olla-onnx: structural check of a ModelProto's wire format (see wire_scan.c). */
#ifndef OLLA_WIRE_H
#define OLLA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "olla_error.h"

/* Deepest If/Loop/Scan nesting accepted. */
#define OLLA_MAX_GRAPH_DEPTH 64

olla_status olla_wire_scan_model(const uint8_t *data, size_t len, const char *file, int max_graph_depth,
                                 olla_error *err);

#endif
