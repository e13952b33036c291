"""The CPU thread pool: its switch, fork safety, and kernels giving bit-identical results with
and without threads."""

import os
import subprocess
import sys

import numpy as np
import pytest

from paddle_hl.backend import _threads

# the CPU thread pool: these run on the CPU whatever the suite's device
pytestmark = pytest.mark.cpu


@pytest.fixture
def threads():
    """Force the pool on (2 threads, no size threshold) for the test, then restore."""
    old_size, old_min = _threads.num_threads(), _threads.MIN_BYTES

    def use(n, min_bytes=0):
        _threads.set_num_threads(n)
        _threads.MIN_BYTES = min_bytes

    yield use
    _threads.set_num_threads(old_size)
    _threads.MIN_BYTES = old_min


def _both(threads, fn):
    """``fn()`` run without threads and with 2 (no threshold): both results."""
    threads(1)
    a = fn()
    threads(2)
    b = fn()
    return a, b


def test_ranges_cover_evenly():
    assert _threads.ranges(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert _threads.ranges(2, 2) == [(0, 1), (1, 2)]


def test_run_uses_other_threads_and_reraises(threads):
    import threading

    threads(2)
    seen = []
    started = threading.Event()

    def piece(i):
        if i == 0:  # the caller's piece waits until a worker runs the other one
            assert started.wait(10)
        else:
            started.set()
        seen.append((i, threading.get_ident()))

    _threads.run(piece, [(0,), (1,)])
    assert sorted(i for i, _ in seen) == [0, 1]
    assert len({t for _, t in seen}) == 2

    def boom(i):
        if i == 1:
            raise RuntimeError("piece 1 failed")

    with pytest.raises(RuntimeError, match="piece 1 failed"):
        _threads.run(boom, [(0,), (1,)])
    # the pool still works after a failed piece
    out = []
    _threads.run(out.append, [(1,), (2,)])
    assert sorted(out) == [1, 2]


def test_caller_takes_over_pieces_not_started(threads):
    """A worker that is slow to start leaves its pieces to the caller; results are complete
    and every piece runs exactly once."""
    import threading

    threads(2)
    _threads.run(lambda i: None, [(0,), (1,)])  # the worker exists
    hold, started = threading.Event(), threading.Event()

    def occupy(i):
        if i == 0:  # the other call's caller waits until the worker holds piece 1
            assert started.wait(10)
        else:
            started.set()
            assert hold.wait(10)

    # occupy the only worker, so it cannot take pieces of the next call
    busy = threading.Thread(target=_threads.run, args=(occupy, [(0,), (1,)]))
    got = []
    me = threading.get_ident()
    try:
        busy.start()
        assert started.wait(10)
        _threads.run(lambda i: got.append((i, threading.get_ident())), [(k,) for k in range(4)])
    finally:
        hold.set()
        busy.join()
    assert sorted(i for i, _ in got) == [0, 1, 2, 3]
    assert {t for _, t in got} == {me}


def test_disabled_runs_inline(threads):
    import threading

    threads(1)
    me = threading.get_ident()
    seen = []
    _threads.split(lambda lo, hi: seen.append(threading.get_ident()), 8, 1 << 30)
    assert seen == [me]


def test_small_work_runs_inline(threads):
    threads(2, min_bytes=1 << 20)
    calls = []
    _threads.split(lambda lo, hi: calls.append((lo, hi)), 8, 1000)
    assert calls == [(0, 8)]


def test_nested_split_runs_inline(threads):
    threads(2)
    inner = []

    def outer(lo, hi):
        _threads.split(lambda a, b: inner.append((a, b)), 4, 1 << 30)

    _threads.split(outer, 2, 1 << 30)
    assert sorted(inner) == [(0, 4), (0, 4)]


def test_environment_switch():
    code = ("from paddle_hl.backend import _threads; import numpy as np;"
            "_threads.MIN_BYTES = 0;"
            "_threads.copyto(np.empty((4, 8)), np.ones((4, 8)));"
            "print(_threads.num_threads(), _threads.pool_alive())")
    env = dict(os.environ, PADDLE_HL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "False"]
    env["PADDLE_HL_NUM_THREADS"] = "3"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["3", "True"]
    env["PADDLE_HL_NUM_THREADS"] = "zero"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "PADDLE_HL_NUM_THREADS" in r.stderr


def test_default_size_follows_affinity():
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    code = ("import os; os.environ.pop('PADDLE_HL_NUM_THREADS', None);"
            "from paddle_hl.backend import _threads; print(_threads.num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "PADDLE_HL_NUM_THREADS"}
    out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("taskset not available")
    assert out.stdout.split() == ["1"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_child_gets_a_fresh_pool(threads):
    threads(2)
    a = np.arange(64.0).reshape(8, 8)
    _threads.ascontiguous(a.T)  # the parent's pool exists now
    assert _threads.pool_alive()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: no inherited threads, and a large kernel still works (new pool)
        try:
            ok = not _threads.pool_alive()
            ok = ok and np.array_equal(_threads.ascontiguous(a.T), a.T)
            ok = ok and _threads.pool_alive()
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    assert got == b"1"


def test_dataloader_workers_with_pool(threads):
    """Fork-started DataLoader workers run while the parent holds a live pool."""
    import paddle_hl as paddle
    from paddle_hl.io import DataLoader, Dataset

    threads(2)
    _threads.ascontiguous(np.ones((8, 8)).T)

    class Squares(Dataset):
        def __getitem__(self, i):
            x = np.arange(16, dtype=np.float32).reshape(4, 4) * i
            return _threads.ascontiguous(x.T)

        def __len__(self):
            return 8

    got = [b.numpy() for b in DataLoader(Squares(), batch_size=4, num_workers=2)]
    want = [np.stack([(np.arange(16, dtype=np.float32).reshape(4, 4) * i).T
                      for i in range(k, k + 4)]) for k in (0, 4)]
    for g, e in zip(got, want):
        np.testing.assert_array_equal(g, e)
    assert paddle.to_tensor(got[0]).shape == [4, 4, 4]


@pytest.mark.parametrize("nin", [False, True])
def test_conv_kernels_identical_with_threads(threads, nin):
    import paddle_hl as paddle
    import paddle_hl.nn.functional as F

    rng = np.random.default_rng(0)
    n = 8 if nin else 2
    x = rng.standard_normal((n, 16, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)

    def run():
        xt = paddle.to_tensor(x, stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        bt = paddle.to_tensor(b, stop_gradient=False)
        y = F.conv2d(xt, wt, bt, stride=1, padding=1)
        y2 = F.conv2d(xt, wt, bt, stride=2, padding=1)
        ((y * y).sum() + y2.sum()).backward()
        return [y.numpy(), y2.numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]

    a, b2 = _both(threads, run)
    for u, v in zip(a, b2):
        np.testing.assert_array_equal(u, v)


def test_fold_unfold_identical_with_threads(threads):
    import paddle_hl as paddle
    import paddle_hl.nn.functional as F

    x = np.random.default_rng(1).standard_normal((3, 4, 10, 10)).astype(np.float32)

    def run():
        xt = paddle.to_tensor(x, stop_gradient=False)
        cols = F.unfold(xt, 3, strides=2, paddings=1)
        back = F.fold(cols, [10, 10], 3, strides=2, paddings=1)
        (back * back).sum().backward()
        return [cols.numpy(), back.numpy(), xt.grad.numpy()]

    a, b = _both(threads, run)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW", "SGD", "Momentum", "Nesterov"])
def test_optimizer_blocks_match_expression_form(threads, opt_name):
    """Updates of a parameter large enough to run block by block (and over threads) equal the
    whole-array expression of the same formula, bit for bit."""
    import math

    import paddle_hl as paddle
    from paddle_hl.optimizer import optimizer as _opt

    rng = np.random.default_rng(2)
    shape = (3 * _opt._BLOCK + 123,)
    p0 = rng.standard_normal(shape).astype(np.float32)
    grads = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    lr = 0.01

    def make(params):
        if opt_name == "Adam":
            return paddle.optimizer.Adam(lr, parameters=params)
        if opt_name == "AdamW":
            return paddle.optimizer.AdamW(lr, parameters=params, weight_decay=0.1)
        if opt_name == "SGD":
            return paddle.optimizer.SGD(lr, parameters=params)
        return paddle.optimizer.Momentum(lr, momentum=0.9, parameters=params,
                                         use_nesterov=opt_name == "Nesterov")

    def run():
        p = paddle.create_parameter(list(shape), "float32")
        p.set_value(p0)
        opt = make([p])
        for g in grads:
            p.grad = paddle.to_tensor(g)
            opt.step()
        return p.numpy()

    # the formula written as whole-array expressions
    p, m, v = p0.copy(), np.zeros_like(p0), np.zeros_like(p0)
    # the beta powers are float32 accumulators, as in Paddle's state
    b1p, b2p = np.float32(0.9), np.float32(0.999)
    for g in grads:
        if opt_name in ("Adam", "AdamW"):
            if opt_name == "AdamW":
                p = p * np.float32(1.0 - lr * 0.1)
            bp1, bp2 = float(b1p), float(b2p)
            lr_t = lr * math.sqrt(1 - bp2) / (1 - bp1)
            m = m * 0.9 + g * (1 - 0.9)
            v = v * 0.999 + g * (1 - 0.999) * g
            p = p - (m / (np.sqrt(v) + 1e-8 * math.sqrt(1 - bp2))) * lr_t
            b1p, b2p = b1p * np.float32(0.9), b2p * np.float32(0.999)
        elif opt_name == "SGD":
            p = p - g * lr
        else:
            v = v * 0.9 + g
            p = p - ((v * 0.9 + g) if opt_name == "Nesterov" else v) * lr
    a, b = _both(threads, run)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, p)


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_identical_with_threads(threads, stride):
    """The blocked depthwise kernels share their blocks over threads: same numbers."""
    import paddle_hl as paddle
    import paddle_hl.nn.functional as F

    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 32, 48, 48)).astype(np.float32)
    w = rng.standard_normal((64, 1, 3, 3)).astype(np.float32)

    def run():
        xt = paddle.to_tensor(x, stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        y = F.conv2d(xt, wt, stride=stride, padding=1, groups=32)
        (y * y).sum().backward()
        return [y.numpy(), xt.grad.numpy(), wt.grad.numpy()]

    from paddle_hl.backend import _numpy

    plan = _numpy._DwPlan(8, 32, (48, 48), ((1, 1), (1, 1)), (3, 3), (stride,) * 2, (1, 1),
                          (48 // stride,) * 2, 4)
    assert len(list(plan.blocks(8, 32))) > 1  # really more than one block to share
    a, b = _both(threads, run)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("shape", [(8, 16, 12, 12), (64, 24)])
def test_batch_norm_identical_with_threads(threads, shape):
    """Training batch norm (statistics, output, running stats, all gradients) and the eval
    affine form give the same numbers with the work split over threads."""
    import paddle_hl as paddle

    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)

    def run():
        paddle.seed(0)
        bn = paddle.nn.BatchNorm2D(shape[1]) if len(shape) == 4 else \
            paddle.nn.BatchNorm1D(shape[1])
        bn.weight.set_value(np.linspace(0.5, 2, shape[1]).astype(np.float32))
        bn.bias.set_value(np.linspace(-1, 1, shape[1]).astype(np.float32))
        xt = paddle.to_tensor(x, stop_gradient=False)
        y = bn(xt)
        (y * paddle.to_tensor(g)).sum().backward()
        bn.eval()
        ye = bn(paddle.to_tensor(x))
        return [y.numpy(), xt.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
                bn._mean.numpy(), bn._variance.numpy(), ye.numpy()]

    a, b = _both(threads, run)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
