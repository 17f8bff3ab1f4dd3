#!/usr/bin/python3
"""Writes a copy of a training step traced from PyTorch (bench/trace_train.py)
in which the ATen fallback nodes that ONNX Runtime's training WebAssembly
build has no kernel for are written with ONNX operators, so that the step
runs there (tests/ort/train_run.mjs):

    /usr/bin/python3 tests/ort/replace_aten.py in.onnx out.onnx

- empty.memory_format, empty_like, new_empty, new_empty_strided, zero: a
  Constant of the output's declared type and shape, all zeros (an empty
  tensor's values are never read; zero's are zeros);
- ones_like: Shape, then ConstantOfShape with a one of the output's type;
- nll_loss_forward (reduction none, mean or sum; no class weights):
  NegativeLogLikelihoodLoss, and the total weight as the count of targets
  other than ignore_index, as a float;
- nll_loss_backward: the one-hot rows of the targets times -grad_output
  (divided by the total weight for mean), zero on ignored targets;
- com.microsoft MaxPoolGrad and AveragePoolGrad: the same operators in the
  ONNX domain, where this build registers them.

Every other node, initializer, value_info and the node order stay as they
are (a replaced node's new nodes take its place in the listing). An ATen
operator not listed above is an error naming it (exit 1). The outputs are the
same tensors, but not bit for bit those of PyTorch: compare the copy with
olla-onnx's rewrite of the copy, not with the original.
"""

import argparse
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper

import numpy as np

ATEN = "org.pytorch.aten"


def np_type(elem):
    """The numpy type of an ONNX element type."""
    if hasattr(helper, "tensor_dtype_to_np_dtype"):
        return helper.tensor_dtype_to_np_dtype(elem)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem]


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def declared(types, name, what):
    t = types.get(name)
    if t is None or not t.type.tensor_type.HasField("shape"):
        raise ValueError(f"{what}: '{name}' has no declared type and shape (value_info); cannot replace it")
    tt = t.type.tensor_type
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            raise ValueError(f"{what}: '{name}' has a symbolic dimension; bind it before replacing")
        dims.append(d.dim_value)
    return tt.elem_type, dims


class Writer:
    """New nodes and initializers with names that do not clash."""

    def __init__(self, graph):
        self.used = {o for n in graph.node for o in n.output} | {i.name for i in graph.initializer} | \
            {i.name for i in graph.input}
        self.nodes = []

    def name(self, base):
        k = 0
        while f"{base}__{k}" in self.used:
            k += 1
        self.used.add(f"{base}__{k}")
        return f"{base}__{k}"

    def node(self, op, inputs, outputs=None, base="t", **attrs):
        outputs = outputs or [self.name(base)]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=self.name(f"{base}/{op}"), **attrs))
        return outputs[0]

    def const(self, array, base="c"):
        return self.node("Constant", [], base=base, value=numpy_helper.from_array(array, self.name(base)))


def replace(node, w, types):
    op = attr(node, "operator", b"").decode()
    base = node.name or node.output[0]
    if op in ("empty", "empty_like", "new_empty", "new_empty_strided", "zero"):
        elem, dims = declared(types, node.output[0], f"ATen {op}")
        zeros = np.zeros(dims, dtype=np_type(elem))
        w.node("Constant", [], [node.output[0]], base=base,
               value=numpy_helper.from_array(zeros, w.name(base)))
    elif op == "ones_like":
        elem, _ = declared(types, node.output[0], "ATen ones_like")
        one = numpy_helper.from_array(np.ones([1], dtype=np_type(elem)), w.name(base))
        shape = w.node("Shape", [node.input[0]], base=base)
        w.node("ConstantOfShape", [shape], [node.output[0]], base=base, value=one)
    elif op == "nll_loss_forward":
        if len(node.input) > 2 and node.input[2]:
            raise ValueError(f"ATen nll_loss_forward '{base}' has class weights; not replaced")
        reduction = {0: "none", 1: "mean", 2: "sum"}[attr(node, "reduction", 1)]
        ignore = attr(node, "ignore_index", -100)
        w.node("NegativeLogLikelihoodLoss", [node.input[0], node.input[1]], [node.output[0]], base=base,
               reduction=reduction, ignore_index=ignore)
        if len(node.output) > 1 and node.output[1]:
            kept = w.node("Not", [w.node("Equal", [node.input[1], w.const(np.array(ignore, np.int64), base)],
                                         base=base)], base=base)
            count = w.node("ReduceSum", [w.node("Cast", [kept], base=base, to=TensorProto.INT64)], base=base,
                           keepdims=0)
            w.node("Cast", [count], [node.output[1]], base=base, to=TensorProto.FLOAT)
    elif op == "nll_loss_backward":
        grad, logp, target = node.input[0], node.input[1], node.input[2]
        if len(node.input) > 3 and node.input[3]:
            raise ValueError(f"ATen nll_loss_backward '{base}' has class weights; not replaced")
        reduction = attr(node, "reduction", 1)
        ignore = attr(node, "ignore_index", -100)
        _, dims = declared(types, logp, "ATen nll_loss_backward")
        if len(dims) != 2:
            raise ValueError(f"ATen nll_loss_backward '{base}': input of rank {len(dims)}; only [N, C] is replaced")
        hot = w.node("OneHot", [target, w.const(np.array(dims[1], np.int64), base),
                                w.const(np.array([0.0, -1.0], np.float32), base)], base=base, axis=-1)
        kept = w.node("Not", [w.node("Equal", [target, w.const(np.array(ignore, np.int64), base)], base=base)],
                      base=base)
        mask = w.node("Unsqueeze", [w.node("Cast", [kept], base=base, to=TensorProto.FLOAT),
                                    w.const(np.array([1], np.int64), base)], base=base)
        scale = grad
        if reduction == 1:
            scale = w.node("Div", [grad, node.input[4]], base=base)
        w.node("Mul", [w.node("Mul", [hot, mask], base=base), scale], [node.output[0]], base=base)
    else:
        raise ValueError(f"ATen operator {op} ('{base}') has no replacement here")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    a = p.parse_args()
    try:
        m = onnx.load(a.input)
    except Exception as e:  # noqa: BLE001 - any load failure is the user's file
        print(f"replace_aten.py: {a.input}: not a readable ONNX model: {e}", file=sys.stderr)
        return 1
    g = m.graph
    types = {v.name: v for v in list(g.value_info) + list(g.input) + list(g.output)}
    w = Writer(g)
    nodes, replaced = [], 0
    try:
        for n in g.node:
            if n.domain == ATEN and n.op_type == "ATen":
                w.nodes = []
                replace(n, w, types)
                nodes.extend(w.nodes)
                replaced += 1
            elif n.domain == "com.microsoft" and n.op_type in ("MaxPoolGrad", "AveragePoolGrad"):
                n.domain = ""
                nodes.append(n)
                replaced += 1
            else:
                nodes.append(n)
    except ValueError as e:
        print(f"replace_aten.py: {a.input}: {e}", file=sys.stderr)
        return 1
    del g.node[:]
    g.node.extend(nodes)
    if not any(n.domain == ATEN for n in g.node):
        kept = [o for o in m.opset_import if o.domain != ATEN]
        del m.opset_import[:]
        m.opset_import.extend(kept)
    onnx.save(m, a.output)
    print(f"replace_aten.py: {a.output}: {replaced} nodes replaced, {len(g.node)} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
