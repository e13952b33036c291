"""Special functions: gamma family, error function and modified Bessel functions.

Paddle's ``digamma``, ``erf``, ``erfinv``, ``i0``/``i0e``/``i1``/``i1e``, ``lgamma``,
``multigammaln`` and ``polygamma``, written from the mathematics on raw backend arrays (NumPy or
CuPy through ``xp``), with no SciPy at runtime. Every function evaluates in float64 and rounds once
to the input dtype, so float32 results are correctly rounded in almost all cases.

Methods (all vectorised; each element takes exactly one branch, chosen by boolean masks):

- ``lgamma``: Stirling's series for x >= 10, the recurrence Gamma(x+1) = x Gamma(x) below it, the
  zeta-function Taylor series of lgamma(1+z) near the zeros at 1 and 2, and the reflection formula
  for x <= 0.
- ``digamma``: asymptotic series for x >= 10, recurrence below it, reflection for x <= 0.
- ``polygamma``: psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x), the Hurwitz zeta function summed directly
  up to a shift and finished with the Euler-Maclaurin formula; for x <= 0 the reflection formula
  with the n-th derivative of cot written as a polynomial in cot.
- ``erf``: Maclaurin series for |x| <= 2, Laplace's continued fraction for erfc beyond.
- ``erfinv``: a series / asymptotic initial guess refined by Halley's method on erf (or on erfc in
  the tails, where 1 - |y| is exact).
- Bessel: everything is expressed through the entire, even functions I_n(x) / x^n (optionally times
  exp(-|x|)), whose derivative is x I_{n+1}(x) / x^(n+1); this closes the chain of derivatives, so
  gradients of any order need no special case at x = 0. Power series for |x| <= 30, the Hankel
  asymptotic expansion plus the order recurrence beyond.

Coefficients (Bernoulli numbers, factorials, zeta values) are derived exactly at import or on first
use, never typed in.
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction

import numpy as np

from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework.op import GRAD, apply, apply_, op
from ..framework.tensor import Tensor
from ._helpers import float_arg

__all__ = []

_PI = math.pi
_LOG_PI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_EULER = 0.57721566490153286061
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


# ====================================================================== exact coefficients

@functools.cache
def _bernoulli(m: int) -> tuple:
    """B_0 .. B_m as exact Fractions (recurrence sum_k C(n+1, k) B_k = 0)."""
    b = [Fraction(1)]
    for n in range(1, m + 1):
        b.append(-sum(math.comb(n + 1, k) * b[k] for k in range(n)) / (n + 1))
    return tuple(b)


def _b2(k: int) -> Fraction:
    return _bernoulli(2 * k)[2 * k]


# Stirling: lgamma(x) ~ (x - 1/2) log x - x + log(2 pi)/2 + sum B_2k / (2k (2k-1) x^(2k-1)).
_STIRLING = [float(_b2(k) / (2 * k * (2 * k - 1))) for k in range(1, 10)]
# digamma(x) ~ log x - 1/(2x) - sum B_2k / (2k x^(2k)).
_PSI_ASYM = [float(_b2(k) / (2 * k)) for k in range(1, 10)]


def _horner(coeffs, t):
    """sum_k coeffs[k] t^k for a Python list of coefficients and an array t."""
    acc = _xp(t).full_like(t, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc *= t
        acc += c
    return acc


def _fill(out, mask, x, fn):
    """out[mask] = fn(x[mask]); skips the work when nothing is selected."""
    if not bool(mask.any()):
        return
    if bool(mask.all()):
        out[...] = fn(x)
    else:
        out[mask] = fn(x[mask])


def _sin_pi(r):
    """sin(pi r) for |r| <= 1/2 (r already reduced, so pi r carries no large rounding error)."""
    return _xp(r).sin(_PI * r)


def _pi_cot_pi(r):
    """pi cot(pi r) for a reduced |r| <= 1/2 (1/r - pi^2 r / 3 where tan(pi r) is subnormal)."""
    xp = _xp(r)
    tiny = xp.abs(r) < 1e-8
    safe = xp.where(tiny, 0.25, r)
    return xp.where(tiny, 1.0 / r - (_PI * _PI / 3.0) * r, _PI / xp.tan(_PI * safe))


def _reduce(x):
    """x - round(x): exact in floating point, the distance to the nearest integer."""
    return x - _xp(x).round(x)


# ====================================================================== lgamma / digamma

_SHIFT = 10.0  # asymptotic series are used from here on; smaller arguments are shifted up


def _stirling(x):
    """lgamma(x) for x >= 10 (and +inf)."""
    xp = _xp(x)
    z = 1.0 / x
    series = z * _horner(_STIRLING, z * z)
    return (x - 0.5) * (xp.log(x) - 1.0) - 0.5 + _HALF_LOG_2PI + series


def _shift_up(x, op):
    """Shift each x in (0, 10) up to x + k >= 10; returns (shifted x, accumulated op terms)."""
    xp = _xp(x)
    xs = x.copy()
    acc = None
    for _ in range(_steps(x, _SHIFT)):
        m = xs < _SHIFT
        term = xp.where(m, op(xs), 0.0 if op is _recip else 1.0)
        if acc is None:
            acc = term
        elif op is _recip:
            acc += term
        else:
            acc *= term
        xs += m
    if acc is None:
        acc = xp.zeros_like(x) if op is _recip else xp.ones_like(x)
    return xs, acc


def _steps(x, target):
    """How many unit shifts bring the smallest element of x up to ``target`` (one host sync)."""
    lo = float(x.min()) if x.size else target
    return int(math.ceil(target - lo)) if lo < target else 0


def _recip(v):
    return 1.0 / v


def _ident(v):
    return v


@functools.cache
def _lgamma1p_coeffs() -> list:
    """Taylor coefficients of lgamma(1+z) = -gamma z + sum_{k>=2} (-1)^k zeta(k)/k z^k."""
    ks = np.arange(2, 34, dtype=np.float64)
    zeta = np.array([_hurwitz_zeta(np.ones(1), int(k))[0] for k in ks])
    return [0.0, -_EULER] + [float((-1) ** int(k) * z / k) for k, z in zip(ks, zeta)]


def _lgamma1p_series(z):
    """lgamma(1 + z) for |z| <= 0.3, accurate relative to the (small) result."""
    return _horner(_lgamma1p_coeffs(), z)


def _lgamma_pos(x):
    """lgamma(x) for x > 0 (including +inf)."""
    xp = _xp(x)
    out = xp.empty_like(x)
    near1 = xp.abs(x - 1.0) <= 0.3
    near2 = xp.abs(x - 2.0) <= 0.3
    big = x >= _SHIFT
    mid = ~(near1 | near2 | big)
    _fill(out, big, x, _stirling)
    _fill(out, near1, x, lambda v: _lgamma1p_series(v - 1.0))
    _fill(out, near2, x, lambda v: _lgamma1p_series(v - 2.0) + xp.log1p(v - 2.0))

    def shifted(v):
        xs, prod = _shift_up(v, _ident)
        return _stirling(xs) - xp.log(prod)

    _fill(out, mid, x, shifted)
    return out


def _lgamma_neg(x):
    """lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) for x <= 0; +inf at the poles."""
    xp = _xp(x)
    r = _reduce(x)
    ar = xp.abs(r)
    # for tiny |r|, log|sin(pi r)| = log(pi |r|) to double precision; avoids subnormal pi*r
    log_sin = xp.where(ar < 1e-8, _LOG_PI + xp.log(ar), xp.log(xp.abs(_sin_pi(r))))
    out = _LOG_PI - log_sin - _lgamma_pos(1.0 - x)
    return xp.where(xp.isinf(x) | (r == 0), xp.inf, out)


def _lgamma_arr(x):
    xp = _xp(x)
    out = xp.full_like(x, xp.nan)
    with np.errstate(all="ignore"):
        _fill(out, x > 0, x, _lgamma_pos)
        _fill(out, x <= 0, x, _lgamma_neg)
    return out


def _psi_asym(x):
    """digamma(x) for x >= 10 (and +inf)."""
    xp = _xp(x)
    z = 1.0 / x
    w = z * z
    return xp.log(x) - 0.5 * z - w * _horner(_PSI_ASYM, w)


def _psi_pos(x):
    xp = _xp(x)
    out = xp.empty_like(x)
    big = x >= _SHIFT
    _fill(out, big, x, _psi_asym)

    def shifted(v):
        xs, acc = _shift_up(v, _recip)
        return _psi_asym(xs) - acc

    _fill(out, ~big, x, shifted)
    return out


def _psi_neg(x):
    """digamma(x) = digamma(1 - x) - pi cot(pi x) for x <= 0; NaN at the poles (as Paddle)."""
    xp = _xp(x)
    r = _reduce(x)
    out = _psi_pos(1.0 - x) - _pi_cot_pi(r)
    return xp.where(r == 0, xp.nan, out)


def _digamma_arr(x):
    xp = _xp(x)
    out = xp.full_like(x, xp.nan)
    with np.errstate(all="ignore"):
        _fill(out, x > 0, x, _psi_pos)
        _fill(out, x <= 0, x, _psi_neg)
    return out


# ====================================================================== polygamma

_EM_TERMS = 12


@functools.cache
def _em_coeffs(s: int) -> list:
    """Euler-Maclaurin tail coefficients B_2j / (2j)! * s (s+1) ... (s+2j-2) for zeta(s, a)."""
    out = []
    for j in range(1, _EM_TERMS + 1):
        rising = math.prod(range(s, s + 2 * j - 1))
        out.append(float(_b2(j) * rising / math.factorial(2 * j)))
    return out


def _em_start(s: int) -> float:
    # the Euler-Maclaurin terms shrink like (s + 2j)^2 / (2 pi a)^2: start later for large s
    return max(10.0, 1.2 * s + 6.0)


def _hurwitz_zeta(x, s: int):
    """zeta(s, x) = sum_k (x + k)^-s for x > 0 and an integer s >= 2 (0 at x = +inf)."""
    xp = _xp(x)
    # every element is shifted by the same count (no masks): the Euler-Maclaurin tail is only
    # more accurate for the elements that end up further out
    steps = _steps(x, _em_start(s))
    acc = xp.zeros_like(x)
    for k in range(steps):
        acc += _ipow(1.0 / (x + k), s)
    xs = x + steps
    inv = 1.0 / xs
    inv_s1 = _ipow(inv, s - 1)  # 0, not inf * 0, at x = +inf
    inv_s = inv_s1 * inv
    tail = inv_s1 / (s - 1) + inv_s * (0.5 + inv * _horner(_em_coeffs(s), inv * inv))
    return acc + tail


def _ipow(r, s: int):
    """r ** s for a positive int s by repeated squaring (much faster than the generic pow)."""
    out = None
    base = r
    while s:
        if s & 1:
            out = base if out is None else out * base
        s >>= 1
        if s:
            base = base * base
    return out


@functools.cache
def _cot_derivative_poly(n: int) -> list:
    """Coefficients (in c) of P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)).

    P_0 = c and P_{k+1} = -(1 + c^2) P_k'(c), since d/dx cot(pi x) = -pi (1 + cot^2(pi x)).
    """
    p = [0, 1]
    for _ in range(n):
        d = [i * p[i] for i in range(1, len(p))] or [0]
        nxt = [0] * (len(d) + 2)
        for i, c in enumerate(d):
            nxt[i] -= c
            nxt[i + 2] -= c
        p = nxt
    return [float(c) for c in p]


def _factorial_f(n: int) -> float:
    return float(math.factorial(n)) if n <= 170 else math.inf


def _polygamma_pos(x, n):
    sign = 1.0 if n % 2 else -1.0
    return (sign * _factorial_f(n)) * _hurwitz_zeta(x, n + 1)


def _polygamma_neg(x, n):
    """psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi^(n+1) P_n(cot(pi x)) for x <= 0."""
    xp = _xp(x)
    r = _reduce(x)
    cot = _pi_cot_pi(r) / _PI
    refl = _PI ** (n + 1) * _horner(_cot_derivative_poly(n), cot)
    out = (1.0 if n % 2 == 0 else -1.0) * _polygamma_pos(1.0 - x, n) - refl
    pole = (1.0 if n % 2 else -1.0) * xp.inf
    return xp.where((r == 0) | xp.isinf(x), pole, out)


def _polygamma_arr(x, n: int):
    if n == 0:
        return _digamma_arr(x)
    xp = _xp(x)
    out = xp.full_like(x, xp.nan)
    with np.errstate(all="ignore"):
        _fill(out, x > 0, x, lambda v: _polygamma_pos(v, n))
        _fill(out, x <= 0, x, lambda v: _polygamma_neg(v, n))
    return out


# ====================================================================== erf / erfinv

_ERF_SPLIT = 2.0
_ERF_TAYLOR = [_TWO_OVER_SQRT_PI * float(Fraction((-1) ** k, math.factorial(k) * (2 * k + 1)))
               for k in range(42)]
_ERFC_CF_DEPTH = 50  # enough for 1e-16 relative from x = 2 on (Laplace's continued fraction)


def _erf_small(x):
    """erf(x) = 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)) for |x| <= 2."""
    return x * _horner(_ERF_TAYLOR, x * x)


def _erfc_large(x):
    """erfc(x) for x >= 2 by the continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x+...
    evaluated bottom-up at a fixed depth."""
    xp = _xp(x)
    t = x.copy()
    for k in range(_ERFC_CF_DEPTH, 0, -1):
        t = x + (0.5 * k) / t
    return xp.exp(-x * x) / (math.sqrt(math.pi) * t)


def _erf_arr(x):
    xp = _xp(x)
    out = xp.full_like(x, xp.nan)
    a = xp.abs(x)
    with np.errstate(all="ignore"):
        _fill(out, a <= _ERF_SPLIT, x, _erf_small)
        _fill(out, a > _ERF_SPLIT, x, lambda v: xp.sign(v) * (1.0 - _erfc_large(xp.abs(v))))
    return out


@functools.cache
def _erfinv_series() -> list:
    """Maclaurin coefficients of erfinv in w = sqrt(pi) y / 2 (odd powers, as a series in w^2):
    erfinv = sum c_k / (2k+1) w^(2k+1), c_0 = 1, c_k = sum_m c_m c_{k-1-m} / ((m+1)(2m+1))."""
    c = [Fraction(1)]
    for k in range(1, 24):
        c.append(sum(c[m] * c[k - 1 - m] / ((m + 1) * (2 * m + 1)) for m in range(k)))
    return [float(ck / (2 * k + 1)) for k, ck in enumerate(c)]


_ERFINV_TAIL = 0.9  # the Maclaurin guess is good to ~1e-3 up to here, the asymptotic one beyond


def _erfinv_guess(a, q):
    """A starting point for |y| = a (q = 1 - a): the series centrally, asymptotics in the tails."""
    xp = _xp(a)
    w = _SQRT_PI_OVER_2 * a
    central = w * _horner(_erfinv_series(), w * w)
    # tails: erfc(x) ~ exp(-x^2) / (x sqrt(pi)) (1 - 1/(2x^2)), solved by fixed-point iteration
    tail = a > _ERFINV_TAIL
    lq = -xp.log(xp.where(tail, q, 0.1))
    t = xp.sqrt(lq)
    for _ in range(3):
        t = xp.sqrt(lq - xp.log(t * math.sqrt(math.pi)) + xp.log1p(-0.5 / (t * t)))
    return xp.where(tail, t, central)


def _erfinv_arr(y):
    xp = _xp(y)
    with np.errstate(all="ignore"):
        a = xp.abs(y)
        q = 1.0 - a  # exact for a in [1/2, 1]: the tails keep full relative precision
        ok = a < 1.0
        a_ok = xp.where(ok, a, 0.0)
        q_ok = xp.where(ok, q, 1.0)
        x = _erfinv_guess(a_ok, q_ok)
        # the guess is within ~10%: three cubically convergent Halley steps reach 1 ulp
        big = x > _ERF_SPLIT
        small = ~big
        for _ in range(3):
            # residual erf(x) - a, computed as q - erfc(x) where erfc is small
            res = xp.empty_like(x)
            _fill(res, small, x, _erf_small)
            res[small] -= a_ok[small]
            _fill(res, big, x, _erfc_large)
            res[big] = q_ok[big] - res[big]
            delta = res * _SQRT_PI_OVER_2 * xp.exp(x * x)
            x = x - delta / (1.0 + x * delta)  # Halley: erf''/erf' = -2x
        x = xp.where(a == 1.0, xp.inf, x)
        x = xp.where(a > 1.0, xp.nan, x)
        return xp.where(xp.isnan(y), xp.nan, xp.copysign(x, y))


# ====================================================================== Bessel I_n

_BESSEL_SPLIT = 30.0
_HANKEL_TERMS = 26


@functools.cache
def _bessel_series_coeffs(n: int) -> list:
    """1 / (k! (k+n)! 2^n): I_n(x) / x^n = sum_k c_k (x^2/4)^k (each correctly rounded)."""
    return [1 / (math.factorial(k) * math.factorial(k + n) * 2 ** n)
            for k in range(_series_terms(_BESSEL_SPLIT))]


@functools.cache
def _hankel_coeffs(nu: int) -> list:
    """(-1)^k a_k(nu), a_k = prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! 8^k): the expansion
    I_nu(x) ~ exp(x) / sqrt(2 pi x) sum_k (-1)^k a_k(nu) x^-k."""
    out = []
    for k in range(_HANKEL_TERMS):
        num = math.prod(4 * nu * nu - (2 * j - 1) ** 2 for j in range(1, k + 1))
        out.append(float(Fraction((-1) ** k * num, math.factorial(k) * 8 ** k)))
    return out


def _series_terms(amax: float) -> int:
    # terms of sum (x^2/4)^k / (k!)^2 peak at k ~ x/2; 1e-17 of the sum is reached by ~1.4 x + 14
    return int(1.4 * amax) + 14


def _bessel_small(a, n, scaled, div):
    """I_n(a)/a^n (I_n(a) when not ``div``; times exp(-a) when scaled) for 0 <= a <= 30, by the
    power series."""
    xp = _xp(a)
    terms = _series_terms(float(a.max()))
    out = _horner(_bessel_series_coeffs(n)[:terms], 0.25 * a * a)
    if not div:
        out *= a ** n
    return out * xp.exp(-a) if scaled else out


def _bessel_large(a, n, scaled, div):
    """I_n(a)/a^n (I_n(a) when not ``div``; times exp(-a) when scaled) for a > 30: Hankel's
    expansion for I_0 and I_1, then the recurrence I_{m+1} = I_{m-1} - (2m/a) I_m (stable while m
    is far below a)."""
    xp = _xp(a)
    inv = 1.0 / a
    pre = 1.0 / xp.sqrt(2.0 * _PI * a)
    i_prev = pre * _horner(_hankel_coeffs(0), inv)
    i_cur = pre * _horner(_hankel_coeffs(1), inv)
    if n == 0:
        res = i_prev
    else:
        for m in range(1, n):
            i_prev, i_cur = i_cur, i_prev - (2.0 * m) * inv * i_cur
        res = i_cur
        for _ in range(n if div else 0):
            res = res * inv
    if scaled:
        return res
    # exp(a) overflows to inf (as in Paddle) past ~709.78; the product stays finite before that
    return res * xp.exp(a)


def _bessel_arr(x, n: int, scaled: bool, div: bool = True):
    """K_n(x) = I_n(x) / x^n (an even function), times exp(-|x|) when ``scaled``.

    With ``div=False`` it is I_n(x) itself (times exp(-|x|)), computed without the division, so
    that i1e(x) ~ 1/sqrt(2 pi x) does not underflow through K_1 for huge x.
    """
    xp = _xp(x)
    a = xp.abs(x)
    out = xp.full_like(a, xp.nan)
    with np.errstate(all="ignore"):
        _fill(out, a <= _BESSEL_SPLIT, a, lambda v: _bessel_small(v, n, scaled, div))
        _fill(out, a > _BESSEL_SPLIT, a, lambda v: _bessel_large(v, n, scaled, div))
        out = xp.where(xp.isinf(a), 0.0 if scaled else xp.inf, out)
        if not div and n % 2:
            out = xp.copysign(1.0, x) * out  # I_n(-x) = (-1)^n I_n(x)
    return out


def _sign_nonneg(x):
    """copysign(1, x): the sign of |x|'s slope in the scaled Bessel grads, +-1 at +-0 (Paddle)."""
    return _xp(x).copysign(1.0, x)


# ====================================================================== kernels

def _f64(x):
    return x if x.dtype == np.float64 else x.astype(np.float64)


def _back(v, like):
    return v if v.dtype == like.dtype else v.astype(like.dtype)


def _unary_kernel(name, value, deriv, uses_out=False):
    """Kernel ``out = value(x)``, computed in float64 and rounded to x's dtype, with the one
    gradient rule ``dx = g * deriv(M, x, out)`` (``deriv`` is written over the rule namespace;
    derivatives that are special functions themselves go through their kernels with ``M.op``,
    so they too are computed in float64)."""

    def grad(M, x, out, g):
        with np.errstate(all="ignore"):  # inf - inf at x = +-inf gives NaN, as in Paddle
            return (g * deriv(M, x, out),)

    @op(name, saves=() if uses_out else (0,), uses_out=uses_out, grad=grad)
    def kernel(x):
        return _back(value(_f64(x)), x), GRAD

    kernel.__name__ = "_" + name
    return kernel


def _sign(M, x):
    """copysign(1, x) as a constant of the rule namespace (see :func:`_sign_nonneg`)."""
    xd = M.value(x)
    return M.const(_sign_nonneg(xd).astype(xd.dtype, copy=False))


def _at_inf_zero(M, x, d):
    """``d`` with 0 where x is infinite: scaled Bessel slopes vanish at +-inf, where
    x * K(x) would read inf * 0."""
    xd = M.value(x)
    return M.select(~_xp(xd).isinf(xd), d)


@op("polygamma", saves=(0,),
    grad=lambda M, x, out, g, n: (g * M.op(_polygamma_k, x, n=n + 1),))
def _polygamma_k(x, n):
    return _back(_polygamma_arr(_f64(x), n), x), GRAD


def _bessel_grad(M, x, out, g, n, scaled):
    with np.errstate(all="ignore"):
        d = x * M.op(_bessel_k, x, n=n + 1, scaled=scaled)
        if scaled:
            d = _at_inf_zero(M, x, d - _sign(M, x) * out)
    return (g * d,)


@op("bessel_i_scaled", uses_out=True, grad=_bessel_grad)
def _bessel_k(x, n, scaled):
    """Private differentiable op K_n(x) = I_n(x)/x^n (times exp(-|x|)): the gradient tower of
    the public Bessel functions. dK_n/dx = x K_{n+1} (minus sign(x) K_n when scaled)."""
    return _back(_bessel_arr(_f64(x), n, scaled), x), GRAD


_lgamma_k = _unary_kernel("lgamma", _lgamma_arr, lambda M, x, o: M.op(_digamma_k, x))
_digamma_k = _unary_kernel("digamma", _digamma_arr,
                           lambda M, x, o: M.op(_polygamma_k, x, n=1))
_erf_k = _unary_kernel("erf", _erf_arr, lambda M, x, o: _TWO_OVER_SQRT_PI * M.exp(-(x * x)))
_erfinv_k = _unary_kernel("erfinv", _erfinv_arr,
                          lambda M, x, o: _SQRT_PI_OVER_2 * M.exp(o * o), uses_out=True)
_i0_k = _unary_kernel("i0", lambda x: _bessel_arr(x, 0, False), lambda M, x, o: M.op(_i1_k, x))
# d i0e = i1e - sign(x) i0e; d i1 = i0 - I1(x)/x; d i1e = i0e - I1e(x)/x - sign(x) i1e
_i0e_k = _unary_kernel(
    "i0e", lambda x: _bessel_arr(x, 0, True),
    lambda M, x, o: _at_inf_zero(M, x, M.op(_i1e_k, x) - _sign(M, x) * o), uses_out=True)
_i1_k = _unary_kernel(
    "i1", lambda x: _bessel_arr(x, 1, False, div=False),
    lambda M, x, o: M.op(_i0_k, x) - M.op(_bessel_k, x, n=1, scaled=False))
_i1e_k = _unary_kernel(
    "i1e", lambda x: _bessel_arr(x, 1, True, div=False),
    lambda M, x, o: _at_inf_zero(M, x, M.op(_i0e_k, x) - M.op(_bessel_k, x, n=1, scaled=True)
                                   - _sign(M, x) * o), uses_out=True)


def _mvlgamma_offsets(p, dtype):
    """Offsets -(p-1)/2, ..., -1/2, 0 added to x in multigammaln (as Paddle, also for float p)."""
    return np.arange(-(p - 1) / 2.0, 0.5, 0.5, dtype=np.float64)


def _multigammaln_grad(M, x, out, g, p):
    total = None
    for off in _mvlgamma_offsets(p, np.float64).tolist():
        term = M.op(_digamma_k, x + off)
        total = term if total is None else total + term
    return (g * total,)


@op("multigammaln", saves=(0,), grad=_multigammaln_grad)
def _multigammaln_k(x, p):
    xp = _xp(x)
    x64 = _f64(x)
    offs = xp.asarray(_mvlgamma_offsets(p, x64.dtype))
    const = 0.25 * p * (p - 1) * _LOG_PI
    return _back(_lgamma_arr(x64[..., None] + offs).sum(axis=-1) + const, x), GRAD


# ====================================================================== public API

def _inplace_arg(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: argument 'x' must be a Tensor, got {type(x).__name__}")
    if not _dt.is_inexact_np(x._data.dtype) or x._data.dtype.kind == "c":
        raise TypeError(f"{op}: the inplace op needs a real floating-point Tensor to write into, "
                        f"but x has dtype {x.dtype.name}; use the out-of-place op instead")
    return x


def _order_arg(n, op):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{op}: the order n must be an int, but received {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise ValueError(f"{op}: the order n must be greater than or equal to 0, but received "
                         f"n = {n}")
    return n


def _p_arg(p, op):
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{op}: p must be a number (usually a positive int), but received "
                        f"{type(p).__name__}")
    if not p >= 1:
        raise ValueError(f"{op}: p must be greater than or equal to 1, but received p = {p}")
    return int(p) if float(p).is_integer() else float(p)


def lgamma(x, name=None) -> Tensor:
    """Elementwise log of the absolute value of the gamma function, ``log|Gamma(x)|``.

    Poles at 0, -1, -2, ... give +inf.

    Args:
        x (Tensor): input (float16/32/64; integer inputs are computed in the default float dtype).
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.lgamma(paddle.to_tensor([0.5, 1.0, 3.0]))  # [0.5724, 0., 0.6931]
    """
    return apply(_lgamma_k, float_arg(x, "lgamma", lift=True))


def lgamma_(x, name=None) -> Tensor:
    """Inplace :func:`lgamma`; returns x."""
    return apply_(_lgamma_k, _inplace_arg(x, "lgamma_"))


def digamma(x, name=None) -> Tensor:
    """Elementwise digamma function, the derivative of ``lgamma``.

    Poles at 0, -1, -2, ... give NaN (as Paddle).

    Args:
        x (Tensor): input (float16/32/64; integer inputs are computed in the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.digamma(paddle.to_tensor([1.0]))  # [-0.5772] (minus Euler's constant)
    """
    return apply(_digamma_k, float_arg(x, "digamma", lift=True))


def digamma_(x, name=None) -> Tensor:
    """Inplace :func:`digamma`; returns x."""
    return apply_(_digamma_k, _inplace_arg(x, "digamma_"))


def polygamma(x, n, name=None) -> Tensor:
    """Elementwise n-th derivative of the digamma function (``n = 0`` is digamma itself).

    Args:
        x (Tensor): input (float16/32/64; integer inputs are computed in the default float dtype).
        n (int): the order, ``n >= 0``.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Raises:
        TypeError: n is not an int. ValueError: n is negative.

    Example:
        >>> paddle.polygamma(paddle.to_tensor([1.0]), 1)  # [1.6449] = pi^2 / 6
    """
    n = _order_arg(n, "polygamma")
    return apply(_polygamma_k, float_arg(x, "polygamma", lift=True), n=n)


def polygamma_(x, n, name=None) -> Tensor:
    """Inplace :func:`polygamma`; returns x."""
    n = _order_arg(n, "polygamma_")
    return apply_(_polygamma_k, _inplace_arg(x, "polygamma_"), n=n)


def multigammaln(x, p, name=None) -> Tensor:
    """Elementwise log of the multivariate gamma function of dimension p.

    ``multigammaln(x, p) = p (p-1) / 4 log(pi) + sum_{j=0}^{p-1} lgamma(x - j/2)``; finite for
    ``x > (p - 1) / 2``.

    Args:
        x (Tensor): input (float16/32/64; integer inputs are computed in the default float dtype).
        p (int): the dimension, ``p >= 1``.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.multigammaln(paddle.to_tensor([2.5]), 2)  # [1.1259]
    """
    p = _p_arg(p, "multigammaln")
    return apply(_multigammaln_k, float_arg(x, "multigammaln", lift=True), p=p)


def multigammaln_(x, p, name=None) -> Tensor:
    """Inplace :func:`multigammaln`; returns x."""
    p = _p_arg(p, "multigammaln_")
    return apply_(_multigammaln_k, _inplace_arg(x, "multigammaln_"), p=p)


def erf(x, name=None) -> Tensor:
    """Elementwise error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Args:
        x (Tensor): input (float16/bfloat16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x, values in [-1, 1].

    Example:
        >>> paddle.erf(paddle.to_tensor([0.0, 1.0]))  # [0., 0.8427]
    """
    return apply(_erf_k, float_arg(x, "erf", lift=True))


def erf_(x, name=None) -> Tensor:
    """Inplace :func:`erf`; returns x."""
    return apply_(_erf_k, _inplace_arg(x, "erf_"))


def erfinv(x, name=None) -> Tensor:
    """Elementwise inverse error function: ``erf(erfinv(x)) = x`` for x in [-1, 1].

    ``erfinv(+-1) = +-inf``; inputs outside [-1, 1] give NaN.

    Args:
        x (Tensor): input (float16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.erfinv(paddle.to_tensor([0.0, 0.5]))  # [0., 0.4769]
    """
    return apply(_erfinv_k, float_arg(x, "erfinv", lift=True))


def erfinv_(x, name=None) -> Tensor:
    """Inplace :func:`erfinv` (a Tensor method in Paddle); returns x."""
    return apply_(_erfinv_k, _inplace_arg(x, "erfinv_"))


def i0(x, name=None) -> Tensor:
    """Elementwise modified Bessel function of the first kind of order 0.

    Args:
        x (Tensor): input (float16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.i0(paddle.to_tensor([0.0, 1.0]))  # [1., 1.2661]
    """
    return apply(_i0_k, float_arg(x, "i0", lift=True))


def i0_(x, name=None) -> Tensor:
    """Inplace :func:`i0`; returns x."""
    return apply_(_i0_k, _inplace_arg(x, "i0_"))


def i0e(x, name=None) -> Tensor:
    """Elementwise exponentially scaled modified Bessel function of order 0,
    ``i0(x) * exp(-|x|)`` (finite for every finite x).

    Args:
        x (Tensor): input (float16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.i0e(paddle.to_tensor([0.0, 1.0]))  # [1., 0.4658]
    """
    return apply(_i0e_k, float_arg(x, "i0e", lift=True))


def i1(x, name=None) -> Tensor:
    """Elementwise modified Bessel function of the first kind of order 1.

    Args:
        x (Tensor): input (float16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.i1(paddle.to_tensor([0.0, 1.0]))  # [0., 0.5652]
    """
    return apply(_i1_k, float_arg(x, "i1", lift=True))


def i1e(x, name=None) -> Tensor:
    """Elementwise exponentially scaled modified Bessel function of order 1,
    ``i1(x) * exp(-|x|)``.

    Args:
        x (Tensor): input (float16/32/64; integer inputs give the default float dtype).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.i1e(paddle.to_tensor([0.0, 1.0]))  # [0., 0.2079]
    """
    return apply(_i1e_k, float_arg(x, "i1e", lift=True))


API = ["digamma", "digamma_", "erf", "erf_", "erfinv", "i0", "i0_", "i0e", "i1", "i1e", "lgamma",
       "lgamma_", "multigammaln", "multigammaln_", "polygamma", "polygamma_"]
# Paddle 2.6: erf_ is top-level only, erfinv_ is a Tensor method only
METHODS = ["digamma", "digamma_", "erf", "erfinv", "erfinv_", "i0", "i0_", "i0e", "i1", "i1e",
           "lgamma", "lgamma_", "multigammaln", "multigammaln_", "polygamma", "polygamma_"]
