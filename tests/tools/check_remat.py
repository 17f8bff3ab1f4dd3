#!/usr/bin/env python3
"""Checks the structure of a model olla-onnx rewrote with recomputation
against its input, from the two files alone:

  check_remat.py IN.onnx OUT.onnx [--min-copies N]

- every node of IN is in OUT once, with the same operator, domain and
  attributes, the same outputs, and inputs that are IN's names or copies of
  them (NAME.recomputeK of the same tensor);
- every other node of OUT is a copy: the same operator, domain and
  attributes as the IN node whose outputs it recomputes (its outputs are
  NAME.recomputeK of that node's outputs, or left out), and its operator is
  one olla-onnx may copy (deterministic, no side effect);
- graph inputs, outputs and initializers are unchanged;
- OUT's node list is topological: every input is a graph input, an
  initializer, or the output of an earlier node;
- with --min-copies, at least N copies.
Prints one line and exits 0, or names the first fault and exits 1.
"""
import argparse
import re
import sys

import onnx

# Operators that must never be copied (a sample of the deny list: random,
# state updates, control flow).
NEVER = {("", "Dropout"), ("", "RandomNormal"), ("", "RandomUniform"), ("", "RandomNormalLike"),
         ("", "RandomUniformLike"), ("", "Bernoulli"), ("", "Multinomial"), ("", "If"), ("", "Loop"), ("", "Scan"),
         ("com.microsoft", "AdamWOptimizer"), ("com.microsoft", "AdamOptimizer"), ("com.microsoft", "SGDOptimizer"),
         ("com.microsoft", "InPlaceAccumulatorV2"), ("com.microsoft", "InPlaceAccumulator"),
         ("com.microsoft", "ZeroGradient"), ("com.microsoft", "BitmaskDropout"), ("com.microsoft", "BiasDropout")}
NEVER_ATEN = {"bernoulli", "native_dropout", "empty", "empty_like", "rand", "randn", "randint", "multinomial",
              "normal", "uniform", "dropout"}
COPY = re.compile(r"^(.*)\.recompute(\d+)_*$")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def domain(n):
    return "" if n.domain in ("", "ai.onnx") else n.domain


def attrs(n):
    return sorted(a.SerializeToString() for a in n.attribute)


def base_name(name):
    m = COPY.match(name)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--min-copies", type=int, default=0)
    a = ap.parse_args()
    mi = onnx.load(a.inp, load_external_data=False)
    mo = onnx.load(a.out, load_external_data=False)
    gi, go = mi.graph, mo.graph
    for what in ("input", "output", "initializer"):
        if [x.SerializeToString() for x in getattr(gi, what)] != [x.SerializeToString() for x in getattr(go, what)]:
            fail(f"graph {what}s changed")
    produced_in = {}
    for n in gi.node:
        for o in n.output:
            if o:
                produced_in[o] = n
    given = {x.name for x in gi.input} | {x.name for x in gi.initializer}
    known = set(given)
    originals, copies = {}, 0
    by_outputs = {tuple(n.output): n for n in gi.node}
    for n in go.node:
        for x in n.input:
            if x and x not in known:
                fail(f"node {n.name or n.op_type} reads '{x}' before any node makes it")
            base = base_name(x) if x else None
            if x and x not in given and x not in produced_in and not (base and base in produced_in):
                fail(f"node {n.name or n.op_type} reads '{x}', neither an input's tensor nor a copy of one")
        if tuple(n.output) in by_outputs:
            src = by_outputs[tuple(n.output)]
            if tuple(n.output) in originals:
                fail(f"node {n.name or n.op_type} appears twice")
            originals[tuple(n.output)] = n
            copy_of = False
        else:
            named = [o for o in n.output if o]
            bases = {base_name(o) for o in named}
            if not named or None in bases:
                fail(f"node {n.name or n.op_type} is neither an input node nor a copy (outputs {list(n.output)})")
            src = produced_in.get(next(iter(bases)))
            if src is None or any(produced_in.get(b) is not src for b in bases):
                fail(f"copy {n.name or n.op_type} recomputes outputs of different nodes")
            for k, o in enumerate(n.output):
                if o and base_name(o) != src.output[k]:
                    fail(f"copy {n.name or n.op_type}: output {k} '{o}' is not a copy of '{src.output[k]}'")
            copy_of = True
            copies += 1
            if (domain(n), n.op_type) in NEVER:
                fail(f"copy of {n.op_type}, which may not be recomputed")
            if n.op_type == "ATen":
                op = [x.s.decode() for x in n.attribute if x.name == "operator"]
                if op and op[0].split(".")[0] in NEVER_ATEN:
                    fail(f"copy of ATen {op[0]}, which may not be recomputed")
            if any(x.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for x in n.attribute):
                fail(f"copy of {n.op_type}, which holds a subgraph")
        if n.op_type != src.op_type or domain(n) != domain(src) or attrs(n) != attrs(src):
            fail(f"node {n.name or n.op_type} differs from the node it is{' a copy of' if copy_of else ''}")
        if len(n.input) != len(src.input):
            fail(f"node {n.name or n.op_type} has {len(n.input)} inputs, the input's has {len(src.input)}")
        for x, y in zip(n.input, src.input):
            if x != y and base_name(x) != y:
                fail(f"node {n.name or n.op_type} reads '{x}' where the input's reads '{y}'")
        known.update(o for o in n.output if o)
    if len(originals) != len(gi.node):
        fail(f"{len(gi.node) - len(originals)} nodes of the input are missing")
    if copies < a.min_copies:
        fail(f"{copies} copies, expected at least {a.min_copies}")
    print(f"ok: {len(gi.node)} nodes kept, {copies} copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
