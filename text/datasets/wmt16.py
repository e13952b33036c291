"""The WMT16 Multimodal English-German translation data (wmt16.tar.gz)."""

from __future__ import annotations

import collections
import io
import tarfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

DATA_URL = "http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz"
DATA_MD5 = "0c38be43600334966403524a40dcd81e"

TOTAL_EN_WORDS = 11250
TOTAL_DE_WORDS = 19220

START_MARK = "<s>"
END_MARK = "<e>"
UNK_MARK = "<unk>"


class WMT16(paddle.io.Dataset):
    """The `WMT16 multimodal <http://www.statmt.org/wmt16/multimodal-task.html>`_ translation
    data, English and German.

    Each dictionary is built from its language's column of ``wmt16/train``: ``<s>``, ``<e>``,
    ``<unk>``, then words by decreasing count (ties in order of first appearance), up to the
    dictionary size. Unlike Paddle, the dictionaries are kept in memory (Paddle writes them to
    its cache and reuses them, and builds the target dictionary from the source column when
    the cache is empty).

    Args:
        data_file (str, optional): Path of ``wmt16.tar.gz``; None downloads it to
            ``DATA_HOME/wmt16`` when ``download`` is True. Default: None.
        mode (str, optional): 'train', 'test' or 'val'. Default: 'train'.
        src_dict_size (int, optional): Source dictionary size, positive (capped at the
            language's vocabulary: 11250 English, 19220 German words). Default: -1 (rejected,
            as in Paddle).
        trg_dict_size (int, optional): Target dictionary size, positive. Default: -1.
        lang (str, optional): Source language, 'en' (English to German) or 'de'.
            Default: 'en'.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is ``(src_ids, trg_ids, trg_ids_next)``, int64 arrays:
        ``<s> source <e>``, ``<s> target`` and ``target <e>``.

    Examples:
        >>> from paddle_hl.text.datasets import WMT16
        >>> wmt16 = WMT16(mode='train', src_dict_size=50, trg_dict_size=50)  # doctest: +SKIP
        >>> en_dict = wmt16.get_dict('en')  # doctest: +SKIP
    """

    def __init__(self, data_file=None, mode="train", src_dict_size=-1, trg_dict_size=-1,
                 lang="en", download=True):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test", "val"))
        if lang not in ("en", "de"):
            raise _common.DatasetArgumentError(f"{cls}: lang should be 'en' or 'de', but got "
                                               f"{lang!r}")
        self.lang = lang
        _common.check_positive(cls, "src_dict_size", src_dict_size)
        _common.check_positive(cls, "trg_dict_size", trg_dict_size)
        other = "de" if lang == "en" else "en"
        total = {"en": TOTAL_EN_WORDS, "de": TOTAL_DE_WORDS}
        self.src_dict_size = min(src_dict_size, total[lang])
        self.trg_dict_size = min(trg_dict_size, total[other])
        self.data_file = _common.fetch(cls, "data_file", data_file, DATA_URL, DATA_MD5, "wmt16",
                                       download)
        with _common.reading(cls, "data_file", self.data_file), \
                tarfile.open(self.data_file) as tf:
            train = self._pairs(tf, "train")
            pairs = train if self.mode == "train" else self._pairs(tf, self.mode)
        self._dicts = {lang: self._build_dict(train, lang, src_dict_size),
                       other: self._build_dict(train, other, trg_dict_size)}
        self.src_dict, self.trg_dict = self._dicts[lang], self._dicts[other]
        self._load_data(pairs)

    def _pairs(self, tf, split):
        """``(english, german)`` of every well-formed line of ``wmt16/<split>``."""
        raw = _common.tar_member(tf, f"wmt16/{split}", type(self).__name__, "data_file")
        out = []
        for line in io.BytesIO(raw):
            parts = line.decode().strip().split("\t")
            if len(parts) == 2:
                out.append(parts)
        return out

    @staticmethod
    def _build_dict(pairs, lang, dict_size):
        col = 0 if lang == "en" else 1
        counts = collections.Counter()
        for pair in pairs:
            counts.update(pair[col].split())
        # sorted() is stable, so equal counts keep their order of first appearance
        ranked = sorted(counts.items(), key=lambda x: x[1], reverse=True)
        words = [START_MARK, END_MARK, UNK_MARK] + [w for w, _ in ranked[:max(dict_size - 3, 0)]]
        out = {}
        for w in words:
            out.setdefault(w, len(out))
        return out

    def _load_data(self, pairs):
        start, end, unk = (self.src_dict[m] for m in (START_MARK, END_MARK, UNK_MARK))
        src_col = 0 if self.lang == "en" else 1
        src_get, trg_get = self.src_dict.get, self.trg_dict.get
        self.src_ids, self.trg_ids, self.trg_ids_next = [], [], []
        for pair in pairs:
            src = [start] + [src_get(w, unk) for w in pair[src_col].split()] + [end]
            trg = [trg_get(w, unk) for w in pair[1 - src_col].split()]
            self.src_ids.append(src)
            self.trg_ids.append([start] + trg)
            self.trg_ids_next.append(trg + [end])

    def __getitem__(self, idx):
        return (np.array(self.src_ids[idx], dtype=np.int64),
                np.array(self.trg_ids[idx], dtype=np.int64),
                np.array(self.trg_ids_next[idx], dtype=np.int64))

    def __len__(self):
        return len(self.src_ids)

    def get_dict(self, lang, reverse=False):
        """The dictionary of a language.

        Args:
            lang (str): 'en' or 'de'.
            reverse (bool, optional): ``{id: word}`` instead of ``{word: id}``. Default: False.

        Returns:
            dict: The word dictionary of ``lang``.
        """
        if lang not in self._dicts:
            raise _common.DatasetArgumentError(f"WMT16.get_dict: lang should be 'en' or 'de', "
                                               f"but got {lang!r}")
        d = self._dicts[lang]
        return _common.invert(d) if reverse else d

    def decode(self, ids, lang=None) -> str:
        """Ids back to text through the dictionary of ``lang`` (default: the target language)."""
        if lang is None:
            lang = "de" if self.lang == "en" else "en"
        return _common.join_ids(ids, self.get_dict(lang, reverse=True))

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        src, trg, trg_next = self[idx]
        other = "de" if self.lang == "en" else "en"
        return _common.ItemView(f"WMT16[{idx}] ({self.mode}, {self.lang}->{other})", [
            ("src", self.decode(src, self.lang)), ("trg", self.decode(trg)),
            ("trg_next", self.decode(trg_next))])
