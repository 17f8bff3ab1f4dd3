"""Small models, one rule of ONNX Runtime's allocation planner each, for
tests/cli/test_ort_memory.sh: the model of passes/runtime/olla_ort_memory.h
must predict what the real process allocates for each of them.

    /usr/bin/python3 tests/ort/make_memory_models.py OUT_DIR

Writes OUT_DIR/<name>.onnx and OUT_DIR/expect.txt: one line per model,
"<name> <tensor> <kind>": the decision of the planner rule the model is made
for (ort_predict --decisions must show it), and what a model that broke the
rule would predict instead is in the comment beside each model below. All
tensors are float32 and at least 4 KiB unless said; [64,1024] is 262,144
bytes. Inputs are graph inputs (allocated before the measured run)."""
import os
import sys

import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def model(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def inp(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def total(x, out):
    """A small graph output: the sum of x (4 bytes, never counted)."""
    return node("ReduceSum", [x], [out], keepdims=0)


def models():
    out = {}
    # In place: Relu, Sigmoid and Tanh write into the dying Neg output: one
    # buffer (262,144) for the whole chain; without in place, two at once.
    out["inplace_chain"] = (model("inplace_chain", [
        node("Neg", ["x"], ["a"]), node("Relu", ["a"], ["b"]), node("Sigmoid", ["b"], ["c"]),
        node("Tanh", ["c"], ["d"]), total("d", "y")],
        [inp("x", [64, 1024])], [inp("y", [])]), [("b", "inplace"), ("d", "inplace")])
    # In place refused: a is read again later, so Relu gets a buffer of its own.
    out["inplace_refused"] = (model("inplace_refused", [
        node("Neg", ["x"], ["a"]), node("Relu", ["a"], ["b"]), node("Add", ["a", "b"], ["c"]), total("c", "y")],
        [inp("x", [64, 1024])], [inp("y", [])]), [("b", "own")])
    # Views: Reshape and Unsqueeze outputs are a's buffer; a lives until the
    # last view is read (a + c = 524,288; with copies a + v + w + c).
    out["views"] = (model("views", [
        node("Neg", ["x"], ["a"]), node("Reshape", ["a", "shape"], ["v"]), node("Unsqueeze", ["v", "axes"], ["w"]),
        node("Neg", ["w"], ["c"]), total("c", "y")],
        [inp("x", [64, 1024])], [inp("y", [])],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [1024, 64]),
         helper.make_tensor("axes", TensorProto.INT64, [1], [0])]), [("v", "alias"), ("w", "alias")])
    # A freed buffer serves a later tensor of the same static shape: t takes
    # a's buffer, which then stays allocated while m lives (a + m = 786,432).
    out["reuse_same_shape"] = (chain_via_m("x4"),
                               [("t", "reused")])
    # Same bytes, other static shape ([1024,64]): no reuse, a is freed after
    # its last reader (peak m = 524,288; with reuse by bytes 786,432).
    out["reuse_other_shape"] = (chain_via_m("x2"), [("t", "own")])
    # A symbolic dim stays a name: a is [batch,1024], t is [64,1024]; at
    # batch=64 they have equal shapes, but ORT plans on the file's shapes.
    out["reuse_symbolic"] = (chain_via_m("x4", batch="batch"), [("t", "own")])
    # A tensor nobody reads (u) stays allocated to the end of the run, beside
    # m (u + m = 786,432; freed at once it would be 524,288).
    out["never_read"] = (model("never_read", [
        node("Neg", ["x"], ["a"]), node("Neg", ["a"], ["u"]), node("ReduceSum", ["a"], ["s"], keepdims=1),
        node("Mul", ["x3", "s"], ["m"]), total("m", "y")],
        [inp("x", [64, 1024]), inp("x3", [128, 1024])], [inp("y", [])]), [("u", "own")])
    # A graph output gets its own buffer even when a freed buffer of its shape
    # waits (reusing a's would keep a alive beside m: 786,432).
    out["graph_output"] = (chain_via_m("x4", output_t=True), [("t", "output")])
    # Conv scratch: a pointwise conv has none; a 3x3 conv takes MLAS's 64 KiB
    # working buffer; filters (256) beyond the output size (16) take the
    # whole im2col (16 * 144 floats).
    out["conv_pointwise"] = (conv_model("conv_pointwise", [1, 64, 32, 32], [64, 64, 1, 1], 0), [("c", "own")])
    out["conv_3x3"] = (conv_model("conv_3x3", [1, 64, 32, 32], [64, 64, 3, 3], 1), [("c", "own")])
    out["conv_im2col"] = (conv_model("conv_im2col", [1, 16, 4, 4], [256, 16, 3, 3], 1), [("c", "own")])
    # MatMul of 256 batched GEMMs: 64 bytes of parameters each (16,384).
    out["matmul_batched"] = (model("matmul_batched", [
        node("MatMul", ["p", "q"], ["c"]), total("c", "y")],
        [inp("p", [256, 32, 16]), inp("q", [256, 16, 32])], [inp("y", [])]), [("c", "own")])
    # Where selects into two temporaries the size of its output.
    out["where"] = (model("where", [
        node("Where", ["cond", "x", "zero"], ["c"]), total("c", "y")],
        [inp("cond", [64, 1024], TensorProto.BOOL), inp("x", [64, 1024])], [inp("y", [])],
        [helper.make_tensor("zero", F, [], [0.0])]), [("c", "own")])
    # LRN: a scale buffer the size of X and a padded square of (C+4)*H*W floats.
    out["lrn"] = (model("lrn", [
        node("LRN", ["x"], ["c"], size=5), total("c", "y")],
        [inp("x", [1, 64, 32, 32])], [inp("y", [])]), [("c", "own")])
    # Softmax over axis 0 (opset 13+): the input is transposed into two
    # temporaries the size of the input.
    out["softmax_axis0"] = (model("softmax_axis0", [
        node("Softmax", ["x"], ["c"], axis=0), total("c", "y")],
        [inp("x", [64, 1024])], [inp("y", [])]), [("c", "own")])
    return out


def chain_via_m(t_input, batch=None, output_t=False):
    """a = -x; s = sum(a); m = x3 * s; s2 = sum(m); t = t_input * s2: a is
    freed before m, and t comes after m (reusing a's buffer or not)."""
    a_rows = batch if batch else 64
    shapes = {"x4": [64, 1024], "x2": [1024, 64]}
    nodes = [node("Neg", ["x"], ["a"]), node("ReduceSum", ["a"], ["s"], keepdims=1),
             node("Mul", ["x3", "s"], ["m"]), node("ReduceSum", ["m"], ["s2"], keepdims=1),
             node("Mul", [t_input, "s2"], ["t"])]
    outputs = [inp("t", shapes[t_input])] if output_t else [inp("y", [])]
    if not output_t:
        nodes.append(total("t", "y"))
    return nodes, [inp("x", [a_rows, 1024]), inp("x3", [128, 1024]), inp(t_input, shapes[t_input])], outputs


def conv_model(name, x, w, pad):
    return model(name, [node("Conv", ["x", "w"], ["c"], pads=[pad] * 4), total("c", "y")],
                 [inp("x", x), inp("w", w)], [inp("y", [])])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_memory_models.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "expect.txt"), "w") as f:
        for name, (spec, decisions) in models().items():
            m = model(name, *spec) if isinstance(spec, tuple) else spec
            onnx.save(m, os.path.join(out_dir, name + ".onnx"))
            for tensor, kind in decisions:
                f.write(f"{name} {tensor} {kind}\n")


if __name__ == "__main__":
    main()
