#!/usr/bin/python3
"""Writes the small models that tests/cli/test_ort_harness.sh checks the
measurement tools with.

    /usr/bin/python3 tests/ort/make_test_models.py OUT_DIR

matmul_chain.onnx: x[batch, 64] -> h1[batch, 1024] -> h2[batch, 768]
    -> h3[batch, 512] -> y[batch, 2], four MatMuls with weights as
    initializers, float32. The intermediates have different sizes, so ONNX
    Runtime never shares a buffer between them; y is below the counter's 4 KiB
    threshold at batch <= 512. ORT frees a tensor after its last reader, so
    the bytes held peak at the second MatMul with h1 and h2 live:
    batch * (1024 + 768) * 4. Its first-run peak must be at least that and
    less than that plus a small slack; a counter that missed frees would see
    h1 + h2 + h3.
branches.onnx: three branches of unary and binary ops meeting in two graph
    outputs, listed so that ORT's executed order differs from graph.node, with
    one node left unnamed (ORT reports it as OpType_index).
Prints the facts the test needs as NAME=VALUE lines (sizes in bytes at the
batch given with --batch, default 256).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHAIN_WIDTHS = [64, 1024, 768, 512, 2]


def matmul_chain():
    rng = np.random.default_rng(7)
    inits, nodes = [], []
    names = ["x", "h1", "h2", "h3", "y"]
    for k in range(4):
        w = rng.uniform(-0.1, 0.1, size=(CHAIN_WIDTHS[k], CHAIN_WIDTHS[k + 1])).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{k + 1}"))
        nodes.append(helper.make_node("MatMul", [names[k], f"w{k + 1}"], [names[k + 1]], name=f"matmul{k + 1}"))
    graph = helper.make_graph(
        nodes, "matmul_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", CHAIN_WIDTHS[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", CHAIN_WIDTHS[-1]])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def branches():
    n = helper.make_node
    nodes = [
        n("Relu", ["x"], ["a1"], name="a_relu"),
        n("Sigmoid", ["x"], ["b1"], name="b_sigmoid"),
        n("Neg", ["x"], ["c1"], name="c_neg"),
        n("Tanh", ["a1"], ["a2"], name="a_tanh"),
        n("Abs", ["b1"], ["b2"], name=""),  # unnamed on purpose
        n("Add", ["a2", "b2"], ["ab"], name="ab_add"),
        n("Exp", ["c1"], ["c2"], name="c_exp"),
        n("Mul", ["ab", "c2"], ["y1"], name="y1_mul"),
        n("Sub", ["c2", "b1"], ["y2"], name="y2_sub"),
    ]
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", 16])
    graph = helper.make_graph(nodes, "branches", [info("x")], [info("y1"), info("y2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    args = sys.argv[1:]
    batch = 256
    if "--batch" in args:
        i = args.index("--batch")
        batch = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: make_test_models.py OUT_DIR [--batch N]", file=sys.stderr)
        return 2
    out = args[0]
    os.makedirs(out, exist_ok=True)
    for name, model in (("matmul_chain", matmul_chain()), ("branches", branches())):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, f"{name}.onnx"))
    size = lambda width: batch * width * 4
    print(f"H1_BYTES={size(CHAIN_WIDTHS[1])}")
    print(f"H2_BYTES={size(CHAIN_WIDTHS[2])}")
    print(f"H3_BYTES={size(CHAIN_WIDTHS[3])}")
    print(f"Y_BYTES={size(CHAIN_WIDTHS[4])}")
    print(f"X_BYTES={size(CHAIN_WIDTHS[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
