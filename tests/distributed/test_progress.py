"""The per-rank progress of spawn in Jupyter: what the ranks write and how the parent draws
it (without a kernel: the widgets are built and inspected directly)."""

from __future__ import annotations

import io

import pytest

from paddle_hl.distributed._progress import TAG, RankReporter, merge


def _report(rank, monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", str(rank))
    out = io.StringIO()
    r = RankReporter(interval=0.0, stream=out)
    r.set_params({"epochs": 1, "steps": 2})
    r.on_train_begin()
    r.on_epoch_begin(0)
    r.on_train_batch_end(0, {"loss": [1.0 + rank], "acc": 0.5, "step": 0})
    r.on_train_batch_end(1, {"loss": [0.5 + rank], "acc": 0.75, "step": 1})
    r.on_epoch_end(0, {"loss": [0.5 + rank], "acc": 0.75})
    return out.getvalue()


def test_ranks_report_and_the_parent_draws_rows_and_merged_metrics(monkeypatch):
    pytest.importorskip("ipywidgets")
    from paddle_hl.distributed._progress import SpawnProgress

    lines = [_report(r, monkeypatch) for r in (0, 1)]
    split = [[ln + "\n" for ln in text.split("\n")[:-1]] for text in lines]
    assert all(ln.startswith(TAG) for text in split for ln in text)
    shown, cell = [], io.StringIO()
    prog = SpawnProgress(2, cell, display=shown.append)
    prog.write("plain output from rank 1\n")
    for a, b in zip(*split):  # interleaved
        prog.write(a[:7])  # lines may arrive in pieces
        prog.write(a[7:])
        prog.write(b)
    assert cell.getvalue() == "plain output from rank 1\n"
    assert shown == [prog.box] and len(prog.box.children) == 3  # the header and a row per rank
    assert prog.rows[0].bar.value == 2 and prog.rows[1].bar.value == 2
    assert prog.rows[1].bar.bar_style == "success"
    assert prog.history == [{"mode": "train", "epoch": 0, "loss": 1.0, "acc": 0.75}]
    assert "loss: 1.0000" in prog.header.value and "acc: 0.7500" in prog.header.value


def test_merge_averages_the_loss_and_takes_rank_zeros_metrics():
    recs = {0: {"logs": {"loss": [2.0], "acc": 0.5}}, 1: {"logs": {"loss": 4.0, "acc": 0.1}}}
    assert merge(recs) == {"loss": 3.0, "acc": 0.5}
