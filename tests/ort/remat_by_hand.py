#!/usr/bin/python3
"""Rematerializes forward activations of a training step by hand, the way
olla-onnx's rewrite under --memory-limit does, to see what ONNX Runtime makes
of such a graph (tests/ort/README.md, "Recomputation by hand").

    /usr/bin/python3 tests/ort/remat_by_hand.py IN.onnx OUT.onnx
        (--recompute REGEX | --keep REGEX) [--place consumer|backward-start]
        [--loss NAME] [--allow OP ...]

The forward pass is every node the loss (the tensor NAME, default `loss`, as
scripts/make_training_models.py names it) depends on; the backward pass is
every other node: the gradients, the updates, and what only they read
(transposed weights and activations). The recomputed set R is
the forward activations read by a backward node whose names match
--recompute, or (--keep, checkpointing) all forward activations except those
matching --keep. Graph inputs, initializers, graph outputs and the outputs of
nodes that are not pure functions (Dropout, random generators,
InPlaceAccumulator*, optimizers, and batch normalization, which updates its
running statistics in its input buffers) are never in R, unless --allow names
their operator.

For each tensor t of R read by the backward pass, the producer of t is
copied under fresh names (t becomes `t.recomputed`, the copy's other outputs
`NAME.recomputed` too, or '' when nobody reads them and the operator allows
it); an input of the copy that is itself in R reads that tensor's copy, so
the chain a copy needs is copied with it; every other input reads the
original tensor (kept). Every backward node that read t reads the copy. The
originals stay where they are: the forward pass still computes them and, once
no backward node reads them, ONNX Runtime frees them early.

--place says where the copies are listed (ONNX Runtime executes its own
depth-first order of the listing, ../shared/notes/ORT_ORDER.md):
- backward-start (default): all copies just before the first backward node;
- consumer: each copy just before the first backward node that reads it (or
  reads a copy made from it), in dependency order;
- original: each copy just after the node it copies (in the forward pass).
ONNX Runtime visits a node's producers from the one listed last: a copy
listed after the producer of its reader's gradient input (consumer) runs
before that gradient's whole chain, while it is live for nothing; listed
earlier (backward-start, original) it runs right before its reader
(bench/RESULTS.md: 140.1 against 127.0 MB of heap on a CNN step).
Prints one line of JSON: {"recomputed_tensors":N, "copied_nodes":M,
"copied_ops":{op:count}, "forward_nodes":F, "backward_nodes":B}.
Exit 1 when R is empty or the loss is missing, 2 on usage errors.
"""

import argparse
import json
import re
import sys
from collections import Counter

import onnx
from onnx import helper

# Never copied. Batch normalization in training mode is here although it is
# deterministic: ONNX Runtime lets BatchNormInternal write its updated running
# statistics into its running_mean/running_var input buffers when those
# outputs are not graph outputs (a copy's are not), so a copy that runs before
# the original makes the original read statistics already updated once
# (measured: the original's running-statistics outputs then hold the update
# applied twice; bench/RESULTS.md).
IMPURE = {"Dropout", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
          "Multinomial", "InPlaceAccumulator", "InPlaceAccumulatorV2", "ZeroGradient", "AdamWOptimizer",
          "AdamOptimizer", "SGDOptimizer", "LambOptimizer", "If", "Loop", "Scan", "ATen", "PythonOp",
          "BitmaskDropout", "BiasDropout", "BatchNormInternal", "BatchNormalization"}
# Operators whose outputs after the first may be left unnamed in a copy
# (BatchNormInternal may not: ONNX Runtime 1.18 fails to load it then).
OPTIONAL_EXTRA_OUTPUTS = {"LayerNormalization", "MaxPool", "SoftmaxCrossEntropyLoss"}


def fail(msg, code=1):
    print(f"remat_by_hand.py: {msg}", file=sys.stderr)
    sys.exit(code)


def split(graph, loss):
    """Indices of the backward nodes: every node the loss does not depend on
    (the gradients, the updates, and what only they read: transposed weights
    and activations, reshaped inputs of the weight gradients)."""
    producer = {o: i for i, n in enumerate(graph.node) for o in n.output if o}
    if loss not in producer:
        return None
    forward, stack = set(), [producer[loss]]
    while stack:
        i = stack.pop()
        if i in forward:
            continue
        forward.add(i)
        stack.extend(producer[x] for x in graph.node[i].input if x in producer)
    return set(range(len(graph.node))) - forward


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--recompute", help="regex: forward activations to recompute")
    g.add_argument("--keep", help="regex: forward activations to keep; all others are recomputed")
    p.add_argument("--place", choices=["consumer", "backward-start", "original"], default="backward-start")
    p.add_argument("--loss", default="loss", help="the loss tensor (default: loss)")
    p.add_argument("--allow", action="append", default=[], metavar="OP",
                   help="copy OP although it is not a pure function (to show what goes wrong)")
    a = p.parse_args(argv)

    model = onnx.load(a.input)
    graph = model.graph
    backward = split(graph, a.loss)
    if backward is None:
        fail(f"{a.input}: no node computes the loss '{a.loss}'; give its name with --loss")
    if not backward:
        fail(f"{a.input}: every node computes the loss '{a.loss}'; there is no backward pass")
    first_backward = min(backward)

    producer = {}
    for i, n in enumerate(graph.node):
        for o in n.output:
            if o:
                producer[o] = i
    protected = {t.name for t in graph.input} | {t.name for t in graph.initializer} | {t.name for t in graph.output}
    read_by_backward = {x for i in backward for x in graph.node[i].input if x}
    pattern = re.compile(a.recompute or a.keep)

    def candidate(t):
        i = producer.get(t)
        return (i is not None and i not in backward and t not in protected
                and (graph.node[i].op_type not in IMPURE or graph.node[i].op_type in a.allow))

    forward_tensors = {t for t in producer if candidate(t)}
    if a.recompute:
        chosen = {t for t in forward_tensors if pattern.search(t)}
    else:
        chosen = {t for t in forward_tensors if not pattern.search(t)}
    # R: the chosen tensors; a copy reads the copy of an input in R, the original otherwise.
    needed = {t for t in chosen if t in read_by_backward}
    if not needed:
        fail(f"{a.input}: no forward activation read by the backward pass matches; nothing to recompute")

    names = set(producer) | protected | {n.name for n in graph.node}

    def fresh(base):
        name, k = base, 0
        while name in names:
            k += 1
            name = f"{base}_{k}"
        names.add(name)
        return name

    copy_of = {}  # tensor -> copy name
    copy_nodes = {}  # original node index -> copied NodeProto
    copy_deps = {}  # original node index -> original node indices of the copies it reads
    order = []  # original indices of copied nodes, in dependency order

    def copy(t):
        if t not in chosen:
            return t
        if t in copy_of:
            return copy_of[t]
        i = producer[t]
        node = graph.node[i]
        inputs = [copy(x) if x else x for x in node.input]
        new = helper.make_node(node.op_type, inputs, [], name=fresh(f"{node.name or node.op_type}.recomputed"),
                               domain=node.domain)
        new.attribute.extend(node.attribute)
        outs = []
        for k, o in enumerate(node.output):
            if not o:
                outs.append("")
                continue
            name = fresh(f"{o}.recomputed")
            copy_of[o] = name
            outs.append(name)
        new.output.extend(outs)
        copy_nodes[i] = new
        copy_deps[i] = {producer[x] for x in node.input if x in chosen}
        order.append(i)
        return copy_of[t]

    for t in sorted(needed, key=lambda t: producer[t]):
        copy(t)
    # Rewire the backward pass.
    for i in sorted(backward):
        node = graph.node[i]
        for k, x in enumerate(node.input):
            if x in needed:
                node.input[k] = copy_of[x]
    # Outputs nobody reads any more (the copies', and the originals' whose
    # readers now read copies): unnamed where the operator allows it, since
    # ONNX Runtime never frees a tensor nobody reads.
    read = {x for n in graph.node for x in n.input} | {x for c in copy_nodes.values() for x in c.input}
    read |= {t.name for t in graph.output}
    for c in list(copy_nodes.values()) + list(graph.node):
        if c.op_type in OPTIONAL_EXTRA_OUTPUTS:
            for k in range(1, len(c.output)):
                if c.output[k] and c.output[k] not in read:
                    c.output[k] = ""
        while len(c.output) > 1 and c.output[-1] == "":
            c.output.pop()

    # Value info of the copies: the originals'.
    info = {v.name: v for v in list(graph.value_info) + list(graph.output) + list(graph.input)}
    for o, c in copy_of.items():
        if o in info and any(c in n.output for n in copy_nodes.values()):
            v = onnx.ValueInfoProto()
            v.CopyFrom(info[o])
            v.name = c
            graph.value_info.append(v)

    # The listing.
    position = {}  # original copied node -> index of the node it is listed before
    if a.place == "backward-start":
        for i in order:
            position[i] = first_backward
    elif a.place == "original":
        # Right after the node it copies, or after the copies it reads if later.
        for i in order:
            position[i] = max([i + 1] + [position[k] for k in copy_deps[i]])
    else:
        first_reader = {}
        for j in sorted(backward):
            for x in graph.node[j].input:
                for i, c in copy_nodes.items():
                    if x in c.output and i not in first_reader:
                        first_reader[i] = j
        # A copy read only by other copies is listed before its first reader's place.
        for i in reversed(order):
            readers = [first_reader[k] for k in order if i in copy_deps[k] and k in first_reader]
            if i in first_reader:
                readers.append(first_reader[i])
            first_reader[i] = min(readers)
        position = first_reader
    nodes = list(graph.node)
    listing = []
    for j, n in enumerate(nodes):
        listing.extend(copy_nodes[i] for i in order if position[i] == j)
        listing.append(n)
    listing.extend(copy_nodes[i] for i in order if position[i] == len(nodes))
    del graph.node[:]
    graph.node.extend(listing)
    onnx.save(model, a.output)
    print(json.dumps({
        "recomputed_tensors": len(needed), "copied_nodes": len(copy_nodes),
        "copied_ops": dict(Counter(c.op_type for c in copy_nodes.values())),
        "forward_nodes": len(nodes) - len(backward), "backward_nodes": len(backward)}))


if __name__ == "__main__":
    main(sys.argv[1:])
