#!/usr/bin/python3
"""Prints the --dim NAME=VALUE arguments a model takes out of a wish list.

  dim_names.py MODEL NAME=VALUE...

olla-onnx refuses a --dim name that no dimension of the model uses, so a
test that binds the usual names (batch, seq...) over many models passes to
each only those it declares: the names in the dim_param expressions of its
graph inputs, outputs and value_info, at any depth of subgraphs.
"""
import re
import sys

import onnx


def names_of_graph(g, found):
    for v in list(g.input) + list(g.output) + list(g.value_info):
        names_of_type(v.type, found)
    for node in g.node:
        for a in node.attribute:
            if a.HasField("g"):
                names_of_graph(a.g, found)
            for sub in a.graphs:
                names_of_graph(sub, found)


def names_of_type(t, found):
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        for d in getattr(t, kind).shape.dim:
            if d.HasField("dim_param"):
                found.update(n for n in re.split(r"[-+*() ]+", d.dim_param) if n and not n[0].isdigit())
    elif kind in ("sequence_type", "optional_type"):
        names_of_type(getattr(t, kind).elem_type, found)
    elif kind == "map_type":
        names_of_type(t.map_type.value_type, found)


def main():
    model = onnx.load(sys.argv[1], load_external_data=False)
    found = set()
    names_of_graph(model.graph, found)
    args = [f"--dim {w}" for w in sys.argv[2:] if w.split("=")[0] in found]
    print(" ".join(args))


if __name__ == "__main__":
    main()
