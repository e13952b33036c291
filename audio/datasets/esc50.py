"""ESC-50: 2,000 five-second environmental recordings in 50 classes, in 5 folds."""

from __future__ import annotations

import collections
import csv
import os

from paddle_hl.utils import download

from .dataset import AudioClassificationDataset

__all__ = []  # implementation module: the package exports the names


class ESC50(AudioClassificationDataset):
    """The ESC-50 environmental sound classification dataset.

    The archive ``ESC-50-master.zip`` is downloaded (md5-checked) into
    ``paddle_hl.utils.download.DATA_HOME`` and unpacked there on first use. Its metadata file
    ``ESC-50-master/meta/esc50.csv`` assigns every clip of ``ESC-50-master/audio/`` a fold
    (1-5) and a target (0-49).

    Args:
        mode (str, optional): 'train' keeps the clips of the folds other than ``split``; any
            other mode ('dev', 'test') keeps the clips of fold ``split``. Default: 'train'.
        split (int, optional): The held-out fold, 1 to 5. Default: 1.
        feat_type (str, optional): 'raw', 'melspectrogram', 'mfcc', 'logmelspectrogram' or
            'spectrogram'. Default: 'raw'.
        archive (dict, optional): ``{'url': ..., 'md5': ...}`` of the archive, to use a mirror.
            Default: None (the official copy).
        **kwargs: Arguments of the feature layer (n_fft, hop_length, n_mels, ...).

    Items are ``(feature, label)``: the waveform ``[T]`` for 'raw', else ``[bins, frames]``;
    the item also shows a player and spectrogram in Jupyter.

    Examples:
        >>> import paddle_hl as paddle
        >>> esc50 = paddle.audio.datasets.ESC50(mode='dev', feat_type='mfcc')  # doctest: +SKIP
        >>> mfcc, label = esc50[0]  # doctest: +SKIP
    """

    archive = {
        "url": "https://paddleaudio.bj.bcebos.com/datasets/ESC-50-master.zip",
        "md5": "7771e4b9d86d0945acce719c7a59305a",
    }
    label_list = [
        # animals
        "Dog", "Rooster", "Pig", "Cow", "Frog", "Cat", "Hen", "Insects (flying)", "Sheep",
        "Crow",
        # natural soundscapes and water sounds
        "Rain", "Sea waves", "Crackling fire", "Crickets", "Chirping birds", "Water drops",
        "Wind", "Pouring water", "Toilet flush", "Thunderstorm",
        # human, non-speech sounds
        "Crying baby", "Sneezing", "Clapping", "Breathing", "Coughing", "Footsteps",
        "Laughing", "Brushing teeth", "Snoring", "Drinking, sipping",
        # interior/domestic sounds
        "Door knock", "Mouse click", "Keyboard typing", "Door, wood creaks", "Can opening",
        "Washing machine", "Vacuum cleaner", "Clock alarm", "Clock tick", "Glass breaking",
        # exterior/urban noises
        "Helicopter", "Chainsaw", "Siren", "Car horn", "Engine", "Train", "Church bells",
        "Airplane", "Fireworks", "Hand saw",
    ]
    meta = os.path.join("ESC-50-master", "meta", "esc50.csv")
    meta_info = collections.namedtuple(
        "META_INFO", ("filename", "fold", "target", "category", "esc10", "src_file", "take"))
    audio_path = os.path.join("ESC-50-master", "audio")

    def __init__(self, mode: str = "train", split: int = 1, feat_type: str = "raw",
                 archive=None, **kwargs) -> None:
        if not isinstance(split, int) or isinstance(split, bool) or not 1 <= split <= 5:
            raise ValueError(f"ESC50: split must be an int in 1..5 (the held-out fold), got "
                             f"{split!r}")
        if not isinstance(mode, str):
            raise TypeError(f"ESC50: mode must be a str ('train', 'dev' or 'test'), got "
                            f"{type(mode).__name__}")
        if archive is not None:
            self.archive = archive
        files, labels = self._get_data(mode, split)
        super().__init__(files=files, labels=labels, feat_type=feat_type, **kwargs)

    def _root(self) -> str:
        return download.DATA_HOME

    def _get_meta_info(self) -> list:
        with open(os.path.join(self._root(), self.meta), newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        if not rows or rows[0][:3] != ["filename", "fold", "target"]:
            raise ValueError(f"ESC50: {self.meta} does not look like the ESC-50 metadata file "
                             f"(header {rows[0] if rows else None})")
        return [self.meta_info(*row) for row in rows[1:] if row]

    def _get_data(self, mode: str, split: int):
        root = self._root()
        if not os.path.isdir(os.path.join(root, self.audio_path)) or \
                not os.path.isfile(os.path.join(root, self.meta)):
            download.get_path_from_url(self.archive["url"], root, self.archive["md5"],
                                       decompress=True)
        files, labels = [], []
        for sample in self._get_meta_info():
            in_split = int(sample.fold) == split
            if (mode == "train") != in_split:
                files.append(os.path.join(root, self.audio_path, sample.filename))
                labels.append(int(sample.target))
        return files, labels
