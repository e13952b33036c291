"""The other notebook views: the profiler's summary tables and timeline, the AMP views and
``paddle.summary``'s single table; themed with JupyterLab's CSS variables."""

from __future__ import annotations

import re

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.notebook import _env

pytest.importorskip("IPython")

from paddle_hl.notebook import amp as amp_view  # noqa: E402
from paddle_hl.notebook import timeline  # noqa: E402

HARD_GREYS = re.compile(r"(?<![-\w(,])#(222|444|666|888|ccc|ddd|eee|f3f3f3|fafafa)\b")


@pytest.fixture(scope="module")
def prof():
    net = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))
    p = paddle.profiler.Profiler(record_shapes=True, on_trace_ready=lambda prof: None)
    p.start()
    for _ in range(2):
        loss = net(paddle.to_tensor(np.ones((4, 8), "float32"))).mean()
        loss.backward()
        p.step()
    p.stop()
    return p


@pytest.fixture
def shown(monkeypatch):
    import IPython.display

    out = []
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", True)
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: out.extend(objs))
    return out


def test_timeline_has_search_keys_and_no_tables_unless_asked(prof):
    markup = prof.timeline()._repr_html_()
    assert "phl-search" in markup and "cv.tabIndex=0" in markup and "phl-sel" in markup
    assert "class='phl-sum'" not in markup  # the tables are Profiler.summary's job
    assert "class='phl-sum'" in prof.timeline(summary=True)._repr_html_()
    # colours come from the theme (with fallbacks), not fixed greys on any background
    css = timeline._CSS + timeline._JS
    assert "var(--jp-ui-font-color1" in css and not HARD_GREYS.search(css), \
        HARD_GREYS.findall(css)
    # the axis speaks one unit, named once
    assert 'time ("+u[1]+")' in timeline._JS


def test_profiler_summary_renders_html_in_a_notebook(prof, shown, capsys):
    prof.summary(views=paddle.profiler.SummaryView.OperatorView)
    assert capsys.readouterr().out == ""  # no wrapped text tables
    (tables,) = shown
    markup = tables._repr_html_()
    assert "class='phl-sum'" in markup and "Operator Summary" in markup
    assert "matmul" in markup or "linear" in markup
    assert "Operator Summary" in repr(tables)  # the text form stays available


def test_profiler_summary_prints_text_in_a_terminal(prof, capsys, monkeypatch):
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", False)
    prof.summary(views=paddle.profiler.SummaryView.OverView)
    assert "Overview Summary" in capsys.readouterr().out


def test_grad_scaler_view_is_themed_and_public():
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024)
    markup = scaler._repr_html_()
    assert "var(--jp-ui-font-color1" in markup and not HARD_GREYS.search(markup)
    assert "2^10" in markup
    assert float(scaler.state_dict()["scale"][0]) == 1024.0


def test_amp_stats_table_keeps_text_readable():
    class _Stats:
        counts = {"conv2d": {"fp16": 2, "bf16": 0, "fp32": 0, "other": 0},
                  "softmax": {"fp16": 0, "bf16": 0, "fp32": 1, "other": 0}}

    markup = amp_view.stats_html(_Stats())
    assert "rgba(30,136,229" in markup  # a translucent tint, so the theme's text reads
    assert not HARD_GREYS.search(markup) and "#e3f2fd" not in markup


def test_summary_result_does_not_show_itself_twice(monkeypatch):
    from paddle_hl.hapi.model_summary import _SummaryInfo

    class _Shell:
        execution_count = 7

    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: _Shell())
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    info = _SummaryInfo({"total_params": 10, "trainable_params": 10})
    info._shown_in = 7
    info._ipython_display_()  # the cell's own result: the HTML table already shows it
    assert shown == []
    _Shell.execution_count = 8
    info._ipython_display_()  # shown again in a later cell: the plain dict
    assert shown == [{"total_params": 10, "trainable_params": 10}]
