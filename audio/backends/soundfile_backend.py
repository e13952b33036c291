"""The ``soundfile`` backend: WAV, FLAC, OGG/Vorbis and the other formats of libsndfile.

soundfile (the ``audio`` extra) is imported on first use, never at ``import paddle_hl``.
"""

from __future__ import annotations

import os

import numpy as np

from paddle_hl.framework.io import write_file

from .backend import (
    AudioInfo,
    _ArgError,
    check_path,
    check_range,
    check_readable,
    check_sample_rate,
    import_soundfile,
    source_array,
    to_tensor,
)

__all__ = []  # implementation module: the package exports the names

# libsndfile subtype -> (encoding name, bits per sample)
_SUBTYPES = {
    "PCM_S8": ("PCM_S", 8), "PCM_U8": ("PCM_U", 8), "PCM_16": ("PCM_S", 16),
    "PCM_24": ("PCM_S", 24), "PCM_32": ("PCM_S", 32), "FLOAT": ("PCM_F", 32),
    "DOUBLE": ("PCM_F", 64), "ULAW": ("ULAW", 8), "ALAW": ("ALAW", 8), "VORBIS": ("VORBIS", 0),
    "OPUS": ("OPUS", 0), "MPEG_LAYER_III": ("MP3", 0),
}
# raw integer dtype returned by load(normalize=False) for integer PCM WAV subtypes
_RAW_DTYPES = {"PCM_16": "int16", "PCM_32": "int32", "PCM_24": "int32", "PCM_U8": "int16",
               "PCM_S8": "int16"}
_FORMATS = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG", ".oga": "OGG", ".aiff": "AIFF",
            ".aif": "AIFF", ".au": "AU"}


def _sf_info(path: str, fn: str):
    sf = import_soundfile()
    check_readable(path, fn)
    try:
        return sf, sf.info(path)
    except (RuntimeError, sf.LibsndfileError) as e:
        raise ValueError(f"paddle.audio.{fn}: {path!r} is not a readable audio file "
                         f"(libsndfile: {e})") from None


def info(filepath: str) -> AudioInfo:
    """Metadata of an audio file (see :func:`paddle_hl.audio.info`)."""
    path = check_path(filepath, "info")
    _, i = _sf_info(path, "info")
    encoding, bits = _SUBTYPES.get(i.subtype, (i.subtype, 0))
    if i.format == "FLAC":
        encoding = "FLAC"
    return AudioInfo(int(i.samplerate), int(i.frames), int(i.channels), bits, encoding)


def load(filepath, frame_offset: int = 0, num_frames: int = -1, normalize: bool = True,
         channels_first: bool = True):
    """Load an audio file (see :func:`paddle_hl.audio.load`)."""
    path = check_path(filepath, "load")
    sf, i = _sf_info(path, "load")
    start, count = check_range(frame_offset, num_frames, int(i.frames), "load")
    raw = None if normalize or i.format != "WAV" else _RAW_DTYPES.get(i.subtype)
    try:
        arr, sr = sf.read(path, start=start, frames=count, dtype=raw or "float32",
                          always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as e:
        raise ValueError(f"paddle.audio.load: could not decode {path!r} (libsndfile: {e})") \
            from None
    if raw is not None and i.subtype in ("PCM_U8", "PCM_S8"):
        # libsndfile only reads 8-bit files scaled to 16 bits: shift back to the stored value
        arr = (arr >> 8).astype(np.int16)
        if i.subtype == "PCM_U8":
            arr = (arr + 128).astype(np.uint8)
    return to_tensor(arr, channels_first), int(sr)


def _subtype(fmt: str, encoding, bits, path: str) -> str:
    if fmt == "OGG":
        if encoding not in (None, "VORBIS"):
            raise _ArgError(f"paddle.audio.save: OGG files are Vorbis-encoded; encoding "
                            f"{encoding!r} is not possible for {path!r}")
        return "VORBIS"
    bits = 16 if bits is None else bits
    enc = encoding or ("PCM_S" if bits != 8 or fmt == "FLAC" else "PCM_U")
    table = {("PCM_S", 8): "PCM_S8", ("PCM_U", 8): "PCM_U8", ("PCM_S", 16): "PCM_16",
             ("PCM_S", 24): "PCM_24", ("PCM_S", 32): "PCM_32", ("PCM_F", 32): "FLOAT",
             ("PCM_F", 64): "DOUBLE", ("ULAW", 8): "ULAW", ("ALAW", 8): "ALAW",
             ("FLAC", 16): "PCM_16", ("FLAC", 24): "PCM_24", ("FLAC", 8): "PCM_S8"}
    subtype = table.get((enc, bits))
    sf = import_soundfile()
    if subtype is None or not sf.check_format(fmt, subtype):
        raise _ArgError(f"paddle.audio.save: encoding={encoding!r} with bits_per_sample={bits} "
                        f"is not supported for {fmt} ({path!r}); supported subtypes: "
                        f"{sorted(sf.available_subtypes(fmt))}")
    return subtype


def save(filepath: str, src, sample_rate: int, channels_first: bool = True,
         encoding: str | None = None, bits_per_sample: int | None = 16) -> None:
    """Save an audio file; the format follows the extension (see
    :func:`paddle_hl.audio.save`)."""
    sf = import_soundfile()
    path = check_path(filepath, "save")
    sr = check_sample_rate(sample_rate)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _FORMATS:
        raise _ArgError(f"paddle.audio.save: cannot tell the audio format of {path!r} from its "
                        f"extension; use one of {sorted(_FORMATS)}")
    fmt = _FORMATS[ext]
    arr = source_array(src, channels_first)
    subtype = _subtype(fmt, encoding, bits_per_sample, path)
    if arr.dtype.kind == "u" or arr.dtype == np.int64 or arr.dtype == np.int8:
        # soundfile writes float32/64, int16 and int32 directly; other integers are rescaled
        # to float by their own full range
        info_ = np.iinfo(arr.dtype)
        arr = (arr.astype(np.float64) - (info_.max + 1) / 2 * (arr.dtype.kind == "u")) \
            / (2.0 ** (info_.bits - 1))
    elif arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    def write(f):
        try:
            sf.write(f, arr, sr, subtype=subtype, format=fmt)
        except AssertionError:  # soundfile's check that every frame was written
            raise OSError(f"paddle.audio.save: only part of the frames of {path!r} could be "
                          "written (is the disk full?)") from None

    # through a temporary file and a rename: a failed write keeps the previous file
    write_file(path, write)
