"""paddle_hl.audio: audio features, functional ops, file I/O backends and datasets.

``load``, ``save`` and ``info`` read and write audio files through the current backend
(``soundfile`` when the ``audio`` extra is installed, else the WAV-only ``wave_backend``).
:func:`display` shows a waveform or a feature in Jupyter as a player and a spectrogram.
"""

from . import backends, datasets, features, functional
from ._display import display
from .backends import info, load, save

__all__ = ["backends", "datasets", "features", "functional", "info", "load", "save",
           "display"]
