"""olla-onnx in Python: plan an ONNX model's memory without leaving the process.

    import onnx, olla_onnx
    model = onnx.load("train.onnx")
    planned, report = olla_onnx.optimize(model, dims={"batch": 32})
    print(report["input_order_peak_bytes"], "->", report["arena_bytes"])
    onnx.save(planned, "train.planned.onnx")

The functions call the C library (libolla) in this process through the
extension module ``olla_onnx._olla``; they never run the olla-onnx command.
A model is an ``onnx.ModelProto``, the bytes of a serialized one, or a path
(``str`` or ``os.PathLike``); a model whose weights are external data must be
given by its path. The planning runs with the GIL released, and Ctrl-C
interrupts it (KeyboardInterrupt, no output left behind).

Errors of the model raise ``OllaError`` with the library's one-line message
(``.code`` 1 for bad input, 3 for an internal error); bad arguments raise
``ValueError`` or ``TypeError``.
"""
import json
import math
import numbers
import os
from collections.abc import Mapping

from . import _olla
from ._olla import OllaError

__version__ = _olla.__version__
__all__ = ["optimize", "check", "shapes", "OllaError"]

_RUNTIMES = ("ort", "ort-priority", "listed")
_SHARINGS = ("runtime", "none")


def _model(model):
    """(bytes, is_path, folder of a path or None) for the extension."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fsencode(model)
        if not path or b"\0" in path:
            raise ValueError("model: an empty path or one with a NUL byte")
        return path, True, os.path.dirname(os.fsdecode(path)) or "."
    if isinstance(model, (bytes, bytearray, memoryview)):
        return model, False, None
    serialize = getattr(model, "SerializeToString", None)
    if type(model).__name__ == "ModelProto" and callable(serialize):
        return serialize(), False, None
    raise TypeError("model must be an onnx.ModelProto, the bytes of one, or a path, not %s" % type(model).__name__)


def _flag(name, value):
    if not isinstance(value, bool):
        raise TypeError("%s must be True or False, not %r" % (name, value))
    return value


def _integer(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an int, not %r" % (name, value))
    return int(value)


def _dims(dims):
    """{name: value} as [(name, value)]."""
    if dims is None:
        return []
    if not isinstance(dims, Mapping):
        raise TypeError("dims must be a dict of dimension names to sizes, such as {'batch': 32}")
    out = []
    for name, value in dims.items():
        if not isinstance(name, str):
            raise TypeError("dims: a dimension name must be a str, not %r" % (name,))
        if not name or "\0" in name:
            raise ValueError("dims: %r is no dimension name" % (name,))
        value = _integer("dims[%r]" % name, value)
        if not 0 <= value < 2**63:
            raise ValueError("dims[%r] = %d: a size must be a non-negative 64-bit integer" % (name, value))
        out.append((name, value))
    return out


def _input_shapes(shapes):
    """{input name: [d0, d1, ...]} (None or -1: unknown) as [(name, [dims])]."""
    if shapes is None:
        return []
    if not isinstance(shapes, Mapping):
        raise TypeError("input_shapes must be a dict of graph input names to shapes, such as {'x': [32, 3, 224, 224]}")
    out = []
    for name, dims in shapes.items():
        if not isinstance(name, str):
            raise TypeError("input_shapes: an input name must be a str, not %r" % (name,))
        if not name or "\0" in name:
            raise ValueError("input_shapes: %r is no input name" % (name,))
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise TypeError("input_shapes[%r] must be a list of dimensions, not %r" % (name, dims))
        shape = []
        for d in dims:
            d = -1 if d is None else _integer("input_shapes[%r] dimension" % name, d)
            if not -1 <= d < 2**63:
                raise ValueError("input_shapes[%r]: dimension %d; give sizes >= 0, or -1 or None for unknown" % (name, d))
            shape.append(d)
        out.append((name, shape))
    return out


def _choice(name, value, choices):
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %r" % (name, value))
    if value not in choices:
        raise ValueError("%s must be one of %s, not %r" % (name, ", ".join(repr(c) for c in choices), value))
    return value


def _memory_limit(limit):
    """None, or the text olla_memory_limit_parse reads ("123456", "1.5Gi", "60%")."""
    if limit is None:
        return None
    if isinstance(limit, str):
        return limit
    return str(_integer("memory_limit", limit))


def _time_limit(seconds):
    if seconds is None:
        env = os.environ.get("OLLA_TIME_LIMIT")  # the command line's site-wide default
        if env is None:
            return 30.0
        try:
            seconds = float(env)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise ValueError("OLLA_TIME_LIMIT=%s: needs a positive number of seconds" % env)
        return seconds
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError("time_limit must be a number of seconds, not %r" % (seconds,))
    seconds = float(seconds)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError("time_limit must be a positive number of seconds, not %r" % seconds)
    return seconds


def _align(align):
    align = _integer("align", align)
    if not (1 <= align <= 2**30 and align & (align - 1) == 0):
        raise ValueError("align must be a power of two from 1 to 1073741824 (bytes), not %d" % align)
    return align


def _output(path):
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("output must be a path, not %s" % type(path).__name__)
    path = os.fsencode(path)
    if not path or b"\0" in path:
        raise ValueError("output: an empty path or one with a NUL byte")
    return path


def optimize(model, *, dims=None, input_shapes=None, runtime="ort", sharing="runtime", memory_limit=None,
             time_limit=None, align=64, keep_order=False, strict_shapes=False, allow_unknown_sizes=False,
             output=None, load_external_data=True):
    """Plans the model; returns (planned onnx.ModelProto, report dict).

    The options are the command line's (README, Usage): dims {"batch": 32}
    (--dim), input_shapes {"x": [32, 3, None, None]} (--input-shape; None or
    -1 unknown), runtime "ort" | "ort-priority" | "listed", sharing
    "runtime" | "none", memory_limit bytes (int) or text ("1.5Gi", "60%"),
    time_limit seconds (None: $OLLA_TIME_LIMIT or 30), align (a power of two),
    keep_order, strict_shapes, allow_unknown_sizes. The report is the JSON of
    --report. The planned model is, serialized, the file the command line
    writes for the same options; output=PATH also writes that file (external
    data made available beside it). A model read from a path with external
    data comes back with its weights loaded, as onnx.load gives it, unless
    load_external_data=False (then its references point beside the input).
    """
    data, is_path, folder = _model(model)
    args = (_dims(dims), _input_shapes(input_shapes), _choice("runtime", runtime, _RUNTIMES),
            _choice("sharing", sharing, _SHARINGS), _memory_limit(memory_limit), _time_limit(time_limit),
            _align(align), _flag("keep_order", keep_order), _flag("strict_shapes", strict_shapes),
            _flag("allow_unknown_sizes", allow_unknown_sizes), _output(output))
    _flag("load_external_data", load_external_data)
    planned, report = _olla.optimize(data, is_path, *args)
    import onnx
    from onnx import external_data_helper

    proto = onnx.ModelProto()
    proto.ParseFromString(planned)
    if is_path and load_external_data:
        external_data_helper.load_external_data_for_model(proto, folder)  # only the tensors stored outside
    return proto, json.loads(report)


def check(model, *, dims=None, input_shapes=None, strict_shapes=False):
    """Verifies the plan a written model carries (olla-onnx check); None, or
    OllaError naming the first problem. dims and input_shapes replace the
    bindings the plan records."""
    data, is_path, _ = _model(model)
    _olla.check(data, is_path, _dims(dims), _input_shapes(input_shapes), _flag("strict_shapes", strict_shapes))


def shapes(model, *, dims=None, input_shapes=None, strict_shapes=False, value_info=True):
    """The type and shape inferred for every tensor of the main graph, as the
    dict olla-onnx shapes prints: {"tensors": [{"name", "dtype", "shape",
    "bytes", "source"}], "unknown": [...], "reasons": {...}, "warnings": [...]}.
    value_info=False ignores the model's value_info (--no-value-info)."""
    data, is_path, _ = _model(model)
    text = _olla.shapes(data, is_path, _dims(dims), _input_shapes(input_shapes), _flag("strict_shapes", strict_shapes),
                        _flag("value_info", value_info))
    return json.loads(text)
