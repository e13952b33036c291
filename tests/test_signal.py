"""paddle_hl.signal.stft / istft: values, shapes, dtypes, errors and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import signal
from tests.test_fft import _fd_check, _rand


def _hann(n):
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float64)


def _np_stft(x, n_fft, hop, window, center=True, pad_mode="reflect", normalized=False,
             onesided=True):
    """A direct NumPy STFT (frames as a loop over frame starts) for reference."""
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=pad_mode)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., f * hop:f * hop + n_fft] for f in range(n_frames)], -1)
    frames = frames * window[:, None]
    norm = "ortho" if normalized else "backward"
    return (np.fft.rfft if onesided else np.fft.fft)(frames, axis=-2, norm=norm)


def _pad_window(w, n_fft):
    left = (n_fft - len(w)) // 2
    return np.pad(w, (left, n_fft - len(w) - left))


@pytest.mark.parametrize("shape", [(64,), (3, 50)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("center,pad_mode", [(True, "reflect"), (True, "constant"),
                                             (False, "reflect")])
def test_stft_matches_numpy(shape, dtype, center, pad_mode):
    x = _rand(shape, dtype)
    w = _hann(12)
    y = signal.stft(paddle.to_tensor(x), 16, hop_length=5, win_length=12,
                    window=paddle.to_tensor(w.astype(dtype)), center=center, pad_mode=pad_mode)
    ref = _np_stft(x.astype(np.float64), 16, 5, _pad_window(w, 16), center, pad_mode)
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert y.shape == list(ref.shape)
    assert y.dtype == (paddle.complex64 if dtype == "float32" else paddle.complex128)
    np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol)


def test_stft_defaults_and_options():
    x = _rand((2, 40), "float64")
    y = signal.stft(paddle.to_tensor(x), 16)
    assert y.shape == [2, 9, 11]  # hop = n_fft // 4, frames = 1 + 40 // 4
    ref = _np_stft(x, 16, 4, np.ones(16))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10, atol=1e-10)
    y = signal.stft(paddle.to_tensor(x), 16, normalized=True, onesided=False)
    np.testing.assert_allclose(y.numpy(), _np_stft(x, 16, 4, np.ones(16), normalized=True,
                                                   onesided=False), rtol=1e-10, atol=1e-10)
    xc = _rand((40,), "complex128")
    y = signal.stft(paddle.to_tensor(xc), 16, onesided=False)
    assert y.shape == [16, 11]
    np.testing.assert_allclose(y.numpy(), _np_stft(xc, 16, 4, np.ones(16), onesided=False),
                               rtol=1e-10, atol=1e-10)
    assert signal.stft(paddle.arange(40), 16).dtype == paddle.complex64


def test_stft_mixed_precision_window():
    x = _rand((30,), "float32")
    y = signal.stft(paddle.to_tensor(x), 8, window=paddle.to_tensor(_hann(8)))
    assert y.dtype == paddle.complex128


@pytest.mark.parametrize("n_fft,hop,win", [(16, 4, 16), (16, 4, 10), (15, 3, 15), (8, 8, 8),
                                           (12, 5, 12)])
@pytest.mark.parametrize("center", [True, False])
def test_istft_inverts_stft(n_fft, hop, win, center):
    x = _rand((2, 60), "float64")
    w = paddle.to_tensor(_hann(win) + 0.1)
    spec = signal.stft(paddle.to_tensor(x), n_fft, hop, win, w, center=center)
    if not center and win < n_fft:
        # the zero-padded window leaves the first samples uncovered: NOLA fails
        with pytest.raises(ValueError, match="NOLA"):
            signal.istft(spec, n_fft, hop, win, w, center=center)
        return
    y = signal.istft(spec, n_fft, hop, win, w, center=center)
    if center:
        assert y.shape[-1] <= 60
        np.testing.assert_allclose(y.numpy(), x[:, :y.shape[-1]], rtol=1e-9, atol=1e-9)
    else:
        n = y.shape[-1]
        np.testing.assert_allclose(y.numpy(), x[:, :n], rtol=1e-9, atol=1e-9)


def test_istft_length_twosided_and_complex():
    x = _rand((2, 40), "float64")
    spec = signal.stft(paddle.to_tensor(x), 16)
    y = signal.istft(spec, 16, length=30)
    assert y.shape == [2, 30]
    np.testing.assert_allclose(y.numpy(), x[:, :30], rtol=1e-9, atol=1e-9)
    y = signal.istft(spec[0], 16)
    assert y.shape == [40]
    xc = _rand((2, 40), "complex128")
    spec = signal.stft(paddle.to_tensor(xc), 16, onesided=False)
    y = signal.istft(spec, 16, onesided=False, return_complex=True)
    assert y.dtype == paddle.complex128
    np.testing.assert_allclose(y.numpy(), xc, rtol=1e-9, atol=1e-9)
    spec = signal.stft(paddle.to_tensor(x), 16, onesided=False)
    y = signal.istft(spec, 16, onesided=False)
    assert y.dtype == paddle.float64
    np.testing.assert_allclose(y.numpy(), x, rtol=1e-9, atol=1e-9)
    y32 = signal.istft(signal.stft(paddle.to_tensor(x.astype("float32")), 16), 16)
    assert y32.dtype == paddle.float32


def test_stft_errors():
    x = paddle.rand([2, 40])
    with pytest.raises(ValueError, match="1D or 2D"):
        signal.stft(paddle.rand([1, 2, 40]), 16)
    with pytest.raises(AssertionError, match="1D or 2D"):  # Paddle's exception type too
        signal.stft(paddle.rand([1, 2, 40]), 16)
    with pytest.raises(ValueError, match="onesided should be False"):
        signal.stft(x.astype("complex64"), 16)
    with pytest.raises(ValueError, match=r"n_fft should be in \(0, seq_length\(40\)\]"):
        signal.stft(x, 64)
    with pytest.raises(ValueError, match="hop_length should be > 0"):
        signal.stft(x, 16, hop_length=0)
    with pytest.raises(ValueError, match="win_length should be in"):
        signal.stft(x, 16, win_length=20)
    with pytest.raises(ValueError, match="1D window tensor"):
        signal.stft(x, 16, window=paddle.ones([8]))
    with pytest.raises(ValueError, match="pad_mode"):
        signal.stft(x, 16, pad_mode="replicate")
    with pytest.raises(TypeError, match="n_fft must be an int"):
        signal.stft(x, 16.0)


def test_istft_errors():
    spec = signal.stft(paddle.rand([2, 40]), 16)
    with pytest.raises(ValueError, match="2D or 3D"):
        signal.istft(spec.unsqueeze(0), 16)
    with pytest.raises(ValueError, match="onesided should be False"):
        signal.istft(spec, 16, return_complex=True)
    with pytest.raises(ValueError, match="fft_size should be equal"):
        signal.istft(spec, 8)
    with pytest.raises(ValueError, match="hop_length should be in"):
        signal.istft(spec, 16, hop_length=20)
    with pytest.raises(ValueError, match="win_length should be in"):
        signal.istft(spec, 16, win_length=20)
    with pytest.raises(ValueError, match="NOLA"):
        signal.istft(spec, 16, window=paddle.zeros([16]))
    two = signal.stft(paddle.rand([2, 40]), 16, onesided=False)
    with pytest.raises(ValueError, match="should not be complex"):
        signal.istft(two, 16, onesided=False, window=paddle.ones([16], dtype="complex64"))


def test_stft_gradients_finite_difference():
    w = _hann(10) + 0.2
    _fd_check(lambda t: signal.stft(t, 12, 5, 10, paddle.to_tensor(w)), _rand((2, 30), "float64"))
    _fd_check(lambda t: signal.stft(t, 12, 4, pad_mode="constant", normalized=True),
              _rand((25,), "float64"))
    _fd_check(lambda t: signal.stft(t, 8, 3, onesided=False), _rand((20,), "complex128"))
    x = paddle.to_tensor(_rand((2, 30), "float64"))
    _fd_check(lambda wt: signal.stft(x, 12, 5, 10, wt), w)


def test_istft_gradients_finite_difference():
    spec = signal.stft(paddle.to_tensor(_rand((2, 30), "float64")), 12, 4).numpy()
    w = _hann(12) + 0.3
    _fd_check(lambda t: signal.istft(t, 12, 4, window=paddle.to_tensor(w)), spec)
    _fd_check(lambda t: signal.istft(t, 12, 4, center=False, length=20), spec)
    s = paddle.to_tensor(spec)
    _fd_check(lambda wt: signal.istft(s, 12, 4, window=wt), w)
    two = signal.stft(paddle.to_tensor(_rand((30,), "complex128")), 12, 4,
                      onesided=False).numpy()
    _fd_check(lambda t: signal.istft(t, 12, 4, onesided=False, return_complex=True), two)


def test_tensor_methods():
    x = paddle.rand([2, 40])
    np.testing.assert_allclose(x.stft(16).numpy(), signal.stft(x, 16).numpy())
    spec = signal.stft(x, 16)
    np.testing.assert_allclose(spec.istft(16).numpy(), signal.istft(spec, 16).numpy())


# ---------------------------------------------------------------------------- oracle
def _run(lib, fn, x, w, kw):
    t = lib.to_tensor(x, stop_gradient=False)
    wt = None if w is None else lib.to_tensor(w, stop_gradient=False)
    y = getattr(lib.signal, fn)(t, window=wt, **kw)
    g = _rand(y.shape, y.numpy().dtype, 9)
    y.backward(lib.to_tensor(g))
    return (y.numpy(), t.grad.numpy(), None if wt is None else wt.grad.numpy(),
            str(y.dtype).split(".")[-1])


def _parity(pd, fn, x, w=None, **kw):
    a = _run(paddle, fn, x, w, kw)
    b = _run(pd, fn, x, w, kw)
    assert a[3] == b[3]
    assert a[0].shape == b[0].shape
    low = [np.float32, np.complex64]
    single = a[0].dtype in low or np.asarray(x).dtype in low or (
        w is not None and np.asarray(w).dtype in low)
    tol = 1e-4 if single else 1e-9
    for i, what in enumerate(("output", "x gradient", "window gradient")):
        if a[i] is not None:
            np.testing.assert_allclose(a[i], b[i], rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parity
def test_stft_parity(pd):
    x = _rand((2, 40), "float64")
    x1 = _rand((37,), "float64")
    xc = _rand((2, 40), "complex128")
    w16 = np.random.default_rng(4).random(16)
    w10 = np.random.default_rng(5).random(10)
    _parity(pd, "stft", x, None, n_fft=16)
    _parity(pd, "stft", x.astype("float32"), None, n_fft=16)
    _parity(pd, "stft", x1, w16, n_fft=16, hop_length=5)
    _parity(pd, "stft", x1, w10, n_fft=16, win_length=10, hop_length=3)
    _parity(pd, "stft", x1, w10, n_fft=15, win_length=10, hop_length=3)
    _parity(pd, "stft", x, w16, n_fft=16, pad_mode="constant", normalized=True)
    _parity(pd, "stft", x, w16, n_fft=16, center=False, hop_length=7)
    _parity(pd, "stft", x, w16, n_fft=16, onesided=False)
    _parity(pd, "stft", xc, w16, n_fft=16, onesided=False)
    _parity(pd, "stft", x.astype("float32"), w16, n_fft=16)
    _parity(pd, "stft", x, w16.astype("float32"), n_fft=16, hop_length=20)


@pytest.mark.parity
def test_istft_parity(pd):
    rng = np.random.default_rng(6)
    x = _rand((2, 40), "float64")
    xc = _rand((2, 40), "complex128")
    w16 = rng.random(16) + 0.1
    w10 = rng.random(10) + 0.1
    spec = pd.signal.stft(pd.to_tensor(x), 16, window=pd.to_tensor(w16)).numpy()
    two = pd.signal.stft(pd.to_tensor(xc), 16, onesided=False).numpy()
    _parity(pd, "istft", spec, w16, n_fft=16)
    _parity(pd, "istft", spec.astype("complex64"), w16, n_fft=16)
    _parity(pd, "istft", spec.astype("complex64"), None, n_fft=16, normalized=True)
    _parity(pd, "istft", spec, w16, n_fft=16, length=30)
    _parity(pd, "istft", spec, w16, n_fft=16, length=60)  # Paddle stops at the frames' end
    _parity(pd, "istft", spec, w16, n_fft=16, center=False)
    _parity(pd, "istft", spec, w10, n_fft=16, win_length=10, hop_length=4)
    _parity(pd, "istft", two, w16, n_fft=16, onesided=False)
    _parity(pd, "istft", two, w16, n_fft=16, onesided=False, return_complex=True)
    _parity(pd, "istft", spec, w16.astype("float32"), n_fft=16)
    # 2-D input: Paddle's backward fails there, so compare the forward only
    y = signal.istft(paddle.to_tensor(spec[0]), 16).numpy()
    np.testing.assert_allclose(y, pd.signal.istft(pd.to_tensor(spec[0]), 16).numpy(),
                               rtol=1e-9, atol=1e-9)
