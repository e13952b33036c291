"""The shared-memory averaging of DataParallel buckets (``distributed._shm``), on arrays in
one process: every rank's slice is averaged over all ranks' buffers and written back into
each, chunk by chunk, in every dtype a gradient can have."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from paddle_hl.distributed import _shm


def _ranks(n, size, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return [rng.integers(-50, 50, size).astype(dtype) for _ in range(n)]
    return [rng.standard_normal(size).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-6), ("float64", 1e-14),
                                       ("float16", 1e-3), (ml_dtypes.bfloat16, 1e-2),
                                       ("int64", 0), ("int32", 0)])
def test_each_slice_is_the_mean_in_every_buffer(monkeypatch, n, dtype, tol):
    monkeypatch.setattr(_shm, "_CHUNK_BYTES", 64)  # many chunks, the last one short
    size = 1001
    parts = _ranks(n, size, dtype)
    before = [p.copy() for p in parts]
    stack = np.stack([p.astype(np.float64) for p in before])
    want = np.floor(stack.sum(0) / n) if np.dtype(dtype).kind in "iu" else stack.mean(0)
    for r in range(n):  # each rank its own slice, as the ranks do between them
        _shm.average_into(parts, size * r // n, size * (r + 1) // n)
    for p in parts:
        assert p.dtype == np.dtype(dtype)
        np.testing.assert_allclose(p.astype(np.float64), want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(parts[0], parts[-1])


def test_only_the_slice_is_written():
    parts = _ranks(2, 100, "float32")
    before = [p.copy() for p in parts]
    _shm.average_into(parts, 10, 30)
    for p, b in zip(parts, before):
        np.testing.assert_array_equal(p[:10], b[:10])
        np.testing.assert_array_equal(p[30:], b[30:])
    np.testing.assert_allclose(parts[1][10:30], (before[0][10:30] + before[1][10:30]) / 2,
                               rtol=1e-6)


def test_nan_and_inf_propagate():
    a = np.array([np.nan, np.inf, 1.0, -np.inf], np.float32)
    b = np.array([1.0, 1.0, np.inf, np.inf], np.float32)
    parts = [a, b]
    _shm.average_into(parts, 0, 4)
    assert np.isnan(a[0]) and a[1] == np.inf and a[2] == np.inf and np.isnan(a[3])
    np.testing.assert_array_equal(a, b)


def test_an_empty_slice_does_nothing():
    parts = _ranks(2, 3, "float32")
    before = [p.copy() for p in parts]
    _shm.average_into(parts, 2, 2)
    for p, b in zip(parts, before):
        np.testing.assert_array_equal(p, b)


@pytest.mark.parametrize("value,on", [(None, True), ("1", True), ("0", False), ("off", False),
                                      ("true", True)])
def test_switch(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv(_shm.ENV, raising=False)
    else:
        monkeypatch.setenv(_shm.ENV, value)
    assert _shm.enabled() is on


def test_bad_switch_names_the_variable(monkeypatch):
    monkeypatch.setenv(_shm.ENV, "maybe")
    with pytest.raises(ValueError, match="PADDLE_HL_DP_SHM must be 0 or 1, got 'maybe'"):
        _shm.enabled()
