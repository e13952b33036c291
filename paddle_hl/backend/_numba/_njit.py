"""numba's compiler settings for the kernels of this package (imported once numba is known to
be importable).

Each family module decorates its kernels with one of these at import. :data:`CACHE` is set by
the package before it imports the families: numba keeps the machine code in its disk cache
(False where no cache folder is writable; each process then compiles its own).
"""

from __future__ import annotations

import numba

__all__ = []

CACHE = True


def fast(fn):
    """Compile ``fn`` with reassociation and contraction, which let the per-channel sums
    vectorise; no assumption about NaN or inf is made, so they propagate as in the NumPy
    forms."""
    return numba.njit(cache=CACHE, nogil=True, fastmath={"reassoc", "contract"})(fn)


def exact(fn):
    """Compile ``fn`` without fastmath: each operation rounds as NumPy's passes do, and floats
    divide as NumPy does (no zero-divisor check, which would keep a loop from vectorising)."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy")(fn)


def inline_exact(fn):
    """:func:`exact`, inlined into its callers at numba's IR level: the caller's own float
    flags apply, and no call is paid per use."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy", inline="always")(fn)


def inline(fn):
    """Compile ``fn`` to be inlined into its callers at numba's IR level."""
    return numba.njit(cache=CACHE, nogil=True, inline="always")(fn)
