#!/usr/bin/python3
"""When does ONNX Runtime run the copies a rematerialization added: late,
just before the nodes that read them, or early?

    /usr/bin/python3 tests/ort/copy_lateness.py IN.onnx OUT.onnx ORDER

OUT.onnx is IN.onnx rewritten; its copies are its nodes whose names IN.onnx
does not have. ORDER is the order ONNX Runtime executed OUT.onnx in, one
node name per line (`train_run.mjs OUT.onnx --order | jq -r '.executed[]'`,
or olla-exec-order's prediction). For each copy read by some node, the gap is
the number of nodes executed after the copy and before its first reader (0:
right before it). Prints one line of JSON:
  {"copies":N, "gap_median":M, "gap_p90":P, "gap_max":X, "late_fraction":F,
   "latest_gaps":[[gap, name, op]...], "gaps":[[gap, name, op]...]}
late_fraction is the fraction of copies with a gap of at most 8 nodes;
latest_gaps are the five largest, gaps all of them, smallest first. Exit 1 when a node of OUT.onnx that runs is
missing from ORDER or OUT.onnx adds no node, 2 on usage errors.
"""
import json
import sys

import onnx

LATE_GAP = 8


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    before = {n.name for n in onnx.load(argv[0]).graph.node}
    graph = onnx.load(argv[1]).graph
    with open(argv[2]) as f:
        order = [line.strip() for line in f if line.strip()]
    position = {name: i for i, name in enumerate(order)}
    readers = {}
    for n in graph.node:
        for x in n.input:
            readers.setdefault(x, []).append(n.name)
    gaps = []
    for n in graph.node:
        if n.name in before:
            continue
        reads = [r for o in n.output if o for r in readers.get(o, [])]
        if not reads:
            continue
        missing = [x for x in [n.name] + reads if x not in position]
        if missing:
            print(f"copy_lateness.py: {argv[2]}: node '{missing[0]}' of {argv[1]} did not run; "
                  "give the order of this model", file=sys.stderr)
            return 1
        first = min(position[r] for r in reads)
        gaps.append((first - position[n.name] - 1, n.name, n.op_type))
    if not gaps:
        print(f"copy_lateness.py: {argv[1]} adds no node read by another to {argv[0]}", file=sys.stderr)
        return 1
    gaps.sort()
    values = [g for g, _, _ in gaps]
    print(json.dumps({
        "copies": len(gaps), "gap_median": values[len(values) // 2],
        "gap_p90": values[min(len(values) - 1, (len(values) * 9) // 10)], "gap_max": values[-1],
        "late_fraction": round(sum(1 for g in values if g <= LATE_GAP) / len(values), 4),
        "latest_gaps": [list(g) for g in gaps[-5:]], "gaps": [list(g) for g in gaps]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
