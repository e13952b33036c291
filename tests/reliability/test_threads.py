"""Per-thread switches: grad mode (and the optimizer's no_grad update), AMP's auto_cast, jit
tracing and saved_tensors_hooks entries do not leak between threads; the profiler records every
thread, as Paddle's does.

The interleavings that used to break are forced with events and a round-robin token, so each
test fails on every run where a switch is process-wide, rather than when the scheduler happens
to interleave badly.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework import state
from paddle_hl.nn.clip import ClipGradBase

TIMEOUT = 30  # seconds any thread waits for another before the test fails


class _RoundRobin:
    """A token passed between ``n`` threads: exactly one runs at a time, and it hands over at the
    points the test chooses (the others resume in order)."""

    def __init__(self, n):
        self.n = n
        self.turn = 0
        self.done = set()
        self.cv = threading.Condition()

    def _next(self, i):
        j = (i + 1) % self.n
        while j in self.done and j != i:
            j = (j + 1) % self.n
        return j

    def _wait(self, i):
        if not self.cv.wait_for(lambda: self.turn == i, timeout=TIMEOUT):
            raise TimeoutError(f"thread {i} never got its turn back")

    def start(self, i):
        with self.cv:
            self._wait(i)

    def switch(self, i):
        with self.cv:
            self.turn = self._next(i)
            self.cv.notify_all()
            self._wait(i)

    def finish(self, i):
        with self.cv:
            self.done.add(i)
            self.turn = self._next(i)
            self.cv.notify_all()


class _Pause(ClipGradBase):
    """A gradient 'clip' that leaves the gradients alone and calls ``at_step()``: a hook in the
    middle of ``optimizer.step()``, where the optimizer has grad recording off."""

    def __init__(self, at_step):
        self.at_step = at_step

    def _dygraph_clip(self, params_grads):
        self.at_step()
        return params_grads


def _model(k):
    paddle.seed(100 + k)
    return paddle.nn.Sequential(
        paddle.nn.Linear(6, 16), paddle.nn.BatchNorm1D(16), paddle.nn.ReLU(),
        paddle.nn.Linear(16, 3))


def _data(k, steps):
    rng = np.random.default_rng(k)
    return [(rng.standard_normal((8, 6)).astype("float32"),
             rng.integers(0, 3, (8, 1)).astype("int64")) for _ in range(steps)]


def _train(k, steps, switch=None):
    """Train model k for ``steps`` Adam steps; ``switch(point)`` is called after each forward and
    inside each optimizer step. Returns the parameters and buffers as arrays."""
    model = _model(k)
    opt = paddle.optimizer.Adam(
        0.01, parameters=model.parameters(),
        grad_clip=_Pause(lambda: switch("in step")) if switch else None)
    loss_fn = paddle.nn.CrossEntropyLoss()
    for x, y in _data(k, steps):
        loss = loss_fn(model(paddle.to_tensor(x)), paddle.to_tensor(y))
        if switch:
            switch("after forward")
        loss.backward()
        opt.step()
        opt.clear_grad()
    return {n: v.numpy().copy() for n, v in model.state_dict().items()}


def _run_threads(targets):
    """Run each callable in its own thread; re-raise the first error; return their results."""
    results = [None] * len(targets)
    errors = []

    def run(i, fn):
        try:
            results[i] = fn()
        except BaseException as e:  # noqa: BLE001  (re-raised in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]
    return results


def _assert_same_bits(a, b):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
        assert a[name].tobytes() == b[name].tobytes(), name


@pytest.mark.parametrize("n", [2, 4])
def test_parallel_training_matches_sequential_bit_for_bit(n):
    steps = 4
    sequential = [_train(k, steps) for k in range(n)]
    token = _RoundRobin(n)

    def job(k):
        token.start(k)
        try:
            return _train(k, steps, switch=lambda point: token.switch(k))
        finally:
            token.finish(k)

    parallel = _run_threads([lambda k=k: job(k) for k in range(n)])
    for k in range(n):
        _assert_same_bits(parallel[k], sequential[k])
    assert paddle.is_grad_enabled()


def test_no_grad_inference_thread_beside_training_thread():
    """Inference enters no_grad; training runs a step inside it; inference leaves no_grad while
    training is inside optimizer.step(). Training's result is the sequential one, and grad mode
    is on afterwards in every thread."""
    steps = 3
    expected = _train(0, steps)
    in_no_grad, trained_once, in_step, left = (threading.Event() for _ in range(4))
    seen = {}
    calls = [0]

    def at(point):
        if point == "after forward" and calls[0] == 0:
            calls[0] += 1
            assert in_no_grad.wait(TIMEOUT)
        if point == "in step" and not in_step.is_set():
            trained_once.set()
            in_step.set()
            assert left.wait(TIMEOUT)  # inference leaves its no_grad block meanwhile

    # made here: the global generator is process-wide (as in Paddle), so a model initialised in
    # the inference thread could draw in between the training model's draws
    model = _model(7)
    model.eval()
    x = paddle.to_tensor(_data(7, 1)[0][0])

    def infer():
        with paddle.no_grad():
            in_no_grad.set()
            assert in_step.wait(TIMEOUT)
            out = model(x)
            seen["inference_records"] = not out.stop_gradient
        left.set()
        seen["inference_after"] = paddle.is_grad_enabled()

    def train():
        res = _train(0, steps, switch=at)
        seen["train_after"] = paddle.is_grad_enabled()
        return res

    trained, _ = _run_threads([train, infer])
    _assert_same_bits(trained, expected)
    assert seen == {"inference_records": False, "inference_after": True, "train_after": True}
    assert paddle.is_grad_enabled()
    assert _run_threads([paddle.is_grad_enabled]) == [True]


def test_optimizer_step_does_not_turn_grad_off_in_another_thread():
    inside, checked = threading.Event(), threading.Event()
    seen = {}

    def stepper():
        lin = paddle.nn.Linear(2, 2)

        def pause():
            seen["stepper_in_step"] = paddle.is_grad_enabled()
            inside.set()
            assert checked.wait(TIMEOUT)

        opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters(), grad_clip=_Pause(pause))
        lin(paddle.ones([1, 2])).sum().backward()
        opt.step()
        seen["stepper_after"] = paddle.is_grad_enabled()

    def other():
        assert inside.wait(TIMEOUT)
        try:
            seen["other"] = paddle.is_grad_enabled()
            w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
            seen["other_records"] = not (w * 3.0).stop_gradient
        finally:
            checked.set()

    _run_threads([stepper, other])
    assert seen == {"stepper_in_step": False, "stepper_after": True, "other": True,
                    "other_records": True}


def test_new_thread_starts_with_grad_on_and_its_mode_stays_its_own():
    with paddle.no_grad():
        assert _run_threads([paddle.is_grad_enabled]) == [True]  # as Paddle 2.6.2

    def turn_off():
        paddle.set_grad_enabled(False)
        return paddle.is_grad_enabled()

    assert _run_threads([turn_off]) == [False]
    assert paddle.is_grad_enabled()
    assert state.tls.grad_enabled is True


def test_one_no_grad_object_entered_by_two_threads():
    """A shared no_grad instance restores each thread's own previous mode."""
    ng = paddle.no_grad()
    a_in, b_in, a_out = (threading.Event() for _ in range(3))
    seen = {}

    def a():
        with ng:
            a_in.set()
            assert b_in.wait(TIMEOUT)
        a_out.set()
        seen["a"] = paddle.is_grad_enabled()

    def b():
        paddle.set_grad_enabled(False)  # b's previous mode is off
        assert a_in.wait(TIMEOUT)
        with ng:
            b_in.set()
            assert a_out.wait(TIMEOUT)
        seen["b"] = paddle.is_grad_enabled()

    _run_threads([a, b])
    assert seen == {"a": True, "b": False}


def test_state_module_refuses_the_old_process_wide_names():
    with pytest.raises(AttributeError, match="per thread"):
        state.grad_enabled  # noqa: B018


def test_auto_cast_in_one_thread_does_not_cast_in_another():
    entered, checked = threading.Event(), threading.Event()
    x = paddle.ones([4, 4])
    seen = {}

    def amp():
        with paddle.amp.auto_cast(level="O1", dtype="bfloat16"):
            seen["amp"] = str((x @ x).dtype)
            entered.set()
            assert checked.wait(TIMEOUT)

    def plain():
        assert entered.wait(TIMEOUT)
        try:
            seen["plain"] = str((x @ x).dtype)
        finally:
            checked.set()

    _run_threads([amp, plain])
    assert seen == {"amp": "paddle.bfloat16", "plain": "paddle.float32"}


def test_jit_trace_records_only_its_own_thread():
    from paddle_hl.jit import _program

    started, other_ran = threading.Event(), threading.Event()

    def fn(x):
        y = paddle.tanh(x)
        if threading.current_thread().name == "tracer":
            started.set()
            assert other_ran.wait(TIMEOUT)
        return y * 2.0

    x = paddle.ones([3])
    alone, _ = _program.trace_once(fn, [x], {})

    def other():
        assert started.wait(TIMEOUT)
        try:
            a = paddle.ones([5])
            for _ in range(3):
                a = paddle.exp(a) + 1.0
        finally:
            other_ran.set()

    res = {}

    def tracer():
        res["trace"] = _program.trace_once(fn, [x], {})[0]

    t = threading.Thread(target=tracer, name="tracer")
    t.start()
    _run_threads([other])
    t.join(TIMEOUT)
    assert [op["fn"] for op in res["trace"]["ops"]] == [op["fn"] for op in alone["ops"]]
    assert state.prof_hook is None and state.tls.tracer is None


def test_profiler_records_the_ops_of_other_threads():
    """Paddle's profiler is process-wide: ops run by another thread appear in its summary."""
    import contextlib
    import io

    import paddle_hl.profiler as profiler

    p = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU])
    p.start()

    def work():
        return paddle.tanh(paddle.ones([4]))

    _run_threads([work])
    p.stop()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        p.summary(op_detail=True)
    assert "tanh" in buf.getvalue()
    assert state.prof_hook is None and state.prof_bw is None


def test_saved_tensors_hooks_exit_removes_its_own_entry():
    a_in, b_in, a_out = (threading.Event() for _ in range(3))

    def pack_a(t):
        return t

    def pack_b(t):
        return t

    def unpack(t):
        return t

    seen = {}

    def a():
        with paddle.autograd.saved_tensors_hooks(pack_a, unpack):
            a_in.set()
            assert b_in.wait(TIMEOUT)
        a_out.set()

    def b():
        assert a_in.wait(TIMEOUT)
        with paddle.autograd.saved_tensors_hooks(pack_b, unpack):
            b_in.set()
            assert a_out.wait(TIMEOUT)
            seen["inside_b"] = [h[0].__name__ for h in state.saved_hooks]

    _run_threads([a, b])
    assert seen == {"inside_b": ["pack_b"]}
    assert state.saved_hooks == []


def test_grad_off_lists_exactly_the_threads_with_grad_off():
    """The op wrapper skips the thread-local read while ``grad_off`` is empty; each thread with
    grad off has one entry, gone when grad is back on or the thread ends."""
    import gc

    assert state.grad_off == []
    with paddle.no_grad():
        assert len(state.grad_off) == 1
        with paddle.no_grad():
            assert len(state.grad_off) == 1
        with paddle.enable_grad():
            assert state.grad_off == []
            assert not (paddle.ones([1]) * paddle.to_tensor(1.0, stop_gradient=False)).stop_gradient
        assert len(state.grad_off) == 1
        assert (paddle.ones([1]) * paddle.to_tensor(1.0, stop_gradient=False)).stop_gradient
    assert state.grad_off == []

    def leave_off():
        paddle.set_grad_enabled(False)
        return len(state.grad_off)

    assert _run_threads([leave_off]) == [1]
    gc.collect()
    assert state.grad_off == []


def test_gradient_sync_set_by_one_threads_forward_waits_for_that_threads_backward():
    """DataParallel.forward arms a synchroniser for the next backward pass of its own thread;
    a backward pass another thread runs meanwhile must not consume (all-reduce) it."""
    armed, other_done = threading.Event(), threading.Event()
    calls = []

    class Sync:
        def ready(self, leaf):
            calls.append((threading.current_thread().name, "ready"))

        def done(self):
            calls.append((threading.current_thread().name, "done"))

    def dp_thread():
        w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        loss = (w * w).sum()
        state.tls.grad_sync = Sync()  # what DataParallel.forward does
        armed.set()
        assert other_done.wait(TIMEOUT)
        loss.backward()
        assert state.tls.grad_sync is None

    def other_thread():
        assert armed.wait(TIMEOUT)
        try:
            v = paddle.to_tensor([3.0], stop_gradient=False)
            (v * 2.0).sum().backward()
        finally:
            other_done.set()

    threads = [threading.Thread(target=dp_thread, name="dp"),
               threading.Thread(target=other_thread, name="other")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
    assert calls == [("dp", "ready"), ("dp", "done")]
    assert state.tls.grad_sync is None
