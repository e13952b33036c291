"""Small archives in the real layouts of the text datasets, built in memory for the tests."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

import numpy as np

__all__ = ["WORDS", "imdb_tar", "imikolov_tar", "uci_housing", "movielens_zip", "conll05_files",
           "wmt14_tar", "wmt16_tar", "sentence"]

# a small vocabulary; sentences draw from it with Zipf-like weights so that some words pass
# the frequency cut-offs and some do not, and frequencies tie
WORDS = ("the a of and to in is it that was film movie good bad great plot actor story time "
         "really even just like love hate best worst scene ending music funny boring").split()


def sentence(rng, n, words=WORDS):
    p = 1.0 / np.arange(1, len(words) + 1)
    idx = rng.choice(len(words), size=n, p=p / p.sum())
    return [words[i] for i in idx]


def _add(tf, name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    tf.addfile(ti, io.BytesIO(data))


def tar_bytes(members, mode="w:gz", order=None):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name in order or members:
            _add(tf, name, members[name])
    return buf.getvalue()


def imdb_tar(rng, per_class=4):
    """aclImdb_v1.tar.gz: aclImdb/{train,test}/{pos,neg}/<id>_<stars>.txt review files (with
    punctuation, capitals and <br /> tags), plus unsup/ reviews and the vocab file, which are
    not part of the dataset."""
    members = {"aclImdb/README": b"Large Movie Review Dataset v1.0\n",
               "aclImdb/imdb.vocab": ("\n".join(WORDS) + "\n").encode()}
    for split in ("train", "test"):
        for label in ("pos", "neg", "unsup"):
            for i in range(per_class if label != "unsup" else 2):
                words = sentence(rng, int(rng.integers(5, 30)))
                words[0] = words[0].capitalize()
                text = " ".join(words[:5]) + ", " + " ".join(words[5:]) + "!<br /><br />It's "
                text += ("GREAT." if label == "pos" else "bad...") + " caf\xe9\n"
                stars = int(rng.integers(7, 11) if label == "pos" else rng.integers(1, 5))
                members[f"aclImdb/{split}/{label}/{i}_{stars}.txt"] = text.encode("utf-8")
    order = list(members)
    rng.shuffle(order)
    return tar_bytes(members, order=order)


def imikolov_tar(rng, lines=(40, 12, 10)):
    """simple-examples.tgz: ./simple-examples/data/ptb.{train,valid,test}.txt, one sentence a
    line with PTB's leading space and <unk> tokens."""
    members = {"./simple-examples/README": b"Penn Treebank\n"}
    for name, n in zip(("train", "valid", "test"), lines):
        out = []
        for _ in range(n):
            words = sentence(rng, int(rng.integers(1, 12)))
            if rng.random() < 0.3:
                words.insert(int(rng.integers(0, len(words))), "<unk>")
            out.append(" " + " ".join(words) + " \n")
        members[f"./simple-examples/data/ptb.{name}.txt"] = "".join(out).encode()
    return tar_bytes(members)


def uci_housing(rng, rows=31):
    """housing.data: 14 whitespace-separated columns, fixed-width as in the UCI file."""
    data = rng.random((rows, 14)) * np.array([90, 100, 27, 1, 0.5, 3, 100, 10, 24, 500, 10,
                                                400, 37, 50]) + 0.1
    data[:, 3] = rng.integers(0, 2, rows)
    lines = [" ".join(f"{v:8.4f}" for v in row) for row in data]
    return ("\n".join(lines) + "\n").encode(), data


def movielens_zip(rng, n_users=6, n_movies=7, n_ratings=60):
    """ml-1m.zip: ml-1m/{movies,users,ratings}.dat in latin-1 with '::' separators."""
    genres = ["Action", "Comedy", "Drama", "Children's", "Film-Noir", "Sci-Fi"]
    movies = []
    for m in range(1, n_movies + 1):
        title = " ".join(w.capitalize() for w in sentence(rng, int(rng.integers(1, 4))))
        if m == 3:
            title = "Cit\xe9 des enfants perdus, La (City of Lost Children, The)"
        cats = sorted(set(rng.choice(genres, int(rng.integers(1, 4)))))
        movies.append(f"{m}::{title} ({1990 + m})::{'|'.join(cats)}\n")
    ages = [1, 18, 25, 35, 45, 50, 56]
    users = [f"{u}::{'MF'[u % 2]}::{ages[u % 7]}::{u * 3 % 21}::{48067 + u}\n"
             for u in range(1, n_users + 1)]
    ratings = [f"{rng.integers(1, n_users + 1)}::{rng.integers(1, n_movies + 1)}::"
               f"{rng.integers(1, 6)}::{978300760 + i}\n" for i in range(n_ratings)]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ml-1m/README", "MovieLens 1M\n")
        for name, lines in (("movies", movies), ("users", users), ("ratings", ratings)):
            zf.writestr(f"ml-1m/{name}.dat", "".join(lines).encode("latin-1"))
    return buf.getvalue()


_ROLES = ["A0", "A1", "A2", "AM-TMP", "AM-LOC"]


def _props_column(rng, n, verb_pos):
    """One predicate's bracketed label column, e.g. (A0*  *  *)  (V*)  (A1*  *)."""
    col = ["*"] * n
    col[verb_pos] = "(V*)"
    pos = 0
    while pos < n:
        if pos == verb_pos:
            pos += 1
            continue
        end = pos
        while end + 1 < n and end + 1 != verb_pos and rng.random() < 0.5:
            end += 1
        if rng.random() < 0.6:
            role = rng.choice(_ROLES)
            if end == pos:
                col[pos] = f"({role}*)"
            else:
                col[pos] = f"({role}*"
                col[end] = "*)"
        pos = end + 1
    return col


def conll05_files(rng, n_sentences=5):
    """conll05st-tests.tar.gz (words and props of test.wsj, gzipped, one token a line, a blank
    line after each sentence) and the word/verb/target dictionaries and the embedding file."""
    words_lines, props_lines, verbs = [], [], set()
    for s in range(n_sentences):
        n = int(rng.integers(3, 9))
        toks = sentence(rng, n)
        n_pred = 0 if s == 2 else int(rng.integers(1, 3))
        verb_pos = sorted(rng.choice(n, size=n_pred, replace=False).tolist())
        cols = [_props_column(rng, n, v) for v in verb_pos]
        for i, tok in enumerate(toks):
            lemma = tok + "_v" if i in verb_pos else "-"
            if i in verb_pos:
                verbs.add(lemma)
            words_lines.append(tok + "\n")
            props_lines.append("\t".join([lemma] + [c[i] for c in cols]) + "\n")
        words_lines.append("\n")
        props_lines.append("\n")
    base = "conll05st-release/test.wsj"
    members = {
        f"{base}/words/test.wsj.words.gz": gzip.compress("".join(words_lines).encode(), mtime=0),
        f"{base}/props/test.wsj.props.gz": gzip.compress("".join(props_lines).encode(), mtime=0),
    }
    word_dict = ["<unk>"] + WORDS[: len(WORDS) - 4] + ["bos", "eos"]
    target = ["O"] + [f"{p}-{r}" for r in _ROLES + ["V"] for p in ("B", "I")]
    return {
        "conll05st-tests.tar.gz": tar_bytes(members),
        "wordDict.txt": ("\n".join(word_dict) + "\n").encode(),
        "verbDict.txt": ("\n".join(sorted(verbs) + ["unused_v"]) + "\n").encode(),
        "targetDict.txt": ("\n".join(target) + "\n").encode(),
        "emb": np.arange(12, dtype=np.float32).tobytes(),
    }


def _pairs(rng, n, src_words, trg_words, long_every=0):
    lines = []
    for i in range(n):
        k = int(rng.integers(1, 9))
        if long_every and i % long_every == long_every - 1:
            k = 85
        lines.append(" ".join(sentence(rng, k, src_words)) + "\t"
                     + " ".join(sentence(rng, int(rng.integers(1, 9)), trg_words)) + "\n")
    lines.insert(3, "a line without a tab\n")
    return "".join(lines).encode()


FR = [w + "_fr" for w in WORDS]
DE = [w + "_de" for w in WORDS]


def wmt14_tar(rng):
    """wmt14.tgz: train/train, test/test, gen/gen ('source\\ttarget' lines) and the src.dict /
    trg.dict vocabularies (<s>, <e>, <unk> first)."""
    members = {}
    for split, n in (("train", 20), ("test", 8), ("gen", 6)):
        members[f"wmt14/{split}/{split}"] = _pairs(rng, n, FR, WORDS, long_every=9)
    members["wmt14/src.dict"] = ("\n".join(["<s>", "<e>", "<unk>"] + FR[:-3]) + "\n").encode()
    members["wmt14/trg.dict"] = ("\n".join(["<s>", "<e>", "<unk>"] + WORDS[:-5]) + "\n").encode()
    return tar_bytes(members)


def wmt16_tar(rng):
    """wmt16.tar.gz: wmt16/{train,test,val}, 'english\\tgerman' lines."""
    members = {f"wmt16/{split}": _pairs(rng, n, WORDS, DE)
               for split, n in (("train", 30), ("test", 8), ("val", 7))}
    return tar_bytes(members)
