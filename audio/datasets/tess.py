"""TESS: the Toronto emotional speech set (2,800 recordings of 7 emotions)."""

from __future__ import annotations

import collections
import os

from paddle_hl.utils import download

from .dataset import AudioClassificationDataset

__all__ = []  # implementation module: the package exports the names


class TESS(AudioClassificationDataset):
    """The TESS emotional speech dataset.

    The archive ``TESS_Toronto_emotional_speech_set.zip`` is downloaded (md5-checked) into
    ``paddle_hl.utils.download.DATA_HOME`` and unpacked on first use. Its ``.wav`` files are
    named ``<speaker>_<word>_<emotion>.wav``; the emotion is the label. The files, in sorted
    path order, are dealt into ``n_folds`` folds round-robin.

    Args:
        mode (str, optional): 'train' keeps the folds other than ``split``, any other mode
            ('dev') keeps fold ``split``. Default: 'train'.
        n_folds (int, optional): Number of folds. Default: 5.
        split (int, optional): The held-out fold, 1 to n_folds. Default: 1.
        feat_type (str, optional): 'raw', 'melspectrogram', 'mfcc', 'logmelspectrogram' or
            'spectrogram'. Default: 'raw'.
        archive (dict, optional): ``{'url': ..., 'md5': ...}`` of the archive. Default: None.
        **kwargs: Arguments of the feature layer.

    Examples:
        >>> import paddle_hl as paddle
        >>> tess = paddle.audio.datasets.TESS(mode='dev', feat_type='raw')  # doctest: +SKIP
        >>> wav, label = tess[0]  # doctest: +SKIP
    """

    archive = {
        "url": "https://bj.bcebos.com/paddleaudio/datasets/"
               "TESS_Toronto_emotional_speech_set.zip",
        "md5": "1465311b24d1de704c4c63e4ccc470c7",
    }
    label_list = ["angry", "disgust", "fear", "happy", "neutral",
                  "ps",  # pleasant surprise
                  "sad"]
    meta_info = collections.namedtuple("META_INFO", ("speaker", "word", "emotion"))
    audio_path = "TESS_Toronto_emotional_speech_set"

    def __init__(self, mode: str = "train", n_folds: int = 5, split: int = 1,
                 feat_type: str = "raw", archive=None, **kwargs) -> None:
        if not isinstance(n_folds, int) or isinstance(n_folds, bool) or n_folds < 1:
            raise ValueError(f"TESS: n_folds must be an int >= 1, got {n_folds!r}")
        if not isinstance(split, int) or isinstance(split, bool) or not 1 <= split <= n_folds:
            raise ValueError(f"TESS: split must be an int in 1..n_folds ({n_folds}), got "
                             f"{split!r}")
        if archive is not None:
            self.archive = archive
        files, labels = self._get_data(mode, n_folds, split)
        super().__init__(files=files, labels=labels, feat_type=feat_type, **kwargs)

    def _get_meta_info(self, files) -> list:
        out = []
        for path in files:
            parts = os.path.splitext(os.path.basename(path))[0].split("_")
            if len(parts) != 3:
                raise ValueError(f"TESS: {path!r} is not named <speaker>_<word>_<emotion>.wav")
            out.append(self.meta_info(*parts))
        return out

    def _get_data(self, mode: str, n_folds: int, split: int):
        root = download.DATA_HOME
        audio_dir = os.path.join(root, self.audio_path)
        if not os.path.isdir(audio_dir):
            download.get_path_from_url(self.archive["url"], root, self.archive["md5"],
                                       decompress=True)
        wav_files = []
        for dirpath, _, names in os.walk(audio_dir):
            wav_files.extend(os.path.join(dirpath, n) for n in names
                             if n.lower().endswith(".wav"))
        wav_files.sort()  # os.walk order depends on the file system; folds must not
        files, labels = [], []
        for idx, (path, sample) in enumerate(zip(wav_files, self._get_meta_info(wav_files))):
            emotion = sample.emotion.lower()
            if emotion not in self.label_list:
                raise ValueError(f"TESS: unknown emotion {sample.emotion!r} in {path!r}; "
                                 f"expected one of {self.label_list}")
            fold = idx % n_folds + 1
            if (mode == "train") != (fold == split):
                files.append(path)
                labels.append(self.label_list.index(emotion))
        return files, labels
