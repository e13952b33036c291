"""``paddle.text.datasets``: Imdb, Imikolov, UCIHousing, Movielens, Conll05st, WMT14 and WMT16.

Downloads go through ``paddle_hl.utils.download`` into ``DATA_HOME``. Every dataset with a
vocabulary also has ``decode(ids)`` and ``view(i)`` to read its items as text.
"""

from . import conll05, imdb, imikolov, movielens, uci_housing, wmt14, wmt16
from .conll05 import Conll05st
from .imdb import Imdb
from .imikolov import Imikolov
from .movielens import Movielens
from .uci_housing import UCIHousing
from .wmt14 import WMT14
from .wmt16 import WMT16

__all__ = [
    "Conll05st",
    "Imdb",
    "Imikolov",
    "Movielens",
    "UCIHousing",
    "WMT14",
    "WMT16",
]
