"""Inside auto_cast, overflow to inf in float16 is expected (GradScaler reports it): no raw NumPy
warnings reach the user, and NumPy's error state is restored after the block."""

from __future__ import annotations

import warnings

import numpy as np

import paddle_hl as paddle


def test_auto_cast_overflow_is_quiet_and_scoped():
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Conv1D(1, 2, 3))
    x = paddle.full([2, 4], 3.0e4)  # float16 overflows in the white-listed matmul
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with paddle.amp.auto_cast(level="O1"):
            h = net[0](x)
            y = net[1](h.reshape([2, 1, 4]) * 1e4)
            z = paddle.cast(y, "float16") * 1e4
        assert not np.isfinite(z.numpy().astype("float32")).all()
    assert np.geterr() == before
    with warnings.catch_warnings(record=True) as seen:  # outside the block NumPy warns again
        warnings.simplefilter("always", RuntimeWarning)
        np.float16(7e4) * np.float16(2)
    assert any(issubclass(w.category, RuntimeWarning) for w in seen)
