"""IMDB movie reviews (aclImdb_v1.tar.gz) for binary sentiment classification."""

from __future__ import annotations

import collections
import re
import string
import tarfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

URL = "https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz"
MD5 = "7c2ac02c03563afcf9b574c7e56c153a"

# the labelled reviews of both splits; unsup/ reviews, the vocab file and README are not used
_REVIEW = re.compile(r"aclImdb/(train|test)/(pos|neg)/.*\.txt$")
_PUNCT = string.punctuation.encode("latin-1")


def _tokenize(raw: bytes) -> list:
    # Paddle's ad-hoc tokenizer on bytes: drop the trailing newline, delete ASCII punctuation,
    # lower-case ASCII letters, split on ASCII whitespace. Tokens stay bytes.
    return raw.rstrip(b"\n\r").translate(None, _PUNCT).lower().split()


class Imdb(paddle.io.Dataset):
    """The `IMDB <https://ai.stanford.edu/~amaas/data/sentiment/>`_ sentiment dataset.

    The vocabulary is built from the labelled reviews of both splits: words (byte strings, as
    in Paddle) seen more than ``cutoff`` times, ordered by decreasing count then bytewise, with
    ``'<unk>'`` last. Positive reviews come first (label 0), then negative ones (label 1), each
    in archive order.

    Args:
        data_file (str, optional): Path of ``aclImdb_v1.tar.gz``; None downloads it to
            ``DATA_HOME/imdb`` when ``download`` is True. Default: None.
        mode (str, optional): 'train' or 'test'. Default: 'train'.
        cutoff (int, optional): A word enters the vocabulary when its count is above this.
            Default: 150.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is ``(doc, label)``: int64 word ids of shape [n] and an int64
        label of shape [1]. ``word_idx`` maps words to ids; ``decode(ids)`` and ``view(i)``
        turn ids back into text.

    Examples:
        >>> from paddle_hl.text.datasets import Imdb
        >>> imdb = Imdb(mode='test')  # doctest: +SKIP
        >>> doc, label = imdb[0]  # doctest: +SKIP
        >>> imdb.decode(doc[:6])  # doctest: +SKIP
        'i went and saw this movie'
    """

    def __init__(self, data_file=None, mode="train", cutoff=150, download=True):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        self.data_file = _common.fetch(cls, "data_file", data_file, URL, MD5, "imdb", download)
        self.cutoff = cutoff
        reviews = self._read_reviews()
        self.word_idx = self._build_work_dict(reviews, cutoff)
        self._load_anno(reviews)
        self._id_to_word = None

    def _read_reviews(self):
        """Every labelled review as ``(split, label, tokens)``, in archive order (one pass)."""
        out = []
        with _common.reading(type(self).__name__, "data_file", self.data_file), \
                tarfile.open(self.data_file) as tf:
            for member in tf:
                m = _REVIEW.match(member.name)
                if m and member.isfile():
                    out.append((m.group(1), m.group(2), _tokenize(tf.extractfile(member).read())))
        if not out:
            raise ValueError(f"{type(self).__name__}: data_file {self.data_file!r} holds no "
                             "review aclImdb/{train,test}/{pos,neg}/*.txt; is it "
                             "aclImdb_v1.tar.gz?")
        return out

    def _build_work_dict(self, reviews, cutoff):
        freq = collections.Counter()
        for _, _, tokens in reviews:
            freq.update(tokens)
        kept = sorted(((w, c) for w, c in freq.items() if c > cutoff), key=lambda x: (-x[1], x[0]))
        if not kept:
            raise ValueError(f"{type(self).__name__}: no word occurs more than cutoff={cutoff} "
                             f"times (the most frequent occurs {max(freq.values(), default=0)} "
                             "times); lower cutoff")
        word_idx = {w: i for i, (w, _) in enumerate(kept)}
        word_idx["<unk>"] = len(kept)
        return word_idx

    def _load_anno(self, reviews):
        unk = self.word_idx["<unk>"]
        get = self.word_idx.get
        self.docs, self.labels = [], []
        for label, polarity in ((0, "pos"), (1, "neg")):
            for split, pol, tokens in reviews:
                if split == self.mode and pol == polarity:
                    # lists of ints, as Paddle keeps them (code pads them with doc + [0] * n)
                    self.docs.append([get(w, unk) for w in tokens])
                    self.labels.append(label)

    def __getitem__(self, idx):
        return np.array(self.docs[idx], dtype=np.int64), np.array([self.labels[idx]],
                                                                  dtype=np.int64)

    def __len__(self):
        return len(self.docs)

    def decode(self, ids) -> str:
        """Word ids (a list, array or Tensor) back to text, words joined by spaces."""
        if self._id_to_word is None:
            self._id_to_word = _common.invert(self.word_idx)
        return _common.join_ids(ids, self._id_to_word)

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        doc, label = self[idx]
        return _common.ItemView(f"Imdb[{idx}] ({self.mode})", [
            ("label", f"{int(label[0])} ({'positive' if label[0] == 0 else 'negative'})"),
            ("words", str(len(doc))), ("text", self.decode(doc))])
