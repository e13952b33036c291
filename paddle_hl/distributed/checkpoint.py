"""Distributed checkpoints: each rank writes the shards it owns; loading re-shards.

A checkpoint is a folder with one ``{rank}_0.distcp`` file per rank that owned something (a
pickle of ``{key: [(offsets, array), ...]}``) and ``{coordinator}.metadata``, written by the
coordinator: for every key its global shape, dtype and which file holds which block, for every
file the rank and host that wrote it with its size and CRC-32, plus the values that are not
tensors (e.g. a learning-rate scheduler's state). A shard of a distributed tensor is written
once, by the lowest rank that holds it; dense tensors are taken as replicated and written by
the coordinator. Loading reads, on each rank, only the blocks overlapping what that rank needs,
so a checkpoint written by 2 processes loads on 1 or 3 with any placements, and one written on
2 machines loads on 1.

Across machines the folder must be one they all share (a network file system), as with
Paddle: every rank writes its own file there. Each file is written to a temporary name and
renamed; the metadata is written last, once every rank has checked that it sees every rank's
file at its full size, so a folder that is not shared is an error at save time, on every rank,
naming the files a rank does not see. A shard file missing, truncated or changed since the save
is an error at load time naming the file and the rank (and host) that wrote it.
"""

from __future__ import annotations

import os
import pickle
import socket
import zlib

import numpy as np

from ..backend import to_numpy
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


def _owned_blocks(t, rank):
    """The (offsets, array) blocks of tensor ``t`` this rank writes."""
    meta = _ap._meta(t)
    if meta is None:
        return None  # dense: the coordinator writes it
    data = to_numpy(t._data)
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
        path (str): the checkpoint folder (created); on several machines, one they all
            share (a network file system), as every rank writes its own file there.
        process_group (Group, optional): the ranks saving (the global group when None).
        coordinator_rank (int, optional): the rank in the group that writes the metadata.

    Raises:
        FileNotFoundError: a rank does not see another rank's file in ``path`` (a folder
            that is not shared between the machines); raised on every rank, naming the files,
            and the metadata is not written.

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
            info[key] = (list(shape), str(to_numpy(v._data).dtype))
            blocks = _owned_blocks(v, rank)
            if blocks is None:
                blocks = [([0] * v.ndim, np.ascontiguousarray(to_numpy(v._data)))] \
                    if coordinator else []
            if blocks:
                mine[key] = blocks
        elif coordinator:
            objects[key] = v
    fname = f"{rank}_0.distcp"
    host = socket.gethostname()
    stamp = _write_shard(os.path.join(path, fname), mine) if mine else None
    listing = {k: [(off, list(a.shape)) for off, a in blocks] for k, blocks in mine.items()}
    mine_info = (fname, listing, rank, host, stamp)
    if g.nranks > 1:
        everyone = []
        _coll.all_gather_object(everyone, mine_info, group=g)
    else:
        everyone = [mine_info]
    # every rank must see every rank's file (the folder is shared) before the metadata names
    # them: a folder local to each machine would give a checkpoint no one can load
    problems = _unseen(path, everyone, rank, host)
    if g.nranks > 1:
        gathered = []
        _coll.all_gather_object(gathered, problems, group=g)
        problems = [p for ps in gathered for p in ps]
    if problems:
        raise FileNotFoundError(
            f"paddle_hl.distributed.save_state_dict: the checkpoint folder {os.fspath(path)!r} "
            "must be one that every rank's machine shares (a network file system): each rank "
            "writes its own shard file there, and loading reads them all. "
            + "; ".join(problems[:4])
            + (f"; and {len(problems) - 4} more rank(s)" if len(problems) > 4 else "")
            + ". The metadata was not written.")
    if coordinator:
        keys = {}
        for k, (shape, dtype) in info.items():
            keys[k] = {"global_shape": shape, "dtype": dtype, "blocks": []}
        files = {}
        for f, lst, r, h, st in everyone:
            for k, blocks in lst.items():
                keys[k]["blocks"].extend((f, off, shp) for off, shp in blocks)
            if st is not None:
                files[f] = {"rank": r, "host": h, "bytes": st[0], "crc32": st[1]}
        _atomic_write(os.path.join(path, f"{coordinator_rank}.metadata"),
                      {"format": _FORMAT, "tensors": keys, "objects": objects,
                       "files": files, "world_size": g.nranks})
    if g.nranks > 1:
        _coll.barrier(group=g if g.id != 0 else None)


def _unseen(path, everyone, rank, host):
    """What this rank cannot see of the files the ranks wrote (missing, or not at full size):
    one line, or none."""
    missing, short = [], []
    for f, _, r, h, st in everyone:
        if st is None:
            continue
        try:
            size = os.path.getsize(os.path.join(path, f))
        except OSError:
            missing.append(f"{f} (rank {r}'s, written on host {h})")
            continue
        if size != st[0]:
            short.append(f"{f} (rank {r}'s, written on host {h}) with {size} bytes instead "
                         f"of {st[0]}")
    parts = ([f"does not see {', '.join(missing)}"] if missing else []) + \
        ([f"sees {', '.join(short)}"] if short else [])
    return [f"rank {rank} (host {host}) {' and '.join(parts)}"] if parts else []


class _Summed:
    """A binary file that counts the bytes written to it and their CRC-32."""

    def __init__(self, f):
        self.f = f
        self.nbytes = 0
        self.crc = 0

    def write(self, b):
        view = memoryview(b)
        self.crc = zlib.crc32(view, self.crc)
        self.nbytes += view.nbytes
        return self.f.write(b)


def _write_shard(target, obj):
    """Write a rank's shard file (to a temporary name, then renamed); returns its
    ``(bytes, crc32)``."""
    summed = []

    def write(f):
        s = _Summed(f)
        pickle.dump(obj, s, protocol=4)
        summed.append((s.nbytes, s.crc))

    _io.write_file(target, write)
    return summed[-1]


def _crc32(path, chunk=1 << 22):
    crc = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                return crc
            crc = zlib.crc32(b, crc)


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
    try:
        meta = _load(os.path.join(path, metas[0]))
    except ValueError as e:
        raise ValueError(f"paddle_hl.distributed.load_state_dict: the metadata file {metas[0]} in "
                         f"{path!r} (written by the coordinator rank) is damaged: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError(f"paddle_hl.distributed.load_state_dict: {metas[0]} in {path!r} is "
                         "not paddle_hl checkpoint metadata")
    return meta


class _Files:
    """The shard files of a checkpoint, each read (and checked against the metadata) once."""

    def __init__(self, path, files, rank):
        self.path = path
        self.files = files  # file name -> {"rank", "host", "bytes", "crc32"} (may be empty)
        self.rank = rank
        self.cache = {}

    def _writer(self, fname):
        info = self.files.get(fname)
        if info is not None:
            return f"rank {info['rank']} (host {info['host']})"
        return f"rank {fname.split('_', 1)[0]}"

    def _read(self, fname, key):
        full = os.path.join(self.path, fname)
        where = (f"the shard file {fname} of {self._writer(fname)} in {self.path!r} "
                 f"(rank {self.rank} reads it for {key!r})")
        if not os.path.isfile(full):
            raise FileNotFoundError(
                f"paddle_hl.distributed.load_state_dict: {where} is missing: every rank's file "
                "must be in the checkpoint folder (on several machines, a folder they share)")
        info = self.files.get(fname)
        size = os.path.getsize(full)
        short = (f"paddle_hl.distributed.load_state_dict: {where} has {size} bytes but "
                 f"{info['bytes']} were saved: it is truncated or was overwritten"
                 if info is not None and size != info["bytes"] else None)
        try:
            # the restricted unpickler first: a crafted file is refused by name, whatever
            # its size
            data = _load(full)
        except ValueError as e:
            if short is not None:
                raise ValueError(short) from None
            raise ValueError(f"paddle_hl.distributed.load_state_dict: {where} cannot be read: "
                             f"{e}") from None
        if short is not None:
            raise ValueError(short)
        if info is not None and _crc32(full) != info["crc32"]:
            raise ValueError(f"paddle_hl.distributed.load_state_dict: {where} is not the file "
                             "that was saved (its CRC-32 differs): damaged, or rewritten by "
                             "another save into the same folder")
        return data

    def block(self, fname, key, offsets):
        data = self.cache.get(fname)
        if data is None:
            data = self.cache[fname] = self._read(fname, key)
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
        ValueError: a global shape differs from the checkpoint's; or a shard file this rank
            reads is truncated or changed since the save (the error names the file and the
            rank and host that wrote it).
        FileNotFoundError: the folder, its metadata, or a shard file this rank reads is
            missing (named with the rank and host that wrote it).
    """
    flat = _flatten(state_dict, "load_state_dict")
    _group_info(process_group, coordinator_rank, "load_state_dict")
    meta = _read_metadata(os.fspath(path))
    saved, objects = meta["tensors"], meta["objects"]
    missing = sorted(k for k, v in flat.items() if isinstance(v, Tensor) and k not in saved)
    if missing:
        raise KeyError(f"paddle_hl.distributed.load_state_dict: {missing} not in the "
                       f"checkpoint {os.fspath(path)!r} (it holds {sorted(saved)})")
    rank = _coll.get_rank()
    files = _Files(os.fspath(path), meta.get("files", {}), rank)
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
        dtype = to_numpy(t._data).dtype
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
