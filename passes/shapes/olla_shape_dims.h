/* olla-onnx: reading a 1-D integer input of a shape rule as dimensions
 * (Resize sizes, target shapes...), keeping symbolic elements. */
#ifndef OLLA_SHAPE_DIMS_H
#define OLLA_SHAPE_DIMS_H

#include "passes/shapes/olla_shape_rules.h"

/* Reads input i, a 1-D (or scalar) integer tensor, into out[0..n): known
 * elements >= 0 as sizes, symbolic elements (from Shape of a symbolic
 * tensor) as names, anything else unknown. Returns n, or -1 when the number
 * of elements is not known or exceeds max. *all_known (may be NULL) is set to
 * 1 when every element is a known size. */
int64_t olla_shape_in_dims(olla_shape_ctx *c, int i, olla_dim *out, int64_t max, int *all_known);

#endif
