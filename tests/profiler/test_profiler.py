"""paddle_hl.profiler: scheduler, recording, nesting, exports, summary tables, timer."""

from __future__ import annotations

import glob
import inspect
import json
import os
import re
import threading
import warnings

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn as nn
import paddle_hl.profiler as profiler
from paddle_hl.framework import state
from paddle_hl.profiler import ProfilerState as S
from paddle_hl.profiler._result import ProfilerResult

# --------------------------------------------------------------------------- helpers


class _Digits(paddle.io.Dataset):
    def __init__(self, n=64):
        rng = np.random.default_rng(0)
        self.x = rng.random((n, 1, 12, 12)).astype("float32")
        self.y = rng.integers(0, 4, n)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


def _net():
    return nn.Sequential(nn.Conv2D(1, 4, 3), nn.ReLU(), nn.MaxPool2D(2), nn.Flatten(),
                         nn.Linear(4 * 5 * 5, 4))


def _train(prof, steps=6, batch=8, user_event=True):
    net = _net()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    loader = paddle.io.DataLoader(_Digits(), batch_size=batch)
    for i, (x, y) in enumerate(loader):
        if user_event:
            with profiler.RecordEvent("user_forward"):
                out = net(x)
        else:
            out = net(x)
        loss = nn.functional.cross_entropy(out, y.reshape([-1, 1]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step(num_samples=batch)
        if i + 1 == steps:
            break
    return net


def _record(**kw):
    kw.setdefault("on_trace_ready", lambda p: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profiler.Profiler(**kw) as p:
            _train(p)
    return p


@pytest.fixture(scope="module")
def recorded():
    """One profiled run on the CPU shared by the read-only tests (steps 1..4 recorded)."""
    prev = paddle.get_device()
    paddle.set_device("cpu")  # the tables below are the CPU's, whatever the suite's device
    try:
        return _record(scheduler=(1, 5), record_shapes=True, profile_memory=True)
    finally:
        paddle.set_device(prev)


# --------------------------------------------------------------------------- API shape
API_FILE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "api",
                        "paddle-2.6-api.json")


def test_public_names_and_signatures():
    from tests.test_api_coverage import _norm, _params

    if not os.path.exists(API_FILE):
        pytest.skip("the API listing is not beside the checkout")
    spec = json.load(open(API_FILE))["paddle_hl.profiler"]
    assert sorted(spec) == sorted(profiler.__all__)
    for name, info in spec.items():
        obj = getattr(profiler, name)
        for m in info.get("methods", []):
            assert callable(getattr(obj, m)), (name, m)
        if name in ("ProfilerState", "ProfilerTarget", "SortedKeys", "SummaryView"):
            continue  # enums: (*args, **kwds)
        want = _params(info["signature"])
        got = [(q.name, None if q.default is inspect.Parameter.empty else repr(q.default))
               for q in inspect.signature(obj).parameters.values()]
        assert [n for n, _ in want] == [n for n, _ in got], name
        for (n, dw), (_, dg) in zip(want, got):
            assert (dw is None) == (dg is None), (name, n)
            if dw is not None:
                assert _norm(dw) == _norm(dg), (name, n, dw, dg)


def test_enum_members_match_paddle():
    assert [m.name for m in profiler.ProfilerState] == ["CLOSED", "READY", "RECORD",
                                                        "RECORD_AND_RETURN"]
    assert [m.value for m in profiler.ProfilerTarget] == [0, 1, 2, 3]
    assert [m.name for m in profiler.SortedKeys] == [
        "CPUTotal", "CPUAvg", "CPUMax", "CPUMin", "GPUTotal", "GPUAvg", "GPUMax", "GPUMin"]
    assert profiler.SummaryView.UDFView.value == 8
    assert profiler.SummaryView.OperatorView.value == 5


# --------------------------------------------------------------------------- scheduler
def test_scheduler_b153_sequence():
    s = profiler.make_scheduler(closed=1, ready=1, record=4, repeat=1)
    assert [s(i) for i in range(9)] == [S.CLOSED, S.READY, S.RECORD, S.RECORD, S.RECORD,
                                        S.RECORD_AND_RETURN, S.CLOSED, S.CLOSED, S.CLOSED]


def test_scheduler_skip_first_and_forever():
    s = profiler.make_scheduler(closed=1, ready=1, record=2, skip_first=2)
    seq = [s(i).name for i in range(10)]
    assert seq == ["CLOSED", "CLOSED", "CLOSED", "READY", "RECORD", "RECORD_AND_RETURN",
                   "CLOSED", "READY", "RECORD", "RECORD_AND_RETURN"]


@pytest.mark.parity
@pytest.mark.parametrize("kw", [
    dict(closed=1, ready=1, record=4, repeat=1),
    dict(closed=0, ready=2, record=3, repeat=2, skip_first=1),
    dict(closed=2, ready=1, record=1, repeat=0),
    dict(closed=1, ready=2, record=2, repeat=2, skip_first=2),
    dict(closed=3, ready=1, record=2, repeat=3, skip_first=5),
])
def test_scheduler_matches_paddle(pd, kw):
    import paddle.profiler as real

    ours = profiler.make_scheduler(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = real.make_scheduler(**kw)
    assert [ours(i).name for i in range(40)] == [theirs(i).name for i in range(40)]
    assert [ours(i).value for i in range(40)] == [theirs(i).value for i in range(40)]


def test_scheduler_ready_zero_warns():
    with pytest.warns(UserWarning, match="noisy"):
        profiler.make_scheduler(closed=0, ready=0, record=1)


@pytest.mark.parametrize("kw", [dict(closed=1, ready=1, record=0),
                                dict(closed=-1, ready=1, record=2),
                                dict(closed=1, ready=1, record=2, repeat=-1),
                                dict(closed=1, ready=1, record=2, skip_first=-2)])
def test_scheduler_bad_arguments(kw):
    with pytest.raises(ValueError, match="make_scheduler"):
        profiler.make_scheduler(**kw)


def test_scheduler_type_errors():
    with pytest.raises(TypeError, match="record must be an int"):
        profiler.make_scheduler(closed=1, ready=1, record=2.5)
    with pytest.raises(TypeError, match="scheduler"):
        profiler.Profiler(scheduler="often")
    with pytest.raises(ValueError, match="end_batch"):
        profiler.Profiler(scheduler=(5, 2))


def _steps_of(result):
    return sorted(int(e.name.split("#")[1]) for e in result.events if e.type == "ProfileStep")


@pytest.mark.parametrize("window,expected", [((2, 5), [2, 3, 4]), ((0, 3), [0, 1, 2]),
                                             ((1, 2), [1])])
def test_tuple_scheduler_records_range(window, expected):
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profiler.Profiler(scheduler=window, on_trace_ready=calls.append) as p:
            for _ in range(7):
                paddle.ones([2]) + 1
                p.step()
    assert len(calls) == 1 and calls[0] is p
    assert _steps_of(p.profiler_result) == expected


def test_repeat_windows_call_on_trace_ready_each_time():
    seen = []

    def ready(prof):
        seen.append((_steps_of(prof.profiler_result), prof.profiler_result.get_span_indx()))

    sched = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=2)
    with profiler.Profiler(scheduler=sched, on_trace_ready=ready) as p:
        for _ in range(10):
            paddle.ones([2]) * 3
            p.step()
    assert seen == [([2, 3], 0), ([6, 7], 1)]


def test_default_scheduler_records_until_stop(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with profiler.Profiler() as p:  # default on_trace_ready writes ./profiler_log/
        for _ in range(3):
            paddle.ones([2]).sum()
            p.step()
    assert _steps_of(p.profiler_result) == [0, 1, 2, 3]
    files = glob.glob(str(tmp_path / "profiler_log" / "*.paddle_trace.json"))
    assert len(files) == 1


# --------------------------------------------------------------------------- what is recorded
def test_ops_forward_backward_and_phases(recorded):
    res = recorded.profiler_result
    ops = [e for e in res.events if e.type == "Operator"]
    names = {e.name for e in ops}
    assert {"conv", "relu", "linear", "cross_entropy"} <= names
    assert {"conv_grad", "linear_grad", "cross_entropy_grad"} <= names
    for e in ops:
        assert e.args["phase"] == ("backward" if e.name.endswith("_grad") else "forward")
        assert e.end_ns >= e.start_ns
    types = {e.type for e in res.events}
    assert {"ProfileStep", "Forward", "Backward", "Optimization", "Dataloader",
            "PythonUserDefined"} <= types
    res.trees()
    # backward ops run inside the Backward span, forward ops inside a Forward (Layer) span
    for e in ops:
        chain = []
        p = e.parent
        while p is not None:
            chain.append(p.type)
            p = p.parent
        if e.args["phase"] == "backward":
            assert "Backward" in chain
        elif e.name in ("conv", "linear"):
            assert "Forward" in chain and "ProfileStep" in chain


@pytest.mark.cpu
def test_one_op_event_per_op_call():
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        a = paddle.ones([3])
        for _ in range(5):
            a = a * a
    muls = [e for e in p.profiler_result.events if e.name == "multiply"]
    assert len(muls) == 5


def test_record_shapes(recorded):
    conv = next(e for e in recorded.profiler_result.events if e.name == "conv")
    assert conv.args["input_shapes"][0] == [8, 1, 12, 12]
    assert conv.args["input_shapes"][1] == [4, 1, 3, 3]
    assert conv.args["input_dtypes"][0] == "float32"
    assert conv.args["output_shapes"] == [[8, 4, 10, 10]]


def test_layer_forward_spans_named_by_class(recorded):
    fw = {e.name for e in recorded.profiler_result.events if e.type == "Forward"}
    assert {"Sequential", "Conv2D", "ReLU", "Linear"} <= fw


def test_record_event_nesting_context_and_begin_end():
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        with profiler.RecordEvent("outer"):
            inner = profiler.RecordEvent("inner")
            inner.begin()
            paddle.ones([2]) + 1
            with profiler.RecordEvent("innermost"):
                paddle.ones([2]) * paddle.ones([2])
            inner.end()
        with profiler.RecordEvent("sibling"):
            pass
    res = p.profiler_result
    res.trees()
    # host events only: on a GPU each op also has a Kernel event of the same name, which
    # hangs in the device's tree
    by = {e.name: e for e in res.events if e.type != "Kernel"}
    assert by["inner"].parent is by["outer"]
    assert by["innermost"].parent is by["inner"]
    assert by["multiply"].parent is by["innermost"]
    assert by["add"].parent is by["inner"]
    assert by["sibling"].parent is by["outer"].parent  # both directly under ProfileStep#0
    assert by["outer"].parent.type == "ProfileStep"
    assert all(e.type == "PythonUserDefined" for n, e in by.items()
               if n in ("outer", "inner", "innermost", "sibling"))


def test_record_event_as_decorator():
    @profiler.RecordEvent("decorated")
    def work():
        return paddle.ones([2]) + 1

    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        work()
        work()
    assert sum(e.name == "decorated" for e in p.profiler_result.events) == 2


def test_record_event_is_noop_without_profiler():
    ev = profiler.RecordEvent("nothing")
    ev.begin()
    ev.end()
    with profiler.RecordEvent("nothing"):
        paddle.ones([2])
    with pytest.raises(TypeError, match="name must be a str"):
        profiler.RecordEvent(3)


def test_record_event_not_recorded_outside_window():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profiler.Profiler(scheduler=(2, 3), on_trace_ready=lambda p: None) as p:
            for i in range(4):
                with profiler.RecordEvent(f"range{i}"):
                    paddle.ones([1]) + 1
                p.step()
    names = {e.name for e in p.profiler_result.events if e.type == "PythonUserDefined"}
    assert names == {"range2"}


@pytest.mark.cpu
def test_threads_get_their_own_tid():
    def work():
        for _ in range(3):
            paddle.ones([4]) * paddle.ones([4])

    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        t = threading.Thread(target=work, name="worker-1")
        t.start()
        t.join()
        paddle.ones([4]) * paddle.ones([4])
    res = p.profiler_result
    tids = {e.tid for e in res.events if e.name == "multiply"}
    assert len(tids) == 2
    assert "worker-1" in res.extra_info["thread_names"].values()
    text = _summary_text(p, thread_sep=True, views=profiler.SummaryView.OperatorView)
    assert text.count("Thread: ") == 2


def test_profiler_off_restores_everything_and_changes_no_results():
    from paddle_hl.io import dataloader
    from paddle_hl.nn.layer.layers import Layer
    from paddle_hl.optimizer.optimizer import Optimizer

    before = (Layer.__call__, Optimizer.step, dataloader._SingleProcessIter.__next__)
    paddle.seed(1)
    net_a = _train(_NoProfiler(), steps=3, user_event=False)
    paddle.seed(1)
    with profiler.Profiler(on_trace_ready=lambda p: None, record_shapes=True,
                           profile_memory=True) as p:
        net_b = _train(p, steps=3, user_event=False)
    assert state.prof_hook is None and state.prof_bw is None
    assert (Layer.__call__, Optimizer.step, dataloader._SingleProcessIter.__next__) == before
    for va, vb in zip(net_a.state_dict().values(), net_b.state_dict().values()):
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=0, atol=0)


class _NoProfiler:
    def step(self, num_samples=None):
        pass


def test_second_profiler_refused_while_recording():
    with profiler.Profiler(on_trace_ready=lambda p: None):
        other = profiler.Profiler(on_trace_ready=lambda p: None)
        with pytest.raises(RuntimeError, match="already recording"):
            other.start()
    assert state.prof_hook is None


def test_windows_release_memory():
    """A long scheduled run keeps only the current window's events."""
    sched = profiler.make_scheduler(closed=0, ready=1, record=2)
    sizes = []
    with profiler.Profiler(scheduler=sched, on_trace_ready=lambda p: sizes.append(
            len(p.profiler_result.events))) as p:
        for _ in range(30):
            paddle.ones([2]) + 1
            p.step()
    assert len(sizes) == 10
    assert max(sizes) == min(sizes)


# --------------------------------------------------------------------------- exports
REQUIRED_X = {"name", "ph", "ts", "dur", "pid", "tid", "cat", "args"}


def _check_chrome(data):
    assert isinstance(data, dict) and isinstance(data["traceEvents"], list)
    assert data["displayTimeUnit"] == "ms"
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert xs
    for e in data["traceEvents"]:
        assert e["ph"] in ("X", "i", "M")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "X":
            assert REQUIRED_X <= set(e)
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
            assert e["dur"] >= 0
        elif e["ph"] == "i":
            assert {"ts", "s", "cat", "args"} <= set(e)
        else:
            assert e["name"] in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index")
    return xs


def test_export_chrome_tracing_valid_json(tmp_path, recorded):
    path = tmp_path / "trace.json"
    recorded.export(str(path), "json")
    data = json.loads(path.read_text())
    xs = _check_chrome(data)
    assert len(xs) == len(recorded.profiler_result.events)
    assert any(e["ph"] == "i" and e["cat"] == "Allocate" for e in data["traceEvents"])
    conv = next(e for e in xs if e["name"] == "conv")
    assert conv["args"]["input_shapes"][0] == [8, 1, 12, 12]


def test_export_chrome_tracing_callback(tmp_path):
    cb = profiler.export_chrome_tracing(str(tmp_path / "log"), "worker")
    assert os.path.isdir(tmp_path / "log")
    with profiler.Profiler(scheduler=(0, 2), on_trace_ready=cb) as p:
        for _ in range(3):
            paddle.ones([2]) + 1
            p.step()
    files = glob.glob(str(tmp_path / "log" / "worker_time_*.paddle_trace.json"))
    assert len(files) == 1
    _check_chrome(json.load(open(files[0])))


def test_export_protobuf_reloads(tmp_path):
    cb = profiler.export_protobuf(str(tmp_path / "pb"))
    with profiler.Profiler(on_trace_ready=cb, record_shapes=True, profile_memory=True) as p:
        _train(p, steps=2)
    files = glob.glob(str(tmp_path / "pb" / "host_*pid_*_time_*.paddle_trace.pb"))
    assert len(files) == 1
    loaded = profiler.load_profiler_result(files[0])
    orig = p.profiler_result
    assert [(e.name, e.type, e.start_ns, e.end_ns) for e in loaded.events] == \
        [(e.name, e.type, e.start_ns, e.end_ns) for e in orig.events]
    assert len(loaded.memory_events) == len(orig.memory_events)
    assert _table_text(loaded) == _table_text(orig)


def test_load_chrome_json_roundtrip(tmp_path, recorded):
    path = tmp_path / "t.json"
    recorded.export(str(path))
    loaded = profiler.load_profiler_result(str(path))
    orig = recorded.profiler_result
    assert sorted((e.name, e.type) for e in loaded.events) == \
        sorted((e.name, e.type) for e in orig.events)
    dur_a = sum(e.duration_ns for e in orig.events if e.type == "ProfileStep")
    dur_b = sum(e.duration_ns for e in loaded.events if e.type == "ProfileStep")
    assert abs(dur_a - dur_b) <= 10 * len(orig.events)


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="load_profiler_result"):
        profiler.load_profiler_result(str(tmp_path / "missing.pb"))
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\x08\x96\x01garbage\xff")
    with pytest.raises(ValueError, match="neither"):
        profiler.load_profiler_result(str(bad))
    with pytest.raises(ValueError, match="format"):
        profiler.Profiler(on_trace_ready=lambda p: None).export(str(tmp_path / "x"), "xml")


@pytest.mark.parity
def test_load_real_paddle_chrome_trace(pd, tmp_path):
    import paddle.profiler as real

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with real.Profiler(targets=[real.ProfilerTarget.CPU], scheduler=(0, 2),
                           on_trace_ready=real.export_chrome_tracing(str(tmp_path), "pd")) as p:
            for _ in range(3):
                with real.RecordEvent("pd_range"):
                    pd.ones([2]) + 1
                p.step()
    f = glob.glob(str(tmp_path / "pd_time_*.json"))[0]
    res = profiler.load_profiler_result(f)
    names = {e.name for e in res.events}
    assert "pd_range" in names and "ProfileStep#0" in names
    assert not any(re.search(r"\[[0-9.]+ ?(us|ms|ns|s)\]$", n) for n in names)
    text = _table_text(res, views=[profiler.SummaryView.OverView,
                                   profiler.SummaryView.UDFView])
    assert "pd_range" in text and "ProfileStep" in text


# --------------------------------------------------------------------------- summary
def _summary_text(p, **kw):
    from paddle_hl.profiler._statistic import SortedKeys, build_text

    kw.setdefault("sorted_by", SortedKeys.CPUTotal)
    return build_text(p.profiler_result, **kw)


def _table_text(result, **kw):
    from paddle_hl.profiler._statistic import SortedKeys, build_text

    kw.setdefault("sorted_by", SortedKeys.CPUTotal)
    return build_text(result, **kw)


@pytest.mark.cpu
def test_summary_prints_all_tables(recorded, capsys):
    recorded.summary()
    out = capsys.readouterr().out
    for title in ("Device Summary", "Overview Summary", "Model Summary", "Operator Summary",
                  "UserDefined Summary", "Memory Summary - Place(cpu)",
                  "Thread: All threads merged", "Time unit: ms", "user_forward"):
        assert title in out, title
    assert "Kernel Summary" not in out  # CPU only: no device events, as in Paddle


def test_summary_views_and_units(recorded, capsys):
    recorded.summary(views=profiler.SummaryView.OverView, time_unit="us")
    out = capsys.readouterr().out
    assert "Overview Summary" in out and "Time unit: us" in out
    assert "Operator Summary" not in out
    with pytest.raises(ValueError, match="time_unit"):
        recorded.summary(time_unit="hours")
    with pytest.raises(TypeError, match="views"):
        recorded.summary(views=["OverView"])
    with pytest.raises(TypeError, match="sorted_by"):
        recorded.summary(sorted_by="CPUTotal")


def _table(result, title, **kw):
    from paddle_hl.profiler._statistic import SortedKeys, build_tables

    for t in build_tables(result, kw.pop("sorted_by", SortedKeys.CPUTotal), **kw):
        if t.title == title:
            return t
    raise AssertionError(title)


def _cells(t):
    return [(lvl, c) for lvl, c in t.rows if lvl is not None]


def test_model_summary_adds_up(recorded):
    res = recorded.profiler_result
    t = _table(res, "Model Summary", time_unit="ns")
    rows = {c[0]: c for _, c in _cells(t)}
    total = float(rows["ProfileStep"][2].split(" / ")[0])
    steps = [e for e in res.events if e.type == "ProfileStep"]
    assert int(rows["ProfileStep"][1]) == len(steps) == 4
    np.testing.assert_allclose(total, sum(e.duration_ns for e in steps), rtol=1e-9)
    parts = sum(float(rows[k][2].split(" / ")[0]) for k in
                ("Dataloader", "Forward", "Backward", "Optimization", "Others"))
    np.testing.assert_allclose(parts, total, rtol=1e-9)
    ratios = sum(float(rows[k][2].split(" / ")[-1]) for k in
                 ("Dataloader", "Forward", "Backward", "Optimization", "Others"))
    np.testing.assert_allclose(ratios, 100.0, atol=0.05)
    assert int(rows["Backward"][1]) == 4 and int(rows["Optimization"][1]) == 4


def test_operator_summary_adds_up(recorded):
    res = recorded.profiler_result
    t = _table(res, "Operator Summary", time_unit="ns")
    rows = [c for lvl, c in _cells(t) if lvl == 0]
    ops = [e for e in res.events if e.type == "Operator"]
    assert sum(int(r[1]) for r in rows) == len(ops)
    total = sum(float(r[2].split(" / ")[0]) for r in rows)
    np.testing.assert_allclose(total, sum(e.duration_ns for e in ops), rtol=1e-9)
    np.testing.assert_allclose(sum(float(r[2].split(" / ")[-1]) for r in rows), 100.0,
                               atol=0.1)
    for r in rows:
        tot, avg, mx, mn, _ = (float(v) for v in r[2].split(" / "))
        np.testing.assert_allclose(avg * int(r[1]), tot, rtol=0.02, atol=0.02)
        assert mn <= avg <= mx
    totals = [float(r[2].split(" / ")[0]) for r in rows]
    assert totals == sorted(totals, reverse=True)


@pytest.mark.parametrize("key,col,reverse", [
    (profiler.SortedKeys.CPUAvg, 1, True), (profiler.SortedKeys.CPUMax, 2, True),
    (profiler.SortedKeys.CPUMin, 3, False)])
def test_operator_summary_sorting(recorded, key, col, reverse):
    t = _table(recorded.profiler_result, "Operator Summary", sorted_by=key, time_unit="ns")
    vals = [float(c[2].split(" / ")[col]) for lvl, c in _cells(t) if lvl == 0]
    assert vals == sorted(vals, reverse=reverse)


def test_overview_ratios(recorded):
    t = _table(recorded.profiler_result, "Overview Summary", time_unit="ns")
    rows = {c[0]: c for lvl, c in _cells(t) if c[0]}
    assert rows["ProfileStep"][3] == "100.00"
    step_t = float(rows["ProfileStep"][2])
    for k in ("Operator", "Forward", "Backward", "Dataloader"):
        assert float(rows[k][2]) <= step_t
        np.testing.assert_allclose(float(rows[k][3]), float(rows[k][2]) / step_t * 100,
                                   atol=0.01)
    # nested Forward spans (Conv2D inside Sequential) are not extra calls
    assert int(rows["Forward"][1]) == 4


def test_udf_summary(recorded):
    t = _table(recorded.profiler_result, "UserDefined Summary")
    rows = [c for lvl, c in _cells(t)]
    assert rows[0][0] == "user_forward" and rows[0][1] == "4"


@pytest.mark.cpu
def test_memory_summary(recorded):
    res = recorded.profiler_result
    assert res.memory_events
    allocs = [m for m in res.memory_events if m.kind == "Allocate"]
    assert all(m.nbytes > 0 for m in allocs)
    assert all(m.nbytes < 0 for m in res.memory_events if m.kind == "Free")
    t = _table(res, "Memory Summary - Place(cpu)")
    assert t.preamble[0].startswith("Peak Allocated Memory: ")
    peak = int(t.preamble[0].split(": ")[1])
    assert peak == max(m.peak for m in res.memory_events)
    rows = {c[0]: c for lvl, c in _cells(t)}
    conv_bytes = 8 * 4 * 10 * 10 * 4
    assert int(rows["conv"][2]) == 4 and int(rows["conv"][4]) == 4 * conv_bytes
    assert sum(int(r[4]) for r in rows.values()) == sum(m.nbytes for m in allocs)


def test_with_flops(capsys):
    with profiler.Profiler(on_trace_ready=lambda p: None, with_flops=True) as p:
        x = paddle.randn([4, 8])
        w = paddle.randn([8, 3])
        paddle.matmul(x, w)
    p.summary(views=profiler.SummaryView.OperatorView)
    out = capsys.readouterr().out
    assert "Flops Profiler Begin" in out
    row = next(line for line in out.splitlines() if line.startswith("matmul "))
    assert row.split()[-1] == str(2 * 4 * 3 * 8)


# --------------------------------------------------------------------------- timer
def test_step_info_format_and_reader_cost():
    infos = []
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        loader = paddle.io.DataLoader(_Digits(), batch_size=8)
        for i, (x, _y) in enumerate(loader):
            paddle.nn.functional.relu(x)
            p.step(num_samples=8)
            if i % 2 == 1:
                infos.append(p.step_info(unit="images"))
            if i == 3:
                break
    pat = r"^ reader_cost: \d+\.\d{5} s batch_cost: \d+\.\d{5} s ips: \d+\.\d{3} images/s$"
    assert all(re.match(pat, s) for s in infos), infos


def test_step_info_steps_per_second():
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        for _ in range(3):
            p.step()
        info = p.step_info()
    assert re.match(r"^ batch_cost: \d+\.\d{5} s ips: \d+\.\d{3} steps/s$", info), info


def test_timer_only_records_no_trace(capsys):
    p = profiler.Profiler(timer_only=True, on_trace_ready=lambda p: None)
    p.start()
    assert state.prof_hook is None
    loader = paddle.io.DataLoader(_Digits(), batch_size=4)
    for i, (x, _y) in enumerate(loader):
        x + 1
        p.step(num_samples=4)
        if i == 11:
            break
    info = p.step_info()
    p.stop()
    assert p.profiler_result is None
    assert "reader_cost" in info and "samples/s" in info
    out = capsys.readouterr().out
    assert "Perf Summary" in out and "batch_cost" in out and "ips" in out


def test_step_rejects_bad_num_samples():
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        with pytest.raises(ValueError, match="num_samples"):
            p.step(num_samples=-1)


# --------------------------------------------------------------------------- result API
def test_result_accessors(recorded):
    res = recorded.profiler_result
    assert isinstance(res, ProfilerResult)
    trees = res.get_data()
    assert all(isinstance(v, list) for v in trees.values())
    assert "Process Cpu Utilization" in res.get_extra_info()
    assert res.get_span_indx() == 0
    assert res.get_version().startswith("paddle_hl")


@pytest.mark.gpu
def test_gpu_kernel_times(device):
    if device != "gpu":
        pytest.skip("GPU only")
    with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU, profiler.ProfilerTarget.GPU],
                           on_trace_ready=lambda p: None) as p:
        x = paddle.randn([256, 256])
        for _ in range(3):
            x = paddle.matmul(x, x)
    res = p.profiler_result
    kernels = [e for e in res.events if e.type == "Kernel"]
    assert len(kernels) >= 3 and all(e.device.startswith("gpu") for e in kernels)
    assert "Kernel Summary" in _table_text(res)


def test_higher_order_and_saved_hooks_unchanged_under_profiler():
    def run():
        x = paddle.to_tensor([0.5, 1.5, -2.0], stop_gradient=False)
        with paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = (x * x * x).sum()
        (dx,) = paddle.grad(y, x, create_graph=True)
        (ddx,) = paddle.grad(dx.sum(), x)
        return dx.numpy(), ddx.numpy()

    plain = run()
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        profiled = run()
    for a, b in zip(plain, profiled):
        np.testing.assert_allclose(a, b, rtol=0, atol=0)
    res = p.profiler_result
    assert sum(e.type == "Backward" for e in res.events) == 2
    assert any(e.name == "multiply_grad" for e in res.events)
