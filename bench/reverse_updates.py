#!/usr/bin/python3
"""Lists the parameter updates of a training step in the reverse of their
order (the update of the last parameter to get its gradient first), keeping
the listing topological: the nodes that produce a graph output and read no
other node's output only through the update chain (`p.step` Mul, `p.updated`
Sub, as scripts/make_training_models.py writes them) are moved, as pairs, to
the end of the listing in reverse order. ONNX Runtime expands the graph's
leaves in listing order (../shared/notes/ORT_ORDER.md), so this changes when
each weight gradient runs, not what is computed. For bench/ort_remat_bench.sh.

    /usr/bin/python3 bench/reverse_updates.py IN.onnx OUT.onnx
"""
import sys

import onnx


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    model = onnx.load(argv[0])
    g = model.graph
    outputs = {o.name for o in g.output}
    subs = [n for n in g.node if n.op_type == "Sub" and n.output[0] in outputs and n.output[0].endswith(".updated")]
    producer = {o: n for n in g.node for o in n.output}
    pairs = []
    for s in subs:
        steps = [producer[x] for x in s.input if x in producer and producer[x].op_type == "Mul"]
        pairs.append(steps + [s])
    moved = {id(n) for p in pairs for n in p}
    rest = [n for n in g.node if id(n) not in moved]
    listing = rest + [n for p in reversed(pairs) for n in p]
    del g.node[:]
    g.node.extend(listing)
    onnx.save(model, argv[1])
    print(f"{argv[1]}: {len(pairs)} updates listed in reverse")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
