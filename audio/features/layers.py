"""Spectral features as layers (``paddle.audio.features``).

Each layer is a chain of differentiable tensor ops, so the features run on the waveform's device
(NumPy or CuPy), in float32 or float64, and a loss on them back-propagates to the waveform. The
power spectrum comes from :func:`paddle_hl.signal.stft`, except for CPU tensors, where a fused
kernel (``_spectrum.py``) computes the same values and gradients several times faster. The
window, mel filter bank and DCT matrix are persistable buffers with Paddle's state_dict names.
"""

from __future__ import annotations

import numbers

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.framework.tensor import set_html_view

from .._display import display
from ..functional import create_dct, get_window, power_to_db
from ..functional.functional import _fbank_np
from ._spectrum import power_spectrum_frames

__all__ = []  # implementation module: the package exports the names


#: Use the fused CPU power spectrum (``_spectrum.py``); False takes the general
#: ``paddle.signal.stft`` path everywhere (the tests compare the two).
_FUSED_CPU = True


class _ArgError(ValueError, AssertionError):
    """A bad argument (Paddle asserts here; this is also a ValueError)."""


def _check_int(v, layer, arg, allow_none=False):
    if v is None and allow_none:
        return None
    if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v <= 0:
        raise _ArgError(f"{layer}: {arg} must be a positive int, got {v!r}")
    return int(v)


def _check_input(x, layer, n_fft):
    if not isinstance(x, paddle.Tensor):
        raise TypeError(f"{layer}: x must be a Tensor of shape [N, T] or [T], got "
                        f"{type(x).__name__}")
    if x.ndim not in (1, 2):
        raise _ArgError(f"{layer}: x must be a waveform of shape [N, T] (a batch) or [T], but "
                        f"got shape {x.shape} (rank {x.ndim})")
    if x.dtype not in (paddle.float32, paddle.float64):
        raise TypeError(f"{layer}: x must be float32 or float64, got {x.dtype}")
    # as paddle.signal.stft (and Paddle): at least one full frame of the unpadded signal
    if x.shape[-1] < n_fft:
        raise _ArgError(f"{layer}: x has {x.shape[-1]} samples, fewer than n_fft = {n_fft}; "
                        "use a smaller n_fft or a longer signal")


def _show_as_image(layer, inputs, output):
    """A feature shows in Jupyter as an image (the first item of a batch), with its shape."""
    title = f"{type(layer).__name__} {list(output.shape)}"
    set_html_view(output, lambda t: display(t[0] if t.ndim == 3 else t, title=title)._repr_html_())


class Spectrogram(nn.Layer):
    """Magnitude spectrogram ``|STFT(x)| ** power``.

    Args:
        n_fft (int, optional): FFT size. Default: 512.
        hop_length (int, optional): Samples between frames; None means ``n_fft // 4``.
            Default: 512.
        win_length (int, optional): Window length (<= n_fft, zero-padded to n_fft); None means
            n_fft. Default: None.
        window (str | tuple, optional): Window for :func:`get_window`. Default: 'hann'.
        power (float, optional): Exponent of the magnitude (1 energy, 2 power). Default: 1.0.
        center (bool, optional): Pad ``n_fft // 2`` on both sides so frame t is centred on
            sample ``t * hop_length``. Default: True.
        pad_mode (str, optional): 'reflect' or 'constant' padding when centering.
            Default: 'reflect'.
        dtype (str, optional): Data type of the window (and so of the output). Default:
            'float32'.

    Shape:
        x: ``[N, T]`` or ``[T]``; output ``[N, n_fft // 2 + 1, frames]`` (or without N),
        ``frames = 1 + T // hop_length`` when centred.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.randn([2, 16000])
        >>> paddle.audio.features.Spectrogram(n_fft=512)(x).shape
        [2, 257, 32]
    """

    def __init__(self, n_fft: int = 512, hop_length: int | None = 512,
                 win_length: int | None = None, window: str = "hann", power: float = 1.0,
                 center: bool = True, pad_mode: str = "reflect",
                 dtype: str = "float32") -> None:
        super().__init__()
        self.register_forward_post_hook(_show_as_image)
        name = type(self).__name__
        self.n_fft = _check_int(n_fft, name, "n_fft")
        self.hop_length = _check_int(hop_length, name, "hop_length", True) or self.n_fft // 4
        self.win_length = _check_int(win_length, name, "win_length", True) or self.n_fft
        if self.win_length > self.n_fft:
            raise _ArgError(f"{name}: win_length ({self.win_length}) must be <= n_fft "
                            f"({self.n_fft})")
        if not isinstance(power, numbers.Real) or power <= 0:
            raise _ArgError(f"{name}: power must be a positive number, got {power!r}")
        if pad_mode not in ("reflect", "constant"):
            raise _ArgError(f"{name}: pad_mode must be 'reflect' or 'constant', got "
                            f"{pad_mode!r}")
        self.power = float(power)
        self.center = bool(center)
        self.pad_mode = pad_mode
        self.register_buffer("fft_window", get_window(window, self.win_length, fftbins=True,
                                                      dtype=dtype))

    def _power_spectrum(self, x):
        """|STFT(x)|^2 of the batch x [N, T]; returns (tensor, frames_major).

        On CPU the fused kernel gives [N, frames, bins] (frames_major=True); elsewhere
        ``paddle.signal.stft`` gives [N, bins, frames].
        """
        window = self.fft_window
        if _FUSED_CPU and x.place.is_cpu_place() and window.place.is_cpu_place():
            if x.dtype != window.dtype:  # float32 with float64 computes in float64
                x = x.astype("float64")
                window = window.astype("float64")
            if self.win_length < self.n_fft:
                left = (self.n_fft - self.win_length) // 2
                window = paddle.nn.functional.pad(
                    window, [left, self.n_fft - self.win_length - left], data_format="NCL")
            return power_spectrum_frames(x, window, self.n_fft, self.hop_length, self.center,
                                         self.pad_mode), True
        stft = paddle.signal.stft(x, n_fft=self.n_fft, hop_length=self.hop_length,
                                  win_length=self.win_length, window=window,
                                  center=self.center, pad_mode=self.pad_mode)
        # |X|^2 from the real and imaginary parts: smooth everywhere (|X| has no gradient
        # at 0), and other powers are (|X|^2)^(p/2)
        re, im = paddle.real(stft), paddle.imag(stft)
        return re * re + im * im, False

    def _magnitude(self, power_spec):
        if self.power == 2.0:
            return power_spec
        if self.power == 1.0:
            return paddle.sqrt(power_spec)
        return paddle.pow(power_spec, self.power / 2.0)

    def _spectrum(self, x):
        """|STFT(x)|^power of the batch x [N, T]; returns (tensor, frames_major)."""
        power_spec, frames_major = self._power_spectrum(x)
        return self._magnitude(power_spec), frames_major

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        _check_input(x, type(self).__name__, self.n_fft)
        single = x.ndim == 1
        spec, frames_major = self._spectrum(x.unsqueeze(0) if single else x)
        if frames_major:
            spec = spec.transpose([0, 2, 1])
        return spec.squeeze(0) if single else spec


def _fbank_buffer(layer, sr, n_fft, n_mels, f_min, f_max, htk, norm, dtype):
    weights, empty = _fbank_np(sr, n_fft, n_mels, f_min, f_max, htk, norm, fn=layer)
    if len(empty):
        raise _ArgError(f"{layer}: n_mels={n_mels} is too large for n_fft={n_fft} at sr={sr} "
                        f"(f_min={f_min}, f_max={f_max}): {len(empty)} mel filters contain no "
                        f"FFT bin (e.g. filter {int(empty[0])}); lower n_mels or raise n_fft")
    return paddle.to_tensor(weights, dtype=dtype)


class MelSpectrogram(nn.Layer):
    """Mel spectrogram: the mel filter bank applied to a power spectrogram.

    Args:
        sr (int, optional): Sample rate in Hz. Default: 22050.
        n_fft (int, optional): FFT size. Default: 2048.
        hop_length (int, optional): Samples between frames; None means ``n_fft // 4``.
            Default: 512.
        win_length (int, optional): Window length; None means n_fft. Default: None.
        window (str | tuple, optional): Window type. Default: 'hann'.
        power (float, optional): Exponent of the magnitude. Default: 2.0.
        center (bool, optional): Centre the frames. Default: True.
        pad_mode (str, optional): Padding when centering. Default: 'reflect'.
        n_mels (int, optional): Number of mel bands. Default: 64.
        f_min (float, optional): Lowest frequency in Hz. Default: 50.0.
        f_max (float, optional): Highest frequency; None means ``sr / 2``. Default: None.
        htk (bool, optional): HTK mel formula. Default: False.
        norm (str | float, optional): Filter normalisation, see
            :func:`~paddle_hl.audio.functional.compute_fbank_matrix`. Default: 'slaney'.
        dtype (str, optional): Data type of the buffers. Default: 'float32'.

    Raises:
        ValueError: n_mels is too large for n_fft (some mel filter would hold no FFT bin).

    Shape:
        x: ``[N, T]`` or ``[T]``; output ``[N, n_mels, frames]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.randn([2, 16000])
        >>> paddle.audio.features.MelSpectrogram(sr=16000)(x).shape
        [2, 64, 32]
    """

    def __init__(self, sr: int = 22050, n_fft: int = 2048, hop_length: int | None = 512,
                 win_length: int | None = None, window: str = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64,
                 f_min: float = 50.0, f_max: float | None = None, htk: bool = False,
                 norm="slaney", dtype: str = "float32") -> None:
        super().__init__()
        self.register_forward_post_hook(_show_as_image)
        self._spectrogram = Spectrogram(n_fft=n_fft, hop_length=hop_length,
                                        win_length=win_length, window=window, power=power,
                                        center=center, pad_mode=pad_mode, dtype=dtype)
        self.n_mels = n_mels
        self.f_min = f_min
        self.f_max = f_max
        self.htk = htk
        self.norm = norm
        self.sr = sr
        self.register_buffer("fbank_matrix", _fbank_buffer(
            type(self).__name__, sr, n_fft, n_mels, f_min, f_max, htk, norm, dtype))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        _check_input(x, type(self).__name__, self._spectrogram.n_fft)
        single = x.ndim == 1
        spec, frames_major = self._spectrogram._spectrum(x.unsqueeze(0) if single else x)
        fbank = self.fbank_matrix
        if fbank.dtype != spec.dtype:
            fbank = fbank.astype(spec.dtype)
        if frames_major:
            # [N, F, bins] @ [bins, n_mels]: one large product, then [N, n_mels, F]
            mel = paddle.matmul(spec, fbank, transpose_y=True).transpose([0, 2, 1])
        else:
            mel = paddle.matmul(fbank, spec)
        return mel.squeeze(0) if single else mel


class LogMelSpectrogram(nn.Layer):
    """Log-mel spectrogram in decibels: ``power_to_db(MelSpectrogram(x))``.

    Args:
        sr, n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels, f_min,
            f_max, htk, norm: As in :class:`MelSpectrogram` (here n_fft defaults to 512 and
            hop_length to None, i.e. ``n_fft // 4``).
        ref_value (float, optional): Reference power for 0 dB. Default: 1.0.
        amin (float, optional): Floor before the log. Default: 1e-10.
        top_db (float, optional): Dynamic range kept below the maximum; None keeps all.
            Default: None.
        dtype (str, optional): Data type of the buffers. Default: 'float32'.

    Shape:
        x: ``[N, T]`` or ``[T]``; output ``[N, n_mels, frames]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.randn([2, 16000])
        >>> paddle.audio.features.LogMelSpectrogram(sr=16000)(x).shape
        [2, 64, 126]
    """

    def __init__(self, sr: int = 22050, n_fft: int = 512, hop_length: int | None = None,
                 win_length: int | None = None, window: str = "hann", power: float = 2.0,
                 center: bool = True, pad_mode: str = "reflect", n_mels: int = 64,
                 f_min: float = 50.0, f_max: float | None = None, htk: bool = False,
                 norm="slaney", ref_value: float = 1.0, amin: float = 1e-10,
                 top_db: float | None = None, dtype: str = "float32") -> None:
        super().__init__()
        self.register_forward_post_hook(_show_as_image)
        self._melspectrogram = MelSpectrogram(
            sr=sr, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
            power=power, center=center, pad_mode=pad_mode, n_mels=n_mels, f_min=f_min,
            f_max=f_max, htk=htk, norm=norm, dtype=dtype)
        name = type(self).__name__
        if amin <= 0:
            raise _ArgError(f"{name}: amin must be strictly positive, got {amin}")
        if ref_value <= 0:
            raise _ArgError(f"{name}: ref_value must be strictly positive, got {ref_value}")
        if top_db is not None and top_db < 0:
            raise _ArgError(f"{name}: top_db must be non-negative, got {top_db}")
        self.ref_value = ref_value
        self.amin = amin
        self.top_db = top_db

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        _check_input(x, type(self).__name__, self._melspectrogram._spectrogram.n_fft)
        mel = self._melspectrogram(x)
        return power_to_db(mel, ref_value=self.ref_value, amin=self.amin, top_db=self.top_db)


class MFCC(nn.Layer):
    """Mel-frequency cepstral coefficients: the orthonormal DCT of the log-mel spectrogram.

    Args:
        sr (int, optional): Sample rate in Hz. Default: 22050.
        n_mfcc (int, optional): Number of coefficients (<= n_mels). Default: 40.
        n_fft, hop_length, win_length, window, power, center, pad_mode, n_mels, f_min, f_max,
            htk, norm, ref_value, amin, top_db: As in :class:`LogMelSpectrogram`.
        dtype (str, optional): Data type of the buffers. Default: 'float32'.

    Shape:
        x: ``[N, T]`` or ``[T]``; output ``[N, n_mfcc, frames]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.randn([2, 16000])
        >>> paddle.audio.features.MFCC(sr=16000, n_mfcc=20)(x).shape
        [2, 20, 126]
    """

    def __init__(self, sr: int = 22050, n_mfcc: int = 40, n_fft: int = 512,
                 hop_length: int | None = None, win_length: int | None = None,
                 window: str = "hann", power: float = 2.0, center: bool = True,
                 pad_mode: str = "reflect", n_mels: int = 64, f_min: float = 50.0,
                 f_max: float | None = None, htk: bool = False, norm="slaney",
                 ref_value: float = 1.0, amin: float = 1e-10, top_db: float | None = None,
                 dtype: str = "float32") -> None:
        super().__init__()
        self.register_forward_post_hook(_show_as_image)
        _check_int(n_mfcc, "MFCC", "n_mfcc")
        if n_mfcc > n_mels:
            raise _ArgError(f"MFCC: n_mfcc cannot be larger than n_mels: {n_mfcc} vs {n_mels}")
        self._log_melspectrogram = LogMelSpectrogram(
            sr=sr, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
            power=power, center=center, pad_mode=pad_mode, n_mels=n_mels, f_min=f_min,
            f_max=f_max, htk=htk, norm=norm, ref_value=ref_value, amin=amin, top_db=top_db,
            dtype=dtype)
        self.register_buffer("dct_matrix", create_dct(n_mfcc=n_mfcc, n_mels=n_mels,
                                                      dtype=dtype))

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        _check_input(x, type(self).__name__,
                     self._log_melspectrogram._melspectrogram._spectrogram.n_fft)
        log_mel = self._log_melspectrogram(x)  # [N, n_mels, T]
        dct = self.dct_matrix
        if dct.dtype != log_mel.dtype:
            dct = dct.astype(log_mel.dtype)
        # [n_mfcc, n_mels] @ [N, n_mels, T] -> [N, n_mfcc, T]
        return paddle.matmul(dct, log_mel, transpose_x=True)
