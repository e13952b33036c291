"""Notebook display of audio: an HTML5 player plus a spectrogram image.

:func:`display` wraps a waveform or a feature tensor in an object whose ``_repr_html_`` Jupyter
renders; dataset items (:class:`AudioSample`) render the same way. The player embeds a 16-bit
WAV written with Python's ``wave`` module and the image is a PNG drawn with matplotlib (imported
lazily; without it only the player and a text summary are shown). Both are plain HTML, so they
stay in a saved notebook.
"""

from __future__ import annotations

import base64
import html
import io
import wave

import numpy as np

import paddle_hl as paddle

__all__ = []  # implementation module: the package exports the names


def _as_array(x) -> np.ndarray:
    if isinstance(x, paddle.Tensor):
        return x.detach().numpy() if not x.stop_gradient else x.numpy()
    return np.asarray(x)


def _wav_base64(wav: np.ndarray, sr: int) -> str:
    """[C, T] float samples -> base64 of a 16-bit PCM WAV file."""
    peak = float(np.abs(wav).max()) if wav.size else 0.0
    scale = 1.0 / peak if peak > 1.0 else 1.0  # a player would clip louder samples
    pcm = np.clip(np.round(wav.T * scale * 32767.0), -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as f:
        f.setnchannels(pcm.shape[1])
        f.setsampwidth(2)
        f.setframerate(int(sr))
        f.writeframes(pcm.tobytes())
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _log_spectrogram(mono: np.ndarray, sr: int) -> np.ndarray:
    """A log-power spectrogram [freq, frames] of a 1-D signal, for display only."""
    n_fft = 512 if sr >= 16000 else 256
    hop = n_fft // 4
    if mono.shape[0] < n_fft:
        mono = np.pad(mono, (0, n_fft - mono.shape[0]))
    frames = np.lib.stride_tricks.sliding_window_view(mono, n_fft)[::hop]
    spec = np.abs(np.fft.rfft(frames * np.hanning(n_fft), axis=-1)) ** 2
    db = 10 * np.log10(np.maximum(spec, 1e-10))
    return np.maximum(db, db.max() - 80.0).T


def _png_base64(image: np.ndarray, title: str, extent=None, ylabel="", xlabel="") -> str | None:
    try:
        # a bare Figure renders to PNG without pyplot, so the user's backend is left alone
        from matplotlib.figure import Figure
    except ImportError:
        return None
    fig = Figure(figsize=(6, 2.4), dpi=80)
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(image, origin="lower", aspect="auto", cmap="magma", extent=extent)
    fig.colorbar(im, ax=ax, pad=0.01)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


class AudioDisplay:
    """What :func:`display` returns: renders in Jupyter as a player and/or a spectrogram.

    Attributes:
        kind (str): 'waveform' (player and spectrogram) or 'feature' (image of the feature).
        data (numpy.ndarray): The samples ``[C, T]`` or the feature ``[bins, frames]``.
        sr (int | None): Sample rate of a waveform.
        title (str): Caption.
    """

    def __init__(self, data: np.ndarray, kind: str, sr: int | None, title: str) -> None:
        self.data, self.kind, self.sr, self.title = data, kind, sr, title

    def __repr__(self) -> str:
        if self.kind == "waveform":
            c, t = self.data.shape
            return (f"<audio {self.title}: {c} channel(s), {t} samples at {self.sr} Hz "
                    f"({t / self.sr:.2f} s)>")
        return f"<audio feature {self.title}: shape {list(self.data.shape)}>"

    def _repr_html_(self) -> str:
        parts = [f'<div class="paddle-hl-audio"><div style="font-family:monospace;'
                 f'font-size:12px;color:var(--jp-ui-font-color1, inherit)">'
                 f'{html.escape(self.title)}</div>']
        if self.kind == "waveform":
            b64 = _wav_base64(self.data, self.sr)
            parts.append(f'<audio controls preload="none" src="data:audio/wav;base64,{b64}">'
                         "</audio>")
            mono = self.data.mean(axis=0)
            dur = mono.shape[0] / self.sr
            png = _png_base64(_log_spectrogram(mono, self.sr), "spectrogram (dB)",
                              extent=(0, dur, 0, self.sr / 2), ylabel="Hz", xlabel="s")
        else:
            png = _png_base64(self.data, f"feature {list(self.data.shape)}",
                              ylabel="bin", xlabel="frame")
        if png is not None:
            parts.append(f'<img src="data:image/png;base64,{png}" alt="spectrogram"/>')
        else:
            parts.append(f"<pre>{html.escape(repr(self))} (install matplotlib to see the "
                         "image)</pre>")
        parts.append("</div>")
        return "".join(parts)


def display(x, sr: int | None = None, title: str | None = None) -> AudioDisplay:
    """Wrap a waveform or a feature so that Jupyter shows it (player and spectrogram image).

    A 1-D input, or a 2-D input with ``sr`` given and at most 8 rows, is a waveform (``[T]`` or
    ``[C, T]``): it gets an audio player and its spectrogram. Anything else is a feature
    (``[bins, frames]``, or ``[1, bins, frames]``) and is drawn as an image.

    Args:
        x (Tensor | numpy.ndarray): Waveform or feature.
        sr (int, optional): Sample rate of a waveform (required for a waveform).
        title (str, optional): Caption shown above.

    Returns:
        AudioDisplay: An object with ``_repr_html_``; the last expression of a cell shows it.

    Raises:
        ValueError: A waveform without ``sr``, or an input of rank 0 or above 3.

    Examples:
        >>> import paddle_hl as paddle
        >>> d = paddle.audio.display(paddle.zeros([8000]), sr=8000)
        >>> '<audio' in d._repr_html_()
        True
    """
    arr = _as_array(x)
    if arr.ndim == 3 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim == 1 or (arr.ndim == 2 and sr is not None and arr.shape[0] <= 8):
        if sr is None:
            raise ValueError(f"paddle.audio.display: a waveform of shape {list(arr.shape)} "
                             "needs its sample rate (sr=...)")
        wav = arr.reshape(1, -1) if arr.ndim == 1 else arr
        return AudioDisplay(wav.astype(np.float32), "waveform", int(sr), title or "waveform")
    if arr.ndim != 2:
        raise ValueError(f"paddle.audio.display: expected a waveform [T] / [C, T] or a feature "
                         f"[bins, frames], got shape {list(arr.shape)}")
    return AudioDisplay(arr.astype(np.float32), "feature", sr, title or "feature")


class AudioSample(tuple):
    """A dataset item ``(feature, label)`` that also renders itself in Jupyter.

    It is a plain tuple for everything else (unpacking, indexing, collation, pickling). Its
    extra attributes are ``waveform`` (``[T]`` float32 array), ``sr``, ``label_name``,
    ``feat_type`` and ``path``.
    """

    def __new__(cls, items=(), meta=None):
        self = super().__new__(cls, items)
        self._meta = dict(meta or {})
        return self

    def __reduce__(self):
        return (type(self), (tuple(self), self._meta))

    def __getattr__(self, name):
        meta = self.__dict__.get("_meta", {})
        if name in meta:
            return meta[name]
        raise AttributeError(name)

    def _repr_html_(self) -> str:
        m = self._meta
        feat, label = self[0], self[1]
        name = m.get("label_name")
        title = f"label {label}" + (f" ({name})" if name else "")
        if m.get("path"):
            title += f" - {m['path'].rsplit('/', 1)[-1]}"
        parts = []
        if m.get("waveform") is not None and m.get("sr"):
            parts.append(display(m["waveform"], sr=m["sr"], title=title)._repr_html_())
        if m.get("feat_type", "raw") != "raw":
            parts.append(display(feat, title=f"{m['feat_type']} {list(feat.shape)}")
                         ._repr_html_())
        return "".join(parts) or f"<pre>{html.escape(repr(tuple(self)))}</pre>"
