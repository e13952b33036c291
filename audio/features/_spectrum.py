"""A fused power spectrum for CPU tensors: pad, frame, window, real FFT and ``|X|^2`` in one
differentiable step.

``paddle_hl.signal.stft`` builds the same result from general ops (complex output, FFT along
the frequency axis of a ``[N, n_fft, frames]`` array). For features the complex STFT is never
needed, and on CPU two things make the fused step several times faster: the frames are FFT'd
along their contiguous last axis, and the FFT runs in SciPy's pocketfft when SciPy is
installed (NumPy's float32 real FFT is 3-4x slower than its float64 one, so without SciPy the
float32 frames are transformed in float64). The backward pass is the exact adjoint: an inverse
real FFT of ``2 * G * X`` (middle bins halved, see ``_rfft_adjoint``), the window, overlap-add
and the adjoint of the padding.

The result is frames-major, ``[N, frames, n_fft // 2 + 1]``, which is also the layout in which
the mel projection is one large matrix product.
"""

from __future__ import annotations

import numpy as np

import paddle_hl as paddle
from paddle_hl.autograd import PyLayer
from paddle_hl.utils.dlpack import from_dlpack

__all__ = []

_SCIPY_FFT = None


def _fft_module():
    """scipy.fft when installed (faster for float32), else None; looked up once."""
    global _SCIPY_FFT
    if _SCIPY_FFT is None:
        try:
            import scipy.fft as sfft
        except ImportError:
            sfft = False
        _SCIPY_FFT = sfft
    return _SCIPY_FFT or None


def _rfft(frames: np.ndarray) -> np.ndarray:
    sfft = _fft_module()
    if sfft is not None:
        return sfft.rfft(frames, axis=-1)
    if frames.dtype == np.float32:
        return np.fft.rfft(frames.astype(np.float64), axis=-1).astype(np.complex64)
    return np.fft.rfft(frames, axis=-1)


def _irfft(spec: np.ndarray, n: int) -> np.ndarray:
    sfft = _fft_module()
    if sfft is not None:
        return sfft.irfft(spec, n=n, axis=-1)
    return np.fft.irfft(spec, n=n, axis=-1)


def _rfft_adjoint(g: np.ndarray, n: int) -> np.ndarray:
    """Gradient w.r.t. real frames of length n of ``Re(sum_k conj(g_k) rfft(f)_k)``.

    ``sum_k Re(g_k e^{+2 pi i k j / n})`` over the one-sided bins k equals ``n * irfft(g')``
    where g' halves the bins that irfft counts twice (all but DC and, for even n, Nyquist).
    """
    g = g.copy()
    last = g.shape[-1] - (1 if n % 2 == 0 else 0)
    g[..., 1:last] *= 0.5
    return _irfft(g, n) * n


def _overlap_add(frames: np.ndarray, hop: int, length: int) -> np.ndarray:
    """[N, F, n] frames added at offsets 0, hop, 2*hop, ... into [N, length] (framing's
    adjoint). Each hop-wide column block of every frame lands on a disjoint strided range, so
    the sum is ceil(n / hop) vectorised adds."""
    nb, nf, n = frames.shape
    out = np.zeros((nb, length), dtype=frames.dtype)
    for start in range(0, n, hop):
        width = min(hop, n - start)
        block = frames[:, :, start:start + width]
        if width < hop:
            block = np.concatenate([block, np.zeros((nb, nf, hop - width), frames.dtype)], -1)
        flat = block.reshape(nb, nf * hop)
        m = min(nf * hop, length - start)
        out[:, start:start + m] += flat[:, :m]
    return out


def _pad_adjoint(g: np.ndarray, pad: int, t: int, mode: str) -> np.ndarray:
    gx = g[:, pad:pad + t].copy()
    if mode == "reflect" and pad:
        gx[:, 1:pad + 1] += g[:, :pad][:, ::-1]
        gx[:, t - 1 - pad:t - 1] += g[:, pad + t:][:, ::-1]
    return gx


class _PowerSpectrum(PyLayer):
    @staticmethod
    def forward(ctx, x, window, n_fft, hop, center, pad_mode):
        xa = x.numpy()
        w = window.numpy().astype(xa.dtype, copy=False)
        t = xa.shape[-1]
        pad = n_fft // 2 if center else 0
        xp = np.pad(xa, ((0, 0), (pad, pad)), mode=pad_mode) if pad else xa
        n_frames = 1 + (xp.shape[-1] - n_fft) // hop
        frames = np.lib.stride_tricks.sliding_window_view(xp, n_fft, axis=-1)[:, ::hop]
        spec = _rfft(frames[:, :n_frames] * w)  # [N, F, n_fft // 2 + 1]
        power = spec.real * spec.real + spec.imag * spec.imag
        if not x.stop_gradient:
            ctx.saved = (spec, w, n_fft, hop, pad, t, xp.shape[-1], pad_mode, xa.dtype)
        return from_dlpack(power.astype(xa.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        spec, w, n_fft, hop, pad, t, padded, pad_mode, dtype = ctx.saved
        g = grad.numpy()
        gframes = _rfft_adjoint(2.0 * g * spec, n_fft).astype(dtype, copy=False) * w
        gx = _overlap_add(gframes, hop, padded)
        if pad:
            gx = _pad_adjoint(gx, pad, t, pad_mode)
        return from_dlpack(np.ascontiguousarray(gx, dtype=dtype)), None


def power_spectrum_frames(x: paddle.Tensor, window: paddle.Tensor, n_fft: int, hop: int,
                          center: bool, pad_mode: str) -> paddle.Tensor:
    """``|rfft(window * frame)|^2`` of every frame of the CPU batch x [N, T]: [N, F, n//2+1].

    window must already have length n_fft (zero-padded) and x's dtype.
    """
    return _PowerSpectrum.apply(x, window, n_fft, hop, center, pad_mode)
