"""The layer checker (docs/architecture.md, "Tests"): one call that holds an ``nn.Layer``
to Paddle 2.6.

``check_layer(make, inputs, pd)`` builds the same layer with ``make(paddle_hl)`` and, when the
oracle is installed, ``make(paddle)``; copies Paddle's initial state into ours; and checks

- ``state_dict``: keys (in order), shapes and dtypes equal to Paddle's;
- ``forward``: outputs (values, shapes, dtypes) and the buffers the forward updates;
- ``grad``: gradients of a fixed weighted sum of the outputs w.r.t. inputs and parameters,
  against Paddle's;
- ``fd``: the same gradients against float64 central differences (layer cast to float64);
- ``save_load``: ``paddle_hl.save``/``load`` round trip, our file read by Paddle and Paddle's
  file read by us;
- ``dtype``: float32 in -> float32 out; float64 after ``layer.to(dtype='float64')``;
- ``int_input``: an integer input is refused, or promoted, exactly when Paddle does so;
- ``train_step``: one SGD step changes every trainable parameter, and (with the oracle) lands
  on the same values as Paddle's step.

Every part that needs Paddle is skipped when it is not installed; the rest still runs.
``checks`` picks a subset, so one known mismatch can be marked on its own while the other
parts of that layer keep guarding.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile

import numpy as np

import paddle_hl

ALL_CHECKS = ("state_dict", "forward", "grad", "fd", "save_load", "dtype", "int_input",
              "train_step")


def real_paddle():
    """Real paddlepaddle (the oracle) or None when it is not installed: the one loader, behind
    the ``pd`` and ``oracle`` fixtures of tests/conftest.py."""
    if importlib.util.find_spec("paddle") is None:
        return None
    # paddle 2.6.2 under NumPy 2 crashes unless these are imported first (docs/architecture.md)
    import zlib  # noqa: F401

    import numpy.random  # noqa: F401
    import paddle

    # Paddle's own signal handlers allocate memory; a signal that lands inside malloc (a test
    # timeout, a crash in the oracle) then deadlocks the process instead of ending it
    paddle.disable_signal_handler()
    return paddle


# ----------------------------------------------------------------------------- small helpers
def _flatten(out):
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flatten(o))
        return res
    return [out]


def _is_tensor(o):
    return hasattr(o, "numpy") and hasattr(o, "stop_gradient")


def _np(t):
    return None if t is None else np.asarray(t.numpy())


def _dtype(t):
    return str(t.dtype).split(".")[-1]


def _is_float_array(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _state_np(layer):
    return {k: _np(v) for k, v in layer.state_dict().items()}


def _load_state(layer, state, where):
    missing, unexpected = layer.set_state_dict(state)
    assert not missing and not unexpected, (
        f"{where}: set_state_dict missing {missing}, unexpected {unexpected}")


class _Run:
    """Outputs, input gradients and parameter gradients of one forward/backward."""

    def __init__(self, outs, in_grads, param_grads):
        self.outs, self.in_grads, self.param_grads = outs, in_grads, param_grads


def _weights(outs, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(o.shape) if o is not None else None for o in outs]


def _forward(lib, layer, inputs, call, grad, seed):
    """Run ``call(layer, *tensors)``; with ``grad``, backprop ``sum(w_i * out_i)``."""
    ts = []
    for a in inputs:
        if isinstance(a, np.ndarray):
            ts.append(lib.to_tensor(a, stop_gradient=not (grad and _is_float_array(a))))
        else:
            ts.append(a)
    outs = [o for o in _flatten(call(layer, *ts)) if _is_tensor(o)]
    in_grads, param_grads = [None] * len(ts), {}
    if grad:
        total = None
        for o, w in zip(outs, _weights(outs, seed)):
            if o.stop_gradient or _dtype(o) not in ("float32", "float64") or o.size == 0:
                continue
            term = (o * lib.to_tensor(w.astype(_dtype(o)))).sum()
            total = term if total is None else total + term
        if total is not None:
            total.backward()
        in_grads = [_np(t.grad) if _is_tensor(t) and not t.stop_gradient else None for t in ts]
        param_grads = {n: _np(p.grad) for n, p in layer.named_parameters()
                       if not p.stop_gradient}
    return _Run([_np(o) for o in outs], in_grads, param_grads), outs


def _assert_close(a, b, rtol, atol, what):
    assert a.shape == b.shape, f"{what}: shape {list(a.shape)} vs Paddle {list(b.shape)}"
    np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind in "fc" else a,
                               b.astype(np.float64) if b.dtype.kind in "fc" else b,
                               rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


# ----------------------------------------------------------------------------- the checker
class LayerCheckError(AssertionError):
    """One or more parts of :func:`check_layer` failed; the message lists each."""


def check_layer(make, inputs, pd=None, *, call=None, checks=ALL_CHECKS, mode="train",
                random=False, rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5,
                fd_rtol=1e-4, fd_atol=1e-6, fd_eps=1e-6, fd_max_entries=6, frozen=(), lr=0.1,
                no_grad_inputs=(), seed=0):
    """Check ``make(lib)`` against real Paddle; see the module docstring for the parts.

    Args:
        make (callable): ``make(lib) -> nn.Layer`` for ``lib`` = ``paddle_hl`` or ``paddle``.
        inputs (list): NumPy arrays (become tensors; float ones get gradients) or other values
            passed as they are.
        pd (module, optional): real Paddle; None skips every comparison with it.
        call (callable, optional): ``call(layer, *args)`` instead of ``layer(*args)``.
        checks (tuple[str]): the parts to run (a subset of ``ALL_CHECKS``).
        mode (str): ``'train'`` or ``'eval'``, the mode of the forward checks.
        random (bool): the forward draws random numbers in ``mode`` (dropout in training):
            skips the finite differences and the comparison of the training step.
        rtol, atol (float): tolerances of float32 outputs compared with Paddle.
        grad_rtol, grad_atol (float): tolerances of float32 gradients and of the parameters
            after the SGD step (a gradient sums many rounded terms: ten times looser).
        fd_rtol, fd_atol, fd_eps (float): finite-difference tolerances and step.
        fd_max_entries (int): entries checked per parameter (a random subset; all of the
            inputs are checked).
        frozen (tuple[str]): trainable parameters that legitimately get no gradient here.
        no_grad_inputs (tuple[int]): float inputs the layer gives no gradient (a loss's
            target): the finite differences skip them, and they must get none.
        lr (float): SGD learning rate of the training step.
        seed (int): seed of the output weights and of the parameter subsets.

    Raises:
        LayerCheckError: listing every failed part with its message.
    """
    call = call or (lambda layer, *args: layer(*args))
    unknown = set(checks) - set(ALL_CHECKS)
    assert not unknown, f"check_layer: unknown checks {sorted(unknown)}"
    ctx = _Ctx(make, inputs, pd, call, mode, random, rtol, atol, seed)
    ctx.grad_rtol, ctx.grad_atol = grad_rtol, grad_atol
    failures = []
    for name in ALL_CHECKS:
        if name not in checks:
            continue
        try:
            if name == "fd":
                ctx.check_fd(fd_rtol, fd_atol, fd_eps, fd_max_entries, frozen, no_grad_inputs)
            elif name == "train_step":
                ctx.check_train_step(frozen, lr)
            else:
                getattr(ctx, "check_" + name)()
        except Exception as e:  # collect every part, then report them together
            failures.append(f"[{name}] {type(e).__name__}: {e}")
    if failures:
        raise LayerCheckError("\n".join(failures))


class _Ctx:
    def __init__(self, make, inputs, pd, call, mode, random, rtol, atol, seed):
        self.make, self.inputs, self.pd, self.call = make, list(inputs), pd, call
        self.mode, self.random, self.rtol, self.atol, self.seed = mode, random, rtol, atol, seed
        self._state = None

    # -- building
    def initial_state(self):
        """Paddle's initial state (or ours without the oracle), as NumPy arrays."""
        if self._state is None:
            if self.pd is not None:
                self.pd.seed(self.seed)
                self._state = _state_np(self.make(self.pd))
            else:
                paddle_hl.seed(self.seed)
                self._state = _state_np(self.make(paddle_hl))
        return self._state

    def build(self, lib, dtype=None):
        layer = self.make(lib)
        if dtype is not None:
            try:
                layer.to(dtype=dtype)
            except Exception:
                if lib is paddle_hl:
                    raise
                # Paddle's own Layer.to(dtype=...) fails on its recurrent layers (their
                # flattened weight buffer): the oracle's layer is then built in float64
                prev = lib.get_default_dtype()
                lib.set_default_dtype(dtype)
                try:
                    layer = self.make(lib)
                finally:
                    lib.set_default_dtype(prev)
        state = self.initial_state()
        if dtype is not None:
            state = {k: v.astype(dtype) if v.dtype.kind == "f" else v for k, v in state.items()}
        _load_state(layer, state, f"{lib.__name__} layer")
        layer.train() if self.mode == "train" else layer.eval()
        return layer

    def inputs_as(self, dtype):
        return [a.astype(dtype) if _is_float_array(a) else a for a in self.inputs]

    # -- parts
    def check_state_dict(self):
        ours = self.make(paddle_hl).state_dict()
        if self.pd is None:
            return
        theirs = self.make(self.pd).state_dict()
        assert list(ours) == list(theirs), (
            f"state_dict keys: paddle_hl {list(ours)} vs Paddle {list(theirs)}")
        for k in theirs:
            assert list(ours[k].shape) == list(theirs[k].shape), (
                f"{k}: shape {list(ours[k].shape)} vs Paddle {list(theirs[k].shape)}")
            assert _dtype(ours[k]) == _dtype(theirs[k]), (
                f"{k}: dtype {_dtype(ours[k])} vs Paddle {_dtype(theirs[k])}")

    def check_forward(self):
        ours = self.build(paddle_hl)
        run, outs = _forward(paddle_hl, ours, self.inputs, self.call, False, self.seed)
        if self.pd is None:
            # without the oracle, non-finite outputs are always an error
            for i, o in enumerate(run.outs):
                assert o.dtype.kind != "f" or np.all(np.isfinite(o)), f"output {i} not finite"
        if self.pd is None:
            return
        theirs = self.build(self.pd)
        ref, pouts = _forward(self.pd, theirs, self.inputs, self.call, False, self.seed)
        assert len(run.outs) == len(ref.outs), (
            f"number of outputs: paddle_hl {len(run.outs)} vs Paddle {len(ref.outs)}")
        for i, (a, b) in enumerate(zip(run.outs, ref.outs)):
            assert _dtype(outs[i]) == _dtype(pouts[i]), (
                f"output {i} dtype: paddle_hl {_dtype(outs[i])} vs Paddle {_dtype(pouts[i])}")
            assert a.shape == b.shape, f"output {i}: shape {list(a.shape)} vs {list(b.shape)}"
        if self.random:
            return  # different random streams: only shapes and dtypes can agree
        for i, (a, b) in enumerate(zip(run.outs, ref.outs)):
            _assert_close(a, b, self.rtol, self.atol, f"output {i}")
        # buffers the forward updates (running statistics) must move the same way
        so, st = _state_np(ours), _state_np(theirs)
        for k in st:
            _assert_close(so[k], st[k], self.rtol, self.atol, f"state {k!r} after forward")

    def check_grad(self):
        if self.pd is None or self.random:
            return
        run, _ = _forward(paddle_hl, self.build(paddle_hl), self.inputs, self.call, True,
                          self.seed)
        ref, _ = _forward(self.pd, self.build(self.pd), self.inputs, self.call, True, self.seed)
        for i, (a, b) in enumerate(zip(run.in_grads, ref.in_grads)):
            if a is None and b is None:
                continue
            assert a is not None and b is not None, (
                f"input {i} gradient: paddle_hl {'none' if a is None else 'some'}, "
                f"Paddle {'none' if b is None else 'some'}")
            _assert_close(a, b, self.grad_rtol, self.grad_atol, f"gradient of input {i}")
        assert sorted(run.param_grads) == sorted(ref.param_grads), (
            f"trainable parameters: paddle_hl {sorted(run.param_grads)} vs Paddle "
            f"{sorted(ref.param_grads)}")
        for n, b in ref.param_grads.items():
            a = run.param_grads[n]
            if a is None or b is None:
                assert (a is None or not np.any(a)) and (b is None or not np.any(b)), (
                    f"gradient of {n}: paddle_hl {'none' if a is None else 'some'}, "
                    f"Paddle {'none' if b is None else 'some'}")
                continue
            _assert_close(a, b, self.grad_rtol, self.grad_atol, f"gradient of parameter {n}")

    def check_fd(self, rtol, atol, eps, max_entries, frozen, no_grad_inputs):
        if self.random:
            return
        layer = self.build(paddle_hl, dtype="float64")
        inputs = self.inputs_as(np.float64)
        state_before = _state_np(layer)
        run, outs = _forward(paddle_hl, layer, inputs, self.call, True, self.seed)
        weights = _weights(outs, self.seed)

        def scalar():
            with paddle_hl.no_grad():
                fo = [o for o in _flatten(self.call(layer, *[
                    paddle_hl.to_tensor(a) if isinstance(a, np.ndarray) else a
                    for a in inputs])) if _is_tensor(o)]
            return sum(float(np.sum(_np(o).astype(np.float64) * w))
                       for o, w in zip(fo, weights) if _dtype(o) in ("float32", "float64"))

        def restore_buffers():
            # the forward may update running statistics; put them back between evaluations
            for k, v in layer.state_dict().items():
                if not np.array_equal(_np(v), state_before[k]):
                    v.set_value(state_before[k])

        restore_buffers()
        for i, a in enumerate(inputs):
            if not _is_float_array(a):
                continue
            if i in no_grad_inputs:
                g = run.in_grads[i]
                assert g is None or not np.any(g), f"input {i} (a target) got a gradient"
                continue
            assert run.in_grads[i] is not None, f"input {i} got no gradient"
            num = np.zeros_like(a)
            it = np.nditer(a, flags=["multi_index"])
            for _ in it:
                idx = it.multi_index
                orig = a[idx]
                a[idx] = orig + eps
                fp = scalar()
                restore_buffers()
                a[idx] = orig - eps
                fm = scalar()
                restore_buffers()
                a[idx] = orig
                num[idx] = (fp - fm) / (2 * eps)
            np.testing.assert_allclose(run.in_grads[i], num, rtol=rtol, atol=atol,
                                       err_msg=f"finite-difference gradient of input {i}")
        rng = np.random.default_rng(self.seed + 1)
        for n, p in layer.named_parameters():
            if p.stop_gradient:
                continue
            ana = run.param_grads.get(n)
            if ana is None:
                assert n in frozen, f"parameter {n} got no gradient"
                continue
            value = _np(p).copy()
            flat = rng.permutation(value.size)[:max_entries]
            for j in flat:
                idx = np.unravel_index(j, value.shape)
                orig = value[idx]
                value[idx] = orig + eps
                p.set_value(value)
                fp = scalar()
                restore_buffers()
                value[idx] = orig - eps
                p.set_value(value)
                fm = scalar()
                restore_buffers()
                value[idx] = orig
                p.set_value(value)
                num = (fp - fm) / (2 * eps)
                np.testing.assert_allclose(
                    ana[idx], num, rtol=rtol, atol=atol,
                    err_msg=f"finite-difference gradient of parameter {n}{list(idx)}")

    def check_save_load(self):
        if not self.initial_state():
            return  # nothing to save
        ours = self.build(paddle_hl)
        ours.eval()
        ref, _ = _forward(paddle_hl, ours, self.inputs, self.call, False, self.seed)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ours.pdparams")
            paddle_hl.save(ours.state_dict(), path)
            fresh = self.make(paddle_hl)
            _load_state(fresh, paddle_hl.load(path), "paddle_hl.load")
            fresh.eval()
            self._same_outputs(fresh, ref, "after paddle_hl.save/load")
            if self.pd is None:
                return
            theirs = self.make(self.pd)
            _load_state(theirs, self.pd.load(path), "paddle.load of our file")
            theirs.eval()
            got, _ = _forward(self.pd, theirs, self.inputs, self.call, False, self.seed)
            for i, (a, b) in enumerate(zip(got.outs, ref.outs)):
                _assert_close(a, b, self.rtol, self.atol,
                              f"output {i} of Paddle loading our file")
            ppath = os.path.join(tmp, "theirs.pdparams")
            self.pd.save(theirs.state_dict(), ppath)
            back = self.make(paddle_hl)
            loaded = paddle_hl.load(ppath)
            assert list(loaded) == list(theirs.state_dict()), (
                f"keys read from Paddle's file: {list(loaded)}")
            _load_state(back, loaded, "paddle_hl.load of Paddle's file")
            back.eval()
            self._same_outputs(back, ref, "after loading Paddle's file")

    def _same_outputs(self, layer, ref, what):
        got, _ = _forward(paddle_hl, layer, self.inputs, self.call, False, self.seed)
        for i, (a, b) in enumerate(zip(got.outs, ref.outs)):
            np.testing.assert_array_equal(a, b, err_msg=f"output {i} {what}")

    def check_dtype(self):
        layer = self.build(paddle_hl)
        _, outs = _forward(paddle_hl, layer, self.inputs_as(np.float32), self.call, False,
                           self.seed)
        float_outs = [_dtype(o) for o in outs if _dtype(o).startswith("float")]
        assert set(float_outs) <= {"float32"}, f"float32 inputs gave outputs {float_outs}"
        layer64 = self.build(paddle_hl, dtype="float64")
        for k, v in layer64.state_dict().items():
            assert _dtype(v) in ("float64", "int64", "int32", "bool"), (
                f"{k} is {_dtype(v)} after layer.to(dtype='float64')")
        run64, outs64 = _forward(paddle_hl, layer64, self.inputs_as(np.float64), self.call,
                                 False, self.seed)
        float_outs = [_dtype(o) for o in outs64 if _dtype(o).startswith("float")]
        assert set(float_outs) <= {"float64"}, f"float64 inputs gave outputs {float_outs}"
        if self.pd is None:
            return
        theirs = self.build(self.pd, dtype="float64")
        # Paddle's recurrent cells make their zero initial states in the default dtype
        prev = self.pd.get_default_dtype()
        self.pd.set_default_dtype("float64")
        try:
            ref, pouts = _forward(self.pd, theirs, self.inputs_as(np.float64), self.call,
                                  False, self.seed)
        finally:
            self.pd.set_default_dtype(prev)
        if self.random:
            return
        for i, (a, b) in enumerate(zip(run64.outs, ref.outs)):
            assert _dtype(outs64[i]) == _dtype(pouts[i]), (
                f"float64 output {i}: paddle_hl {_dtype(outs64[i])} vs "
                f"Paddle {_dtype(pouts[i])}")
            _assert_close(a, b, 1e-10, 1e-12, f"float64 output {i}")

    def check_int_input(self):
        """Each float input given as int64: we refuse it exactly when Paddle does, and
        otherwise give Paddle's dtypes and values."""
        if self.pd is None:
            return
        for i, a in enumerate(self.inputs):
            if not _is_float_array(a):
                continue
            ints = list(self.inputs)
            ints[i] = np.round(a * 3).astype(np.int64)
            res = {}
            for name, lib in (("paddle_hl", paddle_hl), ("Paddle", self.pd)):
                try:
                    _, outs = _forward(lib, self.build(lib), ints, self.call, False, self.seed)
                    res[name] = ([_dtype(o) for o in outs], [_np(o) for o in outs])
                except Exception as e:  # the refusal itself is what is compared
                    res[name] = e
            ours, theirs = res["paddle_hl"], res["Paddle"]
            if isinstance(theirs, Exception):
                assert isinstance(ours, Exception), (
                    f"int64 input {i}: Paddle raises {type(theirs).__name__}, paddle_hl "
                    f"returns {ours[0]}")
                continue
            assert not isinstance(ours, Exception), (
                f"int64 input {i}: paddle_hl raises {type(ours).__name__}: {ours}; Paddle "
                f"returns {theirs[0]}")
            assert ours[0] == theirs[0], (
                f"int64 input {i}: output dtypes paddle_hl {ours[0]} vs Paddle {theirs[0]}")
            if not self.random:
                for j, (x, y) in enumerate(zip(ours[1], theirs[1])):
                    _assert_close(x, y, self.rtol, self.atol, f"int64 input {i}, output {j}")

    def check_train_step(self, frozen, lr):
        def step(lib):
            layer = self.build(lib)  # in the checked mode: eval keeps dropout off
            before = {n: _np(p).copy() for n, p in layer.named_parameters()}
            opt = lib.optimizer.SGD(learning_rate=lr, parameters=layer.parameters())
            # (inputs keep their gradients: Paddle's group and instance norm backward fail
            # without one)
            _forward(lib, layer, self.inputs, self.call, True, self.seed)
            opt.step()
            opt.clear_grad()
            return layer, before

        if not any(not p.stop_gradient for p in self.make(paddle_hl).parameters()):
            return  # nothing to train
        ours, before = step(paddle_hl)
        for n, p in ours.named_parameters():
            if p.stop_gradient or n in frozen:
                continue
            assert not np.array_equal(_np(p), before[n]), f"SGD step left {n} unchanged"
        if self.pd is None or self.random:
            return
        theirs, _ = step(self.pd)
        so, st = _state_np(ours), _state_np(theirs)
        for k in st:
            _assert_close(so[k], st[k], self.grad_rtol, self.grad_atol,
                          f"{k} after one SGD step")


# ----------------------------------------------------------------------------- parametrising
def input_makers(seed):
    """``(x, ints)``: makers of fixed random inputs drawn from a generator of their own, so a
    module's inputs do not depend on which other modules were collected.

    ``x(*shape, low=None, high=None, dtype='float32')`` is standard normal (uniform in
    ``[low, high)`` when given); ``ints(high, *shape, low=0)`` is int64 in ``[low, high)``.
    """
    rng = np.random.default_rng(seed)

    def x(*shape, low=None, high=None, dtype="float32"):
        if low is not None:
            return rng.uniform(low, high, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)

    def ints(high, *shape, low=0):
        return rng.integers(low, high, shape).astype(np.int64)

    return x, ints


def case(ident, make, inputs, known=None, slow=False, **kwargs):
    """pytest params for one layer configuration, for ``parametrize("make, inputs, kw", ...)``.

    ``known`` maps a check name to the exact mismatch with Paddle: the configuration then runs
    every other check as ``ident`` and each known check alone as ``ident[check]``, marked
    ``xfail(strict=True)`` so that a fix is noticed.
    """
    import pytest

    known = known or {}
    marks = (pytest.mark.slow,) if slow else ()
    checks = tuple(c for c in kwargs.pop("checks", ALL_CHECKS) if c not in known)
    params = [pytest.param(make, inputs, {**kwargs, "checks": checks}, marks=marks, id=ident)]
    for check, reason in known.items():
        params.append(pytest.param(
            make, inputs, {**kwargs, "checks": (check,), "known_mismatch": True},
            id=f"{ident}[{check}]",
            marks=(*marks, pytest.mark.xfail(strict=True, reason=reason))))
    return params


def run_case(oracle, make, inputs, kw):
    """Run one :func:`case` param; a known mismatch with Paddle skips without the oracle."""
    import pytest

    kw = dict(kw)
    if kw.pop("known_mismatch", False) and oracle is None:
        pytest.skip("a known mismatch with Paddle, which is not installed")
    check_layer(make, inputs, oracle, **kw)
