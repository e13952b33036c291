"""Compiled CPU kernels through numba, an optional extra (``pip install 'paddle_hl[numba]'``).

NumPy runs a kernel as one pass over memory per operation; a normalisation layer's forward and
backward take about a dozen such passes. With numba installed, the kernels here do the same
work in fewer passes, and the NumPy forms stay in use wherever numba is missing, switched off,
or cannot run. One module per family, each with its module-level kernels and the thin
wrappers the CPU backend (``backend/_numpy.py``) calls:

- :mod:`.norm`: batch norm's training forward and backward, optionally with ReLU/ReLU6;
- :mod:`.pool`: the 2-D max pool and its gradient;
- :mod:`.depthwise`: depthwise 2-D convolution, channels last and on stride phase planes;
- :mod:`.conv`: im2col/col2im in the batch-innermost layout, thin dense 2-D convolutions;
- :mod:`.optim`: the Adam/AdamW update;
- ``_planes`` (the phase-plane and wide-grid helpers they share) and ``_njit`` (numba's
  compiler settings).

This module is the only place that tries ``import numba``; the families are imported after it
succeeded, and no module outside ``backend/`` names numba or these modules: ops reach the
kernels through the backend contract (``backend.for_array(x).max_pool2d`` and so on, None
where they do not apply).

Switches and threads:

- ``PADDLE_HL_NUMBA=0`` switches the compiled kernels off (read once, by
  ``backend.settings``); :func:`set_enabled` switches them at run time.
- Threads: the kernels are compiled serial and release the GIL; large calls are split over
  channel ranges on the CPU thread pool (``backend._threads``), small ones run inline. numba's
  own thread pools are not used: its OpenMP layer keeps idle threads spinning after each
  kernel (halving the speed of the BLAS threads that run next), and waking its work-queue
  threads for each of a network's many small normalisations costs more than the kernels.
- The first use compiles the kernels (a few seconds) and caches the machine code on disk for
  later processes (each process compiles its own where no cache folder is writable); where
  numba cannot build them, the NumPy forms run and :func:`unavailable_reason` says why.

Kernels take C-contiguous float32 or float64 arrays; results agree with the NumPy forms to
rounding (sums are accumulated in another order, batch norm's and the depthwise weight
gradient's in float64), and Adam's, im2col/col2im's and the depthwise forward's exactly.
"""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np

from .. import settings

__all__ = []

# the family modules, in import order (the shared helpers first)
FAMILIES = ("_planes", "norm", "pool", "depthwise", "conv", "optim", "winograd")

_state = {"loaded": False, "error": None}


def set_enabled(flag: bool) -> None:
    """Use the compiled kernels (when numba is installed) or the NumPy forms (the setting
    ``backend.settings.set_numba``, public as ``paddle_hl.device.set_numba``)."""
    settings.set_numba(flag)


def enabled() -> bool:
    """Whether the compiled kernels are in use: numba importable and not switched off."""
    return settings.numba() and (_state["loaded"] or _load())


def unavailable_reason():
    """Why the compiled kernels are not in use, or None when they are."""
    if enabled():
        return None
    if _state["error"] is not None:
        return _state["error"]
    return f"switched off ({settings.NUMBA_ENV}=0 or paddle_hl.device.set_numba(False))"


def _build(cache=True):
    """Import (or, when imported before, re-run) the family modules, their kernels compiled
    lazily with numba's disk cache on or off; returns the modules."""
    from . import _njit  # noqa: PLC0415  (imports numba)

    _njit.CACHE = cache
    mods = []
    for name in FAMILIES:
        full = f"{__name__}.{name}"
        mod = sys.modules.get(full)
        mods.append(importlib.reload(mod) if mod is not None else importlib.import_module(full))
    return mods


def _load() -> bool:
    """Import numba and the kernels once; False (the reason kept) where they cannot run."""
    if _state["loaded"] or _state["error"] is not None:
        return _state["loaded"]
    try:
        import numba  # noqa: F401, PLC0415  (the optional extra)
    except ImportError as e:
        _state["error"] = f"numba is not installed ({e}); pip install 'paddle_hl[numba]'"
        return False
    try:
        _build_and_warm_up()
    except Exception as e:  # a numba or LLVM that cannot build these kernels here
        _state["error"] = f"numba could not compile the kernels ({type(e).__name__}: {e})"
        return False
    _state["loaded"] = True
    return True


def _build_and_warm_up():
    try:
        mods = _build()
    except RuntimeError as e:
        if "cannot cache" not in str(e):
            raise
        mods = _build(cache=False)  # no writable cache folder: compile per process
    dirs = _cache_dirs(mods)
    _discard_stale(dirs)
    removed = _discard_cache(dirs)
    try:
        _warm_up()  # compile (or load from the cache) now, where a failure can fall back
    except Exception:
        if not dirs:
            raise
        # an entry that reads as a whole pickle yet does not load: drop the kernels' whole
        # cache and compile once more before giving up
        removed += _discard_cache(dirs, everything=True)
        _build()
        _warm_up()
    if removed:
        import warnings  # noqa: PLC0415

        warnings.warn(f"paddle_hl: discarded {removed} corrupt cache entries in "
                      f"{', '.join(sorted(dirs))} (numba's cache of the compiled kernels); "
                      "the kernels were compiled again", RuntimeWarning, stacklevel=4)


# numba's disk cache: one folder for this package's source folder -- NUMBA_CACHE_DIR/<...> when
# that variable is set, else __pycache__ beside these files, else a per-user cache folder when
# that is not writable (numba's own choice). For each kernel, an index file
# "<module>.<kernel>-<line>.pyXY.nbi" (two pickles: numba's version, then the source stamp and
# the signatures) and one data file per signature ("....<n>.nbc", one pickle of the machine
# code). numba unpickles them as they are, so the folder has the trust of this package's own
# __pycache__. An empty or garbled file (a full disk, a killed process, a bad copy) made every
# later process fail to load the kernels, so the NumPy forms ran for good; such entries are
# removed before the kernels load, and numba compiles and caches those kernels again.
_CACHE_PREFIXES = tuple(f"{name}." for name in FAMILIES)


def _cache_dirs(mods) -> set:
    """The cache folders of the compiled kernels of ``mods`` (empty when not cached)."""
    dirs = set()
    for mod in mods:
        for d in vars(mod).values():
            path = getattr(getattr(d, "_cache", None), "cache_path", None)
            if isinstance(path, str):
                dirs.add(path)
    return dirs


def _entries(dirs):
    """``(path, name)`` of this package's cache entries in ``dirs``."""
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name.startswith(_CACHE_PREFIXES) and name.endswith((".nbi", ".nbc")):
                yield os.path.join(d, name), name


def _whole_pickles(data: bytes, count: int) -> bool:
    """``data`` is ``count`` complete pickles back to back (reads opcodes, builds nothing)."""
    import io  # noqa: PLC0415
    import pickletools  # noqa: PLC0415

    f = io.BytesIO(data)
    try:
        for _ in range(count):
            for _ in pickletools.genops(f):
                pass
    except ValueError:  # ran out of data before STOP, or an unknown opcode
        return False
    return f.tell() == len(data)


def _discard_cache(dirs, everything=False) -> int:
    """Remove this package's cache entries in ``dirs`` that are not whole pickles (all of them
    with ``everything``); returns how many were removed."""
    removed = 0
    for path, name in _entries(dirs):
        try:
            with open(path, "rb") as f:
                data = f.read()
            if everything or not _whole_pickles(data, 2 if name.endswith(".nbi") else 1):
                os.remove(path)
                removed += 1
        except OSError:  # removed by another process meanwhile, or not ours to remove
            continue
    return removed


def _discard_stale(dirs) -> int:
    """Remove cache entries older than the newest source file of this package; returns how
    many. numba checks a kernel's entry against its own file only, and the kernels inline
    helpers from ``_planes``: an edit there must not leave the old machine code in use."""
    here = os.path.dirname(__file__)
    try:
        newest = max(os.stat(os.path.join(here, f"{name}.py")).st_mtime
                     for name in (*FAMILIES, "_njit"))
    except OSError:  # sources not on disk (a zip import): numba's own stamps apply
        return 0
    removed = 0
    for path, _ in _entries(dirs):
        try:
            if os.stat(path).st_mtime < newest:
                os.remove(path)
                removed += 1
        except OSError:
            continue
    return removed


def _warm_up():
    """Call the kernels every network uses on tiny arrays: they compile (or load from the
    cache) here, where a failure falls back to the NumPy forms."""
    from . import depthwise, norm, optim, pool  # noqa: PLC0415

    x = np.ones((2, 1, 3), np.float32)
    c = np.ones(1, np.float32)
    out, dx = np.empty_like(x), np.empty_like(x)
    mean, var, inv, gw, gb = (np.empty(1, np.float32) for _ in range(5))
    mask = np.empty(x.shape, np.bool_)
    for act in (0, 1, 2):
        norm.bn_forward(x, c, c, np.float32(1e-5), act, np.float32(6), out, mask, mean, var,
                        inv, np.zeros((3, 1), np.float32), 0, 1)
        norm.bn_backward(x, x, c, mean, inv, act, mask, dx, gw, gb, 0, 1)
    x4, w2 = np.ones((1, 2, 2, 1), np.float32), np.ones((4, 1), np.float32)
    o4 = np.empty((1, 1, 1, 1), np.float32)
    pads = ((0, 0), (0, 0))
    for s in (1, 2):  # both forms of a row's taps
        depthwise.cl_forward(x4, w2, (2, 2), (s, s), (1, 1), pads, o4)
        depthwise.cl_input_grad(o4, w2, (2, 2), (s, s), (1, 1), pads, x4.copy())
        depthwise.cl_weight_grad(x4, o4, (2, 2), (s, s), (1, 1), pads)
    for dt in (np.float32, np.float64):
        one = np.ones(2, dt)
        optim.adam(one.copy(), one, one.copy(), one.copy(), *(dt(0.5),) * 7)
    g = np.ones((2, 1, 1), np.float32)
    pool.pool_max_grad(g, np.zeros((2, 1, 1), np.int8), 1, 2, 1, 1,
                       np.zeros((2, 2, 2), np.float32), 0, 2)
