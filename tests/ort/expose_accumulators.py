#!/usr/bin/python3
"""Makes the gradients of an ONNX Runtime training artifact visible to the
web API: every InPlaceAccumulatorV2 node gets its optional second output (the
accumulated buffer), named `BUFFER.out` after its first input, and that output
becomes a graph output with the buffer's type and shape. ONNX Runtime's web
API returns graph outputs only; without this the gradients a training step
computes are invisible to a comparison of two runs.

    /usr/bin/python3 tests/ort/expose_accumulators.py IN.onnx OUT.onnx

Prints the number of outputs added; exit 1 when the model has no
InPlaceAccumulatorV2 node, 2 on usage errors.
"""
import sys

import onnx


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    model = onnx.load(argv[0])
    g = model.graph
    info = {v.name: v for v in list(g.input) + list(g.value_info) + list(g.output)}
    names = {o for n in g.node for o in n.output} | {v.name for v in g.input} | {t.name for t in g.initializer}
    added = 0
    for n in g.node:
        if n.op_type != "InPlaceAccumulatorV2" or len(n.output) > 1:
            continue
        buf = n.input[0]
        name = f"{buf}.out"
        if name in names:
            print(f"expose_accumulators.py: {argv[0]}: the name '{name}' is taken", file=sys.stderr)
            return 1
        n.output.append(name)
        out = onnx.ValueInfoProto()
        out.CopyFrom(info[buf])
        out.name = name
        g.output.append(out)
        added += 1
    if not added:
        print(f"expose_accumulators.py: {argv[0]}: no InPlaceAccumulatorV2 node to expose", file=sys.stderr)
        return 1
    onnx.save(model, argv[1])
    print(f"{argv[1]}: {added} accumulated gradients exposed as outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
