"""Models for the check of ONNX Runtime's memory settings (the arena, the
memory pattern, the run's bookkeeping, subgraphs):
tests/cli/test_ort_memory_corpus.sh runs them beside the corpus.

    /usr/bin/python3 tests/ort/make_settings_models.py OUT_DIR

Writes into OUT_DIR:
- steer.onnx: x[batch,4096] float. A chain c1 = Concat(x, x) [batch,8192],
  c2 = Exp(c1), c3 = Slice(c2) [batch,4096] and a branch L = Exp(x)
  [batch,4096] meet in y = Add(L, c3). Listed so that ONNX Runtime runs L
  first (it is the producer listed last), which keeps L alive through the
  chain: 20,480 floats per row at the peak; run the chain first and the peak
  is 16,384 (the written model's saving, 20%). At batch 32 the tensors are
  0.5-1 MiB, so the arena grows by several regions.
- bookkeeping.onnx: 150 inputs x_i[1,4096] float, each y_i = Neg(x_i) a
  graph output: 150 feeds and fetches, 300 values in the frame; the run's
  bookkeeping is several percent of what ORT holds.
- nested_if.onnx: If nodes nested three levels deep (each branch of the
  outer If holds an If whose branch holds an If), every node and tensor
  name with '/' in it, as exporters write them (/decoder/If, ...); the
  innermost branches compute x * 2 and x + 1 for x[batch,1024].
Prints nothing; exit 1 with the reason when onnx fails."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(m, path):
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def opset(v=17):
    return [helper.make_opsetid("", v)]


def steer():
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [
        helper.make_node("Concat", ["x", "x"], ["c1"], name="chain/concat", axis=1),
        helper.make_node("Exp", ["c1"], ["c2"], name="chain/exp"),
        helper.make_node("Slice", ["c2", "starts", "ends", "axes"], ["c3"], name="chain/slice"),
        helper.make_node("Exp", ["x"], ["L"], name="branch/exp"),
        helper.make_node("Add", ["L", "c3"], ["y"], name="join/add"),
    ]
    g = helper.make_graph(nodes, "steer", [helper.make_tensor_value_info("x", F, ["batch", 4096])],
                          [helper.make_tensor_value_info("y", F, ["batch", 4096])],
                          initializer=[i64("starts", [0]), i64("ends", [4096]), i64("axes", [1])])
    return helper.make_model(g, opset_imports=opset())


def bookkeeping(n=150):
    nodes = [helper.make_node("Neg", [f"x{i}"], [f"y{i}"], name=f"neg{i}") for i in range(n)]
    ins = [helper.make_tensor_value_info(f"x{i}", F, [1, 4096]) for i in range(n)]
    outs = [helper.make_tensor_value_info(f"y{i}", F, [1, 4096]) for i in range(n)]
    return helper.make_model(helper.make_graph(nodes, "bookkeeping", ins, outs), opset_imports=opset())


def branch(prefix, depth, x, out):
    """A graph for an If branch that computes out from the outer-scope x;
    below depth 1 it holds another If on the same condition."""
    if depth == 1:
        two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), f"{prefix}/two")
        nodes = [helper.make_node("Mul", [x, f"{prefix}/two"], [f"{prefix}/Mul_output_0"], name=f"{prefix}/Mul"),
                 helper.make_node("Add", [f"{prefix}/Mul_output_0", x], [out], name=f"{prefix}/Add")]
        inits = [two]
    else:
        inner = f"{prefix}/If"
        nodes = [helper.make_node("If", ["cond"], [out], name=inner,
                                  then_branch=branch(f"{inner}/then", depth - 1, x, f"{inner}/then_out"),
                                  else_branch=branch(f"{inner}/else", depth - 1, x, f"{inner}/else_out"))]
        # the inner If's output is named by the branch outputs above; rename to out
        nodes[0].output[0] = out
        inits = []
    return helper.make_graph(nodes, prefix.replace("/", "_"), [],
                             [helper.make_tensor_value_info(out, F, ["batch", 1024])], initializer=inits)


def nested_if():
    top = "/decoder/If"
    nodes = [
        helper.make_node("Relu", ["/decoder/x"], ["/decoder/Relu_output_0"], name="/decoder/Relu"),
        helper.make_node("If", ["cond"], ["/decoder/If_output_0"], name=top,
                         then_branch=branch(f"{top}/then", 2, "/decoder/Relu_output_0", f"{top}/then_out"),
                         else_branch=branch(f"{top}/else", 2, "/decoder/Relu_output_0", f"{top}/else_out")),
        helper.make_node("Neg", ["/decoder/If_output_0"], ["/decoder/y"], name="/decoder/Neg"),
    ]
    g = helper.make_graph(nodes, "nested_if",
                          [helper.make_tensor_value_info("/decoder/x", F, ["batch", 1024]),
                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("/decoder/y", F, ["batch", 1024])])
    return helper.make_model(g, opset_imports=opset())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_settings_models.py OUT_DIR")
    out = sys.argv[1]
    try:
        save(steer(), os.path.join(out, "steer.onnx"))
        save(bookkeeping(), os.path.join(out, "bookkeeping.onnx"))
        save(nested_if(), os.path.join(out, "nested_if.onnx"))
    except Exception as e:  # noqa: BLE001 - one line naming the reason
        sys.exit(f"make_settings_models.py: {e}")


if __name__ == "__main__":
    main()
