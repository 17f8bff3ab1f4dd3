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
org.pytorch.aten ATen node naming the operator (an in-place one by its
functional form), its tensor arguments as inputs and the others as
attributes named as in the operator's schema. Updated parameters and the
buffers written in place are graph outputs named NAME.updated. This is the
format of the corpus's train/ graphs: alexnet, mobilenet_v2 and resnet18
traced here at batch 1 and 32 have the corpus's nodes, inputs, outputs,
attributes, value_info and constants. Needs Debian's python3-torch and
python3-torchvision (torch 1.13, torchvision 0.14).
"""
import sys

import numpy
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper
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
            tag = "_".join(num_tag(v) for v in vals) or "empty"
            name = "const.%s.%s%s" % ("int64" if dtype == TensorProto.INT64 else "float", tag,
                                      ".scalar" if scalar else "")
            arr = numpy.array(vals, dtype=numpy.int64 if dtype == TensorProto.INT64 else numpy.float32)
            self.inits.append(numpy_helper.from_array(arr.reshape([] if scalar else [len(vals)]), name))
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


def num_tag(v):
    """A number as a constant's name writes it: 49.0 -> 49, 0.5 -> 0p5, -1 -> m1."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        v = int(v)
    return str(v).replace(".", "p").replace("-", "m")


def pads(p, rank=2):
    p = list(p) if isinstance(p, (list, tuple)) else [p] * rank
    return p + p


# In-place operations whose ATen node names the functional form: the
# trailing underscore dropped (silu_ -> silu, fill_.Scalar -> fill.Scalar),
# and these overloads renamed.
FUNCTIONAL_OVERLOAD = {("bernoulli_", "float"): "p"}


def aten_attr(x):
    """A non-tensor argument as an attribute value; None leaves it out."""
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, float, str)):
        return x
    if isinstance(x, (torch.dtype, torch.layout, torch.device, torch.memory_format)):
        return str(x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(y, int) and not isinstance(y, bool) for y in x):
        return list(x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(y, (int, float)) for y in x):
        return [float(y) for y in x]
    return None


def aten_node(e, n, outs):
    """An ATen fallback node: the tensor arguments as inputs in the schema's
    order ('' for an absent optional tensor, trailing ones dropped), the
    others as attributes named as in the schema (dtype, layout, device and
    memory format as torch writes them, booleans as 0/1)."""
    ins, attrs = [], []
    for k, arg in enumerate(n.target._schema.arguments):
        if k < len(n.args):
            x = n.args[k]
        elif arg.name in n.kwargs:
            x = n.kwargs[arg.name]
        else:
            continue
        if isinstance(x, torch.fx.Node):
            ins.append(e.arg(x))
        elif isinstance(x, (list, tuple)) and any(isinstance(y, torch.fx.Node) for y in x) and \
                all(isinstance(y, torch.fx.Node) or y is None for y in x):
            ins.extend(e.arg(y) if y is not None else "" for y in x)  # index.Tensor's [None, i]
        elif x is None and "Tensor" in str(arg.type):
            ins.append("")
        elif aten_attr(x) is not None:
            attrs.append(helper.make_attribute(arg.name, aten_attr(x)))
    while ins and not ins[-1]:
        ins.pop()
    op, overload = n.target.overloadpacket.__name__, n.target._overloadname
    if n.target._schema.is_mutable and op.endswith("_") and not op.startswith("_"):
        op, overload = op[:-1], FUNCTIONAL_OVERLOAD.get((op, overload), overload)
    node = helper.make_node("ATen", ins, outs, domain="org.pytorch.aten", operator=op, overload_name=overload)
    node.attribute.extend(attrs)
    return node


def shape(x):
    return list(x.meta["val"].shape)


def pool_node(e, op, a, outs):
    """Max pooling and its gradient, and adaptive average pooling whose
    output divides its input (a plain average pooling); None otherwise."""
    if op == "max_pool2d_with_indices":
        k = list(a[1])
        s = list(a[2]) if len(a) > 2 and a[2] else k
        attrs = dict(kernel_shape=k, strides=s, pads=pads(a[3] if len(a) > 3 else 0),
                     dilations=list(a[4]) if len(a) > 4 else [1, 1], ceil_mode=int(a[5]) if len(a) > 5 else 0)
        return helper.make_node("MaxPool", [e.arg(a[0])], outs, **attrs)
    if op == "max_pool2d_with_indices_backward":
        k = list(a[2])
        s = list(a[3]) if a[3] else k
        return helper.make_node("MaxPoolGrad", [e.arg(a[0]), e.arg(a[7])], outs, domain="com.microsoft",
                                kernel_shape=k, strides=s, pads=pads(a[4]), dilations=list(a[5]),
                                ceil_mode=int(a[6]))
    if op in ("_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"):
        big, small = (shape(a[0]), list(a[1])) if op == "_adaptive_avg_pool2d" else (shape(a[1]), shape(a[0]))
        big, small = big[-2:], small[-2:]
        if any(s <= 0 or b % s for b, s in zip(big, small)):
            return None
        k = [b // s for b, s in zip(big, small)]
        if op == "_adaptive_avg_pool2d":
            return helper.make_node("AveragePool", [e.arg(a[0])], outs, kernel_shape=k, strides=k)
        return helper.make_node("AveragePoolGrad", [e.arg(a[0])], outs, domain="com.microsoft",
                                kernel_shape=k, pads=[0, 0, 0, 0], strides=k)
    return None


def norm_node(e, op, a, outs):
    """Layer normalization, softmax and their gradients; None otherwise."""
    if op == "native_layer_norm" and a[2] is not None and a[3] is not None:
        axis = len(shape(a[0])) - len(a[1])
        return helper.make_node("LayerNormalization", [e.arg(a[0]), e.arg(a[2]), e.arg(a[3])], outs,
                                axis=axis, epsilon=float(a[4]))
    if op == "native_layer_norm_backward" and a[5] is not None:
        axis = len(shape(a[1])) - len(a[2])
        return helper.make_node("LayerNormalizationGrad", [e.arg(a[0]), e.arg(a[1]), e.arg(a[5]), e.arg(a[3]),
                                                           e.arg(a[4])], outs, domain="com.microsoft", axis=axis)
    if op == "_softmax":
        return helper.make_node("Softmax", [e.arg(a[0])], outs, axis=a[1])
    if op == "_softmax_backward_data":
        return helper.make_node("SoftmaxGrad_13", [e.arg(a[0]), e.arg(a[1])], outs, domain="com.microsoft",
                                axis=a[2])
    if op == "_log_softmax":
        return helper.make_node("LogSoftmax", [e.arg(a[0])], outs, axis=a[1])
    if op == "_log_softmax_backward_data":
        return helper.make_node("LogSoftmaxGrad_13", [e.arg(a[0]), e.arg(a[1])], outs,
                                domain="com.microsoft", axis=a[2])
    return None


def layout_node(e, op, a, val, outs):
    """Views, copies and layout changes as ONNX operators; None otherwise."""
    if op in ("detach", "clone", "alias"):
        return helper.make_node("Identity", [e.arg(a[0])], outs)
    if op in ("view", "_unsafe_view", "_reshape_alias", "reshape"):
        return helper.make_node("Reshape", [e.arg(a[0]), e.const(list(val.shape), TensorProto.INT64)], outs)
    if op == "t":
        return helper.make_node("Transpose", [e.arg(a[0])], outs, perm=[1, 0])
    if op == "permute":
        return helper.make_node("Transpose", [e.arg(a[0])], outs, perm=list(a[1]))
    if op == "transpose":
        perm = list(range(len(shape(a[0]))))
        d0, d1 = a[1] % len(perm), a[2] % len(perm)
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return helper.make_node("Transpose", [e.arg(a[0])], outs, perm=perm)
    if op == "unsqueeze":
        return helper.make_node("Unsqueeze", [e.arg(a[0]), e.const([a[1]], TensorProto.INT64)], outs)
    if op == "expand":
        return helper.make_node("Expand", [e.arg(a[0]), e.const(list(val.shape), TensorProto.INT64)], outs)
    if op == "cat":
        return helper.make_node("Concat", [e.arg(t) for t in a[0]], outs, axis=a[1] if len(a) > 1 else 0)
    if op in ("split", "split_with_sizes"):
        dim = a[2] if len(a) > 2 else 0
        sizes = [v.shape[dim] for v in val]
        return helper.make_node("Split", [e.arg(a[0]), e.const(sizes, TensorProto.INT64)], outs, axis=dim)
    if op == "slice":
        dim, start, end = a[1], a[2], min(a[3], 2 ** 62)
        step = a[4] if len(a) > 4 else 1
        return helper.make_node("Slice", [e.arg(a[0]), e.const([start], TensorProto.INT64),
                                          e.const([end], TensorProto.INT64), e.const([dim], TensorProto.INT64),
                                          e.const([step], TensorProto.INT64)], outs)
    return None


def math_node(e, n, op, a, val, outs):
    """Arithmetic, matrix products, reductions and activations; None otherwise."""
    if op in ("add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_") and \
            not n.kwargs.get("rounding_mode") and (len(a) < 3 or a[2] == 1):
        x = a[1]
        if isinstance(x, int) and not isinstance(x, bool) and a[0].meta["val"].dtype.is_floating_point:
            x = float(x)
        return helper.make_node(op.rstrip("_").capitalize(), [e.arg(a[0]), e.arg(x)], outs)
    if op in ("relu", "relu_"):
        return helper.make_node("Relu", [e.arg(a[0])], outs)
    if op == "threshold_backward":
        return helper.make_node("ReluGrad", [e.arg(a[0]), e.arg(a[1])], outs, domain="com.microsoft")
    if op in ("hardtanh", "hardtanh_"):
        lo, hi = (a[1] if len(a) > 1 else -1.0), (a[2] if len(a) > 2 else 1.0)
        return helper.make_node("Clip", [e.arg(a[0]), e.const(float(lo), TensorProto.FLOAT),
                                         e.const(float(hi), TensorProto.FLOAT)], outs)
    if op in ("mm", "bmm"):
        return helper.make_node("MatMul", [e.arg(a[0]), e.arg(a[1])], outs)
    if op == "addmm":
        return helper.make_node("Gemm", [e.arg(a[1]), e.arg(a[2]), e.arg(a[0])], outs)
    if op == "mean" and len(a) > 1:
        return helper.make_node("ReduceMean", [e.arg(a[0])], outs, axes=[d % len(shape(a[0])) for d in a[1]],
                                keepdims=int(a[2]) if len(a) > 2 else 0)
    if op == "sum" and len(a) > 1:
        return helper.make_node("ReduceSum", [e.arg(a[0]), e.const(list(a[1]), TensorProto.INT64)], outs,
                                keepdims=int(a[2]) if len(a) > 2 else 0)
    if op == "triu":
        return helper.make_node("Trilu", [e.arg(a[0]), e.const(a[1] if len(a) > 1 else 0, TensorProto.INT64)],
                                outs, upper=1)
    if op == "full" and isinstance(a[1], (int, float)) and val.dtype in DTYPES:
        value = helper.make_tensor("value", DTYPES[val.dtype], [1], [a[1]])
        return helper.make_node("ConstantOfShape", [e.const(list(a[0]), TensorProto.INT64)], outs, value=value)
    return None


def train_node(e, op, a, outs, bn_updates):
    """Convolution, batch normalization and their gradients; None otherwise."""
    if op == "convolution":
        ins = [e.arg(a[0]), e.arg(a[1])] + ([e.arg(a[2])] if a[2] is not None else [])
        k = shape(a[1])[2:]
        return helper.make_node("Conv", ins, outs, kernel_shape=k, strides=list(a[3]),
                                pads=pads(a[4], len(k)), dilations=list(a[5]), group=a[8])
    if op == "convolution_backward":
        k = shape(a[2])[2:]
        return helper.make_node("ConvGrad", [e.arg(a[0]), e.arg(a[1]), e.arg(a[2])], outs,
                                domain="com.microsoft", kernel_shape=k, strides=list(a[4]),
                                pads=pads(a[5], len(k)), dilations=list(a[6]), group=a[9])
    if op == "native_batch_norm":
        rm, rv = e.arg(a[3]), e.arg(a[4])
        upd = [rm + ".updated", rv + ".updated"]
        for name, src in zip(upd, (a[3], a[4])):
            e.vi(name, src.meta["val"])
            bn_updates[name] = e.vinfo[name]
        return helper.make_node("BatchNormInternal", [e.arg(a[0]), e.arg(a[1]), e.arg(a[2]), rm, rv],
                                [outs[0]] + upd + outs[1:], domain="com.microsoft",
                                epsilon=float(a[7]), momentum=1.0 - float(a[6]), training_mode=1)
    if op == "native_batch_norm_backward":
        return helper.make_node("BatchNormalizationGrad",
                                [e.arg(a[0]), e.arg(a[1]), e.arg(a[2]), e.arg(a[5]), e.arg(a[6])],
                                outs, domain="com.microsoft", epsilon=float(a[8]))
    return None


def output_names(gm, param_names, buffer_names, placeholders):
    """The names of the values that are graph outputs: each updated
    parameter and each buffer an in-place operation writes (num_batches_tracked
    += 1) as NAME.updated."""
    out_node = [n for n in gm.graph.nodes if n.op == "output"][0]
    outs_fx = list(out_node.args[0])
    updated = outs_fx[1] if isinstance(outs_fx[1], (list, tuple)) else outs_fx[1:]
    renamed = {u: p + ".updated" for u, p in zip(updated, param_names)}
    buffers = dict(zip(placeholders[len(param_names):], buffer_names))
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target.__name__ != "getitem" and n.args and \
                isinstance(n.args[0], torch.fx.Node) and n.args[0] in buffers and n.target._schema.is_mutable:
            renamed[n] = buffers[n.args[0]] + ".updated"
    return renamed


def emit(gm, param_names, buffer_names, path, title):
    e = Emitter()
    graph_inputs = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    np_, nb = len(param_names), len(buffer_names)
    input_names = param_names + buffer_names + ["x", "y"]
    for n, name in zip(placeholders, input_names):
        e.names[n] = name
        t = n.meta["val"]
        graph_inputs.append(helper.make_tensor_value_info(name, DTYPES[t.dtype], list(t.shape)))
    bn_updates = {}
    renamed = output_names(gm, param_names, buffer_names, placeholders)
    for n in gm.graph.nodes:
        if n.op == "get_attr":  # a constant tensor the model builds (Swin's relative position index)
            t = getattr(gm, n.target).detach()
            e.names[n] = n.target
            e.inits.append(numpy_helper.from_array(t.numpy(), n.target))
            continue
        if n.op != "call_function":
            continue
        if n.target.__name__ == "getitem":
            src, k = n.args
            e.names[n] = e.names[src][k]
            continue
        op = n.target.overloadpacket.__name__
        if op == "detach" and n.args[0].target is torch.ops.aten.ones_like.default:
            e.names[n] = e.names[n.args[0]]  # the gradient's seed is used as it is
            continue
        val = n.meta.get("val")
        multi = isinstance(val, (list, tuple))
        outs = ["%s.%d" % (n.name, k) if v is not None else "" for k, v in enumerate(val)] \
            if multi else [renamed.get(n, n.name)]
        e.names[n] = outs if multi else outs[0]
        for name, v in zip(outs, val if multi else [val]):
            if v is not None:
                e.vi(name, v)
        a = n.args
        node = train_node(e, op, a, outs, bn_updates) or math_node(e, n, op, a, val, outs) or \
            layout_node(e, op, a, val, outs) or pool_node(e, op, a, outs) or norm_node(e, op, a, outs) or \
            aten_node(e, n, outs)
        while len(node.output) > 1 and not node.output[-1]:
            node.output.pop()
        node.name = n.name
        node.doc_string = str(n.target)
        e.nodes.append(node)
    for name in renamed.values():
        bn_updates.setdefault(name, e.vinfo[name])
    graph_outputs = [e.vinfo[p + ".updated"] for p in param_names]
    graph_outputs += [bn_updates[b + ".updated"] for b in buffer_names if b + ".updated" in bn_updates]
    out_names = {o.name for o in graph_outputs}
    vis = [v for k, v in e.vinfo.items() if k not in out_names]
    graph = helper.make_graph(e.nodes, title, graph_inputs, graph_outputs, initializer=e.inits, value_info=vis)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1),
                                                    helper.make_opsetid("org.pytorch.aten", 1)],
                              producer_name="olla-onnx bench/trace_train.py")
    model.ir_version = 8
    model.doc_string = "One SGD training step of %s traced with make_fx(tracing_mode='fake') in torch %s; " \
        "node order = FX order. " % (title, torch.__version__)
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
    nodes, np_, nb = emit(gm, pn, bn, path, "%s_train_bs%d" % (name, batch))
    print("%s batch %d: %d nodes, %d parameters, %d buffers -> %s" % (name, batch, nodes, np_, nb, path))


if __name__ == "__main__":
    main()
