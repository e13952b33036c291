"""The CoNLL-2005 semantic role labelling test set (conll05st-tests.tar.gz) with Paddle's
word, verb and label dictionaries and embedding file."""

from __future__ import annotations

import gzip
import io
import tarfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

DATA_URL = "http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz"
DATA_MD5 = "387719152ae52d60422c016e92a742fc"
WORDDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt"
WORDDICT_MD5 = "ea7fb7d4c75cc6254716f0177a506baa"
VERBDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt"
VERBDICT_MD5 = "0d2977293bbb6cbefab5b0f97db1e77c"
TRGDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt"
TRGDICT_MD5 = "d8c7f03ceb5fc2e5a0fa7503a4353751"
EMB_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2Femb"
EMB_MD5 = "bf436eb0faa1f6f9103017f8be57cdb7"

UNK_IDX = 0

_WORDS = "conll05st-release/test.wsj/words/test.wsj.words.gz"
_PROPS = "conll05st-release/test.wsj/props/test.wsj.props.gz"

FIELDS = ("word", "ctx_n2", "ctx_n1", "ctx_0", "ctx_p1", "ctx_p2", "predicate", "mark", "label")


def _bio(column, where):
    """One predicate's bracketed argument column, e.g. ``(A0* * *) (V*)``, as BIO tags."""
    tags, tag, inside = [], "O", False
    for cell in column:
        if cell == "*":
            tags.append("I-" + tag if inside else "O")
        elif cell == "*)":
            tags.append("I-" + tag)
            inside = False
        elif cell.startswith("(") and "*" in cell:
            tag = cell[1:cell.find("*")]
            tags.append("B-" + tag)
            inside = not cell.endswith(")")
        else:
            raise ValueError(f"Conll05st: unexpected label {cell!r} in {where}")
    return tags


class Conll05st(paddle.io.Dataset):
    """The `CoNLL-2005 <https://www.cs.upc.edu/~srlconll/>`_ SRL test set (WSJ section).

    One item per (sentence, predicate): every predicate column of the props file becomes BIO
    labels. The label dictionary numbers ``B-<tag>``, ``I-<tag>`` pairs in the order their tags
    first appear in ``target_dict_file``, then ``O`` (Paddle uses the iteration order of a
    Python set, which changes from process to process).

    Args:
        data_file (str, optional): Path of ``conll05st-tests.tar.gz``. Default: None
            (download).
        word_dict_file (str, optional): Word dictionary, one word a line. Default: None
            (download).
        verb_dict_file (str, optional): Predicate dictionary. Default: None (download).
        target_dict_file (str, optional): Label dictionary. Default: None (download).
        emb_file (str, optional): Pretrained word embedding file (its path is returned by
            ``get_embedding``). Default: None (download).
        download (bool, optional): Download the files that are not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is a tuple of 9 int64 arrays of the sentence's length n: word
        ids, the ids of the words two and one before the predicate, of the predicate, one and
        two after it (each repeated n times; 'bos'/'eos' beyond the sentence), the predicate id
        (repeated), the 0/1 mark of the predicate's 5-word window, and the label ids.

    Examples:
        >>> from paddle_hl.text.datasets import Conll05st
        >>> conll = Conll05st()  # doctest: +SKIP
        >>> word_dict, verb_dict, label_dict = conll.get_dict()  # doctest: +SKIP
    """

    def __init__(self, data_file=None, word_dict_file=None, verb_dict_file=None,
                 target_dict_file=None, emb_file=None, download=True):
        cls = type(self).__name__
        fetch = _common.fetch
        self.data_file = fetch(cls, "data_file", data_file, DATA_URL, DATA_MD5, "conll05st",
                               download)
        self.word_dict_file = fetch(cls, "word_dict_file", word_dict_file, WORDDICT_URL,
                                    WORDDICT_MD5, "conll05st", download)
        self.verb_dict_file = fetch(cls, "verb_dict_file", verb_dict_file, VERBDICT_URL,
                                    VERBDICT_MD5, "conll05st", download)
        self.target_dict_file = fetch(cls, "target_dict_file", target_dict_file, TRGDICT_URL,
                                      TRGDICT_MD5, "conll05st", download)
        self.emb_file = fetch(cls, "emb_file", emb_file, EMB_URL, EMB_MD5, "conll05st",
                              download)
        self.word_dict = self._load_dict(self.word_dict_file, "word_dict_file")
        self.predicate_dict = self._load_dict(self.verb_dict_file, "verb_dict_file")
        self.label_dict = self._load_label_dict(self.target_dict_file)
        self._load_anno()
        self._inverse = {}

    def _read_lines(self, path, arg):
        with _common.reading(type(self).__name__, arg, path), open(path, "rb") as f:
            return [line.decode("utf-8").strip() for line in f]

    def _load_dict(self, path, arg):
        return {w: i for i, w in enumerate(self._read_lines(path, arg))}

    def _load_label_dict(self, path):
        tags = {}
        for line in self._read_lines(path, "target_dict_file"):
            if line.startswith(("B-", "I-")):
                tags.setdefault(line[2:], None)
        d = {}
        for tag in tags:
            d["B-" + tag] = len(d)
            d["I-" + tag] = len(d)
        d["O"] = len(d)
        return d

    def _load_anno(self):
        cls = type(self).__name__
        with _common.reading(cls, "data_file", self.data_file), \
                tarfile.open(self.data_file) as tf:
            words = gzip.decompress(_common.tar_member(tf, _WORDS, cls, "data_file"))
            props = gzip.decompress(_common.tar_member(tf, _PROPS, cls, "data_file"))
        self.sentences, self.predicates, self.labels = [], [], []
        tokens, rows = [], []
        for n, (word, prop) in enumerate(zip(io.BytesIO(words), io.BytesIO(props)), 1):
            word, cells = word.strip().decode(), prop.strip().decode().split()
            if cells:
                tokens.append(word)
                rows.append(cells)
                continue
            # a blank line ends a sentence: column 0 holds the predicate lemmas ('-' elsewhere),
            # each further column one predicate's arguments
            if rows:
                if len({len(r) for r in rows}) != 1:
                    raise ValueError(f"{cls}: the sentence ending at line {n} of {_PROPS} in "
                                     f"data_file {self.data_file!r} has rows of different "
                                     "column counts")
                columns = list(zip(*rows))
                verbs = [v for v in columns[0] if v != "-"]
                if len(verbs) != len(columns) - 1:
                    raise ValueError(f"{cls}: the sentence ending at line {n} of {_PROPS} has "
                                     f"{len(verbs)} predicates but {len(columns) - 1} "
                                     "argument columns")
                for verb, column in zip(verbs, columns[1:]):
                    self.sentences.append(tokens)
                    self.predicates.append(verb)
                    self.labels.append(_bio(column, f"line {n} of {_PROPS}"))
            tokens, rows = [], []

    def __getitem__(self, idx):
        sentence, predicate, labels = self.sentences[idx], self.predicates[idx], self.labels[idx]
        n = len(sentence)
        if "B-V" not in labels:
            raise ValueError(f"Conll05st: item {idx} has no predicate label 'B-V'")
        v = labels.index("B-V")
        mark = np.zeros(n, dtype=np.int64)
        mark[max(v - 2, 0):v + 3] = 1
        ctx = [sentence[v + k] if 0 <= v + k < n else ("bos" if k < 0 else "eos")
               for k in (-2, -1, 0, 1, 2)]
        get = self.word_dict.get
        word_idx = np.array([get(w, UNK_IDX) for w in sentence], dtype=np.int64)
        ctx_idx = [np.full(n, get(w, UNK_IDX), dtype=np.int64) for w in ctx]
        if predicate not in self.predicate_dict:
            raise KeyError(f"Conll05st: predicate {predicate!r} of item {idx} is not in "
                           f"verb_dict_file {self.verb_dict_file!r}")
        pred_idx = np.full(n, self.predicate_dict[predicate], dtype=np.int64)
        unknown = [t for t in labels if t not in self.label_dict]
        if unknown:
            raise KeyError(f"Conll05st: labels {unknown} of item {idx} are not in "
                           f"target_dict_file {self.target_dict_file!r}")
        label_idx = np.array([self.label_dict[t] for t in labels], dtype=np.int64)
        return (word_idx, *ctx_idx, pred_idx, mark, label_idx)

    def __len__(self):
        return len(self.sentences)

    def get_dict(self):
        """The word, predicate and label dictionaries (``{token: id}``).

        Returns:
            tuple[dict, dict, dict]: ``(word_dict, predicate_dict, label_dict)``.
        """
        return self.word_dict, self.predicate_dict, self.label_dict

    def get_embedding(self):
        """The path of the embedding file.

        Returns:
            str: ``emb_file``.
        """
        return self.emb_file

    def decode(self, ids, vocab="word") -> str:
        """Ids back to text through the 'word', 'predicate' or 'label' dictionary."""
        if vocab not in self._inverse:
            d = {"word": self.word_dict, "predicate": self.predicate_dict,
                 "label": self.label_dict}[vocab]
            self._inverse[vocab] = _common.invert(d)
        return _common.join_ids(ids, self._inverse[vocab])

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        item = self[idx]
        return _common.ItemView(f"Conll05st[{idx}]", [
            ("words", self.decode(item[0])),
            ("predicate", self.decode(item[6][:1], "predicate")),
            ("mark", " ".join(map(str, item[7].tolist()))),
            ("labels", self.decode(item[8], "label")),
            ("sentence", " ".join(self.sentences[idx]))])
