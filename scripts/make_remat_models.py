#!/usr/bin/env python3
"""Models whose memory is mostly activations, for the tests and benchmarks of
recomputation under a memory limit (olla-onnx --memory-limit). All use the
default ONNX domain only, so ONNX Runtime for Node.js runs them and the
outputs of a rewritten model can be compared with the input's bit for bit.

  /usr/bin/python3 scripts/make_remat_models.py --out DIR [--scale K]

writes into DIR:
  mlp_deep_train.onnx   one SGD step of a 10-layer MLP at batch 256*K
                        (models/mlp_train.onnx's construction, deeper and wider)
  cnn_wide_train.onnx   one SGD step of models/cnn_train.onnx's CNN at batch
                        16*K, 32x32 inputs, 32-32-64 channels
  unet_infer.onnx       an encoder-decoder inference network with skip
                        connections (each encoder activation is read again
                        by the decoder), input 1x8x(64*K)x64
Deterministic: the same arguments give the same bytes.
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as mm  # noqa: E402

FLOAT = TensorProto.FLOAT


def make_unet(scale):
    """x -> 3 strided encoder convs -> bottleneck -> 3 decoder stages, each
    Resize x2 + skip Add of the encoder activation of its size + Conv."""
    rs = np.random.RandomState(7)
    h, w, c = 64 * scale, 64, 8
    g = mm.Nodes()
    inits = []

    def conv(x, ci, co, name, stride=1):
        wt = (rs.standard_normal((co, ci, 3, 3)) * (1.0 / np.sqrt(ci * 9))).astype(np.float32)
        inits.append(mm.init(f"{name}_W", wt))
        inits.append(mm.init(f"{name}_b", np.zeros(co, np.float32)))
        y = g.add("Conv", [x, f"{name}_W", f"{name}_b"], [f"{name}_out"], pads=[1, 1, 1, 1],
                  strides=[stride, stride])
        return g.add("Relu", [y], [f"{name}_relu"])

    inits.append(mm.init("scales_x2", mm.f32([1, 1, 2, 2])))
    skips, x, ch = [], "x", c
    for i, co in enumerate((16, 32, 64)):
        x = conv(x, ch, co, f"enc{i}a")
        x = conv(x, co, co, f"enc{i}b")
        skips.append((x, co))
        x = conv(x, co, co, f"down{i}", stride=2)
        ch = co
    x = conv(x, ch, ch, "mid")
    for i in reversed(range(3)):
        skip, co = skips[i]
        up = g.add("Resize", [x, "", "scales_x2"], [f"up{i}"], mode="nearest")
        x = conv(up, ch, co, f"dec{i}a")
        x = g.add("Add", [x, skip], [f"dec{i}_skip"])
        x = conv(x, co, co, f"dec{i}b")
        ch = co
    y = conv(x, ch, 4, "head")
    graph = helper.make_graph(g.nodes, "unet_infer", [helper.make_tensor_value_info("x", FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info(y, FLOAT, [1, 4, h, w])], inits)
    return mm.finish(graph, "unet_infer", "encoder-decoder with skip connections")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--scale", type=int, default=1, help="multiplies batch (or image height) sizes (default 1)")
    args = ap.parse_args()
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    k = args.scale
    models = (
        ("mlp_deep_train.onnx", mm.make_mlp_train(256 * k, (64,) + (256,) * 10 + (10,), "mlp_deep_train")),
        ("cnn_wide_train.onnx", mm.make_cnn_train(16 * k, 32, (3, 32, 32, 64), "cnn_wide_train")),
        ("unet_infer.onnx", make_unet(k)),
    )
    for name, model in models:
        path = mm.save(model, args.out, name)
        print(f"{name}: {os.path.getsize(path)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
