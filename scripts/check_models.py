#!/usr/bin/python3
"""Checks that the models under models/ are what models/README.md and
models/bad/README.md say they are.

    /usr/bin/python3 scripts/check_models.py [models-dir]

Good models: onnx.checker passes (unordered.onnx: it fails only for the node
order), every node output has a value_info with a known shape (also inside
subgraphs), and each model shows the feature it is there for. Bad models:
each has exactly the defect its name says. Prints one line per model and
exits 1 on the first model that is not as described.
"""

import os
import sys
import warnings

import onnx
from onnx import TensorProto

failures = []


def expect(cond, model, what):
    if not cond:
        failures.append(f"{model}: {what}")


def load(path):
    """Parses a model; protobuf's "not all data was converted" warnings (a
    lenient parse of invalid bytes) count as errors."""
    with open(path, "rb") as f:
        data = f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return onnx.ModelProto.FromString(data)


def subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def shaped(vi):
    t = vi.type.tensor_type
    return t.HasField("shape") and all(d.HasField("dim_value") or d.HasField("dim_param") for d in t.shape.dim)


def unsized_outputs(graph):
    """Node outputs (in graph and subgraphs) without a fully shaped value_info."""
    known = {v.name: v for v in list(graph.value_info) + list(graph.output)}
    missing = [o for n in graph.node for o in n.output if o and (o not in known or not shaped(known[o]))]
    for n in graph.node:
        for g in subgraphs(n):
            missing += unsized_outputs(g)
    return missing


def dims_of(vi):
    return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]


def check_good(d):
    checked = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".onnx"):
            continue
        path = os.path.join(d, name)
        m = load(path)
        g = m.graph
        try:
            onnx.checker.check_model(path, full_check=True)
            checker = "ok"
        except Exception as e:  # the checker raises several types
            checker = str(e).splitlines()[0]
        if name == "unordered.onnx":
            expect("topologically sorted" in checker, name, f"checker should reject only the order, said: {checker}")
        else:
            expect(checker == "ok", name, f"onnx.checker fails: {checker}")
        expect(not unsized_outputs(g), name, f"tensors without shaped value_info: {unsized_outputs(g)[:5]}")
        ops = [n.op_type for n in g.node]
        checked[name] = (m, ops)

    def need(name, cond, what):
        expect(name in checked and cond(*checked[name]), name, what)

    def order_is(ops, first, then):
        """Every `first` op comes before every `then` op in the list."""
        a = [i for i, o in enumerate(ops) if o in first]
        b = [i for i, o in enumerate(ops) if o in then]
        return a and b and max(a) < min(b)

    for train in ("mlp_train.onnx", "cnn_train.onnx"):
        need(train, lambda m, ops: all(
            any(o.name == i.name + "_new" for o in m.graph.output)
            for i in m.graph.input if i.name not in ("x", "labels")),
            "every parameter input has a _new output")
        need(train, lambda m, ops: ops[-1] == "Sub" and ops[-2] == "Mul" and
             min(i for i, n in enumerate(m.graph.node) if n.output[0].endswith("_step")) >
             max(i for i, n in enumerate(m.graph.node) if n.output[0].startswith("grad_")),
             "all updates come after all gradients")
    need("mlp_train.onnx", lambda m, ops: ops.count("MatMul") >= 4 + 3 + 4 and "Where" in ops,
         "forward and backward MatMuls and Relu gradients")
    need("cnn_train.onnx", lambda m, ops: "ConvTranspose" in ops and ops.count("Conv") >= 6,
         "conv forward plus Conv/ConvTranspose gradients")

    def depth2_reads_outer(m, ops):
        outer = {n.output[0] for n in m.graph.node} | {t.name for t in m.graph.initializer}
        for n in m.graph.node:
            if n.op_type != "If":
                continue
            for br in subgraphs(n):
                for inner in br.node:
                    if inner.op_type == "Loop":
                        for body in subgraphs(inner):
                            if any(i in outer for bn in body.node for i in bn.input):
                                return True
        return False
    need("if_loop.onnx", lambda m, ops: "If" in ops and "Loop" in ops, "an If and a Loop")
    need("if_loop.onnx", depth2_reads_outer, "a Loop inside an If branch reads an outermost tensor")

    need("multi_output.onnx", lambda m, ops: any("" in n.output for n in m.graph.node),
         "an output with an empty name")
    need("multi_output.onnx", lambda m, ops: {i.name for i in m.graph.input} & {o.name for o in m.graph.output},
         "a graph output that is a graph input")
    need("multi_output.onnx", lambda m, ops: {t.name for t in m.graph.initializer} & {o.name for o in m.graph.output},
         "a graph output that is an initializer")
    need("multi_output.onnx", lambda m, ops: {"Split", "TopK", "MaxPool", "BatchNormalization", "LSTM"} <= set(ops),
         "Split, TopK, MaxPool, BatchNormalization and LSTM nodes")

    def unconsumed_named(m, ops):
        used = {i for n in m.graph.node for i in n.input} | {o.name for o in m.graph.output}
        return any(o and o not in used for n in m.graph.node for o in n.output)
    need("multi_output.onnx", unconsumed_named, "a named output nobody consumes")

    need("symbolic_dims.onnx", lambda m, ops: dims_of(m.graph.input[0])[0] == "batch" and
         all(dims_of(v)[0] == "batch" for v in m.graph.value_info), "'batch' in the input and every value_info")

    def not_topological(m, ops):
        seen = {i.name for i in m.graph.input} | {t.name for t in m.graph.initializer}
        for n in m.graph.node:
            if any(i and i not in seen for i in n.input):
                return True
            seen.update(n.output)
        return False
    need("unordered.onnx", not_topological, "nodes out of topological order")

    def external_ok(m, ops):
        for t in m.graph.initializer:
            info = {e.key: e.value for e in t.external_data}
            if t.data_location != TensorProto.EXTERNAL or os.path.isabs(info.get("location", "/")):
                return False
            if not os.path.isfile(os.path.join(d, info["location"])):
                return False
        return len(m.graph.initializer) >= 2
    need("external_data.onnx", external_ok, "every initializer external, relative and present")
    need("external_data.onnx", lambda m, ops: any("offset" in {e.key for e in t.external_data}
                                                   for t in m.graph.initializer), "offsets given")
    need("infer_small.onnx", lambda m, ops: "Conv" in ops and "Add" in ops, "conv branches")
    for name in checked:
        print(f"good {name}: {'as described' if not any(f.startswith(name) for f in failures) else 'NOT as described'}")


def check_bad(d):
    def parses(name):
        try:
            load(os.path.join(d, name))
            return True
        except Exception:
            return False

    expect(not parses("not_onnx.onnx"), "bad/not_onnx.onnx", "parses as a model")
    expect(not parses("truncated.onnx"), "bad/truncated.onnx", "parses as a model")
    m = load(os.path.join(d, "no_graph.onnx"))
    expect(not m.HasField("graph") and m.ir_version > 0 and len(m.opset_import) > 0, "bad/no_graph.onnx",
           "should have ir_version and opset but no graph")

    m = load(os.path.join(d, "two_producers.onnx"))
    outs = [o for n in m.graph.node for o in n.output]
    expect(len(outs) != len(set(outs)), "bad/two_producers.onnx", "no tensor with two producers")

    m = load(os.path.join(d, "missing_input.onnx"))
    avail = {i.name for i in m.graph.input} | {o for n in m.graph.node for o in n.output}
    expect(any(i not in avail for n in m.graph.node for i in n.input), "bad/missing_input.onnx",
           "every node input is produced")

    m = load(os.path.join(d, "cycle.onnx"))
    prod = {o: n.name for n in m.graph.node for o in n.output}
    deps = {n.name: {prod[i] for i in n.input if i in prod} for n in m.graph.node}
    done, progress = set(), True
    while progress:
        progress = False
        for k, v in deps.items():
            if k not in done and v <= done:
                done.add(k)
                progress = True
    expect(len(done) < len(deps), "bad/cycle.onnx", "has a topological order")

    for name, loc in (("external_escape.onnx", "../outside.bin"), ("external_absolute.onnx", "/etc/passwd"),
                      ("external_missing.onnx", "nope.bin")):
        m = load(os.path.join(d, name))
        locs = [e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"]
        expect(locs == [loc], f"bad/{name}", f"location should be {loc}, is {locs}")
    expect(not os.path.exists(os.path.join(d, "nope.bin")), "bad/external_missing.onnx", "nope.bin exists")

    m = load(os.path.join(d, "unsized_op.onnx"))
    custom = [n for n in m.graph.node if n.domain not in ("", "ai.onnx")]
    vis = {v.name for v in list(m.graph.value_info) + list(m.graph.output)}
    expect(custom and all(o not in vis for n in custom for o in n.output), "bad/unsized_op.onnx",
           "a custom-domain node output has value_info")
    for name in sorted(os.listdir(d)):
        if name.endswith(".onnx"):
            ok = not any(f.startswith(f"bad/{name}") for f in failures)
            print(f"bad {name}: {'as described' if ok else 'NOT as described'}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "models"))
    check_good(d)
    check_bad(os.path.join(d, "bad"))
    for f in failures:
        print(f"FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
