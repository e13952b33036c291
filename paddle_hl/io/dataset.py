"""Datasets: map-style and iterable, and the ways to combine and split them."""

from __future__ import annotations

import bisect
import itertools
import math
import numbers

from ..framework.tensor import Tensor

__all__ = []


class Dataset:
    """A map-style dataset: subclasses implement ``__getitem__(idx)`` and ``__len__()``."""

    def __getitem__(self, idx):
        raise NotImplementedError(f"'__getitem__' is not implemented in class "
                                  f"{type(self).__name__}")

    def __len__(self):
        raise NotImplementedError(f"'__len__' is not implemented in class {type(self).__name__}")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that yields samples from ``__iter__`` (a stream; no random access)."""

    def __iter__(self):
        raise NotImplementedError(f"'__iter__' is not implemented in class "
                                  f"{type(self).__name__}")

    def __getitem__(self, idx):
        raise RuntimeError(f"{type(self).__name__} is an IterableDataset: iterate over it "
                           "instead of indexing")

    def __len__(self):
        raise TypeError(f"{type(self).__name__} is an IterableDataset and has no length")


class TensorDataset(Dataset):
    """Samples are the rows of the given tensors (all with the same first dim)."""

    def __init__(self, tensors):
        tensors = list(tensors)
        if not tensors:
            raise ValueError("TensorDataset: 'tensors' must not be empty")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: tensors[{i}] must be a Tensor, got "
                                f"{type(t).__name__}")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        for i, t in enumerate(tensors):
            if t.ndim == 0 or t.shape[0] != n:
                raise ValueError(f"TensorDataset: all tensors need the same first dim; "
                                 f"tensors[0] has shape {tensors[0].shape}, tensors[{i}] has "
                                 f"{t.shape}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def _fields(sample):
    return list(sample) if isinstance(sample, (list, tuple)) else [sample]


class ComposeDataset(Dataset):
    """Zip map-style datasets of equal length: sample i joins the fields of each sample i."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ComposeDataset: 'datasets' must not be empty")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ComposeDataset: datasets[{i}] is an IterableDataset; only "
                                "map-style datasets can be composed")
            if len(d) != len(self.datasets[0]):
                raise ValueError(f"ComposeDataset: datasets[{i}] has {len(d)} samples, "
                                 f"datasets[0] has {len(self.datasets[0])}")

    def __len__(self):
        return len(self.datasets[0])

    def __getitem__(self, idx):
        out = []
        for d in self.datasets:
            out.extend(_fields(d[idx]))
        return tuple(out)


class ChainDataset(IterableDataset):
    """Iterate through several iterable datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for i, d in enumerate(self.datasets):
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: datasets[{i}] must be an IterableDataset, got "
                                f"{type(d).__name__}")

    def __iter__(self):
        return itertools.chain.from_iterable(self.datasets)


class ConcatDataset(Dataset):
    """Concatenate map-style datasets."""

    @staticmethod
    def cumsum(sequence):
        """Running totals of the lengths of ``sequence``."""
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: 'datasets' must not be empty")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ConcatDataset: datasets[{i}] is an IterableDataset; use "
                                "ChainDataset for those")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise IndexError(f"ConcatDataset: index {idx} out of range for length {n}")
            idx += n
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} out of range for length {n}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d else 0
        return self.datasets[d][idx - start]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into disjoint random subsets of the given lengths (ints summing to
    ``len(dataset)``, or fractions summing to 1; the remainder goes round-robin)."""
    from ..framework import random as _random

    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) and 0 <= x <= 1 for x in lengths) and \
            math.isclose(sum(lengths), 1.0, abs_tol=1e-6) and sum(lengths) != n:
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(not isinstance(x, numbers.Integral) or x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be non-negative ints or fractions summing "
                         f"to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths ({sum(lengths)}) does not equal "
                         f"the length of the input dataset ({n})")
    gen = generator if generator is not None else _random.generator(_cpu())
    perm = gen.permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out


def _cpu():
    from ..framework.place import CPUPlace

    return CPUPlace()
