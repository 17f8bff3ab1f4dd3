#!/usr/bin/python3
"""Writes a copy of an ONNX model with one float32 initializer changed by the
smallest step: the lowest mantissa bit of every element is flipped. Used to
show that the ONNX Runtime comparison notices a one-ulp difference.

    /usr/bin/python3 scripts/alter_initializer.py in.onnx out.onnx [--name INIT]

Without --name the first float32 initializer is altered. External data is
not supported (the tensor must be stored in the model).
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--name", help="initializer to alter (default: the first float32 one)")
    args = ap.parse_args()
    with open(args.input, "rb") as f:
        model = onnx.ModelProto.FromString(f.read())
    for idx, t in enumerate(model.graph.initializer):
        if args.name is not None and t.name != args.name:
            continue
        if t.data_type != TensorProto.FLOAT or t.data_location == TensorProto.EXTERNAL:
            if args.name is not None:
                raise SystemExit(f"alter_initializer: '{t.name}' is not a float32 tensor stored in the model")
            continue
        arr = numpy_helper.to_array(t).astype(np.float32)
        bits = arr.view(np.uint32) ^ np.uint32(1)
        model.graph.initializer[idx].CopyFrom(numpy_helper.from_array(bits.view(np.float32), t.name))
        with open(args.output, "wb") as f:
            f.write(model.SerializeToString())
        print(f"alter_initializer: {args.output}: flipped the last bit of the {arr.size} elements of '{t.name}'",
              file=sys.stderr)
        return 0
    what = f"initializer '{args.name}'" if args.name else "float32 initializer"
    raise SystemExit(f"alter_initializer: {args.input} has no {what}")


if __name__ == "__main__":
    sys.exit(main())
