"""GPU-path defects found without a GPU (gpu-marked: they run on a GPU, and in CI on the CPU
stand-in for CuPy, ``-p tests.gpu_standin.plugin``, which also counts host transfers)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import backend

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(backend.cupy_module() is None, reason="needs CuPy and a GPU")]


def _standin():
    """The stand-in's counters when it plays CuPy here, else None."""
    mod = sys.modules.get("tests.gpu_standin.fakecupy")
    cp = sys.modules.get("cupy")
    return mod.stats if mod is not None and getattr(cp, "ndarray", None) is mod.ndarray \
        else None


@pytest.fixture
def gpu():
    paddle.set_device("gpu")
    yield
    paddle.set_device("cpu")


def test_bfloat16_cumprod_runs_on_the_gpu(gpu):
    # CuPy's scan kernels have no bfloat16 arithmetic: cumprod multiplies in float32
    x = paddle.to_tensor([3.0, 1.0, 0.5, 2.0, -1.0]).astype("bfloat16")
    out = paddle.cumprod(x, dim=0)
    assert out.dtype == paddle.bfloat16 and "gpu" in str(out.place)
    np.testing.assert_array_equal(out.astype("float32").numpy(), [3.0, 3.0, 1.5, 3.0, -3.0])


def test_bfloat16_unique_runs_on_the_gpu(gpu):
    # CuPy cannot sort bfloat16: unique (no axis) sorts the exact float32 values
    x = paddle.to_tensor([[3.0, 1.0], [0.5, 3.0]]).astype("bfloat16")
    out, index, inverse, counts = paddle.unique(x, return_index=True, return_inverse=True,
                                                return_counts=True)
    assert out.dtype == paddle.bfloat16
    np.testing.assert_array_equal(out.astype("float32").numpy(), [0.5, 1.0, 3.0])
    np.testing.assert_array_equal(index.numpy(), [2, 1, 0])
    np.testing.assert_array_equal(inverse.numpy(), [2, 1, 0, 2])
    np.testing.assert_array_equal(counts.numpy(), [1, 1, 2])


def test_cumprod_backward_reads_nothing_from_the_gpu(gpu):
    x = paddle.to_tensor([[1.0, 2.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0]], stop_gradient=False)
    stats = _standin()
    if stats is not None:
        stats.reset()
    paddle.cumprod(x, dim=1).sum().backward()
    if stats is not None:
        assert stats.transfers == 0, stats.snapshot()
    # the exact gradient with a zero: d/dx_j sum_k prod_{i<=k} x_i
    np.testing.assert_allclose(x.grad.numpy(), [[3.0, 1.0, 8.0, 0.0], [15.0, 14.0, 12.0, 8.0]])


def test_cross_entropy_reads_nothing_from_the_gpu(gpu):
    logits = paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 5)).astype("f4"),
                              stop_gradient=False)
    label = paddle.to_tensor([[1], [4], [-100], [0]], dtype="int64")
    stats = _standin()
    if stats is not None:
        stats.reset()
    loss = paddle.nn.functional.cross_entropy(logits, label, ignore_index=-100)
    loss.backward()
    if stats is not None:
        assert stats.transfers == 0, stats.snapshot()
    with paddle.no_grad():
        ref = paddle.nn.functional.cross_entropy(logits.cpu(), label.cpu(), ignore_index=-100)
    np.testing.assert_allclose(float(loss), float(ref), rtol=1e-6)


def test_cross_entropy_with_every_label_ignored_is_zero(gpu):
    logits = paddle.ones([2, 3])
    logits.stop_gradient = False
    loss = paddle.nn.functional.cross_entropy(logits, paddle.to_tensor([[-100], [-100]]),
                                              ignore_index=-100)
    loss.backward()
    assert float(loss) == 0.0
    np.testing.assert_array_equal(logits.grad.numpy(), 0.0)


def test_cross_entropy_out_of_range_label_gives_nan_on_the_gpu(gpu):
    # the host check would stop every step; the GPU marks the bad rows' loss NaN instead
    loss = paddle.nn.functional.cross_entropy(paddle.ones([2, 3]), paddle.to_tensor([[0], [7]]),
                                              reduction="none")
    vals = loss.numpy().reshape(-1)
    assert np.isfinite(vals[0]) and np.isnan(vals[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamW", "Adamax", "Adagrad",
                                  "RMSProp", "Adadelta", "Lamb"])
def test_low_precision_update_on_the_gpu_matches_the_cpu(name, dtype):
    # the fused kernels (float32 arithmetic inside) against the CPU's float32-copy updates
    def run(device):
        paddle.set_device(device)
        try:
            rng = np.random.default_rng(0)
            p = paddle.to_tensor(rng.standard_normal((16, 9)).astype("f4")).astype(dtype)
            p.stop_gradient = False
            opt = getattr(paddle.optimizer, name)(learning_rate=0.01, parameters=[p])
            for _ in range(3):
                g = paddle.to_tensor(rng.standard_normal((16, 9)).astype("f4"))
                (p.astype("float32") * g).sum().backward()
                opt.step()
                opt.clear_grad()
            return p.astype("float32").numpy()
        finally:
            paddle.set_device("cpu")

    gpu, cpu = run("gpu"), run("cpu")
    assert np.isfinite(gpu).all()
    # float32 arithmetic on both sides, rounded to the parameter's dtype at each store: equal
    # up to one rounding step of the low-precision type
    ulp = 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10
    np.testing.assert_allclose(gpu, cpu, rtol=2 * ulp, atol=1e-3)


def test_cuda_without_an_argument_goes_to_the_current_device():
    if backend.device_count() < 2:
        pytest.skip("needs two GPUs")
    paddle.set_device("gpu:1")
    try:
        t = paddle.to_tensor([1.0], place=paddle.CPUPlace())
        assert t.cuda().place == paddle.CUDAPlace(1)
        assert t.cuda(0).place == paddle.CUDAPlace(0)
    finally:
        paddle.set_device("cpu")
    # from the CPU as the current device: GPU 0, as in Paddle
    assert paddle.to_tensor([1.0]).cuda().place == paddle.CUDAPlace(0)


def test_logcumsumexp_keeps_terms_far_below_the_maximum(gpu):
    # the GPU form shifted by the slice maximum: exp(1000 - 2000) underflowed to 0 and the
    # prefixes before the maximum came out -inf
    big = np.array([[1000.0, 1000.0, -1000.0, 2000.0], [-5.0, 0.0, 3.0, 1.0]])
    out = paddle.logcumsumexp(paddle.to_tensor(big), axis=1).numpy()
    ref = np.logaddexp.accumulate(big, axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    x = paddle.to_tensor(big.astype("float32")).astype("bfloat16")
    out16 = paddle.logcumsumexp(x, axis=1).astype("float32").numpy()
    np.testing.assert_allclose(out16, ref, rtol=1e-2)
