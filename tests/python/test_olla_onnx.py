"""The Python package olla_onnx against the command line it wraps.

Run by tests/python/run_pytest.sh (ctest python.pytest) with the package
built in the build tree; $OLLA is the command, $OLLA_SOURCE_DIR the sources.
The models come from the project's scripts: the bundled ones
(scripts/make_models.py), a generated zoo (tests/tools/make_zoo.py) and a
long training step (bench/huge_gen.py).
"""
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import threading
import time

import onnx
from onnx import numpy_helper
import pytest

import olla_onnx

OLLA = os.environ["OLLA"]
SRC = pathlib.Path(os.environ["OLLA_SOURCE_DIR"])
MODELS = SRC / "models"
PY = "/usr/bin/python3"
TIME_LIMIT = 20
# the report's fields that are measured times, so differ from run to run
TIMES = {"schedule_seconds", "placement_seconds", "total_seconds"}


@pytest.fixture(scope="session")
def zoo(tmp_path_factory):
    """Nine generated models of three families, by name."""
    root = tmp_path_factory.mktemp("zoo")
    subprocess.run([PY, str(SRC / "tests/tools/make_zoo.py"), str(root), "9", "--seed", "11"], check=True,
                   stdout=subprocess.DEVNULL)
    return {p.stem: p for p in sorted(root.rglob("*.onnx"))}


@pytest.fixture(scope="session")
def long_model(tmp_path_factory):
    """A training step whose exact searches and ILP take many seconds."""
    path = tmp_path_factory.mktemp("long") / "long.onnx"
    subprocess.run([PY, str(SRC / "bench/huge_gen.py"), "200", str(path)], check=True, stdout=subprocess.DEVNULL)
    return path


def cli(args, **kw):
    return subprocess.run([OLLA] + [str(a) for a in args], capture_output=True, text=True, **kw)


def cli_convert(model, out, args=()):
    """The command line's output bytes and report for model."""
    report = out.with_suffix(".json")
    r = cli(["-q", "--time-limit", TIME_LIMIT, *args, "--report", report, model, out])
    assert r.returncode == 0, r.stderr
    return out.read_bytes(), json.loads(report.read_text())


def without_times(report):
    return {k: v for k, v in report.items() if k not in TIMES}


# ---- optimize: the same bytes as the command line ----

CASES = [
    ("mlp_train", {}, []),
    ("mlp_train", {"runtime": "listed", "sharing": "none", "align": 128},
     ["--runtime", "listed", "--sharing", "none", "--align", "128"]),
    ("cnn_train", {"keep_order": True}, ["--keep-order"]),
    ("cnn_train", {"runtime": "ort-priority", "align": 1}, ["--runtime", "ort-priority", "--align", "1"]),
    ("symbolic_dims", {"dims": {"batch": 6}}, ["--dim", "batch=6"]),
    ("multi_output", {"runtime": "listed"}, ["--runtime", "listed"]),
    ("if_loop", {}, []),
    ("unordered", {"sharing": "none"}, ["--sharing", "none"]),
    # recomputation adds nodes: the rewritten model is the one written
    ("cnn_train", {"runtime": "listed", "memory_limit": "95%"}, ["--runtime", "listed", "--memory-limit", "95%"]),
    ("cnn_train", {"runtime": "listed", "memory_limit": 469376}, ["--runtime", "listed", "--memory-limit", "469376"]),
]


def bundled(name):
    return MODELS / (name + ".onnx")


@pytest.mark.parametrize("name,kwargs,args", CASES, ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_optimize_bytes_equal_the_command_line(tmp_path, name, kwargs, args):
    model = bundled(name)
    want, want_report = cli_convert(model, tmp_path / "cli.onnx", args)
    out = tmp_path / "py.onnx"
    planned, report = olla_onnx.optimize(str(model), time_limit=TIME_LIMIT, output=out, **kwargs)
    assert isinstance(planned, onnx.ModelProto)
    assert planned.SerializeToString() == want
    assert out.read_bytes() == want
    assert without_times(report) == without_times(want_report)
    assert report["arena_bytes"] == int(dict((p.key, p.value) for p in planned.metadata_props)["olla.arena_bytes"])


def test_generated_models_equal_the_command_line(tmp_path, zoo):
    assert len(zoo) == 9
    for name, path in zoo.items():
        want, want_report = cli_convert(path, tmp_path / (name + ".onnx"))
        planned, report = olla_onnx.optimize(path, time_limit=TIME_LIMIT)
        assert planned.SerializeToString() == want, name
        assert without_times(report) == without_times(want_report), name


def test_input_shapes_equal_the_command_line(tmp_path, zoo):
    name = next(n for n in zoo if n.startswith("chain"))
    want, _ = cli_convert(zoo[name], tmp_path / "cli.onnx", ["--input-shape", "x=64,96"])
    planned, report = olla_onnx.optimize(zoo[name], time_limit=TIME_LIMIT, input_shapes={"x": [64, 96]})
    assert planned.SerializeToString() == want
    unshaped, _ = olla_onnx.optimize(zoo[name], time_limit=TIME_LIMIT)
    assert unshaped.SerializeToString() != want  # the shape given changed the sizes


def test_every_kind_of_model_argument_gives_the_same_plan(tmp_path):
    model = bundled("mlp_train")
    want, _ = cli_convert(model, tmp_path / "cli.onnx")
    data = model.read_bytes()
    for given in (str(model), model, data, bytearray(data), memoryview(data), onnx.load(str(model))):
        planned, report = olla_onnx.optimize(given, time_limit=TIME_LIMIT)
        assert planned.SerializeToString() == want, type(given).__name__
    assert report["model"] == "<memory>"


def test_report_matches_the_planned_model(zoo):
    for path in zoo.values():
        planned, report = olla_onnx.optimize(path, time_limit=TIME_LIMIT)
        assert report["nodes"] == len(planned.graph.node)
        assert report["arena_bytes"] <= report["input_order_online_arena_bytes"]
        assert report["peak_bytes"] <= report["arena_bytes"]


# ---- check and shapes ----

def test_check_accepts_a_planned_model_and_names_what_is_wrong(tmp_path):
    planned, _ = olla_onnx.optimize(bundled("cnn_train"), time_limit=TIME_LIMIT, output=tmp_path / "p.onnx")
    assert olla_onnx.check(tmp_path / "p.onnx") is None
    assert olla_onnx.check(planned) is None
    assert cli(["check", tmp_path / "p.onnx"]).returncode == 0
    with pytest.raises(olla_onnx.OllaError, match="has not been planned") as e:
        olla_onnx.check(bundled("cnn_train"))
    assert e.value.code == 1
    # nodes listed backwards: no longer the order the plan was made for
    broken = onnx.ModelProto()
    broken.CopyFrom(planned)
    nodes = list(broken.graph.node)[::-1]
    del broken.graph.node[:]
    broken.graph.node.extend(nodes)
    with pytest.raises(olla_onnx.OllaError) as e:
        olla_onnx.check(broken)
    onnx.save(broken, str(tmp_path / "broken.onnx"))
    r = cli(["check", tmp_path / "broken.onnx"])
    assert r.returncode == 1
    assert str(e.value) in r.stderr.replace(str(tmp_path / "broken.onnx"), "<memory>")


def test_check_with_dims(tmp_path):
    olla_onnx.optimize(bundled("symbolic_dims"), dims={"batch": 3}, output=tmp_path / "s.onnx")
    assert olla_onnx.check(tmp_path / "s.onnx") is None  # the plan's own binding
    with pytest.raises(olla_onnx.OllaError, match="batch"):
        olla_onnx.check(tmp_path / "s.onnx", dims={"batch": 9})
    with pytest.raises(ValueError, match="bacth"):
        olla_onnx.check(tmp_path / "s.onnx", dims={"bacth": 3})


@pytest.mark.parametrize("kwargs,args", [
    ({}, []),
    ({"dims": {"batch": 4}}, ["--dim", "batch=4"]),
    ({"dims": {"batch": 4}, "value_info": False}, ["--dim", "batch=4", "--no-value-info"]),
    ({"input_shapes": {"x": [2, 16, 32]}}, ["--input-shape", "x=2,16,32"]),
])
def test_shapes_equal_the_command_line(kwargs, args):
    model = bundled("symbolic_dims")
    r = cli(["shapes", *args, model])
    assert r.returncode == 0, r.stderr
    assert olla_onnx.shapes(str(model), **kwargs) == json.loads(r.stdout)


def test_shapes_of_generated_models(zoo):
    for name, path in zoo.items():
        doc = olla_onnx.shapes(path)
        assert doc["unknown"] == [], name
        model = onnx.load(str(path))
        produced = {o for n in model.graph.node for o in n.output}
        assert produced <= {t["name"] for t in doc["tensors"]}, name
        assert all(t["bytes"] > 0 for t in doc["tensors"] if t["name"] in produced), name


# ---- errors ----

def test_a_damaged_model_raises_ollaerror(tmp_path):
    data = bundled("mlp_train").read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    for given, where in ((data[: len(data) // 2], "<memory>"), (cut, str(cut)), (b"", "<memory>")):
        with pytest.raises(olla_onnx.OllaError) as e:
            olla_onnx.optimize(given, output=tmp_path / "never.onnx")
        assert e.value.code == 1
        assert str(e.value).startswith(where)
        assert not (tmp_path / "never.onnx").exists()
    with pytest.raises(olla_onnx.OllaError, match="cycle"):
        olla_onnx.optimize(MODELS / "bad" / "cycle.onnx")
    with pytest.raises(olla_onnx.OllaError, match="cannot open"):
        olla_onnx.shapes(tmp_path / "missing.onnx")
    assert os.listdir(tmp_path) == ["cut.onnx"]


def test_corrupted_bytes_never_crash():
    """Bytes flipped at random places: a plan or an OllaError, nothing else."""
    data = bundled("cnn_train").read_bytes()
    rnd = random.Random(5)
    outcomes = set()
    for _ in range(40):
        b = bytearray(data)
        for _ in range(rnd.randint(1, 6)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        try:
            olla_onnx.optimize(bytes(b), time_limit=5)
            outcomes.add("planned")
        except olla_onnx.OllaError as e:
            assert e.code in (1, 3) and str(e)
            outcomes.add("error")
    assert "error" in outcomes


BAD_ARGUMENTS = [
    ({"runtime": "onnxruntime"}, ValueError),
    ({"runtime": 1}, TypeError),
    ({"sharing": "all"}, ValueError),
    ({"align": 3}, ValueError),
    ({"align": 0}, ValueError),
    ({"align": 2**31}, ValueError),
    ({"align": "64"}, TypeError),
    ({"align": 64.0}, TypeError),
    ({"time_limit": 0}, ValueError),
    ({"time_limit": -1.5}, ValueError),
    ({"time_limit": float("nan")}, ValueError),
    ({"time_limit": float("inf")}, ValueError),
    ({"time_limit": "10"}, TypeError),
    ({"keep_order": 1}, TypeError),
    ({"dims": {"bacth": 8}}, ValueError),  # no dimension of the model has this name
    ({"dims": {"batch": -1}}, ValueError),
    ({"dims": {"batch": 2.5}}, TypeError),
    ({"dims": {"": 2}}, ValueError),
    ({"dims": [("batch", 8)]}, TypeError),
    ({"input_shapes": {"nope": [1, 16, 32]}}, ValueError),  # no graph input of that name
    ({"input_shapes": {"x": [1, 16]}}, ValueError),  # the declared rank is 3
    ({"input_shapes": {"x": [1, -2, 32]}}, ValueError),
    ({"input_shapes": {"x": "1,16,32"}}, TypeError),
    ({"memory_limit": "abc"}, ValueError),
    ({"memory_limit": "0"}, ValueError),
    ({"memory_limit": "150%"}, ValueError),
    ({"memory_limit": "1.5"}, ValueError),
    ({"memory_limit": "12Q"}, ValueError),
    ({"memory_limit": -5}, ValueError),
    ({"memory_limit": 0}, ValueError),
    ({"memory_limit": 2**70}, ValueError),
    ({"memory_limit": 1.5e9}, TypeError),
    ({"memory_limit": True}, TypeError),
    ({"memory_limit": "60%", "keep_order": True}, ValueError),
    ({"output": 7}, TypeError),
    ({"load_external_data": "yes"}, TypeError),
]


@pytest.mark.parametrize("kwargs,error", BAD_ARGUMENTS, ids=[repr(k) for k, _ in BAD_ARGUMENTS])
def test_bad_arguments_raise(tmp_path, kwargs, error):
    kwargs = {"dims": {"batch": 2}, **kwargs}
    with pytest.raises(error):
        olla_onnx.optimize(bundled("symbolic_dims"), **kwargs)


def test_a_memory_limit_no_plan_meets_raises_ollaerror(tmp_path):
    r = cli(["-q", "--memory-limit", "50%", bundled("mlp_train"), tmp_path / "cli.onnx"])
    assert r.returncode == 1
    with pytest.raises(olla_onnx.OllaError, match="no plan fits under the memory limit") as e:
        olla_onnx.optimize(bundled("mlp_train"), memory_limit="50%", output=tmp_path / "py.onnx")
    assert e.value.code == 1 and str(e.value) in r.stderr
    assert not (tmp_path / "py.onnx").exists()


def test_memory_limit_forms_are_accepted():
    """Bytes as an int, or the command line's text; the planning under a
    limit is the library's business, so the limits here are above the peak."""
    for limit in ("100%", "1Gi", "1.5G", "5000000000", 5 * 10**9):
        planned, report = olla_onnx.optimize(bundled("mlp_train"), memory_limit=limit, time_limit=TIME_LIMIT)
        assert report["arena_bytes"] > 0


def test_bad_model_arguments():
    for model in (None, 17, ["a.onnx"], {"graph": 1}):
        with pytest.raises(TypeError):
            olla_onnx.optimize(model)
    with pytest.raises(ValueError):
        olla_onnx.optimize("bad\0path.onnx")
    with pytest.raises(TypeError):
        olla_onnx.optimize(bundled("mlp_train"), 30)  # options are keyword-only


def test_time_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("OLLA_TIME_LIMIT", "soon")
    with pytest.raises(ValueError, match="OLLA_TIME_LIMIT"):
        olla_onnx.optimize(bundled("mlp_train"))
    monkeypatch.setenv("OLLA_TIME_LIMIT", "15")
    assert olla_onnx.optimize(bundled("mlp_train"))[1]["arena_bytes"] > 0


# ---- external data ----

def test_external_data_from_a_path(tmp_path):
    model = bundled("external_data")
    (tmp_path / "cli").mkdir()
    (tmp_path / "py").mkdir()
    want, _ = cli_convert(model, tmp_path / "cli" / "out.onnx")
    out = tmp_path / "py" / "out.onnx"
    planned, _ = olla_onnx.optimize(model, time_limit=TIME_LIMIT, output=out)
    assert out.read_bytes() == want
    for f in ("external_data.bin", "external_data_bias.bin"):  # made available beside the output
        assert (tmp_path / "py" / f).read_bytes() == (MODELS / f).read_bytes()
    assert olla_onnx.check(out) is None
    # the returned model holds its weights, as onnx.load gives them
    loaded = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}
    got = {t.name: t for t in planned.graph.initializer}
    assert set(got) == set(loaded)
    for name, t in got.items():
        assert t.data_location != onnx.TensorProto.EXTERNAL
        assert (numpy_helper.to_array(t) == loaded[name]).all()
    # or keeps the references, which then are the command line's bytes
    kept, _ = olla_onnx.optimize(model, time_limit=TIME_LIMIT, load_external_data=False)
    assert kept.SerializeToString() == want


def test_external_data_needs_the_path():
    unloaded = onnx.load(str(bundled("external_data")), load_external_data=False)
    with pytest.raises(olla_onnx.OllaError, match="give the model's path"):
        olla_onnx.optimize(unloaded)
    # a model holding its weights plans from memory
    planned, report = olla_onnx.optimize(onnx.load(str(bundled("external_data"))), time_limit=TIME_LIMIT)
    assert report["nodes"] == len(planned.graph.node)


# ---- threads and interruption ----

def test_the_gil_is_released_while_planning(long_model):
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    t0 = time.monotonic()
    try:
        olla_onnx.optimize(long_model, time_limit=3)
    finally:
        took = time.monotonic() - t0
        stop.set()
        t.join()
    assert took >= 1.0  # long enough to tell
    during = [x for x in ticks if t0 + 0.2 < x < t0 + took - 0.2]
    # a thread holding the GIL would leave none
    assert len(during) >= 10, "%d ticks in %.1f s of planning" % (len(during), took)


def test_calls_from_threads_give_the_same_plans(zoo):
    paths = list(zoo.values())[:4]
    want = [olla_onnx.optimize(p, time_limit=TIME_LIMIT)[0].SerializeToString() for p in paths]
    got = [None] * len(paths)

    def plan(i):
        got[i] = olla_onnx.optimize(paths[i], time_limit=TIME_LIMIT)[0].SerializeToString()

    threads = [threading.Thread(target=plan, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want


INTERRUPTED = r"""
import sys, time, olla_onnx
long, out, small = sys.argv[1:4]
print("planning", flush=True)
t0 = time.monotonic()
try:
    olla_onnx.optimize(long, time_limit=300, output=out)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after %.2f" % (time.monotonic() - t0), flush=True)
# the library plans again in the same process, as well as before
planned, report = olla_onnx.optimize(small, time_limit=20)
print("again", report["schedule_stopped_by"], report["arena_bytes"])
"""


def test_ctrl_c_interrupts_a_long_plan(tmp_path, long_model):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(long_model), str(out_dir / "long.onnx"),
                          str(bundled("mlp_train"))], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    assert p.stdout.readline().strip() == "planning"
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("interrupted after"), out
    # signalled 2 s in, it stops within seconds (planned to the end, the model takes over 15 s)
    assert float(lines[0].split()[-1]) < 12, out
    _, report = olla_onnx.optimize(bundled("mlp_train"), time_limit=20)
    assert lines[1] == "again %s %d" % (report["schedule_stopped_by"], report["arena_bytes"])
    assert os.listdir(out_dir) == []  # no output, no temporary file


WAITING = r"""
import sys, threading, time, olla_onnx
long, small = sys.argv[1:3]
took = {}
def other():
    t0 = time.monotonic()
    planned, report = olla_onnx.optimize(long, time_limit=8)
    took["other"] = time.monotonic() - t0
t = threading.Thread(target=other)
t.start()
time.sleep(0.5)  # the other thread holds the library now
print("waiting", flush=True)
t0 = time.monotonic()
try:
    olla_onnx.optimize(small, time_limit=20)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after %.2f" % (time.monotonic() - t0), flush=True)
t.join()
print("other took %.2f" % took["other"])
"""


def test_ctrl_c_while_waiting_for_another_thread(long_model):
    """Ctrl-C in a call that waits for the library stops that call at once,
    and leaves the call of the thread using the library to finish."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", WAITING, str(long_model), str(bundled("mlp_train"))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "waiting"
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("interrupted after"), out
    assert float(lines[0].split()[-1]) < 2.5, out  # signalled about 1 s in, not after the other call
    # the other plan went on (stopped with this one, it would have ended 1.5 s in)
    assert float(lines[1].split()[-1]) >= 3, out
