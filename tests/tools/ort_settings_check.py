"""Checks a report's ONNX Runtime figures against the process.

    ort_settings_check.py NAME REPORT.json INPUT.jsonl WRITTEN.jsonl MODEL.onnx BATCH

INPUT.jsonl and WRITTEN.jsonl are what `tests/ort/measure.sh MODEL
--settings all` printed for the input and the written model (one line per
setting: arena, pattern, first_run_bytes, steady_bytes). For every setting
of the report's ort_settings, input and written, the first run must be
predicted within 0.5% (arena off, memory pattern on: the figure of
input_ort_allocated_bytes) or 2% (the other settings), and the most held
over three runs within 2% plus the bytes of the model's outputs at BATCH (every
symbolic dimension BATCH): the JavaScript copies of one run's outputs, which
V8 sometimes frees only after the next run. The
defaults' fields must be the defaults' entry. Where the summary says the
written model's saving shows (at least 1% less on the first run and over
three runs, predicted), the process must show it: the written model holds
less than the input on the first run, and no more over three runs. A report
with null figures must say why (ort_model_note); nothing is compared then.
Prints one line per check ("ok: ..." or "FAILED: ..."); exit 1 on a failure."""
import json
import sys

SHOWS = 0.01  # cli/cmd_convert.c ORT_SAVING_SHOWS


def outputs_bytes(path, batch):
    import numpy as np
    import onnx
    from onnx import mapping

    total = 0
    for o in onnx.load(path, load_external_data=False).graph.output:
        t = o.type.tensor_type
        n = 1
        for d in t.shape.dim:
            n *= d.dim_value if d.HasField("dim_value") else batch
        total += n * np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type]).itemsize
    return total


def main():
    name, report_path, in_path, out_path, model_path, batch = sys.argv[1:7]
    output_bytes = outputs_bytes(model_path, int(batch))
    rep = json.load(open(report_path))
    measured = {}
    for side, path in (("input", in_path), ("written", out_path)):
        for line in open(path):
            if line.startswith("{"):
                m = json.loads(line)
                measured[(side, m["arena"], m["pattern"])] = m
    failures = []

    def check(ok, text):
        print(("ok: " if ok else "FAILED: ") + f"{name}: {text}")
        if not ok:
            failures.append(text)

    settings = rep.get("ort_settings", [])
    if rep.get("ort_allocated_bytes") is None:
        note = rep.get("ort_model_note", "")
        check(bool(note) and all(s["first_run_bytes"] is None and s["steady_bytes"] is None for s in settings)
              and rep.get("ort_default_allocated_bytes") is None,
              f"no ORT figures, and the report says why: {note!r}")
        return 1 if failures else 0
    check(len(settings) == 4, "four settings in ort_settings")
    d = next(s for s in settings if s["enableCpuMemArena"] and s["enableMemPattern"])
    check(rep["input_ort_default_allocated_bytes"] == d["input_first_run_bytes"] and
          rep["ort_default_allocated_bytes"] == d["first_run_bytes"] and
          rep["input_ort_default_steady_bytes"] == d["input_steady_bytes"] and
          rep["ort_default_steady_bytes"] == d["steady_bytes"], "the defaults' fields are ORT's defaults")
    for s in settings:
        key = (s["enableCpuMemArena"], s["enableMemPattern"])
        label = f"arena {'on' if key[0] else 'off'}, pattern {'on' if key[1] else 'off'}"
        first_tol = 0.005 if key == (False, True) else 0.02
        for side, prefix in (("input", "input_"), ("written", "")):
            meas = measured.get((side,) + key)
            if meas is None:
                check(False, f"{label}: {side} not measured")
                continue
            for what, tol, slack in (("first_run_bytes", first_tol, 0), ("steady_bytes", 0.02, output_bytes)):
                pred, got = s[prefix + what], meas[what]
                ok = abs(pred - got) <= tol * got + slack
                check(ok, f"{label}: {side} {what} predicted {pred}, measured {got} "
                          f"({100.0 * (pred - got) / max(got, 1):+.2f}%)")
        shows = (s["first_run_bytes"] <= (1 - SHOWS) * s["input_first_run_bytes"] and
                 s["steady_bytes"] <= (1 - SHOWS) * s["input_steady_bytes"])
        if shows:
            mi, mw = measured.get(("input",) + key), measured.get(("written",) + key)
            check(mi is not None and mw is not None and mw["first_run_bytes"] < mi["first_run_bytes"] and
                  mw["steady_bytes"] <= mi["steady_bytes"],
                  f"{label}: the saving the summary names shows in the process "
                  f"(first run {mi and mi['first_run_bytes']} -> {mw and mw['first_run_bytes']}, "
                  f"three runs {mi and mi['steady_bytes']} -> {mw and mw['steady_bytes']})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
