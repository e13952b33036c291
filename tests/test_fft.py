"""paddle_hl.fft: values, dtypes, axes/n/s handling, errors and gradients (oracle + finite
differences)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import fft

C2C = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]
R2C = ["rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"]
C2R = ["irfft", "hfft", "irfft2", "hfft2", "irfftn", "hfftn"]
NORMS = ["backward", "ortho", "forward"]
ALL = C2C + R2C + C2R + ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _seed_grad(y_np, seed=1):
    """A random output gradient of y's dtype (complex outputs get complex gradients)."""
    return _rand(y_np.shape, y_np.dtype, seed)


def _run(lib, name, x, kwargs, grad=True):
    t = lib.to_tensor(x, stop_gradient=not grad)
    y = getattr(lib.fft, name)(t, **kwargs)
    yn = y.numpy()
    gx = None
    if grad:
        y.backward(lib.to_tensor(_seed_grad(yn)))
        gx = t.grad.numpy()
    return yn, gx, str(y.dtype).split(".")[-1]


def _parity(pd, name, x, grad=True, tol=None, **kwargs):
    hy, hg, hd = _run(paddle, name, x, kwargs, grad)
    py, pg, pdt = _run(pd, name, x, kwargs, grad)
    assert hd == pdt, f"{name}: dtype {hd} vs paddle {pdt}"
    assert hy.shape == py.shape, f"{name}: shape {hy.shape} vs paddle {py.shape}"
    tol = tol or (1e-4 if hy.dtype in (np.float32, np.complex64) else 1e-10)
    np.testing.assert_allclose(hy, py, rtol=tol, atol=tol)
    if grad:
        assert hg.dtype == pg.dtype
        np.testing.assert_allclose(hg, pg, rtol=tol, atol=tol, err_msg=f"{name} gradient")


def _fd_check(fn, x, eps=1e-6, rtol=1e-6, atol=1e-7, seed=3):
    """Finite-difference check of ``fn`` (paddle_hl tensors in and out) at float64 x.

    With an output gradient G, backward gives dL/dRe(x) + i dL/dIm(x) for the real loss
    L = Re(sum(conj(G) * y)) (Paddle's convention); both parts are checked numerically.
    """
    x = np.array(x, order="C")  # the loop below perturbs x through a flat view
    t = paddle.to_tensor(x, stop_gradient=False)
    y = fn(t)
    g = _rand(y.shape, y.numpy().dtype, seed)
    y.backward(paddle.to_tensor(g))
    ana = t.grad.numpy()

    def loss(a):
        with paddle.no_grad():
            out = fn(paddle.to_tensor(a)).numpy()
        return float(np.real(np.sum(np.conj(g) * out)))

    num = np.zeros(x.shape, dtype=x.dtype)
    flat = x.reshape(-1)
    nflat = num.reshape(-1)
    for i in range(flat.size):
        parts = [1.0, 1j] if x.dtype.kind == "c" else [1.0]
        for unit in parts:
            orig = flat[i]
            flat[i] = orig + eps * unit
            fp = loss(x)
            flat[i] = orig - eps * unit
            fm = loss(x)
            flat[i] = orig
            nflat[i] += unit * (fp - fm) / (2 * eps)
    np.testing.assert_allclose(ana, num, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------- API surface
def test_all_names_and_signatures():
    import inspect
    import json
    import pathlib

    api = json.loads(pathlib.Path("/work/shared/api/paddle-2.6-api.json").read_text()) \
        if pathlib.Path("/work/shared/api/paddle-2.6-api.json").exists() else None
    if api is None:
        pytest.skip("api listing not available")
    for name, spec in api["paddle_hl.fft"].items():
        fn = getattr(fft, name)
        assert str(inspect.signature(fn)) == spec["signature"], name
    assert sorted(api["paddle_hl.fft"]) == sorted(ALL)
    assert paddle.fft is fft


# ---------------------------------------------------------------------------- numpy reference
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_c2c_matches_numpy(dtype, norm):
    x = _rand((3, 5, 4), dtype)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    for name in C2C:
        y = getattr(fft, name)(paddle.to_tensor(x), norm=norm)
        ref = getattr(np.fft, name)(x.astype(np.complex128), norm=norm)
        np.testing.assert_allclose(y.numpy(), ref, rtol=tol, atol=tol, err_msg=name)
        exp = "complex64" if dtype in ("float32", "complex64") else "complex128"
        assert y.dtype == getattr(paddle, exp)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_transforms_match_numpy(dtype, norm):
    x = _rand((4, 6), dtype)
    cx = _rand((4, 4), "complex64" if dtype == "float32" else "complex128")
    tol = 1e-4 if dtype == "float32" else 1e-10
    cases = [("rfft", x, np.fft.rfft), ("ihfft", x, np.fft.ihfft), ("rfft2", x, np.fft.rfft2),
             ("rfftn", x, np.fft.rfftn), ("irfft", cx, np.fft.irfft), ("hfft", cx, np.fft.hfft),
             ("irfft2", cx, np.fft.irfft2), ("irfftn", cx, np.fft.irfftn)]
    for name, a, ref in cases:
        y = getattr(fft, name)(paddle.to_tensor(a), norm=norm)
        np.testing.assert_allclose(y.numpy(), ref(a, norm=norm), rtol=tol, atol=tol,
                                   err_msg=name)


def test_int_input_promotes_to_default_float():
    y = fft.fft(paddle.to_tensor([1, 2, 3]))
    assert y.dtype == paddle.complex64
    np.testing.assert_allclose(y.numpy(), np.fft.fft([1, 2, 3]), rtol=1e-6)
    paddle.set_default_dtype("float64")
    assert fft.rfft(paddle.to_tensor([1, 2, 3, 4])).dtype == paddle.complex128


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_axis_handling_matches_numpy(axis):
    """every function's axis/axes handling, negative axes included, matches numpy.fft."""
    x = _rand((4, 5, 6), "float64")
    cx = _rand((4, 5, 6), "complex128")
    for name, a in [("fft", cx), ("ifft", cx), ("rfft", x), ("ihfft", x), ("irfft", cx),
                    ("hfft", cx)]:
        got = getattr(fft, name)(paddle.to_tensor(a), n=7, axis=axis).numpy()
        np.testing.assert_allclose(got, getattr(np.fft, name)(a, n=7, axis=axis), rtol=1e-10,
                                   atol=1e-10, err_msg=name)


@pytest.mark.parametrize("axes", [(0, 1), (-1, 0), (2, -2), (1, 2)])
def test_axes_handling_2d_nd_matches_numpy(axes):
    x = _rand((4, 5, 6), "float64")
    cx = _rand((4, 5, 6), "complex128")
    for name, a in [("fft2", cx), ("ifft2", cx), ("rfft2", x), ("irfft2", cx), ("fftn", cx),
                    ("ifftn", cx), ("rfftn", x), ("irfftn", cx)]:
        got = getattr(fft, name)(paddle.to_tensor(a), s=(3, 8), axes=axes).numpy()
        ref = getattr(np.fft, name)(a, s=(3, 8), axes=axes)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=name)


def test_s_without_axes_uses_last_axes():
    x = _rand((3, 4, 5), "complex128")
    got = fft.fftn(paddle.to_tensor(x), s=[6]).numpy()
    np.testing.assert_allclose(got, np.fft.fftn(x, s=[6], axes=[-1]), rtol=1e-10, atol=1e-10)
    got = fft.irfftn(paddle.to_tensor(x), s=[2, 7]).numpy()
    np.testing.assert_allclose(got, np.fft.irfftn(x, s=[2, 7], axes=[-2, -1]), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("axes", [None, 0, 1, -1, [0, 1], (-2,)])
@pytest.mark.parametrize("shape", [(5,), (4, 7), (0, 3)])
def test_fftshift_matches_numpy(shape, axes):
    """fftshift / ifftshift match numpy.fft."""
    if axes is not None and any(not -len(shape) <= a < len(shape)
                                for a in np.atleast_1d(axes)):
        with pytest.raises(ValueError, match="out of range"):
            fft.fftshift(paddle.ones(list(shape)), axes=axes)
        return
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    for name in ("fftshift", "ifftshift"):
        got = getattr(fft, name)(paddle.to_tensor(x), axes=axes)
        np.testing.assert_array_equal(got.numpy(), getattr(np.fft, name)(x, axes=axes))
        assert got.dtype == paddle.float32


def test_fftshift_int_and_gradient():
    x = paddle.to_tensor(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(fft.fftshift(x).numpy(), np.fft.fftshift(x.numpy()))
    assert fft.fftshift(x).dtype == paddle.int64
    _fd_check(lambda t: fft.fftshift(t, axes=[1]), _rand((2, 5), "float64"))
    _fd_check(lambda t: fft.ifftshift(t), _rand((3, 4), "complex128"))


def test_empty_batch():
    y = fft.fft(paddle.zeros([0, 4]))
    assert y.shape == [0, 4] and y.dtype == paddle.complex64
    y = fft.rfft(paddle.zeros([0, 4]))
    assert y.shape == [0, 3]


# ---------------------------------------------------------------------------- frequencies
def test_fftfreq_values_and_dtypes():
    np.testing.assert_allclose(fft.fftfreq(5, 0.5).numpy(), np.fft.fftfreq(5, 0.5), rtol=1e-6)
    np.testing.assert_allclose(fft.fftfreq(8).numpy(), np.fft.fftfreq(8), rtol=1e-6)
    np.testing.assert_allclose(fft.rfftfreq(6, 0.1).numpy(), np.fft.rfftfreq(6, 0.1),
                               rtol=1e-6)
    assert fft.fftfreq(4).dtype == paddle.float32
    assert fft.fftfreq(4, dtype="float64").dtype == paddle.float64
    assert fft.rfftfreq(4).shape == [3]
    np.testing.assert_allclose(fft.fftfreq(4, d=paddle.to_tensor(0.5)).numpy(),
                               [0.0, 0.5, -1.0, -0.5])
    paddle.set_default_dtype("float64")
    assert fft.fftfreq(5).dtype == paddle.float64
    assert fft.fftfreq(5).stop_gradient


def test_fftfreq_errors():
    with pytest.raises(ValueError, match="should not be 0"):
        fft.fftfreq(0)
    with pytest.raises(ValueError, match="should not be 0"):
        fft.rfftfreq(4, d=0)
    with pytest.raises(ValueError, match="positive"):
        fft.fftfreq(-3)
    with pytest.raises(TypeError, match="floating"):
        fft.fftfreq(4, dtype="int32")


# ---------------------------------------------------------------------------- errors
def test_errors():
    x = paddle.rand([4, 6])
    with pytest.raises(ValueError, match="Unexpected norm"):
        fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="Unexpected norm"):
        fft.fftn(x, norm=None)
    with pytest.raises(ValueError, match=r"n\(0\), it should be positive"):
        fft.fft(x, n=0)
    with pytest.raises(ValueError, match="integer"):
        fft.fft(x, n=2.0)
    with pytest.raises(ValueError, match=r"Invalid FFT axis \(2\)"):
        fft.fft(x, axis=2)
    with pytest.raises(ValueError, match="integer"):
        fft.fft(x, axis=1.0)
    with pytest.raises(ValueError, match="Invalid FFT axis"):
        fft.fft(paddle.to_tensor(1.0))
    with pytest.raises(ValueError, match="does not match"):
        fft.fftn(x, s=[3, 4], axes=[0])
    with pytest.raises(ValueError, match="should not be larger"):
        fft.fftn(x, s=[2, 2, 2])
    with pytest.raises(ValueError, match="repeated"):
        fft.fftn(x, axes=[0, 0])
    with pytest.raises(ValueError, match="repeated"):
        fft.fft2(x, axes=(1, -1))
    with pytest.raises(ValueError, match="invalid value"):
        fft.fftn(x, s=[0, 3])
    with pytest.raises(ValueError, match="sequence of integers"):
        fft.fftn(x, s=2)
    with pytest.raises(ValueError, match="sequence of integers"):
        fft.fftn(x, axes=1)
    with pytest.raises(ValueError, match="should >= 2"):
        fft.fft2(paddle.ones([4]))
    with pytest.raises(ValueError, match="sequence of 2 integers"):
        fft.fft2(x, axes=(0,))
    with pytest.raises(ValueError, match="sequence of 2 integers"):
        fft.rfft2(x, s=[3])
    with pytest.raises(ValueError, match="n-point"):
        fft.fft(paddle.zeros([4, 0]))
    with pytest.raises(ValueError, match="n-point"):
        fft.irfft(paddle.ones([4, 1], dtype="complex64"))
    with pytest.raises(ValueError, match="no axis"):
        fft.fftn(paddle.to_tensor(1.0))
    with pytest.raises(TypeError, match="real tensor"):
        fft.rfft(x.astype("complex64"))
    with pytest.raises(TypeError, match="real tensor"):
        fft.ihfftn(x.astype("complex128"))
    with pytest.raises(TypeError, match="float16"):
        fft.fft(x.astype("float16"))
    with pytest.raises(TypeError, match="bool"):
        fft.fft(paddle.to_tensor([True, False]))
    with pytest.raises(TypeError, match="None"):
        fft.fft(None)
    with pytest.raises(ValueError, match="out of range"):
        fft.fftshift(x, axes=[3])


# ---------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name", C2C)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_c2c_gradient_finite_difference(name, dtype):
    for norm in NORMS:
        _fd_check(lambda t: getattr(fft, name)(t, norm=norm), _rand((3, 4), dtype))
    one_d = name in ("fft", "ifft")
    kw = {"n": 3} if one_d else {"s": (2, 6)}
    _fd_check(lambda t: getattr(fft, name)(t, **kw), _rand((3, 4), dtype))


@pytest.mark.parametrize("name", R2C)
def test_r2c_gradient_finite_difference(name):
    one_d = name in ("rfft", "ihfft")
    for norm in NORMS:
        _fd_check(lambda t: getattr(fft, name)(t, norm=norm), _rand((3, 5), "float64"))
    for size in (3, 8):
        kw = {"n": size} if one_d else {"s": (2, size)}
        _fd_check(lambda t: getattr(fft, name)(t, **kw), _rand((3, 5), "float64"))


@pytest.mark.parametrize("name", C2R)
def test_c2r_gradient_finite_difference(name):
    """The Hermitian weighting (1 for DC/Nyquist, 2 elsewhere) and the dropped imaginary parts
    of the DC/Nyquist bins make these the delicate ones."""
    one_d = name in ("irfft", "hfft")
    for norm in NORMS:
        _fd_check(lambda t: getattr(fft, name)(t, norm=norm), _rand((3, 4), "complex128"))
    for size in (3, 4, 7, 10):  # odd / even lengths, cropping and zero-padding the input
        kw = {"n": size} if one_d else {"s": (2, size)}
        _fd_check(lambda t: getattr(fft, name)(t, **kw), _rand((3, 4), "complex128"))


def test_c2r_real_input_gets_real_gradient():
    _fd_check(lambda t: fft.irfft(t), _rand((2, 5), "float64"))
    t = paddle.to_tensor(_rand((2, 5), "float32"), stop_gradient=False)
    fft.hfft(t).sum().backward()
    assert t.grad.dtype == paddle.float32


def test_double_backward_through_fft():
    """create_graph=True: the gradient of rfft is itself differentiable (w.r.t. the seed)."""
    x = paddle.to_tensor(_rand((3, 6), "float64"), stop_gradient=False)
    g = paddle.to_tensor(_rand((3, 4), "complex128", 5), stop_gradient=False)
    (gx,) = paddle.grad(fft.rfft(x), x, grad_outputs=g, create_graph=True)
    assert not gx.stop_gradient
    w = _rand((3, 6), "float64", 6)
    (gg,) = paddle.grad(gx, g, grad_outputs=paddle.to_tensor(w))
    np.testing.assert_allclose(gg.numpy(), np.fft.rfft(w), rtol=1e-10, atol=1e-10)


def test_double_backward_chain_irfft_fftn():
    x = paddle.to_tensor(_rand((3, 4), "complex128"), stop_gradient=False)
    g = paddle.to_tensor(_rand((3, 4), "complex128", 7), stop_gradient=False)
    y = fft.ifftn(fft.fftshift(fft.fft2(x)))
    (gx,) = paddle.grad(y, x, grad_outputs=g, create_graph=True)
    w = _rand((3, 4), "complex128", 8)
    (gg,) = paddle.grad(gx, g, grad_outputs=paddle.to_tensor(w))
    # gx = A^H g, so its gradient w.r.t. g for seed w is A w
    exp = np.fft.ifftn(np.fft.fftshift(np.fft.fft2(w)))
    np.testing.assert_allclose(gg.numpy(), exp, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------- oracle
@pytest.mark.parity
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_c2c_parity(pd, dtype, norm):
    x = _rand((3, 6), dtype)
    for name in C2C:
        _parity(pd, name, x, norm=norm)


@pytest.mark.parity
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_r2c_parity(pd, dtype, norm):
    x = _rand((3, 6), dtype)
    for name in R2C:
        _parity(pd, name, x, norm=norm)


@pytest.mark.parity
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_c2r_parity(pd, dtype, norm):
    x = _rand((3, 6), dtype)
    for name in C2R:
        _parity(pd, name, x, norm=norm)


@pytest.mark.parity
def test_sizes_and_axes_parity(pd):
    xr = _rand((3, 6), "float64")
    xc = _rand((3, 6), "complex128")
    _parity(pd, "fft", xc, n=4)
    _parity(pd, "fft", xc, n=9, axis=0)
    _parity(pd, "rfft", xr, n=9, axis=0)
    for n in (4, 5, 11):
        _parity(pd, "irfft", xc, n=n)
        _parity(pd, "hfft", xc, n=n)
    _parity(pd, "ihfft", xr, n=9)
    _parity(pd, "irfftn", xc, s=[2, 5])
    _parity(pd, "irfftn", xc, s=[5, 12])
    _parity(pd, "hfftn", xc, s=[4, 7])
    _parity(pd, "rfftn", xr, s=[4, 7], axes=[1, 0])
    _parity(pd, "irfftn", xc, axes=[1, 0])
    _parity(pd, "hfft2", xc, s=[4, 4])
    _parity(pd, "fftn", xc, s=[4])
    _parity(pd, "ihfft2", xr, axes=(-1, -2))
    _parity(pd, "fftshift", xr)
    _parity(pd, "ifftshift", xc, axes=[1])
    _parity(pd, "fftshift", xr, axes=0)


@pytest.mark.parity
def test_int_and_freq_parity(pd):
    x = np.arange(6)
    _parity(pd, "fft", x, grad=False)
    _parity(pd, "rfft", x, grad=False)
    for n, d in [(5, 1.0), (8, 0.25), (1, 3.0)]:
        np.testing.assert_allclose(fft.fftfreq(n, d).numpy(), pd.fft.fftfreq(n, d).numpy(),
                                   rtol=0, atol=0)
        np.testing.assert_allclose(fft.rfftfreq(n, d).numpy(), pd.fft.rfftfreq(n, d).numpy(),
                                   rtol=0, atol=0)


@pytest.mark.parity
def test_error_types_parity(pd):
    """Bad arguments raise the same exception types as Paddle."""
    xs = np.random.rand(4, 6).astype(np.float32)
    cases = [("fft", {"norm": "bad"}), ("fft", {"n": 0}), ("fft", {"axis": 2}),
             ("fftn", {"s": [3, 4], "axes": [0]}), ("fftn", {"s": [2, 2, 2]}),
             ("fft2", {"axes": (0,)}), ("fftn", {"s": 2}), ("fftn", {"axes": 1})]
    for name, kw in cases:
        errs = []
        for lib in (paddle, pd):
            with pytest.raises(Exception) as info:
                getattr(lib.fft, name)(lib.to_tensor(xs), **kw)
            errs.append(type(info.value))
        assert errs[0] is errs[1], (name, kw, errs)


@pytest.mark.gpu
def test_gpu_matches_cpu(device):
    x = _rand((3, 8), "float32")
    t = paddle.to_tensor(x, stop_gradient=False)
    y = fft.rfft(t)
    y.backward(paddle.to_tensor(_seed_grad(y.numpy())))
    np.testing.assert_allclose(y.numpy(), np.fft.rfft(x), rtol=1e-4, atol=1e-4)
    assert t.grad.shape == [3, 8]
