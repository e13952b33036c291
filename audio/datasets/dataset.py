"""The base class of the audio classification datasets: files + labels -> (feature, label)."""

from __future__ import annotations

import numpy as np

import paddle_hl as paddle

from .. import backends
from .._display import AudioSample
from ..features import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

__all__ = []  # implementation module: the package exports the names

#: feat_type -> feature layer (None: the raw waveform)
FEAT_TYPES = {
    "raw": None,
    "melspectrogram": MelSpectrogram,
    "mfcc": MFCC,
    "logmelspectrogram": LogMelSpectrogram,
    "spectrogram": Spectrogram,
}


class _FeatTypeError(ValueError, RuntimeError):
    """Unknown feat_type (Paddle raises RuntimeError; this is also a ValueError)."""


class AudioClassificationDataset(paddle.io.Dataset):
    """Audio files with integer labels; an item is ``(feature, label)``.

    Args:
        files (list[str]): Paths of the audio files.
        labels (list[int]): Their labels.
        feat_type (str, optional): 'raw' (the mono waveform ``[T]``), 'melspectrogram', 'mfcc',
            'logmelspectrogram' or 'spectrogram' (``[bins, frames]``). Default: 'raw'.
        sample_rate (int, optional): Expected sample rate; a file with another rate raises.
            Default: None (any).
        **kwargs: Arguments of the feature layer (n_fft, n_mels, ...). ``sr`` comes from the
            file; passing a different ``sr`` raises.
    """

    label_list: list[str] = []

    def __init__(self, files, labels, feat_type: str = "raw", sample_rate: int | None = None,
                 **kwargs) -> None:
        super().__init__()
        if feat_type not in FEAT_TYPES:
            raise _FeatTypeError(f"{type(self).__name__}: unknown feat_type {feat_type!r}, it "
                                 f"must be one of {list(FEAT_TYPES)}")
        self.files = list(files)
        self.labels = list(labels)
        self.feat_type = feat_type
        self.sample_rate = sample_rate
        self._expected_sr = sample_rate
        self.feat_config = dict(kwargs)
        self._extractors: dict[int, paddle.nn.Layer] = {}

    def _extractor(self, sr: int):
        layer = self._extractors.get(sr)
        if layer is None:
            cls = FEAT_TYPES[self.feat_type]
            config = dict(self.feat_config)
            if cls is not Spectrogram:
                config["sr"] = sr
            else:
                config.pop("sr", None)
            layer = self._extractors[sr] = cls(**config)
        return layer

    def _check_sr(self, sr: int, path: str) -> None:
        for name, expected in (("sample_rate", self._expected_sr),
                               ("sr", self.feat_config.get("sr"))):
            if expected is not None and int(expected) != sr:
                raise ValueError(f"{type(self).__name__}: sample rate mismatch: {path!r} is "
                                 f"sampled at {sr} Hz but {name}={expected} was asked for "
                                 "(resample the files or drop the argument)")

    def _load(self, idx: int):
        path = self.files[idx]
        wav, sr = backends.load(path)  # [C, T] float32
        self._check_sr(sr, path)
        wav = wav.mean(axis=0) if wav.shape[0] > 1 else wav[0]  # mono [T]
        return path, wav, sr

    def __getitem__(self, idx):
        path, wav, sr = self._load(idx)
        self.sample_rate = sr  # the rate of the last item read, as in Paddle
        if self.feat_type == "raw":
            feat = wav
        else:
            with paddle.no_grad():
                feat = self._extractor(sr)(wav.unsqueeze(0)).squeeze(0)
        label = self.labels[idx]
        names = type(self).label_list
        meta = {"waveform": np.asarray(wav.numpy()), "sr": sr, "path": path,
                "feat_type": self.feat_type,
                "label_name": names[label] if 0 <= label < len(names) else None}
        return AudioSample((feat, label), meta)

    def __len__(self) -> int:
        return len(self.files)
