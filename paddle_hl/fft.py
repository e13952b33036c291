"""Discrete Fourier transforms (``paddle.fft``) on ``numpy.fft`` / ``cupy.fft``.

Every transform is linear, so its gradient is another transform: the adjoint of a forward FFT
with norm ``m`` is the unnormalised-in-the-other-direction inverse FFT (norm ``dual(m)``), and the
same holds for the half-spectrum transforms up to a zero-extension (``rfft``) or a Hermitian
weighting of 1 for the DC/Nyquist bins and 2 for the others (``irfft``, ``hfft``). Gradients
follow Paddle's complex convention ``dL/dRe(z) + i*dL/dIm(z)``, the conjugate-transpose rule.

Each adjoint is written as a short list of the kernels below (a *plan*). A transform's one
gradient rule runs its plan with ``M.op``: on raw arrays for first-order gradients, and as recorded
ops under ``create_graph=True``, so that FFTs are differentiable to any order.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import backend
from .framework import dtype as _dt
from .framework.op import GRAD, apply, op
from .framework.tensor import Tensor, _wrap
from .tensor._helpers import cast_to, tensor_arg

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64),
               np.dtype(np.complex128): np.dtype(np.complex128)}
_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64),
            np.dtype(np.float32): np.dtype(np.float32),
            np.dtype(np.float64): np.dtype(np.float64)}


# ---------------------------------------------------------------------------- kernels
def _plan_rule(plan):
    """The gradient rule of a transform whose adjoint is ``plan(in_shape, in_dtype, **attrs)``."""

    def grad(M, x, out, g, **attrs):
        xv = M.value(x)
        for kernel, kw in plan(xv.shape, xv.dtype, **attrs):
            g = M.op(kernel, g, **kw)
        return (g,)

    return grad


def _contiguous(xp, out, dtype):
    """Row-major output of ``dtype`` (FFTs along inner axes return strided arrays)."""
    if out.dtype != dtype:
        out = out.astype(dtype)
    return out if out.flags.c_contiguous else xp.ascontiguousarray(out)


def _c2c_plan(in_shape, in_dtype, axes, s, norm, inverse):
    steps = [(_c2c, {"axes": axes, "s": None, "norm": _DUAL[norm], "inverse": not inverse}),
             (_resize, {"axes": axes, "sizes": tuple(in_shape[a] for a in axes)})]
    if in_dtype.kind != "c":
        steps.append((_real, {"dtype": in_dtype}))
    return steps


# linear: backward never reads the input values, only their shape and dtype
@op("fft_c2c", saves=(), grad=_plan_rule(_c2c_plan))
def _c2c(x, axes, s, norm, inverse):
    """Complex-to-complex n-D transform (``fftn`` / ``ifftn``) over ``axes`` with sizes ``s``."""
    xp = backend.get_array_module(x)
    fn = xp.fft.ifftn if inverse else xp.fft.fftn
    return _contiguous(xp, fn(x, s=s, axes=axes, norm=norm), _COMPLEX_OF[x.dtype]), GRAD


def _r2c_plan(in_shape, in_dtype, axes, s, norm, inverse):
    if s is None:  # the kernel transforms at the input's own sizes
        s = tuple(in_shape[a] for a in axes)
    last = axes[-1]
    return [(_resize, {"axes": (last,), "sizes": (s[-1],)}),  # zero-extend the half spectrum
            (_c2c, {"axes": axes, "s": None, "norm": _DUAL[norm], "inverse": not inverse}),
            (_real, {"dtype": in_dtype}),
            (_resize, {"axes": axes, "sizes": tuple(in_shape[a] for a in axes)})]


@op("fft_r2c", saves=(), grad=_plan_rule(_r2c_plan))
def _r2c(x, axes, s, norm, inverse):
    """Real-to-half-spectrum transform: ``rfftn`` (inverse=False) or ``ihfftn`` (inverse=True)."""
    xp = backend.get_array_module(x)
    if s is None:
        s = tuple(x.shape[a] for a in axes)
    if inverse:
        out = xp.conj(xp.fft.rfftn(x, s=s, axes=axes, norm=_DUAL[norm]))
    else:
        out = xp.fft.rfftn(x, s=s, axes=axes, norm=norm)
    return _contiguous(xp, out, _COMPLEX_OF[x.dtype]), GRAD


def _c2r_plan(in_shape, in_dtype, axes, s, norm, inverse):
    steps = [(_r2c, {"axes": axes, "s": None, "norm": _DUAL[norm], "inverse": not inverse}),
             (_hermitian_weight, {"axis": axes[-1], "n": s[-1]}),
             (_resize, {"axes": axes, "sizes": tuple(in_shape[a] for a in axes)})]
    if in_dtype.kind != "c":  # a real spectrum given to irfft/hfft gets a real gradient
        steps.append((_real, {"dtype": in_dtype}))
    return steps


@op("fft_c2r", saves=(), grad=_plan_rule(_c2r_plan))
def _c2r(x, axes, s, norm, inverse):
    """Half-spectrum-to-real transform: ``irfftn`` (inverse=True) or ``hfftn`` (inverse=False).

    ``s`` holds the full output sizes; the last axis of x holds ``s[-1] // 2 + 1`` bins.
    """
    xp = backend.get_array_module(x)
    if inverse:
        out = xp.fft.irfftn(x, s=s, axes=axes, norm=norm)
    else:
        # the forward transform of a Hermitian signal: conj flips the exponent's sign
        out = xp.fft.irfftn(xp.conj(x), s=s, axes=axes, norm=_DUAL[norm])
    return _contiguous(xp, out, _REAL_OF[x.dtype]), GRAD


@op("fft_resize", saves=(), grad=lambda M, x, out, g, axes, sizes: (
    M.op(_resize, g, axes=axes, sizes=tuple(M.value(x).shape[a] for a in axes)),))
def _resize(x, axes, sizes):
    """Crop or zero-pad ``x`` along ``axes`` to ``sizes`` (its own adjoint, in reverse)."""
    shape = x.shape
    if all(shape[a] == n for a, n in zip(axes, sizes)):
        return x, GRAD
    xp = backend.get_array_module(x)
    index = [slice(None)] * x.ndim
    pads = [(0, 0)] * x.ndim
    for a, n in zip(axes, sizes):
        if shape[a] > n:
            index[a] = slice(0, n)
        elif shape[a] < n:
            pads[a] = (0, n - shape[a])
    out = x[tuple(index)]
    if any(p[1] for p in pads):
        out = xp.pad(out, pads)
    elif not out.flags.c_contiguous:
        out = xp.ascontiguousarray(out)
    return out, GRAD


@op("real", saves=(), grad=lambda M, x, out, g, dtype: (
    M.op(_as_complex, g, dtype=M.value(x).dtype),))
def _real(x, dtype):
    """Real part, cast to ``dtype``; the adjoint embeds a real gradient as a complex one."""
    return x.real.astype(dtype, copy=True), GRAD


def _as_complex_grad(M, x, out, g, dtype):
    src = M.value(x).dtype
    return (M.op(_as_complex if src.kind == "c" else _real, g, dtype=src),)


@op("as_complex", saves=(), grad=_as_complex_grad)
def _as_complex(x, dtype):
    """``x`` as ``dtype`` (complex -> complex is a cast; real -> complex embeds)."""
    return x.astype(dtype, copy=False), GRAD


@op("hermitian_weight", saves=(), grad=lambda M, x, out, g, axis, n: (
    M.op(_hermitian_weight, g, axis=axis, n=n),))
def _hermitian_weight(x, axis, n):
    """Scale half-spectrum bins by how often they occur in the full spectrum of length n.

    Bin 0 (and bin n/2 for even n) occurs once, every other bin twice (itself and its conjugate
    mirror), so those carry weight 2 in the adjoint of a half-spectrum-to-real transform.
    """
    xp = backend.get_array_module(x)
    m = x.shape[axis]
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0 and m - 1 == n // 2:
        w[-1] = 1.0
    shape = [1] * x.ndim
    shape[axis] = m
    w = xp.asarray(w.reshape(shape), dtype=_REAL_OF[x.dtype])
    return x * w, GRAD


@op("roll", saves=(), grad=lambda M, x, out, g, shifts, axes: (
    M.op(_roll, g, shifts=tuple(-s for s in shifts), axes=axes),))
def _roll(x, shifts, axes):
    xp = backend.get_array_module(x)
    return (xp.roll(x, shifts, axes) if axes else x.copy()), GRAD


# ---------------------------------------------------------------------------- argument checks
def _norm_arg(norm):
    if norm not in _NORMS:
        raise ValueError(f"Unexpected norm: {norm}. Norm should be forward, backward or ortho")
    return norm


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _input(x, op, kind):
    """x as a Tensor of a dtype the transform accepts (ints are promoted as Paddle does)."""
    x = tensor_arg(x, op)
    d = x._data.dtype
    if d == np.bool_ or d == np.float16 or d == _dt.BFLOAT16_NP:
        raise TypeError(f"paddle.fft.{op}: x has dtype {x.dtype.name}, which FFTs do not "
                        "support; expected float32, float64, complex64 or complex128 (or an "
                        "integer tensor)")
    if d.kind in "iu":
        x = cast_to(x, _dt.default_np())
    elif kind == "r2c" and d.kind == "c":
        raise TypeError(f"paddle.fft.{op}: x must be a real tensor (float32 or float64), got "
                        f"{x.dtype.name}")
    return x


def _axis_arg(axis, ndim):
    if not _is_int(axis):
        raise ValueError(f"Invalid FFT axis ({axis}), it shoule be an integer.")
    if not -ndim <= axis < ndim:
        raise ValueError(f"Invalid FFT axis ({axis}), it should be in range [-{ndim}, {ndim})")
    return axis % ndim


def _n_arg(n):
    if n is None:
        return None
    if not _is_int(n):
        raise ValueError(f"Invalid FFT argument n({n}), it shoule be an integer.")
    if n <= 0:
        raise ValueError(f"Invalid FFT argument n({n}), it should be positive.")
    return int(n)


def _seq(v):
    return isinstance(v, (list, tuple)) or (isinstance(v, Tensor) and v.ndim == 1)


def _as_list(v):
    return v.tolist() if isinstance(v, Tensor) else list(v)


def _s_arg(s):
    if s is None:
        return None
    if not _seq(s):
        raise ValueError(f"Invaid FFT argument s({s}), it should be a sequence of integers.")
    s = _as_list(s)
    for v in s:
        if not _is_int(v) or v <= 0:
            raise ValueError(f"FFT sizes {s} contains invalid value ({v})")
    return [int(v) for v in s]


def _axes_arg(axes, ndim):
    if not _seq(axes):
        raise ValueError(f"Invalid FFT axes ({axes}), it should be a sequence of integers.")
    axes = _as_list(axes)
    for a in axes:
        if not _is_int(a) or not -ndim <= a < ndim:
            raise ValueError(f"FFT axes {axes} contains invalid value ({a}), it should be in "
                             f"range [-{ndim}, {ndim})")
    out = [int(a) % ndim for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"FFT axes {axes} contains a repeated axis")
    return out


def _nd_args(x, s, axes, op):
    """Resolve (s, axes) of an n-D transform as Paddle does (s without axes: the last axes)."""
    ndim = x.ndim
    s = _s_arg(s)
    if axes is None:
        if s is None:
            axes = list(range(ndim))
        else:
            if len(s) > ndim:
                raise ValueError("Length of FFT argument s should not be larger than the rank "
                                 f"of input. Received s: {s}, rank of x: {ndim}")
            axes = list(range(ndim - len(s), ndim))
    else:
        axes = _axes_arg(axes, ndim)
        if s is not None and len(s) != len(axes):
            raise ValueError(f"Length of s ({len(s)}) and length of axes ({len(axes)}) does not "
                             "match.")
    if not axes:
        raise ValueError(f"paddle.fft.{op}: there is no axis to transform (x has rank {ndim}, "
                         f"axes={axes}); x must have at least one dimension")
    return s, axes


def _two_d_args(x, s, axes):
    if x.ndim < 2:
        raise ValueError(f"The rank of the input ({x.ndim}) should >= 2")
    if not _seq(axes) or len(_as_list(axes)) != 2:
        raise ValueError(f"Invalid FFT argument axes ({axes}), it should be a sequence of 2 "
                         "integers.")
    if s is not None and (not _seq(s) or len(_as_list(s)) != 2):
        raise ValueError(f"Invalid FFT argument s ({s}), it should be a sequence of 2 integers.")


def _transform(x, kind, s, axes, norm, inverse, op):
    """Run the kernel of ``kind`` once the sizes are resolved and checked."""
    shape = x._data.shape
    if s is None:
        s = [shape[a] for a in axes]
        if kind == "c2r":
            s[-1] = 2 * (shape[axes[-1]] - 1)
    for a, n in zip(axes, s):
        if n <= 0 or shape[a] == 0:
            raise ValueError(f"paddle.fft.{op}: invalid fft n-point ({n}) along axis {a} of an "
                             f"input of shape {list(shape)}; the transformed axes must be "
                             "non-empty and the output size positive")
    kernel = {"c2c": _c2c, "r2c": _r2c, "c2r": _c2r}[kind]
    return apply(kernel, x, axes=tuple(axes), s=tuple(s), norm=norm, inverse=inverse)


def _one_dim(op, x, n, axis, norm, kind, inverse):
    x = _input(x, op, kind)
    _norm_arg(norm)
    n = _n_arg(n)
    if x.ndim == 0:
        raise ValueError(f"Invalid FFT axis ({axis}), it should be in range [-0, 0)")
    axis = _axis_arg(axis, x.ndim)
    return _transform(x, kind, None if n is None else [n], [axis], norm, inverse, op)


def _n_dim(op, x, s, axes, norm, kind, inverse):
    x = _input(x, op, kind)
    _norm_arg(norm)
    s, axes = _nd_args(x, s, axes, op)
    return _transform(x, kind, s, axes, norm, inverse, op)


def _two_dim(op, x, s, axes, norm, kind, inverse):
    x = _input(x, op, kind)
    _two_d_args(x, s, axes)
    return _n_dim(op, x, s, axes, norm, kind, inverse)


# ---------------------------------------------------------------------------- 1-D transforms
def fft(x, n=None, axis=-1, norm="backward", name=None):
    """One-dimensional discrete Fourier transform.

    Args:
        x (Tensor): Real or complex input; integers are promoted to the default float dtype.
        n (int, optional): Length of the transformed axis; x is cropped or zero-padded to it.
            Default: the length of x along ``axis``.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward" (no scaling forward, 1/n inverse), "ortho"
            (1/sqrt(n) both ways) or "forward" (1/n forward). Default: "backward".
        name (str, optional): Unused; kept for Paddle compatibility.

    Returns:
        Tensor: complex64 for float32/complex64 input, complex128 for float64/complex128.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.fft.fft(paddle.to_tensor([1.0, 0.0, 0.0, 0.0])).numpy()
        array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return _one_dim("fft", x, n, axis, norm, "c2c", False)


def ifft(x, n=None, axis=-1, norm="backward", name=None):
    """One-dimensional inverse discrete Fourier transform.

    Args:
        x (Tensor): Real or complex input.
        n (int, optional): Length of the transformed axis (crop or zero-pad).
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex inverse transform.
    """
    return _one_dim("ifft", x, n, axis, norm, "c2c", True)


def rfft(x, n=None, axis=-1, norm="backward", name=None):
    """Fourier transform of a real signal, keeping the ``n // 2 + 1`` non-negative frequencies.

    Args:
        x (Tensor): Real input (float32 or float64; integers are promoted).
        n (int, optional): Signal length used (crop or zero-pad). Default: x's length on axis.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: Complex tensor with ``n // 2 + 1`` entries along ``axis``.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.fft.rfft(paddle.to_tensor([1.0, 2.0, 3.0, 4.0])).shape
        [3]
    """
    return _one_dim("rfft", x, n, axis, norm, "r2c", False)


def irfft(x, n=None, axis=-1, norm="backward", name=None):
    """Inverse of :func:`rfft`: a real signal from its half spectrum.

    Args:
        x (Tensor): Half spectrum (complex; real input is taken as complex).
        n (int, optional): Length of the real output. Default: ``2 * (m - 1)`` where m is x's
            length along ``axis``.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: Real tensor (float32 for complex64 input, float64 for complex128).
    """
    return _one_dim("irfft", x, n, axis, norm, "c2r", True)


def hfft(x, n=None, axis=-1, norm="backward", name=None):
    """Fourier transform of a Hermitian-symmetric signal given by its first half.

    Args:
        x (Tensor): The first half of a Hermitian signal (complex).
        n (int, optional): Length of the real output. Default: ``2 * (m - 1)``.
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The real spectrum of length n.
    """
    return _one_dim("hfft", x, n, axis, norm, "c2r", False)


def ihfft(x, n=None, axis=-1, norm="backward", name=None):
    """Inverse of :func:`hfft`: the half spectrum of the inverse transform of a real signal.

    Args:
        x (Tensor): Real input (float32 or float64).
        n (int, optional): Signal length used (crop or zero-pad).
        axis (int, optional): The axis to transform. Default: -1.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: Complex tensor with ``n // 2 + 1`` entries along ``axis``.
    """
    return _one_dim("ihfft", x, n, axis, norm, "r2c", True)


# ---------------------------------------------------------------------------- 2-D transforms
def fft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Two-dimensional discrete Fourier transform over ``axes``.

    Args:
        x (Tensor): Input of rank >= 2.
        s (sequence of 2 ints, optional): Output sizes along ``axes`` (crop or zero-pad).
        axes (sequence of 2 ints, optional): The axes to transform. Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex transform.
    """
    return _two_dim("fft2", x, s, axes, norm, "c2c", False)


def ifft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Two-dimensional inverse discrete Fourier transform (see :func:`fft2`).

    Args:
        x (Tensor): Input of rank >= 2.
        s (sequence of 2 ints, optional): Output sizes along ``axes``.
        axes (sequence of 2 ints, optional): Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex inverse transform.
    """
    return _two_dim("ifft2", x, s, axes, norm, "c2c", True)


def rfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Two-dimensional FFT of a real input; the last axis keeps ``s[-1] // 2 + 1`` bins.

    Args:
        x (Tensor): Real input of rank >= 2.
        s (sequence of 2 ints, optional): Signal sizes along ``axes``.
        axes (sequence of 2 ints, optional): Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex half spectrum.
    """
    return _two_dim("rfft2", x, s, axes, norm, "r2c", False)


def irfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Inverse of :func:`rfft2`.

    Args:
        x (Tensor): Complex half spectrum of rank >= 2.
        s (sequence of 2 ints, optional): Real output sizes. Default: x's sizes, with the last
            one ``2 * (m - 1)``.
        axes (sequence of 2 ints, optional): Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The real signal.
    """
    return _two_dim("irfft2", x, s, axes, norm, "c2r", True)


def hfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Two-dimensional FFT of a Hermitian-symmetric signal given by its half (see :func:`hfft`).

    Args:
        x (Tensor): Complex input of rank >= 2.
        s (sequence of 2 ints, optional): Real output sizes.
        axes (sequence of 2 ints, optional): Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The real spectrum.
    """
    return _two_dim("hfft2", x, s, axes, norm, "c2r", False)


def ihfft2(x, s=None, axes=(-2, -1), norm="backward", name=None):
    """Inverse of :func:`hfft2` for a real input.

    Args:
        x (Tensor): Real input of rank >= 2.
        s (sequence of 2 ints, optional): Signal sizes along ``axes``.
        axes (sequence of 2 ints, optional): Default: (-2, -1).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex half spectrum.
    """
    return _two_dim("ihfft2", x, s, axes, norm, "r2c", True)


# ---------------------------------------------------------------------------- n-D transforms
def fftn(x, s=None, axes=None, norm="backward", name=None):
    """N-dimensional discrete Fourier transform.

    Args:
        x (Tensor): Real or complex input.
        s (sequence of ints, optional): Output sizes along ``axes`` (crop or zero-pad). Given
            without ``axes``, it applies to the last ``len(s)`` axes.
        axes (sequence of ints, optional): Axes to transform. Default: all (or the last
            ``len(s)``).
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex transform.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.fft.fftn(paddle.ones([2, 2])).numpy().real
        array([[4., 0.],
               [0., 0.]], dtype=float32)
    """
    return _n_dim("fftn", x, s, axes, norm, "c2c", False)


def ifftn(x, s=None, axes=None, norm="backward", name=None):
    """N-dimensional inverse discrete Fourier transform (see :func:`fftn`).

    Args:
        x (Tensor): Real or complex input.
        s (sequence of ints, optional): Output sizes along ``axes``.
        axes (sequence of ints, optional): Axes to transform.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex inverse transform.
    """
    return _n_dim("ifftn", x, s, axes, norm, "c2c", True)


def rfftn(x, s=None, axes=None, norm="backward", name=None):
    """N-dimensional FFT of a real input; the last transformed axis keeps ``s[-1]//2+1`` bins.

    Args:
        x (Tensor): Real input.
        s (sequence of ints, optional): Signal sizes along ``axes``.
        axes (sequence of ints, optional): Axes to transform.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex half spectrum.
    """
    return _n_dim("rfftn", x, s, axes, norm, "r2c", False)


def irfftn(x, s=None, axes=None, norm="backward", name=None):
    """Inverse of :func:`rfftn`.

    Args:
        x (Tensor): Complex half spectrum.
        s (sequence of ints, optional): Real output sizes. Default: x's sizes, with the last
            one ``2 * (m - 1)``.
        axes (sequence of ints, optional): Axes to transform.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The real signal.
    """
    return _n_dim("irfftn", x, s, axes, norm, "c2r", True)


def hfftn(x, s=None, axes=None, norm="backward", name=None):
    """N-dimensional FFT of a Hermitian-symmetric signal given by its half.

    Args:
        x (Tensor): Complex input (the half spectrum along the last transformed axis).
        s (sequence of ints, optional): Real output sizes.
        axes (sequence of ints, optional): Axes to transform.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The real spectrum.
    """
    return _n_dim("hfftn", x, s, axes, norm, "c2r", False)


def ihfftn(x, s=None, axes=None, norm="backward", name=None):
    """Inverse of :func:`hfftn` for a real input.

    Args:
        x (Tensor): Real input.
        s (sequence of ints, optional): Signal sizes along ``axes``.
        axes (sequence of ints, optional): Axes to transform.
        norm (str, optional): "backward", "ortho" or "forward". Default: "backward".
        name (str, optional): Unused.

    Returns:
        Tensor: The complex half spectrum.
    """
    return _n_dim("ihfftn", x, s, axes, norm, "r2c", True)


# ---------------------------------------------------------------------------- helpers
def _freq_args(n, d, dtype, op):
    if not _is_int(n):
        raise TypeError(f"paddle.fft.{op}: n must be an int, got {type(n).__name__}")
    if isinstance(d, Tensor):
        d = d.item()
    if n * d == 0:
        raise ValueError("d or n should not be 0.")
    if n < 0:
        raise ValueError(f"paddle.fft.{op}: n must be positive, got {n}")
    npd = _dt.default_np() if dtype is None else _dt.to_np(dtype)
    if npd.kind != "f" and npd != _dt.BFLOAT16_NP:
        raise TypeError(f"paddle.fft.{op}: dtype must be a floating dtype, got {dtype}")
    return d, npd


def _freq_tensor(indices, val, npd):
    from .framework.place import current_place, xp_for

    xp = xp_for(current_place())
    # Paddle computes arange(dtype) * val in the output dtype, so round val first
    out = indices.astype(npd) * np.asarray(val, dtype=npd)
    return _wrap(xp.asarray(out))


def fftfreq(n, d=1.0, dtype=None, name=None):
    """Sample frequencies of :func:`fft`: ``[0, 1, ..., n//2 - 1 or so, -n//2, ..., -1] / (d*n)``.

    Args:
        n (int): Window length.
        d (float, optional): Sample spacing (inverse of the sampling rate). Default: 1.0.
        dtype (str, optional): Floating dtype of the result. Default: the default dtype.
        name (str, optional): Unused.

    Returns:
        Tensor: 1-D tensor of length n.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.fft.fftfreq(4, d=0.5).numpy()
        array([ 0. ,  0.5, -1. , -0.5], dtype=float32)
    """
    d, npd = _freq_args(n, d, dtype, "fftfreq")
    neg = n // 2
    indices = np.roll(np.arange(-neg, (n + 1) // 2, dtype=np.float64), -neg)
    return _freq_tensor(indices, 1.0 / (n * d), npd)


def rfftfreq(n, d=1.0, dtype=None, name=None):
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``.

    Args:
        n (int): Window length.
        d (float, optional): Sample spacing. Default: 1.0.
        dtype (str, optional): Floating dtype of the result. Default: the default dtype.
        name (str, optional): Unused.

    Returns:
        Tensor: 1-D tensor of length ``n // 2 + 1``.
    """
    d, npd = _freq_args(n, d, dtype, "rfftfreq")
    return _freq_tensor(np.arange(0, n // 2 + 1, dtype=np.float64), 1.0 / (n * d), npd)


def _shift(x, axes, sign, op):
    x = tensor_arg(x, op)
    ndim = x.ndim
    if axes is None:
        axes = list(range(ndim))
    elif _is_int(axes):
        axes = [axes]
    elif not _seq(axes):
        raise TypeError(f"paddle.fft.{op}: axes must be an int or a sequence of ints, got "
                        f"{type(axes).__name__}")
    axes = _as_list(axes)
    norm_axes = []
    for a in axes:
        if not _is_int(a) or not -max(ndim, 1) <= a < max(ndim, 1) or ndim == 0:
            raise ValueError(f"paddle.fft.{op}: axis {a} is out of range for a tensor of rank "
                             f"{ndim}")
        norm_axes.append(int(a) % ndim)
    shape = x._data.shape
    shifts = tuple(sign * (shape[a] // 2) for a in norm_axes)
    return apply(_roll, x, shifts=shifts, axes=tuple(norm_axes))


def fftshift(x, axes=None, name=None):
    """Move the zero-frequency term to the centre of the spectrum (a roll by ``n // 2``).

    Args:
        x (Tensor): Input tensor.
        axes (int or sequence of ints, optional): Axes to shift. Default: all.
        name (str, optional): Unused.

    Returns:
        Tensor: The shifted tensor, same dtype and shape as x.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.fft.fftshift(paddle.fft.fftfreq(5)).numpy()
        array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float32)
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None, name=None):
    """Inverse of :func:`fftshift` (a roll by ``-(n // 2)``).

    Args:
        x (Tensor): Input tensor.
        axes (int or sequence of ints, optional): Axes to shift. Default: all.
        name (str, optional): Unused.

    Returns:
        Tensor: The shifted tensor.
    """
    return _shift(x, axes, -1, "ifftshift")
