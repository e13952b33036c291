"""``paddle.audio.backends``: audio file I/O and the choice of backend.

Two backends exist: ``'wave_backend'`` (PCM WAV through Python's ``wave`` module, always there)
and ``'soundfile'`` (WAV, FLAC, OGG and more through the ``soundfile`` package, the ``audio``
extra). ``'soundfile'`` is the default when it is installed.
"""

from __future__ import annotations

from . import soundfile_backend, wave_backend
from .backend import AUDIO_EXTRA, AudioInfo, _ArgError, import_soundfile

__all__ = ["get_current_backend", "list_available_backends", "set_backend"]

_BACKENDS = {"wave_backend": wave_backend, "soundfile": soundfile_backend}
_current: str | None = None  # None: the default (soundfile when installed)


def _soundfile_available() -> bool:
    try:
        import_soundfile()
    except ImportError:
        return False
    return True


def list_available_backends() -> list[str]:
    """Names of the backends that can be used in this environment.

    Returns:
        list[str]: ``['wave_backend']``, plus ``'soundfile'`` when the soundfile package (the
        ``audio`` extra) is installed.

    Examples:
        >>> import paddle_hl as paddle
        >>> 'wave_backend' in paddle.audio.backends.list_available_backends()
        True
    """
    return ["wave_backend"] + (["soundfile"] if _soundfile_available() else [])


def get_current_backend() -> str:
    """Name of the backend that ``paddle.audio.load / save / info`` use.

    Returns:
        str: ``'soundfile'`` or ``'wave_backend'``.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.backends.get_current_backend() in ('soundfile', 'wave_backend')
        True
    """
    if _current is not None:
        return _current
    return "soundfile" if _soundfile_available() else "wave_backend"


def set_backend(backend_name: str) -> None:
    """Choose the backend of ``paddle.audio.load / save / info``.

    Args:
        backend_name (str): ``'wave_backend'`` or ``'soundfile'``.

    Raises:
        ValueError: Unknown backend name.
        ImportError: ``'soundfile'`` was asked for but the audio extra is not installed.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.backends.set_backend('wave_backend')
        >>> paddle.audio.backends.get_current_backend()
        'wave_backend'
    """
    global _current
    if backend_name not in _BACKENDS:
        raise _ArgError(f"set_backend: unknown backend {backend_name!r}; choose one of "
                        f"{sorted(_BACKENDS)}")
    if backend_name == "soundfile":
        import_soundfile()
    _current = backend_name


def _backend():
    return _BACKENDS[get_current_backend()]


def info(filepath: str) -> AudioInfo:
    """Metadata of an audio file, read by the current backend.

    Args:
        filepath (str): Path of the file.

    Returns:
        AudioInfo: sample_rate, num_samples, num_channels, bits_per_sample, encoding.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not audio the backend can read.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.save('/tmp/a.wav', paddle.zeros([1, 800]), 8000)
        >>> paddle.audio.info('/tmp/a.wav').num_samples
        800
    """
    return _backend().info(filepath)


def load(filepath, frame_offset: int = 0, num_frames: int = -1, normalize: bool = True,
         channels_first: bool = True):
    """Load an audio file into a Tensor.

    Args:
        filepath (str | pathlib.Path): Path of the file (WAV; FLAC and OGG with soundfile).
        frame_offset (int, optional): First frame to read. Default: 0.
        num_frames (int, optional): Frames to read; -1 reads to the end. Default: -1.
        normalize (bool, optional): Return float32 samples in [-1, 1]. False returns the raw
            integers of an integer PCM WAV file (int16 for 16 bit, int32 for 24/32 bit,
            uint8 for unsigned 8 bit); other files are float32 either way. Default: True.
        channels_first (bool, optional): Shape ``[C, T]`` (True) or ``[T, C]``. Default: True.

    Returns:
        tuple[Tensor, int]: The samples and the sample rate.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is not audio the backend can read, or the frame range is invalid.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.save('/tmp/a.wav', paddle.zeros([2, 800]), 8000)
        >>> wav, sr = paddle.audio.load('/tmp/a.wav')
        >>> wav.shape, sr
        ([2, 800], 8000)
    """
    return _backend().load(filepath, frame_offset=frame_offset, num_frames=num_frames,
                           normalize=normalize, channels_first=channels_first)


def save(filepath: str, src, sample_rate: int, channels_first: bool = True,
         encoding: str | None = None, bits_per_sample: int | None = 16) -> None:
    """Save a Tensor as an audio file; the format follows the extension (.wav, .flac, .ogg).

    Args:
        filepath (str): Destination path.
        src (Tensor): Samples, ``[C, T]`` (or ``[T, C]`` with channels_first=False); floats in
            [-1, 1] (clipped) or integers.
        sample_rate (int): Sample rate in Hz.
        channels_first (bool, optional): Layout of src. Default: True.
        encoding (str, optional): 'PCM_S', 'PCM_U', 'PCM_F', 'ULAW' or 'ALAW' (WAV); None
            picks signed PCM (Vorbis for OGG). Default: None.
        bits_per_sample (int, optional): 8, 16, 24, 32 or 64 as the encoding allows.
            Default: 16.

    Raises:
        ValueError: src is not 2-D, an unknown extension, or an encoding the format lacks.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.audio.save('/tmp/a.wav', paddle.zeros([1, 800]), 8000)
    """
    return _backend().save(filepath, src, sample_rate, channels_first=channels_first,
                           encoding=encoding, bits_per_sample=bits_per_sample)

