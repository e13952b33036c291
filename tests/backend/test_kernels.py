"""The backends and the window algorithms of paddle_hl/backend/windows.py: each window function
against a naive NumPy loop, adjoint pairs against each other (<A x, y> == <x, A^T y>), the tie
and padding rules the pooling ops rely on, the interface both backend modules share, and (on a
GPU) every one of them on CuPy against NumPy."""

import ast
import itertools
import pathlib

import numpy as np
import pytest

from paddle_hl import backend
from paddle_hl.backend import _numpy
from paddle_hl.backend import windows as K

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




# ------------------------------------------------------------------ the backend interface
INTERFACE = ("name", "xp", "ndarray", "to_numpy", "from_host", "as_strided", "view_of",
             "scatter_add",
             "index_add", "index_reduce", "has_fused_updates", "fused_update", "depthwise_forward",
             "depthwise_input_grad", "depthwise_weight_grad",
             # devices, timing, DLPack, random numbers, sparse products
             "device_count", "current_device", "use_device", "device_of", "to_device",
             "synchronize", "memory_stats", "empty_cache", "device_properties",
             "compute_capability", "record_event", "event_seconds", "to_dlpack", "from_dlpack",
             "seeded_draws", "csr_dense", "csr_t_dense", "csr_csr")


def _public_names(path):
    """Top-level public names a module defines (read from its source: CuPy may be missing)."""
    tree = ast.parse(pathlib.Path(path).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_backend_modules_share_one_interface():
    here = pathlib.Path(backend.__file__).parent
    np_names = _public_names(here / "_numpy.py")
    cp_names = _public_names(here / "_cupy.py")
    assert set(INTERFACE) <= np_names
    assert set(INTERFACE) <= cp_names
    # the functions both define take the same arguments
    for mod in (here / "_numpy.py", here / "_cupy.py"):
        tree = ast.parse(mod.read_text())
        sigs = {n.name: [a.arg for a in n.args.args] for n in tree.body
                if isinstance(n, ast.FunctionDef)}
        if mod.name == "_numpy.py":
            ref = sigs
        else:
            for fn in INTERFACE:
                if fn in sigs or fn in ref:
                    assert sigs.get(fn) == ref.get(fn), fn


def test_backend_interface_is_documented():
    # every name of the interface appears in the package docstring that describes it
    doc = backend.__doc__
    missing = [n for n in INTERFACE if f"``{n}" not in doc]
    assert not missing, missing


def test_backend_modules_do_not_import_each_other():
    here = pathlib.Path(backend.__file__).parent
    for a, b in (("_numpy.py", "_cupy"), ("_cupy.py", "_numpy"), ("windows.py", "_cupy")):
        tree = ast.parse((here / a).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert b not in (node.module or "") and all(al.name != b for al in node.names), a


def test_for_array_picks_the_numpy_backend():
    assert backend.for_array(np.zeros(2)) is _numpy
    assert backend.for_array(np.float32(1.0)) is _numpy
    assert _numpy.xp is np and _numpy.name == "numpy"
    assert backend.get_array_module(np.zeros(2)) is np


def test_scatter_add_accumulates_duplicates():
    idx = np.array([0, 3, 3, 1, 3])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    out = backend.scatter_add(5, idx, vals)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 4, 0, 10, 0])
    ints = backend.scatter_add(3, np.array([2, 2]), np.array([1, 2], np.int64))
    np.testing.assert_array_equal(ints, [0, 0, 3])


@pytest.mark.parametrize("n_ids", [0, 5, 40])
def test_index_add_rows_and_elements(n_ids):
    # rows (an embedding gradient) with heavy repeats, beyond the rank loops
    ids = np.concatenate([np.zeros(max(n_ids - 3, 0), np.int64), np.arange(3)])[:n_ids]
    rows = RNG.standard_normal((n_ids, 4))
    out = np.zeros((6, 4))
    backend.index_add(out, ids, rows)
    ref = np.zeros((6, 4))
    for i, r in zip(ids, rows):
        ref[i] += r
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    # elements through a tuple index
    a = np.zeros((3, 3))
    backend.index_add(a, (np.array([0, 0, 2]), np.array([1, 1, 2])), np.array([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(a, [[0, 3, 0], [0, 0, 0], [0, 0, 5]])


@pytest.mark.parametrize("ufunc,init,ref", [("add", 1.0, [1, 8, 4]),
                                            ("multiply", 1.0, [1, 12, 3]),
                                            ("maximum", 0.0, [0, 4, 3]),
                                            ("minimum", 9.0, [9, 3, 3])])
def test_index_reduce(ufunc, init, ref):
    a = np.full(3, init)
    backend.index_reduce(ufunc, a, np.array([1, 1, 2]), np.array([3.0, 4.0, 3.0]))
    np.testing.assert_array_equal(a, ref)


def test_numpy_backend_has_no_fused_updates():
    p = np.ones(3)
    assert backend.fused_update("sgd", np.ones(3), (0.1,), (p,)) is False
    np.testing.assert_array_equal(p, 1.0)  # untouched: the optimizer runs its own passes


def test_fused_kernels_cover_every_gpu_update():
    # each update name the optimizers ask for has a kernel (a missing one would fail on GPU)
    import paddle_hl.optimizer as opt_pkg

    names = set()
    for f in pathlib.Path(opt_pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "fused_update"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                names.add(node.args[0].value)
    src = (pathlib.Path(backend.__file__).parent / "_cuda_kernels.py").read_text()
    assert names and all(f'"{n}": (' in src for n in names), names


# ------------------------------------------------------------------ GPU against CPU
def _cp():
    if backend.cupy_module() is None:
        pytest.skip(f"needs CuPy and a CUDA GPU ({backend.cupy_error()})")
    return backend.cupy_module()


@pytest.mark.gpu
def test_cupy_backend_is_chosen_for_cupy_arrays():
    cp = _cp()
    g = backend.for_array(cp.zeros(2))
    assert g is not _numpy and g.name == "cupy" and g.xp is cp
    assert backend.get_array_module(cp.zeros(2)) is cp
    assert backend.is_gpu_array(cp.zeros(2)) and not backend.is_gpu_array(np.zeros(2))
    np.testing.assert_array_equal(backend.to_numpy(cp.arange(3)), [0, 1, 2])


@pytest.mark.gpu
def test_cupy_windows_match_numpy():
    cp = _cp()
    x = RNG.standard_normal((2, 3, 7, 8))
    xg = cp.asarray(x)
    osz = _out(x.shape, (3, 3), (2, 1), (1, 2))
    np.testing.assert_allclose(cp.asnumpy(K.im2col(xg, (3, 3), (2, 1), (1, 2), osz, 3)),
                               K.im2col(x, (3, 3), (2, 1), (1, 2), osz, 3), rtol=1e-12)
    np.testing.assert_array_equal(cp.asnumpy(K.windows(xg, (3, 3), (2, 1), (1, 2), osz, "nk")),
                                  K.windows(x, (3, 3), (2, 1), (1, 2), osz, "nk"))
    cols = RNG.standard_normal((27, 2 * int(np.prod(osz))))
    np.testing.assert_allclose(
        cp.asnumpy(K.col2im(cp.asarray(cols), x.shape, (3, 3), (2, 1), (1, 2), osz)),
        K.col2im(cols, x.shape, (3, 3), (2, 1), (1, 2), osz), rtol=1e-12)
    pads = ((1, 1), (2, 0))
    np.testing.assert_array_equal(cp.asnumpy(K.pad(xg, pads, -3.0)), K.pad(x, pads, -3.0))
    o2 = _out((2, 3, 9, 8), (3, 3), (1, 1), (1, 1))
    np.testing.assert_allclose(
        cp.asnumpy(K.im2col_nin(xg, (3, 3), (1, 1), (1, 1), pads, o2)),
        K.im2col_nin(x, (3, 3), (1, 1), (1, 1), pads, o2), rtol=1e-12)
    out, arg = K.max_pool(xg, (2, 2), (2, 2), (3, 4))
    ref, rarg = K.max_pool(x, (2, 2), (2, 2), (3, 4))
    np.testing.assert_array_equal(cp.asnumpy(out), ref)
    np.testing.assert_array_equal(cp.asnumpy(arg), rarg)
    g = RNG.standard_normal(ref.shape)
    np.testing.assert_array_equal(
        cp.asnumpy(K.max_pool_grad(cp.asarray(g), arg, x.shape, (2, 2), (2, 2))),
        K.max_pool_grad(g, rarg, x.shape, (2, 2), (2, 2)))
    np.testing.assert_allclose(cp.asnumpy(K.sum_pool(xg, (3, 2), (1, 2), (5, 4))),
                               K.sum_pool(x, (3, 2), (1, 2), (5, 4)), rtol=1e-12)
    aout, aflat = K.adaptive_max(xg, (3, 5))
    rout, rflat = K.adaptive_max(x, (3, 5))
    np.testing.assert_array_equal(cp.asnumpy(aout), rout)
    np.testing.assert_array_equal(cp.asnumpy(aflat), rflat)


@pytest.mark.gpu
@pytest.mark.parametrize("m", [1, 2])
def test_cupy_depthwise_matches_numpy(m):
    cp = _cp()
    c = 3
    x = RNG.standard_normal((2, c, 6, 5))
    w = RNG.standard_normal((c * m, 1, 3, 2))
    stride, dil, pads = (2, 1), (1, 2), ((1, 1), (0, 2))
    osz = _out((2, c, 8, 7), (3, 2), stride, dil)
    xg, wg = cp.asarray(x), cp.asarray(w)
    y = K.depthwise_forward(x, w, stride, dil, osz, pads)
    np.testing.assert_allclose(cp.asnumpy(K.depthwise_forward(xg, wg, stride, dil, osz, pads)),
                               y, rtol=1e-12)
    g = RNG.standard_normal(y.shape)
    np.testing.assert_allclose(
        cp.asnumpy(K.depthwise_input_grad(cp.asarray(g), wg, (2, c, 8, 7), stride, dil, pads)),
        K.depthwise_input_grad(g, w, (2, c, 8, 7), stride, dil, pads), rtol=1e-12)
    np.testing.assert_allclose(
        cp.asnumpy(K.depthwise_weight_grad(xg, cp.asarray(g), (3, 2), stride, dil, pads)),
        K.depthwise_weight_grad(x, g, (3, 2), stride, dil, pads), rtol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("ufunc", ["add", "multiply", "maximum", "minimum"])
def test_cupy_index_updates_match_numpy(ufunc):
    cp = _cp()
    idx = np.array([4, 1, 4, 4, 0, 1])
    vals = RNG.standard_normal(6)
    a = RNG.standard_normal(5)
    ref = a.copy()
    backend.index_reduce(ufunc, ref, idx, vals)
    ag = cp.asarray(a)
    backend.index_reduce(ufunc, ag, cp.asarray(idx), cp.asarray(vals))
    np.testing.assert_allclose(cp.asnumpy(ag), ref, rtol=1e-12)
    rows = RNG.standard_normal((6, 3))
    out = np.zeros((5, 3))
    backend.index_add(out, idx, rows)
    outg = cp.zeros((5, 3))
    backend.index_add(outg, cp.asarray(idx), cp.asarray(rows))
    np.testing.assert_allclose(cp.asnumpy(outg), out, rtol=1e-12)
    np.testing.assert_allclose(
        cp.asnumpy(backend.scatter_add(5, cp.asarray(idx), cp.asarray(vals))),
        backend.scatter_add(5, idx, vals), rtol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "bfloat16", "float16"])
def test_cupy_index_add_widens_dtypes_without_atomics(dtype):
    """CuPy's atomic add takes 32/64-bit types and float16 only: the others sum in a wider
    type and are cast back, giving NumPy's sums."""
    cp = _cp()
    from paddle_hl.framework import dtype as dt

    npd = dt.to_np(dtype)
    idx = np.array([4, 1, 4, 4, 0, 1])
    vals = (RNG.integers(0, 5, 6)).astype(npd)
    a = (RNG.integers(0, 5, 5)).astype(npd)
    ref = a.copy()
    backend.index_add(ref, idx, vals)
    ag = cp.asarray(a)
    backend.index_add(ag, cp.asarray(idx), cp.asarray(vals))
    assert ag.dtype == ref.dtype
    np.testing.assert_array_equal(cp.asnumpy(ag).astype(np.float32), ref.astype(np.float32))


def test_host_values_keep_order_and_values():
    vals = [np.float32(1.5), np.array(True), np.float64(2.25), np.array(7, dtype=np.int64)]
    got = backend.host_values(vals)
    assert [v.item() for v in got] == [1.5, True, 2.25, 7]
    assert backend.host_values([]) == []


def test_view_of_on_the_cpu():
    a = np.arange(6.0)
    assert backend.view_of(a, a) and backend.view_of(a.reshape(2, 3), a)
    assert not backend.view_of(a.copy(), a)
