"""The Python types of the text datasets' items and public attributes are Paddle's: code written
for Paddle pads a document with ``doc + [0] * n``, which needs the lists of ints Paddle keeps
(a NumPy array would broadcast the addition instead)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from paddle_hl.text import datasets

from tests.text.test_datasets import files, path  # noqa: F401  (the shared small archives)


def _kind(v):
    """A structural description of a value's types: containers by their first element."""
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__}[{_kind(v[0]) if v else ''}]"
    if isinstance(v, dict):
        if not v:
            return "dict[]"
        k = next(iter(v))
        return f"dict[{type(k).__name__}: {_kind(v[k])}]"
    if isinstance(v, np.ndarray):
        return f"ndarray[{v.dtype}, {v.ndim}-D]"
    return type(v).__name__


def _cases(files, home):  # noqa: F811
    conll = dict(data_file=path(files, "conll05st-tests.tar.gz"),
                 word_dict_file=path(files, "wordDict.txt"),
                 verb_dict_file=path(files, "verbDict.txt"),
                 target_dict_file=path(files, "targetDict.txt"), emb_file=path(files, "emb"))
    return [
        ("Imdb", dict(data_file=path(files, "aclImdb_v1.tar.gz"), cutoff=3)),
        ("Imikolov", dict(data_file=path(files, "simple-examples.tgz"), data_type="NGRAM",
                          window_size=3)),
        ("Imikolov", dict(data_file=path(files, "simple-examples.tgz"), data_type="SEQ")),
        ("Movielens", dict(data_file=path(files, "ml-1m.zip"))),
        ("UCIHousing", dict(data_file=path(files, "housing.data"))),
        ("WMT14", dict(data_file=path(files, "wmt14.tgz"), dict_size=10)),
        ("WMT16", dict(data_file=path(files, "wmt16.tar.gz"), src_dict_size=14,
                       trg_dict_size=14, lang="en")),
        ("Conll05st", conll),
    ]


@pytest.mark.parity
def test_item_and_attribute_types_match_paddle(pd, files, tmp_path, monkeypatch):  # noqa: F811
    os.makedirs(tmp_path / "pd" / "wmt16")
    monkeypatch.setattr(pd.dataset.common, "DATA_HOME", str(tmp_path / "pd"))
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "hl"))
    for name, kw in _cases(files, tmp_path):
        ours, ref = getattr(datasets, name)(**kw), getattr(pd.text.datasets, name)(**kw)
        assert _kind(ours[0]) == _kind(ref[0]), name
        for attr, value in vars(ref).items():
            if attr.startswith("_") or callable(value) or value is None:
                continue  # private state; WMT16 keeps an unused ``data = None``
            assert _kind(getattr(ours, attr)) == _kind(value), (name, attr)


def test_imdb_documents_are_lists_of_ints(files):  # noqa: F811
    ds = datasets.Imdb(data_file=path(files, "aclImdb_v1.tar.gz"), cutoff=3)
    doc = ds.docs[0]
    assert type(doc) is list and all(type(w) is int for w in doc)
    longest = max(len(d) for d in ds.docs)
    padded = doc + [0] * (longest - len(doc))  # Paddle code pads this way
    assert len(padded) == longest
    x, y = ds[0]
    assert x.dtype == np.int64 and x.tolist() == doc and y.tolist() == [ds.labels[0]]
