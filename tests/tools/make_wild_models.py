#!/usr/bin/python3
"""Writes small models shaped like published exports that nobody here made,
one per way such a model misled a user (tests/cli/test_wild.sh):

    /usr/bin/python3 tests/tools/make_wild_models.py OUT_DIR

ocr_det.onnx, ocr_rec.onnx, ocr_cls.onnx
    Paddle2ONNX-style exports: every weight a Constant node, dimensions
    named p2o.DynamicDimension.N and numbered separately in each model (the
    graph input first, then the graph outputs). det: x[N0,3,N1,N2] ->
    y[N3,1,N4,N5], a convolution with stride 2 and back, so its sizes depend
    on the input's height and width while the output declares names of its
    own. rec: x[N0,3,48,N1] -> y[N2,N3,97]; N2 is the output's batch, so a
    --dim p2o.DynamicDimension.2 meant for det's image height inflates the
    declared output. cls: x[N0,3,48,192] -> y[N1,2].
constant_weights.onnx
    weights as Constant nodes that dwarf the activations (two 1 MiB float
    matrices around 4 KiB activations), and a ConstantOfShape of a Constant
    shape (ONNX Runtime runs it with optimizations off: an intermediate).
flatten_input.onnx
    a wake-word-style head: a Flatten of the graph input (a view: no copy),
    then two Gemms with Constant weights and a Sigmoid.
nested_if.onnx
    If subgraphs nested three levels, with "/" in node, tensor and
    dimension names (as torch exports of Silero VAD): the outer If's
    branches make outputs of different sizes, so its output's size is the
    one its declared dimension "/If_output_0_dim_0" gets from --dim.
long_names.onnx
    40 Reshapes to a shape fed at run time, each output declaring a
    symbolic dimension with a long "/" name of its own: more --dim names
    than one message holds.
two_inputs.onnx
    two graph inputs with open dimensions, one with a name (batch) shared
    by both and one unnamed (-1).
override_reshape.onnx
    x[1,3,48,16] flattened into a MatMul with a [2304,4] weight: an
    --input-shape that changes the fixed 48 makes the MatMul rule fail.
two_dims.onnx
    x[batch,seq,16]: two symbolic dimensions, for check's bindings.
branches.onnx
    two branches listed interleaved, so ONNX Runtime's depth-first order of
    the file peaks lower than the listing (the SVG must draw ORT's order).
bad_nonzero.onnx
    a size only data decides (NonZero): fails to plan, for a mixed batch.

Prints NAME=VALUE facts the test checks against (bytes, names).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def p2o(i):
    return f"p2o.DynamicDimension.{i}"


def save(path, nodes, inputs, outputs, value_info=(), opset=13):
    graph = h.make_graph(nodes, os.path.splitext(os.path.basename(path))[0], inputs, outputs,
                         value_info=list(value_info))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="wild-like")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def const(name, array):
    return h.make_node("Constant", [], [name], value=nh.from_array(array, name), name=name)


def weights(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.1


def ocr_det(out):
    nodes = [const("conv1.w", weights((8, 3, 3, 3), 1)), const("conv2.w", weights((1, 8, 3, 3), 2)),
             h.make_node("Conv", ["x", "conv1.w"], ["conv1.out"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("Relu", ["conv1.out"], ["relu1.out"], name="relu1"),
             h.make_node("Resize", ["relu1.out", "", "scales"], ["up.out"], mode="nearest", name="up"),
             h.make_node("Conv", ["up.out", "conv2.w"], ["conv2.out"], pads=[1, 1, 1, 1], name="conv2"),
             h.make_node("Sigmoid", ["conv2.out"], ["y"], name="sigmoid")]
    nodes.insert(2, const("scales", np.array([1, 1, 2, 2], np.float32)))
    save(f"{out}/ocr_det.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [p2o(0), 3, p2o(1), p2o(2)])],
         [h.make_tensor_value_info("y", T.FLOAT, [p2o(3), 1, p2o(4), p2o(5)])])


REC_CLASSES = 97


def ocr_rec(out):
    nodes = [const("conv.w", weights((8, 3, 3, 3), 3)), const("fc.w", weights((8, REC_CLASSES), 4)),
             h.make_node("Conv", ["x", "conv.w"], ["conv.out"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("ReduceMean", ["conv.out"], ["pool.out"], axes=[2], keepdims=0, name="pool"),
             h.make_node("Transpose", ["pool.out"], ["seq"], perm=[0, 2, 1], name="to_seq"),
             h.make_node("MatMul", ["seq", "fc.w"], ["logits"], name="fc"),
             h.make_node("Softmax", ["logits"], ["y"], axis=2, name="softmax")]
    save(f"{out}/ocr_rec.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [p2o(0), 3, 48, p2o(1)])],
         [h.make_tensor_value_info("y", T.FLOAT, [p2o(2), p2o(3), REC_CLASSES])])


def ocr_cls(out):
    nodes = [const("conv.w", weights((4, 3, 3, 3), 5)), const("fc.w", weights((4, 2), 6)),
             h.make_node("Conv", ["x", "conv.w"], ["conv.out"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("GlobalAveragePool", ["conv.out"], ["pool.out"], name="pool"),
             h.make_node("Flatten", ["pool.out"], ["flat"], name="flatten"),
             h.make_node("MatMul", ["flat", "fc.w"], ["logits"], name="fc"),
             h.make_node("Softmax", ["logits"], ["y"], axis=1, name="softmax")]
    save(f"{out}/ocr_cls.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [p2o(0), 3, 48, 192])],
         [h.make_tensor_value_info("y", T.FLOAT, [p2o(1), 2])])


def constant_weights(out):
    w1, w2 = weights((256, 1024), 7), weights((1024, 256), 8)
    nodes = [const("w1", w1), const("w2", w2), const("bias_shape", np.array([4, 256], np.int64)),
             h.make_node("ConstantOfShape", ["bias_shape"], ["bias"],
                         value=nh.from_array(np.array([0.5], np.float32), "v"), name="fill"),
             h.make_node("MatMul", ["in", "w1"], ["h1"], name="mm1"),
             h.make_node("Relu", ["h1"], ["a1"], name="relu"),
             h.make_node("MatMul", ["a1", "w2"], ["h2"], name="mm2"),
             h.make_node("Add", ["h2", "bias"], ["y"], name="add")]
    save(f"{out}/constant_weights.onnx", nodes, [h.make_tensor_value_info("in", T.FLOAT, [4, 256])],
         [h.make_tensor_value_info("y", T.FLOAT, [4, 256])])
    const_bytes = w1.nbytes + w2.nbytes + 16
    print(f"constant_weights.constant_bytes={const_bytes + 4 * 256 * 4}")  # Constants and the input
    print(f"constant_weights.smallest_weight={min(w1.nbytes, w2.nbytes)}")


def flatten_input(out):
    nodes = [const("fc1.w", weights((16 * 96, 32), 9)), const("fc2.w", weights((32, 1), 10)),
             h.make_node("Flatten", ["x"], ["flat"], axis=1, name="flatten"),
             h.make_node("Gemm", ["flat", "fc1.w"], ["h"], name="fc1"),
             h.make_node("Relu", ["h"], ["a"], name="relu"),
             h.make_node("Gemm", ["a", "fc2.w"], ["logit"], name="fc2"),
             h.make_node("Sigmoid", ["logit"], ["y"], name="sigmoid")]
    save(f"{out}/flatten_input.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 96])],
         [h.make_tensor_value_info("y", T.FLOAT, [1, 1])],
         value_info=[h.make_tensor_value_info("flat", T.FLOAT, [1, 16 * 96])])
    print(f"flatten_input.flat_bytes={16 * 96 * 4}")


IF_DIM = "/If_output_0_dim_0"


def nested_if(out):
    def branch(name, nodes, out_name, shape):
        return h.make_graph(nodes, name, [], [h.make_tensor_value_info(out_name, T.FLOAT, shape)])

    # level 3: /decoder/rnn/If
    rnn_then = branch("/decoder/rnn/then", [h.make_node("Relu", ["input"], ["/decoder/rnn/Relu_output_0"],
                                                         name="/decoder/rnn/Relu")],
                      "/decoder/rnn/Relu_output_0", [1, 64])
    rnn_else = branch("/decoder/rnn/else", [h.make_node("Sigmoid", ["input"], ["/decoder/rnn/Sigmoid_output_0"],
                                                         name="/decoder/rnn/Sigmoid")],
                      "/decoder/rnn/Sigmoid_output_0", [1, 64])
    # level 2: /decoder/If
    dec_then = branch("/decoder/then", [h.make_node("If", ["/Equal_output_0"], ["/decoder/rnn/If_output_0"],
                                                    then_branch=rnn_then, else_branch=rnn_else,
                                                    name="/decoder/rnn/If")],
                      "/decoder/rnn/If_output_0", [1, 64])
    dec_else = branch("/decoder/else", [h.make_node("Tanh", ["input"], ["/decoder/Tanh_output_0"],
                                                    name="/decoder/Tanh")],
                      "/decoder/Tanh_output_0", [1, 64])
    # level 1: /If; its branches differ in size, so its output is sized by its declaration
    top_then = branch("/then", [h.make_node("If", ["/Equal_output_0"], ["/decoder/If_output_0"],
                                            then_branch=dec_then, else_branch=dec_else, name="/decoder/If")],
                      "/decoder/If_output_0", [1, 64])
    top_else = branch("/else", [h.make_node("Concat", ["input", "input"], ["/Concat_output_0"], axis=0,
                                            name="/Concat")],
                      "/Concat_output_0", [2, 64])
    nodes = [const("/Constant_output_0", np.array(16000, np.int64)),
             h.make_node("Equal", ["sr", "/Constant_output_0"], ["/Equal_output_0"], name="/Equal"),
             h.make_node("If", ["/Equal_output_0"], ["/If_output_0"], then_branch=top_then, else_branch=top_else,
                         name="/If"),
             h.make_node("Relu", ["/If_output_0"], ["output"], name="/Relu")]
    save(f"{out}/nested_if.onnx", nodes,
         [h.make_tensor_value_info("input", T.FLOAT, [1, 64]), h.make_tensor_value_info("sr", T.INT64, [])],
         [h.make_tensor_value_info("output", T.FLOAT, [IF_DIM, 64])],
         value_info=[h.make_tensor_value_info("/If_output_0", T.FLOAT, [IF_DIM, 64])])
    print(f"nested_if.dim={IF_DIM}")


def long_names(out):
    nodes, outputs = [], []
    for k in range(40):  # a shape fed at run time: only the declarations name the sizes
        name = f"/encoder/layers.{k}/self_attn/Reshape_output_0"
        nodes.append(h.make_node("Reshape", ["x", "shape"], [name], name=f"/encoder/layers.{k}/self_attn/Reshape"))
        outputs.append(h.make_tensor_value_info(name, T.FLOAT, [f"{name}_dim_0", 8]))
    save(f"{out}/long_names.onnx", nodes,
         [h.make_tensor_value_info("x", T.FLOAT, [2, 8]), h.make_tensor_value_info("shape", T.INT64, [2])], outputs)


def two_inputs(out):
    nodes = [h.make_node("Relu", ["a"], ["ra"], name="relu_a"),
             h.make_node("MatMul", ["ra", "b"], ["y"], name="mm")]
    save(f"{out}/two_inputs.onnx", nodes,
         [h.make_tensor_value_info("a", T.FLOAT, ["batch", 16]),
          h.make_tensor_value_info("b", T.FLOAT, [16, -1])],
         [h.make_tensor_value_info("y", T.FLOAT, ["batch", None])])


def override_reshape(out):
    nodes = [const("w", weights((3 * 48 * 16, 4), 11)),
             h.make_node("Flatten", ["x"], ["flat"], axis=1, name="flatten"),
             h.make_node("MatMul", ["flat", "w"], ["y"], name="fc")]
    save(f"{out}/override_reshape.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 48, 16])],
         [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])


def two_dims(out):
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu"), h.make_node("Sigmoid", ["r"], ["y"], name="sigmoid")]
    save(f"{out}/two_dims.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 16])],
         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", 16])])


def branches(out):
    big, small = [64, 1024], [64, 16]
    nodes = [const("wa", weights((1024, 16), 12)), const("wb", weights((1024, 16), 13)),
             h.make_node("Tile", ["x", "reps"], ["a1"], name="a1"),
             h.make_node("Tile", ["x", "reps"], ["b1"], name="b1"),
             h.make_node("MatMul", ["a1", "wa"], ["a2"], name="a2"),
             h.make_node("MatMul", ["b1", "wb"], ["b2"], name="b2"),
             h.make_node("Add", ["a2", "b2"], ["y"], name="join")]
    nodes.insert(0, const("reps", np.array([1, 16], np.int64)))
    save(f"{out}/branches.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [64, 64])],
         [h.make_tensor_value_info("y", T.FLOAT, small)])
    print(f"branches.big={big[0] * big[1] * 4}")


def bad_nonzero(out):
    nodes = [h.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
             h.make_node("Cast", ["nz"], ["y"], to=T.FLOAT, name="cast")]
    save(f"{out}/bad_nonzero.onnx", nodes, [h.make_tensor_value_info("x", T.FLOAT, [4, 4])],
         [h.make_tensor_value_info("y", T.FLOAT, [2, None])])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in (ocr_det, ocr_rec, ocr_cls, constant_weights, flatten_input, nested_if, long_names, two_inputs,
                 override_reshape, two_dims, branches, bad_nonzero):
        make(out)


if __name__ == "__main__":
    main()
