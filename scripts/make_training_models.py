#!/usr/bin/python3
"""Makes training steps (forward, loss, backward, update) that ONNX Runtime's
training WebAssembly build runs (tests/ort/train_run.mjs): an MLP, a CNN and a
transformer, written with ONNX and com.microsoft operators only.

    /usr/bin/python3 scripts/make_training_models.py OUT_DIR
        [--kinds mlp,cnn,transformer] [--depth N] [--width N] [--batch N]
        [--symbolic-batch] [--update sgd|accumulate] [--expose-grads]
        [--loss ce|mse] [--seq N] [--heads N] [--image N] [--classes N]

writes OUT_DIR/<kind>.onnx and OUT_DIR/<kind>.json (the configuration, the
parameters and the sizes, read by tests/ort/check_training_grads.py) for each
kind and prints one line per model. Each step is built as an exporter builds
one: the forward pass, then the loss, then the gradient of every operation in
reverse order (the gradient operators ONNX Runtime's own gradient builder
uses: ReluGrad, GeluGrad, SoftmaxGrad_13, LayerNormalizationGrad,
BatchNormalizationGrad, ConvGrad, MaxPoolGrad, SoftmaxCrossEntropyLossGrad;
MatMul and Gemm for the products; ReduceSum for the biases), then the update:

- sgd (default): every parameter p gives an output `p.updated` = p - lr * grad;
- accumulate: as ONNX Runtime's training artifacts, InPlaceAccumulatorV2 adds
  each gradient into the input `p_grad.accumulation.buffer` (or overwrites it
  when the input `lazy_reset_grad` is true); its flag is the output
  `p_grad.accumulation.out` and the buffer the output
  `p_grad.accumulation.buffer.out` (ONNX Runtime's web API returns a graph
  output only).

--expose-grads also makes every gradient an output (`p_grad`). Batch
normalization also outputs its updated running statistics. Every tensor has
a value_info (element type and shape); with --symbolic-batch the batch is the
dimension `batch` (products of it are `batch*K`), to be bound when run.

Parameters are graph inputs (no weights stored): a run feeds them. The
weights of every product are scaled in the graph by 1/sqrt(fan_in), so that
parameters uniform in [-1, 1) (what the harness feeds) keep activations of
order one at any depth and width.

Models: `mlp` is x[b,width] -> depth x (linear, Relu) -> linear -> loss (mse
against a float target by default, ce with --loss ce); `cnn` is x[b,3,image,
image] -> depth x (Conv 3x3, BatchNormalization in training mode, Relu, and a
MaxPool 2x2 after every second block, which doubles the channels) ->
ReduceMean over the image -> linear -> SoftmaxCrossEntropyLoss; `transformer`
is x[b,seq,width] -> linear -> depth x pre-norm blocks (LayerNormalization, multi-head
causal attention with Softmax, residual, LayerNormalization, MLP with Gelu,
residual) -> LayerNormalization -> linear to classes per position ->
SoftmaxCrossEntropyLoss against labels[b,seq]. `overhead` is no training
step: y = Neg(x[b,width]), whose run measures the runtime's fixed overhead.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
MS = "com.microsoft"
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL
ELEM_BYTES = {FLOAT: 4, INT64: 8, BOOL: 1}
LEARNING_RATE = 0.01
BN_EPSILON = 1e-5
BN_MOMENTUM = 0.9
LN_EPSILON = 1e-5


class Dim:
    """A dimension: k times the batch (batch=True) or the constant k."""

    def __init__(self, k, batch=False):
        self.k, self.batch = int(k), batch

    def value(self, batch):
        return self.k * batch if self.batch else self.k

    def proto(self, step):
        if not self.batch:
            return self.k
        if not step.symbolic:
            return self.k * step.batch
        return "batch" if self.k == 1 else f"batch*{self.k}"


def dims(*ds):
    return [d if isinstance(d, Dim) else Dim(d) for d in ds]


class Step:
    """A training step under construction: nodes, value_info, the tape of
    gradient makers, the parameters."""

    def __init__(self, batch, symbolic):
        self.batch, self.symbolic = batch, symbolic
        self.nodes, self.inputs, self.outputs, self.inits = [], [], [], []
        self.shapes = {}  # name -> (elem_type, [Dim])
        self.tape = []  # (output names, maker(grads of the outputs))
        self.params = []  # parameter names, in order
        self.grads = {}  # tensor name -> name of its gradient
        self.names = set()
        self.reserved = set()  # names only an exact request may take
        self.counter = 0

    # -- names and tensors
    def fresh(self, base, exact=False):
        if exact:
            if base in self.names:
                sys.exit(f"make_training_models.py: internal error: the name '{base}' is taken")
            self.names.add(base)
            return base
        name = base
        while name in self.names or name in self.reserved:
            self.counter += 1
            name = f"{base}_{self.counter}"
        self.names.add(name)
        return name

    def declare(self, name, elem, shape):
        self.shapes[name] = (elem, shape)
        return name

    def shape(self, name):
        return self.shapes[name][1]

    def info(self, name):
        elem, shape = self.shapes[name]
        return helper.make_tensor_value_info(name, elem, [d.proto(self) for d in shape])

    def input(self, name, elem, shape, param=False):
        self.names.add(name)
        self.declare(name, elem, shape)
        self.inputs.append(name)
        if param:
            self.params.append(name)
            self.reserved.add(f"{name}_grad")  # the exposed gradient's name
        return name

    def const(self, base, array):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        elem = {np.dtype(np.float32): FLOAT, np.dtype(np.int64): INT64}[np.asarray(array).dtype]
        self.declare(name, elem, dims(*np.asarray(array).shape))
        return name

    def node(self, op, inputs, outs, name, domain="", **attrs):
        """outs: [(base name, elem, shape[, exact])] or None for an unused
        optional output (''). A name is made unique unless exact is true.
        Returns the output names."""
        names = []
        for o in outs:
            if o is None:
                names.append("")
                continue
            base, elem, shape = o[:3]
            exact = len(o) > 3 and o[3]
            names.append(self.declare(self.fresh(base, exact), elem, shape))
        self.nodes.append(helper.make_node(op, inputs, names, name=self.fresh(name), domain=domain, **attrs))
        return names

    def record(self, outputs, maker):
        self.tape.append((outputs, maker))

    # -- gradients
    def add_grad(self, x, g):
        if x in self.inputs and x not in self.params:
            return  # data and targets take no gradient
        if x not in self.grads:
            self.grads[x] = g
            return
        prev = self.grads[x]
        (s,) = self.node("Add", [prev, g], [(f"{x}_grad_sum", FLOAT, self.shape(x))], f"{x}_grad_sum")
        self.grads[x] = s

    def backward(self, loss):
        self.grads[loss] = self.const("loss_grad", np.float32(1.0))
        for outputs, maker in reversed(self.tape):
            gs = [self.grads.get(o) for o in outputs]
            if any(g is not None for g in gs):
                maker(gs)

    # -- the model
    def model(self, doc):
        graph = helper.make_graph(
            self.nodes, "training_step",
            [self.info(n) for n in self.inputs],
            [self.info(n) for n in self.outputs],
            self.inits,
            value_info=[self.info(n) for n in self.value_names()])
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
            producer_name="olla-onnx make_training_models.py",
            doc_string=doc)
        model.ir_version = IR_VERSION
        return model

    def value_names(self):
        skip = set(self.inputs) | set(self.outputs) | {t.name for t in self.inits}
        out = []
        for n in self.nodes:
            out.extend(o for o in n.output if o and o not in skip)
        return out


# ---------------------------------------------------------------- operations
# Each takes the step and names, emits the forward nodes, records the maker
# of their gradients and returns the output name(s).


def linear(s, x, fan_in, fan_out, name):
    """x[..., fan_in] @ (W * 1/sqrt(fan_in)) + b."""
    w = s.input(f"{name}.weight", FLOAT, dims(fan_in, fan_out), param=True)
    b = s.input(f"{name}.bias", FLOAT, dims(fan_out), param=True)
    c = s.const(f"{name}.scale", np.float32(1.0 / math.sqrt(fan_in)))
    (ws,) = s.node("Mul", [w, c], [(f"{name}.scaled_weight", FLOAT, dims(fan_in, fan_out))], f"{name}/scale")
    xs = s.shape(x)
    out_shape = xs[:-1] + dims(fan_out)
    (m,) = s.node("MatMul", [x, ws], [(f"{name}.matmul", FLOAT, out_shape)], f"{name}/matmul")
    (y,) = s.node("Add", [m, b], [(f"{name}.out", FLOAT, out_shape)], f"{name}/bias")

    def grad(gs):
        (gy,) = gs
        rows = Dim(math.prod(d.k for d in xs[:-1]), any(d.batch for d in xs[:-1]))
        red = list(range(len(xs) - 1))
        (gb,) = s.node("ReduceSum", [gy, s.const(f"{name}.bias_axes", np.array(red, np.int64))],
                       [(f"{name}.bias_grad", FLOAT, dims(fan_out))], f"{name}/bias_grad", keepdims=0)
        s.add_grad(b, gb)
        if len(xs) > 2:
            flat_x = s.node("Reshape", [x, s.const(f"{name}.x2d", np.array([-1, fan_in], np.int64))],
                            [(f"{name}.x2d", FLOAT, [rows] + dims(fan_in))], f"{name}/x2d")[0]
            flat_g = s.node("Reshape", [gy, s.const(f"{name}.g2d", np.array([-1, fan_out], np.int64))],
                            [(f"{name}.g2d", FLOAT, [rows] + dims(fan_out))], f"{name}/g2d")[0]
        else:
            flat_x, flat_g = x, gy
        (gws,) = s.node("Gemm", [flat_x, flat_g], [(f"{name}.scaled_weight_grad", FLOAT, dims(fan_in, fan_out))],
                        f"{name}/weight_grad", transA=1)
        (gw,) = s.node("Mul", [gws, c], [(f"{name}.weight_grad", FLOAT, dims(fan_in, fan_out))], f"{name}/weight_grad_scale")
        s.add_grad(w, gw)
        if x in s.inputs:  # no gradient for the data
            return
        (wt,) = s.node("Transpose", [ws], [(f"{name}.scaled_weight_t", FLOAT, dims(fan_out, fan_in))],
                       f"{name}/weight_t", perm=[1, 0])
        (gx,) = s.node("MatMul", [gy, wt], [(f"{name}.in_grad", FLOAT, xs)], f"{name}/in_grad")
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def unary(s, op, grad_op, x, name, domain="", grad_reads_output=False):
    """Relu/ReluGrad or Gelu/GeluGrad: the gradient reads dY and X, or Y
    (ReluGrad: Y > 0 exactly where X > 0; ONNX Runtime's gradient builder
    feeds it the output, so the input need not be kept)."""
    (y,) = s.node(op, [x], [(f"{name}.out", FLOAT, s.shape(x))], name, domain=domain)

    def grad(gs):
        (gx,) = s.node(grad_op, [gs[0], y if grad_reads_output else x], [(f"{name}.in_grad", FLOAT, s.shape(x))],
                       f"{name}_grad", domain=MS)
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def add(s, a, b, name):
    """Residual sum of two tensors of the same shape."""
    (y,) = s.node("Add", [a, b], [(f"{name}.out", FLOAT, s.shape(a))], name)

    def grad(gs):
        s.add_grad(a, gs[0])
        s.add_grad(b, gs[0])

    s.record([y], grad)
    return y


def scale(s, x, factor, name):
    c = s.const(f"{name}.factor", np.float32(factor))
    (y,) = s.node("Mul", [x, c], [(f"{name}.out", FLOAT, s.shape(x))], name)

    def grad(gs):
        (gx,) = s.node("Mul", [gs[0], c], [(f"{name}.in_grad", FLOAT, s.shape(x))], f"{name}_grad")
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def add_const(s, x, array, name):
    """x + a constant (the causal mask); the gradient passes through."""
    c = s.const(f"{name}.const", array)
    (y,) = s.node("Add", [x, c], [(f"{name}.out", FLOAT, s.shape(x))], name)
    s.record([y], lambda gs: s.add_grad(x, gs[0]))
    return y


def reshape(s, x, target, shape, name):
    """Reshape to `target` (ONNX Reshape's shape: 0 copies, -1 infers)."""
    c = s.const(f"{name}.shape", np.array(target, np.int64))
    (y,) = s.node("Reshape", [x, c], [(f"{name}.out", FLOAT, shape)], name)
    xs = s.shape(x)

    def grad(gs):
        back = [-1 if d.batch else d.k for d in xs]  # at most one dimension holds the batch
        c2 = s.const(f"{name}.back_shape", np.array(back, np.int64))
        (gx,) = s.node("Reshape", [gs[0], c2], [(f"{name}.in_grad", FLOAT, xs)], f"{name}_grad")
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def transpose(s, x, perm, name):
    xs = s.shape(x)
    (y,) = s.node("Transpose", [x], [(f"{name}.out", FLOAT, [xs[p] for p in perm])], name, perm=perm)
    inverse = [perm.index(i) for i in range(len(perm))]

    def grad(gs):
        (gx,) = s.node("Transpose", [gs[0]], [(f"{name}.in_grad", FLOAT, xs)], f"{name}_grad", perm=inverse)
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def batched_matmul(s, a, b, name):
    """a[..., m, k] @ b[..., k, n], both activations of the same batch dims."""
    sa, sb = s.shape(a), s.shape(b)
    out = sa[:-1] + sb[-1:]
    (y,) = s.node("MatMul", [a, b], [(f"{name}.out", FLOAT, out)], name)
    swap = list(range(len(sa) - 2)) + [len(sa) - 1, len(sa) - 2]

    def grad(gs):
        (gy,) = gs
        (bt,) = s.node("Transpose", [b], [(f"{name}.b_t", FLOAT, sb[:-2] + [sb[-1], sb[-2]])], f"{name}/b_t", perm=swap)
        (ga,) = s.node("MatMul", [gy, bt], [(f"{name}.a_grad", FLOAT, sa)], f"{name}/a_grad")
        s.add_grad(a, ga)
        (at,) = s.node("Transpose", [a], [(f"{name}.a_t", FLOAT, sa[:-2] + [sa[-1], sa[-2]])], f"{name}/a_t", perm=swap)
        (gb,) = s.node("MatMul", [at, gy], [(f"{name}.b_grad", FLOAT, sb)], f"{name}/b_grad")
        s.add_grad(b, gb)

    s.record([y], grad)
    return y


def softmax(s, x, name):
    (y,) = s.node("Softmax", [x], [(f"{name}.out", FLOAT, s.shape(x))], name, axis=-1)

    def grad(gs):
        (gx,) = s.node("SoftmaxGrad_13", [gs[0], y], [(f"{name}.in_grad", FLOAT, s.shape(x))], f"{name}_grad",
                       domain=MS, axis=-1)
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def layer_norm(s, x, width, name):
    xs = s.shape(x)
    gamma = s.input(f"{name}.weight", FLOAT, dims(width), param=True)
    beta = s.input(f"{name}.bias", FLOAT, dims(width), param=True)
    stat = xs[:-1] + dims(1)
    y, mean, inv_std = s.node("LayerNormalization", [x, gamma, beta],
                              [(f"{name}.out", FLOAT, xs), (f"{name}.mean", FLOAT, stat),
                               (f"{name}.inv_std", FLOAT, stat)], name, axis=-1, epsilon=LN_EPSILON)

    def grad(gs):
        gx, gg, gb = s.node("LayerNormalizationGrad", [gs[0], x, gamma, mean, inv_std],
                            [(f"{name}.in_grad", FLOAT, xs), (f"{name}.weight_grad", FLOAT, dims(width)),
                             (f"{name}.bias_grad", FLOAT, dims(width))], f"{name}_grad", domain=MS,
                            axis=-1, epsilon=LN_EPSILON)
        s.add_grad(x, gx)
        s.add_grad(gamma, gg)
        s.add_grad(beta, gb)

    s.record([y], grad)
    return y


def conv(s, x, cin, cout, name):
    """3x3 convolution, stride 1, padding 1, with bias."""
    xs = s.shape(x)
    w = s.input(f"{name}.weight", FLOAT, dims(cout, cin, 3, 3), param=True)
    b = s.input(f"{name}.bias", FLOAT, dims(cout), param=True)
    attrs = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    out = [xs[0], Dim(cout), xs[2], xs[3]]
    (y,) = s.node("Conv", [x, w, b], [(f"{name}.out", FLOAT, out)], name, **attrs)

    def grad(gs):
        need_x = x not in s.inputs  # no gradient for the data
        gx, gw, gb = s.node("ConvGrad", [gs[0], x, w],
                            [(f"{name}.in_grad", FLOAT, xs) if need_x else None,
                             (f"{name}.weight_grad", FLOAT, dims(cout, cin, 3, 3)),
                             (f"{name}.bias_grad", FLOAT, dims(cout))], f"{name}_grad", domain=MS, **attrs)
        if need_x:
            s.add_grad(x, gx)
        s.add_grad(w, gw)
        s.add_grad(b, gb)

    s.record([y], grad)
    return y


def batch_norm(s, x, channels, name):
    """Batch normalization in training mode (batch statistics), as ONNX
    Runtime's training graphs write it: BatchNormInternal, which also returns
    the batch mean and inverse standard deviation for BatchNormalizationGrad.
    The updated running statistics are outputs of the step."""
    xs = s.shape(x)
    gamma = s.input(f"{name}.weight", FLOAT, dims(channels), param=True)
    beta = s.input(f"{name}.bias", FLOAT, dims(channels), param=True)
    rmean = s.input(f"{name}.running_mean", FLOAT, dims(channels))
    rvar = s.input(f"{name}.running_var", FLOAT, dims(channels))
    c = dims(channels)
    y, new_mean, new_var, saved_mean, saved_inv_std = s.node(
        "BatchNormInternal", [x, gamma, beta, rmean, rvar],
        [(f"{name}.out", FLOAT, xs), (f"{name}.running_mean.updated", FLOAT, c, True),
         (f"{name}.running_var.updated", FLOAT, c, True), (f"{name}.saved_mean", FLOAT, c),
         (f"{name}.saved_inv_std", FLOAT, c)], name, domain=MS,
        epsilon=BN_EPSILON, momentum=BN_MOMENTUM, training_mode=1)
    s.outputs.extend([new_mean, new_var])

    def grad(gs):
        gx, gg, gb = s.node("BatchNormalizationGrad", [gs[0], x, gamma, saved_mean, saved_inv_std],
                            [(f"{name}.in_grad", FLOAT, xs), (f"{name}.weight_grad", FLOAT, c),
                             (f"{name}.bias_grad", FLOAT, c)], f"{name}_grad", domain=MS, epsilon=BN_EPSILON)
        s.add_grad(x, gx)
        s.add_grad(gamma, gg)
        s.add_grad(beta, gb)

    s.record([y], grad)
    return y


def max_pool(s, x, name):
    """2x2 max pooling, stride 2; MaxPoolGrad (ONNX domain in this build)
    scatters the gradient back through the indices."""
    xs = s.shape(x)
    out = xs[:2] + [Dim(xs[2].k // 2), Dim(xs[3].k // 2)]
    y, idx = s.node("MaxPool", [x], [(f"{name}.out", FLOAT, out), (f"{name}.indices", INT64, out)], name,
                    kernel_shape=[2, 2], strides=[2, 2])

    def grad(gs):
        (gx,) = s.node("MaxPoolGrad", [gs[0], idx], [(f"{name}.in_grad", FLOAT, xs)], f"{name}_grad")
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def spatial_mean(s, x, name):
    """ReduceMean over the image: [b, c, h, w] -> [b, c]."""
    xs = s.shape(x)
    (y,) = s.node("ReduceMean", [x], [(f"{name}.out", FLOAT, xs[:2])], name, axes=[2, 3], keepdims=0)
    area = xs[2].k * xs[3].k

    def grad(gs):
        (u,) = s.node("Unsqueeze", [gs[0], s.const(f"{name}.axes", np.array([2, 3], np.int64))],
                      [(f"{name}.grad_4d", FLOAT, xs[:2] + dims(1, 1))], f"{name}_grad_4d")
        (m,) = s.node("Mul", [u, s.const(f"{name}.inv_area", np.float32(1.0 / area))],
                      [(f"{name}.grad_scaled", FLOAT, xs[:2] + dims(1, 1))], f"{name}_grad_scale")
        (shape,) = s.node("Shape", [x], [(f"{name}.in_shape", INT64, dims(4))], f"{name}_shape")
        (gx,) = s.node("Expand", [m, shape], [(f"{name}.in_grad", FLOAT, xs)], f"{name}_grad")
        s.add_grad(x, gx)

    s.record([y], grad)
    return y


def cross_entropy(s, logits, labels, name="loss"):
    """SoftmaxCrossEntropyLoss (mean over the rows) and its gradient."""
    ls = s.shape(logits)
    loss, log_prob = s.node("SoftmaxCrossEntropyLoss", [logits, labels],
                            [(name, FLOAT, [], True), (f"{name}.log_prob", FLOAT, ls)], name, reduction="mean")

    def grad(gs):
        (gl,) = s.node("SoftmaxCrossEntropyLossGrad", [gs[0], log_prob, labels],
                       [(f"{name}.logits_grad", FLOAT, ls)], f"{name}_grad", domain=MS, reduction="mean")
        s.add_grad(logits, gl)

    s.record([loss], grad)
    return loss


def mse(s, y, target, name="loss"):
    """mean((y - target)^2) with ONNX operators; the element count is read at
    run time (Size), so a symbolic batch works."""
    ys = s.shape(y)
    (d,) = s.node("Sub", [y, target], [(f"{name}.diff", FLOAT, ys)], f"{name}/diff")
    (sq,) = s.node("Mul", [d, d], [(f"{name}.square", FLOAT, ys)], f"{name}/square")
    (loss,) = s.node("ReduceMean", [sq], [(name, FLOAT, [], True)], f"{name}/mean", keepdims=0)

    def grad(gs):
        (n,) = s.node("Size", [d], [(f"{name}.count", INT64, [])], f"{name}/count")
        (nf,) = s.node("Cast", [n], [(f"{name}.count_f", FLOAT, [])], f"{name}/count_f", to=FLOAT)
        (k,) = s.node("Div", [s.const(f"{name}.two", np.float32(2.0)), nf], [(f"{name}.factor", FLOAT, [])],
                      f"{name}/factor")
        (kg,) = s.node("Mul", [k, gs[0]], [(f"{name}.factor_grad", FLOAT, [])], f"{name}/factor_grad")
        (gy,) = s.node("Mul", [d, kg], [(f"{name}.in_grad", FLOAT, ys)], f"{name}/in_grad")
        s.add_grad(y, gy)

    s.record([loss], grad)
    return loss


# ---------------------------------------------------------------- models


def build_mlp(s, a):
    b = Dim(1, True)
    x = s.input("x", FLOAT, [b, Dim(a.width)])
    h = x
    for i in range(a.depth):
        h = unary(s, "Relu", "ReluGrad", linear(s, h, a.width, a.width, f"fc{i}"), f"relu{i}", grad_reads_output=True)
    y = linear(s, h, a.width, a.classes, "head")
    if a.loss == "ce":
        return cross_entropy(s, y, s.input("labels", INT64, [b]))
    return mse(s, y, s.input("target", FLOAT, [b, Dim(a.classes)]))


def build_cnn(s, a):
    b = Dim(1, True)
    x = s.input("x", FLOAT, [b, Dim(3), Dim(a.image), Dim(a.image)])
    h, channels, cin, size = x, a.width, 3, a.image
    for i in range(a.depth):
        h = conv(s, h, cin, channels, f"conv{i}")
        h = batch_norm(s, h, channels, f"bn{i}")
        h = unary(s, "Relu", "ReluGrad", h, f"relu{i}", grad_reads_output=True)
        cin = channels
        if i % 2 == 1 and size >= 2:
            h = max_pool(s, h, f"pool{i}")
            size //= 2
            if i + 1 < a.depth:
                channels *= 2
    h = spatial_mean(s, h, "gap")
    logits = linear(s, h, cin, a.classes, "head")
    labels = s.input("labels", INT64, [b])
    if a.loss == "mse":
        return mse(s, logits, s.input("target", FLOAT, [b, Dim(a.classes)]))
    return cross_entropy(s, logits, labels)


def build_transformer(s, a):
    b, seq, d, heads = Dim(1, True), a.seq, a.width, a.heads
    if d % heads:
        sys.exit(f"make_training_models.py: --width {d} is not a multiple of --heads {heads}")
    dh = d // heads
    x = s.input("x", FLOAT, [b, Dim(seq), Dim(d)])
    mask = np.triu(np.full((seq, seq), -1e9, np.float32), 1)
    h = linear(s, x, d, d, "embed")
    for i in range(a.depth):
        p = f"layer{i}"
        n1 = layer_norm(s, h, d, f"{p}.ln1")
        heads_of = {}
        for part in ("q", "k", "v"):
            t = linear(s, n1, d, d, f"{p}.attn.{part}")
            t = reshape(s, t, [0, 0, heads, dh], [b, Dim(seq), Dim(heads), Dim(dh)], f"{p}.attn.{part}_split")
            # k is laid out [b, heads, dh, seq] so that q @ k gives the scores
            perm = [0, 2, 3, 1] if part == "k" else [0, 2, 1, 3]
            heads_of[part] = transpose(s, t, perm, f"{p}.attn.{part}_heads")
        scores = batched_matmul(s, heads_of["q"], heads_of["k"], f"{p}.attn.scores")
        scores = scale(s, scores, 1.0 / math.sqrt(dh), f"{p}.attn.scale")
        scores = add_const(s, scores, mask, f"{p}.attn.mask")
        probs = softmax(s, scores, f"{p}.attn.softmax")
        ctx = batched_matmul(s, probs, heads_of["v"], f"{p}.attn.context")
        ctx = transpose(s, ctx, [0, 2, 1, 3], f"{p}.attn.merge_t")
        ctx = reshape(s, ctx, [0, 0, d], [b, Dim(seq), Dim(d)], f"{p}.attn.merge")
        h = add(s, h, linear(s, ctx, d, d, f"{p}.attn.out"), f"{p}.residual1")
        n2 = layer_norm(s, h, d, f"{p}.ln2")
        f = unary(s, "Gelu", "GeluGrad", linear(s, n2, d, 4 * d, f"{p}.mlp.fc1"), f"{p}.mlp.gelu", domain=MS)
        h = add(s, h, linear(s, f, 4 * d, d, f"{p}.mlp.fc2"), f"{p}.residual2")
    h = layer_norm(s, h, d, "ln_f")
    logits = linear(s, h, d, a.classes, "head")
    rows = Dim(seq, True)
    logits2 = reshape(s, logits, [-1, a.classes], [rows, Dim(a.classes)], "head.rows")
    labels = s.input("labels", INT64, [b, Dim(seq)])
    c = s.const("labels.rows", np.array([-1], np.int64))
    (labels2,) = s.node("Reshape", [labels, c], [("labels.flat", INT64, [rows])], "labels.flat")
    return cross_entropy(s, logits2, labels2)


def build_overhead(s, a):
    """Not a training step: y = Neg(x[batch, width]). What a run of it needs
    beyond its input and output is the runtime's fixed overhead."""
    x = s.input("x", FLOAT, [Dim(1, True), Dim(a.width)])
    (y,) = s.node("Neg", [x], [("y", FLOAT, s.shape(x), True)], "neg")
    return y


BUILDERS = {"mlp": build_mlp, "cnn": build_cnn, "transformer": build_transformer, "overhead": build_overhead}


def add_update(s, a):
    """The update of every parameter from its gradient."""
    missing = [p for p in s.params if p not in s.grads]
    if missing:
        sys.exit(f"make_training_models.py: internal error: no gradient for {missing}")
    lr = s.const("learning_rate", np.float32(LEARNING_RATE))
    if a.update == "accumulate":
        reset = s.input("lazy_reset_grad", BOOL, dims(1))
    for p in s.params:
        g = s.grads[p]
        if a.expose_grads:
            (g,) = s.node("Identity", [g], [(f"{p}_grad", FLOAT, s.shape(p), True)], f"{p}_grad_out")
            s.outputs.append(g)
        if a.update == "sgd":
            (step,) = s.node("Mul", [g, lr], [(f"{p}.step", FLOAT, s.shape(p))], f"{p}/sgd_step")
            (new,) = s.node("Sub", [p, step], [(f"{p}.updated", FLOAT, s.shape(p), True)], f"{p}/sgd_update")
            s.outputs.append(new)
        else:
            buf = s.input(f"{p}_grad.accumulation.buffer", FLOAT, s.shape(p))
            flag, out = s.node("InPlaceAccumulatorV2", [buf, g, reset],
                               [(f"{p}_grad.accumulation.out", BOOL, dims(1), True),
                                (f"{p}_grad.accumulation.buffer.out", FLOAT, s.shape(p), True)],
                               f"{p}/accumulate", domain=MS)
            s.outputs.extend([flag, out])


def check(model):
    """onnx.checker on a copy in which the gradient operators ONNX Runtime
    registers in the ONNX domain (MaxPoolGrad) are put under com.microsoft,
    which the checker does not know and lets pass."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for n in copy.graph.node:
        if n.domain == "" and n.op_type == "MaxPoolGrad":
            n.domain = MS
    onnx.checker.check_model(copy)


def tensor_bytes(s, name, batch):
    elem, shape = s.shapes[name]
    return ELEM_BYTES[elem] * math.prod(d.value(batch) for d in shape)


def make(kind, a):
    s = Step(a.batch, a.symbolic_batch)
    loss = BUILDERS[kind](s, a)
    s.outputs.insert(0, loss)
    if kind != "overhead":
        s.backward(loss)
        add_update(s, a)
    model = s.model(f"{kind} training step made by scripts/make_training_models.py")
    check(model)
    forward = set()
    for outputs, _ in s.tape:
        forward.update(outputs)
    info = {
        "kind": kind, "depth": a.depth, "width": a.width, "batch": a.batch, "symbolic_batch": a.symbolic_batch,
        "update": a.update, "expose_grads": a.expose_grads, "loss": a.loss, "seq": a.seq, "heads": a.heads,
        "image": a.image, "classes": a.classes, "learning_rate": LEARNING_RATE, "bn_epsilon": BN_EPSILON,
        "bn_momentum": BN_MOMENTUM, "ln_epsilon": LN_EPSILON, "params": s.params, "nodes": len(s.nodes),
        "param_bytes": sum(tensor_bytes(s, p, a.batch) for p in s.params),
        "input_bytes": sum(tensor_bytes(s, i, a.batch) for i in s.inputs),
        "forward_activation_bytes": sum(tensor_bytes(s, t, a.batch) for t in forward),
    }
    return model, info


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--kinds", default="mlp,cnn,transformer",
                   help="comma-separated: mlp, cnn, transformer; overhead (one Neg, not a training step)")
    p.add_argument("--depth", type=int, default=2, help="hidden layers / conv blocks / transformer blocks")
    p.add_argument("--width", type=int, default=32, help="hidden width / first channels / model width")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--symbolic-batch", action="store_true", help="the batch is the symbolic dimension 'batch'")
    p.add_argument("--update", choices=["sgd", "accumulate"], default="sgd")
    p.add_argument("--expose-grads", action="store_true", help="every parameter's gradient is also an output")
    p.add_argument("--loss", choices=["ce", "mse"], default=None, help="default: mse for mlp, ce for the others")
    p.add_argument("--seq", type=int, default=16, help="transformer sequence length")
    p.add_argument("--heads", type=int, default=4, help="transformer attention heads")
    p.add_argument("--image", type=int, default=16, help="cnn image side")
    p.add_argument("--classes", type=int, default=10)
    a = p.parse_args(argv)
    kinds = a.kinds.split(",")
    for k in kinds:
        if k not in BUILDERS:
            p.error(f"--kinds: unknown model '{k}'; choose from {', '.join(BUILDERS)}")
    for opt in ("depth", "width", "batch", "seq", "heads", "image", "classes"):
        if getattr(a, opt) < 1:
            p.error(f"--{opt} must be at least 1")
    if a.classes < 2:
        p.error("--classes must be at least 2")
    a.kinds = kinds
    return a


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    default_loss = a.loss
    for kind in a.kinds:
        a.loss = default_loss or ("mse" if kind == "mlp" else "ce")
        model, info = make(kind, a)
        path = os.path.join(a.out_dir, f"{kind}.onnx")
        onnx.save(model, path)
        with open(os.path.join(a.out_dir, f"{kind}.json"), "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        print(f"{path}: {info['nodes']} nodes, {len(info['params'])} parameters ({info['param_bytes']} bytes), "
              f"forward activations {info['forward_activation_bytes']} bytes at batch {a.batch}")


if __name__ == "__main__":
    main(sys.argv[1:])
