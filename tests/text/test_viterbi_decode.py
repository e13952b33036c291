"""paddle_hl.text.viterbi_decode and ViterbiDecoder: a brute-force search over all tag paths,
Paddle 2.6.2 on the same inputs, variable lengths, dtypes, devices and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from paddle_hl.text import ViterbiDecoder, viterbi_decode

import paddle_hl as paddle


def brute_force(pot, trans, n, bos_eos):
    """Best score and path of one sequence by trying every tag path (start tag = last row,
    stop tag = second to last row when bos_eos)."""
    best, best_path = -np.inf, None
    for path in itertools.product(range(pot.shape[1]), repeat=n):
        s = sum(pot[t, path[t]] for t in range(n))
        s += sum(trans[path[t - 1], path[t]] for t in range(1, n))
        if bos_eos:
            s += trans[-1, path[0]] + trans[-2, path[-1]]
        if s > best:
            best, best_path = s, path
    return best, list(best_path)


def _inputs(rng, b, seq_len, n_tags, dtype="float32", lengths=None):
    pot = rng.standard_normal((b, seq_len, n_tags)).astype(dtype)
    trans = rng.standard_normal((n_tags, n_tags)).astype(dtype)
    if lengths is None:
        lengths = rng.integers(1, seq_len + 1, b)
    return pot, trans, np.asarray(lengths, dtype=np.int64)


@pytest.mark.parametrize("bos_eos", [True, False])
@pytest.mark.parametrize("lengths", [[5, 3, 1, 2], [4, 4, 4, 4], [2, 1, 2, 1]])
def test_matches_brute_force(device, bos_eos, lengths):
    rng = np.random.default_rng(sum(lengths) + bos_eos)
    pot, trans, lens = _inputs(rng, 4, 5, 4, "float64", lengths)
    scores, paths = viterbi_decode(paddle.to_tensor(pot), paddle.to_tensor(trans),
                                   paddle.to_tensor(lens), bos_eos)
    assert scores.shape == [4] and scores.dtype == paddle.float64
    assert paths.shape == [4, max(lengths)] and paths.dtype == paddle.int64
    assert str(scores.place) == str(paddle.to_tensor(pot).place)
    for i, n in enumerate(lengths):
        best, path = brute_force(pot[i], trans, n, bos_eos)
        np.testing.assert_allclose(scores.numpy()[i], best, rtol=1e-12)
        assert paths.numpy()[i, :n].tolist() == path
        assert (paths.numpy()[i, n:] == 0).all()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bos_eos", [True, False])
@pytest.mark.parametrize("shape", [(6, 7, 5), (3, 12, 9), (1, 1, 3)])
def test_matches_paddle(pd, dtype, bos_eos, shape):
    rng = np.random.default_rng(shape[1] * 10 + bos_eos)
    b, seq_len, n_tags = shape
    pot, trans, lens = _inputs(rng, b, seq_len, n_tags, dtype)
    lens[0] = seq_len - 1 if seq_len > 1 else 1  # max(lengths) may be below seq_len
    ref_s, ref_p = pd.text.viterbi_decode(pd.to_tensor(pot), pd.to_tensor(trans),
                                          pd.to_tensor(lens), bos_eos)
    s, p = viterbi_decode(paddle.to_tensor(pot), paddle.to_tensor(trans),
                          paddle.to_tensor(lens), bos_eos)
    assert p.shape == list(ref_p.shape) and s.shape == list(ref_s.shape)
    assert s.dtype == getattr(paddle, dtype)
    np.testing.assert_allclose(s.numpy(), ref_s.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(p.numpy(), ref_p.numpy())


@pytest.mark.parity
def test_layer_matches_paddle_layer(pd):
    rng = np.random.default_rng(11)
    pot, trans, lens = _inputs(rng, 8, 10, 6)
    ref = pd.text.ViterbiDecoder(pd.to_tensor(trans))(pd.to_tensor(pot), pd.to_tensor(lens))
    layer = ViterbiDecoder(paddle.to_tensor(trans))
    assert isinstance(layer, paddle.nn.Layer)
    out = layer(paddle.to_tensor(pot), paddle.to_tensor(lens))
    np.testing.assert_allclose(out[0].numpy(), ref[0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[1].numpy(), ref[1].numpy())
    # the functional form gives the same, and the layer has no parameters of its own
    fn = viterbi_decode(paddle.to_tensor(pot), paddle.to_tensor(trans), paddle.to_tensor(lens))
    np.testing.assert_array_equal(out[1].numpy(), fn[1].numpy())
    assert list(layer.state_dict()) == [] and layer.include_bos_eos_tag is True


def test_batch_items_are_independent():
    # decoding a batch equals decoding each sequence alone (the masks keep them apart)
    rng = np.random.default_rng(5)
    pot, trans, lens = _inputs(rng, 16, 9, 7, lengths=rng.integers(1, 10, 16))
    s, p = viterbi_decode(paddle.to_tensor(pot), paddle.to_tensor(trans), paddle.to_tensor(lens))
    for i in (0, 5, 15):
        n = int(lens[i])
        s1, p1 = viterbi_decode(paddle.to_tensor(pot[i:i + 1, :n]), paddle.to_tensor(trans),
                                paddle.to_tensor(lens[i:i + 1]))
        np.testing.assert_allclose(s.numpy()[i], s1.numpy()[0], rtol=1e-6)
        np.testing.assert_array_equal(p.numpy()[i, :n], p1.numpy()[0])


def test_no_graph_and_stop_gradient():
    pot = paddle.to_tensor(np.ones((2, 3, 4), np.float32), stop_gradient=False)
    s, p = viterbi_decode(pot, paddle.zeros([4, 4]), paddle.to_tensor([3, 2]))
    assert s.stop_gradient and p.stop_gradient
    np.testing.assert_allclose(s.numpy(), [3.0, 2.0])


def test_bad_input():
    pot = paddle.rand([2, 5, 4])
    lens = paddle.to_tensor([5, 3])
    with pytest.raises(ValueError, match=r"viterbi_decode: the tag counts of potentials and "
                                         r"transition_params differ.*\[2, 5, 4\].*\[3, 3\]"):
        viterbi_decode(pot, paddle.rand([3, 3]), lens)
    with pytest.raises(ValueError, match="transition_params must be a square"):
        viterbi_decode(pot, paddle.rand([4, 5]), lens)
    with pytest.raises(ValueError, match=r"lengths must be in \[0, seq_len=5\].*\[6, 3\]"):
        viterbi_decode(pot, paddle.rand([4, 4]), paddle.to_tensor([6, 3]))
    with pytest.raises(ValueError, match="lengths must be 1-D with batch_size=2"):
        viterbi_decode(pot, paddle.rand([4, 4]), paddle.to_tensor([5, 3, 1]))
    with pytest.raises(TypeError, match="lengths must be an int64 tensor, but got paddle.int32"):
        viterbi_decode(pot, paddle.rand([4, 4]), paddle.to_tensor([5, 3], dtype="int32"))
    with pytest.raises(ValueError, match=r"potentials must be 3-D.*\[5, 4\]"):
        viterbi_decode(paddle.rand([5, 4]), paddle.rand([4, 4]), lens)
    with pytest.raises(TypeError, match="same dtype"):
        viterbi_decode(pot, paddle.rand([4, 4], dtype="float64"), lens)
    with pytest.raises(TypeError, match="potentials must be a paddle.Tensor"):
        viterbi_decode([[[1.0]]], paddle.rand([1, 1]), paddle.to_tensor([1]))
    with pytest.raises(ValueError, match="tag counts"):
        ViterbiDecoder(paddle.rand([3, 3]))(pot, lens)


def test_zero_lengths():
    s, p = viterbi_decode(paddle.rand([2, 3, 4]), paddle.rand([4, 4]), paddle.to_tensor([0, 0]))
    assert p.shape == [2, 0] and s.numpy().tolist() == [0.0, 0.0]
