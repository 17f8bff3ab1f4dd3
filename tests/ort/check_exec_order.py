#!/usr/bin/python3
"""Checks an executed order printed by exec_order.mjs against the model.

    /usr/bin/python3 tests/ort/check_exec_order.py model.onnx order.txt [--all-nodes]

Maps every printed name back to a node of graph.node (a node with an empty
name is printed as OpType_i, i its index among the non-Constant nodes, which
is how ONNX Runtime numbers nodes at load) and checks that
  - every printed name is a node of the model, printed once;
  - every node runs after the producers of its inputs that ran (a producer
    that did not run, such as a Constant folded at load, is not required);
  - with --all-nodes, every node except Constant nodes ran.
Prints "ok: N nodes ran, M of the model's nodes did not run (by op type)" and
exits 0, or prints every problem found and exits 1. Needs the onnx package.
"""
import collections
import sys

import onnx


def node_names(graph):
    """The name ONNX Runtime reports for each node (None for Constant nodes)."""
    names, index = [], 0
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            names.append(None)
            continue
        names.append(node.name if node.name else f"{node.op_type}_{index}")
        index += 1
    return names


def check(model_path, order_path, all_nodes):
    graph = onnx.load(model_path, load_external_data=False).graph
    names = node_names(graph)
    by_name = {}
    for i, name in enumerate(names):
        if name is not None:
            if name in by_name:
                return [f"two nodes are reported as '{name}'; give every node a unique name"]
            by_name[name] = i
    with open(order_path, encoding="utf-8") as f:
        order = [line.rstrip("\n") for line in f]

    problems, position = [], {}
    for step, name in enumerate(order):
        if name not in by_name:
            problems.append(f"line {step + 1}: '{name}' is not a node of {model_path}")
        elif by_name[name] in position:
            problems.append(f"line {step + 1}: node '{name}' ran twice")
        else:
            position[by_name[name]] = step

    producer = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out:
                producer[out] = i
    for i, step in position.items():
        for inp in graph.node[i].input:
            p = producer.get(inp)
            if p is not None and p in position and position[p] > step:
                problems.append(f"node '{names[i]}' ran before '{names[p]}', the producer of its input '{inp}'")

    missing = collections.Counter(
        graph.node[i].op_type for i, name in enumerate(names) if name is not None and i not in position)
    if all_nodes and missing:
        problems.append(f"nodes that did not run: {dict(missing)}")
    if not problems:
        print(f"ok: {len(position)} nodes ran, {sum(missing.values())} of the model's nodes did not run"
              f" {dict(missing) if missing else ''}".rstrip())
    return problems


def main():
    args = [a for a in sys.argv[1:] if a != "--all-nodes"]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    problems = check(args[0], args[1], "--all-nodes" in sys.argv[1:])
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
