"""Paddle's parameter-server names (datasets and sparse-table entries). paddle_hl trains data
parallel over collectives; these exist so that imports work, and using them says why not."""

from __future__ import annotations

__all__ = []  # the public names are re-exported by paddle_hl.distributed


class _ParameterServerOnly:
    _what = ""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            f"paddle_hl.distributed.{type(self).__name__}: {self._what} belongs to Paddle's "
            "parameter-server training, which paddle_hl does not support: paddle_hl trains "
            "data parallel over collectives (paddle.DataParallel with "
            "python -m paddle_hl.distributed.launch or paddle_hl.distributed.spawn). Use a "
            "paddle.io.Dataset with a DistributedBatchSampler instead.")


class InMemoryDataset(_ParameterServerOnly):
    """Parameter-server dataset loaded into memory (not supported; raises on construction)."""

    _what = "the in-memory slot dataset"


class QueueDataset(_ParameterServerOnly):
    """Parameter-server streaming dataset (not supported; raises on construction)."""

    _what = "the queue slot dataset"


class CountFilterEntry(_ParameterServerOnly):
    """Sparse-table admission by count (not supported; raises on construction)."""

    _what = "a sparse-table entry rule"

    def __init__(self, count_filter):
        super().__init__()


class ProbabilityEntry(_ParameterServerOnly):
    """Sparse-table admission by probability (not supported; raises on construction)."""

    _what = "a sparse-table entry rule"

    def __init__(self, probability):
        super().__init__()


class ShowClickEntry(_ParameterServerOnly):
    """Sparse-table show/click entry (not supported; raises on construction)."""

    _what = "a sparse-table entry rule"

    def __init__(self, show_name, click_name):
        super().__init__()
