"""Neighbour sampling and reindexing: invariants of the samples, paddle_hl's seed, weighted
frequencies, and Paddle 2.6.2 parity where the output is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from tests.geometric._graphs import csc_graph

G = paddle_hl.geometric
ROW = [3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7]
COLPTR = [0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13]


def _split(nb, cnt):
    return np.split(nb, np.cumsum(cnt)[:-1]) if len(cnt) else []


@pytest.mark.parametrize("sample_size", [-1, 0, 1, 3, 10, 40])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_sample_invariants(sample_size, dtype):
    row, colptr = csc_graph(500, 12, seed=1)
    nodes = np.random.default_rng(2).choice(500, 120, replace=False)
    eids = np.arange(row.shape[0]) * 3 + 1
    t = lambda a: paddle_hl.to_tensor(a.astype(dtype))  # noqa: E731
    nb, cnt, ei = G.sample_neighbors(t(row), t(colptr), t(nodes), sample_size=sample_size,
                                     eids=t(eids), return_eids=True)
    assert nb.dtype == getattr(paddle_hl, dtype) and cnt.dtype == paddle_hl.int32
    nb, cnt, ei = nb.numpy(), cnt.numpy(), ei.numpy()
    deg = colptr[nodes + 1] - colptr[nodes]
    want = deg if sample_size < 0 else np.minimum(deg, sample_size)
    np.testing.assert_array_equal(cnt, want)
    pos = (ei - 1) // 3
    np.testing.assert_array_equal(row[pos], nb)  # each eid names the edge of its neighbour
    for v, p in zip(nodes, _split(pos, cnt)):
        assert np.all((p >= colptr[v]) & (p < colptr[v + 1]))  # a real in-edge of v
        assert len(np.unique(p)) == len(p)  # no edge twice
        assert np.all(np.diff(p) > 0)  # in CSC order


def test_sampling_follows_paddle_seed_and_is_uniform():
    row, colptr = csc_graph(300, 30, seed=3, max_deg=200)
    nodes = paddle_hl.to_tensor(np.arange(300))
    args = (paddle_hl.to_tensor(row), paddle_hl.to_tensor(colptr), nodes)
    paddle_hl.seed(5)
    a = G.sample_neighbors(*args, sample_size=4)[0].numpy()
    b = G.sample_neighbors(*args, sample_size=4)[0].numpy()
    paddle_hl.seed(5)
    c = G.sample_neighbors(*args, sample_size=4)[0].numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)
    # both samplers (keys for d <= 4k, redraws for d > 4k) pick each neighbour equally often
    for d in (6, 50):
        r = np.arange(d)
        cp = np.array([0, d])
        hits = np.zeros(d)
        for _ in range(400):
            nb, _ = G.sample_neighbors(paddle_hl.to_tensor(r), paddle_hl.to_tensor(cp),
                                       paddle_hl.to_tensor([0]), sample_size=3)
            hits[nb.numpy()] += 1
        expected = 400 * 3 / d
        assert np.abs(hits - expected).max() < 5 * np.sqrt(expected), hits


def test_weighted_sampling_frequencies_and_zero_weights():
    r = paddle_hl.to_tensor([0, 1, 2, 3])
    cp = paddle_hl.to_tensor([0, 4])
    w = paddle_hl.to_tensor([1.0, 2.0, 3.0, 0.0])
    hits = np.zeros(4)
    for _ in range(1500):
        nb, cnt = G.weighted_sample_neighbors(r, cp, w, paddle_hl.to_tensor([0]), 1)
        hits[nb.numpy()] += 1
    assert hits[3] == 0
    np.testing.assert_allclose(hits[:3] / 1500, [1 / 6, 2 / 6, 3 / 6], atol=0.05)
    nb, cnt = G.weighted_sample_neighbors(r, cp, w, paddle_hl.to_tensor([0]), 4)
    np.testing.assert_array_equal(nb.numpy(), [0, 1, 2, 3])


def test_weighted_invariants_with_eids():
    row, colptr = csc_graph(400, 10, seed=6)
    w = np.random.default_rng(7).uniform(0.1, 1.0, row.shape[0]).astype("float32")
    nodes = np.arange(0, 400, 3)
    eids = np.arange(row.shape[0])
    nb, cnt, ei = G.weighted_sample_neighbors(
        paddle_hl.to_tensor(row), paddle_hl.to_tensor(colptr), paddle_hl.to_tensor(w),
        paddle_hl.to_tensor(nodes), sample_size=5, eids=paddle_hl.to_tensor(eids),
        return_eids=True)
    nb, cnt, ei = nb.numpy(), cnt.numpy(), ei.numpy()
    np.testing.assert_array_equal(cnt, np.minimum(colptr[nodes + 1] - colptr[nodes], 5))
    np.testing.assert_array_equal(row[ei], nb)
    for v, p in zip(nodes, _split(ei, cnt)):
        assert np.all((p >= colptr[v]) & (p < colptr[v + 1])) and len(set(p)) == len(p)


@pytest.mark.parity
def test_deterministic_cases_match_paddle(pd):
    # nodes with at most sample_size neighbours keep them all, in CSC order
    nodes = [0, 8, 1, 2]
    ours = G.sample_neighbors(paddle_hl.to_tensor(ROW), paddle_hl.to_tensor(COLPTR),
                              paddle_hl.to_tensor(nodes), sample_size=5,
                              eids=paddle_hl.to_tensor(np.arange(13)), return_eids=True)
    theirs = pd.geometric.sample_neighbors(pd.to_tensor(ROW), pd.to_tensor(COLPTR),
                                           pd.to_tensor(nodes), sample_size=5,
                                           eids=pd.to_tensor(np.arange(13)), return_eids=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype.name == str(b.dtype).split(".")[-1].lower()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_reindex_matches_paddle(pd, dtype):
    rng = np.random.default_rng(8)
    x = rng.choice(50, 6, replace=False)
    count = rng.integers(0, 5, 6).astype("int32")
    nbrs = rng.integers(0, 60, int(count.sum()))
    for lib_out, pd_out in [
        (G.reindex_graph(*[paddle_hl.to_tensor(a) for a in
                           (x.astype(dtype), nbrs.astype(dtype), count)]),
         pd.geometric.reindex_graph(*[pd.to_tensor(a) for a in
                                      (x.astype(dtype), nbrs.astype(dtype), count)])),
    ]:
        for a, b in zip(lib_out, pd_out):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.dtype.name == dtype
    count2 = rng.integers(0, 4, 6).astype("int32")
    nbrs2 = rng.integers(0, 80, int(count2.sum()))
    ours = G.reindex_heter_graph(paddle_hl.to_tensor(x.astype(dtype)),
                                 [paddle_hl.to_tensor(nbrs.astype(dtype)),
                                  paddle_hl.to_tensor(nbrs2.astype(dtype))],
                                 [paddle_hl.to_tensor(count), paddle_hl.to_tensor(count2)])
    theirs = pd.geometric.reindex_heter_graph(pd.to_tensor(x.astype(dtype)),
                                              [pd.to_tensor(nbrs.astype(dtype)),
                                               pd.to_tensor(nbrs2.astype(dtype))],
                                              [pd.to_tensor(count), pd.to_tensor(count2)])
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_reindex_large_ids_use_the_same_mapping():
    x = np.array([10**12, 5, 7])
    nbrs = np.array([3, 10**12 + 1, 5, 3, 9, 10**12 + 1])
    cnt = np.array([2, 3, 1], dtype="int32")
    src, dst, nodes = (t.numpy() for t in G.reindex_graph(
        paddle_hl.to_tensor(x), paddle_hl.to_tensor(nbrs), paddle_hl.to_tensor(cnt)))
    np.testing.assert_array_equal(nodes, [10**12, 5, 7, 3, 10**12 + 1, 9])
    np.testing.assert_array_equal(src, [3, 4, 1, 3, 5, 4])
    np.testing.assert_array_equal(dst, [0, 0, 1, 1, 1, 2])


def test_khop_sampler_edges_are_real():
    row, colptr = csc_graph(300, 8, seed=9)
    seeds = np.array([3, 50, 120])
    src, dst, sample_index, reindex_nodes, eids = G.sampling.graph_khop_sampler(
        paddle_hl.to_tensor(row), paddle_hl.to_tensor(colptr), paddle_hl.to_tensor(seeds),
        [5, 3], sorted_eids=paddle_hl.to_tensor(np.arange(row.shape[0])), return_eids=True)
    nodes = sample_index.numpy()
    np.testing.assert_array_equal(nodes[reindex_nodes.numpy()], seeds)
    s, d, e = nodes[src.numpy()[:, 0]], nodes[dst.numpy()[:, 0]], eids.numpy()
    np.testing.assert_array_equal(row[e], s)
    assert np.all((e >= colptr[d]) & (e < colptr[d + 1]))
    assert len(np.unique(nodes)) == len(nodes)


class TestBadInput:
    row = paddle_hl.to_tensor(ROW)
    colptr = paddle_hl.to_tensor(COLPTR)

    def test_sample_neighbors_errors(self):
        with pytest.raises(IndexError, match="'input_nodes' contains 11"):
            G.sample_neighbors(self.row, self.colptr, paddle_hl.to_tensor([0, 11]), 2)
        with pytest.raises(TypeError, match="'input_nodes' must be an int32 or int64"):
            G.sample_neighbors(self.row, self.colptr, paddle_hl.to_tensor([0.0]), 2)
        with pytest.raises(ValueError, match="`eids` should not be None"):
            G.sample_neighbors(self.row, self.colptr, paddle_hl.to_tensor([0]), 2,
                               return_eids=True)
        with pytest.raises(ValueError, match="'eids' must have one id per edge"):
            G.sample_neighbors(self.row, self.colptr, paddle_hl.to_tensor([0]), 2,
                               eids=paddle_hl.arange(5), return_eids=True)
        with pytest.raises(ValueError, match="'sample_size' must be -1"):
            G.sample_neighbors(self.row, self.colptr, paddle_hl.to_tensor([0]), -3)

    def test_weighted_errors(self):
        with pytest.raises(ValueError, match="'edge_weight' must be \\[E\\]"):
            G.weighted_sample_neighbors(self.row, self.colptr, paddle_hl.ones([4]),
                                        paddle_hl.to_tensor([0]), 1)
        with pytest.raises(ValueError, match="non-negative"):
            G.weighted_sample_neighbors(self.row, self.colptr, -paddle_hl.ones([13]),
                                        paddle_hl.to_tensor([0]), 1)

    def test_reindex_errors(self):
        x = paddle_hl.to_tensor([0, 1])
        with pytest.raises(ValueError, match=r"sum\(count\) = 3 but 'neighbors' has 4"):
            G.reindex_graph(x, paddle_hl.to_tensor([4, 5, 6, 7]),
                            paddle_hl.to_tensor([1, 2], dtype="int32"))
        with pytest.raises(ValueError, match="'count' must have one entry per node"):
            G.reindex_graph(x, paddle_hl.to_tensor([4]), paddle_hl.to_tensor([1], "int32"))
        with pytest.raises(TypeError, match="'neighbors' must have x's dtype"):
            G.reindex_graph(x, paddle_hl.to_tensor([4, 5], "int32"),
                            paddle_hl.to_tensor([1, 1], "int32"))
        with pytest.raises(TypeError, match="must be lists"):
            G.reindex_heter_graph(x, paddle_hl.to_tensor([4, 5]),
                                  paddle_hl.to_tensor([1, 1], "int32"))


@pytest.mark.parity
@pytest.mark.parametrize("sizes", [[10], [10, 10]])
def test_khop_sampler_matches_paddle_when_every_neighbour_is_kept(pd, sizes):
    # sample sizes above every degree make the result deterministic: same edges, same order,
    # same node numbering (later hops' frontiers in ascending id order, as Paddle)
    row, colptr = csc_graph(200, 4, seed=3, max_deg=6)
    seeds = np.array([5, 17, 90, 3])
    eids = np.arange(row.shape[0]) * 2
    ours = G.sampling.graph_khop_sampler(
        paddle_hl.to_tensor(row), paddle_hl.to_tensor(colptr), paddle_hl.to_tensor(seeds),
        sizes, sorted_eids=paddle_hl.to_tensor(eids), return_eids=True)
    theirs = pd.incubate.graph_khop_sampler(
        pd.to_tensor(row), pd.to_tensor(colptr), pd.to_tensor(seeds), sizes,
        sorted_eids=pd.to_tensor(eids), return_eids=True)
    for a, b in zip(ours, theirs):
        assert a.shape == list(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
