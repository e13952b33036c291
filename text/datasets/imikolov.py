"""The Penn Treebank language-modelling corpus of Mikolov's simple-examples.tgz."""

from __future__ import annotations

import collections
import io
import tarfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

URL = "https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz"
MD5 = "30177ea32e27c525793142b6bf2c8e2d"

_FILE = "./simple-examples/data/ptb.{}.txt"


def _order_key(item):
    # decreasing count, then the word; the str markers ('<s>', '<e>') compare as bytes so that
    # a tie between a marker and a (bytes) word has an order instead of a TypeError
    word, count = item
    return -count, word.encode() if isinstance(word, str) else word


class Imikolov(paddle.io.Dataset):
    """The PTB corpus from `Mikolov's simple-examples <http://www.fit.vutbr.cz/~imikolov/rnnlm/>`_.

    The vocabulary counts the words of ``ptb.train.txt`` and ``ptb.valid.txt`` (byte strings,
    as in Paddle) plus one ``'<s>'`` and one ``'<e>'`` per line; words seen more than
    ``min_word_freq`` times are kept, ordered by decreasing count then bytewise, and ``'<unk>'``
    comes last. As in Paddle, the corpus's own ``<unk>`` token (``b'<unk>'``) is an ordinary word.
    'train' reads ``ptb.train.txt``, 'test' reads ``ptb.test.txt``.

    Args:
        data_file (str, optional): Path of ``simple-examples.tgz``; None downloads it to
            ``DATA_HOME/imikolov`` when ``download`` is True. Default: None.
        data_type (str, optional): 'NGRAM': every window of ``window_size`` consecutive ids of
            ``<s> sentence <e>``; 'SEQ': ``(<s> + sentence, sentence + <e>)`` pairs, skipping
            sentences longer than ``window_size`` when it is positive. Default: 'NGRAM'.
        window_size (int, optional): N-gram size (required, positive, for 'NGRAM') or the
            maximum sequence length for 'SEQ' (-1: no limit). Default: -1.
        mode (str, optional): 'train' or 'test'. Default: 'train'.
        min_word_freq (int, optional): A word enters the vocabulary when its count is above
            this. Default: 50.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: for 'NGRAM', ``dataset[i]`` is a tuple of ``window_size`` 0-D int64 arrays; for
        'SEQ', ``(src, trg)`` int64 arrays of shape [n]. ``decode(ids)`` turns ids into text.

    Examples:
        >>> from paddle_hl.text.datasets import Imikolov
        >>> ptb = Imikolov(data_type='NGRAM', window_size=5, mode='test')  # doctest: +SKIP
        >>> len(ptb[0])  # doctest: +SKIP
        5
    """

    def __init__(self, data_file=None, data_type="NGRAM", window_size=-1, mode="train",
                 min_word_freq=50, download=True):
        cls = type(self).__name__
        if not isinstance(data_type, str) or data_type.upper() not in ("NGRAM", "SEQ"):
            raise _common.DatasetArgumentError(f"{cls}: data_type should be 'NGRAM' or 'SEQ', "
                                               f"but got {data_type!r}")
        self.data_type = data_type.upper()
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        if isinstance(window_size, bool) or not isinstance(window_size, int):
            raise _common.DatasetArgumentError(f"{cls}: window_size should be an int, but got "
                                               f"{window_size!r}")
        if self.data_type == "NGRAM" and window_size <= 0:
            raise _common.DatasetArgumentError(f"{cls}: window_size (the n-gram length) should "
                                               f"be positive for data_type='NGRAM', but got "
                                               f"{window_size}")
        self.window_size = window_size
        self.min_word_freq = min_word_freq
        self.data_file = _common.fetch(cls, "data_file", data_file, URL, MD5, "imikolov",
                                       download)
        with _common.reading(cls, "data_file", self.data_file), \
                tarfile.open(self.data_file) as tf:
            texts = {name: _common.tar_member(tf, _FILE.format(name), cls, "data_file")
                     for name in {"train", "valid", self.mode}}
        self.word_idx = self._build_work_dict(texts, min_word_freq)
        self._load_anno(texts[self.mode])
        self._id_to_word = None

    def word_count(self, f, word_freq=None):
        """Add the words of the lines of ``f`` (bytes lines) to ``word_freq``, plus one
        ``'<s>'`` and one ``'<e>'`` per line.

        Args:
            f (Iterable[bytes]): Lines of a corpus file.
            word_freq (dict, optional): Counts to add to; None starts empty. Default: None.

        Returns:
            dict: ``{word: count}``.
        """
        if word_freq is None:
            word_freq = collections.defaultdict(int)
        for line in f:
            for w in line.strip().split():
                word_freq[w] += 1
            word_freq["<s>"] += 1
            word_freq["<e>"] += 1
        return word_freq

    def _build_work_dict(self, texts, cutoff):
        freq = self.word_count(io.BytesIO(texts["valid"]),
                               self.word_count(io.BytesIO(texts["train"])))
        kept = sorted(((w, c) for w, c in freq.items() if c > cutoff), key=_order_key)
        word_idx = {w: i for i, (w, _) in enumerate(kept)}
        word_idx["<unk>"] = len(kept)
        return word_idx

    def _load_anno(self, text: bytes):
        unk = self.word_idx["<unk>"]
        get = self.word_idx.get
        bos, eos = get("<s>", unk), get("<e>", unk)
        n = self.window_size
        self.data = []
        for line in io.BytesIO(text):  # lines end at b'\n' only, as a file's do
            ids = [get(w, unk) for w in line.strip().split()]
            if self.data_type == "NGRAM":
                ids = [bos] + ids + [eos]
                self.data.extend(tuple(ids[i - n:i]) for i in range(n, len(ids) + 1))
            elif n <= 0 or len(ids) + 1 <= n:
                self.data.append(([bos] + ids, ids + [eos]))

    def __getitem__(self, idx):
        return tuple(np.array(d, dtype=np.int64) for d in self.data[idx])

    def __len__(self):
        return len(self.data)

    def decode(self, ids) -> str:
        """Word ids (a list, array or Tensor) back to text, words joined by spaces."""
        if self._id_to_word is None:
            self._id_to_word = _common.invert(self.word_idx)
        return _common.join_ids(ids, self._id_to_word)

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        item = self[idx]
        if self.data_type == "NGRAM":
            rows = [("n-gram", self.decode(np.stack(item)))]
        else:
            rows = [("src", self.decode(item[0])), ("trg", self.decode(item[1]))]
        return _common.ItemView(f"Imikolov[{idx}] ({self.mode}, {self.data_type})", rows)
