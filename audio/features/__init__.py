"""``paddle.audio.features``: spectrogram, mel, log-mel and MFCC layers."""

from .layers import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

__all__ = ["LogMelSpectrogram", "MelSpectrogram", "MFCC", "Spectrogram"]
