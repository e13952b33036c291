"""Semi-automatic parallelism in dygraph: process meshes, placements and distributed tensors.

How paddle_hl holds a distributed tensor (read this before relying on memory savings):

- A distributed tensor is an ordinary paddle Tensor (class :class:`DistTensor`, or
  :class:`DistParameter` for parameters) plus its :class:`ProcessMesh` and placements, kept in a
  side table keyed by the tensor's id (cleaned up when the tensor dies).
- With :class:`Replicate` and :class:`Shard` placements every rank of the mesh keeps the
  tensor's **global value** in memory, as Paddle's API hands every rank the full data; this rank's
  shard is ``x._local_value()``. Computations on a distributed tensor therefore run on the global
  value on every rank (their results are plain tensors): sharding here decides what each rank
  *owns* (what it updates in :func:`shard_optimizer`, what it writes in ``save_state_dict``), not
  how much each rank computes.
- With a :class:`Partial` placement the tensor holds this rank's *contribution*, in the global
  shape; the value is the reduction of the contributions over that mesh dimension.
  :func:`reshard` to :class:`Replicate` or :class:`Shard` all-reduces them.
- Optimizer states of sharded parameters under :func:`shard_optimizer` are the exception: they
  exist only as this rank's shard (real memory savings), held as distributed tensors whose
  data is the local shard (``_local_value()`` is the data itself).

Every communication goes through the collectives of :mod:`paddle_hl.distributed` on groups made
from the mesh. Every process of the job must call :func:`reshard` (and the functions that use
it) in the same order, as with any collective. In a job of one process a mesh may name ranks
that do not exist; every value is then computed locally.
"""

from __future__ import annotations

import enum
import weakref

import numpy as np

from .. import backend
from ..framework import state
from ..framework.parameter import Parameter
from ..framework.tensor import Tensor, _wrap
from . import collective as _coll

__all__ = []  # the public names are re-exported by paddle_hl.distributed


# ------------------------------------------------------------------ mesh


class ProcessMesh:
    """An N-dimensional arrangement of process ranks (Paddle's ``ProcessMesh``).

    Args:
        mesh (list | numpy.ndarray, optional): the ranks, nested as the mesh's shape.
        dim_names (list[str], optional): a name per mesh dimension (default ``d0, d1, ...``).
        shape (list[int], optional): with ``process_ids``, the shape instead of ``mesh``.
        process_ids (list[int], optional): with ``shape``, the ranks in row-major order.

    Examples:
        >>> import paddle_hl.distributed as dist
        >>> mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
        >>> mesh.shape, mesh.process_ids, mesh.get_dim_size("y")
        ([2, 2], [0, 1, 2, 3], 2)
    """

    def __init__(self, mesh=None, dim_names=None, shape=None, process_ids=None):
        if mesh is None:
            if shape is None or process_ids is None:
                raise ValueError("ProcessMesh: give mesh, or both shape and process_ids")
            arr = np.asarray(list(process_ids)).reshape(list(shape))
        else:
            if isinstance(mesh, ProcessMesh):
                mesh = mesh.mesh
            arr = np.asarray(mesh)
        if arr.dtype == object or arr.size == 0 or arr.dtype.kind not in "iu":
            raise ValueError(f"ProcessMesh: mesh must be a non-empty nested list of int ranks "
                             f"with a regular shape, got {mesh!r}")
        flat = [int(v) for v in arr.reshape(-1)]
        if len(set(flat)) != len(flat) or min(flat) < 0:
            raise ValueError(f"ProcessMesh: ranks must be distinct and >= 0, got {flat}")
        if dim_names is None:
            dim_names = [f"d{i}" for i in range(arr.ndim)]
        dim_names = list(dim_names)
        if len(dim_names) != arr.ndim or len(set(dim_names)) != len(dim_names):
            raise ValueError(f"ProcessMesh: dim_names must be {arr.ndim} distinct names (one per "
                             f"mesh dimension), got {dim_names}")
        self._mesh = arr.astype(np.int64)
        self._dim_names = dim_names

    mesh = property(lambda self: self._mesh)
    shape = property(lambda self: list(self._mesh.shape))
    process_ids = property(lambda self: [int(v) for v in self._mesh.reshape(-1)])
    dim_names = property(lambda self: list(self._dim_names))
    ndim = property(lambda self: self._mesh.ndim)

    def _dim(self, dim, fn="ProcessMesh"):
        if isinstance(dim, str):
            if dim not in self._dim_names:
                raise ValueError(f"{fn}: {dim!r} is not a dimension of the mesh (dim_names "
                                 f"{self._dim_names})")
            return self._dim_names.index(dim)
        if isinstance(dim, (int, np.integer)) and -self.ndim <= dim < self.ndim:
            return int(dim) % self.ndim
        raise ValueError(f"{fn}: dim must be a dim name or an index in [-{self.ndim}, "
                         f"{self.ndim}), got {dim!r}")

    def get_dim_size(self, dim_name):
        """The number of processes along ``dim_name`` (a name or an index)."""
        return self.shape[self._dim(dim_name, "ProcessMesh.get_dim_size")]

    def get_mesh_with_dim(self, dim_name):
        """The same processes with ``dim_name`` moved to the front."""
        d = self._dim(dim_name, "ProcessMesh.get_mesh_with_dim")
        order = [d] + [i for i in range(self.ndim) if i != d]
        return ProcessMesh(self._mesh.transpose(order), [self._dim_names[i] for i in order])

    def coordinate(self, rank):
        """The coordinate of ``rank`` in the mesh, or None when it is not a member."""
        hit = np.argwhere(self._mesh == rank)
        return None if len(hit) == 0 else [int(v) for v in hit[0]]

    def __contains__(self, rank):
        return bool(np.any(self._mesh == rank))

    def __getitem__(self, index):
        sub = self._mesh[index]
        if np.ndim(sub) == 0:
            return ProcessMesh([int(sub)])
        kept = [n for n, s in zip(self._dim_names, _kept_dims(index, self.ndim))
                if s] if not isinstance(index, int) else self._dim_names[1:]
        return ProcessMesh(sub, kept if len(kept) == sub.ndim else None)

    def __eq__(self, other):
        return (isinstance(other, ProcessMesh) and self.shape == other.shape
                and self.process_ids == other.process_ids
                and self._dim_names == other._dim_names)

    def __hash__(self):
        return hash((tuple(self.shape), tuple(self.process_ids), tuple(self._dim_names)))

    def __str__(self):
        return (f"shape {self.shape}, process_ids {self.process_ids}, dim_names "
                f"{self._dim_names}")

    def __repr__(self):
        return f"ProcessMesh({self._mesh.tolist()}, dim_names={self._dim_names})"


def _kept_dims(index, ndim):
    index = index if isinstance(index, tuple) else (index,)
    kept = [not isinstance(i, (int, np.integer)) for i in index]
    return kept + [True] * (ndim - len(kept))


# ------------------------------------------------------------------ placements


class ReduceType(enum.IntEnum):
    """How a :class:`Partial` tensor's contributions combine."""

    kRedSum = 0
    kRedMax = 1
    kRedMin = 2
    kRedProd = 3
    kRedAvg = 4
    kRedAny = 5
    kRedAll = 6

    def __str__(self):
        return f"ReduceType.{self.name}"


_REDUCE_OP = {ReduceType.kRedSum: _coll.ReduceOp.SUM, ReduceType.kRedMax: _coll.ReduceOp.MAX,
              ReduceType.kRedMin: _coll.ReduceOp.MIN, ReduceType.kRedProd: _coll.ReduceOp.PROD,
              ReduceType.kRedAvg: _coll.ReduceOp.AVG, ReduceType.kRedAny: _coll.ReduceOp.MAX,
              ReduceType.kRedAll: _coll.ReduceOp.MIN}
_SHORT = {0: "SUM", 1: "MAX", 2: "MIN", 3: "PROD", 4: "AVG", 5: "ANY", 6: "ALL"}


class ParallelMode:
    """The kinds of parallelism (Paddle's ``ParallelMode`` constants)."""

    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4


class Placement:
    """How a tensor lies along one dimension of a process mesh."""

    def is_shard(self, dim=None) -> bool:
        return False

    def is_replicated(self) -> bool:
        return False

    def is_partial(self) -> bool:
        return False

    def __ne__(self, other):
        return not self == other


class Shard(Placement):
    """Split tensor dimension ``dim`` evenly across this mesh dimension (the first
    ``size % n`` shards get one more element when it does not divide)."""

    def __init__(self, dim):
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"Shard: dim must be an int, got {type(dim).__name__}")
        self._dim = int(dim)

    def get_dim(self) -> int:
        return self._dim

    def is_shard(self, dim=None) -> bool:
        return dim is None or dim == self._dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other._dim == self._dim

    def __hash__(self):
        return hash(("shard", self._dim))

    def __repr__(self):
        return f"Shard(dim={self._dim})"


class Replicate(Placement):
    """The whole tensor on every process of this mesh dimension."""

    def is_replicated(self) -> bool:
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("replicate")

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    """Each process of this mesh dimension holds a contribution; the value is their reduction.

    Args:
        reduce_type (ReduceType, optional): how contributions combine. Default: kRedSum.
    """

    def __init__(self, reduce_type=ReduceType.kRedSum):
        try:
            self._reduce_type = ReduceType(int(reduce_type))
        except (TypeError, ValueError):
            raise ValueError(f"Partial: reduce_type must be a ReduceType, got "
                             f"{reduce_type!r}") from None

    reduce_type = property(lambda self: self._reduce_type)

    def is_partial(self) -> bool:
        return True

    def __eq__(self, other):
        return isinstance(other, Partial) and other._reduce_type == self._reduce_type

    def __hash__(self):
        return hash(("partial", int(self._reduce_type)))

    def __repr__(self):
        return f"Partial(reduce_type={_SHORT[int(self._reduce_type)]})"


class DistAttr:
    """A mesh with one sharding spec per tensor dimension: the mesh dimension name a tensor
    dimension is split over, or None (Paddle's older way to describe placements).

    Args:
        mesh (ProcessMesh): the mesh.
        sharding_specs (list[str | None]): per tensor dimension.
    """

    def __init__(self, mesh, sharding_specs):
        if not isinstance(mesh, ProcessMesh):
            raise TypeError(f"DistAttr: mesh must be a ProcessMesh, got {type(mesh).__name__}")
        specs = list(sharding_specs)
        for s in specs:
            if s is not None and s not in mesh.dim_names:
                raise ValueError(f"DistAttr: sharding spec {s!r} is not a dim name of the mesh "
                                 f"({mesh.dim_names})")
        named = [s for s in specs if s is not None]
        if len(set(named)) != len(named):
            raise ValueError(f"DistAttr: a mesh dimension may split one tensor dimension only, "
                             f"got {specs}")
        self.process_mesh = mesh
        self.sharding_specs = specs

    @property
    def dims_mapping(self):
        return [-1 if s is None else self.process_mesh.dim_names.index(s)
                for s in self.sharding_specs]

    def placements(self):
        """The same layout as a placement per mesh dimension."""
        out = [Replicate() for _ in range(self.process_mesh.ndim)]
        for tdim, mdim in enumerate(self.dims_mapping):
            if mdim >= 0:
                out[mdim] = Shard(tdim)
        return out

    def __repr__(self):
        return f"DistAttr(mesh={self.process_mesh!r}, sharding_specs={self.sharding_specs})"


class _Config:
    def __init__(self, category, defaults, given):
        self._category = category
        for k, v in defaults.items():
            setattr(self, k, v)
        for k, v in (given or {}).items():
            if k not in defaults:
                raise ValueError(f"Strategy: unknown {category} option {k!r} (known: "
                                 f"{sorted(defaults)})")
            setattr(self, k, v)

    def to_dict(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self):
        return f"{self._category}{self.to_dict()}"


_STRATEGY = {
    "sharding": {"enable": False, "stage": 1, "degree": 8},
    "gradient_merge": {"enable": False, "k_steps": 1, "avg": True},
    "pipeline": {"enable": False, "schedule_mode": "1F1B", "micro_batch_size": 1,
                 "accumulate_steps": 1},
    "fused_passes": {"enable": False, "gemm_epilogue": False, "dropout_add": False},
}


class Strategy:
    """Options of :func:`to_static` (sharding, gradient_merge, pipeline, fused_passes).

    paddle_hl runs the model eagerly: ``gradient_merge`` (accumulate ``k_steps`` batches per
    update) is applied by :class:`DistModel`; the others are kept as given and reported by
    ``to_dict()``.

    Args:
        config (dict, optional): ``{"sharding": {...}, "gradient_merge": {...}, ...}``.
    """

    def __init__(self, config=None):
        config = dict(config or {})
        unknown = set(config) - set(_STRATEGY)
        if unknown:
            raise ValueError(f"Strategy: unknown config sections {sorted(unknown)} (known: "
                             f"{sorted(_STRATEGY)})")
        for name, defaults in _STRATEGY.items():
            setattr(self, "_" + name, _Config(name, defaults, config.get(name)))

    sharding = property(lambda self: self._sharding)
    gradient_merge = property(lambda self: self._gradient_merge)
    pipeline = property(lambda self: self._pipeline)
    fused_passes = property(lambda self: self._fused_passes)

    def to_dict(self):
        return {name: getattr(self, "_" + name).to_dict() for name in _STRATEGY}

    def __repr__(self):
        return f"Strategy({self.to_dict()})"


# ------------------------------------------------------------------ distributed tensors


class _Meta:
    __slots__ = ("mesh", "placements", "global_shape", "local_only")

    def __init__(self, mesh, placements, global_shape, local_only=False):
        self.mesh = mesh
        self.placements = placements
        self.global_shape = list(global_shape)
        self.local_only = local_only


_META: dict[int, _Meta] = {}


def _meta(t):
    return _META.get(id(t))


def _set_meta(t, meta):
    key = id(t)
    if key not in _META:
        weakref.finalize(t, _META.pop, key, None)
    _META[key] = meta


class _DistMixin:
    __slots__ = ()

    def is_dist(self) -> bool:
        return _meta(self) is not None

    @property
    def process_mesh(self):
        m = _meta(self)
        return None if m is None else m.mesh

    @property
    def placements(self):
        m = _meta(self)
        return None if m is None else list(m.placements)

    @property
    def dist_attr(self):
        m = _meta(self)
        if m is None:
            return None
        specs = [None] * len(m.global_shape)
        for i, p in enumerate(m.placements):
            if p.is_shard():
                specs[p.get_dim()] = m.mesh.dim_names[i]
        return DistAttr(m.mesh, specs)

    def _local_value(self):
        """This rank's shard (a view: writing into it writes into this tensor)."""
        m = _meta(self)
        if m is None or m.local_only:
            return Tensor.__getitem__(self, ...)
        box = _local_box(m.global_shape, m.mesh, m.placements, _coll.get_rank())
        if box is None:
            return _wrap(self._data[tuple(slice(0, 0) for _ in self._data.shape)])
        return Tensor.__getitem__(self, box)


class DistTensor(_DistMixin, Tensor):
    """A Tensor with a process mesh and placements (see the module's notes)."""

    __slots__ = ()


class DistParameter(_DistMixin, Parameter):
    """A Parameter with a process mesh and placements (see the module's notes)."""

    def __deepcopy__(self, memo):
        p = Parameter.__deepcopy__(self, memo)
        m = _meta(self)
        if m is not None:
            _make_dist(p, m.mesh, m.placements, m.global_shape, m.local_only)
        return p


def _make_dist(t, mesh, placements, global_shape=None, local_only=False):
    """Turn ``t`` (a Tensor or Parameter) into a distributed tensor in place."""
    if type(t) is Tensor:
        t.__class__ = DistTensor
    elif type(t) is Parameter:
        t.__class__ = DistParameter
    elif not isinstance(t, _DistMixin):
        raise TypeError(f"paddle_hl.distributed: cannot make a {type(t).__name__} distributed")
    _set_meta(t, _Meta(mesh, list(placements),
                       t.shape if global_shape is None else global_shape, local_only))
    return t


def _chunk(n, parts, i):
    base, extra = divmod(n, parts)
    start = i * base + min(i, extra)
    return start, start + base + (1 if i < extra else 0)


def _local_box(shape, mesh, placements, rank):
    """The slices of the global tensor that ``rank`` holds (None: not in the mesh)."""
    coord = mesh.coordinate(rank)
    if coord is None:
        return None
    box = [[0, s] for s in shape]
    for mdim, p in enumerate(placements):
        if p.is_shard():
            lo, hi = box[p.get_dim()]
            a, b = _chunk(hi - lo, mesh.shape[mdim], coord[mdim])
            box[p.get_dim()] = [lo + a, lo + b]
    return tuple(slice(a, b) for a, b in box)


def _check_placements(fn, mesh, placements, ndim):
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"paddle_hl.distributed.{fn}: mesh must be a ProcessMesh, got "
                        f"{type(mesh).__name__}")
    if isinstance(placements, DistAttr):
        placements = placements.placements()
    if not isinstance(placements, (list, tuple)):
        raise TypeError(f"paddle_hl.distributed.{fn}: placements must be a list of Shard, "
                        f"Replicate or Partial, got {type(placements).__name__}")
    placements = list(placements)
    if len(placements) > mesh.ndim:
        raise ValueError(f"paddle_hl.distributed.{fn}: {len(placements)} placements for a mesh "
                         f"of {mesh.ndim} dimension(s) (shape {mesh.shape}); give one per mesh "
                         "dimension")
    placements += [Replicate() for _ in range(mesh.ndim - len(placements))]
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"paddle_hl.distributed.{fn}: placements must hold Shard, "
                            f"Replicate or Partial, got {type(p).__name__}")
        if p.is_shard() and not -ndim <= p.get_dim() < ndim:
            raise ValueError(f"paddle_hl.distributed.{fn}: {p!r} for a tensor of {ndim} "
                             f"dimension(s)")
    placements = [Shard(p.get_dim() % ndim) if p.is_shard() else p for p in placements]
    world = _coll.get_world_size()
    if world > 1 and max(mesh.process_ids) >= world:
        raise ValueError(f"paddle_hl.distributed.{fn}: the mesh names ranks "
                         f"{mesh.process_ids} but the job has {world} processes")
    return placements


# ------------------------------------------------------------------ groups of a mesh

_GROUPS = {}


def _split_group(key, color_of):
    """A group per color, made from the world communicator in one collective call (every
    process of the job takes part). ``color_of(rank)`` is a color or None."""
    g = _GROUPS.get(key)
    if g is not None:
        return g
    world = _coll._group(None, "reshard")
    MPI = _coll._comm.mpi()
    color = color_of(world.rank)
    comm = world.comm.Split(MPI.UNDEFINED if color is None else color, world.rank)
    if comm == MPI.COMM_NULL:
        g = None
    else:
        ranks = comm.allgather(world.rank)
        gid = _coll._NEXT_ID[0]
        _coll._NEXT_ID[0] += 1
        g = _coll.Group(comm.Get_rank(), gid, ranks, comm)
        _coll._GROUPS[gid] = g
    _GROUPS[key] = g
    return g


def _mesh_key(mesh):
    return tuple(mesh.shape), tuple(mesh.process_ids)


def _dim_group(mesh, mdim):
    """The group of this rank's neighbours along mesh dimension ``mdim``."""
    def color(rank):
        c = mesh.coordinate(rank)
        if c is None:
            return None
        c[mdim] = 0
        return int(np.ravel_multi_index(c, mesh.shape))

    return _split_group(("dim", _mesh_key(mesh), mdim), color)


def _mesh_group(mesh):
    return _split_group(("mesh", _mesh_key(mesh)), lambda r: 0 if r in mesh else None)


def _multi():
    return _coll.get_world_size() > 1


# ------------------------------------------------------------------ public functions


def shard_tensor(data, mesh, placements, dtype=None, place=None, stop_gradient=True):
    """Make a distributed tensor of ``data`` laid out on ``mesh`` as ``placements`` say.

    Every rank passes the same global ``data`` (as with Paddle) and keeps it (see the module
    notes); ``x._local_value()`` is this rank's shard. With ``Partial``, the rank at coordinate
    0 of that mesh dimension holds the value and the others zeros (max/min/avg/product:
    every rank holds it), so the reduction is ``data``. A Parameter stays a Parameter (name and
    trainability kept), so ``layer.weight = shard_tensor(layer.weight, ...)`` works.

    Args:
        data (Tensor | array-like): the global value.
        mesh (ProcessMesh): the processes.
        placements (list[Placement]): one per mesh dimension (missing ones: Replicate).
        dtype, place, stop_gradient: as ``paddle.to_tensor`` (ignored for Parameters).

    Returns:
        Tensor: the distributed tensor (``is_dist()`` is True).

    Examples:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.distributed as dist
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> x = dist.shard_tensor(paddle.ones([4, 2]), mesh, [dist.Shard(0)])
        >>> x.is_dist(), x.placements
        (True, [Shard(dim=0)])
    """
    from ..tensor.creation import to_tensor

    if isinstance(data, Parameter):
        placements = _check_placements("shard_tensor", mesh, placements, data.ndim)
        t = Parameter.__new__(DistParameter)
        for slot in ("_data", "stop_gradient", "_grad", "_name", "_node", "_idx", "_ver",
                     "_hooks", "_retain", "persistable"):
            setattr(t, slot, getattr(data, slot))
        t.__dict__.update(data.__dict__)
        t._data = data._data.copy()
        t._grad = None
    else:
        if isinstance(data, Tensor) and dtype is None and place is None:
            t = _wrap(data._data.copy(), stop_gradient)
        else:
            t = to_tensor(data, dtype=dtype, place=place, stop_gradient=stop_gradient)
        placements = _check_placements("shard_tensor", mesh, placements, t.ndim)
    _make_dist(t, mesh, placements)
    _apply_partial(t._data, mesh, placements)
    return t


def _apply_partial(arr, mesh, placements):
    """Turn a value into this rank's Partial contribution (in place): for a sum, only the rank
    at coordinate 0 of each partial mesh dimension keeps it."""
    coord = mesh.coordinate(_coll.get_rank())
    if coord is None:
        return
    for mdim, p in enumerate(placements):
        if p.is_partial() and p.reduce_type == ReduceType.kRedSum and coord[mdim] != 0:
            arr[...] = 0


def dtensor_from_fn(fn, mesh, placements, *args, **kwargs):
    """Build a tensor with ``fn(*args, **kwargs)`` and distribute it (:func:`shard_tensor`).

    Examples:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.distributed as dist
        >>> mesh = dist.ProcessMesh([0], dim_names=["x"])
        >>> dist.dtensor_from_fn(paddle.ones, mesh, [dist.Replicate()], shape=[2]).shape
        [2]
    """
    if not callable(fn):
        raise TypeError(f"paddle_hl.distributed.dtensor_from_fn: fn must be callable, got "
                        f"{type(fn).__name__}")
    return shard_tensor(fn(*args, **kwargs), mesh, placements)


def _gather_global(arr, meta):
    """The global value from every mesh rank's shard (an all_gather over the mesh)."""
    mesh, rank = meta.mesh, _coll.get_rank()
    if not _multi():
        return arr
    g = _mesh_group(mesh)
    if g is None:
        return arr
    if meta.local_only:
        local = np.ascontiguousarray(backend.to_numpy(arr))
    else:
        local = np.ascontiguousarray(backend.to_numpy(arr)[_local_box(meta.global_shape, mesh,
                                                           meta.placements, rank)])
    parts = []
    _coll.all_gather_object(parts, local, group=g)
    out = np.empty(meta.global_shape, dtype=local.dtype)
    for r, part in zip(g.ranks, parts):
        out[_local_box(meta.global_shape, mesh, meta.placements, r)] = part
    return out


def _reduce_partials(arr, meta):
    arr = backend.to_numpy(arr).copy()
    if not _multi():
        return arr
    for mdim, p in enumerate(meta.placements):
        if p.is_partial():
            g = _dim_group(meta.mesh, mdim)
            if g is not None and g.nranks > 1:
                t = _wrap(arr)
                _coll.all_reduce(t, op=_REDUCE_OP[p.reduce_type], group=g)
                arr = t._data
    return arr


def _reshard_array(arr, meta, mesh, placements):
    """The data of the resharded tensor on this rank (a new array)."""
    src = meta
    non_partial = _Meta(src.mesh, [Replicate() if p.is_partial() else p
                                   for p in src.placements], src.global_shape, src.local_only)
    value = _reduce_partials(arr, src)
    if any(p.is_shard() for p in src.placements) or src.local_only:
        value = _gather_global(value, non_partial)
    if mesh != src.mesh and _multi():
        # the target mesh may hold ranks the source does not: the first source rank sends
        t = _wrap(np.ascontiguousarray(value))
        _coll.broadcast(t, src.mesh.process_ids[0])
        value = t._data
    value = np.array(value, copy=True)
    _apply_partial(value, mesh, placements)
    return value


def reshard(dist_tensor, mesh, placements):
    """Lay ``dist_tensor`` out anew: another mesh and/or other placements.

    Partial -> Replicate/Shard all-reduces the contributions over the partial mesh dimension;
    Shard -> Replicate all-gathers the shards over the mesh (so updates a rank made to its
    own shard reach every rank); Replicate/Shard -> Partial keeps the value on coordinate 0
    (zeros elsewhere, for a sum); a change of mesh broadcasts the value from the source mesh's
    first rank. Every process of the job must call it. Gradients flow through unchanged.

    Args:
        dist_tensor (Tensor): a distributed tensor (from :func:`shard_tensor`).
        mesh (ProcessMesh): the target mesh.
        placements (list[Placement]): the target placements.

    Returns:
        Tensor: a new distributed tensor.
    """
    meta = _meta(dist_tensor) if isinstance(dist_tensor, Tensor) else None
    if meta is None:
        raise TypeError(f"paddle_hl.distributed.reshard: dist_tensor must be a distributed "
                        f"tensor (made by shard_tensor), got "
                        f"{'a dense Tensor' if isinstance(dist_tensor, Tensor) else type(dist_tensor).__name__}")  # noqa: E501
    placements = _check_placements("reshard", mesh, placements, len(meta.global_shape))
    value = _reshard_array(dist_tensor._data, meta, mesh, placements)
    xp_value = value if isinstance(dist_tensor._data, np.ndarray) else \
        _coll._to_device(value, dist_tensor._data)
    out = _identity_grad(dist_tensor, xp_value)
    return _make_dist(out, mesh, placements, meta.global_shape)


def _identity_grad(x, value):
    """A tensor holding ``value`` whose gradient flows to ``x`` unchanged."""
    from ..autograd import PyLayer

    if x.stop_gradient or not state.tls.grad_enabled:
        return _wrap(value, x.stop_gradient)

    class _Reshard(PyLayer):
        @staticmethod
        def forward(ctx, t):
            return _wrap(value)

        @staticmethod
        def backward(ctx, dy):
            return dy

    return _Reshard.apply(x)


def shard_layer(layer, process_mesh, shard_fn=None, input_fn=None, output_fn=None):
    """Distribute a layer's parameters over ``process_mesh``.

    ``shard_fn(name, sublayer, process_mesh)`` is called for the layer and each sublayer; it
    replaces parameters with distributed ones (``sub.weight = dist.shard_tensor(sub.weight,
    mesh, [dist.Shard(1)])``). Every parameter left dense becomes Replicate on the mesh.
    ``input_fn(inputs, process_mesh)`` and ``output_fn(outputs, process_mesh)`` run before and
    after the layer's forward (e.g. to shard the inputs).

    Args:
        layer (Layer): the layer (changed in place and returned).
        process_mesh (ProcessMesh): the mesh.
        shard_fn, input_fn, output_fn (callable, optional): as above.

    Returns:
        Layer: ``layer``.
    """
    from ..nn.layer.layers import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"paddle_hl.distributed.shard_layer: layer must be a paddle.nn.Layer, "
                        f"got {type(layer).__name__}")
    if not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"paddle_hl.distributed.shard_layer: process_mesh must be a "
                        f"ProcessMesh, got {type(process_mesh).__name__}")
    for name, fn in (("shard_fn", shard_fn), ("input_fn", input_fn), ("output_fn", output_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"paddle_hl.distributed.shard_layer: {name} must be callable, got "
                            f"{type(fn).__name__}")
    for name, sub in layer.named_sublayers(include_self=True):
        if shard_fn is not None:
            shard_fn(name, sub, process_mesh)
        for key, p in list(sub._parameters.items()):
            if p is not None and _meta(p) is None:
                setattr(sub, key, shard_tensor(p, process_mesh, [Replicate()]))
    if input_fn is not None:
        layer.register_forward_pre_hook(lambda _layer, inputs: input_fn(inputs, process_mesh))
    if output_fn is not None:
        layer.register_forward_post_hook(
            lambda _layer, inputs, outputs: output_fn(outputs, process_mesh))
    return layer


class _ShardOptimizer:
    """An optimizer whose states follow the parameters' placements (see shard_optimizer)."""

    def __init__(self, optimizer, shard_fn):
        self._inner = optimizer
        self._shard_fn = shard_fn
        self._replicated_state = set()
        self._asked = set()

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _sharded_params(self):
        rank = _coll.get_rank()
        out = []
        if not _multi():  # one process: it owns every shard
            return out
        for p in self._inner._all_params() or []:
            m = _meta(p)
            if (m is None or p._grad is None or p.stop_gradient or id(p) in
                    self._replicated_state or not any(q.is_shard() for q in m.placements)):
                continue
            box = _local_box(m.global_shape, m.mesh, m.placements, rank)
            if box is not None:
                out.append((p, m, box))
        return out

    def _consult_shard_fn(self):
        if self._shard_fn is None:
            return
        for p in self._inner._all_params() or []:
            m = _meta(p)
            if m is None or id(p) in self._asked:
                continue
            self._asked.add(id(p))
            for acc in getattr(self._inner, "_acc_names", ("velocity",)):
                probe = shard_tensor(np.zeros(p.shape, p._data.dtype), m.mesh, m.placements)
                got = self._shard_fn(acc, p, probe)
                got_meta = _meta(got) if isinstance(got, Tensor) else None
                if got_meta is None:
                    raise TypeError("paddle_hl.distributed.shard_optimizer: shard_fn must "
                                    "return a distributed tensor (shard_tensor), got "
                                    f"{type(got).__name__}")
                if all(q.is_replicated() for q in got_meta.placements):
                    self._replicated_state.add(id(p))

    def step(self):
        """Update the parameters: each rank updates only its shard of a sharded parameter
        (with its shard of the optimizer states), then the shards are all-gathered."""
        self._consult_shard_fn()
        sharded = self._sharded_params()
        saved = []
        for p, _m, box in sharded:
            saved.append((p._data, p._grad))
            p._data = p._data[box].copy()
            p._grad = _wrap(p._grad._data[box].copy())
        try:
            self._inner.step()
        finally:
            for (p, _m, box), (full, grad) in zip(sharded, saved):
                full[box] = p._data
                p._data, p._grad = full, grad
        if _multi():
            for p in self._inner._all_params() or []:
                m = _meta(p)
                if m is not None and any(q.is_shard() for q in m.placements) and \
                        id(p) not in self._replicated_state:
                    p._data[...] = _gather_global(p._data, m)

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        loss.backward()
        self.step()
        return None, None

    def clear_grad(self, set_to_zero=True):
        return self._inner.clear_grad(set_to_zero)

    def state_dict(self):
        """The inner optimizer's state; states of sharded parameters are distributed tensors
        holding only this rank's shard."""
        out = self._inner.state_dict()
        params = {p.name: p for p in self._inner._all_params() or []}
        rank = _coll.get_rank()
        for key, t in list(out.items()):
            if not isinstance(t, Tensor):
                continue
            owners = [n for n in params if key.startswith(n + "_")]
            if not owners:
                continue
            p = params[max(owners, key=len)]
            m = _meta(p)
            if m is None:
                continue
            box = _local_box(m.global_shape, m.mesh, m.placements, rank)
            local = None if box is None else [s.stop - s.start for s in box]
            if (_multi() and id(p) not in self._replicated_state and local is not None
                    and any(q.is_shard() for q in m.placements) and list(t.shape) == local):
                _make_dist(t, m.mesh, m.placements, m.global_shape, local_only=True)
            else:
                _make_dist(t, m.mesh, [Replicate()] * m.mesh.ndim)
        return out

    def set_state_dict(self, state_dict):
        return self._inner.set_state_dict(state_dict)


def shard_optimizer(optimizer, shard_fn=None):
    """Keep an optimizer's states with the placements of its parameters.

    For a parameter sharded on the mesh, each rank keeps only its shard of the optimizer
    states (moments, velocities) and updates only its shard of the parameter; the updated
    shards are then all-gathered so every rank holds the new global value. Replicated
    parameters are updated whole on every rank. ``shard_fn(accumulator_name, param,
    accumulator)``, when given, may return a Replicate tensor to keep a parameter's states
    whole on every rank.

    Gradient clipping by global norm sees each rank's shards of sharded parameters only.

    Args:
        optimizer (Optimizer): a paddle optimizer over the (distributed) parameters.
        shard_fn (callable, optional): as above.

    Returns:
        The wrapped optimizer (``step``, ``clear_grad``, ``state_dict``, and every attribute of
        the original).
    """
    from ..optimizer.optimizer import Optimizer

    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"paddle_hl.distributed.shard_optimizer: optimizer must be a "
                        f"paddle.optimizer.Optimizer, got {type(optimizer).__name__}")
    if shard_fn is not None and not callable(shard_fn):
        raise TypeError(f"paddle_hl.distributed.shard_optimizer: shard_fn must be callable, "
                        f"got {type(shard_fn).__name__}")
    return _ShardOptimizer(optimizer, shard_fn)


class DistModel:
    """What :func:`to_static` returns: the layer, loss and optimizer run eagerly, in Paddle's
    DistModel calling convention.

    In ``train()`` mode (the default when an optimizer is given) ``dist_model(*inputs,
    label)`` runs forward, the loss, backward and an optimizer step, and returns the loss; in
    ``eval()`` mode it returns the loss without updating; in ``predict()`` mode it returns the
    outputs. Nothing is compiled: paddle_hl has no static graph, so the model runs as ordinary
    dygraph code with the same numbers.
    """

    def __init__(self, layer, loader, loss, optimizer, strategy):
        self.network = layer
        self.dist_loader = loader
        self._loss = loss
        self._optimizer = optimizer
        self._strategy = strategy or Strategy()
        self._k = max(1, int(self._strategy.gradient_merge.k_steps)) \
            if self._strategy.gradient_merge.enable else 1
        self._steps = 0
        self._mode = "train" if optimizer is not None and loss is not None else \
            ("eval" if loss is not None else "predict")

    def train(self):
        if self._optimizer is None or self._loss is None:
            raise ValueError("DistModel.train: to_static needs both loss and optimizer to train")
        self._mode = "train"
        self.network.train()

    def eval(self):
        if self._loss is None:
            raise ValueError("DistModel.eval: to_static needs a loss to evaluate")
        self._mode = "eval"
        self.network.eval()

    def predict(self):
        self._mode = "predict"
        self.network.eval()

    def __call__(self, *args):
        no_grad = state.no_grad

        if self._mode == "predict":
            with no_grad():
                return self.network(*args)
        if len(args) < 2:
            raise ValueError(f"DistModel: in {self._mode} mode call it with the inputs and the "
                             f"label, got {len(args)} argument(s)")
        *inputs, label = args
        if self._mode == "eval":
            with no_grad():
                return self._loss(self.network(*inputs), label)
        loss = self._loss(self.network(*inputs), label)
        (loss / self._k if self._k > 1 else loss).backward()
        self._steps += 1
        if self._steps % self._k == 0:
            self._optimizer.step()
            self._optimizer.clear_grad()
        return loss

    def state_dict(self, mode="all"):
        out = {}
        if mode in ("all", "param"):
            out.update(self.network.state_dict())
        if mode in ("all", "opt") and self._optimizer is not None:
            out.update(self._optimizer.state_dict())
        return out

    def set_state_dict(self, state_dict):
        self.network.set_state_dict(state_dict)


def to_static(layer, loader=None, loss=None, optimizer=None, strategy=None):
    """Paddle's conversion to a static auto-parallel program, in dygraph meaning.

    paddle_hl has no static graph: this returns a :class:`DistModel` that runs ``layer``,
    ``loss`` and ``optimizer`` eagerly with Paddle's DistModel calling convention (``train()``,
    ``eval()``, ``predict()``, ``model(x, label) -> loss``), and the loader unchanged.

    Args:
        layer (Layer): the (possibly sharded) model.
        loader (DataLoader, optional): returned as ``dist_model.dist_loader``.
        loss (callable, optional): ``loss(outputs, label)``.
        optimizer (Optimizer, optional): the optimizer.
        strategy (Strategy, optional): ``gradient_merge`` is applied; the rest is recorded.

    Returns:
        DistModel: the model (``dist_model.dist_loader`` is ``loader``).
    """
    from ..nn.layer.layers import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"paddle_hl.distributed.to_static: layer must be a paddle.nn.Layer, "
                        f"got {type(layer).__name__}")
    if loss is not None and not callable(loss):
        raise TypeError(f"paddle_hl.distributed.to_static: loss must be callable, got "
                        f"{type(loss).__name__}")
    if strategy is not None and not isinstance(strategy, Strategy):
        raise TypeError(f"paddle_hl.distributed.to_static: strategy must be a "
                        f"paddle.distributed.Strategy, got {type(strategy).__name__}")
    return DistModel(layer, loader, loss, optimizer, strategy)
