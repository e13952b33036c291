"""The global random state: one generator per device, ``paddle.seed`` and the rng-state API.

Every random op in paddle_hl draws through :func:`generator` (or the helpers built on it), so a
single ``paddle.seed(s)`` makes a whole program repeat exactly.

- The CPU generator is a NumPy ``Generator`` over PCG64. Its full state is a small dict, so
  ``get_rng_state`` / ``set_rng_state`` save and restore it exactly.
- Each GPU has its own *seed stream*, also a NumPy PCG64 generator. A draw on the GPU takes one
  64-bit number from that stream and reseeds the device's generator state (cuRAND) with it.
  The GPU numbers therefore depend only on the stream's state, which is what
  ``get_cuda_rng_state`` saves, and the heavy sampling still runs on the device.

Random ops index with 64-bit integers throughout (NumPy and CuPy both size arrays with int64),
so tensors beyond 2**31 elements are filled correctly.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from .. import backend
from . import place as _pl

__all__ = []

_DEFAULT_SEED = 34342423252  # any fixed value: a fresh process always starts from the same state


class GeneratorState:
    """A saved generator state, as returned in the list of :func:`get_rng_state`."""

    __slots__ = ("_seed", "_state")

    def __init__(self, seed: int, state: dict):
        self._seed = int(seed)
        self._state = copy.deepcopy(state)

    def current_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def __repr__(self):
        return f"GeneratorState(seed={self._seed})"


class Generator:
    """A random generator (PCG64). ``paddle.seed`` returns the CPU one.

    Args:
        seed (int, optional): initial seed; a fixed default when omitted.
    """

    def __init__(self, seed: int | None = None):
        self._seed = _DEFAULT_SEED
        self._np = None
        self.manual_seed(_DEFAULT_SEED if seed is None else seed)

    def manual_seed(self, seed) -> Generator:
        """Reseed with ``seed`` (a non-negative integer below 2**64); returns self."""
        seed = _check_seed(seed)
        self._seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Reseed from fresh OS entropy; returns the new seed."""
        new = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(new)
        return new

    def initial_seed(self) -> int:
        """The seed set last."""
        return self._seed

    def random(self) -> int:
        """One raw 64-bit random number (advances the state)."""
        return int(self._np.integers(0, 2 ** 63, dtype=np.int64))

    def get_state(self) -> GeneratorState:
        """A copy of the current state."""
        return GeneratorState(self._seed, self._np.bit_generator.state)

    def set_state(self, state: GeneratorState) -> None:
        """Restore a state from :meth:`get_state`."""
        if not isinstance(state, GeneratorState):
            raise TypeError(f"Generator.set_state: expected a GeneratorState, got "
                            f"{type(state).__name__}")
        self._seed = state._seed
        bg = np.random.PCG64()
        bg.state = copy.deepcopy(state._state)
        self._np = np.random.Generator(bg)


def _check_seed(seed) -> int:
    if isinstance(seed, (numbers.Integral, float, np.floating)):
        seed = int(seed)  # Paddle truncates a float seed
    else:
        raise TypeError(f"seed: expected an integer seed, got {type(seed).__name__}")
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"seed: the seed must be in [0, 2**64), got {seed}")
    return seed


_cpu = Generator()
_gpus: dict = {}      # device index -> Generator (the seed stream of that device)


def _gpu_generator(index: int) -> Generator:
    g = _gpus.get(index)
    if g is None:
        g = _gpus[index] = Generator((_cpu.initial_seed() + index) % 2 ** 64)
    return g


def default_cpu_generator() -> Generator:
    """The CPU generator (the one ``paddle.seed`` returns)."""
    return _cpu


def seed(seed) -> Generator:
    """Seed every generator (CPU and each GPU) so that random ops repeat.

    Args:
        seed (int): a non-negative integer below 2**64.

    Returns:
        Generator: the CPU generator.

    Example:
        >>> paddle.seed(102)
        >>> a = paddle.rand([2]); paddle.seed(102); b = paddle.rand([2])  # a == b
    """
    s = _check_seed(seed)
    _cpu.manual_seed(s)
    for idx, g in _gpus.items():
        g.manual_seed((s + idx) % 2 ** 64)
    # Devices not used yet are created lazily from the CPU seed (see _gpu_generator).
    return _cpu


def _gpu_indices():
    return list(range(backend.device_count())) if backend.gpu_available() else []


def get_cuda_rng_state() -> list:
    """The states of the GPU generators, one per visible GPU (empty without CuPy and a GPU)."""
    return [_gpu_generator(i).get_state() for i in _gpu_indices()]


def set_cuda_rng_state(state_list) -> None:
    """Restore GPU generator states saved by :func:`get_cuda_rng_state`."""
    state_list = list(state_list)
    idx = _gpu_indices()
    if len(state_list) != len(idx):
        raise ValueError(f"set_cuda_rng_state: got {len(state_list)} states for {len(idx)} "
                         "visible GPU(s)")
    for i, st in zip(idx, state_list):
        _gpu_generator(i).set_state(st)


def _device_kind(device):
    if device is None:
        return _pl.current_place().kind
    if isinstance(device, _pl.Place):
        return "gpu" if device.kind == "gpu" else "cpu"
    if isinstance(device, str):
        s = device.strip().lower()
        if s == "cpu":
            return "cpu"
        if s.startswith(("gpu", "cuda")):
            if not backend.gpu_available():
                raise ValueError(f"The device should not be {device!r}: {backend.gpu_error()}")
            return "gpu"
    raise ValueError(f"get_rng_state: unknown device {device!r}; expected 'cpu' or 'gpu'")


def get_rng_state(device=None) -> list:
    """The random state of the current (or given) device, as a list of GeneratorState.

    Args:
        device (str, optional): 'cpu' or 'gpu'; the current device when None.

    Returns:
        list: one state for the CPU, or one per GPU.
    """
    if _device_kind(device) == "gpu":
        return get_cuda_rng_state()
    return [_cpu.get_state()]


def set_rng_state(state_list, device=None) -> None:
    """Restore a state list from :func:`get_rng_state`.

    Args:
        state_list (list): the saved states.
        device (str, optional): 'cpu' or 'gpu'; the current device when None.
    """
    if _device_kind(device) == "gpu":
        set_cuda_rng_state(state_list)
        return
    state_list = list(state_list)
    if len(state_list) != 1:
        raise ValueError(f"set_rng_state: the CPU state list must hold exactly 1 state, got "
                         f"{len(state_list)}")
    _cpu.set_state(state_list[0])


# --------------------------------------------------------------------------- drawing numbers

def generator(place=None):
    """The object random ops draw from for ``place`` (the current device when None).

    On the CPU this is the global ``numpy.random.Generator``; on a GPU an object with the same
    method names (random, uniform, standard_normal, normal, integers, permutation, poisson,
    exponential, standard_cauchy, geometric, binomial, standard_gamma) producing GPU arrays
    (``seeded_draws`` of the GPU backend). Each call on a GPU consumes one number of that
    device's seed stream.
    """
    place = _pl.current_place() if place is None else place
    if place.kind != "gpu":
        return _cpu._np
    idx = place.index
    return backend.seeded_draws(_gpu_generator(idx).random(), "gpu", idx)


def generator_for(arr):
    """The draw object for the device holding ``arr``."""
    return generator(_pl.place_of(arr))


def local_generator(seed: int, place=None):
    """A private generator seeded with ``seed`` (ops with a per-call ``seed`` argument).

    It leaves the global state untouched, so the same seed gives the same numbers every time.
    """
    place = _pl.current_place() if place is None else place
    s = _check_seed(seed)
    if place.kind != "gpu":
        return np.random.Generator(np.random.PCG64(s))
    return backend.seeded_draws(s, "gpu", place.index, private=True)


_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))


def uniform_array(shape, dtype, low=0.0, high=1.0, place=None, gen=None):
    """An array of U[low, high) samples of ``dtype`` on ``place``.

    float32/float64 are drawn natively (no extra pass); other float dtypes are drawn in float32
    and cast.
    """
    g = gen if gen is not None else generator(place)
    dtype = np.dtype(dtype)
    out = g.random(tuple(shape), dtype=dtype if dtype in _NATIVE else np.float32)
    if low != 0.0 or high != 1.0:
        out *= high - low
        out += low
    return out.astype(dtype, copy=False)


def normal_array(shape, dtype, mean=0.0, std=1.0, place=None, gen=None):
    """An array of N(mean, std**2) samples of ``dtype`` on ``place``."""
    g = gen if gen is not None else generator(place)
    dtype = np.dtype(dtype)
    out = g.standard_normal(tuple(shape), dtype=dtype if dtype in _NATIVE else np.float32)
    if std != 1.0:
        out *= std
    if mean != 0.0:
        out += mean
    return out.astype(dtype, copy=False)


def randint_array(low, high, shape, dtype, place=None, gen=None):
    """An array of integers uniform in [low, high) on ``place``."""
    g = gen if gen is not None else generator(place)
    return g.integers(low, high, size=tuple(shape), dtype=np.int64).astype(dtype, copy=False)
