"""The notebook timeline: self-contained HTML, layout data, sortable tables, browser check."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import paddle_hl as paddle
import paddle_hl.nn as nn
import paddle_hl.profiler as profiler
from paddle_hl.notebook import timeline as tl
from paddle_hl.profiler._statistic import SortedKeys, build_tables


@pytest.fixture(scope="module")
def prof():
    """One profiled run on the CPU (a GPU run adds a device lane the layout test counts)."""
    prev = paddle.get_device()
    paddle.set_device("cpu")
    try:
        net = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
        opt = paddle.optimizer.SGD(parameters=net.parameters())
        with profiler.Profiler(on_trace_ready=lambda p: None, record_shapes=True) as p:
            for _ in range(3):
                with profiler.RecordEvent("my_range"):
                    loss = net(paddle.randn([4, 6])).mean()
                loss.backward()
                opt.step()
                opt.clear_grad()
                p.step()
        return p
    finally:
        paddle.set_device(prev)


def _payload(html):
    m = re.search(r"const D=(\{.*?\});\n", html)
    assert m, "no data payload"
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_profiler_repr_html_is_timeline(prof):
    html = prof._repr_html_()
    assert html.startswith("<div class='phl-tl'")
    assert "<canvas>" in html and "<script>" in html and "<style>" in html
    # self-contained: no external script, stylesheet or image
    assert not re.search(r"(src|href)\s*=\s*['\"]?https?:", html)
    assert "Operator Summary" in html and "Model Summary" in html


def test_repr_html_before_recording():
    p = profiler.Profiler(on_trace_ready=lambda p: None)
    assert "nothing recorded yet" in p._repr_html_()
    with pytest.raises(RuntimeError, match="nothing was recorded"):
        p.timeline()


@pytest.mark.cpu
def test_layout_rows_events_and_tooltips(prof):
    res = prof.profiler_result
    data = _payload(prof.timeline().html)
    assert len(data["events"]) == len(res.events)
    groups = {r["group"] for r in data["rows"] if r["lanes"]}
    assert {"Steps", "Model", "User", "Ops (forward)", "Ops (backward)"} <= groups
    headers = [r for r in data["rows"] if not r["lanes"]]
    assert len(headers) == 1 and "MainThread" in headers[0]["label"]
    names = set(data["names"])
    assert {"linear", "linear_grad", "relu", "my_range", "Gradient Backward"} <= names
    # every event: [row, lane, start_us, dur_us, name, category, detail]
    for row, lane, start, dur, ni, ci, di in data["events"]:
        assert data["rows"][row]["lanes"] > lane >= 0
        assert start >= 0 and dur >= 0
        assert 0 <= ni < len(data["names"]) and 0 <= ci < len(data["cats"])
        assert 0 <= di < len(data["details"])
    assert any("inputs: [4, 6], [6, 5], [5]" in d for d in data["details"])
    # lanes never overlap within a row
    by_lane = {}
    for row, lane, start, dur, *_ in data["events"]:
        by_lane.setdefault((row, lane), []).append((start, start + dur))
    for spans in by_lane.values():
        spans.sort()
        for (_, e0), (s1, _) in zip(spans, spans[1:]):
            assert s1 >= e0 - 1e-3


def test_nested_events_go_to_deeper_lanes(prof):
    data = _payload(prof.timeline(summary=False).html)
    model_rows = [i for i, r in enumerate(data["rows"]) if r["group"] == "Model"]
    seq = data["names"].index("Sequential")
    lin = data["names"].index("Linear")
    lanes = {}
    for row, lane, _, _, ni, *_ in data["events"]:
        if row in model_rows and ni in (seq, lin):
            lanes.setdefault(ni, set()).add(lane)
    assert lanes[seq] == {0} and lanes[lin] == {1}


def test_max_events_keeps_longest(prof):
    data = _payload(prof.timeline(max_events=5, summary=False).html)
    assert len(data["events"]) == 5
    assert data["dropped"] == len(prof.profiler_result.events) - 5
    assert "ProfileStep#0" in data["names"]


def test_summary_html_sortable(prof):
    html = tl.summary_html(build_tables(prof.profiler_result, SortedKeys.CPUTotal))
    assert html.count("<table class='phl-sum'>") >= 4
    assert "data-k=" in html and "click to sort" in html
    assert "<tbody class='phl-sec-body'>" in html  # the thread bar stays on top when sorting


def test_timeline_from_saved_trace(prof, tmp_path):
    path = tmp_path / "trace.json"
    prof.export(str(path))
    res = profiler.load_profiler_result(str(path))
    html = res._repr_html_()
    data = _payload(html)
    assert len(data["events"]) == len(prof.profiler_result.events)
    out = res.timeline().save(str(tmp_path / "t.html"))
    text = open(out).read()
    assert text.startswith("<!DOCTYPE html>") and "phl-tl" in text


def test_two_timelines_get_distinct_ids(prof):
    a = prof.timeline().html
    b = prof.timeline().html
    ida = re.search(r"id='(phl-tl-\w+)'", a).group(1)
    idb = re.search(r"id='(phl-tl-\w+)'", b).group(1)
    assert ida != idb


_HARNESS = """
<pre id='out'></pre>
<script>
const root=document.querySelector('.phl-tl'), cv=root.querySelector('canvas');
const r=cv.getBoundingClientRect();
cv.dispatchEvent(new MouseEvent('mousemove',{clientX:r.left+124,clientY:r.top+45,bubbles:true}));
const tip=root.querySelector('.phl-tip').textContent;
const before=root.phlView();
cv.dispatchEvent(new WheelEvent('wheel',{clientX:r.left+400,clientY:r.top+45,deltaY:-400,
  bubbles:true,cancelable:true}));
const after=root.phlView();
cv.dispatchEvent(new MouseEvent('mousedown',{clientX:r.left+500,clientY:r.top+45}));
cv.dispatchEvent(new MouseEvent('mousemove',{clientX:r.left+400,clientY:r.top+45}));
window.dispatchEvent(new MouseEvent('mouseup',{}));
const panned=root.phlView();
const th=root.querySelector('table.phl-sum th:nth-child(2)');
document.getElementById('out').textContent=JSON.stringify({drawn:root.dataset.drawn,tip:tip,
  before:before,after:after,panned:panned,w:cv.width});
</script>
"""


@pytest.mark.slow
def test_renders_and_reacts_in_headless_chromium(prof, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or \
        shutil.which("google-chrome")
    if exe is None:
        pytest.skip("no Chromium to render the timeline")
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><body style='width:1200px'>" + prof.timeline().html
                    + _HARNESS + "</body></html>")
    try:
        dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                              "--window-size=1280,900", "--dump-dom", page.as_uri()],
                             capture_output=True, text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:
        pytest.skip("Chromium did not answer in time")
    m = re.search(r"<pre id=\"out\">(.*?)</pre>", dom, re.S)
    assert m, dom[-2000:]
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert res["drawn"] == "1" and res["w"] > 0
    assert res["tip"].startswith("ProfileStep#0\nProfileStep"), res["tip"]
    span = lambda v: v[1] - v[0]
    assert span(res["after"]) < span(res["before"])  # the wheel zoomed in
    assert res["panned"][0] > res["after"][0]  # dragging left moved the view later
    assert abs(span(res["panned"]) - span(res["after"])) < 1e-6 * span(res["after"]) + 1e-9
