"""Window kernels of paddle_hl/backend/_numpy.py (and, on a GPU, _cupy.py): each one against a
naive NumPy loop, adjoint pairs against each other (<A x, y> == <x, A^T y>), and the tie and
padding rules the pooling ops rely on."""

import itertools

import numpy as np
import pytest

from paddle_hl import backend
from paddle_hl.backend import _numpy as K

RNG = np.random.default_rng(3)


def _naive_windows(xpad, ksize, stride, dilation, out_size):
    """[N, C, *out, *k] by explicit loops (the reference)."""
    n, c = xpad.shape[:2]
    res = np.empty((n, c, *out_size, *ksize), xpad.dtype)
    for o in itertools.product(*[range(m) for m in out_size]):
        for k in itertools.product(*[range(m) for m in ksize]):
            pos = tuple(oi * s + ki * d for oi, ki, s, d in zip(o, k, stride, dilation))
            res[(slice(None), slice(None)) + o + k] = xpad[(slice(None), slice(None)) + pos]
    return res


CASES = [
    ((2, 3, 7), (3,), (2,), (1,)),
    ((2, 3, 7, 8), (3, 2), (1, 2), (2, 1)),
    ((1, 2, 5, 4, 6), (2, 2, 3), (2, 1, 1), (1, 2, 1)),
]


def _out(shape, ksize, stride, dilation):
    return tuple((n - d * (k - 1) - 1) // s + 1
                 for n, k, s, d in zip(shape[2:], ksize, stride, dilation))


@pytest.mark.parametrize("shape,ksize,stride,dil", CASES)
def test_windows_match_naive_loops(shape, ksize, stride, dil):
    x = RNG.standard_normal(shape)
    osz = _out(shape, ksize, stride, dil)
    ref = _naive_windows(x, ksize, stride, dil, osz)
    np.testing.assert_array_equal(K.windows(x, ksize, stride, dil, osz, "nk"), ref)
    nd = len(ksize)
    # "kn" is the same data as [C, *k, N, *out]
    perm = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    np.testing.assert_array_equal(K.windows(x, ksize, stride, dil, osz, "kn"),
                                  ref.transpose(perm))
    # a channels-last array passed as a transposed view gives the same windows
    xcl = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    np.testing.assert_array_equal(
        K.windows(np.moveaxis(xcl, -1, 1), ksize, stride, dil, osz, "nk"), ref)


@pytest.mark.parametrize("shape,ksize,stride,dil", CASES)
@pytest.mark.parametrize("groups", [1, 3])
def test_im2col_col2im_are_adjoint(shape, ksize, stride, dil, groups):
    if shape[1] % groups:
        groups = shape[1]
    x = RNG.standard_normal(shape)
    osz = _out(shape, ksize, stride, dil)
    cols = K.im2col(x, ksize, stride, dil, osz, groups)
    c = shape[1]
    assert cols.shape == (groups, c // groups * int(np.prod(ksize)), shape[0] * int(np.prod(osz)))
    assert cols.flags.c_contiguous
    y = RNG.standard_normal(cols.shape)
    back = K.col2im(y, shape, ksize, stride, dil, osz)
    assert back.shape == shape
    np.testing.assert_allclose(np.vdot(cols, y), np.vdot(x, back), rtol=1e-12)


def test_col2im_sums_overlaps():
    shape = (1, 1, 4, 4)
    ones = np.ones((1 * 9, 1 * 4))
    cover = K.col2im(ones, shape, (3, 3), (1, 1), (1, 1), (2, 2))[0, 0]
    np.testing.assert_array_equal(cover, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2],
                                          [1, 2, 2, 1]])


def test_pad_and_crop():
    x = RNG.standard_normal((2, 3, 4, 5))
    p = K.pad(x, ((1, 2), (0, 3)), value=-7.0)
    assert p.shape == (2, 3, 7, 8) and p.flags.c_contiguous
    np.testing.assert_array_equal(p, np.pad(x, ((0, 0), (0, 0), (1, 2), (0, 3)),
                                            constant_values=-7.0))
    np.testing.assert_array_equal(K.crop(p, ((1, 2), (0, 3)), (4, 5)), x)
    # negative high padding crops
    np.testing.assert_array_equal(K.pad(x, ((0, -1), (1, 0))),
                                  np.pad(x[:, :, :3], ((0, 0), (0, 0), (0, 0), (1, 0))))
    # a channels-last view is padded into a channel-first contiguous array
    xt = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
    np.testing.assert_array_equal(K.pad(xt, ((1, 1), (1, 1))), K.pad(x, ((1, 1), (1, 1))))


@pytest.mark.parametrize("ksize,stride", [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 1))])
def test_max_pool_and_grad(ksize, stride):
    x = RNG.standard_normal((2, 3, 7, 6))
    osz = _out(x.shape, ksize, stride, (1, 1))
    out, arg = K.max_pool(x, ksize, stride, osz)
    win = _naive_windows(x, ksize, stride, (1, 1), osz).reshape(2, 3, *osz, -1)
    np.testing.assert_array_equal(out, win.max(-1))
    np.testing.assert_array_equal(arg, win.argmax(-1))
    assert arg.dtype == np.int8
    g = RNG.standard_normal(out.shape)
    dx = K.max_pool_grad(g, arg, x.shape, ksize, stride)
    # reference: route each gradient to its window's argmax
    ref = np.zeros_like(x)
    for o in itertools.product(*[range(m) for m in osz]):
        k = np.unravel_index(arg[(slice(None), slice(None)) + o], ksize)
        for n, c in itertools.product(range(2), range(3)):
            pos = tuple(oi * s + ki[n, c] for oi, ki, s in zip(o, k, stride))
            ref[(n, c) + pos] += g[(n, c) + o]
    np.testing.assert_allclose(dx, ref, rtol=1e-12)
    out2, none = K.max_pool(x, ksize, stride, osz, want_arg=False)
    assert none is None
    np.testing.assert_array_equal(out2, out)


def test_max_pool_first_maximum_wins():
    x = np.ones((1, 1, 3, 3))
    _, arg = K.max_pool(x, (2, 2), (1, 1), (2, 2))
    np.testing.assert_array_equal(arg, 0)


def test_sum_pool_and_grad_are_adjoint():
    x = RNG.standard_normal((2, 2, 6, 7))
    ksize, stride = (3, 2), (2, 2)
    osz = _out(x.shape, ksize, stride, (1, 1))
    s = K.sum_pool(x, ksize, stride, osz)
    win = _naive_windows(x, ksize, stride, (1, 1), osz)
    np.testing.assert_allclose(s, win.sum(axis=(-2, -1)), rtol=1e-12)
    g = RNG.standard_normal(s.shape)
    for st in (stride, ksize):  # overlapping and non-overlapping windows
        osz2 = _out(x.shape, ksize, st, (1, 1))
        g = RNG.standard_normal((2, 2, *osz2))
        np.testing.assert_allclose(np.vdot(K.sum_pool(x, ksize, st, osz2), g),
                                   np.vdot(x, K.sum_pool_grad(g, x.shape, ksize, st)),
                                   rtol=1e-12)


@pytest.mark.parametrize("m", [1, 2])
def test_depthwise_kernels(m):
    c = 3
    x = RNG.standard_normal((2, c, 6, 5))
    w = RNG.standard_normal((c * m, 1, 3, 2))
    stride, dil = (2, 1), (1, 2)
    osz = _out(x.shape, (3, 2), stride, dil)
    out = K.depthwise_forward(x, w, stride, dil, osz)
    win = _naive_windows(x, (3, 2), stride, dil, osz)  # [N, C, *out, kh, kw]
    ref = np.einsum("ncyxij,cmij->ncmyx", win, w.reshape(c, m, 3, 2)).reshape(2, c * m, *osz)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    g = RNG.standard_normal(out.shape)
    dx = K.depthwise_input_grad(g, w, x.shape, stride, dil)
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(x, dx), rtol=1e-12)
    gw = K.depthwise_weight_grad(x, g, (3, 2), stride, dil)
    assert gw.shape == w.shape
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(w, gw), rtol=1e-12)


def test_scatter_add_accumulates_duplicates():
    idx = np.array([0, 3, 3, 1, 3])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    out = K.scatter_add(5, idx, vals)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 4, 0, 10, 0])
    ints = K.scatter_add(3, np.array([2, 2]), np.array([1, 2], np.int64))
    np.testing.assert_array_equal(ints, [0, 0, 3])


def test_for_array_picks_the_numpy_module():
    assert K.for_array(np.zeros(2)) is K
    assert K.xp is np


@pytest.mark.gpu
def test_cupy_kernels_match_numpy():
    if backend.cupy_module() is None:
        pytest.skip("needs CuPy and a CUDA GPU")
    cp = backend.cupy_module()
    x = RNG.standard_normal((2, 3, 7, 8))
    xg = cp.asarray(x)
    G = K.for_array(xg)
    assert G is not K and G.xp is cp
    osz = _out(x.shape, (3, 3), (2, 1), (1, 2))
    np.testing.assert_allclose(cp.asnumpy(G.im2col(xg, (3, 3), (2, 1), (1, 2), osz, 3)),
                               K.im2col(x, (3, 3), (2, 1), (1, 2), osz, 3), rtol=1e-12)
    cols = RNG.standard_normal((27, 2 * int(np.prod(osz))))
    np.testing.assert_allclose(
        cp.asnumpy(G.col2im(cp.asarray(cols), x.shape, (3, 3), (2, 1), (1, 2), osz)),
        K.col2im(cols, x.shape, (3, 3), (2, 1), (1, 2), osz), rtol=1e-12)
    out, arg = G.max_pool(xg, (2, 2), (2, 2), (3, 4))
    ref, rarg = K.max_pool(x, (2, 2), (2, 2), (3, 4))
    np.testing.assert_array_equal(cp.asnumpy(out), ref)
    np.testing.assert_array_equal(cp.asnumpy(arg), rarg)
    idx = np.array([0, 3, 3, 1])
    np.testing.assert_allclose(
        cp.asnumpy(G.scatter_add(5, cp.asarray(idx), cp.asarray([1.0, 2.0, 3.0, 4.0]))),
        [1, 4, 0, 5, 0])
