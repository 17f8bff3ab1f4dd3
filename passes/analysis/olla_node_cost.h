/* olla-onnx: what running a node once costs, estimated from its shapes, to
 * weigh one recomputation against another.
 *
 * Floating-point operations (a multiply and an add count two) for the
 * operators whose work is not proportional to their output: Conv,
 * ConvTranspose, MatMul and its fused forms, Gemm, attention, ATen baddbmm,
 * and the convolution gradient (twice a convolution: one for the input's
 * gradient, one for the weights'). Every other operator costs the number of
 * elements it writes. An operator whose sizes are unknown costs 1. */
#ifndef OLLA_NODE_COST_H
#define OLLA_NODE_COST_H

#include "onnx/olla_graph.h"

/* The estimated cost of op (>= 1). */
double olla_node_cost(const olla_graph *g, int op);

#endif
