"""Mel scale, filter banks, decibels and the DCT (``paddle.audio.functional``).

The filter bank, DCT and frequency grids are small constant tables: they are computed in float64
with NumPy and cast to the requested dtype. ``hz_to_mel``/``mel_to_hz`` on a Tensor and
``power_to_db`` are built from Tensor ops, so they run on the tensor's device and are
differentiable.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import paddle_hl as paddle

__all__ = []  # implementation module: the package exports the names


class _ArgError(ValueError, AssertionError):
    """A bad argument (Paddle asserts here; this is also a ValueError)."""


# Slaney's mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above it
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = math.log(6.4) / 27.0


def _is_tensor(x) -> bool:
    return isinstance(x, paddle.Tensor)


def _check_scalar_or_tensor(x, fn, arg):
    if _is_tensor(x):
        if x.dtype not in (paddle.float16, paddle.bfloat16, paddle.float32, paddle.float64):
            raise TypeError(f"{fn}: {arg} must be a float Tensor, got dtype {x.dtype}")
        return
    if not isinstance(x, numbers.Real) or isinstance(x, bool):
        raise TypeError(f"{fn}: {arg} must be a float or a float Tensor, got "
                        f"{type(x).__name__}")


def hz_to_mel(freq, htk: bool = False):
    """Convert frequencies in Hz to the mel scale.

    Args:
        freq (Tensor | float): Frequencies in Hz.
        htk (bool, optional): Use the HTK formula ``2595 * log10(1 + f / 700)``; otherwise
            Slaney's (linear below 1 kHz, logarithmic above). Default: False.

    Returns:
        Tensor | float: Mels, a Tensor of freq's dtype for a Tensor, else a Python float.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.functional.hz_to_mel(440.0)
        6.6
    """
    _check_scalar_or_tensor(freq, "hz_to_mel", "freq")
    if htk:
        if _is_tensor(freq):
            return 2595.0 * paddle.log10(1.0 + freq / 700.0)
        return 2595.0 * math.log10(1.0 + float(freq) / 700.0)
    if _is_tensor(freq):
        linear = freq / _F_SP
        # clip inside the log so that the unused branch never sees log(0) (NaN gradients)
        logpart = _MIN_LOG_MEL + paddle.log(paddle.clip(freq, min=_MIN_LOG_HZ) / _MIN_LOG_HZ) \
            / _LOGSTEP
        return paddle.where(freq >= _MIN_LOG_HZ, logpart, linear)
    f = float(freq)
    if f >= _MIN_LOG_HZ:
        return _MIN_LOG_MEL + math.log(f / _MIN_LOG_HZ) / _LOGSTEP
    return f / _F_SP


def mel_to_hz(mel, htk: bool = False):
    """Convert mels to frequencies in Hz (inverse of :func:`hz_to_mel`).

    Args:
        mel (Tensor | float): Mels.
        htk (bool, optional): Use the HTK formula; otherwise Slaney's. Default: False.

    Returns:
        Tensor | float: Frequencies in Hz, a Tensor of mel's dtype for a Tensor, else a float.

    Examples:
        >>> import paddle_hl as paddle
        >>> round(paddle.audio.functional.mel_to_hz(6.6), 6)
        440.0
    """
    _check_scalar_or_tensor(mel, "mel_to_hz", "mel")
    if htk:
        if _is_tensor(mel):
            return 700.0 * (paddle.pow(paddle.full([], 10.0, mel.dtype), mel / 2595.0) - 1.0)
        return 700.0 * (10.0 ** (float(mel) / 2595.0) - 1.0)
    if _is_tensor(mel):
        linear = _F_SP * mel
        logpart = _MIN_LOG_HZ * paddle.exp(_LOGSTEP * (paddle.clip(mel, min=_MIN_LOG_MEL)
                                                       - _MIN_LOG_MEL))
        return paddle.where(mel >= _MIN_LOG_MEL, logpart, linear)
    m = float(mel)
    if m >= _MIN_LOG_MEL:
        return _MIN_LOG_HZ * math.exp(_LOGSTEP * (m - _MIN_LOG_MEL))
    return _F_SP * m


def _hz_to_mel_np(f, htk):
    f = np.asarray(f, dtype=np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    return np.where(f >= _MIN_LOG_HZ,
                    _MIN_LOG_MEL + np.log(np.maximum(f, _MIN_LOG_HZ) / _MIN_LOG_HZ) / _LOGSTEP,
                    f / _F_SP)


def _mel_to_hz_np(m, htk):
    m = np.asarray(m, dtype=np.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return np.where(m >= _MIN_LOG_MEL,
                    _MIN_LOG_HZ * np.exp(_LOGSTEP * (np.maximum(m, _MIN_LOG_MEL) - _MIN_LOG_MEL)),
                    _F_SP * m)


def _int_arg(v, fn, arg, minimum=1):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"{fn}: {arg} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise _ArgError(f"{fn}: {arg} must be >= {minimum}, got {v}")
    return int(v)


def _mel_frequencies_np(n_mels, f_min, f_max, htk):
    mels = np.linspace(_hz_to_mel_np(f_min, htk), _hz_to_mel_np(f_max, htk), n_mels)
    return _mel_to_hz_np(mels, htk)


def mel_frequencies(n_mels: int = 64, f_min: float = 0.0, f_max: float = 11025.0,
                    htk: bool = False, dtype: str = "float32") -> paddle.Tensor:
    """Centre frequencies of ``n_mels`` bands evenly spaced on the mel scale.

    Args:
        n_mels (int, optional): Number of frequencies. Default: 64.
        f_min (float, optional): Lowest frequency in Hz. Default: 0.0.
        f_max (float, optional): Highest frequency in Hz. Default: 11025.0.
        htk (bool, optional): Use the HTK mel formula. Default: False.
        dtype (str, optional): Data type of the result. Default: 'float32'.

    Returns:
        Tensor: Frequencies in Hz, shape ``[n_mels]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.functional.mel_frequencies(5, 0.0, 8000.0).shape
        [5]
    """
    n_mels = _int_arg(n_mels, "mel_frequencies", "n_mels", 0)
    return paddle.to_tensor(_mel_frequencies_np(n_mels, f_min, f_max, htk), dtype=dtype)


def fft_frequencies(sr: int, n_fft: int, dtype: str = "float32") -> paddle.Tensor:
    """Frequencies of the ``n_fft // 2 + 1`` bins of a one-sided FFT.

    Args:
        sr (int): Sample rate in Hz.
        n_fft (int): FFT size.
        dtype (str, optional): Data type of the result. Default: 'float32'.

    Returns:
        Tensor: ``linspace(0, sr / 2, n_fft // 2 + 1)``.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.functional.fft_frequencies(16000, 8).numpy().tolist()
        [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
    """
    n_fft = _int_arg(n_fft, "fft_frequencies", "n_fft")
    return paddle.to_tensor(np.linspace(0, float(sr) / 2, 1 + n_fft // 2), dtype=dtype)


def _fbank_np(sr, n_fft, n_mels, f_min, f_max, htk, norm, fn="compute_fbank_matrix"):
    """The [n_mels, n_fft // 2 + 1] float64 mel filter bank and the indices of empty filters."""
    n_fft = _int_arg(n_fft, fn, "n_fft")
    n_mels = _int_arg(n_mels, fn, "n_mels")
    if not isinstance(sr, numbers.Real) or sr <= 0:
        raise _ArgError(f"{fn}: sr must be a positive number, got {sr!r}")
    if f_max is None:
        f_max = float(sr) / 2
    if not 0 <= f_min < f_max:
        raise _ArgError(f"{fn}: expected 0 <= f_min < f_max, got f_min={f_min}, f_max={f_max}")
    fftfreqs = np.linspace(0, float(sr) / 2, 1 + n_fft // 2)
    mel_f = _mel_frequencies_np(n_mels + 2, f_min, f_max, htk)
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fftfreqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    if norm == "slaney":
        weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    elif norm is not None:
        if isinstance(norm, str) or not isinstance(norm, numbers.Real):
            raise _ArgError(f"{fn}: norm must be 'slaney', a number (the p of a p-norm) or "
                            f"None, got {norm!r}")
        if norm == np.inf:
            size = np.abs(weights).max(axis=-1, keepdims=True)
        else:
            size = (np.abs(weights) ** norm).sum(axis=-1, keepdims=True) ** (1.0 / norm)
        with np.errstate(divide="ignore", invalid="ignore"):
            weights = weights / size
    empty = np.flatnonzero(np.abs(weights).max(axis=-1) == 0) if weights.size else []
    return weights, empty


def compute_fbank_matrix(sr: int, n_fft: int, n_mels: int = 64, f_min: float = 0.0,
                         f_max: float | None = None, htk: bool = False, norm="slaney",
                         dtype: str = "float32") -> paddle.Tensor:
    """Mel filter bank: triangular filters that map FFT bins to mel bands.

    Args:
        sr (int): Sample rate in Hz.
        n_fft (int): FFT size.
        n_mels (int, optional): Number of mel bands. Default: 64.
        f_min (float, optional): Lowest frequency in Hz. Default: 0.0.
        f_max (float, optional): Highest frequency in Hz; None means ``sr / 2``. Default: None.
        htk (bool, optional): Use the HTK mel formula. Default: False.
        norm (str | float, optional): 'slaney' divides each triangle by its width (constant
            energy per band); a number p divides each filter by its p-norm; None leaves the
            triangles with peak 1. Default: 'slaney'.
        dtype (str, optional): Data type of the result. Default: 'float32'.

    Returns:
        Tensor: Shape ``[n_mels, n_fft // 2 + 1]``.

    Warns:
        UserWarning: Some filters contain no FFT bin (n_mels too large for n_fft); they are 0.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.functional.compute_fbank_matrix(16000, 512, n_mels=40).shape
        [40, 257]
    """
    weights, empty = _fbank_np(sr, n_fft, n_mels, f_min, f_max, htk, norm)
    if len(empty):
        warnings.warn(f"compute_fbank_matrix: {len(empty)} of the {n_mels} mel filters contain "
                      f"no FFT bin (n_mels={n_mels} is too large for n_fft={n_fft} at "
                      f"sr={sr}); they are all zero", UserWarning, stacklevel=2)
    return paddle.to_tensor(weights, dtype=dtype)


def power_to_db(spect: paddle.Tensor, ref_value: float = 1.0, amin: float = 1e-10,
                top_db: float | None = 80.0) -> paddle.Tensor:
    """Convert a power spectrogram to decibels: ``10 * log10(max(spect, amin) / ref_value)``.

    Args:
        spect (Tensor): Power spectrogram (non-negative), any shape.
        ref_value (float, optional): Reference power mapped to 0 dB. Default: 1.0.
        amin (float, optional): Floor applied before the log. Default: 1e-10.
        top_db (float, optional): Clip everything below ``max - top_db`` (the maximum over the
            whole tensor); None disables the clipping. Default: 80.0.

    Returns:
        Tensor: Decibels, same shape and dtype as spect.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.to_tensor([1.0, 10.0, 100.0], dtype='float64')
        >>> paddle.audio.functional.power_to_db(x).numpy().tolist()
        [0.0, 10.0, 20.0]
    """
    if not _is_tensor(spect):
        raise TypeError(f"power_to_db: spect must be a Tensor, got {type(spect).__name__}")
    if amin <= 0:
        raise _ArgError(f"power_to_db: amin must be strictly positive, got {amin}")
    if ref_value <= 0:
        raise _ArgError(f"power_to_db: ref_value must be strictly positive, got {ref_value}")
    if top_db is not None and top_db < 0:
        raise _ArgError(f"power_to_db: top_db must be non-negative, got {top_db}")
    log_spec = 10.0 * paddle.log10(paddle.clip(spect, min=amin))
    log_spec = log_spec - 10.0 * math.log10(max(amin, ref_value))
    if top_db is not None:
        log_spec = paddle.maximum(log_spec, log_spec.max() - top_db)
    return log_spec


def create_dct(n_mfcc: int, n_mels: int, norm: str | None = "ortho",
               dtype: str = "float32") -> paddle.Tensor:
    """DCT-II matrix that turns ``n_mels`` log-mel bands into ``n_mfcc`` cepstral coefficients.

    Args:
        n_mfcc (int): Number of coefficients kept.
        n_mels (int): Number of mel bands.
        norm (str, optional): 'ortho' for the orthonormal DCT (orthonormal columns), None for
            the unscaled DCT-II (times 2). Default: 'ortho'.
        dtype (str, optional): Data type of the result. Default: 'float32'.

    Returns:
        Tensor: Shape ``[n_mels, n_mfcc]``; ``mfcc = dct.T @ log_mel``.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.functional.create_dct(13, 40).shape
        [40, 13]
    """
    n_mfcc = _int_arg(n_mfcc, "create_dct", "n_mfcc")
    n_mels = _int_arg(n_mels, "create_dct", "n_mels")
    if norm not in ("ortho", None):
        raise _ArgError(f"create_dct: norm must be 'ortho' or None, got {norm!r}")
    n = np.arange(n_mels, dtype=np.float64)
    k = np.arange(n_mfcc, dtype=np.float64)
    dct = np.cos(np.pi / n_mels * (n + 0.5)[:, None] * k[None, :])
    if norm is None:
        dct *= 2.0
    else:
        dct[:, 0] *= 1.0 / math.sqrt(2.0)
        dct *= math.sqrt(2.0 / n_mels)
    return paddle.to_tensor(dct, dtype=dtype)
