"""``paddle.text``: Viterbi decoding and the text datasets (Imdb, Imikolov, UCIHousing,
Movielens, Conll05st, WMT14, WMT16)."""

from . import datasets
from .datasets import WMT14, WMT16, Conll05st, Imdb, Imikolov, Movielens, UCIHousing
from .viterbi_decode import ViterbiDecoder, viterbi_decode

__all__ = [
    "Conll05st",
    "Imdb",
    "Imikolov",
    "Movielens",
    "UCIHousing",
    "WMT14",
    "WMT16",
    "ViterbiDecoder",
    "viterbi_decode",
]
