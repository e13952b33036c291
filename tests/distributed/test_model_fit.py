"""Model.fit under the launcher trains data parallel (2 ranks against one process)."""

from __future__ import annotations

from .test_multiprocess import _launch, _ok


def test_model_fit_data_parallel_matches_one_process(tmp_path):
    res = _launch(2, "model_fit.py", str(tmp_path / "ckpt"))
    _ok(res, 2)
    assert res.stdout.count("Epoch 1/2") == 1  # rank 0 alone logs
    assert res.stdout.count("save checkpoint at") == 3
    # the global accuracy (over all 11 samples) on both ranks
    assert res.stdout.count("acc 0.") == 2
