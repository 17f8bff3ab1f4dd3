#!/usr/bin/python3
"""Checks that a training step made by scripts/make_training_models.py
computes the right loss, gradients and update, from what ONNX Runtime's
training build computed for it (tests/ort/train_run.mjs --dump DIR).

    /usr/bin/python3 tests/ort/check_training_grads.py MODEL.json DUMP_DIR [MODEL.json DUMP_DIR ...]

MODEL.json is the description the generator writes beside the model. The
reference is an independent implementation of the same network in PyTorch,
in float64, fed the inputs the runtime was fed (DUMP_DIR/input_*.npy); torch's
autograd gives the gradients. It compares:
- the loss: relative error below 1e-5;
- every parameter's gradient, when the step exposes them (--expose-grads):
  relative error ||ort - ref|| / max(||ref||, 1e-3 G) below 1e-4, where G is
  the largest gradient norm of the step (some gradients are zero in exact
  arithmetic, a bias before batch normalization or the key bias of
  attention, and float32 leaves ~1e-8 there), and every element within 1e-3
  of max(max|ref|, 1e-3 M), M the largest gradient element of the step;
- the update: with sgd, `p.updated` against p - lr * grad (reference, within
  2 ulp of p plus 1e-4 of lr * max(max|grad|, 1e-3 M), M the largest gradient
  element of the step) and, with exposed gradients, bit for
  bit against float32(p - float32(grad * lr)) from the runtime's own
  gradient; with accumulate, `p_grad.accumulation.buffer.out` against
  (buffer unless lazy_reset_grad) + grad in the same two ways, and the flags;
- batch normalization's updated running statistics.
Several (MODEL.json, DUMP_DIR) pairs are checked in turn (one torch import).
Prints one line per check, prefixed with the dump's folder when there are
several, and exits 1 when any fails, 2 on usage errors.
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

LOSS_RTOL = 1e-5
GRAD_RTOL = 1e-4
ELEMENT_RTOL = 1e-3


class Inputs:
    def __init__(self, dump):
        with open(os.path.join(dump, "manifest.json")) as f:
            manifest = json.load(f)
        self.inputs = {e["name"]: np.load(os.path.join(dump, e["file"])) for e in manifest["inputs"]}
        self.outputs = {e["name"]: np.load(os.path.join(dump, e["file"])) for e in manifest["outputs"]}
        self.params = {}

    def t(self, name, grad=False):
        """The input as a float64 (or int64) tensor; parameters track grads."""
        a = self.inputs[name]
        t = torch.from_numpy(a.astype(np.float64) if a.dtype == np.float32 else a)
        if grad:
            t.requires_grad_(True)
            self.params[name] = t
        return t


def linear(v, x, name):
    w = v.t(f"{name}.weight", True)
    b = v.t(f"{name}.bias", True)
    return x @ (w / math.sqrt(w.shape[0])) + b


def layer_norm(v, x, name, eps):
    w = v.t(f"{name}.weight", True)
    b = v.t(f"{name}.bias", True)
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def batch_norm(v, x, name, eps, momentum, running):
    """Training mode: batch statistics (population variance); ONNX's running
    statistics update, running = momentum * running + (1 - momentum) * batch."""
    w = v.t(f"{name}.weight", True)
    b = v.t(f"{name}.bias", True)
    mean = x.mean(dim=(0, 2, 3))
    var = x.var(dim=(0, 2, 3), unbiased=False)
    y = (x - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + eps)
    y = y * w[None, :, None, None] + b[None, :, None, None]
    rm, rv = v.t(f"{name}.running_mean"), v.t(f"{name}.running_var")
    running[f"{name}.running_mean.updated"] = momentum * rm + (1 - momentum) * mean.detach()
    running[f"{name}.running_var.updated"] = momentum * rv + (1 - momentum) * var.detach()
    return y


def loss_of(v, cfg, y):
    if cfg["loss"] == "mse":
        return ((y - v.t("target")) ** 2).mean()
    return F.cross_entropy(y, v.t("labels"))


def mlp(v, cfg, running):
    h = v.t("x")
    for i in range(cfg["depth"]):
        h = torch.relu(linear(v, h, f"fc{i}"))
    return loss_of(v, cfg, linear(v, h, "head"))


def cnn(v, cfg, running):
    h = v.t("x")
    size = cfg["image"]
    for i in range(cfg["depth"]):
        w = v.t(f"conv{i}.weight", True)
        b = v.t(f"conv{i}.bias", True)
        h = F.conv2d(h, w, b, padding=1)
        h = batch_norm(v, h, f"bn{i}", cfg["bn_epsilon"], cfg["bn_momentum"], running)
        h = torch.relu(h)
        if i % 2 == 1 and size >= 2:
            h = F.max_pool2d(h, 2, 2)
            size //= 2
    h = h.mean(dim=(2, 3))
    return loss_of(v, cfg, linear(v, h, "head"))


def transformer(v, cfg, running):
    x = v.t("x")
    b, seq, d = x.shape
    heads = cfg["heads"]
    dh = d // heads
    mask = torch.triu(torch.full((seq, seq), -1e9, dtype=torch.float64), 1)
    h = linear(v, x, "embed")
    eps = cfg["ln_epsilon"]
    for i in range(cfg["depth"]):
        p = f"layer{i}"
        n1 = layer_norm(v, h, f"{p}.ln1", eps)
        q, k, val = (linear(v, n1, f"{p}.attn.{part}").reshape(b, seq, heads, dh).transpose(1, 2)
                     for part in ("q", "k", "v"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh) + mask
        ctx = torch.softmax(scores, dim=-1) @ val
        ctx = ctx.transpose(1, 2).reshape(b, seq, d)
        h = h + linear(v, ctx, f"{p}.attn.out")
        n2 = layer_norm(v, h, f"{p}.ln2", eps)
        h = h + linear(v, F.gelu(linear(v, n2, f"{p}.mlp.fc1")), f"{p}.mlp.fc2")
    h = layer_norm(v, h, "ln_f", eps)
    logits = linear(v, h, "head").reshape(b * seq, -1)
    return F.cross_entropy(logits, v.t("labels").reshape(-1))


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer}


def ulp32(a):
    a = np.abs(np.asarray(a, np.float32))
    return np.spacing(a).astype(np.float64)


class Checker:
    def __init__(self):
        self.failures = 0
        self.prefix = ""

    def result(self, ok, what):
        print(("ok: " if ok else "FAILED: ") + self.prefix + what)
        if not ok:
            self.failures += 1

    def close(self, name, got, ref, rtol, floor=0.0, element_floor=None):
        """||got - ref|| / max(||ref||, floor) below rtol and, with
        element_floor, max|got - ref| / max(max|ref|, element_floor) below
        ELEMENT_RTOL."""
        if got is None:
            self.result(False, f"{name}: not an output of the step")
            return
        got = np.asarray(got, np.float64)
        ref = np.asarray(ref, np.float64)
        if got.shape != ref.shape:
            self.result(False, f"{name}: shape {got.shape}, reference {ref.shape}")
            return
        norm = np.linalg.norm(ref)
        scale = max(norm, floor)
        err = np.linalg.norm(got - ref) / scale if scale > 0 else float(np.linalg.norm(got))
        ok = bool(err < rtol)
        what = f"{name}: relative error {err:.2e} (limit {rtol:.0e}, |ref| {norm:.3e})"
        if element_floor is not None:
            escale = max(np.abs(ref).max(), element_floor)
            eerr = np.abs(got - ref).max() / escale if escale > 0 else float(np.abs(got).max())
            ok = ok and bool(eerr < ELEMENT_RTOL)
            what += f", worst element {eerr:.2e} (limit {ELEMENT_RTOL:.0e})"
        self.result(ok, what)


def main(argv):
    if not argv or len(argv) % 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    c = Checker()
    for k in range(0, len(argv), 2):
        c.prefix = f"{argv[k + 1]}: " if len(argv) > 2 else ""
        check(c, argv[k], argv[k + 1])
    if c.failures:
        print(f"{c.failures} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def check(c, config, dump):
    with open(config) as f:
        cfg = json.load(f)
    v = Inputs(dump)
    running = {}
    loss = MODELS[cfg["kind"]](v, cfg, running)
    loss.backward()
    c.close("loss", v.outputs["loss"], loss.detach().numpy(), LOSS_RTOL)
    lr = np.float32(cfg["learning_rate"])
    missing = [p for p in cfg["params"] if p not in v.params]
    c.result(not missing, f"the reference uses every parameter of the model (missing: {missing})")
    largest = max(np.linalg.norm(t.grad.numpy()) for t in v.params.values())
    largest_element = max(np.abs(t.grad.numpy()).max() for t in v.params.values())
    for p in cfg["params"]:
        if p not in v.params:
            continue
        ref = v.params[p].grad.numpy()
        own = v.outputs.get(f"{p}_grad")
        if cfg["expose_grads"]:
            c.close(f"{p} gradient", own, ref, GRAD_RTOL, 1e-3 * largest, 1e-3 * largest_element)
        param = v.inputs[p]
        if cfg["update"] == "sgd":
            got = v.outputs[f"{p}.updated"]
            expect = param.astype(np.float64) - float(lr) * ref
            base = param
        else:
            got = v.outputs[f"{p}_grad.accumulation.buffer.out"]
            reset = bool(v.inputs["lazy_reset_grad"][0])
            buf = v.inputs[f"{p}_grad.accumulation.buffer"]
            base = np.zeros_like(buf) if reset else buf
            expect = base.astype(np.float64) + ref
            flag = v.outputs[f"{p}_grad.accumulation.out"]
            c.result(flag.shape == (1,) and bool(flag[0]), f"{p}: accumulator flag set")
        scale = max(np.abs(ref).max(), 1e-3 * largest_element)
        tol = 2 * ulp32(np.maximum(np.abs(base), np.abs(expect))) + 1e-4 * scale * (
            float(lr) if cfg["update"] == "sgd" else 1.0)
        worst = float(np.max(np.abs(got.astype(np.float64) - expect) - tol))
        c.result(worst <= 0, f"{p} {'update' if cfg['update'] == 'sgd' else 'accumulation'} matches the reference "
                 f"(worst excess over the tolerance {worst:.2e})")
        if own is not None:
            exact = (param - own * lr) if cfg["update"] == "sgd" else (base + own)
            c.result(np.array_equal(got.view(np.uint32), exact.astype(np.float32).view(np.uint32)),
                     f"{p}: the update is bit for bit the runtime's gradient applied")
    for name, ref in running.items():
        c.close(name, v.outputs[name], ref.numpy(), GRAD_RTOL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
