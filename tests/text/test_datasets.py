"""paddle_hl.text.datasets on small archives in the real layouts, downloaded from a local HTTP
server (tests/http_server.py) through paddle_hl.utils.download, and compared item by item with
what Paddle 2.6.2 yields from the same files."""

from __future__ import annotations

import collections
import hashlib
import io
import os
import shutil
import tarfile
from urllib.parse import unquote

import numpy as np
import pytest
from paddle_hl.text import datasets
from paddle_hl.text.datasets import conll05, imdb, imikolov, movielens, uci_housing, wmt14, wmt16

import paddle_hl as paddle
from tests.http_server import serve_directory
from tests.text import archives

# ------------------------------------------------------------------------------------------------
# fixtures


def _imikolov_without_marker_ties():
    # Paddle sorts the vocabulary by (count, word) with bytes words and str markers: a word whose
    # count equals the number of lines (the count of '<s>') makes it raise TypeError. Pick a
    # seed whose corpus has no such tie, so that the oracle can run.
    for seed in range(100):
        data = archives.imikolov_tar(np.random.default_rng(seed))
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            lines = [line for name in ("train", "valid") for line in io.BytesIO(
                tf.extractfile(f"./simple-examples/data/ptb.{name}.txt").read())]
        counts = collections.Counter(w for line in lines for w in line.split())
        if len(lines) not in counts.values():
            return data
    raise AssertionError("no seed without ties")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Every fake dataset file, written once: {name: bytes} plus 'dir', where they lie."""
    rng = np.random.default_rng(2024)
    out = {"aclImdb_v1.tar.gz": archives.imdb_tar(rng),
           "simple-examples.tgz": _imikolov_without_marker_ties(),
           "ml-1m.zip": archives.movielens_zip(rng),
           "wmt14.tgz": archives.wmt14_tar(rng),
           "wmt16.tar.gz": archives.wmt16_tar(rng)}
    out["housing.data"], out["housing-truth"] = archives.uci_housing(rng)
    out.update(archives.conll05_files(rng))
    root = tmp_path_factory.mktemp("text-datasets")
    for name, data in out.items():
        if isinstance(data, bytes):
            (root / name).write_bytes(data)
    out["dir"] = root
    return out


def path(files, name):
    return str(files["dir"] / name)


@pytest.fixture
def server(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        yield srv


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


# (module, URL variable, MD5 variable, served file)
TABLE = [(imdb, "URL", "MD5", "aclImdb_v1.tar.gz"),
         (imikolov, "URL", "MD5", "simple-examples.tgz"),
         (uci_housing, "URL", "MD5", "housing.data"),
         (movielens, "URL", "MD5", "ml-1m.zip"),
         (wmt14, "URL_TRAIN", "MD5_TRAIN", "wmt14.tgz"),
         (wmt16, "DATA_URL", "DATA_MD5", "wmt16.tar.gz"),
         (conll05, "DATA_URL", "DATA_MD5", "conll05st-tests.tar.gz"),
         (conll05, "WORDDICT_URL", "WORDDICT_MD5", "wordDict.txt"),
         (conll05, "VERBDICT_URL", "VERBDICT_MD5", "verbDict.txt"),
         (conll05, "TRGDICT_URL", "TRGDICT_MD5", "targetDict.txt"),
         (conll05, "EMB_URL", "EMB_MD5", "emb")]


@pytest.fixture
def hosted(files, server, home, monkeypatch):
    """Every URL/md5 constant points at the local server, which hosts the fake files under the
    real URLs' file names."""
    for mod, url_var, md5_var, name in TABLE:
        real = getattr(mod, url_var).rsplit("/", 1)[1]  # e.g. imdb%2FaclImdb_v1.tar.gz
        server.put(f"data/{unquote(real)}", files[name])  # the server unquotes request paths
        monkeypatch.setattr(mod, url_var, server.url(f"data/{real}"))
        monkeypatch.setattr(mod, md5_var, hashlib.md5(files[name]).hexdigest())
    return server


def _cache(home, *parts):
    return os.path.join(str(home), "dataset", *parts)


def assert_items_equal(ours, ref):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert isinstance(a, np.ndarray)
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------------------------
# downloads through the shared helper


@pytest.mark.parametrize("cls,kwargs,cache", [
    (datasets.Imdb, {"cutoff": 3}, ("imdb", "imdb%2FaclImdb_v1.tar.gz")),
    (datasets.Imikolov, {"window_size": 3, "min_word_freq": 2},
     ("imikolov", "imikolov%2Fsimple-examples.tgz")),
    (datasets.UCIHousing, {}, ("uci_housing", "housing.data")),
    (datasets.Movielens, {}, ("sentiment", "movielens%2Fml-1m.zip")),
    (datasets.WMT14, {"dict_size": 10}, ("wmt14", "wmt14.tgz")),
    (datasets.WMT16, {"src_dict_size": 10, "trg_dict_size": 10}, ("wmt16", "wmt16.tar.gz")),
])
def test_download_into_cache_once(hosted, home, cls, kwargs, cache):
    ds = cls(**kwargs)
    assert ds.data_file == _cache(home, *cache)
    assert len(ds) > 0
    cls(**kwargs)  # a second instance reads the cache
    assert hosted.hits(f"data/{unquote(cache[1])}") == 1


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", [
    ("Imdb", {"mode": "test", "cutoff": 1}),
    ("Imikolov", {"data_type": "SEQ", "min_word_freq": 1}),
    ("UCIHousing", {"mode": "train"}),
    ("WMT14", {"mode": "gen", "dict_size": 20}),
])
def test_downloaded_archive_matches_paddle(pd, hosted, name, kwargs):
    # ours downloads from the local server; Paddle reads the file that landed in the cache
    ds = getattr(datasets, name)(**kwargs)
    ref = getattr(pd.text.datasets, name)(data_file=ds.data_file, **kwargs)
    assert len(ds) == len(ref) > 0
    for i in range(len(ds)):
        ours, theirs = ds[i], ref[i]
        if name == "UCIHousing":
            for a, b in zip(ours, theirs):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        else:
            assert_items_equal(ours, theirs)


def test_conll05_downloads_its_five_files(hosted, home):
    ds = datasets.Conll05st()
    assert ds.get_embedding() == _cache(home, "conll05st", "conll05st%2Femb")
    assert ds.word_dict_file == _cache(home, "conll05st", "conll05st%2FwordDict.txt")
    assert sorted(os.listdir(_cache(home, "conll05st"))) == sorted(
        ["conll05st-tests.tar.gz", "conll05st%2FwordDict.txt", "conll05st%2FverbDict.txt",
         "conll05st%2FtargetDict.txt", "conll05st%2Femb"])


@pytest.mark.parametrize("fault", ["truncate", "corrupt", "fail"])
def test_failed_download_caches_nothing(hosted, home, fault):
    getattr(hosted, fault)("data/imdb/aclImdb_v1.tar.gz", times=2)
    with pytest.raises(RuntimeError, match=r"Imdb: .*imdb%2FaclImdb_v1.tar.gz.*data_file="):
        datasets.Imdb()
    assert os.listdir(_cache(home, "imdb")) == []


def test_truncated_download_is_retried(hosted):
    hosted.truncate("data/housing.data", times=1)
    assert len(datasets.UCIHousing(mode="test")) > 0
    assert hosted.hits("data/housing.data") == 2


# ------------------------------------------------------------------------------------------------
# parity with Paddle 2.6.2 on the same files


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["train", "test"])
@pytest.mark.parametrize("cutoff", [0, 3])
def test_imdb_matches_paddle(pd, files, mode, cutoff):
    f = path(files, "aclImdb_v1.tar.gz")
    ref = pd.text.datasets.Imdb(data_file=f, mode=mode, cutoff=cutoff)
    ds = datasets.Imdb(data_file=f, mode=mode, cutoff=cutoff)
    assert ds.word_idx == ref.word_idx
    assert len(ds) == len(ref) == 8
    for i in range(len(ds)):
        assert_items_equal(ds[i], ref[i])
    assert ds[0][1].shape == (1,) and ds[0][1][0] == 0 and ds[-1][1][0] == 1


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["train", "test"])
@pytest.mark.parametrize("data_type,window_size", [("NGRAM", 3), ("ngram", 1), ("SEQ", -1),
                                                   ("SEQ", 6)])
@pytest.mark.parametrize("min_word_freq", [0, 5])
def test_imikolov_matches_paddle(pd, files, mode, data_type, window_size, min_word_freq):
    f = path(files, "simple-examples.tgz")
    kw = dict(data_file=f, data_type=data_type, window_size=window_size, mode=mode,
              min_word_freq=min_word_freq)
    ref = pd.text.datasets.Imikolov(**kw)
    ds = datasets.Imikolov(**kw)
    assert ds.word_idx == ref.word_idx
    assert len(ds) == len(ref) > 0
    for i in range(0, len(ds), 3):
        assert_items_equal(ds[i], ref[i])


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["train", "test"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uci_housing_matches_paddle(pd, files, mode, dtype):
    f = path(files, "housing.data")
    pd.set_default_dtype(dtype)
    paddle.set_default_dtype(dtype)
    ref = pd.text.datasets.UCIHousing(data_file=f, mode=mode)
    ds = datasets.UCIHousing(data_file=f, mode=mode)
    assert len(ds) == len(ref) == (24 if mode == "train" else 7)
    for i in range(len(ds)):
        x, y = ds[i]
        rx, ry = ref[i]
        assert x.dtype == rx.dtype == np.dtype(dtype) and x.shape == (13,) and y.shape == (1,)
        np.testing.assert_allclose(x, rx, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(y, ry, rtol=1e-6)


def test_uci_housing_normalisation(files):
    data = files["housing-truth"]
    ds = datasets.UCIHousing(data_file=path(files, "housing.data"), mode="train")
    parsed = np.loadtxt(path(files, "housing.data"))
    np.testing.assert_allclose(parsed, data, atol=1e-4)
    expected = (parsed[:, :13] - parsed[:, :13].mean(0)) / np.ptp(parsed[:, :13], axis=0)
    np.testing.assert_allclose(ds[3][0], expected[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ds[3][1], parsed[3, 13:], rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("mode,test_ratio,rand_seed", [("train", 0.1, 0), ("test", 0.3, 0),
                                                       ("test", 0.5, 7)])
def test_movielens_matches_paddle(pd, files, mode, test_ratio, rand_seed):
    f = path(files, "ml-1m.zip")
    kw = dict(data_file=f, mode=mode, test_ratio=test_ratio, rand_seed=rand_seed)
    ref = pd.text.datasets.Movielens(**kw)
    ds = datasets.Movielens(**kw)
    # Paddle numbers categories and title words in a set's (per-process) order: compare words
    assert set(ds.categories_dict) == set(ref.categories_dict)
    assert set(ds.movie_title_dict) == set(ref.movie_title_dict)
    ref_cat = {v: k for k, v in ref.categories_dict.items()}
    ref_title = {v: k for k, v in ref.movie_title_dict.items()}
    assert len(ds) == len(ref) > 0
    for i in range(len(ds)):
        ours, theirs = ds[i], ref[i]
        assert len(ours) == len(theirs) == 8
        for k in (0, 1, 2, 3, 4, 7):
            assert ours[k].dtype == theirs[k].dtype and ours[k].shape == theirs[k].shape
            np.testing.assert_array_equal(ours[k], theirs[k])
        assert ds.decode(ours[5], "categories").split() == [ref_cat[j] for j in theirs[5]]
        assert ds.decode(ours[6]).split() == [ref_title[j] for j in theirs[6]]
        assert ours[5].dtype == ours[6].dtype == np.int64


@pytest.mark.parity
def test_conll05_matches_paddle(pd, files):
    kw = dict(data_file=path(files, "conll05st-tests.tar.gz"),
              word_dict_file=path(files, "wordDict.txt"),
              verb_dict_file=path(files, "verbDict.txt"),
              target_dict_file=path(files, "targetDict.txt"), emb_file=path(files, "emb"))
    ref = pd.text.datasets.Conll05st(**kw)
    ds = datasets.Conll05st(**kw)
    wd, vd, ld = ds.get_dict()
    rwd, rvd, rld = ref.get_dict()
    assert wd == rwd and vd == rvd
    # Paddle numbers the labels in a set's (per-process) order: compare label names
    assert set(ld) == set(rld) and ld["O"] == rld["O"] == len(ld) - 1
    ref_label = {v: k for k, v in rld.items()}
    assert ds.get_embedding() == ref.get_embedding() == kw["emb_file"]
    assert len(ds) == len(ref) > 3
    for i in range(len(ds)):
        ours, theirs = ds[i], ref[i]
        assert_items_equal(ours[:8], theirs[:8])
        assert ds.decode(ours[8], "label").split() == [ref_label[j] for j in theirs[8]]


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["train", "test", "gen"])
@pytest.mark.parametrize("dict_size", [8, 30])
def test_wmt14_matches_paddle(pd, files, mode, dict_size):
    f = path(files, "wmt14.tgz")
    ref = pd.text.datasets.WMT14(data_file=f, mode=mode, dict_size=dict_size)
    ds = datasets.WMT14(data_file=f, mode=mode, dict_size=dict_size)
    assert ds.get_dict() == ref.get_dict()
    assert ds.get_dict(reverse=True) == ref.get_dict(reverse=True)
    assert len(ds) == len(ref) > 0
    for i in range(len(ds)):
        assert_items_equal(ds[i], ref[i])


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["train", "test", "val"])
@pytest.mark.parametrize("lang", ["en", "de"])
def test_wmt16_matches_paddle(pd, files, tmp_path, monkeypatch, mode, lang):
    # Paddle writes its dictionaries under DATA_HOME/wmt16 and reuses them; it builds both
    # dictionaries from the source column, so each language's dictionary is first built where
    # that language is the source, and the reference runs on a cache holding the two
    f = path(files, "wmt16.tar.gz")
    for lg in ("en", "de"):
        # a cache of its own per language, where that language is the source
        home = tmp_path / lg
        os.makedirs(home / "wmt16")
        monkeypatch.setattr(pd.dataset.common, "DATA_HOME", str(home))
        pd.text.datasets.WMT16(data_file=f, src_dict_size=14, trg_dict_size=14, lang=lg)
        shutil.copy(home / "wmt16" / f"{lg}_14.dict", tmp_path / f"{lg}_14.dict")
    os.makedirs(tmp_path / "both" / "wmt16")
    for lg in ("en", "de"):
        shutil.copy(tmp_path / f"{lg}_14.dict", tmp_path / "both" / "wmt16" / f"{lg}_14.dict")
    monkeypatch.setattr(pd.dataset.common, "DATA_HOME", str(tmp_path / "both"))
    ref = pd.text.datasets.WMT16(data_file=f, mode=mode, src_dict_size=14, trg_dict_size=14,
                                 lang=lang)
    ds = datasets.WMT16(data_file=f, mode=mode, src_dict_size=14, trg_dict_size=14, lang=lang)
    for lg in ("en", "de"):
        assert ds.get_dict(lg) == ref.get_dict(lg)
    assert len(ds) == len(ref) > 0
    for i in range(len(ds)):
        assert_items_equal(ds[i], ref[i])


# ------------------------------------------------------------------------------------------------
# behaviour without the oracle


def test_imdb_vocabulary_and_items(files):
    ds = datasets.Imdb(data_file=path(files, "aclImdb_v1.tar.gz"), mode="test", cutoff=2)
    words = [w for w in ds.word_idx if w != "<unk>"]
    assert all(isinstance(w, bytes) for w in words) and ds.word_idx["<unk>"] == len(words)
    assert b"the" in ds.word_idx and b"br" in ds.word_idx  # <br /> minus its punctuation
    assert not any(c in w for w in words for c in b".,!'<>/")
    doc, label = ds[0]
    assert doc.dtype == np.int64 and doc.ndim == 1 and label.tolist() == [0]
    text = ds.decode(doc)
    assert text.split()[-1] in ("café", "<unk>") and text == text.lower()
    view = ds.view(0)
    assert "positive" in repr(view) and "<table" in view._repr_html_()
    assert view["text"] == text


def test_imikolov_items(files):
    f = path(files, "simple-examples.tgz")
    ngram = datasets.Imikolov(data_file=f, data_type="NGRAM", window_size=4, min_word_freq=0)
    item = ngram[0]
    assert len(item) == 4 and all(a.shape == () and a.dtype == np.int64 for a in item)
    assert item[0] == ngram.word_idx["<s>"]
    assert ngram.view(0)["n-gram"].startswith("<s> ")
    seq = datasets.Imikolov(data_file=f, data_type="SEQ", mode="test", min_word_freq=0)
    src, trg = seq[0]
    assert src[0] == seq.word_idx["<s>"] and trg[-1] == seq.word_idx["<e>"]
    np.testing.assert_array_equal(src[1:], trg[:-1])
    assert b"<unk>" in seq.word_idx  # the corpus's own token is a word, as in Paddle


def test_wmt_decode_and_views(files):
    ds = datasets.WMT16(data_file=path(files, "wmt16.tar.gz"), src_dict_size=50,
                        trg_dict_size=50, lang="de")
    src, trg, nxt = ds[0]
    assert ds.decode(src, "de").split()[0] == "<s>" and ds.decode(nxt).endswith("<e>")
    assert all(w.endswith("_de") for w in ds.decode(src, "de").split()[1:-1])
    assert ds.get_dict("en", reverse=True)[0] == "<s>"
    assert "de->en" in repr(ds.view(0))
    w14 = datasets.WMT14(data_file=path(files, "wmt14.tgz"), dict_size=12)
    assert w14.view(1)["src"].startswith("<s>")
    # the long pairs (85 source words) are dropped
    assert all(len(s) <= 80 for s in w14.src_ids)


def test_conll05_items_and_view(files):
    ds = datasets.Conll05st(data_file=path(files, "conll05st-tests.tar.gz"),
                            word_dict_file=path(files, "wordDict.txt"),
                            verb_dict_file=path(files, "verbDict.txt"),
                            target_dict_file=path(files, "targetDict.txt"),
                            emb_file=path(files, "emb"))
    item = ds[0]
    assert len(item) == 9 and all(a.dtype == np.int64 and a.shape == item[0].shape for a in item)
    labels = ds.decode(item[8], "label").split()
    v = labels.index("B-V")
    assert item[7][v] == 1 and item[7].sum() == min(v, 2) + 1 + min(len(labels) - 1 - v, 2)
    assert "B-V" in ds.view(0)["labels"]


def test_movielens_view(files):
    ds = datasets.Movielens(data_file=path(files, "ml-1m.zip"), mode="train")
    html = ds.view(0)._repr_html_()
    assert "stars" in html and "movie" in html
    cité = [k for k in ds.movie_title_dict if k.startswith("cit")]
    assert cité == ["cité"]  # latin-1 decoded


def test_lowercase_modules_and_namespace():
    import paddle_hl.text as text

    for name in ("imdb", "imikolov", "uci_housing", "movielens", "conll05", "wmt14", "wmt16"):
        assert hasattr(text.datasets, name)
    assert text.datasets.imdb.Imdb is text.Imdb is paddle.text.datasets.Imdb
    assert sorted(text.__all__) == sorted(["Conll05st", "Imdb", "Imikolov", "Movielens",
                                           "UCIHousing", "ViterbiDecoder", "WMT14", "WMT16",
                                           "viterbi_decode"])


def test_works_with_dataloader(files):
    ds = datasets.UCIHousing(data_file=path(files, "housing.data"))
    x, y = next(iter(paddle.io.DataLoader(ds, batch_size=4)))
    assert x.shape == [4, 13] and y.shape == [4, 1] and x.dtype == paddle.float32


# ------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("make", [
    lambda f: datasets.Imdb(data_file=f("aclImdb_v1.tar.gz"), mode="valid"),
    lambda f: datasets.Imikolov(data_file=f("simple-examples.tgz"), mode="dev"),
    lambda f: datasets.UCIHousing(data_file=f("housing.data"), mode="val"),
    lambda f: datasets.Movielens(data_file=f("ml-1m.zip"), mode="eval"),
    lambda f: datasets.WMT14(data_file=f("wmt14.tgz"), mode="val", dict_size=5),
    lambda f: datasets.WMT16(data_file=f("wmt16.tar.gz"), mode="gen", src_dict_size=5,
                             trg_dict_size=5),
])
def test_unknown_mode(files, make):
    with pytest.raises(AssertionError, match="mode should be one of"):
        make(lambda n: path(files, n))
    with pytest.raises(ValueError, match="mode"):
        make(lambda n: path(files, n))


def test_bad_arguments(files):
    with pytest.raises(ValueError, match="data_type should be 'NGRAM' or 'SEQ'"):
        datasets.Imikolov(data_file=path(files, "simple-examples.tgz"), data_type="BIGRAM")
    with pytest.raises(ValueError, match="window_size .* positive for data_type='NGRAM'"):
        datasets.Imikolov(data_file=path(files, "simple-examples.tgz"))
    with pytest.raises(ValueError, match="dict_size should be set as a positive integer"):
        datasets.WMT14(data_file=path(files, "wmt14.tgz"))
    with pytest.raises(ValueError, match="trg_dict_size should be set as a positive"):
        datasets.WMT16(data_file=path(files, "wmt16.tar.gz"), src_dict_size=4)
    with pytest.raises(ValueError, match="lang should be 'en' or 'de'"):
        datasets.WMT16(data_file=path(files, "wmt16.tar.gz"), src_dict_size=4, trg_dict_size=4,
                       lang="fr")
    with pytest.raises(ValueError, match="no word occurs more than cutoff=1000"):
        datasets.Imdb(data_file=path(files, "aclImdb_v1.tar.gz"), cutoff=1000)
    with pytest.raises(AssertionError, match="data_file is not set and downloading"):
        datasets.Imdb(download=False)
    with pytest.raises(FileNotFoundError, match="data_file"):
        datasets.UCIHousing(data_file=path(files, "nope.data"))


@pytest.mark.parametrize("cls,name,kwargs", [
    (datasets.Imdb, "aclImdb_v1.tar.gz", {}),
    (datasets.Imikolov, "simple-examples.tgz", {"window_size": 2}),
    (datasets.Movielens, "ml-1m.zip", {}),
    (datasets.WMT14, "wmt14.tgz", {"dict_size": 5}),
    (datasets.WMT16, "wmt16.tar.gz", {"src_dict_size": 5, "trg_dict_size": 5}),
    (datasets.UCIHousing, "housing.data", {}),
])
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_corrupt_or_truncated_archive(files, tmp_path, cls, name, kwargs, damage):
    data = files[name]
    bad = data[: len(data) * 2 // 3] if damage == "truncated" else bytes(range(256)) * 4
    target = tmp_path / name
    target.write_bytes(bad)
    with pytest.raises(ValueError, match=rf"{cls.__name__}: .*data_file .*{name}"):
        cls(data_file=str(target), **kwargs)


def test_conll05_corrupt_files(files, tmp_path):
    kw = dict(data_file=path(files, "conll05st-tests.tar.gz"),
              word_dict_file=path(files, "wordDict.txt"),
              verb_dict_file=path(files, "verbDict.txt"),
              target_dict_file=path(files, "targetDict.txt"), emb_file=path(files, "emb"))
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(files["conll05st-tests.tar.gz"][:300])
    with pytest.raises(ValueError, match="Conll05st: cannot read data_file"):
        datasets.Conll05st(**{**kw, "data_file": str(bad)})
    other = tmp_path / "other.tar.gz"
    other.write_bytes(files["wmt14.tgz"])
    with pytest.raises(ValueError, match="data_file .* has no file 'conll05st-release/test.wsj"):
        datasets.Conll05st(**{**kw, "data_file": str(other)})
    latin = tmp_path / "dict.txt"
    latin.write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match="cannot read word_dict_file"):
        datasets.Conll05st(**{**kw, "word_dict_file": str(latin)})


def test_movielens_inconsistent_files(tmp_path):
    import zipfile

    def write(users, ratings):
        target = tmp_path / "ml.zip"
        with zipfile.ZipFile(target, "w") as zf:
            zf.writestr("ml-1m/movies.dat", "1::Heat (1995)::Action|Crime\n")
            zf.writestr("ml-1m/users.dat", users)
            zf.writestr("ml-1m/ratings.dat", ratings)
        return str(target)

    with pytest.raises(ValueError, match=r"unexpected line in ml-1m/users.dat.*1::M::30"):
        datasets.Movielens(data_file=write("1::M::30::4::12345\n", ""))
    with pytest.raises(ValueError, match="rates user 2 / movie 1"):
        datasets.Movielens(data_file=write("1::M::25::4::12345\n", "2::1::5::978300760\n"),
                           test_ratio=0.0)
    ds = datasets.Movielens(data_file=write("1::F::25::4::12345\n", "1::1::4::978300760\n"),
                            test_ratio=0.0)
    assert [a.tolist() for a in ds[0]] == [[1], [1], [2], [4], [1], [0, 1], [0], [3.0]]
