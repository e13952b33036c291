"""MovieLens 1M ratings (ml-1m.zip) with user and movie features."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

URL = "https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip"
MD5 = "c4d9eecfca2ab87c1945afe126590906"

age_table = [1, 18, 25, 35, 45, 50, 56]

_TITLE = re.compile(r"^(.*)\((\d+)\)$")


class MovieInfo:
    """A movie: its id, categories and title (without the year).

    Args:
        index (int | str): Movie id.
        categories (list[str]): Genre names.
        title (str): Title without the trailing ``(year)``.
    """

    def __init__(self, index, categories, title):
        self.index = int(index)
        self.categories = categories
        self.title = title

    def value(self, categories_dict, movie_title_dict):
        """``[[id], [category ids], [title word ids]]`` through the given vocabularies."""
        return [[self.index], [categories_dict[c] for c in self.categories],
                [movie_title_dict[w.lower()] for w in self.title.split()]]

    def __repr__(self):
        return f"<MovieInfo id({self.index}), title({self.title}), categories({self.categories})>"


class UserInfo:
    """A user: id, gender, age bucket (an index into ``age_table``) and job id.

    Args:
        index (int | str): User id.
        gender (str): 'M' or 'F'.
        age (int | str): Age bucket as written in users.dat (one of ``age_table``).
        job_id (int | str): Occupation id.
    """

    def __init__(self, index, gender, age, job_id):
        self.index = int(index)
        self.is_male = gender == "M"
        self.age = age_table.index(int(age))
        self.job_id = int(job_id)

    def value(self):
        """``[[id], [0 male / 1 female], [age bucket], [job id]]``."""
        return [[self.index], [0 if self.is_male else 1], [self.age], [self.job_id]]

    def __repr__(self):
        return (f"<UserInfo id({self.index}), gender({'M' if self.is_male else 'F'}), "
                f"age({age_table[self.age]}), job({self.job_id})>")


class Movielens(paddle.io.Dataset):
    """The `MovieLens 1M <https://grouplens.org/datasets/movielens/1m/>`_ ratings.

    Each rating line goes to 'test' with probability ``test_ratio`` (a NumPy ``RandomState``
    seeded with ``rand_seed`` draws one number per line, the stream Paddle draws after
    ``np.random.seed(rand_seed)``), else to 'train'. Category and title-word ids follow the
    order of first appearance in movies.dat (Paddle numbers them in the iteration order of a
    Python set, which changes from process to process).

    Args:
        data_file (str, optional): Path of ``ml-1m.zip``; None downloads it to
            ``DATA_HOME/sentiment`` (Paddle's folder for it) when ``download`` is True.
            Default: None.
        mode (str, optional): 'train' or 'test'. Default: 'train'.
        test_ratio (float, optional): Share of the ratings that go to 'test'. Default: 0.1.
        rand_seed (int, optional): Seed of the split. Default: 0.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is a tuple of 8 arrays: user id [1], gender [1] (0 male,
        1 female), age bucket [1], job id [1], movie id [1], category ids [k], title word ids
        [n] (all int64) and the rating [1] as float64 (``stars * 2 - 5``).

    Examples:
        >>> from paddle_hl.text.datasets import Movielens
        >>> ml = Movielens(mode='test')  # doctest: +SKIP
        >>> len(ml[0])  # doctest: +SKIP
        8
    """

    def __init__(self, data_file=None, mode="train", test_ratio=0.1, rand_seed=0,
                 download=True):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        self.data_file = _common.fetch(cls, "data_file", data_file, URL, MD5, "sentiment",
                                       download)
        self.test_ratio = test_ratio
        self.rand_seed = rand_seed
        with _common.reading(cls, "data_file", self.data_file), \
                zipfile.ZipFile(self.data_file) as package:
            self._load_meta_info(package)
            self._load_data(package)

    def _lines(self, package, name):
        try:
            raw = package.read(f"ml-1m/{name}")
        except KeyError:
            raise ValueError(f"{type(self).__name__}: data_file {self.data_file!r} has no "
                             f"'ml-1m/{name}'; is it ml-1m.zip?") from None
        # lines end at b"\n" only, as a file's do (latin-1 has other characters that
        # str.splitlines would break at, e.g. 0x85)
        return [line.decode("latin-1") for line in io.BytesIO(raw)]

    def _bad_line(self, name, line):
        return ValueError(f"{type(self).__name__}: unexpected line in ml-1m/{name} of data_file "
                          f"{self.data_file!r}: {line!r}")

    def _load_meta_info(self, package):
        self.movie_info, self.user_info = {}, {}
        self.movie_title_dict, self.categories_dict = {}, {}
        for line in self._lines(package, "movies.dat"):
            parts = line.strip().split("::")
            m = _TITLE.match(parts[1]) if len(parts) == 3 else None
            if m is None:
                raise self._bad_line("movies.dat", line)
            categories = parts[2].split("|")
            title = m.group(1)
            self.movie_info[int(parts[0])] = MovieInfo(parts[0], categories, title)
            for c in categories:
                self.categories_dict.setdefault(c, len(self.categories_dict))
            for w in title.split():
                self.movie_title_dict.setdefault(w.lower(), len(self.movie_title_dict))
        for line in self._lines(package, "users.dat"):
            parts = line.strip().split("::")
            try:
                if len(parts) != 5:
                    raise ValueError
                self.user_info[int(parts[0])] = UserInfo(*parts[:4])
            except ValueError:  # a wrong field count, a non-number, an age not in age_table
                raise self._bad_line("users.dat", line) from None

    def _load_data(self, package):
        rng = np.random.RandomState(self.rand_seed)
        is_test = self.mode == "test"
        self.data = []
        for line in self._lines(package, "ratings.dat"):
            if (rng.random_sample() < self.test_ratio) != is_test:
                continue
            parts = line.strip().split("::")
            if len(parts) != 4:
                raise self._bad_line("ratings.dat", line)
            uid, mov_id, rating = int(parts[0]), int(parts[1]), float(parts[2]) * 2 - 5.0
            if uid not in self.user_info or mov_id not in self.movie_info:
                raise ValueError(f"{type(self).__name__}: ml-1m/ratings.dat of data_file "
                                 f"{self.data_file!r} rates user {uid} / movie {mov_id}, which "
                                 "users.dat / movies.dat do not list")
            usr, mov = self.user_info[uid], self.movie_info[mov_id]
            self.data.append(usr.value() + mov.value(self.categories_dict,
                                                     self.movie_title_dict) + [[rating]])

    def __getitem__(self, idx):
        item = self.data[idx]
        return tuple([np.array(d, dtype=np.int64) for d in item[:-1]]
                     + [np.array(item[-1], dtype=np.float64)])

    def __len__(self):
        return len(self.data)

    def decode(self, ids, field="title") -> str:
        """Title-word ids (``field='title'``) or category ids (``'categories'``) back to text."""
        vocab = {"title": self.movie_title_dict, "categories": self.categories_dict}[field]
        return _common.join_ids(ids, _common.invert(vocab))

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` as readable text (an HTML table in Jupyter)."""
        uid, gender, age, job, mid, cats, title, rating = self[idx]
        return _common.ItemView(f"Movielens[{idx}] ({self.mode})", [
            ("user", f"{int(uid[0])} ({'MF'[int(gender[0])]}, age {age_table[int(age[0])]}+, "
                     f"job {int(job[0])})"),
            ("movie", f"{int(mid[0])}: {self.decode(title)}"),
            ("categories", self.decode(cats, "categories")),
            ("rating", f"{float(rating[0]):g} ({(float(rating[0]) + 5) / 2:g} stars)")])
