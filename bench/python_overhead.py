#!/usr/bin/python3
"""What a call through the Python package costs on top of the library call.

    PYTHONPATH=BUILD/python /usr/bin/python3 bench/python_overhead.py [--repeat R] MODEL...

For each model, R rounds, each timing in turn (so a drift of the machine's
speed touches all of them alike):
- lib:   the library alone, timed in C inside the extension, in this process
         (olla_model_load_bytes + olla_optimize + olla_report_to_json +
         olla_write_model_bytes on the model's bytes; olla_onnx._olla.time_library);
- bytes: olla_onnx.optimize(the model's bytes), as Python's clock sees it:
         the arguments, the worker thread, the same library work, the
         onnx.ModelProto parsed from the result and the report's JSON read;
- proto: olla_onnx.optimize(an onnx.ModelProto): the same plus serializing it;
- path:  olla_onnx.optimize(its path): the library reads the file itself.
Each figure is the median of the R rounds, in milliseconds; overhead is
the median of the rounds' bytes - lib (paired, so a round slowed by the
machine slows both). A last line sums them over the models. Every call plans with
the same options (time limit 30 s), so every call does the same work.
"""
import argparse
import statistics
import time

import onnx

import olla_onnx
from olla_onnx import _olla


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    print("| model | nodes | lib ms | bytes ms | proto ms | path ms | overhead ms (bytes - lib) | bytes / lib |")
    print("|---|---|---|---|---|---|---|---|")
    sums = [0.0] * 4
    overheads = []
    for path in a.models:
        data = open(path, "rb").read()
        proto = onnx.load_model_from_string(data)
        nodes = len(proto.graph.node)
        olla_onnx.optimize(data, time_limit=30)  # warm-up: the first call pays for page faults
        runs = {"lib": [], "bytes": [], "proto": [], "path": []}
        for _ in range(a.repeat):
            runs["lib"].append(_olla.time_library(data, 30.0))
            runs["bytes"].append(timed(lambda: olla_onnx.optimize(data, time_limit=30)))
            runs["proto"].append(timed(lambda: olla_onnx.optimize(proto, time_limit=30)))
            runs["path"].append(timed(lambda: olla_onnx.optimize(path, time_limit=30)))
        med = [statistics.median(runs[k]) * 1e3 for k in ("lib", "bytes", "proto", "path")]
        over = statistics.median(b - l for b, l in zip(runs["bytes"], runs["lib"])) * 1e3
        overheads.append(over)
        sums = [s + m for s, m in zip(sums, med)]
        print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
            path.rsplit("/", 1)[-1], nodes, med[0], med[1], med[2], med[3], over, med[1] / med[0]))
    print("| all %d models | | %.1f | %.1f | %.1f | %.1f | %.1f in all, median %.3f a call | %.4f |" % (
        len(a.models), sums[0], sums[1], sums[2], sums[3], sum(overheads), statistics.median(overheads),
        sums[1] / sums[0]))


if __name__ == "__main__":
    main()
