/* olla-onnx: which operators may run a second time. Recomputing an
 * activation copies its producer into the graph; the copy must give
 * bit-identical outputs and change nothing else, so only operators known to
 * be deterministic functions of their inputs, with no side effect, qualify.
 * The rule is default deny: an operator that is not in the table below is
 * never copied.
 *
 * Out, whatever their inputs: anything random (Dropout and its fused forms,
 * RandomNormal/Uniform(Like), Bernoulli, Multinomial, ATen bernoulli,
 * native_dropout and the rand family), ATen empty/empty_like (their bytes
 * are whatever the allocator held), optimizers and gradient accumulators
 * (AdamOptimizer, AdamWOptimizer, SGDOptimizer, Lamb, InPlaceAccumulator,
 * ZeroGradient, clipping), control flow (If, Loop, Scan: a node holding a
 * subgraph), sequences and optionals, events and communication, batch
 * normalization in training mode (BatchNormInternal here; a
 * BatchNormalization with training_mode set or running statistics among its
 * outputs is refused where the node is seen, pipeline/remat_stage.c). */
#ifndef OLLA_RECOMPUTE_H
#define OLLA_RECOMPUTE_H

/* 1 when a node of this operator is a deterministic, side-effect-free
 * function of its inputs and attributes. domain "" or "ai.onnx" is ONNX's;
 * aten_operator is the `operator` attribute of an org.pytorch.aten ATen
 * node (NULL otherwise). */
int olla_op_recomputable(const char *domain, const char *op_type, const char *aten_operator);

/* How many leading outputs of an operator are required: a copy may leave
 * the outputs from this position on unnamed (""), as the schema makes them
 * optional (MaxPool's Indices, BatchNormalization's running statistics,
 * LayerNormalization's Mean and InvStdDev...). n_outputs when none is. */
int olla_op_required_outputs(const char *domain, const char *op_type, int n_outputs);

#endif
