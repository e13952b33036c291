"""Extension functionals: sequence_mask, gather_tree, temporal_shift,
class_center_sample, diag_embed: parity with Paddle 2.6.2, references and errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from tests.op_check import check_parity, gradcheck

F = paddle_hl.nn.functional


# ------------------------------------------------------------------------ sequence_mask
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool", "int32"])
def test_sequence_mask_b89(dtype):
    """[B, maxlen] with 1 where position < length."""
    out = F.sequence_mask(paddle_hl.to_tensor([1, 3, 0, 2]), 4, dtype=dtype)
    assert out.shape == [4, 4] and out.dtype == getattr(paddle_hl, dtype)
    ref = np.array([[1, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(out.numpy().astype(int), ref)


@pytest.mark.parity
@pytest.mark.parametrize("lengths,maxlen", [([1, 3, 2], None), ([[1, 3], [2, 0]], None),
                                            ([1, 3, 2], 5), ([0], 2), ([4, 2], 3)])
@pytest.mark.parametrize("ldtype", ["int32", "int64"])
def test_sequence_mask_parity(lengths, maxlen, ldtype, pd):
    check_parity(lambda lib, x: lib.nn.functional.sequence_mask(x, maxlen),
                 [np.array(lengths, dtype=ldtype)], pd, grad=False)


def test_sequence_mask_tensor_maxlen_and_errors():
    out = F.sequence_mask(paddle_hl.to_tensor([1, 2]), maxlen=paddle_hl.to_tensor(3))
    assert out.shape == [2, 3]
    empty = F.sequence_mask(paddle_hl.zeros([0], dtype="int64"))
    assert empty.shape == [0, 0]
    with pytest.raises(TypeError, match="sequence_mask.*integer"):
        F.sequence_mask(paddle_hl.to_tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="sequence_mask.*maxlen"):
        F.sequence_mask(paddle_hl.to_tensor([1, 2]), maxlen=-1)


# ------------------------------------------------------------------------- gather_tree
def _gather_tree_ref(ids, parents):
    t_max, bsz, beam = ids.shape
    out = np.empty_like(ids)
    for b in range(bsz):
        for k in range(beam):
            p = k
            for t in range(t_max - 1, -1, -1):
                out[t, b, k] = ids[t, b, p]
                p = parents[t, b, p]
    return out


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_gather_tree_parity(dtype, pd):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 20, (5, 3, 4)).astype(dtype)
    parents = rng.integers(0, 4, (5, 3, 4)).astype(dtype)
    res = check_parity(lambda lib, i, p: lib.nn.functional.gather_tree(i, p), [ids, parents],
                       pd, grad=False)
    np.testing.assert_array_equal(res["hl"][0][0], _gather_tree_ref(ids, parents))


def test_gather_tree_doc_example_and_errors():
    ids = paddle_hl.to_tensor([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]])
    parents = paddle_hl.to_tensor([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]])
    out = F.gather_tree(ids, parents)
    assert out.numpy().tolist() == [[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]]
    with pytest.raises(ValueError, match="gather_tree.*parents"):
        F.gather_tree(ids, paddle_hl.to_tensor(np.full((3, 2, 2), 5)))
    with pytest.raises(ValueError, match=r"gather_tree.*\[T, B, beam\]"):
        F.gather_tree(ids, paddle_hl.zeros([3, 2], dtype="int64"))
    with pytest.raises(TypeError, match="gather_tree.*float32"):
        F.gather_tree(paddle_hl.zeros([3, 2, 2]), parents)


# ----------------------------------------------------------------------- temporal_shift
@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,seg,ratio,fmt", [
    ((6, 8, 2, 2), 3, 0.25, "NCHW"), ((6, 10, 1, 3), 2, 0.2, "NCHW"),
    ((4, 2, 2, 8), 4, 0.25, "NHWC"), ((3, 7, 2, 1), 3, 0.45, "NCHW"),
    ((2, 4, 1, 1), 1, 0.25, "NCHW"), ((6, 3, 2, 2), 3, 0.1, "NCHW")])
def test_temporal_shift_parity(shape, seg, ratio, fmt, dtype, pd):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    check_parity(lambda lib, t: lib.nn.functional.temporal_shift(t, seg, ratio,
                                                                 data_format=fmt), [x], pd)


def test_temporal_shift_reference_and_gradcheck():
    x = np.arange(2 * 3 * 8, dtype="float64").reshape(6, 8, 1, 1)
    out = F.temporal_shift(paddle_hl.to_tensor(x), 3).numpy().reshape(2, 3, 8)
    v = x.reshape(2, 3, 8)
    ref = v.copy()
    ref[:, :, :2] = 0
    ref[:, 1:, :2] = v[:, :-1, :2]      # first quarter: from the previous frame
    ref[:, :, 2:4] = 0
    ref[:, :-1, 2:4] = v[:, 1:, 2:4]    # second quarter: from the next frame
    np.testing.assert_array_equal(out, ref)
    gradcheck(lambda t: F.temporal_shift(t, 2, 0.3),
              [np.random.default_rng(1).standard_normal((4, 5, 2, 2))])
    gradcheck(lambda t: F.temporal_shift(t, 2, data_format="NHWC"),
              [np.random.default_rng(1).standard_normal((4, 2, 2, 6))])


def test_temporal_shift_errors():
    with pytest.raises(ValueError, match="temporal_shift.*seg_num"):
        F.temporal_shift(paddle_hl.ones([5, 4, 1, 1]), 3)
    with pytest.raises(ValueError, match="temporal_shift.*data_format"):
        F.temporal_shift(paddle_hl.ones([6, 4, 1, 1]), 3, data_format="NCL")
    with pytest.raises(ValueError, match="temporal_shift.*4-D"):
        F.temporal_shift(paddle_hl.ones([6, 4, 1]), 3)
    with pytest.raises(ValueError, match="temporal_shift.*shift_ratio"):
        F.temporal_shift(paddle_hl.ones([6, 4, 1, 1]), 3, shift_ratio=0.5)


# ------------------------------------------------------------------ class_center_sample
LABELS = np.array([11, 5, 1, 3, 12, 2, 15, 19, 18, 19])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("num_samples", [5, 9, 12, 20])
def test_class_center_sample_properties(dtype, num_samples):
    remapped, centers = F.class_center_sample(paddle_hl.to_tensor(LABELS.astype(dtype)), 20,
                                              num_samples)
    assert remapped.dtype == getattr(paddle_hl, dtype) == centers.dtype
    c = centers.numpy()
    pos = np.unique(LABELS)
    assert len(c) == max(num_samples, len(pos))
    assert len(np.unique(c)) == len(c) and c.min() >= 0 and c.max() < 20
    np.testing.assert_array_equal(c[:len(pos)], pos)            # positives first, sorted
    np.testing.assert_array_equal(c[remapped.numpy()], LABELS)   # remapping is consistent


@pytest.mark.parity
def test_class_center_sample_deterministic_parts_match_paddle(pd):
    """The remapped labels and the positive centres equal Paddle's (negatives are random)."""
    ours = F.class_center_sample(paddle_hl.to_tensor(LABELS), 20, 12)
    ref = pd.nn.functional.class_center_sample(pd.to_tensor(LABELS), 20, 12)
    np.testing.assert_array_equal(ours[0].numpy(), ref[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy()[:9], ref[1].numpy()[:9])
    assert ours[1].shape == ref[1].shape


def test_class_center_sample_reproducible_with_seed_b88():
    """The same paddle.seed gives the same sample; another seed gives another one."""
    runs = []
    for seed in (7, 7, 8):
        paddle_hl.seed(seed)
        runs.append(F.class_center_sample(paddle_hl.to_tensor(LABELS), 1000, 50)[1].numpy())
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_class_center_sample_errors():
    with pytest.raises(ValueError, match="num_samples less than or equal to 20"):
        F.class_center_sample(paddle_hl.to_tensor(LABELS), 20, 25)
    with pytest.raises(ValueError, match=r"class_center_sample.*\[0, 10\)"):
        F.class_center_sample(paddle_hl.to_tensor(LABELS), 10, 5)
    with pytest.raises(TypeError, match="class_center_sample.*integer"):
        F.class_center_sample(paddle_hl.to_tensor([1.0]), 10, 5)


# --------------------------------------------------------------------------- diag_embed
def test_diag_embed_is_reexported():
    assert F.diag_embed is paddle_hl.diag_embed
    out = F.diag_embed(paddle_hl.to_tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert out.shape == [2, 2, 2]
    np.testing.assert_array_equal(out.numpy()[1], np.diag([3.0, 4.0]))
