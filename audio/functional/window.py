"""Window functions for spectral analysis (``paddle.audio.functional.get_window``).

Every window is computed in float64 with NumPy from its closed form and then cast, so the values
agree with SciPy's ``scipy.signal.get_window`` to float64 rounding. A "periodic" window
(``fftbins=True``, the one to use before an FFT) is the symmetric window of length ``M + 1``
without its last sample.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import paddle_hl as paddle

__all__ = []  # implementation module: the package exports the names


class _ArgError(ValueError, AssertionError):
    """A bad argument (Paddle asserts in some of these places; this is also a ValueError)."""


def _general_cosine(m: int, coeffs) -> np.ndarray:
    fac = np.linspace(-np.pi, np.pi, m)
    w = np.zeros(m)
    for k, a in enumerate(coeffs):
        w += a * np.cos(k * fac)
    return w


def _hann(m):
    return _general_cosine(m, (0.5, 0.5))


def _hamming(m):
    return _general_cosine(m, (0.54, 0.46))


def _blackman(m):
    return _general_cosine(m, (0.42, 0.50, 0.08))


def _triang(m):
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        w = (2 * n - 1.0) / m
        return np.concatenate([w, w[::-1]])
    w = 2 * n / (m + 1.0)
    return np.concatenate([w, w[-2::-1]])


def _bohman(m):
    fac = np.abs(np.linspace(-1, 1, m)[1:-1])
    w = (1 - fac) * np.cos(np.pi * fac) + np.sin(np.pi * fac) / np.pi
    return np.concatenate([[0.0], w, [0.0]])


def _cosine(m):
    return np.sin(np.pi / m * (np.arange(m) + 0.5))


def _tukey(m, alpha=0.5):
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1.0:
        return _hann(m)
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2.0))
    n1, n2, n3 = n[:width + 1], n[width + 1:m - width - 1], n[m - width - 1:]
    w1 = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n1 / alpha / (m - 1))))
    w3 = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n3 / alpha / (m - 1))))
    return np.concatenate([w1, np.ones(n2.shape), w3])


def _gaussian(m, std):
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-(n ** 2) / (2 * std * std))


def _general_gaussian(m, p, sig):
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-0.5 * np.abs(n / sig) ** (2 * p))


def _exponential(m, center=None, tau=1.0):
    if center is None:
        center = (m - 1) / 2
    return np.exp(-np.abs(np.arange(m) - center) / tau)


def _taylor(m, nbar=4, sll=30, norm=True):
    # Taylor's weighting: nbar - 1 cosine terms whose coefficients place the first nbar - 1
    # sidelobes at -sll dB
    b = 10 ** (sll / 20)
    a = math.acosh(b) / np.pi
    s2 = nbar ** 2 / (a ** 2 + (nbar - 0.5) ** 2)
    ma = np.arange(1, nbar)
    fm = np.empty(nbar - 1)
    for i, mi in enumerate(ma):
        others = np.delete(ma, i)
        num = (-1) ** (mi + 1) * np.prod(1 - mi ** 2 / s2 / (a ** 2 + (ma - 0.5) ** 2))
        den = 2 * np.prod(1 - mi ** 2 / others ** 2)
        fm[i] = num / den

    def weight(n):
        return 1 + 2 * np.dot(fm, np.cos(2 * np.pi * ma[:, None] * (n - m / 2.0 + 0.5) / m))

    w = weight(np.arange(m))
    if norm:
        w = w / weight((m - 1) / 2)
    return w


# name -> (function, number of required parameters after M)
_WINDOWS = {
    "hamming": (_hamming, 0),
    "hann": (_hann, 0),
    "gaussian": (_gaussian, 1),
    "general_gaussian": (_general_gaussian, 2),
    "exponential": (_exponential, 0),
    "triang": (_triang, 0),
    "bohman": (_bohman, 0),
    "blackman": (_blackman, 0),
    "cosine": (_cosine, 0),
    "tukey": (_tukey, 0),
    "taylor": (_taylor, 0),
}
# windows that make no sense without their shape parameter, even where it has a default
_NEED_PARAMS = ("gaussian", "exponential", "general_gaussian")


def _window_array(window, win_length: int, fftbins: bool) -> np.ndarray:
    """The float64 window values (see :func:`get_window`)."""
    if isinstance(window, tuple):
        if not window or not isinstance(window[0], str):
            raise _ArgError(f"get_window: a tuple window must be (name, *params), got {window!r}")
        name, params = window[0], tuple(window[1:])
    elif isinstance(window, str):
        name, params = window, ()
        if name in _NEED_PARAMS:
            raise _ArgError(f"get_window: the '{name}' window needs one or more parameters -- "
                            f"pass a tuple, e.g. ('{name}', ...)")
    else:
        raise TypeError(f"get_window: window must be a str or a tuple (name, *params), got "
                        f"{type(window).__name__}")
    if name not in _WINDOWS:
        raise _ArgError(f"get_window: unknown window type {name!r}; supported: "
                        f"{sorted(_WINDOWS)}")
    fn, n_required = _WINDOWS[name]
    if len(params) < n_required:
        raise _ArgError(f"get_window: the '{name}' window needs {n_required} parameter(s), got "
                        f"{len(params)}")
    if not isinstance(win_length, numbers.Integral) or isinstance(win_length, bool):
        raise TypeError(f"get_window: win_length must be an int, got "
                        f"{type(win_length).__name__}")
    m = int(win_length)
    if m < 0:
        raise _ArgError(f"get_window: win_length must be non-negative, got {m}")
    sym = not fftbins
    if name == "exponential" and sym and params and params[0] is not None:
        raise _ArgError("get_window: the symmetric (fftbins=False) 'exponential' window is "
                        "centred by definition; its center parameter must be None")
    if m <= 1:
        return np.ones(m)
    n = m if sym else m + 1
    try:
        w = fn(n, *params)
    except TypeError as e:
        raise TypeError(f"get_window: bad parameters {params!r} for the '{name}' window "
                        f"({e})") from None
    return np.asarray(w, dtype=np.float64)[:m]


def get_window(window, win_length: int, fftbins: bool = True,
               dtype: str = "float64") -> paddle.Tensor:
    """Return a window of a given type and length.

    Args:
        window (str | tuple): The window name, or a tuple ``(name, *params)`` for windows with
            parameters. Supported: 'hamming', 'hann', 'gaussian' (std), 'general_gaussian'
            (p, sig), 'exponential' (center, tau), 'triang', 'bohman', 'blackman', 'cosine',
            'tukey' (alpha=0.5), 'taylor' (nbar=4, sll=30, norm=True).
        win_length (int): Number of samples.
        fftbins (bool, optional): True gives the periodic window (for spectral analysis),
            False the symmetric one (for filter design). Default: True.
        dtype (str, optional): Data type of the result. Default: 'float64'.

    Returns:
        Tensor: The window, shape ``[win_length]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> w = paddle.audio.functional.get_window('hann', 8)
        >>> w.shape
        [8]
        >>> g = paddle.audio.functional.get_window(('gaussian', 2.0), 8, dtype='float32')
    """
    return paddle.to_tensor(_window_array(window, win_length, fftbins), dtype=dtype)
