"""The audio datasets' items have Paddle's Python types ((Tensor, int)), compared with real
Paddle on the same small archives served locally; ESC-50's values and labels match too (Paddle
deals TESS's files into folds in the file system's listing order, so which files a split holds
differs by machine: only TESS's types and shapes are compared)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from paddle_hl.audio import datasets

import paddle_hl as paddle
from tests.audio.test_datasets import esc50_zip, tess_zip
from tests.http_server import serve_directory


@pytest.mark.parity
def test_items_match_paddle(pd, tmp_path, monkeypatch):
    pytest.importorskip("soundfile")
    import paddle.audio.datasets.esc50 as pd_esc50
    import paddle.audio.datasets.tess as pd_tess

    rng = np.random.default_rng(0)
    esc, tess = esc50_zip(rng)[0], tess_zip(rng)[0]
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "hl"))
    monkeypatch.setattr(pd_esc50, "DATA_HOME", str(tmp_path / "pd"))
    monkeypatch.setattr(pd_tess, "DATA_HOME", str(tmp_path / "pd"))
    with serve_directory(tmp_path / "www") as srv:
        esc_arch = {"url": srv.put("ESC-50-master.zip", esc), "md5": hashlib.md5(esc).hexdigest()}
        tess_arch = {"url": srv.put("TESS_Toronto_emotional_speech_set.zip", tess),
                     "md5": hashlib.md5(tess).hexdigest()}
        for name, kw in (("ESC50", {"archive": esc_arch}),
                         ("ESC50", {"archive": esc_arch, "feat_type": "melspectrogram",
                                    "n_mels": 16}),
                         ("TESS", {"archive": tess_arch}),
                         ("TESS", {"archive": tess_arch, "feat_type": "mfcc", "n_mfcc": 8})):
            ours = getattr(datasets, name)(**kw)
            ref = getattr(pd.audio.datasets, name)(**kw)
            assert len(ours) == len(ref), name
            for i in range(len(ref)):
                (x, y), (rx, ry) = ours[i], ref[i]
                assert isinstance(x, paddle.Tensor) and type(y) is type(ry) is int, name
                assert x.shape == list(rx.shape) and str(x.dtype).split(".")[-1] == \
                    str(rx.dtype).split(".")[-1], name
                if name == "ESC50":
                    assert y == ry
                    np.testing.assert_allclose(x.numpy(), rx.numpy(), rtol=1e-3, atol=1e-4)
