#!/usr/bin/python3
"""Traces one training step of a decoder-only language model to ONNX.

A step is what the training graphs of the corpus hold: the forward pass, the
cross-entropy loss, the gradients of every parameter and an optimizer update
(SGD, p - lr * g, or AdamW with both moments), traced with torch.fx's
make_fx (PyTorch 1.13, fake tensors: no weights are computed or stored) and
written one ONNX node per PyTorch operation, with a value_info for every
tensor. Standard ONNX operators where the semantics match, ONNX Runtime's
com.microsoft gradient operators where one exists, and org.pytorch.aten
`ATen` nodes (the operator and overload in attributes, non-tensor arguments
as attributes named as in PyTorch's signature) for the rest. Parameters,
Adam moments and data are graph inputs; the updated parameters (and
moments) are the graph outputs, named `<param>.updated`,
`<param>.exp_avg.updated` and `<param>.exp_avg_sq.updated`.

Two architectures:
  gpt2   learned positions, LayerNorm, causal attention, GELU (tanh) MLP,
         dropout, the output projection tied to the token embedding;
  llama  RMSNorm, rotary position embeddings, SwiGLU MLP, no biases, no
         dropout, an untied output projection.

Usage (run with /usr/bin/python3: Debian's torch and onnx):

    scripts/make_llm_step.py --arch gpt2 --layers 24 --optimizer adamw out.onnx
    scripts/make_llm_step.py --arch llama --layers 12 --width 128 --seq 128 out.onnx

or from Python:

    sys.path.insert(0, "scripts"); import make_llm_step
    model = make_llm_step.make_step("gpt2", layers=24, optimizer="adamw")

The node count grows linearly with the layers (about 190 per layer with SGD
and 300 with AdamW for gpt2); width, heads, sequence, vocabulary and batch
change the bytes only. The output is deterministic for the same versions.
"""

import argparse
import math
import operator
import sys
import time

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils import stateless

OPSET = 17
IR_VERSION = 8

# ---------------------------------------------------------------- models


class GPT2Block(nn.Module):
    def __init__(self, d, heads, drop):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)
        self.heads, self.drop = heads, drop

    def forward(self, x, mask):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(mask, float("-inf"))
        att = F.dropout(F.softmax(att, dim=-1), self.drop, True)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + F.dropout(self.c_proj(y), self.drop, True)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + F.dropout(self.mlp_proj(h), self.drop, True)


class GPT2(nn.Module):
    def __init__(self, layers, d, heads, vocab, seq, drop=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList([GPT2Block(d, heads, drop) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.drop = drop

    def forward(self, idx, pos, mask, cos, sin):
        x = F.dropout(self.wte(idx) + self.wpe(pos), self.drop, True)
        for blk in self.blocks:
            x = blk(x, mask)
        return F.linear(self.ln_f(x), self.wte.weight)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)
        self.heads = heads

    def forward(self, x, mask, cos, sin):
        b, t, d = x.shape
        hd = d // self.heads
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.heads, hd).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.heads, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.o_proj(y)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, layers, d, heads, vocab, seq):
        super().__init__()
        hidden = 256 * ((int(8 * d / 3) + 255) // 256) if d >= 256 else 8 * ((int(8 * d / 3) + 7) // 8)
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaBlock(d, heads, hidden) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, pos, mask, cos, sin):
        x = self.embed_tokens(idx)
        for blk in self.layers:
            x = blk(x, mask, cos, sin)
        return self.lm_head(self.norm(x))


# ---------------------------------------------------------------- the step

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
WEIGHT_DECAY = 0.01


def make_train_fn(model, names, optimizer, lr):
    """One step as a function of (params, exp_avgs, exp_avg_sqs, data...)
    returning the updated tensors; AdamW as torch.optim.AdamW computes it at
    step 1, out of place."""
    b1, b2 = ADAM_BETAS
    bc1, bc2 = 1 - b1, 1 - b2

    def train(params, exp_avgs, exp_avg_sqs, idx, pos, mask, cos, sin, target):
        logits = stateless.functional_call(model, dict(zip(names, params)), (idx, pos, mask, cos, sin))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1))
        grads = torch.autograd.grad(loss, params)
        out = []
        for i, (p, g) in enumerate(zip(params, grads)):
            if optimizer == "sgd":
                out.append(p - lr * g)
                continue
            m = exp_avgs[i] * b1 + g * (1 - b1)
            v = exp_avg_sqs[i] * b2 + g * g * (1 - b2)
            denom = torch.sqrt(v) / math.sqrt(bc2) + ADAM_EPS
            out += [p * (1 - lr * WEIGHT_DECAY) - (lr / bc1) * m / denom, m, v]
        return out

    return train


# ---------------------------------------------------------------- fx -> onnx

DTYPES = {
    torch.float32: TensorProto.FLOAT,
    torch.float16: TensorProto.FLOAT16,
    torch.bfloat16: TensorProto.BFLOAT16,
    torch.float64: TensorProto.DOUBLE,
    torch.int64: TensorProto.INT64,
    torch.int32: TensorProto.INT32,
    torch.bool: TensorProto.BOOL,
}

# unary operators whose ONNX twin has the same semantics
UNARY = {"aten.sqrt.default": "Sqrt", "aten.sigmoid.default": "Sigmoid", "aten.tanh.default": "Tanh",
         "aten.exp.default": "Exp", "aten.relu.default": "Relu", "aten.cos.default": "Cos", "aten.sin.default": "Sin"}


class Converter:
    def __init__(self, gm, input_names, output_names):
        self.gm = gm
        self.nodes, self.inits, self.infos = [], [], []
        self.consts = {}
        self.name = {}  # fx node -> onnx tensor name (or list for tuples)
        self.input_names, self.output_names = input_names, output_names
        self.inputs, self.outputs = [], []

    # constants are shared initializers named by value, as in the corpus
    def const(self, value, dtype):
        if dtype == TensorProto.INT64:
            vals = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            scalar = not isinstance(value, (list, tuple))
            key = "const.int64." + ("_".join(str(v).replace("-", "m") for v in vals) + (".scalar" if scalar else ""))
        else:
            v = float(value)
            scalar = True
            vals = [v]
            text = repr(v).replace(".", "p").replace("-", "m").replace("+", "")
            key = "const.float." + text + ".scalar"
        if key not in self.consts:
            dims = [] if scalar else [len(vals)]
            self.inits.append(helper.make_tensor(key, dtype, dims, vals))
            self.consts[key] = True
        return key

    def tensor(self, arg):
        if isinstance(arg, torch.fx.Node):
            return self.name[arg]
        return self.const(arg, TensorProto.FLOAT)

    def info(self, name, val):
        self.infos.append(helper.make_tensor_value_info(name, DTYPES[val.dtype], list(val.shape)))

    def emit(self, fx, op_type, inputs, outputs, domain="", **attrs):
        node = helper.make_node(op_type, inputs, outputs, name=fx.name, domain=domain, **attrs)
        node.doc_string = str(fx.target)
        self.nodes.append(node)

    def aten(self, fx, inputs, outputs, attrs):
        schema = fx.target._schema
        a = {"operator": schema.name.split("::")[1], "overload_name": schema.overload_name or "default"}
        a.update(attrs)
        node = helper.make_node("ATen", inputs, outputs, name=fx.name, domain="org.pytorch.aten")
        for k, v in a.items():
            node.attribute.append(helper.make_attribute(k, v))
        node.doc_string = str(fx.target)
        self.nodes.append(node)

    def generic_aten(self, fx, outputs):
        """Tensor arguments become inputs in signature order, the others
        attributes named after the argument."""
        schema = fx.target._schema
        inputs, attrs = [], {}
        args = list(fx.args) + [fx.kwargs.get(a.name) for a in schema.arguments[len(fx.args):]]
        for sa, v in zip(schema.arguments, args):
            if isinstance(v, torch.fx.Node):
                inputs.append(self.name[v])
            elif v is None:
                continue
            elif isinstance(v, bool):
                attrs[sa.name] = int(v)
            elif isinstance(v, (int, float, str)):
                attrs[sa.name] = v
            elif isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
                attrs[sa.name] = [int(x) for x in v]
            elif isinstance(v, (list, tuple)) and all(isinstance(x, bool) for x in v):
                attrs[sa.name] = [int(x) for x in v]
            elif isinstance(v, torch.dtype):
                attrs[sa.name] = str(v)
            elif isinstance(v, (torch.layout, torch.device, torch.memory_format)):
                attrs[sa.name] = str(v)
            else:
                raise ValueError(f"{fx.name}: argument {sa.name} of {fx.target} is {v!r}")
        self.aten(fx, inputs, outputs, attrs)

    def run(self):
        g = self.gm.graph
        ph = 0
        out_node = [n for n in g.nodes if n.op == "output"][0]
        self.out_name = {}
        for o, nm in zip(out_node.args[0], self.output_names):
            if o in self.out_name or o.op != "call_function":
                raise ValueError(f"output {nm} is not a tensor of its own")
            self.out_name[o] = nm
        for fx in g.nodes:
            if fx.op == "placeholder":
                nm = self.input_names[ph]
                ph += 1
                self.name[fx] = nm
                val = fx.meta["val"]
                self.inputs.append(helper.make_tensor_value_info(nm, DTYPES[val.dtype], list(val.shape)))
            elif fx.op == "call_function":
                self.call(fx)
            elif fx.op == "output":
                outs = fx.args[0]
                for o, nm in zip(outs, self.output_names):
                    val = o.meta["val"]
                    self.outputs.append(helper.make_tensor_value_info(nm, DTYPES[val.dtype], list(val.shape)))
        out_set = {o.name for o in self.outputs}
        self.infos = [i for i in self.infos if i.name not in out_set]

    def call(self, fx):
        t = fx.target
        if t is operator.getitem:
            src, i = fx.args
            self.name[fx] = self.name[src][i]
            return
        val = fx.meta.get("val")
        multi = isinstance(val, (tuple, list)) or val is None
        if multi:
            vals = val if val is not None else self.meta_outputs(fx)
            outs = [f"{fx.name}.{i}" for i in range(len(vals))]
            self.name[fx] = outs
            for nm, v in zip(outs, vals):
                self.info(nm, v)
        else:
            nm = self.out_name.get(fx, fx.name)
            outs = [nm]
            self.name[fx] = nm
            self.info(nm, val)
        self.convert(fx, outs)

    def meta_outputs(self, fx):
        def meta(a):
            if isinstance(a, torch.fx.Node):
                v = a.meta["val"]
                return torch.empty(v.shape, dtype=v.dtype, device="meta")
            if isinstance(a, (list, tuple)):
                return type(a)(meta(x) for x in a)
            return a

        return fx.target(*meta(fx.args), **{k: meta(v) for k, v in fx.kwargs.items()})

    def convert(self, fx, outs):
        t = str(fx.target)
        a = fx.args
        I = self.tensor
        shape = lambda n: list(n.meta["val"].shape)
        if t in ("aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default"):
            self.emit(fx, "Reshape", [I(a[0]), self.const(list(a[1]), TensorProto.INT64)], outs)
        elif t == "aten.t.default":
            self.emit(fx, "Transpose", [I(a[0])], outs, perm=[1, 0])
        elif t == "aten.transpose.int":
            r = len(shape(a[0]))
            perm = list(range(r))
            d0, d1 = a[1] % r, a[2] % r
            perm[d0], perm[d1] = perm[d1], perm[d0]
            self.emit(fx, "Transpose", [I(a[0])], outs, perm=perm)
        elif t == "aten.permute.default":
            self.emit(fx, "Transpose", [I(a[0])], outs, perm=list(a[1]))
        elif t == "aten.expand.default":
            self.emit(fx, "Expand", [I(a[0]), self.const(list(a[1]), TensorProto.INT64)], outs)
        elif t in ("aten.clone.default", "aten.detach.default", "aten.alias.default"):
            self.emit(fx, "Identity", [I(a[0])], outs)
        elif t == "aten.addmm.default":
            self.emit(fx, "Gemm", [I(a[1]), I(a[2]), I(a[0])], outs)
        elif t in ("aten.mm.default", "aten.bmm.default", "aten.matmul.default"):
            self.emit(fx, "MatMul", [I(a[0]), I(a[1])], outs)
        elif t in ("aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.div_.Scalar",
                   "aten.mul.Scalar", "aten.add.Scalar", "aten.div.Scalar", "aten.add_.Tensor", "aten.sub_.Tensor",
                   "aten.mul_.Tensor", "aten.div_.Tensor", "aten.mul_.Scalar", "aten.add_.Scalar"):
            op = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div"}[t.split(".")[1].rstrip("_")]
            if fx.kwargs.get("alpha", 1) != 1:
                raise ValueError(f"{fx.name}: alpha is not supported")
            self.emit(fx, op, [I(a[0]), I(a[1])], outs)
        elif t == "aten.rsub.Scalar":
            self.emit(fx, "Sub", [I(a[1]), I(a[0])], outs)
        elif t == "aten.neg.default":
            self.emit(fx, "Neg", [I(a[0])], outs)
        elif t in UNARY:
            self.emit(fx, UNARY[t], [I(a[0])], outs)
        elif t == "aten.pow.Tensor_Scalar":
            self.emit(fx, "Pow", [I(a[0]), I(a[1])], outs)
        elif t == "aten.mean.dim":
            keep = int(a[2]) if len(a) > 2 else 0
            self.emit(fx, "ReduceMean", [I(a[0])], outs, axes=list(a[1]), keepdims=keep)
        elif t == "aten.sum.dim_IntList":
            keep = int(a[2]) if len(a) > 2 else 0
            self.emit(fx, "ReduceSum", [I(a[0]), self.const(list(a[1]), TensorProto.INT64)], outs, keepdims=keep)
        elif t == "aten.sum.default":
            self.emit(fx, "ReduceSum", [I(a[0])], outs, keepdims=0)
        elif t == "aten.cat.default":
            dim = a[1] if len(a) > 1 else 0
            self.emit(fx, "Concat", [I(x) for x in a[0]], outs, axis=dim)
        elif t == "aten.slice.Tensor":
            dim, start, end = a[1], a[2], a[3]
            step = a[4] if len(a) > 4 else 1
            size = shape(a[0])[dim]
            end = min(end, size)
            self.emit(fx, "Slice", [I(a[0]), self.const([start], TensorProto.INT64), self.const([end], TensorProto.INT64),
                                    self.const([dim], TensorProto.INT64), self.const([step], TensorProto.INT64)], outs)
        elif t in ("aten.split.Tensor", "aten.split_with_sizes.default"):
            dim = a[2] if len(a) > 2 else 0
            n = shape(a[0])[dim]
            sizes = list(a[1]) if t.startswith("aten.split_with") else [min(a[1], n - i) for i in range(0, n, a[1])]
            self.emit(fx, "Split", [I(a[0]), self.const(sizes, TensorProto.INT64)], outs, axis=dim)
        elif t == "aten._softmax.default":
            self.emit(fx, "Softmax", [I(a[0])], outs, axis=a[1])
        elif t == "aten._log_softmax.default":
            self.emit(fx, "LogSoftmax", [I(a[0])], outs, axis=a[1])
        elif t == "aten._softmax_backward_data.default":
            self.emit(fx, "SoftmaxGrad_13", [I(a[0]), I(a[1])], outs, domain="com.microsoft", axis=a[2])
        elif t == "aten._log_softmax_backward_data.default":
            self.emit(fx, "LogSoftmaxGrad_13", [I(a[0]), I(a[1])], outs, domain="com.microsoft", axis=a[2])
        elif t == "aten.native_layer_norm.default":
            x, nshape, w, b, eps = a
            self.emit(fx, "LayerNormalization", [I(x), I(w), I(b)], outs, axis=-len(nshape), epsilon=float(eps))
        elif t == "aten.native_layer_norm_backward.default":
            gout, x, nshape, mean, rstd, w = a[:6]
            self.emit(fx, "LayerNormalizationGrad", [I(gout), I(x), I(w), I(mean), I(rstd)], outs,
                      domain="com.microsoft", axis=-len(nshape))
        elif t == "aten.masked_fill.Scalar":
            self.emit(fx, "Where", [I(a[1]), I(a[2]), I(a[0])], outs)
        elif t == "aten.where.self":
            self.emit(fx, "Where", [I(a[0]), I(a[1]), I(a[2])], outs)
        elif t == "aten.embedding.default":
            self.emit(fx, "Gather", [I(a[0]), I(a[1])], outs, axis=0)
        elif t == "aten.gelu_backward.default" and fx.kwargs.get("approximate", "none") == "tanh":
            self.emit(fx, "FastGeluGrad", [I(a[0]), I(a[1])], outs, domain="com.microsoft")
        elif t == "aten.gelu_backward.default":
            self.emit(fx, "GeluGrad", [I(a[0]), I(a[1])], outs, domain="com.microsoft")
        else:
            self.generic_aten(fx, outs)


# ---------------------------------------------------------------- driver


def make_step(arch="gpt2", layers=12, optimizer="adamw", width=256, heads=4, seq=128, vocab=2048, batch=1,
              lr=1e-3, dropout=None, stats=None):
    """Returns the ONNX model of one training step (see the module's doc);
    stats (a dict, optional) receives the trace and conversion seconds."""
    if arch not in ("gpt2", "llama") or optimizer not in ("sgd", "adamw"):
        raise ValueError("arch is gpt2 or llama, optimizer sgd or adamw")
    if width % heads or (width // heads) % 2:
        raise ValueError("width must be a multiple of heads, with an even head size")
    torch.manual_seed(0)
    if arch == "gpt2":
        model = GPT2(layers, width, heads, vocab, seq, 0.1 if dropout is None else dropout)
    else:
        model = Llama(layers, width, heads, vocab, seq)
    names = [n for n, _ in model.named_parameters()]
    params = [p.detach().requires_grad_() for p in model.parameters()]
    exp_avgs = [torch.zeros_like(p) for p in params] if optimizer == "adamw" else []
    exp_avg_sqs = [torch.zeros_like(p) for p in params] if optimizer == "adamw" else []
    hd = width // heads
    data = (
        torch.zeros(batch, seq, dtype=torch.int64),
        torch.arange(seq).unsqueeze(0),
        torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1),
        torch.ones(seq, hd),
        torch.zeros(seq, hd),
        torch.zeros(batch, seq, dtype=torch.int64),
    )
    train = make_train_fn(model, names, optimizer, lr)
    t0 = time.time()
    gm = make_fx(train, tracing_mode="fake")(params, exp_avgs, exp_avg_sqs, *data)
    t1 = time.time()
    input_names = names + [f"{n}.exp_avg" for n in names if optimizer == "adamw"]
    input_names += [f"{n}.exp_avg_sq" for n in names if optimizer == "adamw"]
    input_names += ["input_ids", "position_ids", "causal_mask", "rope_cos", "rope_sin", "labels"]
    output_names = []
    for n in names:
        output_names.append(f"{n}.updated")
        if optimizer == "adamw":
            output_names += [f"{n}.exp_avg.updated", f"{n}.exp_avg_sq.updated"]
    conv = Converter(gm, input_names, output_names)
    conv.run()
    used = {i for node in conv.nodes for i in node.input}
    graph_inputs = [i for i in conv.inputs if i.name in used]
    graph = helper.make_graph(conv.nodes, f"{arch}_{layers}l_{optimizer}", graph_inputs, conv.outputs,
                              initializer=conv.inits, value_info=conv.infos)
    model_proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                          helper.make_opsetid("com.microsoft", 1),
                                                          helper.make_opsetid("org.pytorch.aten", 1)],
                                    producer_name="olla-onnx scripts/make_llm_step.py")
    model_proto.ir_version = IR_VERSION
    model_proto.doc_string = (f"one training step of a {arch} decoder: {layers} layers, width {width}, {heads} heads, "
                              f"sequence {seq}, vocabulary {vocab}, batch {batch}, {optimizer}")
    if stats is not None:
        stats["trace_seconds"] = t1 - t0
        stats["convert_seconds"] = time.time() - t1
        stats["nodes"] = len(conv.nodes)
    return model_proto


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the .onnx file to write")
    ap.add_argument("--arch", choices=["gpt2", "llama"], default="gpt2")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--optimizer", choices=["sgd", "adamw"], default="adamw")
    ap.add_argument("--width", type=int, default=256, help="hidden size (default 256)")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128, help="sequence length (default 128)")
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dropout", type=float, default=None, help="gpt2 only (default 0.1)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    stats = {}
    model = make_step(args.arch, args.layers, args.optimizer, args.width, args.heads, args.seq, args.vocab, args.batch,
                      dropout=args.dropout, stats=stats)
    onnx.save(model, args.out)
    if args.verbose:
        print(f"{args.out}: {stats['nodes']} nodes, traced in {stats['trace_seconds']:.1f} s, "
              f"converted in {stats['convert_seconds']:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
