"""The UCI Boston housing regression data (housing.data)."""

from __future__ import annotations

import numpy as np

import paddle_hl as paddle

from . import _common

__all__ = []

URL = "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data"
MD5 = "d4accdce7a25600298819f8e28e8d593"

feature_names = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX",
                 "PTRATIO", "B", "LSTAT"]


class UCIHousing(paddle.io.Dataset):
    """The `UCI housing <https://archive.ics.uci.edu/ml/datasets/Housing>`_ dataset.

    Each of the 13 features is centred on its mean and divided by its range (max - min), both
    computed over the whole file; the first 80% of the rows are 'train', the rest 'test'.

    Args:
        data_file (str, optional): Path of ``housing.data`` (14 whitespace-separated numbers a
            row); None downloads it to ``DATA_HOME/uci_housing`` when ``download`` is True.
            Default: None.
        mode (str, optional): 'train' or 'test'. Default: 'train'.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.

    Returns:
        Dataset: ``dataset[i]`` is ``(features, price)``: arrays of shape [13] and [1] in the
        default float dtype.

    Examples:
        >>> from paddle_hl.text.datasets import UCIHousing
        >>> housing = UCIHousing(mode='test')  # doctest: +SKIP
        >>> x, y = housing[0]  # doctest: +SKIP
        >>> x.shape, y.shape  # doctest: +SKIP
        ((13,), (1,))
    """

    def __init__(self, data_file=None, mode="train", download=True):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        self.data_file = _common.fetch(cls, "data_file", data_file, URL, MD5, "uci_housing",
                                       download)
        self._load_data()
        self.dtype = paddle.get_default_dtype()

    def _load_data(self, feature_num=14, ratio=0.8):
        cls = type(self).__name__
        with open(self.data_file, "rb") as f:
            tokens = f.read().split()
        try:
            data = np.array([float(t) for t in tokens], dtype=np.float64)
        except ValueError as e:
            raise ValueError(f"{cls}: data_file {self.data_file!r} is not a table of numbers "
                             f"({e})") from None
        if data.size == 0 or data.size % feature_num:
            raise ValueError(f"{cls}: data_file {self.data_file!r} holds {data.size} numbers, "
                             f"not a positive multiple of {feature_num} (13 features and the "
                             "price a row); is it truncated?")
        data = data.reshape(-1, feature_num)
        maximums, minimums = data.max(axis=0), data.min(axis=0)
        avgs = data.sum(axis=0) / data.shape[0]
        with np.errstate(divide="ignore", invalid="ignore"):  # a constant column gives NaN
            data[:, :-1] = (data[:, :-1] - avgs[:-1]) / (maximums[:-1] - minimums[:-1])
        offset = int(data.shape[0] * ratio)
        self.data = data[:offset] if self.mode == "train" else data[offset:]

    def __getitem__(self, idx):
        row = self.data[idx]
        return row[:-1].astype(self.dtype), row[-1:].astype(self.dtype)

    def __len__(self):
        return len(self.data)

    def view(self, idx) -> _common.ItemView:
        """Item ``idx`` with its feature names (an HTML table in Jupyter)."""
        x, y = self[idx]
        rows = [(name, f"{v:.4f}") for name, v in zip(feature_names, x.tolist())]
        return _common.ItemView(f"UCIHousing[{idx}] ({self.mode})",
                                rows + [("MEDV (price)", f"{float(y[0]):.2f}")])
