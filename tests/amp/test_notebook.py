"""The AMP notebook views: the GradScaler chart (_repr_html_) and the operator-stats table."""

from __future__ import annotations

import re

import pytest

import paddle_hl as paddle
from paddle_hl.notebook import amp as nb

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _trained_scaler(pattern):
    with paddle.amp.auto_cast():
        pass
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters())
    s = paddle.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=3)
    for bad in pattern:
        with paddle.amp.auto_cast():
            loss = lin(paddle.ones([1, 2])).sum() * (float("inf") if bad else 1e-3)
        s.scale(loss).backward()
        s.minimize(opt, loss)
        opt.clear_grad()
    return s


def test_scaler_chart_marks_skipped_steps(capsys):
    s = _trained_scaler([0, 0, 1, 0, 0, 0, 1, 1, 0])
    html = s._repr_html_()
    assert "<svg" in html and "</svg>" in html
    assert len(re.findall(r"<circle", html)) == 3  # one red dot per skipped step
    assert "skipped steps" in html and "3 (33.3%)" in html
    assert "2^" in html  # log2 scale labels


def test_scaler_html_before_training_and_disabled():
    s = paddle.amp.GradScaler()
    assert "no update yet" in s._repr_html_()
    assert "disabled" in paddle.amp.GradScaler(enable=False)._repr_html_()


def test_long_history_is_downsampled():
    s = _trained_scaler([0] * 5)
    s._history = [(i, 2.0 ** (10 + (i // 500) % 3), i % 997 == 0) for i in range(1, 20001)]
    html = nb.scaler_html(s)
    assert html.count("H") < 4 * nb._MAX_POINTS
    assert len(re.findall(r"<circle", html)) == 20000 // 997


def test_stats_html_table():
    with paddle.amp.debugging.collect_operator_stats() as st:
        with paddle.amp.auto_cast():
            paddle.matmul(paddle.ones([2, 2]), paddle.ones([2, 2]))
    html = nb.stats_html(st)
    assert html.count("<tr>") == len(st.counts) + 2  # header, rows, footer
    assert "matmul_v2" in html and "FP16 Calls" in html


def test_outside_a_notebook():
    assert nb.in_notebook() is False
    assert nb.watch(paddle.amp.GradScaler()) is None
    assert nb.display_stats(None) is False
