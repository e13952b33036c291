"""Samplers: which indices a DataLoader reads, and how they are grouped into batches."""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from ..framework.tensor import Tensor

__all__ = []


def _gen(generator=None):
    if generator is not None:
        return generator
    from ..framework import random as _random
    from ..framework.place import CPUPlace

    return _random.generator(CPUPlace())


class Sampler:
    """Base class: iterate over dataset indices."""

    def __init__(self, data_source=None):
        self.data_source = data_source

    def __iter__(self):
        raise NotImplementedError(f"'__iter__' is not implemented in class "
                                  f"{type(self).__name__}")


class SequenceSampler(Sampler):
    """Indices 0, 1, ..., len(data_source) - 1 in order."""

    def __init__(self, data_source):
        super().__init__(data_source)

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or, with ``replacement``, ``num_samples`` random draws)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        if num_samples is not None and not replacement:
            raise ValueError("RandomSampler: num_samples can only be set with replacement=True")
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got "
                             f"{num_samples!r}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is not None and not hasattr(self.generator, "permutation"):
            yield from self.generator  # Paddle accepts an iterator of indices here
            return
        g = _gen(self.generator)
        if self.replacement:
            yield from g.integers(0, n, size=self.num_samples).tolist()
        else:
            yield from g.permutation(n).tolist()

    def __len__(self):
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """Draw ``num_samples`` indices with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive int, got "
                             f"{num_samples!r}")
        w = weights.numpy() if isinstance(weights, Tensor) else np.asarray(weights)
        w = w.astype(np.float64).reshape(-1)
        if w.size == 0 or np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be non-negative, finite and "
                             "not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples without "
                             f"replacement from {np.count_nonzero(w)} non-zero weights")
        self.weights, self.num_samples, self.replacement = w, num_samples, bool(replacement)
        super().__init__(None)

    def __iter__(self):
        p = self.weights / self.weights.sum()
        idx = _gen().choice(len(p), size=self.num_samples, replace=self.replacement, p=p)
        return iter(idx.tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """A random permutation of exactly ``indices``."""

    def __init__(self, indices):
        if len(indices) == 0:
            raise ValueError("SubsetRandomSampler: 'indices' must not be empty")
        self.indices = list(indices)
        super().__init__(None)

    def __iter__(self):
        perm = _gen().permutation(len(self.indices))
        return iter([self.indices[i] for i in perm.tolist()])

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` (or of a dataset, in order or shuffled) into batches.

    ``dataset`` may be any sized object.
    """

    def __init__(self, dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False):
        if dataset is None and sampler is None:
            raise ValueError("BatchSampler: give either 'dataset' or 'sampler'")
        if dataset is not None and sampler is not None:
            raise ValueError("BatchSampler: give only one of 'dataset' and 'sampler'")
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or \
                batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if not isinstance(shuffle, bool):
            raise TypeError(f"BatchSampler: shuffle must be a bool, got {shuffle!r}")
        if not isinstance(drop_last, bool):
            raise TypeError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        if sampler is None:
            if not hasattr(dataset, "__len__"):
                raise TypeError("BatchSampler: 'dataset' must have a length")
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        elif shuffle:
            raise ValueError("BatchSampler: shuffle must be False when a sampler is given")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        super().__init__(dataset)

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """Each of ``num_replicas`` processes reads its own share of the (padded) dataset.

    With ``shuffle`` the order is a permutation seeded by the epoch, so call ``set_epoch`` each
    epoch; every replica sees the same permutation and takes every ``num_replicas``-th index.
    """

    def __init__(self, dataset, batch_size, num_replicas=None, rank=None, shuffle=False,
                 drop_last=False):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"DistributedBatchSampler: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if not isinstance(shuffle, bool) or not isinstance(drop_last, bool):
            raise TypeError("DistributedBatchSampler: shuffle and drop_last must be bools")
        # as Paddle's launcher sets them for each trainer process
        env_n = int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))
        env_rank = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
        self.nranks = env_n if num_replicas is None else int(num_replicas)
        self.local_rank = env_rank if rank is None else int(rank)
        if self.nranks <= 0:
            raise ValueError(f"DistributedBatchSampler: num_replicas must be positive, got "
                             f"{self.nranks}")
        if not 0 <= self.local_rank < self.nranks:
            raise ValueError(f"DistributedBatchSampler: rank must be in [0, {self.nranks}), got "
                             f"{self.local_rank}")
        self.dataset = dataset
        self.data_source = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.epoch = 0
        self.num_samples = int(math.ceil(len(dataset) / self.nranks))
        self.total_size = self.num_samples * self.nranks

    def set_epoch(self, epoch):
        """Set the epoch that seeds the shuffle (the same on every replica)."""
        self.epoch = epoch

    def __iter__(self):
        n = len(self.dataset)
        indices = np.arange(n).tolist()
        indices += indices[:self.total_size - len(indices)]  # pad, then shuffle, as Paddle
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        # each replica takes whole batches in turn; the ragged tail is split evenly
        step = self.batch_size * self.nranks
        tail = self.total_size % step
        mine = []
        for i in range(self.local_rank * self.batch_size, len(indices) - tail, step):
            mine.extend(indices[i:i + self.batch_size])
        rest = indices[len(indices) - tail:]
        mine.extend(rest[self.local_rank * tail // self.nranks:
                         (self.local_rank + 1) * tail // self.nranks])
        batch = []
        for idx in mine:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = self.num_samples
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
