"""Distributed checkpoints: each rank writes the shards it owns; loading re-shards.

A checkpoint is a folder with one ``{rank}_0.distcp`` file per rank that owned something (a
pickle of ``{key: [(offsets, array), ...]}``) and ``{coordinator}.metadata``, written by the
coordinator: for every key its global shape, dtype and which file holds which block, plus the
values that are not tensors (e.g. a learning-rate scheduler's state). A shard of a distributed
tensor is written once, by the lowest rank that holds it; dense tensors are taken as replicated
and written by the coordinator. Loading reads, on each rank, only the blocks overlapping what
that rank needs, so a checkpoint written by 2 processes loads on 1 or 3 with any placements.
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from ..framework import io as _io
from ..framework.tensor import Tensor
from . import auto_parallel as _ap
from . import collective as _coll

__all__ = []  # the public names are re-exported by paddle_hl.distributed

_FORMAT = "paddle_hl.distcp/1"


def _flatten(d, fn, prefix=""):
    if not isinstance(d, dict):
        raise TypeError(f"paddle_hl.distributed.{fn}: state_dict must be a dict, got "
                        f"{type(d).__name__}")
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise TypeError(f"paddle_hl.distributed.{fn}: state_dict keys must be str, got "
                            f"{k!r}")
        key = prefix + k
        if isinstance(v, dict):
            out.update(_flatten(v, fn, key + "/"))
        else:
            out[key] = v
    return out


def _group_info(process_group, coordinator_rank, fn):
    g = _coll.get_group(0) if process_group is None else process_group
    if g is None:
        _coll.init_parallel_env()
        g = _coll.get_group(0)
    if not isinstance(g, _coll.Group):
        raise TypeError(f"paddle_hl.distributed.{fn}: process_group must be a Group or None, "
                        f"got {type(g).__name__}")
    if not isinstance(coordinator_rank, int) or not 0 <= coordinator_rank < g.nranks:
        raise ValueError(f"paddle_hl.distributed.{fn}: coordinator_rank must be a rank of the "
                         f"group in [0, {g.nranks}), got {coordinator_rank!r}")
    return g


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _owned_blocks(t, rank):
    """The (offsets, array) blocks of tensor ``t`` this rank writes."""
    meta = _ap._meta(t)
    if meta is None:
        return None  # dense: the coordinator writes it
    data = _host(t._data)
    if any(p.is_partial() for p in meta.placements):
        data = _ap._reduce_partials(data, meta)
        meta = _ap._Meta(meta.mesh, [_ap.Replicate() if p.is_partial() else p
                                     for p in meta.placements], meta.global_shape,
                         meta.local_only)
    if not _ap._multi():
        if meta.local_only:
            return [([0] * len(meta.global_shape), data)]
        return [([0] * data.ndim, data)]
    mine = _ap._local_box(meta.global_shape, meta.mesh, meta.placements, rank)
    if mine is None:
        return []
    for r in meta.mesh.process_ids:  # the lowest rank holding this block writes it
        if _ap._local_box(meta.global_shape, meta.mesh, meta.placements, r) == mine:
            if r != rank:
                return []
            break
    block = data if meta.local_only else data[mine]
    return [([s.start for s in mine], np.ascontiguousarray(block))]


def save_state_dict(state_dict, path, process_group=None, coordinator_rank=0) -> None:
    """Save a (possibly distributed) state dict: every rank writes only its own shards.

    Every process of ``process_group`` must call it. Nested dicts (an optimizer's
    ``master_weights``, ``LR_Scheduler``) are kept; values that are not tensors are written by
    the coordinator.

    Args:
        state_dict (dict): ``layer.state_dict()``, an optimizer's, or both merged.
        path (str): the checkpoint folder (created).
        process_group (Group, optional): the ranks saving (the global group when None).
        coordinator_rank (int, optional): the rank in the group that writes the metadata.

    Examples:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.distributed as dist
        >>> import tempfile
        >>> layer = paddle.nn.Linear(2, 2)
        >>> d = tempfile.mkdtemp()
        >>> dist.save_state_dict(layer.state_dict(), d)
        >>> dist.load_state_dict(layer.state_dict(), d)
    """
    flat = _flatten(state_dict, "save_state_dict")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"paddle_hl.distributed.save_state_dict: path must be a folder path, "
                        f"got {type(path).__name__}")
    g = _group_info(process_group, coordinator_rank, "save_state_dict")
    rank = _coll.get_rank()
    coordinator = g.rank == coordinator_rank
    os.makedirs(path, exist_ok=True)
    mine, info, objects = {}, {}, {}
    for key in sorted(flat):  # the same order on every rank: blocks may need collectives
        v = flat[key]
        if isinstance(v, Tensor):
            meta = _ap._meta(v)
            shape = meta.global_shape if meta is not None else list(v.shape)
            info[key] = (list(shape), str(_host(v._data).dtype))
            blocks = _owned_blocks(v, rank)
            if blocks is None:
                blocks = [([0] * v.ndim, np.ascontiguousarray(_host(v._data)))] \
                    if coordinator else []
            if blocks:
                mine[key] = blocks
        elif coordinator:
            objects[key] = v
    fname = f"{rank}_0.distcp"
    if mine:
        _atomic_write(os.path.join(path, fname), mine)
    listing = {k: [(off, list(a.shape)) for off, a in blocks] for k, blocks in mine.items()}
    everyone = [listing]
    if g.nranks > 1:
        everyone = []
        _coll.all_gather_object(everyone, (fname, listing), group=g)
    else:
        everyone = [(fname, listing)]
    if coordinator:
        keys = {}
        for k, (shape, dtype) in info.items():
            keys[k] = {"global_shape": shape, "dtype": dtype, "blocks": []}
        for f, lst in everyone:
            for k, blocks in lst.items():
                keys[k]["blocks"].extend((f, off, shp) for off, shp in blocks)
        _atomic_write(os.path.join(path, f"{coordinator_rank}.metadata"),
                      {"format": _FORMAT, "tensors": keys, "objects": objects,
                       "world_size": g.nranks})
    if g.nranks > 1:
        _coll.barrier(group=g if g.id != 0 else None)


def _atomic_write(target, obj):
    _io.write_file(target, lambda f: pickle.dump(obj, f, protocol=4))


def _load(path):
    """A checkpoint file, through paddle.load's restricted unpickler: it rebuilds arrays,
    numbers, strings and containers only, so a crafted checkpoint cannot run code."""
    with open(path, "rb") as f:
        return _io._unpickle(f, repr(path))


def _read_metadata(path):
    if not os.path.isdir(path):
        raise FileNotFoundError(f"paddle_hl.distributed.load_state_dict: checkpoint folder "
                                f"{path!r} does not exist")
    metas = sorted(f for f in os.listdir(path) if f.endswith(".metadata"))
    if not metas:
        raise FileNotFoundError(f"paddle_hl.distributed.load_state_dict: no .metadata file in "
                                f"{path!r}: not a checkpoint written by save_state_dict")
    meta = _load(os.path.join(path, metas[0]))
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError(f"paddle_hl.distributed.load_state_dict: {metas[0]} in {path!r} is "
                         "not paddle_hl checkpoint metadata")
    return meta


class _Files:
    def __init__(self, path):
        self.path = path
        self.cache = {}

    def block(self, fname, key, offsets):
        data = self.cache.get(fname)
        if data is None:
            data = self.cache[fname] = _load(os.path.join(self.path, fname))
        for off, arr in data[key]:
            if list(off) == list(offsets):
                return arr
        raise ValueError(f"paddle_hl.distributed.load_state_dict: {fname} lacks the block of "
                         f"{key!r} at {offsets}: the checkpoint is damaged")


def _read_region(files, entry, key, box, dtype):
    """The values of ``box`` (slices of the global tensor) from the blocks overlapping it."""
    out = np.empty([s.stop - s.start for s in box], dtype=dtype)
    covered = np.zeros(out.shape, dtype=bool)
    for fname, off, shape in entry["blocks"]:
        lo = [max(s.start, o) for s, o in zip(box, off)]
        hi = [min(s.stop, o + n) for s, o, n in zip(box, off, shape)]
        if any(a >= b for a, b in zip(lo, hi)) and out.ndim:
            continue
        arr = files.block(fname, key, off)
        src = tuple(slice(a - o, b - o) for a, b, o in zip(lo, hi, off))
        dst = tuple(slice(a - s.start, b - s.start) for a, b, s in zip(lo, hi, box))
        out[dst] = arr[src]
        covered[dst] = True
    if not covered.all():
        raise ValueError(f"paddle_hl.distributed.load_state_dict: the checkpoint does not "
                         f"cover all of {key!r}: a rank's shard file is missing")
    return out


def load_state_dict(state_dict, path, process_group=None, coordinator_rank=0) -> None:
    """Load a checkpoint of :func:`save_state_dict` into ``state_dict``'s tensors, in place.

    The tensors of ``state_dict`` say what is wanted: their global shapes must match the
    checkpoint's, and their placements may differ from the ones saved, on any number of
    processes (a checkpoint of 2 ranks loads on 1 or 3). Each rank reads only the blocks that
    overlap its shard; a sharded tensor then all-gathers its shards over its mesh (every rank
    keeps the global value: see :mod:`paddle_hl.distributed.auto_parallel`). Values that are
    not tensors are put into ``state_dict`` as saved. Every process must call it.

    Args:
        state_dict (dict): the tensors to fill (e.g. ``layer.state_dict()``); then
            ``layer.set_state_dict(state_dict)`` if the tensors are not the layer's own.
        path (str): the checkpoint folder.
        process_group (Group, optional): the ranks loading (the global group when None).
        coordinator_rank (int, optional): accepted for symmetry with ``save_state_dict``.

    Raises:
        KeyError: a tensor of ``state_dict`` is not in the checkpoint.
        ValueError: a global shape differs from the checkpoint's.
    """
    flat = _flatten(state_dict, "load_state_dict")
    _group_info(process_group, coordinator_rank, "load_state_dict")
    meta = _read_metadata(os.fspath(path))
    saved, objects = meta["tensors"], meta["objects"]
    missing = sorted(k for k, v in flat.items() if isinstance(v, Tensor) and k not in saved)
    if missing:
        raise KeyError(f"paddle_hl.distributed.load_state_dict: {missing} not in the "
                       f"checkpoint {os.fspath(path)!r} (it holds {sorted(saved)})")
    files = _Files(os.fspath(path))
    rank = _coll.get_rank()
    for key in sorted(flat):
        t = flat[key]
        if not isinstance(t, Tensor):
            continue
        entry = saved[key]
        dmeta = _ap._meta(t)
        shape = dmeta.global_shape if dmeta is not None else list(t.shape)
        if list(shape) != list(entry["global_shape"]):
            raise ValueError(f"paddle_hl.distributed.load_state_dict: {key!r} has global shape "
                             f"{list(shape)} here but {entry['global_shape']} in the checkpoint")
        dtype = _host(t._data).dtype
        full = tuple(slice(0, n) for n in shape)
        sharded = dmeta is not None and _ap._multi() and any(
            p.is_shard() for p in dmeta.placements)
        if dmeta is not None and dmeta.local_only and _ap._multi():
            box = _ap._local_box(shape, dmeta.mesh, dmeta.placements, rank)
            if box is not None:
                _store(t, _read_region(files, entry, key, box, dtype))
            continue
        if sharded:
            box = _ap._local_box(shape, dmeta.mesh, dmeta.placements, rank)
            value = np.zeros(shape, dtype=dtype)
            if box is not None:
                value[box] = _read_region(files, entry, key, box, dtype)
            plain = _ap._Meta(dmeta.mesh, [_ap.Replicate() if p.is_partial() else p
                                           for p in dmeta.placements], shape)
            value = _ap._gather_global(value, plain)
        else:
            value = _read_region(files, entry, key, full, dtype)
        if dmeta is not None:
            value = np.array(value, copy=True)
            _ap._apply_partial(value, dmeta.mesh, dmeta.placements)
        _store(t, value)
    for key, v in objects.items():
        parts = key.split("/")
        d = state_dict
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = v


def _store(t, value):
    if isinstance(t._data, np.ndarray):
        t._data[...] = value.reshape(t._data.shape)
    else:
        t._data[...] = _coll._to_device(value.reshape(t._data.shape), t._data)
    t._ver.v += 1
