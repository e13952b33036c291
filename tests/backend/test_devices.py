"""The device-level part of the backend interface: device selection, synchronisation, memory
statistics, timing events, DLPack, seeded random draws and sparse products.

The CPU backend's host meaning of each is checked here; on a GPU the CuPy backend's are checked
against NumPy (``gpu`` marker, skipped without CuPy and a GPU). One test keeps the boundary:
no module outside ``paddle_hl/backend/`` names CuPy in its code, except ``distributed/_nccl.py``
(the NCCL transport)."""

import io
import pathlib
import tokenize

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import backend
from paddle_hl.backend import _numpy

ROOT = pathlib.Path(paddle.__file__).parent.parent
PACKAGES = ("paddle_hl", "vision", "audio", "text", "geometric")
# the NCCL transport is the one module outside the backend that talks to CuPy itself
ALLOWED = {pathlib.Path("paddle_hl/backend"), pathlib.Path("paddle_hl/distributed/_nccl.py")}


def _cupy_mentions(src):
    """(line, token) of each identifier in the code that names CuPy (``cupy``, ``cupyx``,
    ``_cupy_kernels``, ``cupy_module`` ...), and of each string that is a CuPy module's name
    (an ``importlib`` or ``__import__`` argument). Comments and prose in docstrings are not
    code and may say where the GPU work happens."""
    hits = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NAME and "cupy" in tok.string.lower():
            hits.append((tok.start[0], tok.string))
        elif tok.type == tokenize.STRING:
            text = tok.string.strip("rbRBuU").strip("'\"")
            if text.split(".")[0] in ("cupy", "cupyx", "cupy_backends"):
                hits.append((tok.start[0], tok.string))
    return hits


def test_the_scan_finds_cupy_in_code():
    src = ("import cupy\nfrom cupyx import scatter_add\nx = backend.cupy_module()\n"
           "m = __import__('cupy')\n# cupy in a comment\n'''CuPy in prose'''\n")
    assert [line for line, _ in _cupy_mentions(src)] == [1, 2, 3, 4]


def test_no_module_outside_the_backend_names_cupy():
    found = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if any(rel == a or a in rel.parents for a in ALLOWED):
                continue
            hits = _cupy_mentions(path.read_text())
            if hits:
                found[str(rel)] = hits
    assert not found, ("device-specific code outside paddle_hl/backend/ (add a backend "
                       f"function instead): {found}")


# ------------------------------------------------------------------ the CPU backend's meaning
def test_numpy_backend_has_one_device():
    assert _numpy.device_count() == 1 and _numpy.current_device() == 0
    a = np.arange(3.0)
    assert _numpy.device_of(a) == 0
    assert _numpy.to_device(a, 0) is a
    _numpy.use_device(0)
    _numpy.synchronize(0)
    _numpy.empty_cache()
    assert _numpy.memory_stats(0) == (0, 0)
    assert _numpy.device_properties(0) is None and _numpy.compute_capability(0) is None
    with pytest.raises(ValueError, match="use_device.*one device.*got 1"):
        _numpy.use_device(1)


def test_numpy_events_measure_host_time():
    e0 = _numpy.record_event()
    sum(range(10000))
    e1 = _numpy.record_event()
    assert 0.0 <= _numpy.event_seconds(e0, e1) < 10.0
    assert _numpy.event_seconds(e0, e0) == 0.0


def test_numpy_dlpack_round_trip_shares_memory():
    a = np.arange(4.0)
    b = _numpy.from_dlpack(a)
    assert np.shares_memory(a, b)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    cap = _numpy.to_dlpack(ro)  # exported through a copy
    assert type(cap).__name__ == "PyCapsule"
    bf = np.zeros(2, dtype=paddle.framework.dtype.BFLOAT16_NP)
    with pytest.raises(TypeError, match="to_dlpack.*bfloat16"):
        _numpy.to_dlpack(bf)


def test_numpy_seeded_draws_repeat():
    a = backend.seeded_draws(7, "cpu", 0).standard_normal(5)
    b = backend.seeded_draws(7, "cpu", 0, private=True).standard_normal(5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.random.Generator(np.random.PCG64(7)).standard_normal(5))


def test_numpy_sparse_products_defer_to_the_sparse_module():
    vals, crows, cols = np.array([1.0, 2.0]), np.array([0, 1, 2]), np.array([1, 0])
    y = np.ones((2, 3))
    assert _numpy.csr_dense(vals, crows, cols, 2, 2, y) is None
    assert _numpy.csr_t_dense(vals, crows, cols, 2, 2, y) is None
    assert _numpy.csr_csr(vals, crows, cols, vals, crows, cols, 2, 2, 2) is None
    # and the sparse module computes them
    from paddle_hl.sparse import _kernels

    np.testing.assert_array_equal(_kernels.csr_dense(vals, crows, cols, 2, 2, y),
                                  [[1, 1, 1], [2, 2, 2]])


def test_is_array_and_gpu_availability():
    assert backend.is_array(np.zeros(2)) and not backend.is_array([1.0])
    assert not backend.is_array(np.float32(1.0))
    assert backend.gpu_available() == (backend.device_count() > 0)
    if not backend.gpu_available():
        assert backend.gpu_error()
        with pytest.raises(RuntimeError, match="no GPU backend"):
            backend.seeded_draws(1, "gpu", 0)


# ------------------------------------------------------------------ the GPU backend
def _gpu():
    if not backend.gpu_available():
        pytest.skip(f"needs CuPy and a CUDA GPU ({backend.gpu_error()})")
    return backend.gpu_backend()


@pytest.mark.gpu
def test_gpu_devices_and_memory():
    g = _gpu()
    n = g.device_count()
    assert n == backend.device_count() >= 1
    g.use_device(0)
    assert g.current_device() == 0
    a = g.to_device(np.arange(6.0), 0)
    assert backend.is_gpu_array(a) and g.device_of(a) == 0 and g.to_device(a, 0) is a
    g.synchronize(0)
    used, held = g.memory_stats(0)
    assert 0 < used <= held
    props = g.device_properties(0)
    assert set(props) == {"name", "major", "minor", "total_memory", "multi_processor_count"}
    assert g.compute_capability(0) == (props["major"], props["minor"])
    g.empty_cache()


@pytest.mark.gpu
def test_gpu_events_time_a_kernel():
    g = _gpu()
    x = g.to_device(np.ones((512, 512), np.float32), 0)
    e0 = g.record_event()
    (x @ x).sum()
    e1 = g.record_event()
    assert 0.0 <= g.event_seconds(e0, e1) < 10.0


@pytest.mark.gpu
def test_gpu_dlpack_round_trip():
    g = _gpu()
    a = g.to_device(np.arange(4.0), 0)
    b = g.from_dlpack(g.to_dlpack(a))
    np.testing.assert_array_equal(g.to_numpy(b), [0, 1, 2, 3])
    t = paddle.to_tensor([1.0, 2.0], place="gpu")
    u = paddle.utils.dlpack.from_dlpack(paddle.utils.dlpack.to_dlpack(t))
    assert u.place.is_gpu_place()
    np.testing.assert_array_equal(u.numpy(), [1.0, 2.0])


@pytest.mark.gpu
def test_gpu_seeded_draws_repeat():
    g = _gpu()
    a = g.to_numpy(g.seeded_draws(11, 0, False).standard_normal(8))
    b = g.to_numpy(g.seeded_draws(11, 0, True).standard_normal(8))
    np.testing.assert_array_equal(a, b)
    # a private state is not disturbed by reseeding the shared one
    private = g.seeded_draws(5, 0, True)
    private.random(4)
    g.seeded_draws(99, 0, False).random(4)
    ref = g.seeded_draws(5, 0, True)
    ref.random(4)
    np.testing.assert_array_equal(g.to_numpy(private.random(4)), g.to_numpy(ref.random(4)))


@pytest.mark.gpu
def test_gpu_sparse_products_match_numpy():
    g = _gpu()
    from paddle_hl.sparse import _kernels

    rng = np.random.default_rng(0)
    dense = rng.standard_normal((5, 4)) * (rng.random((5, 4)) < 0.5)
    crows = np.r_[0, np.cumsum((dense != 0).sum(1))].astype(np.int64)
    rows, cols = np.nonzero(dense)
    vals = dense[rows, cols]
    y = rng.standard_normal((4, 3))
    h = g.to_device
    np.testing.assert_allclose(
        g.to_numpy(_kernels.csr_dense(h(vals, 0), h(crows, 0), h(cols, 0), 5, 4, h(y, 0))),
        dense @ y, rtol=1e-10)
    gr = rng.standard_normal((5, 3))
    np.testing.assert_allclose(
        g.to_numpy(_kernels.csr_t_dense(h(vals, 0), h(crows, 0), h(cols, 0), 5, 4, h(gr, 0))),
        dense.T @ gr, rtol=1e-10)
    b = dense[:4]
    bcr = np.r_[0, np.cumsum((b != 0).sum(1))].astype(np.int64)
    br, bc = np.nonzero(b)
    v, cr, c = g.csr_csr(h(vals, 0), h(crows, 0), h(cols, 0), h(b[br, bc], 0), h(bcr, 0),
                         h(bc, 0), 5, 4, 4)
    out = np.zeros((5, 4))
    cr, c = g.to_numpy(cr), g.to_numpy(c)
    for i in range(5):
        out[i, c[cr[i]:cr[i + 1]]] = g.to_numpy(v)[cr[i]:cr[i + 1]]
    np.testing.assert_allclose(out, dense @ b, rtol=1e-10, atol=1e-12)
