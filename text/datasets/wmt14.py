"""The WMT14 French-English translation subset Paddle distributes (wmt14.tgz)."""

from __future__ import annotations

import io
import tarfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

URL_TRAIN = "http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz"
MD5_TRAIN = "0791583d57d5beb693b9414c5b36798c"

START = "<s>"
END = "<e>"
UNK = "<unk>"
UNK_IDX = 2

# pairs whose source (with <s> and <e>) or target has more ids than this are dropped
MAX_LENGTH = 80


class WMT14(paddle.io.Dataset):
    """The `WMT14 <http://www.statmt.org/wmt14/>`_ French-to-English data prepared by Paddle.

    The archive holds ``src.dict`` and ``trg.dict`` (one word a line, ``<s>``, ``<e>``,
    ``<unk>`` first; the first ``dict_size`` lines are used) and ``train/train``,
    ``test/test``, ``gen/gen`` files of ``source<TAB>target`` lines. Pairs with more than 80
    source ids (counting ``<s>`` and ``<e>``) or 80 target words are skipped.

    Args:
        data_file (str, optional): Path of ``wmt14.tgz``; None downloads it to
            ``DATA_HOME/wmt14`` when ``download`` is True. Default: None.
        mode (str, optional): 'train', 'test' or 'gen'. Default: 'train'.
        dict_size (int, optional): Size of both dictionaries; must be positive. Default: -1
            (which, as in Paddle, is rejected: pass a size).
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is ``(src_ids, trg_ids, trg_ids_next)``, int64 arrays:
        ``<s> source <e>``, ``<s> target`` and ``target <e>``.

    Examples:
        >>> from paddle_hl.text.datasets import WMT14
        >>> wmt14 = WMT14(mode='train', dict_size=50)  # doctest: +SKIP
        >>> src, trg, trg_next = wmt14[0]  # doctest: +SKIP
    """

    def __init__(self, data_file=None, mode="train", dict_size=-1, download=True):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test", "gen"))
        self.dict_size = _common.check_positive(cls, "dict_size", dict_size)
        self.data_file = _common.fetch(cls, "data_file", data_file, URL_TRAIN, MD5_TRAIN,
                                       "wmt14", download)
        with _common.reading(cls, "data_file", self.data_file), \
                tarfile.open(self.data_file) as tf:
            self._load_data(tf)

    def _one(self, tf, names, what):
        if len(names) != 1:
            raise ValueError(f"{type(self).__name__}: data_file {self.data_file!r} should hold "
                             f"exactly one file ending in {what!r}, but holds {names}")
        return _common.tar_member(tf, names[0], type(self).__name__, "data_file")

    def _to_dict(self, raw: bytes):
        out = {}
        for i, line in enumerate(io.BytesIO(raw)):
            if i >= self.dict_size:
                break
            out[line.strip().decode()] = i
        return out

    def _load_data(self, tf):
        names = tf.getnames()
        self.src_dict = self._to_dict(self._one(tf, [n for n in names if n.endswith("src.dict")],
                                                "src.dict"))
        self.trg_dict = self._to_dict(self._one(tf, [n for n in names if n.endswith("trg.dict")],
                                                "trg.dict"))
        for d, which in ((self.src_dict, "src.dict"), (self.trg_dict, "trg.dict")):
            if START not in d or END not in d:
                raise ValueError(f"{type(self).__name__}: the first dict_size={self.dict_size} "
                                 f"lines of {which} lack {START!r} or {END!r}")
        src_get, trg_get = self.src_dict.get, self.trg_dict.get
        trg_start, trg_end = self.trg_dict[START], self.trg_dict[END]
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        suffix = f"{self.mode}/{self.mode}"
        for name in (n for n in names if n.endswith(suffix)):
            for line in io.BytesIO(_common.tar_member(tf, name, type(self).__name__,
                                                      "data_file")):
                parts = line.decode().strip().split("\t")
                if len(parts) != 2:
                    continue
                src = [src_get(w, UNK_IDX) for w in [START, *parts[0].split(), END]]
                trg = [trg_get(w, UNK_IDX) for w in parts[1].split()]
                if len(src) > MAX_LENGTH or len(trg) > MAX_LENGTH:
                    continue
                self.src_ids.append(src)
                self.trg_ids.append([trg_start] + trg)
                self.trg_ids_next.append(trg + [trg_end])

    def __getitem__(self, idx):
        return (np.array(self.src_ids[idx], dtype=np.int64),
                np.array(self.trg_ids[idx], dtype=np.int64),
                np.array(self.trg_ids_next[idx], dtype=np.int64))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, reverse=False):
        """The source and target dictionaries.

        Args:
            reverse (bool, optional): ``{id: word}`` instead of ``{word: id}``. Default: False.

        Returns:
            tuple[dict, dict]: ``(src_dict, trg_dict)``.
        """
        if reverse:
            return _common.invert(self.src_dict), _common.invert(self.trg_dict)
        return self.src_dict, self.trg_dict

    def decode(self, ids, side="trg") -> str:
        """Ids back to text through the 'src' or 'trg' dictionary."""
        src, trg = self.get_dict(reverse=True)
        return _common.join_ids(ids, {"src": src, "trg": trg}[side])

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        src, trg, trg_next = self[idx]
        return _common.ItemView(f"WMT14[{idx}] ({self.mode})", [
            ("src", self.decode(src, "src")), ("trg", self.decode(trg)),
            ("trg_next", self.decode(trg_next))])
