#!/usr/bin/python3
"""Writes a copy of an ONNX model whose nodes are listed in another valid
topological order (chosen at random from a seed), in the graph and in every
subgraph. Nothing else changes: initializers, external data references,
value_info and metadata are copied as they are, so the copy must compute
exactly the same outputs.

    /usr/bin/python3 scripts/permute_nodes.py in.onnx out.onnx [--seed N]

A node that holds subgraphs depends on the producers of every outer tensor
its subgraphs read. Put out.onnx in the folder of in.onnx (or copy the data
files beside it) when the model has external data.
"""

import argparse
import random
import sys

import onnx


def subgraph_reads(graph):
    """Names read by nodes of graph and its nested subgraphs that are not
    defined inside them (candidate outer-scope references)."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for n in graph.node:
        defined.update(o for o in n.output if o)
    reads = set()
    for n in graph.node:
        reads.update(i for i in n.input if i)
        for g in node_subgraphs(n):
            reads |= subgraph_reads(g)
    for o in graph.output:
        reads.add(o.name)
    return reads - defined


def node_subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def random_topological_order(graph, rnd):
    nodes = list(graph.node)
    producer = {}
    for idx, n in enumerate(nodes):
        for o in n.output:
            if o:
                producer[o] = idx
    preds = []
    for n in nodes:
        reads = {i for i in n.input if i}
        for g in node_subgraphs(n):
            reads |= subgraph_reads(g)
        preds.append({producer[r] for r in reads if r in producer})
    succs = [[] for _ in nodes]
    indeg = [0] * len(nodes)
    for idx, ps in enumerate(preds):
        for p in ps:
            succs[p].append(idx)
            indeg[idx] += 1
    ready = [i for i in range(len(nodes)) if indeg[i] == 0]
    order = []
    while ready:
        pick = ready.pop(rnd.randrange(len(ready)))
        order.append(pick)
        for s in succs[pick]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    if len(order) != len(nodes):
        raise SystemExit(f"permute_nodes: graph '{graph.name}' has a cycle; it has no topological order")
    return order


def permute(graph, rnd, stats):
    for n in graph.node:
        for g in node_subgraphs(n):
            permute(g, rnd, stats)
    order = random_topological_order(graph, rnd)
    stats[0] += len(order)
    stats[1] += sum(1 for pos, idx in enumerate(order) if pos != idx)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes[i] for i in order)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with open(args.input, "rb") as f:
        model = onnx.ModelProto.FromString(f.read())
    rnd = random.Random(args.seed)
    stats = [0, 0]
    permute(model.graph, rnd, stats)
    with open(args.output, "wb") as f:
        f.write(model.SerializeToString())
    print(f"permute_nodes: {args.output}: {stats[1]} of {stats[0]} nodes moved", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
