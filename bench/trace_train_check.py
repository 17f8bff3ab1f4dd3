#!/usr/bin/python3
"""Checks bench/trace_train.py against the corpus's train/ graphs.

    /usr/bin/python3 bench/trace_train_check.py CORPUS_TRAIN_DIR WORK_DIR [MODEL ...]

Traces each torchvision MODEL (alexnet, mobilenet_v2 and resnet18 by
default, the torchvision models of the corpus) at batch 1 and 32 into
WORK_DIR and compares it with CORPUS_TRAIN_DIR/MODEL_bsB.onnx: every node
(name, operator, domain, inputs, outputs, attributes, doc string), the graph
inputs, outputs and value_info (names, order and types) and the constants.
Prints one line per graph and exits 1 when one differs.
"""
import os
import subprocess
import sys

import onnx
from onnx import helper, numpy_helper


def node_key(n):
    attrs = sorted((a.name, str(helper.get_attribute_value(a))) for a in n.attribute)
    return (n.name, n.op_type, n.domain, tuple(n.input), tuple(n.output), tuple(attrs), n.doc_string)


def differences(a, b):
    """What differs between graphs a (the corpus's) and b (traced), as text."""
    out = []
    na, nb = [node_key(n) for n in a.node], [node_key(n) for n in b.node]
    bad = [i for i, (x, y) in enumerate(zip(na, nb)) if x != y]
    if len(na) != len(nb) or bad:
        out.append("nodes %d vs %d, %d differ%s" % (len(na), len(nb), len(bad),
                                                    " (first %s)" % na[bad[0]][0] if bad else ""))
    for field in ("input", "output", "value_info"):
        va = [(v.name, str(v.type)) for v in getattr(a, field)]
        vb = [(v.name, str(v.type)) for v in getattr(b, field)]
        if va != vb:
            out.append("%s %d vs %d differ" % (field, len(va), len(vb)))
    ia = {i.name: numpy_helper.to_array(i).tolist() for i in a.initializer}
    ib = {i.name: numpy_helper.to_array(i).tolist() for i in b.initializer}
    if ia != ib:
        out.append("constants differ: %s" % sorted(set(ia) ^ set(ib))[:4])
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: trace_train_check.py CORPUS_TRAIN_DIR WORK_DIR [MODEL ...]")
    corpus, work = sys.argv[1], sys.argv[2]
    models = sys.argv[3:] or ["alexnet", "mobilenet_v2", "resnet18"]
    tracer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_train.py")
    os.makedirs(work, exist_ok=True)
    failed = 0
    for m in models:
        for batch in (1, 32):
            name = "%s_bs%d.onnx" % (m, batch)
            ours = os.path.join(work, name)
            subprocess.run([sys.executable, tracer, m, str(batch), ours], check=True, stdout=subprocess.DEVNULL)
            diff = differences(onnx.load(os.path.join(corpus, name)).graph, onnx.load(ours).graph)
            failed += bool(diff)
            print("%s: %s" % (name, "; ".join(diff) if diff else "same as the corpus"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
