"""Models for the check of ONNX Runtime's memory settings (the arena, the
memory pattern, the run's bookkeeping) and of its control flow (If, Loop
and Scan running their subgraphs):
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
  innermost branches compute x * 2 + x for x[batch,1024] (the condition is
  a graph input: both branches hold the same).
- loop.onnx: a Loop of 4 iterations (trip count and condition constant)
  over y[batch,1024] = Exp(x): the body computes t = y * 2, u = t + x (x
  from the outer graph), y' = Relu(u) (carried), s = Neg(u) (a scan
  output), then a chain of 200 Sigmoid/Neg nodes over y' into a second scan
  output: the body's intermediates, its outputs handed to the Loop, the
  carried values freed an iteration late, the scan outputs kept to the end
  and copied into [4,batch,1024], and a frame of 200+ values whose
  bookkeeping counts. Its memory pattern is made by the first iteration
  and used by the others.
- scan.onnx: a Scan over xs[3,batch,1024] (axis 0) and xt[batch,3,1024]
  (axis 1, transposed through a temporary) with a state s[batch,1024]: the
  body computes m = xs_t * 2, s' = s + m + xt_t, o = Relu(s'); its scan
  outputs go out on axis 0 (written in place) and on axis 1 (through a
  temporary): the state's two temporaries, the outputs allocated when the
  first iteration produces them.
- loop_trip_input.onnx: a Loop whose trip count is a graph input (int64
  scalar n): how many iterations run is known only at run time, so the
  report gives no ORT figures and says why.
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


def loop_model(trips=4, chain=200):
    f32 = lambda name: helper.make_tensor_value_info(name, F, ["batch", 1024])
    body = [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="/loop/body/cond"),
            helper.make_node("Mul", ["y_in", "/loop/body/two"], ["/loop/body/t"], name="/loop/body/Mul"),
            helper.make_node("Add", ["/loop/body/t", "/x"], ["/loop/body/u"], name="/loop/body/Add"),
            helper.make_node("Relu", ["/loop/body/u"], ["y_out"], name="/loop/body/Relu"),
            helper.make_node("Neg", ["/loop/body/u"], ["s_out"], name="/loop/body/Neg")]
    prev = "y_out"
    for i in range(chain):
        out = f"/loop/body/c{i}" if i < chain - 1 else "c_out"
        body.append(helper.make_node("Neg" if i % 2 else "Sigmoid", [prev], [out], name=f"/loop/body/chain{i}"))
        prev = out
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "/loop/body/two")
    body_graph = helper.make_graph(
        body, "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), f32("y_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f32("y_out"), f32("s_out"), f32("c_out")],
        initializer=[two])
    nodes = [helper.make_node("Exp", ["x"], ["/x"], name="/Exp"),
             helper.make_node("Loop", ["trips", "go", "/x"], ["y", "s", "c"], name="/loop/Loop", body=body_graph)]
    seq = lambda name: helper.make_tensor_value_info(name, F, [trips, "batch", 1024])
    g = helper.make_graph(nodes, "loop", [f32("x")], [f32("y"), seq("s"), seq("c")],
                          initializer=[numpy_helper.from_array(np.array(trips, dtype=np.int64), "trips"),
                                       numpy_helper.from_array(np.array(True), "go")])
    return helper.make_model(g, opset_imports=opset())


def scan_model(steps=3):
    f32 = lambda name, shape=("batch", 1024): helper.make_tensor_value_info(name, F, list(shape))
    body = helper.make_graph(
        [helper.make_node("Mul", ["xs_t", "/scan/body/two"], ["/scan/body/m"], name="/scan/body/Mul"),
         helper.make_node("Add", ["s_in", "/scan/body/m"], ["/scan/body/a"], name="/scan/body/Add"),
         helper.make_node("Add", ["/scan/body/a", "xt_t"], ["s_out"], name="/scan/body/Add2"),
         helper.make_node("Relu", ["s_out"], ["o0"], name="/scan/body/Relu"),
         helper.make_node("Neg", ["s_out"], ["o1"], name="/scan/body/Neg")],
        "scan_body", [f32("s_in"), f32("xs_t"), f32("xt_t")], [f32("s_out"), f32("o0"), f32("o1")],
        initializer=[numpy_helper.from_array(np.array(2.0, dtype=np.float32), "/scan/body/two")])
    nodes = [helper.make_node("Exp", ["s0"], ["/s0"], name="/Exp"),
             helper.make_node("Scan", ["/s0", "xs", "xt"], ["s", "os0", "os1"], name="/scan/Scan", body=body,
                              num_scan_inputs=2, scan_input_axes=[0, 1], scan_output_axes=[0, 1])]
    g = helper.make_graph(nodes, "scan", [f32("s0"), f32("xs", (steps, "batch", 1024)), f32("xt", ("batch", steps, 1024))],
                          [f32("s"), f32("os0", (steps, "batch", 1024)), f32("os1", ("batch", steps, 1024))])
    return helper.make_model(g, opset_imports=opset())


def loop_trip_input():
    f32 = lambda name: helper.make_tensor_value_info(name, F, ["batch", 1024])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="/body/cond"),
         helper.make_node("Exp", ["y_in"], ["y_out"], name="/body/Exp")],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), f32("y_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f32("y_out")])
    g = helper.make_graph([helper.make_node("Loop", ["n", "", "x"], ["y"], name="/Loop", body=body)], "loop_trip_input",
                          [f32("x"), helper.make_tensor_value_info("n", TensorProto.INT64, [])], [f32("y")])
    return helper.make_model(g, opset_imports=opset())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_settings_models.py OUT_DIR")
    out = sys.argv[1]
    try:
        save(steer(), os.path.join(out, "steer.onnx"))
        save(bookkeeping(), os.path.join(out, "bookkeeping.onnx"))
        save(nested_if(), os.path.join(out, "nested_if.onnx"))
        save(loop_model(), os.path.join(out, "loop.onnx"))
        save(scan_model(), os.path.join(out, "scan.onnx"))
        save(loop_trip_input(), os.path.join(out, "loop_trip_input.onnx"))
    except Exception as e:  # noqa: BLE001 - one line naming the reason
        sys.exit(f"make_settings_models.py: {e}")


if __name__ == "__main__":
    main()
