"""paddle_hl.io: datasets, samplers and the DataLoader."""

from ._worker import get_worker_info
from .dataloader import DataLoader, default_collate_fn, default_convert_fn
from .dataset import (
    ChainDataset,
    ComposeDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedBatchSampler,
    RandomSampler,
    Sampler,
    SequenceSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ComposeDataset", "ChainDataset",
           "ConcatDataset", "Subset", "random_split", "Sampler", "SequenceSampler",
           "RandomSampler", "WeightedRandomSampler", "SubsetRandomSampler", "BatchSampler",
           "DistributedBatchSampler", "DataLoader", "get_worker_info"]


def _expose_collate():
    """``paddle_hl.io.dataloader.collate`` as Paddle lays it out: Paddle's ``io.dataloader`` is a
    package; here it is one module, so the collate module is registered beneath it."""
    import sys

    from . import _collate, dataloader

    dataloader.collate = _collate
    sys.modules[f"{__name__}.dataloader.collate"] = _collate


_expose_collate()
