"""Short-time Fourier transforms (``paddle.signal.stft`` / ``istft``).

Both are built from small differentiable kernels (padding, framing, windowing, overlap-add,
window-envelope division) and the FFT kernels of :mod:`paddle_hl.fft`, so gradients flow to the
signal and to the window. Framing and overlap-add are each other's adjoint.
"""

from __future__ import annotations

import numpy as np

from . import backend
from . import fft as _fft
from .framework import dtype as _dt
from .framework.op import apply, op
from .tensor._helpers import cast_to, int_arg, tensor_arg

__all__ = ["stft", "istft"]  # frame is public in Paddle 2.6 but not in its API list


class _ArgError(ValueError, AssertionError):
    """A bad argument. Paddle raises AssertionError here; this is also a ValueError."""


# ---------------------------------------------------------------------------- array helpers
def _frame_array(x, n, hop, n_frames):
    """[..., L] -> [..., n, n_frames]: column f holds x[f*hop : f*hop + n]."""
    xp = backend.get_array_module(x)
    idx = xp.arange(n)[:, None] + hop * xp.arange(n_frames)[None, :]
    return x[..., idx]


def _overlap_add_array(frames, hop, length):
    """[..., n, F] -> [..., length]: frame f is added at offset f*hop (adjoint of framing).

    The frame is cut into ceil(n / hop) chunks of ``hop`` samples; chunk j of every frame lands
    on a disjoint, regularly strided set of positions, so each chunk is one vectorised add.
    """
    xp = backend.get_array_module(frames)
    n, nf = frames.shape[-2:]
    batch = frames.shape[:-2]
    out = xp.zeros(batch + (length,), dtype=frames.dtype)
    for j in range(0, n, hop):
        c = min(hop, n - j)
        seg = xp.swapaxes(frames[..., j:j + c, :], -1, -2)  # [..., F, c]
        if c < hop:
            seg = xp.concatenate([seg, xp.zeros(batch + (nf, hop - c), dtype=seg.dtype)], -1)
        flat = seg.reshape(batch + (nf * hop,))
        m = min(nf * hop, length - j)
        if m > 0:
            out[..., j:j + m] += flat[..., :m]
    return out


def _cast_like(g, dtype):
    if dtype.kind != "c" and g.dtype.kind == "c":
        g = g.real
    return g.astype(dtype, copy=False)


# ---------------------------------------------------------------------------- kernels
@op("pad", saves=())
def _pad_last(x, left, right, mode):
    """Pad the last axis with zeros ('constant') or its mirror image without the edge
    ('reflect')."""
    xp = backend.get_array_module(x)
    pads = [(0, 0)] * (x.ndim - 1) + [(left, right)]
    out = xp.pad(x, pads, mode=mode)
    t = x.shape[-1]

    def bw(g):
        gx = g[..., left:left + t].copy()
        if mode == "reflect":
            if left:
                gx[..., 1:left + 1] += g[..., :left][..., ::-1]
            if right:
                gx[..., t - 1 - right:t - 1] += g[..., left + t:][..., ::-1]
        return (gx,)

    return out, bw


@op("frame", saves=())
def _frame(x, n, hop):
    """Split the last axis into overlapping frames: [..., L] -> [..., n, F]."""
    length = x.shape[-1]
    n_frames = 1 + (length - n) // hop
    out = _frame_array(x, n, hop, n_frames)
    return out, lambda g: (_overlap_add_array(g, hop, length),)


@op("overlap_add", saves=())
def _overlap_add(frames, hop):
    """Overlap-add frames: [..., n, F] -> [..., n + hop * (F - 1)]."""
    n, nf = frames.shape[-2:]
    out = _overlap_add_array(frames, hop, n + hop * (nf - 1))
    return out, lambda g: (_frame_array(g, n, hop, nf),)


@op("stft_window")
def _window_mul(frames, w):
    """frames [..., n, F] times window w [n] along the frame axis."""
    xp = backend.get_array_module(frames)
    out = frames * w[:, None]

    def bw(g):
        gf = _cast_like(g * xp.conj(w)[:, None], frames.dtype)
        axes = tuple(i for i in range(g.ndim) if i != g.ndim - 2)
        gw = _cast_like((g * xp.conj(frames)).sum(axis=axes), w.dtype)
        return gf, gw

    return out, bw


@op("window_envelope")
def _envelope(w, n_frames, hop):
    """Overlap-added squared window, the istft normaliser: [n] -> [n + hop * (F - 1)]."""
    xp = backend.get_array_module(w)
    n = w.shape[0]
    sq = xp.broadcast_to((w * w)[:, None], (n, n_frames))
    out = _overlap_add_array(sq, hop, n + hop * (n_frames - 1))

    def bw(g):
        gsq = _frame_array(g, n, hop, n_frames).sum(axis=-1)
        return (_cast_like(gsq * xp.conj(2 * w), w.dtype),)

    return out, bw


@op("istft_normalize")
def _div_env(y, env):
    """y [..., L] divided by the envelope env [L]."""
    xp = backend.get_array_module(y)
    out = y / env

    def bw(g):
        gy = _cast_like(g / xp.conj(env), y.dtype)
        ge = -g * xp.conj(out / env)
        axes = tuple(range(g.ndim - 1))
        return gy, _cast_like(ge.sum(axis=axes) if axes else ge, env.dtype)

    return out, bw


# ---------------------------------------------------------------------------- argument checks
def _common_args(n_fft, hop_length, win_length, op):
    where = f"paddle.signal.{op}"
    n_fft = int_arg(n_fft, where, "n_fft")
    hop_length = n_fft // 4 if hop_length is None else int_arg(hop_length, where, "hop_length")
    win_length = n_fft if win_length is None else int_arg(win_length, where, "win_length")
    return n_fft, hop_length, win_length


def _precision(*dtypes):
    """The real dtype both signal and window compute in (float64 wins over float32)."""
    real = {np.dtype(np.float64), np.dtype(np.complex128)}
    return np.dtype(np.float64) if any(d in real for d in dtypes) else np.dtype(np.float32)


def _to_precision(t, real_dt):
    d = t._data.dtype
    if d.kind == "c":
        target = np.dtype(np.complex128) if real_dt == np.float64 else np.dtype(np.complex64)
        return apply(_fft._as_complex, t, dtype=target) if d != target else t
    return cast_to(t, real_dt)


def _window_arg(window, win_length, n_fft, real_dt, xp_like, op):
    """The window as a Tensor of length n_fft (centred, zero-padded), in the compute precision."""
    if window is None:
        xp = backend.get_array_module(xp_like)
        from .framework.tensor import _wrap

        w = _wrap(xp.ones(win_length, dtype=real_dt))
    else:
        w = tensor_arg(window, f"paddle.signal.{op}", "window")
        if w.ndim != 1 or w.shape[0] != win_length:
            raise _ArgError(f"paddle.signal.{op}: expected a 1D window tensor of size equal to "
                            f"win_length({win_length}), but got window with shape {w.shape}.")
        if w._data.dtype.kind not in "fc":
            w = cast_to(w, _dt.default_np())
    w = _to_precision(w, real_dt)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = apply(_pad_last, w, left=left, right=n_fft - win_length - left, mode="constant")
    return w


def _signal_input(x, op, ranks, what):
    x = tensor_arg(x, f"paddle.signal.{op}")
    if x.ndim not in ranks:
        raise _ArgError(f"x should be a {what} tensor, but got rank of x is {x.ndim}")
    d = x._data.dtype
    if d == np.bool_:
        raise TypeError(f"paddle.signal.{op}: x has dtype bool; expected a float or complex "
                        "tensor")
    if d.kind not in "fc" or d == np.float16 or d == _dt.BFLOAT16_NP:
        x = cast_to(x, _dt.default_np())
    return x


# ---------------------------------------------------------------------------- public API
def stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=True, name=None):
    """Short-time Fourier transform.

    Frames of ``n_fft`` samples, ``hop_length`` apart, are multiplied by the window and
    transformed: ``X[..., f, t] = sum_n x[t*hop + n] * window[n] * exp(-2j*pi*f*n/n_fft)``.

    Args:
        x (Tensor): Signal of shape ``[seq_length]`` or ``[N, seq_length]``, real or complex.
        n_fft (int): Frame (FFT) size; must be in (0, seq_length].
        hop_length (int, optional): Distance between frames. Default: ``n_fft // 4``.
        win_length (int, optional): Window size, in (0, n_fft]. Default: n_fft.
        window (Tensor, optional): 1-D window of length win_length, zero-padded on both sides
            to n_fft. Default: all ones.
        center (bool, optional): Pad x by ``n_fft // 2`` on both sides so that frame t is
            centred on sample ``t * hop_length``. Default: True.
        pad_mode (str, optional): "reflect" or "constant", used when centering.
        normalized (bool, optional): Scale by ``1/sqrt(n_fft)`` (the "ortho" norm).
        onesided (bool, optional): Keep the ``n_fft // 2 + 1`` non-negative frequencies (real
            input and window only). Default: True.
        name (str, optional): Unused.

    Returns:
        Tensor: Complex tensor of shape ``[N, n_fft // 2 + 1 (or n_fft), num_frames]`` (without
        N for 1-D x), ``num_frames = 1 + (padded_length - n_fft) // hop_length``.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.rand([2, 64])
        >>> paddle.signal.stft(x, n_fft=16).shape
        [2, 9, 17]
    """
    x = _signal_input(x, "stft", (1, 2), "1D or 2D real")
    n_fft, hop_length, win_length = _common_args(n_fft, hop_length, win_length, "stft")
    if hop_length <= 0:
        raise _ArgError(f"hop_length should be > 0, but got {hop_length}.")
    if not 0 < win_length <= n_fft:
        raise _ArgError(f"win_length should be in (0, n_fft({n_fft})], but got {win_length}.")
    seq_length = x.shape[-1]
    if not 0 < n_fft <= seq_length:
        raise _ArgError(f"n_fft should be in (0, seq_length({seq_length})], but got {n_fft}.")
    if center and pad_mode not in ("reflect", "constant"):
        raise _ArgError(f'pad_mode should be "reflect" or "constant", but got "{pad_mode}".')

    w_dtype = None if window is None else tensor_arg(
        window, "paddle.signal.stft", "window")._data.dtype
    real_dt = _precision(x._data.dtype, *(() if w_dtype is None else (w_dtype,)))
    w = _window_arg(window, win_length, n_fft, real_dt, x._data, "stft")
    is_complex = x._data.dtype.kind == "c" or w._data.dtype.kind == "c"
    if onesided and is_complex:
        raise _ArgError("onesided should be False when input or window is a complex Tensor.")

    x = _to_precision(x, real_dt)
    single = x.ndim == 1
    if single:
        x = x.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = apply(_pad_last, x, left=pad, right=pad, mode=pad_mode)
    frames = apply(_frame, x, n=n_fft, hop=hop_length)
    frames = apply(_window_mul, frames, w)
    norm = "ortho" if normalized else "backward"
    if onesided:
        out = _fft.rfft(frames, n=n_fft, axis=-2, norm=norm)
    else:
        out = _fft.fft(frames, n=n_fft, axis=-2, norm=norm)
    return out.squeeze(0) if single else out


def istft(x, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=True, length=None, return_complex=False, name=None):
    """Inverse short-time Fourier transform (least-squares overlap-add).

    Each frame is inverse-transformed, multiplied by the window and overlap-added; the sum is
    divided by the overlap-added squared window, which must not vanish (the NOLA condition).

    Args:
        x (Tensor): STFT of shape ``[N, freq, num_frames]`` or ``[freq, num_frames]``
            (complex); freq is ``n_fft // 2 + 1`` when onesided, else n_fft.
        n_fft (int): Frame (FFT) size.
        hop_length (int, optional): Distance between frames, in (0, win_length]. Default:
            ``n_fft // 4``.
        win_length (int, optional): Window size, in (0, n_fft]. Default: n_fft.
        window (Tensor, optional): 1-D window of length win_length. Default: all ones.
        center (bool, optional): Whether stft padded the signal (its padding is removed).
        normalized (bool, optional): Whether stft used the "ortho" scaling.
        onesided (bool, optional): Whether x holds only the non-negative frequencies.
        length (int, optional): Trim the output to this many samples (at most what the frames
            cover). Default: everything the frames cover, minus the centre padding.
        return_complex (bool, optional): Return a complex signal (needs onesided=False).
        name (str, optional): Unused.

    Returns:
        Tensor: Signal of shape ``[N, seq_length]`` or ``[seq_length]``; real unless
        return_complex.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.rand([2, 64])
        >>> y = paddle.signal.istft(paddle.signal.stft(x, 16), 16)
        >>> y.shape
        [2, 64]
    """
    x = _signal_input(x, "istft", (2, 3), "2D or 3D complex")
    n_fft, hop_length, win_length = _common_args(n_fft, hop_length, win_length, "istft")
    if not 0 < win_length <= n_fft:
        raise _ArgError(f"win_length should be in (0, n_fft({n_fft})], but got {win_length}.")
    if not 0 < hop_length <= win_length:
        raise _ArgError(f"hop_length should be in (0, win_length({win_length})], but got "
                        f"{hop_length}.")
    n_bins = x.shape[-2]
    if onesided and n_bins != n_fft // 2 + 1:
        raise _ArgError(f"fft_size should be equal to n_fft // 2 + 1({n_fft // 2 + 1}) when "
                        f"onesided is True, but got {n_bins}.")
    if not onesided and n_bins != n_fft:
        raise _ArgError(f"fft_size should be equal to n_fft({n_fft}) when onesided is False, "
                        f"but got {n_bins}.")
    if length is not None:
        length = int_arg(length, "paddle.signal.istft", "length")

    w_dtype = None if window is None else tensor_arg(
        window, "paddle.signal.istft", "window")._data.dtype
    real_dt = _precision(x._data.dtype, *(() if w_dtype is None else (w_dtype,)))
    w = _window_arg(window, win_length, n_fft, real_dt, x._data, "istft")
    if onesided and (return_complex or w._data.dtype.kind == "c"):
        raise _ArgError("onesided should be False when input(output of istft) or window is a "
                        "complex Tensor.")
    if not return_complex and w._data.dtype.kind == "c":
        raise _ArgError("Data type of window should not be complex when return_complex is "
                        "False.")

    if x._data.dtype.kind != "c":
        # the inverse FFT runs in x's own precision; the window product promotes (as Paddle)
        x = apply(_fft._as_complex, x, dtype=_fft._COMPLEX_OF[x._data.dtype])
    single = x.ndim == 2
    if single:
        x = x.unsqueeze(0)
    n_frames = x.shape[-1]
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = _fft.ifft(x, n=n_fft, axis=-2, norm=norm)
    else:
        # a real output reads only the non-negative half of a two-sided spectrum, as Paddle
        half = x if onesided else x[:, :n_fft // 2 + 1]
        frames = _fft.irfft(half, n=n_fft, axis=-2, norm=norm)
    frames = apply(_window_mul, frames, w)
    y = apply(_overlap_add, frames, hop=hop_length)
    env = apply(_envelope, w, n_frames=n_frames, hop=hop_length)

    total = y.shape[-1]
    start = n_fft // 2 if center else 0
    if length is not None:
        end = min(start + length, total)
    else:
        end = total - n_fft // 2 if center else total
    y = y[:, start:end]
    env = env[start:end]
    env_abs = backend.to_numpy(backend.get_array_module(env._data).abs(env._data))
    if env_abs.size and env_abs.min() < 1e-11:
        raise ValueError(
            "Abort istft because Nonzero Overlap Add (NOLA) condition failed. For more "
            "information about NOLA constraint please see `scipy.signal.check_NOLA`"
            "(https://docs.scipy.org/doc/scipy/reference/generated/scipy.signal.check_NOLA.html)"
            ".")
    y = apply(_div_env, y, env)
    return y.squeeze(0) if single else y


def frame(x, frame_length, hop_length, axis=-1, name=None):
    """Slice a signal into overlapping frames along its first or last axis.

    Args:
        x (Tensor): the signal; framed along ``axis``.
        frame_length (int): samples per frame (at most the signal's length).
        hop_length (int): samples between the starts of two frames (positive).
        axis (int): -1: ``[..., L]`` -> ``[..., frame_length, num_frames]``; 0:
            ``[L, ...]`` -> ``[num_frames, frame_length, ...]``.
        name (str, optional): unused, as in Paddle.

    Returns:
        Tensor: the frames, ``num_frames = 1 + (L - frame_length) // hop_length``;
        differentiable (the gradient adds the overlaps back).

    Example:
        >>> paddle.signal.frame(paddle.arange(8, dtype="float32"), 4, 2).shape
        [4, 3]
    """
    x = tensor_arg(x, "frame", "x")
    if axis not in (0, -1):
        raise ValueError(f"frame: unexpected axis {axis}; it should be 0 or -1")
    frame_length = int_arg(frame_length, "frame", "frame_length")
    hop_length = int_arg(hop_length, "frame", "hop_length")
    if hop_length <= 0:
        raise ValueError(f"frame: hop_length must be a positive integer, got {hop_length}")
    if x.ndim == 0:
        raise ValueError("frame: x must have at least 1 dimension, got a 0-D tensor")
    length = x.shape[axis]
    if not 0 < frame_length <= length:
        raise ValueError(f"frame: frame_length must be in [1, {length}] (the length of axis "
                         f"{axis} of x, shape {x.shape}), got {frame_length}")
    if axis == -1:
        return apply(_frame, x, n=frame_length, hop=hop_length)
    nd = x.ndim
    moved = x.transpose(list(range(1, nd)) + [0])  # [..., L]
    framed = apply(_frame, moved, n=frame_length, hop=hop_length)  # [..., n, F]
    return framed.transpose([nd, nd - 1] + list(range(nd - 1)))  # [F, n, ...]
