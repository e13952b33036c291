"""Text progress outside Jupyter: ``paddle.hapi.progressbar.ProgressBar`` in Paddle's format
(checked against real Paddle), ``Model.fit`` lines in scripts and logs, and 80-column
terminals with several metrics."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.hapi import progressbar
from paddle_hl.hapi.progressbar import ProgressBar
from paddle_hl.notebook import _env

VALUES = [
    [("loss", [2.5]), ("acc", 0.5)],
    [("loss", [0.25]), ("acc_top1", 0.75), ("acc_top2", 0.875), ("n", 3)],
    [("loss", [0.0001234]), ("pair", [0.1, 0.2]), ("name", "x")],
    [("loss", [12345.678]), ("acc", 1.0)],
]


def _normalize(text):
    """Paddle's redrawn lines (carriage returns, backspaces, padding) as a list of lines, with
    the measured times replaced by placeholders."""
    lines = []
    for chunk in re.split(r"[\r\n]", text.replace("\b", "")):
        chunk = chunk.rstrip()
        if chunk:
            chunk = re.sub(r"\d+(us|ms|s)/step", "T/step", chunk)
            lines.append(re.sub(r"ETA: [\d:]+s?", "ETA: E", chunk))
    return lines


def _drive(cls, num, width, verbose):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        bar = cls(num=num, width=width, verbose=verbose)
        for i, values in enumerate(VALUES, 1):
            bar.update(i, values)
    return _normalize(buf.getvalue())


@pytest.mark.parametrize("verbose", [1, 2])
def test_progressbar_lines_in_paddles_format(verbose):
    lines = _drive(ProgressBar, 4, 10, verbose)
    if verbose == 1:
        assert lines[0] == "step 1/4 [=>........] - loss: 2.5000 - acc: 0.5000 - ETA: E - T/step"
        assert lines[-1] == "step 4/4 [==========] - loss: 12345.6780 - acc: 1.0000 - T/step"
    else:
        assert lines[1] == ("step 2/4 - loss: 0.2500 - acc_top1: 0.7500 - acc_top2: 0.8750 - "
                            "n: 3 - T/step")
        assert lines[2] == "step 3/4 - loss: 1.2340e-04 - pair: 0.1000 0.2000 - name: x - T/step"
    assert len(lines) == 4


@pytest.mark.parity
@pytest.mark.parametrize("verbose", [1, 2])
@pytest.mark.parametrize("num,width", [(4, 10), (4, 30), (None, 30)])
def test_progressbar_matches_real_paddle(verbose, num, width):
    import zlib  # noqa: F401

    import numpy.random  # noqa: F401  (before paddle: NumPy 2.x crash otherwise)

    real = pytest.importorskip("paddle.hapi.progressbar")
    ours = _drive(ProgressBar, num, width, verbose)
    theirs = _drive(real.ProgressBar, num, width, verbose)
    assert ours == theirs


def test_progressbar_starts_and_checks_its_arguments():
    buf = io.StringIO()
    bar = ProgressBar(num=3, verbose=2, file=buf, start=False)
    bar.start()
    bar.update(1, {"loss": 0.5})
    assert buf.getvalue().startswith("step 1/3 - loss: 0.5000 - ")
    with pytest.raises(ValueError, match="ProgressBar: num"):
        ProgressBar(num=-1)
    with pytest.raises(ValueError, match="ProgressBar: width"):
        ProgressBar(num=3, width=0)
    with pytest.raises(ValueError, match=r"ProgressBar.update: values must be \(name, value\)"):
        ProgressBar(num=3, verbose=2, file=buf).update(1, [("loss", 1.0, 2)])


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_80_columns_keep_every_metric(monkeypatch):
    monkeypatch.setattr(progressbar.shutil, "get_terminal_size",
                        lambda fallback=(80, 24): __import__("os").terminal_size((80, 24)))
    values = [("loss", "0.2470"), ("acc_top1", "0.9123"), ("acc_top2", "0.9711"),
              ("precision", "0.8800"), ("recall", "0.9012")]
    term = _Terminal()
    bar = ProgressBar(num=188, verbose=1, file=term)
    for step in (1, 50, 188):
        bar.update(step, values[:1])
    lines = [ln for ln in re.split(r"[\r\n]", term.getvalue()) if ln.strip()]
    assert all(len(ln.rstrip()) < 80 and "loss: 0.2470" in ln for ln in lines), lines
    assert "[" in lines[0] and "[" + "." * 30 not in lines[0]  # the bar shrank to fit
    term = _Terminal()
    bar = ProgressBar(num=188, verbose=1, file=term)
    for step in (1, 188):
        bar.update(step, values[:2])  # no room for a bar: the values stay
    lines = [ln for ln in re.split(r"[\r\n]", term.getvalue()) if ln.strip()]
    assert all(len(ln.rstrip()) < 80 and "acc_top1: 0.9123" in ln for ln in lines), lines
    term = _Terminal()
    bar = ProgressBar(num=188, verbose=1, file=term)
    for step in (1, 188):
        bar.update(step, values)  # too wide even without the bar: whole lines, all values
    lines = term.getvalue().splitlines()
    assert "\r" not in term.getvalue() and lines and lines[-1].startswith("step 188/188")
    assert all(f"{k}: {v}" in lines[-1] for k, v in values)


class _Data(paddle.io.Dataset):
    def __init__(self, n=40):
        rng = np.random.default_rng(0)
        self.x = rng.random((n, 4)).astype("float32")
        self.y = (self.x.sum(1, keepdims=True) > 2).astype("int64")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.y)


def _model():
    paddle.seed(0)
    model = paddle.Model(paddle.nn.Linear(4, 2))
    model.prepare(paddle.optimizer.SGD(parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy(topk=(1, 2)))
    return model


@pytest.mark.parametrize("verbose", [1, 2])
def test_fit_prints_paddles_lines_in_scripts(monkeypatch, capsys, verbose):
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", False)
    _model().fit(_Data(), _Data(16), batch_size=4, epochs=2, verbose=verbose, log_freq=5)
    out = capsys.readouterr().out
    assert "\r" not in out  # a log file gets whole lines
    lines = out.splitlines()
    pattern = (r"^step 10/10( \[=+\])? - loss: \d\.\d{4} - acc_top1: \d\.\d{4} - "
               r"acc_top2: \d\.\d{4} - \d+(us|ms|s)/step$")
    finals = [ln for ln in lines if re.match(pattern, ln)]
    assert len(finals) == 2, out  # one per epoch
    if verbose == 1:
        assert all("[==========================" in ln for ln in finals)
    else:
        assert any(ln.startswith("step  5/10 - loss:") for ln in lines), out
    assert lines.count("Eval begin...") == 2 and "Eval samples: 16" in lines


def test_terminal_redraws_are_throttled(monkeypatch):
    monkeypatch.setattr(progressbar.shutil, "get_terminal_size",
                        lambda fallback=(80, 24): __import__("os").terminal_size((120, 24)))
    term = _Terminal()
    display = progressbar.TextDisplay(1, file=term)
    display.epoch_begin(0, 1, 2000)
    for step in range(1, 2001):
        display.update("train", step, 2000, [("loss", "0.5000")], 0.001, {},
                       force=step == 2000)
    display.epoch_end(0, {})
    out = term.getvalue()
    assert out.count("\r") < 50  # ten redraws a second at most, not one per step
    last = out.split("\r")[-1]
    assert last.startswith("step 2000/2000 [") and "- loss: 0.5000 - " in last
    assert out.endswith("\n")
