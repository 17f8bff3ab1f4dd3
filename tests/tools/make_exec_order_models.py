#!/usr/bin/python3
"""Writes the small models on which ONNX Runtime's execution order is
checked against olla-exec-order (tests/cli/test_exec_order_ort.sh):

    /usr/bin/python3 tests/tools/make_exec_order_models.py OUT_DIR

casts.onnx     every case of ORT's RemoveDuplicateCastTransformer: pairs that
               vanish, a Cast read only by a Cast, lossy pairs that stay, a
               Cast with one removable and one kept Cast reader, a lossy Cast
               read by a Cast to bool, graph outputs on either Cast (a Cast
               removed below a kept one), a Cast of a Constant, unnamed nodes
               after Constants.
branches.onnx  several leaves, a dangling node, a node read by many
               consumers, a multi-output Split feeding different branches,
               unnamed nodes.
"""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def save(path, nodes, inputs, outputs, initializers=()):
    graph = h.make_graph(nodes, os.path.basename(path), inputs, outputs, initializer=list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def vi(name, elem, shape=(4,)):
    return h.make_tensor_value_info(name, elem, list(shape))


def cast(src, dst, to, name=""):
    return h.make_node("Cast", [src], [dst], to=to, name=name)


def casts(path):
    n = [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        # float -> double -> float: both vanish; the Add reads r
        cast("r", "d", T.DOUBLE, "pair_up"), cast("d", "pf", T.FLOAT, "pair_down"),
        # int32 -> int64 -> float: the first vanishes
        cast("i", "i64", T.INT64, "widen"), cast("i64", "if", T.FLOAT, "to_float"),
        # float -> int32 -> float: lossy, both run
        cast("r", "ri", T.INT32, "lossy_down"), cast("ri", "rf", T.FLOAT, "lossy_up"),
        # int64 -> float -> int64: both run
        cast("l", "lf", T.FLOAT, "l_to_f"), cast("lf", "ll", T.INT64, "f_to_l"),
        # one removable and one kept reader: i2 -> int64 -> {int32 (vanishes), float}; the first vanishes too
        cast("i2", "j64", T.INT64, "fan"), cast("j64", "j32", T.INT32, "fan_back"),
        cast("j64", "jf", T.FLOAT, "fan_float"),
        # lossy Cast read by a Cast to bool: both run
        cast("r", "bi", T.INT32, "to_int"), cast("bi", "bb", T.BOOL, "to_bool"),
        # the second Cast is a graph output: the first vanishes, the second runs
        cast("r", "od", T.DOUBLE, "out_up"), cast("od", "of", T.FLOAT, "out_down"),
        # the first Cast is a graph output: it runs; the second vanishes (its reader reads r),
        # yet the file still lists gout_up before that reader
        cast("r", "gd", T.DOUBLE, "gout_up"), cast("gd", "gf", T.FLOAT, "gout_down"),
        # a Cast of a Constant runs; unnamed nodes after Constants
        h.make_node("Constant", [], ["k"], value=h.make_tensor("kv", T.INT32, [4], [1, 2, 3, 4])),
        cast("k", "kf", T.FLOAT),
        h.make_node("Constant", [], ["k2"], value=h.make_tensor("kv2", T.FLOAT, [4], [1, 1, 1, 1])),
        h.make_node("Add", ["pf", "if"], ["s1"]),
        h.make_node("Add", ["s1", "rf"], ["s2"]),
        h.make_node("Add", ["s2", "lf"], ["s3"], name="sum3"),
        h.make_node("Add", ["s3", "jf"], ["s4"]),
        h.make_node("Add", ["s4", "kf"], ["s5"]),
        h.make_node("Add", ["s5", "gf"], ["s6"]),
        h.make_node("Mul", ["s6", "k2"], ["y"]),
        h.make_node("Identity", ["ll"], ["y_l"], name="keep_l"),
        h.make_node("Identity", ["j32"], ["y_j"], name="keep_j"),
        h.make_node("Not", ["bb"], ["y_b"], name="keep_b"),
        # a single float -> float Cast runs
        cast("r", "same", T.FLOAT, "same_type"),
        h.make_node("Neg", ["same"], ["y_s"], name="neg"),
    ]
    inputs = [vi("x", T.FLOAT), vi("i", T.INT32), vi("l", T.INT64), vi("i2", T.INT32)]
    outputs = [vi("y", T.FLOAT), vi("y_l", T.INT64), vi("y_j", T.INT32), vi("y_b", T.BOOL), vi("of", T.FLOAT),
               vi("gd", T.DOUBLE), vi("y_s", T.FLOAT)]
    save(path, n, inputs, outputs)


def branches(path):
    n = [
        h.make_node("Relu", ["x"], ["a"], name="a"),
        h.make_node("Split", ["a"], ["p", "q", "r"], axis=0, name="split"),
        h.make_node("Sigmoid", ["p"], ["p1"]),
        h.make_node("Tanh", ["q"], ["q1"]),
        h.make_node("Add", ["p1", "q1"], ["pq"], name="join"),
        h.make_node("Mul", ["a", "a"], ["aa"], name="square"),
        h.make_node("Abs", ["a"], ["abs_a"]),
        h.make_node("Neg", ["r"], ["nr"], name="neg_r"),
        h.make_node("Exp", ["abs_a"], ["unused"], name="dangling"),
        h.make_node("Sum", ["aa", "abs_a"], ["y2"], name="sum2"),
        h.make_node("Concat", ["pq", "nr"], ["y1"], axis=0, name="concat"),
        h.make_node("Sqrt", ["abs_a"], ["y3"]),
        h.make_node("Mul", ["y3", "x"], ["y4"], name="leaf_late"),
    ]
    outputs = [vi("y1", T.FLOAT, (4,)), vi("y2", T.FLOAT, (12,)), vi("y4", T.FLOAT, (12,))]
    save(path, n, [vi("x", T.FLOAT, (12,))], outputs)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    casts(os.path.join(sys.argv[1], "casts.onnx"))
    branches(os.path.join(sys.argv[1], "branches.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
