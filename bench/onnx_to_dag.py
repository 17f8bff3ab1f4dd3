#!/usr/bin/python3
"""Convert an ONNX model into the olla text DAG format (bench/DAGFORMAT.md).

usage: /usr/bin/python3 bench/onnx_to_dag.py model.onnx [--dim NAME=VALUE ...] > model.dag

Nodes keep the model's order (node i of the graph is DAG node i), so the
identity permutation is the input order. Graph inputs and initializers are not
DAG tensors. Sizes come from value_info and graph outputs; a tensor whose type
or shape is unknown (or has a symbolic dimension not given with --dim) gets
bytes 0. Names used inside subgraphs (If/Loop/Scan bodies) that refer to outer
tensors count as uses by the node owning the subgraph.
"""
import sys

import onnx
from onnx import TensorProto

ELEM_BYTES = {
    TensorProto.FLOAT: 4, TensorProto.UINT8: 1, TensorProto.INT8: 1,
    TensorProto.UINT16: 2, TensorProto.INT16: 2, TensorProto.INT32: 4,
    TensorProto.INT64: 8, TensorProto.BOOL: 1, TensorProto.FLOAT16: 2,
    TensorProto.DOUBLE: 8, TensorProto.UINT32: 4, TensorProto.UINT64: 8,
    TensorProto.COMPLEX64: 8, TensorProto.COMPLEX128: 16, TensorProto.BFLOAT16: 2,
}


def type_bytes(vi, dims):
    t = vi.type
    if not t.HasField("tensor_type"):
        return 0
    tt = t.tensor_type
    elem = ELEM_BYTES.get(tt.elem_type)
    if elem is None or not tt.HasField("shape"):
        return 0
    n = 1
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            n *= d.dim_value
        elif d.HasField("dim_param") and d.dim_param in dims:
            n *= dims[d.dim_param]
        else:
            return 0
    return n * elem


def subgraph_names(node, out):
    for a in node.attribute:
        graphs = list(a.g.node and [a.g] or []) + list(a.graphs)
        for g in graphs:
            for n in g.node:
                out.update(x for x in n.input if x)
                subgraph_names(n, out)


def clean(s):
    return s.replace(" ", "_").replace("\n", "_") or "-"


def main(argv):
    path = None
    dims = {}
    i = 1
    while i < len(argv):
        if argv[i] == "--dim" and i + 1 < len(argv):
            k, v = argv[i + 1].split("=", 1)
            dims[k] = int(v)
            i += 2
        else:
            path = argv[i]
            i += 1
    if not path:
        sys.stderr.write(__doc__)
        return 2
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    external = {x.name for x in g.input} | {x.name for x in g.initializer}
    infos = {}
    for vi in list(g.value_info) + list(g.output):
        infos[vi.name] = vi
    outputs = {x.name for x in g.output}
    tensors = []  # (name, producer)
    tid = {}
    uses = []
    for v, node in enumerate(g.node):
        for name in node.input:
            if name in tid:
                uses.append((v, tid[name]))
        inner = set()
        subgraph_names(node, inner)
        for name in sorted(inner):
            if name in tid:
                uses.append((v, tid[name]))
        for name in node.output:
            if not name or name in external or name in tid:
                continue
            tid[name] = len(tensors)
            tensors.append((name, v))
    w = sys.stdout.write
    w("olla-dag 1\n")
    w("nodes %d tensors %d\n" % (len(g.node), len(tensors)))
    for v, node in enumerate(g.node):
        w("node %d %s %s %s\n" % (v, clean(node.domain), clean(node.op_type), clean(node.name)))
    for e, (name, prod) in enumerate(tensors):
        b = type_bytes(infos[name], dims) if name in infos else 0
        w("tensor %d %d %d %d %s\n" % (e, prod, b, 1 if name in outputs else 0, clean(name)))
    for v, e in uses:
        w("use %d %d\n" % (v, e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
