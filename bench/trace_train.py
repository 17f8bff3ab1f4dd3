#!/usr/bin/python3
"""One training step of a torchvision model, traced to ONNX.

    /usr/bin/python3 bench/trace_train.py MODEL BATCH OUT.onnx

MODEL is a torchvision.models constructor (googlenet, resnet50,
mnasnet1_0, inception_v3, densenet121, ...). The step is: forward, cross
entropy against random labels, gradients of every parameter, and an SGD
update p - 0.01 * g; parameters and buffers are graph inputs, updated
parameters (and batch-norm statistics) graph outputs. It is traced with
torch's make_fx on fake tensors (no weights, no data), one ONNX node per
PyTorch operation in PyTorch's own order, with value_info for every tensor:
standard ONNX operators where the semantics match, ONNX Runtime's
com.microsoft gradient operators where one exists, otherwise an
org.pytorch.aten ATen node naming the operator. Needs Debian's
python3-torch and python3-torchvision (torch 1.13, torchvision 0.14).
"""
import sys

import onnx
import torch
import torchvision
from onnx import TensorProto, helper
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils import stateless

DTYPES = {torch.float32: TensorProto.FLOAT, torch.float64: TensorProto.DOUBLE,
          torch.float16: TensorProto.FLOAT16, torch.int64: TensorProto.INT64,
          torch.int32: TensorProto.INT32, torch.uint8: TensorProto.UINT8,
          torch.bool: TensorProto.BOOL, torch.int8: TensorProto.INT8}


def build_model(name):
    ctor = getattr(torchvision.models, name)
    kw = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kw.update(aux_logits=False, init_weights=False)
    model = ctor(**kw)
    model.train()
    return model


def trace(model, batch, size):
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())

    def step(p, b, x, y):
        out = stateless.functional_call(model, {**p, **b}, (x,))
        loss = torch.nn.functional.cross_entropy(out, y)
        grads = torch.autograd.grad(loss, list(p.values()))
        return loss, [pv - 0.01 * gv for pv, gv in zip(p.values(), grads)]

    x = torch.randn(batch, 3, size, size)
    y = torch.randint(0, 1000, (batch,))
    gm = make_fx(step, tracing_mode="fake")(params, buffers, x, y)
    fill_values(gm)
    return gm, list(params), list(buffers)


def fill_values(gm):
    """Every node's fake value: make_fx leaves some without one (nll_loss_forward)."""
    vals = {}
    mode = None
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            vals[n] = n.meta["val"]
            mode = mode or getattr(n.meta["val"], "fake_mode", None)
        elif n.op == "call_function":
            if n.meta.get("val") is None:
                args = torch.fx.node.map_arg(n.args, lambda a: vals[a])
                kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: vals[a])
                with mode:
                    n.meta["val"] = n.target(*args, **kwargs)
            vals[n] = n.meta["val"]


class Emitter:
    def __init__(self):
        self.nodes, self.inits, self.vinfo, self.consts = [], [], {}, {}
        self.names = {}  # fx node -> ONNX name(s)

    def vi(self, name, t):
        self.vinfo[name] = helper.make_tensor_value_info(name, DTYPES[t.dtype], list(t.shape))

    def const(self, values, dtype):
        key = (tuple(values) if isinstance(values, (list, tuple)) else values, dtype)
        if key not in self.consts:
            scalar = not isinstance(values, (list, tuple))
            vals = [values] if scalar else list(values)
            tag = "_".join(str(v).replace(".", "p").replace("-", "m") for v in vals) or "empty"
            name = "const.%s.%s%s" % ("int64" if dtype == TensorProto.INT64 else "float", tag,
                                      ".scalar" if scalar else "")
            self.inits.append(helper.make_tensor(name, dtype, [] if scalar else [len(vals)], vals))
            self.consts[key] = name
        return self.consts[key]

    def arg(self, a):
        """An fx argument as an ONNX input name (scalars become constants)."""
        if isinstance(a, torch.fx.Node):
            return self.names[a]
        if isinstance(a, bool):
            return self.const(int(a), TensorProto.INT64)
        if isinstance(a, int):
            return self.const(a, TensorProto.INT64)
        return self.const(float(a), TensorProto.FLOAT)


def pads(p, rank=2):
    p = list(p) if isinstance(p, (list, tuple)) else [p] * rank
    return p + p


def emit(gm, param_names, buffer_names, path):
    e = Emitter()
    graph_inputs, graph_outputs = [], []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    np_, nb = len(param_names), len(buffer_names)
    input_names = param_names + buffer_names + ["x", "y"]
    for n, name in zip(placeholders, input_names):
        e.names[n] = name
        t = n.meta["val"]
        graph_inputs.append(helper.make_tensor_value_info(name, DTYPES[t.dtype], list(t.shape)))
    bn_updates = []
    out_node = [n for n in gm.graph.nodes if n.op == "output"][0]
    outs_fx = list(out_node.args[0])
    loss = outs_fx[0]
    updated = outs_fx[1] if isinstance(outs_fx[1], (list, tuple)) else outs_fx[1:]
    # the updates write the parameters' new values under their own names
    renamed = {u: p + ".updated" for u, p in zip(updated, param_names)}
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        if n.target.__name__ == "getitem":
            src, k = n.args
            e.names[n] = e.names[src][k]
            continue
        op = n.target.overloadpacket.__name__
        val = n.meta.get("val")
        multi = isinstance(val, (list, tuple))
        outs = ["%s.%d" % (n.name, k) if v is not None else "" for k, v in enumerate(val)] \
            if multi else [renamed.get(n, n.name)]
        e.names[n] = outs if multi else outs[0]
        for name, v in zip(outs, val if multi else [val]):
            if v is not None:
                e.vi(name, v)
        a = n.args
        node = None
        if op == "convolution":
            ins = [e.arg(a[0]), e.arg(a[1])] + ([e.arg(a[2])] if a[2] is not None else [])
            k = list(a[1].meta["val"].shape[2:])
            node = helper.make_node("Conv", ins, outs, kernel_shape=k, strides=list(a[3]),
                                    pads=pads(a[4], len(k)), dilations=list(a[5]), group=a[8])
        elif op == "convolution_backward":
            k = list(a[2].meta["val"].shape[2:])
            node = helper.make_node("ConvGrad", [e.arg(a[0]), e.arg(a[1]), e.arg(a[2])], outs,
                                    domain="com.microsoft", kernel_shape=k, strides=list(a[4]),
                                    pads=pads(a[5], len(k)), dilations=list(a[6]), group=a[9])
        elif op == "native_batch_norm":
            rm, rv = e.arg(a[3]), e.arg(a[4])
            upd = [rm + ".updated", rv + ".updated"]
            for name, src in zip(upd, (a[3], a[4])):
                e.vi(name, src.meta["val"])
                bn_updates.append(name)
            node = helper.make_node("BatchNormInternal",
                                    [e.arg(a[0]), e.arg(a[1]), e.arg(a[2]), rm, rv],
                                    [outs[0]] + upd + outs[1:], domain="com.microsoft",
                                    epsilon=float(a[7]), momentum=1.0 - float(a[6]), training_mode=1)
        elif op == "native_batch_norm_backward":
            node = helper.make_node("BatchNormalizationGrad",
                                    [e.arg(a[0]), e.arg(a[1]), e.arg(a[2]), e.arg(a[5]), e.arg(a[6])],
                                    outs, domain="com.microsoft", epsilon=float(a[8]))
        elif op in ("relu", "relu_"):
            node = helper.make_node("Relu", [e.arg(a[0])], outs)
        elif op == "threshold_backward":
            node = helper.make_node("ReluGrad", [e.arg(a[0]), e.arg(a[1])], outs, domain="com.microsoft")
        elif op in ("add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_") and \
                not n.kwargs.get("rounding_mode") and (len(a) < 3 or a[2] == 1):
            ins = [e.arg(a[0]), e.arg(a[1])]
            if not isinstance(a[1], torch.fx.Node) and isinstance(a[1], int) and \
                    a[0].meta["val"].dtype.is_floating_point:
                ins[1] = e.const(float(a[1]), TensorProto.FLOAT)
            node = helper.make_node(op.rstrip("_").capitalize(), ins, outs)
        elif op in ("detach", "clone", "alias"):
            node = helper.make_node("Identity", [e.arg(a[0])], outs)
        elif op in ("view", "_unsafe_view", "_reshape_alias", "reshape"):
            node = helper.make_node("Reshape", [e.arg(a[0]),
                                                e.const(list(val.shape), TensorProto.INT64)], outs)
        elif op == "t":
            node = helper.make_node("Transpose", [e.arg(a[0])], outs, perm=[1, 0])
        elif op == "permute":
            node = helper.make_node("Transpose", [e.arg(a[0])], outs, perm=list(a[1]))
        elif op == "mm":
            node = helper.make_node("MatMul", [e.arg(a[0]), e.arg(a[1])], outs)
        elif op == "addmm":
            node = helper.make_node("Gemm", [e.arg(a[1]), e.arg(a[2]), e.arg(a[0])], outs)
        elif op == "max_pool2d_with_indices":
            k = list(a[1])
            s = list(a[2]) if len(a) > 2 and a[2] else k
            p = pads(a[3] if len(a) > 3 else 0)
            ceil = int(a[5]) if len(a) > 5 else 0
            node = helper.make_node("MaxPool", [e.arg(a[0])], outs, kernel_shape=k, strides=s,
                                    pads=p, ceil_mode=ceil)
        elif op == "max_pool2d_with_indices_backward":
            node = helper.make_node("MaxPoolGrad", [e.arg(a[0]), e.arg(a[7])], outs,
                                    domain="com.microsoft")
        elif op == "mean" and len(a) > 1:
            node = helper.make_node("ReduceMean", [e.arg(a[0])], outs, axes=list(a[1]),
                                    keepdims=int(a[2]) if len(a) > 2 else 0)
        elif op == "sum" and len(a) > 1:
            node = helper.make_node("ReduceSum", [e.arg(a[0]), e.const(list(a[1]), TensorProto.INT64)],
                                    outs, keepdims=int(a[2]) if len(a) > 2 else 0)
        elif op == "expand":
            node = helper.make_node("Expand", [e.arg(a[0]),
                                               e.const(list(val.shape), TensorProto.INT64)], outs)
        elif op == "cat":
            node = helper.make_node("Concat", [e.arg(t) for t in a[0]], outs,
                                    axis=a[1] if len(a) > 1 else 0)
        elif op == "slice":
            dim, start, end = a[1], a[2], min(a[3], 2 ** 62)
            step = a[4] if len(a) > 4 else 1
            node = helper.make_node("Slice", [e.arg(a[0]), e.const([start], TensorProto.INT64),
                                              e.const([end], TensorProto.INT64),
                                              e.const([dim], TensorProto.INT64),
                                              e.const([step], TensorProto.INT64)], outs)
        elif op == "_log_softmax":
            node = helper.make_node("LogSoftmax", [e.arg(a[0])], outs, axis=a[1])
        elif op == "_log_softmax_backward_data":
            node = helper.make_node("LogSoftmaxGrad_13", [e.arg(a[0]), e.arg(a[1])], outs,
                                    domain="com.microsoft", axis=a[2])
        if node is None:  # ATen fallback: tensor arguments as inputs, the rest as attributes
            ins, attrs = [], {}
            for k, x in enumerate(list(a) + list(n.kwargs.values())):
                if isinstance(x, torch.fx.Node):
                    ins.append(e.arg(x))
                elif isinstance(x, (list, tuple)) and x and all(isinstance(y, torch.fx.Node) for y in x):
                    ins.extend(e.arg(y) for y in x)
                elif isinstance(x, (bool, int, float)) or (isinstance(x, (list, tuple)) and x and
                                                           all(isinstance(y, int) for y in x)):
                    attrs["arg%d" % k] = list(x) if isinstance(x, (list, tuple)) else x
            node = helper.make_node("ATen", ins, outs, domain="org.pytorch.aten", operator=op,
                                    overload_name=n.target._overloadname, **attrs)
        node.name = n.name
        e.nodes.append(node)
    graph_outputs.append(e.vinfo[e.names[loss]])
    graph_outputs += [e.vinfo[p + ".updated"] for p in param_names]
    graph_outputs += [e.vinfo[b] for b in bn_updates]
    out_names = {o.name for o in graph_outputs}
    vis = [v for k, v in e.vinfo.items() if k not in out_names]
    graph = helper.make_graph(e.nodes, "train_step", graph_inputs, graph_outputs,
                              initializer=e.inits, value_info=vis)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1),
                                                    helper.make_opsetid("org.pytorch.aten", 1)],
                              producer_name="olla-onnx bench/trace_train.py")
    model.ir_version = 8
    onnx.save(model, path)
    return len(e.nodes), np_, nb


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: trace_train.py MODEL BATCH OUT.onnx")
    name, batch, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    torch.manual_seed(0)
    model = build_model(name)
    size = 299 if name == "inception_v3" else 224
    gm, pn, bn = trace(model, batch, size)
    nodes, np_, nb = emit(gm, pn, bn, path)
    print("%s batch %d: %d nodes, %d parameters, %d buffers -> %s" % (name, batch, nodes, np_, nb, path))


if __name__ == "__main__":
    main()
