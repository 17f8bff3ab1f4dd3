"""Checks reports' ONNX Runtime figures against the process.

    ort_settings_check.py CASES.tsv BATCH=MEASURED.jsonl... [--counted NAME,...] [--noted NAME=WORDS ...]
    ort_settings_check.py cases MODEL...      (what to run each model at: see list_cases)
    ort_settings_check.py same-listing CASES.tsv  (the written models listed as their input)

CASES.tsv has one line per model and batch: NAME, REPORT.json (olla-onnx's
report), INPUT.onnx, WRITTEN.onnx (the model it wrote) and BATCH (every
symbolic dimension's value). MEASURED.jsonl is what `tests/ort/measure.sh
MODEL... --dim batch=BATCH --settings all` printed (one line per model and
setting: model, arena, pattern, first_run_bytes, steady_bytes; or model and
skip).

For each case whose input ONNX Runtime runs:
- A report with null ORT figures must say why (ort_model_note), with every
  figure null; nothing is compared then.
- input_ort_allocated_bytes and ort_allocated_bytes, and the first run of
  the arena off with the memory pattern (the same figure), within 0.5% of
  the measured first run; every other setting's first run, and the most
  held over three runs, within 2% (over three runs at least 8 KiB, Node's
  own blocks). The defaults' fields must be the defaults' entry.
- Where the summary says the written model's saving shows (at least 1% less
  on the first run and over three runs, predicted), the process must show
  it: the written model holds less than the input on the first run, and no
  more over three runs.
- The converter never makes ORT allocate more: the written model's first
  run (arena off, pattern on) at most the input's plus 0.1% (at least
  8 KiB, where Node's own allocations show).
A written model that was not measured must list its input's nodes in the
input's order (`same-listing` names them): ONNX Runtime then runs it as the
input, whose measurements stand for both.
--retry FILE writes "BATCH<TAB>MODEL" for the models of the cases whose
figures failed, to be measured again in a fresh process (Node's own
blocks sometimes fall into a window: a model error repeats, that does not).
--counted names cases (by NAME's model file name) that must have ORT
figures (their subgraphs counted); --noted NAME=WORDS a case that must have
none, with WORDS in its ort_model_note.
Prints one line per check ("ok: ...", "FAILED: ...", "skip: ...") and a
summary; exit 1 on a failure."""
import json
import sys

SHOWS = 0.01  # cli/cmd_convert.c ORT_SAVING_SHOWS
FIRST_EXACT = 0.005
OTHER = 0.02
NODE_SLACK = 8192


def list_cases(models):
    """One line per model: the model, 1 when a graph input has a symbolic
    dimension (then it is measured at batch 1 and 32), 1 when some
    dimension is named batch (then --dim batch=B binds it)."""
    import os

    import onnx

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from dim_names import names_of_graph

    for path in models:
        g = onnx.load(path, load_external_data=False).graph
        inits = {t.name for t in g.initializer}
        symbolic = any(d.HasField("dim_param") for v in g.input if v.name not in inits
                       for d in v.type.tensor_type.shape.dim)
        found = set()
        names_of_graph(g, found)
        print(f"{path}\t{int(symbolic)}\t{int('batch' in found)}")


class Checker:
    def __init__(self):
        self.failures = 0
        self.judged = 0
        self.settings_ok = 0
        self.never_worse = 0

    def check(self, ok, name, text):
        print(("ok: " if ok else "FAILED: ") + f"{name}: {text}")
        if not ok:
            self.failures += 1
        return ok


def check_case(c, name, rep, meas):
    settings = rep.get("ort_settings", [])
    if rep.get("ort_allocated_bytes") is None:
        note = rep.get("ort_model_note", "")
        c.check(bool(note) and rep.get("input_ort_allocated_bytes") is None
                and all(s[k] is None for s in settings for k in
                        ("input_first_run_bytes", "first_run_bytes", "input_steady_bytes", "steady_bytes"))
                and rep.get("ort_default_allocated_bytes") is None,
                name, f"no ORT figures, and the report says why: {note!r}")
        return False
    c.check(len(settings) == 4, name, "four settings in ort_settings")
    d = next(s for s in settings if s["enableCpuMemArena"] and s["enableMemPattern"])
    c.check(rep["input_ort_default_allocated_bytes"] == d["input_first_run_bytes"] and
            rep["ort_default_allocated_bytes"] == d["first_run_bytes"] and
            rep["input_ort_default_steady_bytes"] == d["input_steady_bytes"] and
            rep["ort_default_steady_bytes"] == d["steady_bytes"], name, "the defaults' fields are ORT's defaults")
    failures = c.failures
    for side, field in (("input", "input_ort_allocated_bytes"), ("written", "ort_allocated_bytes")):
        got = meas[(side, False, True)]["first_run_bytes"]
        pred = rep[field]
        c.check(abs(pred - got) <= FIRST_EXACT * got, name,
                f"{field} predicted {pred}, measured {got} ({100.0 * (pred - got) / max(got, 1):+.3f}%)")
    for s in settings:
        key = (s["enableCpuMemArena"], s["enableMemPattern"])
        label = f"arena {'on' if key[0] else 'off'}, pattern {'on' if key[1] else 'off'}"
        first_tol = FIRST_EXACT if key == (False, True) else OTHER
        for side, prefix in (("input", "input_"), ("written", "")):
            m = meas[(side,) + key]
            for what, tol in (("first_run_bytes", first_tol), ("steady_bytes", OTHER)):
                pred, got = s[prefix + what], m[what]
                allowed = tol * got if what == "first_run_bytes" else max(tol * got, NODE_SLACK)
                c.check(abs(pred - got) <= allowed, name,
                        f"{label}: {side} {what} predicted {pred}, measured {got} "
                        f"({100.0 * (pred - got) / max(got, 1):+.2f}%)")
        shows = (s["input_first_run_bytes"] > 0 and s["input_steady_bytes"] > 0 and
                 s["first_run_bytes"] <= (1 - SHOWS) * s["input_first_run_bytes"] and
                 s["steady_bytes"] <= (1 - SHOWS) * s["input_steady_bytes"])
        if shows:
            mi, mw = meas[("input",) + key], meas[("written",) + key]
            c.check(mw["first_run_bytes"] < mi["first_run_bytes"] and mw["steady_bytes"] <= mi["steady_bytes"], name,
                    f"{label}: the saving the summary names shows in the process "
                    f"(first run {mi['first_run_bytes']} -> {mw['first_run_bytes']}, "
                    f"three runs {mi['steady_bytes']} -> {mw['steady_bytes']})")
    if c.failures == failures:
        c.judged += 1
    return True


def same_listing(input_path, written_path):
    """Whether the written model lists the input's nodes in the input's order
    (then ONNX Runtime runs the same graph the same way: only metadata
    differs, README "The plan in the model")."""
    import onnx

    def listing(path):
        g = onnx.load(path, load_external_data=False).graph
        return [(n.name, n.op_type, tuple(n.input), tuple(n.output)) for n in g.node]

    return listing(input_path) == listing(written_path)


def main(argv):
    if argv[:1] == ["cases"]:
        list_cases(argv[1:])
        return 0
    if argv[:1] == ["same-listing"]:  # the written models of CASES.tsv that list their input's nodes as it does
        for line in open(argv[1]):
            f = line.rstrip("\n").split("\t")
            if len(f) == 5 and same_listing(f[2], f[3]):
                print(f[3])
        return 0
    args, counted, noted, retry = [], set(), {}, None
    i = 0
    while i < len(argv):
        if argv[i] == "--retry" and i + 1 < len(argv):
            retry = open(argv[i + 1], "w")
            i += 2
        elif argv[i] == "--counted" and i + 1 < len(argv):
            counted.update(n for n in argv[i + 1].split(",") if n)
            i += 2
        elif argv[i] == "--noted" and i + 1 < len(argv):
            n, _, words = argv[i + 1].partition("=")
            noted[n] = words
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 2:
        sys.exit(__doc__)
    measured, skipped = {}, {}
    for arg in args[1:]:
        batch, _, path = arg.partition("=")
        for line in open(path):
            if not line.startswith("{"):
                continue
            m = json.loads(line)
            if "skip" in m:
                skipped[(batch, m["model"])] = m["skip"]
            else:
                measured[(batch, m["model"], m["arena"], m["pattern"])] = m
    c = Checker()
    seen = set()
    for line in open(args[0]):
        if not line.strip():
            continue
        name, report, input_path, written_path, batch = line.rstrip("\n").split("\t")
        label = f"{name} batch={batch}"
        if (batch, input_path) in skipped:
            print(f"skip: {label}: {skipped[(batch, input_path)]}")
            continue
        meas = {}
        if not any((batch, written_path, a, p) in measured for a in (False, True) for p in (True, False)):
            if not c.check(same_listing(input_path, written_path), label,
                           "the written model, not measured, lists the input's nodes in the input's order "
                           "(ONNX Runtime runs it as the input: measured once)"):
                continue
            written_path = input_path
        for side, path in (("input", input_path), ("written", written_path)):
            for arena in (False, True):
                for pattern in (True, False):
                    if (batch, path, arena, pattern) in measured:
                        meas[(side, arena, pattern)] = measured[(batch, path, arena, pattern)]
        if len(meas) != 8:
            c.check(False, label, f"measured {len(meas)} of the 8 figures (the written model: "
                                  f"{skipped.get((batch, written_path), 'not measured')})")
            continue
        rep = json.load(open(report))
        seen.add(name)
        before = c.failures
        has = check_case(c, label, rep, meas)
        if retry and c.failures > before:
            retry.write(f"{batch}\t{input_path}\n" + (f"{batch}\t{written_path}\n" if written_path != input_path else ""))
        if name in counted:
            c.check(has, label, "the subgraphs are counted (ORT figures given)")
        if name in noted:
            note = rep.get("ort_model_note") or ""
            c.check(not has and noted[name] in note, label, f"no ORT figures, the note naming '{noted[name]}': {note!r}")
        wi, ww = meas[("input", False, True)]["first_run_bytes"], meas[("written", False, True)]["first_run_bytes"]
        if c.check(ww <= wi + max(wi // 1000, NODE_SLACK), label,
                   f"ORT holds {ww} for the written model, {wi} for the input"):
            c.never_worse += 1
    for n in sorted((counted | set(noted)) - seen):
        c.check(False, n, "expected among the cases measured")
    c.check(c.judged > 0, "cases", f"{c.judged} judged against the process")
    print(f"{c.judged} cases' ORT figures match the process; {c.never_worse} written models no worse; "
          f"{c.failures} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
