"""Datasets, samplers and the DataLoader: ordering, collation, workers, errors, cleanup."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.io import (
    BatchSampler,
    ChainDataset,
    ComposeDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedBatchSampler,
    IterableDataset,
    RandomSampler,
    SequenceSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full([2, 3], i, dtype="float32"), i


class One(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.full([2, 3], i, dtype="float32")


class Stream(IterableDataset):
    def __init__(self, n=7):
        self.n = n

    def __iter__(self):
        info = paddle.io.get_worker_info()
        if info is None:
            yield from range(self.n)
        else:
            yield from range(info.id, self.n, info.num_workers)


class Failing(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise KeyError("bad sample 5")
        return super().__getitem__(i)


class Slow(Squares):
    def __getitem__(self, i):
        time.sleep(3)
        return super().__getitem__(i)


class Dies(Squares):
    def __getitem__(self, i):
        os._exit(3)


class UsesOps(Squares):
    def __getitem__(self, i):
        x = paddle.to_tensor(np.full([2, 3], i, dtype="float32"))
        return (x * 2).numpy(), i


def _labels(loader):
    return [b[1].numpy().tolist() for b in loader]


@pytest.mark.parametrize("workers", [0, 2])
def test_order_and_collation(workers):
    loader = DataLoader(Squares(10), batch_size=3, num_workers=workers)
    assert len(loader) == 4
    batches = list(loader)
    assert [b[1].numpy().tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    x, y = batches[0]
    assert x.shape == [3, 2, 3] and x.dtype == paddle.float32
    assert y.dtype == paddle.int64


@pytest.mark.parametrize("workers", [0, 2])
def test_single_field_batch_is_a_tensor(workers):
    b = next(iter(DataLoader(One(), batch_size=2, num_workers=workers)))
    assert isinstance(b, paddle.Tensor) and b.shape == [2, 2, 3]
    it = DataLoader(One(), batch_size=2)()
    assert isinstance(next(it), paddle.Tensor)


def test_nested_collation():
    class D(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"x": np.ones(2) * i, "name": f"s{i}", "pair": [i, float(i) / 2]}

    b = next(iter(DataLoader(D(), batch_size=2)))
    assert b["name"] == ["s0", "s1"]
    assert b["x"].shape == [2, 2] and b["x"].dtype == paddle.float64
    assert b["pair"][0].dtype == paddle.int64 and b["pair"][1].numpy().tolist() == [0.0, 0.5]


@pytest.mark.parity
def test_collation_matches_paddle(pd):
    class D(pd.io.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return np.ones([2], "float32") * i, i, float(i), [i, i + 0.5]

    ours = next(iter(DataLoader(D(), batch_size=3)))
    theirs = next(iter(pd.io.DataLoader(D(), batch_size=3)))
    flat = lambda b: [b[0], b[1], b[2], b[3][0], b[3][1]]
    for a, t in zip(flat(ours), flat(theirs)):
        assert a.shape == t.shape and str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), t.numpy())


def test_batch_size_none_and_collate_fn():
    items = list(DataLoader(Squares(3), batch_size=None))
    assert items[1][0].shape == [2, 3] and items[1][1] == 1
    loader = DataLoader(Squares(4), batch_size=2,
                        collate_fn=lambda s: np.stack([a for a, _ in s]).sum())
    assert [float(v) for v in loader] == [6.0, 30.0]


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset(workers):
    got = sorted(v for b in DataLoader(Stream(7), batch_size=2, num_workers=workers)
                 for v in b.numpy().tolist())
    assert got == list(range(7))
    chained = list(ChainDataset([Stream(2), Stream(3)]))
    assert chained == [0, 1, 0, 1, 2]


@pytest.mark.parametrize("workers", [0, 2])
def test_shuffle_reproducible_with_seed(workers):
    def run():
        paddle.seed(123)
        return _labels(DataLoader(Squares(12), batch_size=4, shuffle=True, num_workers=workers))

    a, b = run(), run()
    assert a == b and sorted(sum(a, [])) == list(range(12)) and sum(a, []) != list(range(12))


def test_worker_randomness_reproducible():
    class Rand(Squares):
        def __getitem__(self, i):
            return np.random.rand(1).astype("float32"), i

    def run():
        paddle.seed(7)
        return [b[0].numpy().ravel().tolist() for b in DataLoader(Rand(6), batch_size=2,
                                                                  num_workers=2)]

    assert run() == run()


def test_worker_error_surfaces_traceback():
    loader = DataLoader(Failing(10), batch_size=2, num_workers=2)
    with pytest.raises(RuntimeError, match="bad sample 5") as exc:
        list(loader)
    assert "KeyError" in str(exc.value) and "__getitem__" in str(exc.value)


def test_worker_error_in_main_process_is_raised_directly():
    with pytest.raises(KeyError, match="bad sample 5"):
        list(DataLoader(Failing(10), batch_size=2))


def test_timeout_raises():
    loader = DataLoader(Slow(4), batch_size=1, num_workers=1, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out"):
        next(iter(loader))
    assert time.monotonic() - t0 < 30  # it fails fast instead of waiting for the slow worker


def test_dead_worker_raises():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Dies(4), batch_size=1, num_workers=1))


class Distinct(Dataset):
    """Samples whose every value says which sample it is."""

    def __len__(self):
        return 96

    def __getitem__(self, i):
        return np.full([64, 64], i, dtype="float32"), i  # 16 KiB: a batch of 4 or more
                                                         # goes through shared memory


def _children():
    import multiprocessing as mp

    return [p for p in mp.active_children()]


def _shm(pids):
    """The shared-memory segments that DataLoader workers with these pids made and left behind
    (other test processes may be loading at the same time)."""
    names = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    return {n for n in names if any(n.startswith(f"psm_hl_{p}_") for p in pids)}


@pytest.mark.parametrize("big", [False, True], ids=["inline", "shared_memory"])
def test_early_break_leaves_no_processes_or_shm(big):
    pids = set()
    for _ in range(2):
        loader = DataLoader(Distinct() if big else Squares(40), batch_size=4, num_workers=2)
        it = iter(loader)
        pids |= {w.pid for w in it._workers}
        for i, _batch in enumerate(it):
            if i == 2:
                break
        del loader, it, _batch
    import gc

    gc.collect()
    deadline = time.monotonic() + 5
    while _children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children()
    assert _shm(pids) == set()


def _count_segments(monkeypatch):
    """Count, in the main process, the batch arrays that came in a new segment vs a reused one."""
    from paddle_hl.io import _worker

    seen = {"new": 0, "reused": 0}
    orig = _worker.ShmReceiver._map

    def counting(self, h):
        seen["new" if h.name is not None else "reused"] += 1
        return orig(self, h)

    monkeypatch.setattr(_worker.ShmReceiver, "_map", counting)
    return seen


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="pooling needs /dev/shm")
def test_freed_batches_go_back_to_their_worker(monkeypatch):
    seen = _count_segments(monkeypatch)
    it = iter(DataLoader(Distinct(), batch_size=4, num_workers=2))
    pids = {w.pid for w in it._workers}
    labels = []
    for x, y in it:  # each batch is dropped when the next one arrives
        labels += y.numpy().tolist()
        np.testing.assert_array_equal(x.numpy()[:, 0, 0], y.numpy())
    assert labels == list(range(96))
    # 24 batches of 32 KiB images (the labels travel inline); after the first few, the
    # workers collate into the segments handed back to them
    assert seen["new"] + seen["reused"] == 24
    assert seen["reused"] >= 16, seen
    del x, y
    assert _shm(pids) == set()


@pytest.mark.cpu
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="pooling needs /dev/shm")
def test_batches_still_held_are_never_overwritten(monkeypatch):
    """A segment returns to the pool only when the last array (or view) using it is freed."""
    seen = _count_segments(monkeypatch)
    loader = DataLoader(Distinct(), batch_size=4, num_workers=2, persistent_workers=True)
    for _ in range(2):  # the pool outlives an epoch with persistent workers
        kept, views = [], []
        for k, (x, y) in enumerate(loader):
            if k % 3 == 0:
                kept.append((x, y))  # the Tensor itself
            elif k % 3 == 1:
                # only a view of its raw array (Tensor.numpy() would be a copy)
                views.append((x._data[1:], y.numpy().copy()))
        for x, y in kept:
            np.testing.assert_array_equal(x.numpy()[:, 5, 7], y.numpy())
        for v, y in views:
            np.testing.assert_array_equal(v[:, 3, 3], y[1:])
        x._data[:] = -1  # writing into a held batch is fine, and is not seen by the next
        del kept, views, x, y
    again = [b[0].numpy()[:, 0, 0].tolist() for b in loader]
    assert again[0] == [0.0, 1.0, 2.0, 3.0]
    assert seen["reused"] > 0
    loader._persistent_iter._close()


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")
def test_full_shared_memory_falls_back_to_pickled_batches(monkeypatch):
    """A full /dev/shm (Docker's 64 MB) must not kill workers with SIGBUS: batches travel in the
    pickle instead, and nothing is left behind."""
    import errno

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    def fill_shm(worker_id):  # runs in each worker: /dev/shm is full there
        os.posix_fallocate = full

    seen = _count_segments(monkeypatch)
    it = iter(DataLoader(Distinct(), batch_size=8, num_workers=2, worker_init_fn=fill_shm))
    pids = {w.pid for w in it._workers}
    got = [(x.numpy()[:, 1, 2].tolist(), y.numpy().tolist()) for x, y in it]
    assert [g[1] for g in got] == [list(range(k, k + 8)) for k in range(0, 96, 8)]
    assert all(a == b for a, b in got)
    assert seen == {"new": 0, "reused": 0}
    assert _shm(pids) == set()


def test_user_collate_output_travels_through_shared_memory(monkeypatch):
    seen = _count_segments(monkeypatch)

    def collate(samples):
        return np.stack([s[0] for s in samples]) * 2, np.array([s[1] for s in samples])

    got = [(x.numpy()[:, 0, 0], y.numpy()) for x, y in
           DataLoader(Distinct(), batch_size=8, num_workers=2, collate_fn=collate)]
    assert all((a == 2 * b).all() for a, b in got) and len(got) == 12
    if os.path.isdir("/dev/shm"):
        assert seen["new"] + seen["reused"] == 12


def test_batch_outlives_its_loader():
    loader = DataLoader(Distinct(), batch_size=8, num_workers=2)
    held = list(loader)
    del loader
    import gc

    gc.collect()
    for k, (x, y) in enumerate(held):
        assert y.numpy().tolist() == list(range(8 * k, 8 * k + 8))
        np.testing.assert_array_equal(x.numpy()[:, 63, 63], y.numpy())


def test_workers_can_call_paddle_ops():
    got = _labels(DataLoader(UsesOps(6), batch_size=3, num_workers=2))
    assert got == [[0, 1, 2], [3, 4, 5]]


def test_persistent_workers_reused():
    loader = DataLoader(Squares(6), batch_size=2, num_workers=2, persistent_workers=True)
    assert _labels(loader) == [[0, 1], [2, 3], [4, 5]]
    pids = {w.pid for w in loader._persistent_iter._workers}
    assert _labels(loader) == [[0, 1], [2, 3], [4, 5]]
    assert pids == {w.pid for w in loader._persistent_iter._workers}
    loader._persistent_iter._close()


def test_worker_init_fn_and_info():
    class Info(Squares):
        def __getitem__(self, i):
            info = paddle.io.get_worker_info()
            return np.array([info.id, info.num_workers]), i

    seen = set()
    for b in DataLoader(Info(6), batch_size=1, num_workers=2,
                        worker_init_fn=lambda wid: np.random.seed(wid)):
        seen.add(tuple(b[0].numpy()[0].tolist()))
    assert seen == {(0, 2), (1, 2)}
    assert paddle.io.get_worker_info() is None


def test_no_shared_memory_mode():
    assert _labels(DataLoader(Squares(5), batch_size=2, num_workers=2,
                              use_shared_memory=False)) == [[0, 1], [2, 3], [4]]


def test_bad_loader_arguments():
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(Squares(), num_workers=-1)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Squares(), batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(), batch_sampler=BatchSampler(Squares(), batch_size=2), batch_size=3)
    with pytest.raises(TypeError, match="no length"):
        len(DataLoader(Stream()))


# ---------------------------------------------------------------- datasets and samplers

def test_tensor_compose_concat_subset():
    t = TensorDataset([paddle.arange(6).reshape([3, 2]), paddle.to_tensor([7, 8, 9])])
    assert len(t) == 3 and t[1][1].item() == 8
    with pytest.raises(ValueError, match="first dim"):
        TensorDataset([paddle.zeros([3]), paddle.zeros([4])])
    c = ComposeDataset([Squares(3), Squares(3)])
    assert len(c[1]) == 4
    cat = ConcatDataset([Squares(3), Squares(4)])
    assert len(cat) == 7 and cat[3][1] == 0 and cat[-1][1] == 3
    assert ConcatDataset.cumsum([Squares(3), Squares(4)]) == [3, 7]
    s = Subset(Squares(10), [9, 3])
    assert len(s) == 2 and s[0][1] == 9


def test_random_split():
    paddle.seed(1)
    parts = random_split(range(10), [3, 7])
    idx = [i for p in parts for i in p.indices]
    assert sorted(idx) == list(range(10)) and [len(p) for p in parts] == [3, 7]
    fr = random_split(range(10), [0.25, 0.75])
    assert sum(len(p) for p in fr) == 10
    with pytest.raises(ValueError, match="sum of input lengths"):
        random_split(range(10), [3, 3])


def test_samplers():
    assert list(SequenceSampler(range(4))) == [0, 1, 2, 3]
    paddle.seed(0)
    r = list(RandomSampler(range(8)))
    assert sorted(r) == list(range(8))
    rr = list(RandomSampler(range(3), replacement=True, num_samples=20))
    assert len(rr) == 20 and set(rr) <= {0, 1, 2}
    sub = list(SubsetRandomSampler([5, 9, 2]))
    assert sorted(sub) == [2, 5, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0], 5))
    assert w == [1] * 5
    with pytest.raises(ValueError, match="without replacement"):
        WeightedRandomSampler([0.0, 1.0], 2, replacement=False)
    bs = BatchSampler(dataset=list(range(7)), batch_size=3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    bs = BatchSampler(sampler=SequenceSampler(range(7)), batch_size=3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2


@pytest.mark.parity
def test_distributed_batch_sampler_parity(pd):
    for shuffle in (False, True):
        for rank in (0, 1, 2):
            ours = DistributedBatchSampler(list(range(11)), 2, num_replicas=3, rank=rank,
                                           shuffle=shuffle)
            theirs = pd.io.DistributedBatchSampler(list(range(11)), 2, num_replicas=3,
                                                   rank=rank, shuffle=shuffle)
            for epoch in (0, 3):
                ours.set_epoch(epoch)
                theirs.set_epoch(epoch)
                assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


def test_distributed_batch_sampler_covers_dataset():
    seen = []
    for rank in range(3):
        s = DistributedBatchSampler(list(range(10)), 2, num_replicas=3, rank=rank)
        seen += [i for b in s for i in b]
    assert set(seen) == set(range(10)) and len(seen) == 12
    with pytest.raises(ValueError, match="rank"):
        DistributedBatchSampler(list(range(10)), 2, num_replicas=2, rank=5)
