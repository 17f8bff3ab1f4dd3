#!/usr/bin/python3
"""Peak live bytes of a model's intermediate tensors under its listed node
order, and the best of a number of random valid orders: an independent
cross-check of the liveness rules of passes/analysis/olla_dag.h and a quick way to see
how much a model leaves to reordering.

    /usr/bin/python3 scripts/order_peak.py model.onnx [--dim name=value ...] [--align A] [--random N] [--seed S]

Liveness (as in passes/analysis/olla_dag.h): only tensors produced by top-level nodes
count (graph inputs and initializers do not); a tensor is live from its
producer's step to its last consumer's step; a graph output to the last step;
a tensor nobody consumes only at its producer's step. A node with subgraphs
consumes every outer tensor they read. Sizes come from value_info and graph
outputs, each rounded up to a multiple of --align (default 1: raw bytes; the
converter's plans use 64); a tensor without a known size counts 0 bytes.
Unbound symbolic dimensions are an error.

What a runtime holds outside the plan counts 0 bytes, as in the README
("What is planned"): a Constant node's output (a constant, held with the
initializers), and a view of a graph input, an initializer, a Constant or
such a view, which is never a copy: the output of Flatten, Identity,
Reshape, Squeeze or Unsqueeze (default domain, input 0 to output 0; the
views of ONNX Runtime's CPU kernels) whose size equals its input's.

With --plan-shares (a model planned by olla-onnx), the buffer sharing its
olla.plan declares is applied: a tensor that is a view of another or written
in place over it joins that tensor's buffer, a buffer counts once, live from
the first step of any of its tensors to the last, and only the tensors the
plan lists count. The peak is then of the order the plan records ("order",
the order its runtime executes) when it has one. This checks the planned
peak under sharing from the plan's own declarations, without the
converter's sharing rules.
"""

import argparse
import heapq
import ast
import json
import random
import sys

import onnx
from onnx import TensorProto

ELEM_BYTES = {
    TensorProto.FLOAT: 4, TensorProto.UINT8: 1, TensorProto.INT8: 1, TensorProto.UINT16: 2,
    TensorProto.INT16: 2, TensorProto.INT32: 4, TensorProto.INT64: 8, TensorProto.BOOL: 1,
    TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8, TensorProto.UINT32: 4, TensorProto.UINT64: 8,
    TensorProto.BFLOAT16: 2,
}


# Operators whose output 0 is a view of input 0 (ONNX Runtime's CPU kernels).
HELD_VIEW_OPS = {"Flatten", "Identity", "Reshape", "Squeeze", "Unsqueeze"}


def subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def graph_reads(graph):
    reads = {i for n in graph.node for i in n.input if i} | {o.name for o in graph.output}
    for n in graph.node:
        for g in subgraphs(n):
            reads |= graph_reads(g)
    return reads


def dim_value(expr, dims, tensor):
    """A symbolic dimension: a name bound by --dim, or an arithmetic
    expression of integers and bound names (e.g. '8*batch')."""
    if expr in dims:
        return dims[expr]
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        tree = None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a // b}

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in dims:
            return dims[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        raise SystemExit(f"order_peak: tensor '{tensor}' has symbolic dimension '{expr}'; "
                         f"bind the names in it with --dim NAME=N")
    if tree is None:
        ev(None)
    return ev(tree)


def tensor_bytes(vi, dims):
    t = vi.type.tensor_type
    if not t.HasField("shape") or t.elem_type not in ELEM_BYTES:
        return 0
    n = ELEM_BYTES[t.elem_type]
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            n *= d.dim_value
        elif d.HasField("dim_param"):
            n *= dim_value(d.dim_param, dims, vi.name)
        else:
            return 0
    return n


class Problem:
    def __init__(self, graph, dims, align=1, plan=None):
        nodes = list(graph.node)
        self.n = len(nodes)
        sizes = {v.name: -(-tensor_bytes(v, dims) // align) * align
                 for v in list(graph.value_info) + list(graph.output)}
        for v in graph.input:  # a view's input may be a graph input, an initializer or a Constant
            sizes.setdefault(v.name, -(-tensor_bytes(v, dims) // align) * align)
        consts = list(graph.initializer) + [a.t for n in nodes if n.op_type == "Constant"
                                            for a in n.attribute if a.name == "value"]
        for t, name in zip(consts, [t.name for t in graph.initializer] +
                           [n.output[0] for n in nodes if n.op_type == "Constant" and
                            any(a.name == "value" for a in n.attribute)]):
            count = 1
            for d in t.dims:
                count *= d
            sizes.setdefault(name, -(-(count * ELEM_BYTES.get(t.data_type, 0)) // align) * align)
        outputs = {o.name for o in graph.output}
        held = {i.name for i in graph.input} | {t.name for t in graph.initializer}
        self.tensors = []  # (producer, consumers, bytes, is_output)
        index = {}
        for i, node in enumerate(nodes):
            view = (node.domain in ("", "ai.onnx") and node.op_type in HELD_VIEW_OPS and node.input and
                    node.input[0] in held and node.output and
                    sizes.get(node.input[0], -1) == sizes.get(node.output[0], -2))
            for k, o in enumerate(node.output):
                if o and o not in index:
                    index[o] = len(self.tensors)
                    free = node.op_type == "Constant" or (view and k == 0)
                    if free:
                        held.add(o)
                    self.tensors.append([i, set(), 0 if free else sizes.get(o, 0), o in outputs])
        if plan is not None:
            self.apply_plan(plan, index)
        self.preds = [set() for _ in nodes]
        for i, node in enumerate(nodes):
            reads = {x for x in node.input if x}
            for g in subgraphs(node):
                reads |= graph_reads(g)
            for r in reads:
                if r in index:
                    t = self.tensors[index[r]]
                    t[1].add(i)
                    self.preds[i].add(t[0])

    def apply_plan(self, plan, index):
        """Only the listed tensors count; a sharing tensor adds no bytes of its
        own and its buffer is the one of the tensor it shares."""
        listed = {t["name"]: t for t in plan["tensors"]}
        self.buffer = list(range(len(self.tensors)))
        for name, i in index.items():
            if name not in listed:
                self.tensors[i][2] = 0
        for t in plan["tensors"]:
            if "shares" in t and t["name"] in index and t["shares"] in index:
                i = index[t["name"]]
                self.buffer[i] = index[t["shares"]]
                self.tensors[i][2] = 0

    def root(self, i):
        while self.buffer[i] != i:
            i = self.buffer[i]
        return i

    def peak(self, order):
        step = [0] * self.n
        for s, v in enumerate(order):
            step[v] = s
        delta = [0] * (self.n + 1)
        span = {}
        for i, (producer, consumers, size, is_output) in enumerate(self.tensors):
            first = step[producer]
            last = self.n - 1 if is_output else max([first] + [step[c] for c in consumers])
            b = self.root(i) if hasattr(self, "buffer") else i
            lo, hi = span.get(b, (first, last))
            span[b] = (min(lo, first), max(hi, last))
        for b, (first, last) in span.items():
            size = self.tensors[b][2]
            delta[first] += size
            delta[last + 1] -= size
        live, best = 0, 0
        for s in range(self.n):
            live += delta[s]
            best = max(best, live)
        return best

    def random_order(self, rnd):
        succs = [[] for _ in range(self.n)]
        indeg = [0] * self.n
        for v, ps in enumerate(self.preds):
            for p in ps:
                succs[p].append(v)
                indeg[v] += 1
        ready = [v for v in range(self.n) if indeg[v] == 0]
        order = []
        while ready:
            v = ready.pop(rnd.randrange(len(ready)))
            order.append(v)
            for s in succs[v]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    ready.append(s)
        if len(order) != self.n:
            raise SystemExit("order_peak: the graph has a cycle")
        return order

    def listed_order_valid(self):
        return all(p < v for v, ps in enumerate(self.preds) for p in ps)

    def stable_order(self):
        """Topological order taking the earliest listed ready node first."""
        succs = [[] for _ in range(self.n)]
        indeg = [0] * self.n
        for v, ps in enumerate(self.preds):
            for p in ps:
                succs[p].append(v)
                indeg[v] += 1
        ready = [v for v in range(self.n) if indeg[v] == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            v = heapq.heappop(ready)
            order.append(v)
            for s in succs[v]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(ready, s)
        if len(order) != self.n:
            raise SystemExit("order_peak: the graph has a cycle")
        return order


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--dim", action="append", default=[], help="name=value for a symbolic dimension")
    ap.add_argument("--align", type=int, default=1, help="round every size up to a multiple of this")
    ap.add_argument("--random", type=int, default=200, help="random valid orders to try (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plan-shares", action="store_true",
                    help="apply the buffer sharing the model's olla.plan declares (see above)")
    args = ap.parse_args()
    dims = {}
    for d in args.dim:
        name, _, value = d.partition("=")
        if not name or not value.isdigit():
            raise SystemExit(f"order_peak: --dim takes name=value, got '{d}'")
        dims[name] = int(value)
    with open(args.model, "rb") as f:
        model = onnx.ModelProto.FromString(f.read())
    if args.align < 1:
        raise SystemExit("order_peak: --align takes a positive number")
    plan = None
    if args.plan_shares:
        text = next((p.value for p in model.metadata_props if p.key == "olla.plan"), None)
        if text is None:
            raise SystemExit("order_peak: --plan-shares needs a model planned by olla-onnx (no olla.plan)")
        plan = json.loads(text)
    prob = Problem(model.graph, dims, args.align, plan)
    rnd = random.Random(args.seed)
    if plan is not None and "order" in plan:
        print(f"the plan's order ({plan.get('runtime')}) peak: {prob.peak(plan['order'])} bytes ({prob.n} nodes)")
    elif prob.listed_order_valid():
        print(f"listed order peak: {prob.peak(list(range(prob.n)))} bytes ({prob.n} nodes)")
    else:
        print(f"listed order: not topological; stable topological order peak: "
              f"{prob.peak(prob.stable_order())} bytes ({prob.n} nodes)")
    if args.random > 0:
        best = min(prob.peak(prob.random_order(rnd)) for _ in range(args.random))
        print(f"best of {args.random} random orders (seed {args.seed}): {best} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
