#!/usr/bin/python3
"""Writes a folder of small, varied ONNX models, as a model zoo would hold them.

    /usr/bin/python3 tests/tools/make_zoo.py OUT_DIR COUNT [--seed S] [--bad K]

COUNT good models in nested folders (OUT_DIR/<family>/<group>/<name>.onnx),
each planned by olla-onnx in well under a second, of three families in turn:
- train: a training step (forward, loss, backward, SGD update) from
  bench/huge_gen.py, 20 to 80 nodes;
- chain: a chain of Relu/Sigmoid/Add with skip connections, 10 to 120 nodes,
  batch and width drawn per model;
- dag: a random DAG of element-wise and MatMul nodes, each reading one or two
  earlier tensors, 12 to 32 nodes (larger random DAGs take the exact search
  seconds).
K more models are damaged (--bad, default 0): alternately a good model's
bytes cut short and a graph with a cycle. The same seed gives the same files.
Prints one line: the counts.
"""
import argparse
import importlib.util
import os
import random

from onnx import TensorProto as T
from onnx import helper as h

HERE = os.path.dirname(os.path.abspath(__file__))


def load_huge_gen():
    path = os.path.join(HERE, "..", "..", "bench", "huge_gen.py")
    spec = importlib.util.spec_from_file_location("huge_gen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def model_of(nodes, inputs, outputs, name):
    g = h.make_graph(nodes, name, inputs, outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="olla-onnx tests/tools/make_zoo.py")
    m.ir_version = 8
    return m


def chain(rnd, name):
    n = rnd.randint(10, 120)
    batch, width = rnd.choice([1, 4, 16, 32]), rnd.choice([64, 128, 256, 512])
    shape = [batch, width]
    nodes, prev, skip = [], "x", "x"
    every = rnd.randint(3, 7)
    for i in range(n):
        out = "t%d" % i
        if i % every == every - 1:
            nodes.append(h.make_node("Add", [prev, skip], [out], name="add%d" % i))
            skip = out
        else:
            nodes.append(h.make_node(rnd.choice(["Relu", "Sigmoid", "Tanh"]), [prev], [out], name="n%d" % i))
        prev = out
    return model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, shape)],
                    [h.make_tensor_value_info(prev, T.FLOAT, shape)], name)


def dag(rnd, name):
    n = rnd.randint(12, 32)
    batch, width = rnd.choice([2, 8, 32]), rnd.choice([32, 96, 256])
    shape = [batch, width]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, shape), h.make_tensor_value_info("w", T.FLOAT, [width, width])]
    tensors, read, nodes = ["x"], {"x"}, []
    for i in range(n):
        out = "v%d" % i
        a = tensors[rnd.randrange(max(0, len(tensors) - 12), len(tensors))]
        kind = rnd.random()
        if kind < 0.25:
            nodes.append(h.make_node("MatMul", [a, "w"], [out], name="mm%d" % i))
        elif kind < 0.6:
            b = tensors[rnd.randrange(len(tensors))]
            nodes.append(h.make_node(rnd.choice(["Add", "Mul", "Sub"]), [a, b], [out], name="bin%d" % i))
            read.add(b)
        else:
            nodes.append(h.make_node(rnd.choice(["Relu", "Sigmoid", "Neg", "Exp"]), [a], [out], name="un%d" % i))
        read.add(a)
        tensors.append(out)
    # every tensor no node reads is an output, so that nothing is dead code
    outputs = [h.make_tensor_value_info(t, T.FLOAT, shape) for t in tensors[1:] if t not in read]
    return model_of(nodes, inputs, outputs, name)


def damaged(k, good_bytes, name):
    if k % 2 == 0:
        return good_bytes[: max(8, len(good_bytes) // 3)]
    shape = [4, 8]
    nodes = [h.make_node("Relu", ["c"], ["a"], name="r0"), h.make_node("Add", ["x", "a"], ["b"], name="r1"),
             h.make_node("Relu", ["b"], ["c"], name="r2")]
    m = model_of(nodes, [h.make_tensor_value_info("x", T.FLOAT, shape)], [h.make_tensor_value_info("c", T.FLOAT, shape)],
                 name)
    return m.SerializeToString()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bad", type=int, default=0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    huge_gen = load_huge_gen()
    good = b""
    families = ["train", "chain", "dag"]
    for i in range(a.count):
        family = families[i % 3]
        name = "%s_%04d" % (family, i)
        if family == "train":
            m = huge_gen.build(rnd.randint(20, 80), rnd.randrange(1 << 30))
        elif family == "chain":
            m = chain(rnd, name)
        else:
            m = dag(rnd, name)
        good = m.SerializeToString()
        folder = os.path.join(a.out, family, "g%d" % (i % 4))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name + ".onnx"), "wb") as f:
            f.write(good)
    for k in range(a.bad):
        folder = os.path.join(a.out, "damaged")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "bad_%03d.onnx" % k), "wb") as f:
            f.write(damaged(k, good, "bad_%03d" % k))
    print("%s: %d models, %d damaged" % (a.out, a.count, a.bad))


if __name__ == "__main__":
    main()
