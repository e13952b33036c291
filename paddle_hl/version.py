"""paddle_hl.version: the Paddle release whose API this package implements, and its own version.

Code written for Paddle checks ``paddle.__version__`` or ``paddle.version.major`` to choose a code
path. paddle_hl implements Paddle 2.6.2's API, so those names report ``2.6.2`` and such code takes
its 2.6 path. paddle_hl's own release is ``hl_version`` (``paddle_hl.__hl_version__``), and
:func:`show` prints both.

Example:
    >>> import paddle_hl as paddle
    >>> paddle.version.major, paddle.version.minor
    ('2', '6')
"""

from __future__ import annotations

__all__ = ["full_version", "major", "minor", "patch", "rc", "istaged", "commit", "with_mkl",
           "hl_version", "show", "mkl", "cuda", "cudnn", "xpu", "xpu_xccl", "cinn",
           "cuda_version", "cudnn_version", "xpu_version", "xpu_xccl_version", "cinn_version"]

full_version = "2.6.2"
major = "2"
minor = "6"
patch = "2"
rc = "0"
istaged = True
# no upstream build commit: paddle_hl is not a build of Paddle
commit = "paddle_hl"
with_mkl = "OFF"
hl_version = "0.1.0"


def _cuda_runtime():
    """The CUDA runtime version CuPy reports as 'major.minor', or None without CuPy/GPU."""
    from . import backend

    try:
        v = backend.cuda_runtime_version()
    except Exception:  # a CUDA runtime error without a driver
        return None
    return None if v is None else f"{v // 1000}.{(v % 1000) // 10}"


def mkl() -> str:
    """'ON' when Paddle's MKL build option is on; paddle_hl uses NumPy's BLAS: 'OFF'."""
    return with_mkl


def cuda():
    """The CUDA version the GPU backend (CuPy) runs on, or False without one (as a CPU Paddle)."""
    return _cuda_runtime() or False


def cudnn():
    """paddle_hl does not link cuDNN: False."""
    return False


def xpu():
    """No XPU backend: False."""
    return False


def xpu_xccl():
    """No XPU backend: False."""
    return False


def cinn():
    """No CINN compiler: False."""
    return False


cuda_version = cuda
cudnn_version = cudnn
xpu_version = xpu
xpu_xccl_version = xpu_xccl
cinn_version = cinn


def show() -> None:
    """Print the implemented Paddle version, paddle_hl's own version and the backends."""
    print(f"full_version: {full_version}")
    print(f"major: {major}")
    print(f"minor: {minor}")
    print(f"patch: {patch}")
    print(f"rc: {rc}")
    print(f"cuda: {cuda()}")
    print(f"cudnn: {cudnn()}")
    print(f"xpu: {xpu()}")
    print(f"xpu_xccl: {xpu_xccl()}")
    print(f"cinn: {cinn()}")
    print(f"paddle_hl: {hl_version}")
