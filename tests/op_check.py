"""Test helpers (docs/architecture.md, "Tests"): an op checker against the real-Paddle oracle or a
NumPy reference, and a float64 finite-difference gradient checker."""

from __future__ import annotations

import numpy as np

import paddle_hl

_FLOATS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _is_float(a):
    return np.asarray(a).dtype.kind in "fc"


def _to_np(t):
    if t is None:
        return None
    a = t.numpy()
    if str(a.dtype) == "bfloat16":
        a = a.astype(np.float32)
    return a


def _flatten(out):
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flatten(o))
        return res
    return [out]


def _default_tol(dtype):
    return {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-10}.get(
        str(dtype), 1e-5)


def run_both(fn, inputs, pd, grad=True, kwargs=None, seed=0):
    """Run ``fn(lib, *tensors)`` with paddle_hl and with real Paddle on the same inputs.

    Float inputs get stop_gradient=False. Returns, per library, the flat list of outputs and
    (when ``grad``) the gradients of ``sum(w_i * out_i)`` for fixed random weights ``w_i``.
    """
    kwargs = kwargs or {}
    res = {}
    for name, lib in (("hl", paddle_hl), ("pd", pd)):
        ts = []
        for a in inputs:
            if isinstance(a, np.ndarray):
                t = lib.to_tensor(a, stop_gradient=not (grad and _is_float(a)))
            else:
                t = a
            ts.append(t)
        outs = _flatten(fn(lib, *ts, **kwargs))
        grads = None
        if grad:
            rng = np.random.default_rng(seed)
            total = None
            for o in outs:
                if not isinstance(o, (paddle_hl.Tensor, pd.Tensor)) or o.stop_gradient:
                    continue
                if str(o.dtype).split(".")[-1] not in _FLOATS or o.size == 0:
                    continue  # (both libraries refuse to reduce an empty tensor)
                w = rng.standard_normal(o.shape).astype(_to_np(o).dtype)
                if np.iscomplexobj(w):
                    w = w.real.astype(np.float32)
                term = (o * lib.to_tensor(w, dtype=o.dtype)).sum()
                total = term if total is None else total + term
            if total is not None:
                total.backward()
            grads = [_to_np(t.grad) if hasattr(t, "grad") and isinstance(
                t, (paddle_hl.Tensor, pd.Tensor)) and not t.stop_gradient else None for t in ts]
        res[name] = ([_to_np(o) if hasattr(o, "numpy") else o for o in outs], grads,
                     [str(o.dtype).split(".")[-1] if hasattr(o, "dtype") else None
                      for o in outs],
                     [list(o.shape) if hasattr(o, "shape") else None for o in outs])
    return res


def assert_ulp_close(actual, desired, precision="float32", maxulp=4, err_msg=""):
    """Assert two arrays agree within ``maxulp`` units in the last place of ``precision``.

    Library versions round transcendental functions differently (NumPy's SIMD loops change
    between releases), so values computed in float32 are compared in float32 ulps rather than
    at a relative tolerance far below float32's resolution.
    """
    a = np.asarray(actual).astype(precision)
    b = np.asarray(desired).astype(precision)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{err_msg}: NaN positions")
    ok = ~np.isnan(a)
    np.testing.assert_array_max_ulp(a[ok], b[ok], maxulp=maxulp)


def check_parity(fn, inputs, pd, grad=True, rtol=None, atol=None, check_dtype=True, kwargs=None,
                 precision=None):
    """Assert paddle_hl matches real Paddle: values, dtypes, shapes and weighted-sum gradients.

    ``precision`` names the dtype the values are computed in when it is narrower than the
    output dtype (e.g. integer ``atan2`` computes in float32 and returns float64): outputs are
    then compared in ulps of that dtype.
    """
    res = run_both(fn, inputs, pd, grad=grad, kwargs=kwargs)
    (ho, hg, hd, hs), (po, pg, pdt, ps) = res["hl"], res["pd"]
    assert len(ho) == len(po), f"number of outputs: paddle_hl {len(ho)}, paddle {len(po)}"
    for i, (a, b) in enumerate(zip(ho, po)):
        assert hs[i] == ps[i], f"output {i} shape: paddle_hl {hs[i]}, paddle {ps[i]}"
        if check_dtype:
            assert hd[i] == pdt[i], f"output {i} dtype: paddle_hl {hd[i]}, paddle {pdt[i]}"
        tol = rtol if rtol is not None else _default_tol(hd[i])
        if isinstance(a, np.ndarray) and precision is not None:
            assert_ulp_close(a, b, precision, err_msg=f"output {i}")
        elif isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=tol, atol=atol if atol is not None else tol,
                                       err_msg=f"output {i}", equal_nan=True)
        else:
            assert a == b
    if grad and hg is not None:
        for i, (a, b) in enumerate(zip(hg, pg)):
            if a is None or b is None:
                assert (a is None) == (b is None) or (a is not None and not np.any(a)) or (
                    b is not None and not np.any(b)), f"grad {i}: one library has none"
                continue
            tol = rtol if rtol is not None else _default_tol(a.dtype)
            np.testing.assert_allclose(a, b, rtol=tol, atol=atol if atol is not None else tol,
                                       err_msg=f"grad of input {i}", equal_nan=True)
    return res


def check_op(fn, ref, inputs, grad_ref=None, rtol=1e-6, atol=1e-6, kwargs=None):
    """Compare ``fn(paddle_hl, *tensors)`` with a NumPy reference ``ref(*arrays)``."""
    kwargs = kwargs or {}
    ts = [paddle_hl.to_tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    out = _flatten(fn(paddle_hl, *ts, **kwargs))
    exp = _flatten(ref(*inputs, **kwargs))
    assert len(out) == len(exp)
    for o, e in zip(out, exp):
        e = np.asarray(e)
        assert list(o.shape) == list(e.shape), f"shape {o.shape} vs reference {list(e.shape)}"
        np.testing.assert_allclose(_to_np(o), e, rtol=rtol, atol=atol, equal_nan=True)
    return out


def numeric_grad(f, arrays, i, eps=1e-6):
    """Central differences of scalar ``f(*arrays)`` w.r.t. ``arrays[i]`` (float64)."""
    x = arrays[i]
    g = np.zeros_like(x, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        idx = it.multi_index
        orig = x[idx]
        x[idx] = orig + eps
        fp = f(*arrays)
        x[idx] = orig - eps
        fm = f(*arrays)
        x[idx] = orig
        g[idx] = (fp - fm) / (2 * eps)
    return g


def gradcheck(fn, inputs, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    """Finite-difference check, in float64, of the gradient of ``sum(w * fn(*tensors))``.

    ``fn`` takes paddle_hl tensors; ``wrt`` lists the input indices to check (default: floats).
    """
    arrays = [np.array(a, dtype=np.float64) if _is_float(a) else a for a in inputs]
    wrt = [i for i, a in enumerate(arrays) if _is_float(a)] if wrt is None else wrt
    rng = np.random.default_rng(seed)
    weights = []

    def scalar(*arrs):
        ts = [paddle_hl.to_tensor(a) if isinstance(a, np.ndarray) else a for a in arrs]
        with paddle_hl.no_grad():
            outs = _flatten(fn(*ts))
        tot = 0.0
        for k, o in enumerate(outs):
            if not weights[k:k + 1]:
                weights.append(rng.standard_normal(o.shape))
            tot += float(np.sum(o.numpy().astype(np.float64) * weights[k]))
        return tot

    ts = [paddle_hl.to_tensor(a, stop_gradient=i not in wrt) if isinstance(a, np.ndarray) else a
          for i, a in enumerate(arrays)]
    outs = _flatten(fn(*ts))
    for k, o in enumerate(outs):
        if not weights[k:k + 1]:
            weights.append(rng.standard_normal(o.shape))
    total = None
    for o, w in zip(outs, weights):
        if o.stop_gradient or o.size == 0:
            continue
        term = (o * paddle_hl.to_tensor(w)).sum()
        total = term if total is None else total + term
    total.backward()
    for i in wrt:
        num = numeric_grad(scalar, arrays, i, eps)
        ana = ts[i].grad
        assert ana is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(ana.numpy(), num, rtol=rtol, atol=atol,
                                   err_msg=f"finite-difference gradient of input {i}")
