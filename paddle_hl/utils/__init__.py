"""``paddle.utils``: installation check, DLPack interchange and small helpers.

Submodules (``dlpack``, ``download``, ``unique_name``) load on first attribute access.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np

__all__ = ["run_check", "try_import", "require_version", "deprecated"]

_LAZY = ("dlpack", "download", "unique_name")


def __getattr__(name):
    if name in _LAZY:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.utils' has no attribute '{name}'")


def _check_dygraph(device: str):
    """A tiny forward/backward on ``device``, compared with the closed-form gradient."""
    import paddle_hl as paddle

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 3)).astype(np.float32)
    w_np = rng.standard_normal((3, 2)).astype(np.float32)
    prev = paddle.get_device()
    paddle.set_device(device)
    try:
        x = paddle.to_tensor(x_np)
        w = paddle.to_tensor(w_np, stop_gradient=False)
        b = paddle.zeros([2])
        b.stop_gradient = False
        loss = paddle.mean(paddle.matmul(x, w) + b)
        loss.backward()
        exp_loss = float(np.mean(x_np @ w_np))
        exp_w = np.repeat(x_np.sum(0, keepdims=True).T, 2, axis=1) / 8.0
        np.testing.assert_allclose(float(loss), exp_loss, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), exp_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.grad.numpy(), np.full(2, 0.5, np.float32), rtol=1e-6)
    finally:
        paddle.set_device(prev)


def run_check() -> None:
    """Check that paddle_hl works here: a dynamic-graph forward and backward on each device.

    Without a usable GPU (no CuPy, or no CUDA device) it warns and checks the CPU instead of
    failing.

    Returns:
        None. Prints what was checked; raises if a computation gives a wrong result.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.utils.run_check()  # doctest: +SKIP
        Running verify PaddlePaddle program ...
        PaddlePaddle works well on 1 CPU.
        PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now.
    """
    from .. import backend

    print("Running verify PaddlePaddle program ... ")
    n_gpu = backend.device_count()
    if n_gpu == 0:
        warnings.warn(f"paddle_hl runs on the CPU only here ({backend.gpu_error()}); checking "
                      "the CPU. Install CuPy for your CUDA version to use a GPU.", stacklevel=2)
        _check_dygraph("cpu")
        print("PaddlePaddle works well on 1 CPU.")
    else:
        for i in range(n_gpu):
            _check_dygraph(f"gpu:{i}")
        print(f"PaddlePaddle works well on {n_gpu} GPU{'s' if n_gpu > 1 else ''}.")
    print("PaddlePaddle is installed successfully! Let's start deep learning with "
          "PaddlePaddle now.")


def try_import(module_name: str, err_msg: str | None = None):
    """Import a module by name, with an install hint when it is missing.

    Args:
        module_name (str): e.g. "scipy.signal".
        err_msg (str, optional): The message of the ImportError raised when it is missing.

    Returns:
        module: The imported module.
    """
    try:
        return importlib.import_module(module_name)
    except ImportError:
        if err_msg is None:
            err_msg = (f"Failed importing {module_name}. This likely means that some paddle "
                       f"modules require additional dependencies that have to be manually "
                       f"installed (usually with `pip install {module_name.split('.')[0]}`).")
        raise ImportError(err_msg) from None


def _version_tuple(v: str, what: str):
    parts = v.split(".")
    if not all(p.isdigit() for p in parts):
        raise ValueError(f"require_version: {what} {v!r} must look like 'x.y.z' (digits and "
                         "dots)")
    return tuple(int(p) for p in parts) + (0,) * (4 - len(parts))


def require_version(min_version: str, max_version: str | None = None) -> None:
    """Raise if the emulated Paddle version (2.6.2) is outside [min_version, max_version].

    Args:
        min_version (str): Minimum version, e.g. "2.0".
        max_version (str, optional): Maximum version.

    Returns:
        None
    """
    if not isinstance(min_version, str):
        raise TypeError(f"The type of 'min_version' in require_version must be str, but "
                        f"received {type(min_version)}.")
    if max_version is not None and not isinstance(max_version, str):
        raise TypeError(f"The type of 'max_version' in require_version must be str or None, "
                        f"but received {type(max_version)}.")
    current = "2.6.2"
    cur = _version_tuple(current, "the version")
    if cur < _version_tuple(min_version, "min_version") or (
            max_version is not None and cur > _version_tuple(max_version, "max_version")):
        bound = f"in [{min_version}, {max_version}]" if max_version else f">= {min_version}"
        raise Exception(f"VersionError: PaddlePaddle version {bound} required, but {current} "
                        "installed (paddle_hl emulates Paddle 2.6.2).")


def deprecated(update_to="", since="", reason="", level=0):
    """Decorator marking an API deprecated: calling it warns once per call site.

    Args:
        update_to (str): The API to use instead.
        since (str): The version it was deprecated in.
        reason (str): Why.
        level (int): 0 or 1 warn; 2 raises RuntimeError.

    Returns:
        callable: The decorator.
    """
    import functools

    def decorator(func):
        msg = f"API \"{func.__module__}.{func.__name__}\" is deprecated"
        if since:
            msg += f" since {since}"
        if update_to:
            msg += f", and will be removed in future versions. Please use \"{update_to}\" instead"
        if reason:
            msg += f".\n    Reason: {reason}"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if level == 2:
                raise RuntimeError(msg)
            warnings.warn(msg, category=DeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return wrapper

    return decorator
