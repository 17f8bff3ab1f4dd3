#!/usr/bin/python3
"""Regenerates every test model under models/ (and models/bad/).

Run with /usr/bin/python3 (needs the onnx and numpy packages):

    /usr/bin/python3 scripts/make_models.py [--out DIR]

The output is deterministic: the same onnx/numpy versions give byte-identical
files, so tests can regenerate into a scratch folder and compare. Every good
model passes onnx.checker.check_model except unordered.onnx (the checker
insists on topological order, which is exactly what that model breaks).
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 17
IR_VERSION = 8
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL


# ---------------------------------------------------------------- helpers


def rng(seed):
    return np.random.default_rng(seed)


def finish(graph, name, doc, check=True, infer=True):
    """Wraps a graph in a model, fills value_info by shape inference and
    verifies that every intermediate tensor (also inside subgraphs) has a
    fully known type and shape."""
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="olla-onnx make_models.py",
        doc_string=doc,
    )
    model.ir_version = IR_VERSION
    if infer:
        model = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        require_full_value_info(model.graph, name)
    if check:
        onnx.checker.check_model(model, full_check=True)
    return model


def graph_tensors(graph):
    produced = []
    for node in graph.node:
        produced.extend(o for o in node.output if o)
    return produced


def require_full_value_info(graph, where):
    known = {}
    for vi in list(graph.value_info) + list(graph.output) + list(graph.input):
        known[vi.name] = vi
    for init in graph.initializer:
        known.setdefault(init.name, None)
    for t in graph_tensors(graph):
        vi = known.get(t)
        if vi is None:
            raise SystemExit(f"{where}: tensor '{t}' has no value_info")
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            raise SystemExit(f"{where}: tensor '{t}' has no shape")
        for d in tt.shape.dim:
            if not d.HasField("dim_value") and not d.HasField("dim_param"):
                raise SystemExit(f"{where}: tensor '{t}' has an unknown dimension")
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                require_full_value_info(attr.g, f"{where}/{node.name}.{attr.name}")


def init(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def i64(a):
    return np.asarray(a, dtype=np.int64)


class Nodes:
    """Collects nodes and gives each a unique, readable name."""

    def __init__(self):
        self.nodes = []
        self.count = {}

    def add(self, op, inputs, outputs, domain=None, **attrs):
        n = self.count.get(op, 0)
        self.count[op] = n + 1
        node = helper.make_node(op, inputs, outputs, name=f"{op}_{n}", domain=domain, **attrs)
        self.nodes.append(node)
        return outputs[0] if len(outputs) == 1 else outputs


def save(model, out_dir, filename):
    path = os.path.join(out_dir, filename)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


# ------------------------------------------------------------ loss helper


def softmax_cross_entropy(g, logits, labels, batch):
    """Mean softmax cross entropy with one-hot float labels, built from
    standard ops; returns (loss, dlogits)."""
    m = g.add("ReduceMax", [logits], ["sce_max"], axes=[1], keepdims=1)
    zs = g.add("Sub", [logits, m], ["sce_shifted"])
    e = g.add("Exp", [zs], ["sce_exp"])
    s = g.add("ReduceSum", [e, "axes_1"], ["sce_sum"], keepdims=1)
    ls = g.add("Log", [s], ["sce_logsum"])
    logp = g.add("Sub", [zs, ls], ["sce_logp"])
    yl = g.add("Mul", [labels, logp], ["sce_ylogp"])
    per = g.add("ReduceSum", [yl, "axes_1"], ["sce_per_sample"], keepdims=0)
    mean = g.add("ReduceMean", [per], ["sce_mean"], axes=[0], keepdims=0)
    loss = g.add("Neg", [mean], ["loss"])
    # d loss / d logits = (softmax - labels) / batch
    p = g.add("Div", [e, s], ["sce_softmax"])
    diff = g.add("Sub", [p, labels], ["sce_diff"])
    dlogits = g.add("Mul", [diff, "inv_batch"], ["d_logits"])
    inits = [init("axes_1", i64([1])), init("inv_batch", f32(1.0 / batch))]
    return loss, dlogits, inits


# ------------------------------------------------------------------ models


def make_mlp_train(batch=8, dims=(128, 256, 256, 256, 10), name="mlp_train"):
    dims = list(dims)
    layers = len(dims) - 1
    g = Nodes()
    inputs = [helper.make_tensor_value_info("x", FLOAT, [batch, dims[0]]),
              helper.make_tensor_value_info("labels", FLOAT, [batch, dims[-1]])]
    for i in range(layers):
        inputs.append(helper.make_tensor_value_info(f"W{i}", FLOAT, [dims[i], dims[i + 1]]))
        inputs.append(helper.make_tensor_value_info(f"b{i}", FLOAT, [dims[i + 1]]))
    inits = [init("lr", f32(0.01)), init("zero", f32(0.0)), init("axes_0", i64([0]))]

    # forward
    h = ["x"]
    pre = []
    for i in range(layers):
        mm = g.add("MatMul", [h[-1], f"W{i}"], [f"fc{i}_mm"])
        a = g.add("Add", [mm, f"b{i}"], [f"fc{i}_out"])
        pre.append(a)
        if i < layers - 1:
            h.append(g.add("Relu", [a], [f"relu{i}"]))
    loss, d, sce_inits = softmax_cross_entropy(g, pre[-1], "labels", batch)
    inits += sce_inits

    # backward
    grads = {}
    for i in reversed(range(layers)):
        ht = g.add("Transpose", [h[i]], [f"fc{i}_in_T"], perm=[1, 0])
        grads[f"W{i}"] = g.add("MatMul", [ht, d], [f"grad_W{i}"])
        grads[f"b{i}"] = g.add("ReduceSum", [d, "axes_0"], [f"grad_b{i}"], keepdims=0)
        if i > 0:
            wt = g.add("Transpose", [f"W{i}"], [f"W{i}_T"], perm=[1, 0])
            dh = g.add("MatMul", [d, wt], [f"grad_relu{i - 1}"])
            mask = g.add("Greater", [pre[i - 1], "zero"], [f"relu{i - 1}_mask"])
            d = g.add("Where", [mask, dh, "zero"], [f"grad_fc{i - 1}_out"])

    # SGD updates
    outputs = [helper.make_tensor_value_info("loss", FLOAT, [])]
    for i in range(layers):
        for p, shape in ((f"W{i}", [dims[i], dims[i + 1]]), (f"b{i}", [dims[i + 1]])):
            step = g.add("Mul", ["lr", grads[p]], [f"{p}_step"])
            g.add("Sub", [p, step], [f"{p}_new"])
            outputs.append(helper.make_tensor_value_info(f"{p}_new", FLOAT, shape))
    graph = helper.make_graph(g.nodes, name, inputs, outputs, inits)
    return finish(graph, name, f"{layers}-layer MLP training step: forward, loss, backward, SGD")


def conv_grads(g, x, w, dy, name, need_dx):
    """Gradients of y = Conv(x, w, 3x3, stride 1, pad 1) from standard ops."""
    xt = g.add("Transpose", [x], [f"{name}_in_T"], perm=[1, 0, 2, 3])
    dyt = g.add("Transpose", [dy], [f"{name}_dy_T"], perm=[1, 0, 2, 3])
    dwt = g.add("Conv", [xt, dyt], [f"{name}_dW_T"], pads=[1, 1, 1, 1])
    dw = g.add("Transpose", [dwt], [f"grad_{name}_W"], perm=[1, 0, 2, 3])
    db = g.add("ReduceSum", [dy, "axes_023"], [f"grad_{name}_b"], keepdims=0)
    dx = None
    if need_dx:
        dx = g.add("ConvTranspose", [dy, w], [f"grad_{name}_in"], pads=[1, 1, 1, 1])
    return dw, db, dx


def make_cnn_train(n=8, hw=16, chans=(3, 16, 16, 32), name="cnn_train"):
    classes = 10
    chans = list(chans)
    g = Nodes()
    inputs = [helper.make_tensor_value_info("x", FLOAT, [n, chans[0], hw, hw]),
              helper.make_tensor_value_info("labels", FLOAT, [n, classes])]
    params = []
    for i in range(3):
        params.append((f"conv{i}_W", [chans[i + 1], chans[i], 3, 3]))
        params.append((f"conv{i}_b", [chans[i + 1]]))
    flat = chans[3] * (hw // 4) * (hw // 4)
    params += [("fc_W", [classes, flat]), ("fc_b", [classes])]
    for p, shape in params:
        inputs.append(helper.make_tensor_value_info(p, FLOAT, shape))
    inits = [init("lr", f32(0.01)), init("zero", f32(0.0)), init("quarter", f32(0.25)),
             init("axes_0", i64([0])), init("axes_023", i64([0, 2, 3])),
             init("up2", f32([1, 1, 2, 2])),
             init("pool2_shape", i64([n, chans[3], hw // 4, hw // 4]))]

    # forward: conv-relu, conv-relu, pool, conv-relu, pool, flatten, gemm
    c0 = g.add("Conv", ["x", "conv0_W", "conv0_b"], ["conv0_out"], pads=[1, 1, 1, 1])
    r0 = g.add("Relu", [c0], ["relu0"])
    c1 = g.add("Conv", [r0, "conv1_W", "conv1_b"], ["conv1_out"], pads=[1, 1, 1, 1])
    r1 = g.add("Relu", [c1], ["relu1"])
    p1 = g.add("AveragePool", [r1], ["pool1"], kernel_shape=[2, 2], strides=[2, 2])
    c2 = g.add("Conv", [p1, "conv2_W", "conv2_b"], ["conv2_out"], pads=[1, 1, 1, 1])
    r2 = g.add("Relu", [c2], ["relu2"])
    p2 = g.add("AveragePool", [r2], ["pool2"], kernel_shape=[2, 2], strides=[2, 2])
    fl = g.add("Flatten", [p2], ["flat"], axis=1)
    logits = g.add("Gemm", [fl, "fc_W", "fc_b"], ["logits"], transB=1)
    loss, dz, sce_inits = softmax_cross_entropy(g, logits, "labels", n)
    inits += sce_inits

    # backward
    grads = {}
    grads["fc_W"] = g.add("Gemm", [dz, fl], ["grad_fc_W"], transA=1)
    grads["fc_b"] = g.add("ReduceSum", [dz, "axes_0"], ["grad_fc_b"], keepdims=0)
    dfl = g.add("MatMul", [dz, "fc_W"], ["grad_flat"])
    dp2 = g.add("Reshape", [dfl, "pool2_shape"], ["grad_pool2"])

    def pool_grad(dy, name):
        up = g.add("Resize", [dy, "", "up2"], [f"{name}_up"], mode="nearest")
        return g.add("Mul", [up, "quarter"], [f"grad_{name}_in"])

    def relu_grad(dy, pre, name):
        mask = g.add("Greater", [pre, "zero"], [f"{name}_mask"])
        return g.add("Where", [mask, dy, "zero"], [f"grad_{name}_in"])

    dr2 = pool_grad(dp2, "pool2")
    dc2 = relu_grad(dr2, c2, "relu2")
    grads["conv2_W"], grads["conv2_b"], dp1 = conv_grads(g, p1, "conv2_W", dc2, "conv2", True)
    dr1 = pool_grad(dp1, "pool1")
    dc1 = relu_grad(dr1, c1, "relu1")
    grads["conv1_W"], grads["conv1_b"], dr0 = conv_grads(g, r0, "conv1_W", dc1, "conv1", True)
    dc0 = relu_grad(dr0, c0, "relu0")
    grads["conv0_W"], grads["conv0_b"], _ = conv_grads(g, "x", "conv0_W", dc0, "conv0", False)

    outputs = [helper.make_tensor_value_info("loss", FLOAT, [])]
    for p, shape in params:
        step = g.add("Mul", ["lr", grads[p]], [f"{p}_step"])
        g.add("Sub", [p, step], [f"{p}_new"])
        outputs.append(helper.make_tensor_value_info(f"{p}_new", FLOAT, shape))
    graph = helper.make_graph(g.nodes, name, inputs, outputs, inits)
    return finish(graph, name, "3-conv CNN training step with conv gradients as Conv/ConvTranspose")


def make_if_loop():
    shape = [4, 8]
    vi = helper.make_tensor_value_info

    # Loop body at depth 2 (inside the If's then-branch): reads 'scaled' and
    # 'bias' from the outermost graph.
    deep = Nodes()
    deep.add("Add", ["acc_in", "scaled"], ["deep_sum"])
    deep.add("Mul", ["deep_sum", "bias"], ["acc_out"])
    deep.add("Identity", ["cond_in"], ["cond_out"])
    deep.add("ReduceSum", ["acc_out"], ["deep_scan"], keepdims=0)
    deep_body = helper.make_graph(
        deep.nodes, "deep_loop_body",
        [vi("iter", INT64, []), vi("cond_in", BOOL, []), vi("acc_in", FLOAT, shape)],
        [vi("cond_out", BOOL, []), vi("acc_out", FLOAT, shape), vi("deep_scan", FLOAT, [])])

    then_nodes = Nodes()
    then_nodes.add("Loop", ["trip3", "", "x"], ["then_acc", "then_scan"], body=deep_body)
    then_nodes.add("Relu", ["then_acc"], ["then_out"])
    then_branch = helper.make_graph(then_nodes.nodes, "then_branch", [], [vi("then_out", FLOAT, shape)],
                                    value_info=[vi("then_acc", FLOAT, shape), vi("then_scan", FLOAT, [3])])

    else_nodes = Nodes()
    else_nodes.add("Sub", ["scaled", "x"], ["else_diff"])
    else_nodes.add("Abs", ["else_diff"], ["else_out"])
    else_branch = helper.make_graph(else_nodes.nodes, "else_branch", [], [vi("else_out", FLOAT, shape)])

    # Loop body at depth 1: reads 'bias' from the outer graph.
    shallow = Nodes()
    shallow.add("Mul", ["state_in", "bias"], ["shallow_prod"])
    shallow.add("Tanh", ["shallow_prod"], ["state_out"])
    shallow.add("Identity", ["scond_in"], ["scond_out"])
    shallow_body = helper.make_graph(
        shallow.nodes, "shallow_loop_body",
        [vi("siter", INT64, []), vi("scond_in", BOOL, []), vi("state_in", FLOAT, shape)],
        [vi("scond_out", BOOL, []), vi("state_out", FLOAT, shape)])

    g = Nodes()
    g.add("Mul", ["x", "w"], ["scaled"])
    g.add("If", ["flag"], ["branch_out"], then_branch=then_branch, else_branch=else_branch)
    g.add("Loop", ["trip2", "", "branch_out"], ["loop_state"], body=shallow_body)
    g.add("Add", ["loop_state", "scaled"], ["y"])
    r = rng(3)
    graph = helper.make_graph(
        g.nodes, "if_loop",
        [vi("x", FLOAT, shape), vi("flag", BOOL, [])],
        [vi("y", FLOAT, shape)],
        [init("w", f32(r.uniform(-1, 1, shape))), init("bias", f32(r.uniform(0.5, 1.0, shape))),
         init("trip3", i64(3)), init("trip2", i64(2))],
        # shape inference leaves Loop results unshaped: declare them
        value_info=[vi("branch_out", FLOAT, shape), vi("loop_state", FLOAT, shape)])
    return finish(graph, "if_loop", "If with outer-scope reads; Loop nested in an If branch reading "
                  "a tensor of the outermost graph; a Loop reading an outer tensor")


EXTERNAL_ALIGN = 4096


def make_external_data():
    """Returns (model, {filename: bytes}). Two weights share one file at
    aligned offsets (offset/length given); the bias is a file of its own."""
    r = rng(4)
    n, d_in, d_hid = 4, 512, 448
    w1 = f32(r.uniform(-0.05, 0.05, (d_in, d_hid)))
    w2 = f32(r.uniform(-0.05, 0.05, (d_hid, d_in)))
    b = f32(r.uniform(-0.1, 0.1, (d_in,)))
    blob = bytearray()
    refs = {}
    for name, arr in (("W1", w1), ("W2", w2)):
        pad = (-len(blob)) % EXTERNAL_ALIGN
        blob += b"\0" * pad
        refs[name] = (len(blob), arr.nbytes)
        blob += arr.tobytes()
    files = {"external_data.bin": bytes(blob), "external_data_bias.bin": b.tobytes()}

    def ext(name, arr, location, offset=None, length=None):
        t = TensorProto()
        t.name = name
        t.data_type = FLOAT
        t.dims.extend(arr.shape)
        t.data_location = TensorProto.EXTERNAL
        entries = [("location", location)]
        if offset is not None:
            entries += [("offset", str(offset)), ("length", str(length))]
        for k, v in entries:
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    inits = [ext("W1", w1, "external_data.bin", *refs["W1"]),
             ext("W2", w2, "external_data.bin", *refs["W2"]),
             ext("b", b, "external_data_bias.bin")]
    g = Nodes()
    g.add("MatMul", ["x", "W1"], ["h"])
    g.add("Relu", ["h"], ["h_relu"])
    g.add("MatMul", ["h_relu", "W2"], ["o"])
    g.add("Add", ["o", "b"], ["y"])
    graph = helper.make_graph(
        g.nodes, "external_data",
        [helper.make_tensor_value_info("x", FLOAT, [n, d_in])],
        [helper.make_tensor_value_info("y", FLOAT, [n, d_in])], inits)
    # Shape inference and the checker run on the model as stored; the
    # checker resolves external files relative to the model's folder, so the
    # caller checks it again by path after writing.
    model = finish(graph, "external_data", "MLP whose weights live in external data files", check=False)
    return model, files


def make_multi_output():
    vi = helper.make_tensor_value_info
    r = rng(5)
    n, c, hw = 2, 4, 8
    g = Nodes()
    # BatchNormalization in training mode: 3 outputs, running mean and
    # variance named but consumed by nothing. (An empty name in the middle
    # here crashes ONNX Runtime 1.30, so the empty names are on the LSTM.)
    g.add("BatchNormalization", ["x", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
          ["bn_out", "bn_running_mean", "bn_running_var"], training_mode=1, epsilon=1e-5, momentum=0.9)
    # MaxPool with indices: both outputs used.
    g.add("MaxPool", ["bn_out"], ["mp_out", "mp_indices"], kernel_shape=[2, 2], strides=[2, 2])
    # Split into two halves along channels.
    g.add("Split", ["mp_out", "split_sizes"], ["half_a", "half_b"], axis=1)
    g.add("Mul", ["half_a", "half_b"], ["halves_prod"])
    g.add("Flatten", ["halves_prod"], ["flat"], axis=1)
    # TopK with a constant k: indices named but never consumed.
    g.add("TopK", ["flat", "k"], ["top_values", "top_indices"], axis=1)
    # LSTM over the flattened rows as a length-1 sequence: Y unused (empty),
    # Y_h used, Y_c named but consumed by nothing.
    g.add("Unsqueeze", ["top_values", "axes_0"], ["seq"])
    g.add("LSTM", ["seq", "lstm_W", "lstm_R", "lstm_B"], ["", "lstm_h", "lstm_c"], hidden_size=6)
    g.add("Squeeze", ["lstm_h", "axes_0"], ["h"])
    g.add("Relu", ["h"], ["y"])
    k, hidden = 5, 6
    inits = [
        init("bn_scale", f32(r.uniform(0.5, 1.5, c))), init("bn_bias", f32(r.uniform(-0.5, 0.5, c))),
        init("bn_mean", f32(np.zeros(c))), init("bn_var", f32(np.ones(c))),
        init("split_sizes", i64([c // 2, c // 2])), init("k", i64([k])), init("axes_0", i64([0])),
        init("lstm_W", f32(r.uniform(-0.5, 0.5, (1, 4 * hidden, k)))),
        init("lstm_R", f32(r.uniform(-0.5, 0.5, (1, 4 * hidden, hidden)))),
        init("lstm_B", f32(r.uniform(-0.1, 0.1, (1, 8 * hidden)))),
    ]
    outputs = [vi("y", FLOAT, [n, hidden]),
               vi("mp_indices", INT64, [n, c, hw // 2, hw // 2]),
               vi("x", FLOAT, [n, c, hw, hw]),          # also a graph input
               vi("bn_scale", FLOAT, [c])]               # also an initializer
    graph = helper.make_graph(g.nodes, "multi_output", [vi("x", FLOAT, [n, c, hw, hw])], outputs, inits)
    return finish(graph, "multi_output", "Multi-output nodes with unused outputs; graph outputs that "
                  "are a graph input and an initializer")


def make_symbolic_dims():
    vi = helper.make_tensor_value_info
    r = rng(6)
    seq, d, h = 16, 32, 64
    g = Nodes()
    g.add("MatMul", ["x", "W1"], ["proj"])
    g.add("Relu", ["proj"], ["proj_relu"])
    g.add("Softmax", ["proj_relu"], ["attn"], axis=-1)
    g.add("MatMul", ["attn", "W2"], ["back"])
    g.add("Add", ["back", "x"], ["resid"])
    g.add("ReduceMean", ["resid"], ["pooled"], axes=[1], keepdims=0)
    g.add("Tanh", ["pooled"], ["y"])
    graph = helper.make_graph(
        g.nodes, "symbolic_dims",
        [vi("x", FLOAT, ["batch", seq, d])],
        [vi("y", FLOAT, ["batch", d])],
        [init("W1", f32(r.uniform(-0.2, 0.2, (d, h)))), init("W2", f32(r.uniform(-0.2, 0.2, (h, d))))])
    return finish(graph, "symbolic_dims", "Input with a symbolic 'batch' dimension carried through value_info")


def make_infer_small():
    vi = helper.make_tensor_value_info
    r = rng(7)
    n, c, hw = 1, 3, 16

    def conv_w(co, ci, k):
        return f32(r.uniform(-0.3, 0.3, (co, ci, k, k)))

    g = Nodes()
    g.add("Conv", ["x", "stem_W", "stem_b"], ["stem"], pads=[1, 1, 1, 1])
    g.add("Relu", ["stem"], ["stem_relu"])
    # three branches from the stem
    g.add("Conv", ["stem_relu", "a_W"], ["a"], pads=[1, 1, 1, 1])
    g.add("Relu", ["a"], ["a_relu"])
    g.add("Conv", ["stem_relu", "b_W"], ["b"], pads=[0, 0, 0, 0])
    g.add("Relu", ["b"], ["b_relu"])
    g.add("Conv", ["b_relu", "b2_W"], ["b2"], pads=[2, 2, 2, 2], dilations=[2, 2])
    g.add("Conv", ["stem_relu", "c_W"], ["c"], pads=[2, 2, 2, 2])
    g.add("Sigmoid", ["c"], ["c_gate"])
    g.add("Add", ["a_relu", "b2"], ["ab"])
    g.add("Mul", ["ab", "c_gate"], ["abc"])
    g.add("Add", ["abc", "stem_relu"], ["resid"])
    g.add("MaxPool", ["resid"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2])
    g.add("Conv", ["pooled", "head_W", "head_b"], ["head"], pads=[1, 1, 1, 1], strides=[2, 2])
    g.add("GlobalAveragePool", ["head"], ["gap"])
    g.add("Flatten", ["gap"], ["y"], axis=1)
    inits = [init("stem_W", conv_w(8, c, 3)), init("stem_b", f32(r.uniform(-0.1, 0.1, 8))),
             init("a_W", conv_w(8, 8, 3)), init("b_W", conv_w(8, 8, 1)), init("b2_W", conv_w(8, 8, 3)),
             init("c_W", conv_w(8, 8, 5)), init("head_W", conv_w(16, 8, 3)),
             init("head_b", f32(r.uniform(-0.1, 0.1, 16)))]
    graph = helper.make_graph(g.nodes, "infer_small", [vi("x", FLOAT, [n, c, hw, hw])],
                              [vi("y", FLOAT, [n, 16])], inits)
    return finish(graph, "infer_small", "Small inference CNN with parallel conv branches")


def make_unordered(base):
    """infer_small with its nodes listed in a fixed non-topological order."""
    model = onnx.ModelProto()
    model.CopyFrom(base)
    nodes = list(model.graph.node)
    order = list(reversed(range(len(nodes))))  # every edge points backwards
    del model.graph.node[:]
    model.graph.node.extend(nodes[i] for i in order)
    model.graph.name = "unordered"
    model.doc_string = "infer_small with its nodes listed in reverse (non-topological) order"
    return model


# -------------------------------------------------------------- bad models


def bare_model(nodes, inputs, outputs, inits=(), value_info=(), opsets=None, name="bad"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=opsets or [helper.make_opsetid("", OPSET)],
                              producer_name="olla-onnx make_models.py")
    model.ir_version = IR_VERSION
    return model


def make_bad(out_dir, good_bytes):
    bad = os.path.join(out_dir, "bad")
    os.makedirs(bad, exist_ok=True)
    vi = helper.make_tensor_value_info
    vec = [4]

    def write(name, data):
        with open(os.path.join(bad, name), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.SerializeToString())

    write("not_onnx.onnx", b"This is a text file, not an ONNX model.\n")
    write("truncated.onnx", good_bytes[: len(good_bytes) // 2])

    m = onnx.ModelProto()
    m.ir_version = IR_VERSION
    m.producer_name = "olla-onnx make_models.py"
    m.opset_import.extend([helper.make_opsetid("", OPSET)])
    write("no_graph.onnx", m)

    write("two_producers.onnx", bare_model(
        [helper.make_node("Relu", ["x"], ["t"], name="first"),
         helper.make_node("Neg", ["x"], ["t"], name="second"),
         helper.make_node("Abs", ["t"], ["y"], name="use")],
        [vi("x", FLOAT, vec)], [vi("y", FLOAT, vec)], value_info=[vi("t", FLOAT, vec)]))

    write("missing_input.onnx", bare_model(
        [helper.make_node("Add", ["x", "ghost"], ["t"], name="add_ghost"),
         helper.make_node("Relu", ["t"], ["y"], name="relu")],
        [vi("x", FLOAT, vec)], [vi("y", FLOAT, vec)], value_info=[vi("t", FLOAT, vec)]))

    write("cycle.onnx", bare_model(
        [helper.make_node("Add", ["x", "c"], ["a"], name="cycle_a"),
         helper.make_node("Relu", ["a"], ["b"], name="cycle_b"),
         helper.make_node("Neg", ["b"], ["c"], name="cycle_c"),
         helper.make_node("Abs", ["b"], ["y"], name="out")],
        [vi("x", FLOAT, vec)], [vi("y", FLOAT, vec)],
        value_info=[vi(t, FLOAT, vec) for t in ("a", "b", "c")]))

    def external_model(location, name):
        t = TensorProto()
        t.name = "W"
        t.data_type = FLOAT
        t.dims.extend(vec)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", "0"), ("length", "16")):
            e = t.external_data.add()
            e.key, e.value = k, v
        return bare_model([helper.make_node("Add", ["x", "W"], ["y"], name="add_w")],
                          [vi("x", FLOAT, vec)], [vi("y", FLOAT, vec)], inits=[t], name=name)

    write("external_escape.onnx", external_model("../outside.bin", "external_escape"))
    write("external_absolute.onnx", external_model("/etc/passwd", "external_absolute"))
    write("external_missing.onnx", external_model("nope.bin", "external_missing"))

    write("unsized_op.onnx", bare_model(
        [helper.make_node("Relu", ["x"], ["a"], name="relu"),
         helper.make_node("Mystery", ["a"], ["m"], name="mystery", domain="com.example"),
         helper.make_node("Add", ["m", "a"], ["y"], name="add")],
        [vi("x", FLOAT, vec)], [vi("y", FLOAT, vec)], value_info=[vi("a", FLOAT, vec)],
        opsets=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.example", 1)]))


# -------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "models"), help="output folder (default: models/)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    written = []
    infer_small = make_infer_small()
    for name, model in (("mlp_train.onnx", make_mlp_train()),
                        ("cnn_train.onnx", make_cnn_train()),
                        ("if_loop.onnx", make_if_loop()),
                        ("multi_output.onnx", make_multi_output()),
                        ("symbolic_dims.onnx", make_symbolic_dims()),
                        ("infer_small.onnx", infer_small),
                        ("unordered.onnx", make_unordered(infer_small))):
        written.append(save(model, out, name))

    ext_model, files = make_external_data()
    for fname, data in files.items():
        with open(os.path.join(out, fname), "wb") as f:
            f.write(data)
    written.append(save(ext_model, out, "external_data.onnx"))
    onnx.checker.check_model(os.path.join(out, "external_data.onnx"), full_check=True)

    make_bad(out, infer_small.SerializeToString())
    for path in written:
        size = os.path.getsize(path)
        if size > 2 * 1024 * 1024:
            raise SystemExit(f"{path}: {size} bytes, more than the 2 MB budget")
        print(f"{os.path.relpath(path, out)}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
