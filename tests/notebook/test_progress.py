"""The notebook views: NotebookDisplay (bars, live chart, throttling, verbose), the HTML tables,
the history charts, and paddle_hl without ipywidgets / matplotlib."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.hapi import progressbar

widgets = pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from paddle_hl.notebook import _env, charts, progress, tables  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHART = 4  # header, folded-rows note, bars, callback output, chart


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def _display(clock=None, verbose=1, **kw):
    shown = []
    if verbose == 2:  # as make_display does: the text display prints Paddle's log lines
        kw.setdefault("log", progressbar.TextDisplay(2))
    disp = progress.NotebookDisplay(verbose, display=shown.append,
                                    clock=clock or FakeClock(), **kw)
    return disp, shown


def _rows(box):
    return list(box.children[2].children)


def _row_state(row):
    bar, status = row.children
    return bar.description, bar.value, bar.max, bar.bar_style, status.value


def _run_epoch(disp, clock, epoch, epochs, steps, dt=0.01, metrics=("acc",)):
    disp.epoch_begin(epoch, epochs, steps)
    for s in range(1, steps + 1):
        clock.t += dt
        loss = 2.0 / (epoch * steps + s)
        logs = {"loss": [loss], "acc": 0.5 + 0.01 * s, "step": s - 1, "batch_size": 8}
        items = [("loss", f"{loss:.4f}"), ("loss", f"{loss:.4f}")] + [
            (m, f"{logs[m]:.4f}") for m in metrics]
        disp.update("train", s, steps, items, dt, logs, force=(s == steps))
    disp.epoch_end(epoch, {"loss": [loss], "acc": logs["acc"]})


# ---------------------------------------------------------------------------- the display
def test_bars_per_epoch_and_eval_with_live_values():
    clock = FakeClock()
    disp, shown = _display(clock)
    disp.train_begin(2, {"metrics": ["loss", "acc"], "steps": 20})
    assert len(shown) == 1 and isinstance(shown[0], widgets.VBox)
    box = shown[0]
    assert "2 epochs" in box.children[0].value and "20 steps" in box.children[0].value
    _run_epoch(disp, clock, 0, 2, 20)
    disp.phase_begin("eval", 5)
    clock.t += 0.1
    disp.update("eval", 5, 5, [("loss", "0.5000"), ("acc", "0.9000")], 0.02,
                {"loss": [0.5], "acc": 0.9}, force=True)
    disp.phase_end("eval", 40, {"loss": [0.5], "acc": 0.9})
    _run_epoch(disp, clock, 1, 2, 20)
    disp.train_end({})
    rows = [_row_state(r) for r in _rows(box)]
    assert [r[0] for r in rows] == ["Epoch 1/2", "Eval", "Epoch 2/2"]
    assert [(r[1], r[2], r[3]) for r in rows] == [(20, 20, "success"), (5, 5, "success"),
                                                   (20, 20, "success")]
    status = rows[0][4]
    assert "20/20" in status and "acc: 0.7000" in status and "10ms/step" in status
    assert "white-space:nowrap" in status  # one line per bar, whatever the metrics
    assert status.count("loss:") == 1  # a repeated log item is shown once
    assert "40 samples" in rows[1][4]
    assert {r.children[0].layout.width for r in _rows(box)} == {"16em"}  # one bar width
    # one block for the whole fit, then the static record: the table and the chart image
    assert len(shown) == 3 and shown[0] is box
    record = shown[1]._repr_html_()
    assert "Training record" in record and "eval loss" in record and "0.9000" in record
    assert shown[2]._repr_svg_().startswith("<svg")
    assert "Training finished" in box.children[0].value
    chart = box.children[CHART]
    assert "<svg" in chart.value and chart.layout.display == "none"  # the record replaces it


def test_bar_redraws_are_throttled_in_time():
    clock = FakeClock()
    disp, _ = _display(clock, interval=0.5)
    disp.train_begin(1, {"metrics": ["loss"], "steps": 200})
    disp.epoch_begin(0, 1, 200)
    bar = disp._row.bar
    seen = []
    bar.observe(lambda ch: seen.append(ch["new"]), "value")
    for s in range(1, 201):
        clock.t += 0.01  # 2 s in all: about 4 redraws plus the final one
        disp.update("train", s, 200, [("loss", "1.0")], 0.01, {"loss": [1.0]},
                    force=(s == 200))
    assert 3 <= len(seen) <= 6, seen
    assert seen[-1] == 200
    assert disp.stats["updates"] == 200


def test_chart_renders_throttled_and_updated_in_place():
    clock = FakeClock()
    disp, shown = _display(clock, chart_interval=1.0, budget=1.0)
    disp.train_begin(1, {"metrics": ["loss", "acc"], "steps": 400})
    image = disp.chart.widget
    assert image.layout.display == "none"  # nothing to show before the first render
    disp.epoch_begin(0, 1, 400)
    values = []
    image.observe(lambda ch: values.append(ch["new"]), "value")
    for s in range(1, 401):
        clock.t += 0.01  # 4 s: at most one throttled render per second
        disp.update("train", s, 400, [("loss", "1.0")], 0.01,
                    {"loss": [1.0 / s], "acc": s / 400}, force=(s == 400))
    throttled = disp.chart.renders
    assert 2 <= throttled <= 4, throttled
    disp.epoch_end(0, {"loss": [0.0025], "acc": 1.0})
    assert disp.chart.renders == throttled + 1  # every epoch end draws
    assert shown[0].children[CHART] is image  # the same widget, new markup
    assert len(values) == disp.chart.renders and all("<svg" in v for v in values)
    assert image.layout.display is None


def test_chart_redraws_at_every_epoch_end_and_eval_whatever_the_budget():
    clock = FakeClock()
    disp, _ = _display(clock, chart_interval=1e9, budget=0.0)
    disp.train_begin(3, {"metrics": ["loss", "acc"], "steps": 5})
    for e in range(3):
        before = disp.chart.renders
        _run_epoch(disp, clock, e, 3, 5)
        assert disp.chart.renders == before + 1
        disp.phase_begin("eval", 1)
        disp.update("eval", 1, 1, [], 0.01, {"loss": [0.5], "acc": 0.9}, force=True)
        disp.phase_end("eval", 8, {"loss": [0.5], "acc": 0.9})
        assert disp.chart.renders == before + 2


def test_chart_respects_the_time_budget():
    # a slow chart (1 s per render in fake time) may only take `budget` of the wall time
    clock = FakeClock()
    disp, _ = _display(clock, chart_interval=0.0, budget=0.01)
    disp.train_begin(1, {"metrics": ["loss"], "steps": 1000})
    real_render = disp.chart.render

    def slow_render(*a, **k):
        clock.t += 1.0
        return real_render(*a, **k)

    disp.chart.render = slow_render
    disp.epoch_begin(0, 1, 1000)
    for s in range(1, 1000):
        clock.t += 0.2
        disp.update("train", s, 1000, [], 0.2, {"loss": [1.0]})
    stats = disp.stats
    assert stats["chart_renders"] >= 1
    assert stats["spent_s"] <= 0.01 * stats["elapsed_s"] + 1.0


def test_verbose_2_prints_paddles_log_lines(capsys):
    clock = FakeClock()
    disp, _ = _display(clock, verbose=2)
    disp.train_begin(1, {"metrics": ["loss", "acc"], "steps": 4})
    _run_epoch(disp, clock, 0, 1, 4)
    disp.phase_begin("eval", 2)
    disp.update("eval", 2, 2, [("loss", "0.5000")], 0.01, {"loss": [0.5]}, force=True)
    disp.phase_end("eval", 16, {"loss": [0.5]})
    disp.train_end({})
    out = capsys.readouterr().out
    assert "The loss value printed in the log is the current step" in out
    assert "Epoch 1/1" in out and "step 4/4 - loss: 0.5000" in out
    assert "Eval begin..." in out and "Eval samples: 16" in out


def test_verbose_1_prints_nothing(capsys):
    clock = FakeClock()
    disp, _ = _display(clock, verbose=1)
    disp.train_begin(1, {"metrics": ["loss"], "steps": 3})
    _run_epoch(disp, clock, 0, 1, 3, metrics=())
    disp.train_end({})
    assert capsys.readouterr().out == ""


def test_standalone_evaluate_and_predict_get_their_own_blocks():
    clock = FakeClock()
    disp, shown = _display(clock)
    disp.phase_begin("eval", 3)
    disp.update("eval", 3, 3, [("loss", "0.1")], 0.01, {"loss": [0.1]}, force=True)
    disp.phase_end("eval", 24, {"loss": [0.1]})
    disp.phase_begin("predict", None)  # unknown length (an IterableDataset)
    disp.update("predict", 7, None, [], 0.01, {}, force=True)
    disp.phase_end("predict", 50, {})
    # each block is followed by its static record
    assert len(shown) == 4
    assert "Evaluation finished" in shown[0].children[0].value
    assert "Evaluation record" in shown[1]._repr_html_() and "0.1000" in shown[1]._repr_html_()
    assert "Prediction" in shown[2].children[0].value
    assert "50 samples" in shown[3]._repr_html_()
    assert len(shown[2].children) == 4  # no chart outside fit
    label, value, vmax, style, status = _row_state(_rows(shown[2])[0])
    assert (value, vmax, style) == (1, 1, "success") and "step 7" in status


def test_interrupted_epoch_is_marked_and_old_rows_fold():
    clock = FakeClock()
    disp, shown = _display(clock, max_rows=3)
    disp.train_begin(5, {"metrics": ["loss"], "steps": 10})
    for e in range(5):
        disp.epoch_begin(e, 5, 10)
        clock.t += 0.1
        disp.update("train", 4, 10, [("loss", "1.0")], 0.1, {"loss": [1.0]})
        disp.epoch_end(e, {"loss": [1.0]})  # stopped after 4 of 10 steps (num_iters)
    disp.train_end({})
    rows = _rows(shown[0])
    assert len(rows) == 3 and rows[0].children[0].description == "Epoch 3/5"
    assert "2 earlier" in shown[0].children[1].value
    assert {r.children[0].bar_style for r in rows} == {"warning"}
    assert "num_iters" in shown[0].children[0].value


def test_early_stop_is_told_in_the_header_and_the_axis_shrinks():
    clock = FakeClock()
    disp, shown = _display(clock)
    disp.train_begin(10, {"metrics": ["loss", "acc"], "steps": 5})
    for e in range(3):
        _run_epoch(disp, clock, e, 10, 5)
    disp.train_end({})
    header = shown[0].children[0].value
    assert "stopped early" in header and "epoch 3 of 10" in header and "15 steps" in header
    assert disp.chart.total_steps == 15
    assert shown[1]._repr_html_().count("<tr>") == 1 + 3  # header + one row per epoch


def test_chart_needs_no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    disp, shown = _display(FakeClock())
    disp.train_begin(1, {"metrics": ["loss"], "steps": 2})
    _run_epoch(disp, FakeClock(), 0, 1, 2, metrics=())
    disp.train_end({})
    assert "<svg" in shown[0].children[CHART].value


# ---------------------------------------------------------------------------- with Model
class _Digits(paddle.io.Dataset):
    def __init__(self, n=96, seed=0):
        rng = np.random.default_rng(seed)
        self.y = rng.integers(0, 10, n)
        self.x = (rng.random((n, 1, 28, 28)) * 0.3 + self.y[:, None, None, None] / 10)
        self.x = self.x.astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i:i + 1]

    def __len__(self):
        return len(self.y)


@pytest.fixture
def notebook_mode(monkeypatch):
    """Pretend to run inside Jupyter; collect what would be displayed."""
    shown = []
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", True)
    monkeypatch.setattr(_env, "display", shown.append)
    return shown


def _lenet_model():
    paddle.seed(0)
    model = paddle.Model(paddle.vision.models.LeNet())
    model.prepare(paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model


def test_model_fit_evaluate_predict_use_the_widgets(notebook_mode, capsys):
    model = _lenet_model()
    data = _Digits()
    model.fit(data, data, batch_size=32, epochs=2, verbose=1)
    assert capsys.readouterr().out == ""  # no text bars in a notebook
    box = notebook_mode[0]
    labels = [r.children[0].description for r in _rows(box)]
    assert labels == ["Epoch 1/2", "Eval", "Epoch 2/2", "Eval"]
    assert all(r.children[0].bar_style == "success" for r in _rows(box))
    assert "<svg" in box.children[CHART].value
    chart = progress.last_stats()
    assert chart["updates"] >= 6 and chart["chart_renders"] >= 1
    res = model.evaluate(data, batch_size=48, verbose=1)
    assert set(res) == {"loss", "acc"}
    out = model.predict(data, batch_size=48, verbose=1)
    assert len(out[0]) == 2
    boxes = [b for b in notebook_mode if isinstance(b, widgets.VBox)]
    assert len(boxes) == 3 and len(notebook_mode) == 3 + 2 + 1 + 1  # with the records
    assert "Evaluation" in boxes[1].children[0].value
    assert "Prediction" in boxes[2].children[0].value


def test_model_fit_verbose_0_displays_nothing(notebook_mode, capsys):
    model = _lenet_model()
    model.fit(_Digits(), batch_size=32, epochs=1, verbose=0)
    assert notebook_mode == [] and capsys.readouterr().out == ""


def test_display_updates_are_throttled(notebook_mode):
    # the cost itself is measured, not asserted (timings are for benchmarks, not tests): here
    # only the throttling that bounds it -- far fewer redraws than steps, one chart render at
    # most every second plus one per epoch end and the final one
    model = _lenet_model()
    data = _Digits(n=640)
    model.fit(data, batch_size=32, epochs=1, verbose=1)
    stats = progress.last_stats()
    assert stats["updates"] >= 20
    # at most one bar redraw per interval (0.5 s) plus the first and last of the bar: on a
    # loaded machine where a step takes longer than that, that can be every step
    assert stats["bar_draws"] <= 3 + stats["elapsed_s"] / 0.5, stats
    assert stats["chart_renders"] <= 3 + stats["elapsed_s"] / 1.0, stats


def test_summary_renders_html_table_in_notebook(notebook_mode, capsys):
    info = paddle.summary(paddle.vision.models.LeNet(), (1, 1, 28, 28))
    assert info == {"total_params": 61610, "trainable_params": 61610}
    assert isinstance(info, dict)
    assert capsys.readouterr().out == ""  # one table: the HTML one, no text copy
    (table,) = notebook_mode
    html = table._repr_html_()
    assert html.startswith("<table") and "Model Summary" in html
    assert "Conv2D-" in html and "[1, 16, 5, 5]" in html and "61,610" in html
    assert "Total params" in repr(table)


# ---------------------------------------------------------------------------- tables
def test_html_table_escapes_aligns_and_formats():
    html = tables.html_table(["name", "count", "ratio"], [["<a>", 1234567, 0.5], ["b", 2, 1.25]],
                             title="T & U", footer=[("total", 1234569)])
    assert "&lt;a&gt;" in html and "<a>" not in html and "T &amp; U" in html
    assert "1,234,567" in html and "0.5000" in html and "1,234,569" in html
    assert "text-align:right" in html and "text-align:left" in html
    assert html.count("<tr>") == 4  # header, two rows, footer


def test_html_table_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"html_table: row 1 has 1 cells but there are 2"):
        tables.html_table(["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="html_table: align"):
        tables.html_table(["a"], [[1]], align=["middle"])


def test_show_table_displays_and_reprs(notebook_mode):
    t = tables.show_table(["k", "v"], [["x", 1]])
    assert notebook_mode == [t]
    assert repr(t).splitlines()[0].split() == ["k", "v"]


# ---------------------------------------------------------------------------- charts
def test_history_chart_from_model_history():
    model = _lenet_model()
    data = _Digits(n=64)
    model.fit(data, data, batch_size=32, epochs=2, verbose=0)
    png = charts.history_png(model.history)
    assert png.startswith(PNG_MAGIC)
    fig = charts.plot_history(model.history)
    labels = sorted(line.get_label() for ax in fig.axes for line in ax.lines)
    assert labels == ["acc", "acc (epoch)", "acc (eval)", "loss", "loss (epoch)",
                      "loss (eval)"]
    loss_step = next(ln for ln in fig.axes[0].lines if ln.get_label() == "loss")
    np.testing.assert_allclose(loss_step.get_ydata(),
                               [r["loss"] for r in model.history["step"]])
    np.testing.assert_array_equal(loss_step.get_xdata(), [1, 2, 3, 4])


def test_live_chart_svg_keeps_points_inside_and_legend_outside_the_plot():
    import re

    chart = charts.LiveChart(metrics=True, total_steps=100, widget=False)
    for i in range(1, 101):
        chart.add("loss", "loss", "step", i, 2.3 / i)
        chart.add("metric", "acc", "step", i, i / 100)
    chart.add("loss", "loss", "epoch", 100, 0.023)
    chart.add("metric", "acc", "eval", 100, 1.0)
    markup = chart.render()
    assert markup.count("<svg") == 2 and "var(--jp-ui-font-color1" in markup
    assert "loss (epoch)" in markup and "acc (eval)" in markup
    # the legend is HTML above each panel, not drawn over the plot
    for svg in re.findall(r"<svg.*?</svg>", markup):
        w, h = map(float, re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
        for cx, cy in re.findall(r'cx="([\d.-]+)" cy="([\d.-]+)" r="3.5"', svg):
            assert 46 < float(cx) + 3.5 <= w - 14 and 3.5 <= float(cy) <= h
        for x, y in re.findall(r'<rect x="([\d.-]+)" y="([\d.-]+)" width="7"', svg):
            assert float(x) + 7 <= w - 14 and float(y) >= 0  # the end point is drawn whole
    static = chart.static_svg()
    assert static.startswith("<svg") and "var(" not in static and "loss (epoch)" in static
    single = charts.LiveChart(metrics=False, widget=False)
    single.add("metric", "acc", "step", 1, 0.5)  # no metric panel: ignored
    assert len(single) == 0
    with pytest.raises(ValueError, match="LiveChart.add: kind"):
        single.add("loss", "loss", "batch", 1, 0.5)


def test_one_meaning_per_label_live_history_rows_and_table(notebook_mode):
    model = _lenet_model()
    data = _Digits(n=96)
    model.fit(data, data, batch_size=32, epochs=2, verbose=1)
    epoch_losses = [r["loss"] for r in model.history["epoch"]]
    live = notebook_mode[0].children[CHART]
    disp = progress._LAST
    series = disp.chart.series()
    np.testing.assert_allclose(series[("loss", "loss", "epoch")][1], epoch_losses)
    hist = charts._history_chart(model.history).series()
    np.testing.assert_allclose(hist[("loss", "loss", "epoch")][1], epoch_losses)
    np.testing.assert_allclose(hist[("metric", "acc", "epoch")][1],
                               [r["acc"] for r in model.history["epoch"]])
    rows = _rows(notebook_mode[0])
    assert f"loss: {epoch_losses[0]:.4f}" in rows[0].children[1].value
    assert f"{epoch_losses[1]:.4f}" in notebook_mode[1]._repr_html_()
    assert "<svg" in live.value


@pytest.mark.parametrize("value,expected", [
    (1.5, [1.5]), ([0.25, 2], [0.25, 2.0]), (np.float32(0.5), [0.5]),
    (np.array([[1.0], [2.0]]), [1.0, 2.0]), ("x", []), (None, [])])
def test_scalars(value, expected):
    assert charts.scalars(value) == expected


# ---------------------------------------------------------------------------- absent extras
_BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('ipywidgets', 'matplotlib'):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Block())
"""


def _python(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_import_does_not_load_the_notebook_extras():
    out = _python("""
        import sys
        import paddle_hl, paddle_hl.hapi, paddle_hl.callbacks
        print(sorted(m for m in ('ipywidgets', 'matplotlib', 'paddle_hl.notebook.progress')
                     if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_trains_in_notebook_mode_without_ipywidgets_and_matplotlib():
    out = _python(_BLOCK + """
import numpy as np
import paddle_hl as paddle
from paddle_hl.notebook import _env
_env._IN_NOTEBOOK = True  # as inside Jupyter, but the extras are missing
try:
    import paddle_hl.notebook.progress
except ImportError as e:
    print("no widgets:", e)
x = np.random.default_rng(0).random((32, 4)).astype("float32")
y = (x.sum(1, keepdims=True) > 2).astype("int64")
data = paddle.io.TensorDataset([paddle.to_tensor(x), paddle.to_tensor(y)])
model = paddle.Model(paddle.nn.Linear(4, 2))
model.prepare(paddle.optimizer.SGD(parameters=model.parameters()), paddle.nn.CrossEntropyLoss(),
              paddle.metric.Accuracy())
model.fit(data, batch_size=8, epochs=1, verbose=2, log_freq=2)
print(type(model.evaluate(data, batch_size=8, verbose=0)).__name__)
print("loaded:", sorted(m for m in ("ipywidgets", "matplotlib") if m in sys.modules))
""")
    assert "no widgets: No module named 'ipywidgets'" in out
    assert "Epoch 1/1" in out and "step 4/4 - loss:" in out  # the text display took over
    assert "dict" in out and "loaded: []" in out


def test_require_names_the_install_command():
    with pytest.raises(ImportError, match=r"pip install 'paddle_hl\[notebook\]'"):
        _env.require("paddle_hl_no_such_module", "the test")
