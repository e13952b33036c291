"""Profiling results: events, their per-thread trees, and the export formats.

A :class:`ProfilerResult` holds host events (ops, backward nodes, Forward / Backward /
Optimization / Dataloader / ProfileStep / user spans), device events (GPU kernel times from CUDA
events) and memory events, with times in nanoseconds since the epoch.

Formats:

- ``'json'``: Chrome Trace Event Format (``traceEvents`` with complete ``X`` events, ``i``
  memory events and ``M`` metadata), which chrome://tracing and Perfetto open.
- ``'pb'``: paddle_hl's compact binary file (a magic header, then zlib-compressed records).
  Real Paddle's ``.pb`` uses an internal protobuf schema; this format stands in for it under the
  same API and reloads with ``load_profiler_result``.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import zlib

from ..framework.io import write_file

__all__ = []

_MAGIC = b"PDHLPROF"
_VERSION = 1
HOST_TYPES = ("Operator", "Dataloader", "ProfileStep", "CudaRuntime", "UserDefined",
              "OperatorInner", "Forward", "Backward", "Optimization", "Communication",
              "PythonOp", "PythonUserDefined")
DEVICE_TYPES = ("Kernel", "Memcpy", "Memset")


class Event:
    """One timed event. ``device`` is None for host events, e.g. ``'gpu:0'`` for kernels."""

    __slots__ = ("name", "type", "start_ns", "end_ns", "tid", "args", "device", "corr",
                 "children", "parent", "kernels")

    def __init__(self, name, type, start_ns, end_ns, tid, args=None, device=None, corr=-1):
        self.name = name
        self.type = type
        self.start_ns = int(start_ns)
        self.end_ns = int(end_ns)
        self.tid = tid
        self.args = args or {}
        self.device = device
        self.corr = corr
        self.children = []
        self.parent = None
        self.kernels = []

    @property
    def duration_ns(self):
        return self.end_ns - self.start_ns

    def to_record(self):
        return [self.name, self.type, self.start_ns, self.end_ns, self.tid, self.args,
                self.device, self.corr]

    def __repr__(self):
        return (f"Event({self.name!r}, {self.type}, {self.duration_ns / 1e3:.3f} us, "
                f"tid={self.tid})")


class MemEvent:
    """One allocation (positive bytes) or free (negative bytes) at ``ts_ns``."""

    __slots__ = ("ts_ns", "tid", "kind", "nbytes", "place", "addr", "allocated", "peak",
                 "reserved", "peak_reserved")

    def __init__(self, ts_ns, tid, kind, nbytes, place, addr, allocated, peak, reserved=None,
                 peak_reserved=None):
        self.ts_ns = int(ts_ns)
        self.tid = tid
        self.kind = kind
        self.nbytes = int(nbytes)
        self.place = place
        self.addr = addr
        self.allocated = int(allocated)
        self.peak = int(peak)
        self.reserved = int(allocated if reserved is None else reserved)
        self.peak_reserved = int(peak if peak_reserved is None else peak_reserved)

    def to_record(self):
        return [self.ts_ns, self.tid, self.kind, self.nbytes, self.place, self.addr,
                self.allocated, self.peak, self.reserved, self.peak_reserved]


class ProfilerResult:
    """The data of one profiling window; returned by ``load_profiler_result``.

    Attributes:
        events (list[Event]): host and device events, sorted by start time.
        memory_events (list[MemEvent]): allocations and frees (``profile_memory=True``).
        extra_info (dict): process id, thread names, CPU utilization, span index.
    """

    def __init__(self, events, memory_events=(), extra_info=None):
        self.events = sorted(events, key=lambda e: (e.start_ns, -e.end_ns))
        self.memory_events = list(memory_events)
        self.extra_info = dict(extra_info or {})
        self._trees = None

    # ---------------------------------------------------------------- Paddle's accessors
    def get_data(self):
        """Per-thread event trees: ``{tid: [top-level Event, ...]}`` (children nested)."""
        return self.trees()

    def get_extra_info(self):
        """Thread names, CPU utilization and other facts about the run (a dict)."""
        return dict(self.extra_info)

    def get_span_indx(self):
        """The index of the recording window this result holds (0 for the first)."""
        return int(self.extra_info.get("span_indx", 0))

    def get_version(self):
        """The version string of the file format."""
        return f"paddle_hl-profiler-{_VERSION}"

    def get_device_property(self):
        """Device properties recorded with the result (a dict; empty on CPU)."""
        return dict(self.extra_info.get("device_property", {}))

    # ---------------------------------------------------------------- structure
    @property
    def host_events(self):
        return [e for e in self.events if e.device is None]

    @property
    def device_events(self):
        return [e for e in self.events if e.device is not None]

    def trees(self):
        """Nest each thread's host events by time containment; attach kernels to their op."""
        if self._trees is not None:
            return self._trees
        by_tid = {}
        for e in self.events:
            e.children = []
            e.parent = None
            e.kernels = []
            if e.device is None:
                by_tid.setdefault(e.tid, []).append(e)
        for evs in by_tid.values():
            stack = []
            for e in evs:  # sorted by (start, -end): a parent comes before its children
                while stack and not (stack[-1].start_ns <= e.start_ns
                                     and e.end_ns <= stack[-1].end_ns):
                    stack.pop()
                if stack:
                    e.parent = stack[-1]
                    stack[-1].children.append(e)
                stack.append(e)
        corr = self._by_corr()
        for e in self.events:
            if e.device is not None:
                op = corr.get(e.corr)
                if op is not None:
                    op.kernels.append(e)
        self._trees = {tid: [e for e in evs if e.parent is None] for tid, evs in by_tid.items()}
        return self._trees

    def _by_corr(self):
        m = getattr(self, "_corr_map", None)
        if m is None:
            m = self._corr_map = {e.args.get("id"): e for e in self.events
                                  if e.device is None and "id" in e.args}
        return m

    def innermost(self, tid, ts_ns):
        """The innermost host event of thread ``tid`` that contains ``ts_ns`` (or None)."""
        trees = self.trees()
        index = getattr(self, "_starts", None)
        if index is None:
            index = self._starts = {}
            for t in trees:
                evs = [e for e in self.events if e.device is None and e.tid == t]
                index[t] = ([e.start_ns for e in evs], evs)
        if tid not in index:
            return None
        starts, evs = index[tid]
        i = bisect.bisect_right(starts, ts_ns) - 1
        if i < 0:
            return None
        e = evs[i]
        while e is not None and e.end_ns < ts_ns:
            e = e.parent
        return e

    # ---------------------------------------------------------------- summary / views
    def summary(self, sorted_by=None, op_detail=True, thread_sep=False, time_unit="ms",
                views=None):
        """Print Paddle's summary tables for this result (see ``Profiler.summary``)."""
        from . import _views
        from ._statistic import SortedKeys, build_text

        sorted_by = sorted_by or SortedKeys.CPUTotal
        text = build_text(self, sorted_by, op_detail, thread_sep, time_unit, views)
        if not _views.show_summary(self, text, sorted_by, op_detail, thread_sep, time_unit,
                                   views):
            print(text)

    def timeline(self, **kwargs):
        """An interactive timeline of this result for notebooks (see notebook.timeline)."""
        from . import _views

        return _views.timeline(self, **kwargs)

    def _repr_html_(self):
        return self.timeline(summary=True)._repr_html_()  # the result shows everything

    # ---------------------------------------------------------------- saving
    def save(self, path, format="json"):  # noqa: A002  (Paddle's argument name)
        """Write the result to ``path`` as ``'json'`` (Chrome trace) or ``'pb'`` (binary)."""
        if format not in ("json", "pb"):
            raise ValueError(f"ProfilerResult.save: format must be 'json' or 'pb', got "
                             f"{format!r}")
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        if format == "json":
            trace = json.dumps(self.chrome_trace()).encode()
            write_file(path, lambda f: f.write(trace))
            return
        payload = {
            "version": _VERSION,
            "events": [e.to_record() for e in self.events],
            "memory": [m.to_record() for m in self.memory_events],
            "extra_info": self.extra_info,
        }
        data = _MAGIC + zlib.compress(json.dumps(payload, separators=(",", ":")).encode(), 6)
        # through a temporary file and a rename: a failed write keeps the previous result
        write_file(path, lambda f: f.write(data))

    def chrome_trace(self):
        """The result as a Chrome Trace Event Format dict."""
        pid = int(self.extra_info.get("pid", os.getpid()))
        names = self.extra_info.get("thread_names", {})
        t0 = min((e.start_ns for e in self.events), default=0)
        out = []
        tids = {}
        devices = {}
        for e in self.events:
            if e.device is None:
                p, t = pid, _int_tid(e.tid)
                tids[t] = e.tid
            else:
                p = devices.setdefault(e.device, pid + 1 + len(devices))
                t = int(e.args.get("stream", 0))
            args = {"start_time": f"{(e.start_ns - t0) / 1e3:.3f} us",
                    "end_time": f"{(e.end_ns - t0) / 1e3:.3f} us"}
            args.update(e.args)
            out.append({"name": e.name, "ph": "X", "cat": e.type, "pid": p, "tid": t,
                        "ts": e.start_ns / 1e3, "dur": (e.end_ns - e.start_ns) / 1e3,
                        "args": args})
        for m in self.memory_events:
            out.append({"name": "[memory]", "ph": "i", "s": "t", "cat": m.kind, "pid": pid,
                        "tid": _int_tid(m.tid), "ts": m.ts_ns / 1e3,
                        "args": {"place": m.place, "addr": str(m.addr),
                                 "increase_bytes": m.nbytes, "current_allocated": m.allocated,
                                 "current_reserved": m.reserved, "peak_allocated": m.peak,
                                 "peak_reserved": m.peak_reserved}})
        out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"name": f"Process {pid} (CPU)"}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"sort_index": 0}})
        for t, raw in sorted(tids.items()):
            nm = names.get(str(raw), names.get(raw, "Thread"))
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": t,
                        "args": {"name": f"thread {raw}:{nm}"}})
        for i, (dev, p) in enumerate(devices.items()):
            out.append({"name": "process_name", "ph": "M", "pid": p, "tid": 0,
                        "args": {"name": f"Deivce {dev.upper()}".replace("Deivce", "Device")}})
            out.append({"name": "process_sort_index", "ph": "M", "pid": p, "tid": 0,
                        "args": {"sort_index": i + 1}})
        extra = {str(k): v for k, v in self.extra_info.items()
                 if k not in ("thread_names", "device_property")}
        extra.update({str(k): v for k, v in names.items()})
        return {"displayTimeUnit": "ms", "schemaVersion": "1.0.2",
                "span_indx": str(self.get_span_indx()), "traceEvents": out,
                "ExtraInfo": {k: str(v) for k, v in extra.items()}}

    # ---------------------------------------------------------------- loading
    @classmethod
    def load(cls, filename):
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"load_profiler_result: filename must be a path, got "
                            f"{type(filename).__name__}")
        if not os.path.isfile(filename):
            raise FileNotFoundError(f"load_profiler_result: no such file: '{filename}'")
        with open(filename, "rb") as f:
            raw = f.read()
        if raw.startswith(_MAGIC):
            try:
                payload = json.loads(zlib.decompress(raw[len(_MAGIC):]))
            except (zlib.error, ValueError) as err:
                raise ValueError(f"load_profiler_result: '{filename}' is a damaged "
                                 f"paddle_hl profiler file ({err})") from None
            events = [Event(*r) for r in payload["events"]]
            mem = [MemEvent(*r) for r in payload.get("memory", [])]
            return cls(events, mem, payload.get("extra_info"))
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ValueError(
                f"load_profiler_result: '{filename}' is neither a paddle_hl '.pb' profiler "
                "file nor a Chrome-trace JSON file (protobuf files written by real Paddle "
                "cannot be read without Paddle)") from None
        return cls.from_chrome(data)

    @classmethod
    def from_chrome(cls, data):
        """Rebuild a result from a Chrome trace dict (paddle_hl's or real Paddle's)."""
        evs = data["traceEvents"] if isinstance(data, dict) else data
        procs = {}
        threads = {}
        for e in evs:
            if e.get("ph") == "M" and e.get("name") == "process_name":
                procs[e.get("pid")] = str(e.get("args", {}).get("name", ""))
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                threads[e.get("tid")] = str(e.get("args", {}).get("name", ""))
        events = []
        mem = []
        for e in evs:
            ph = e.get("ph")
            if ph == "X":
                pname = procs.get(e.get("pid"), "")
                cat = e.get("cat", "UserDefined")
                args = dict(e.get("args") or {})
                args.pop("start_time", None)
                args.pop("end_time", None)
                ts = float(e["ts"]) * 1e3
                dur = float(e.get("dur", 0)) * 1e3
                name = _strip_duration(e.get("name", ""))
                if "GPU" in pname.upper() or cat in DEVICE_TYPES:
                    m = re.search(r"(gpu|GPU):?\s*(\d+)", pname)
                    dev = f"gpu:{m.group(2)}" if m else "gpu:0"
                    args.setdefault("stream", e.get("tid", 0))
                    events.append(Event(name, cat, ts, ts + dur, e.get("tid"), args, dev,
                                        args.get("correlation", -1)))
                else:
                    events.append(Event(name, cat, ts, ts + dur, _tid_key(e.get("tid")), args))
            elif ph == "i" and e.get("cat") in ("Allocate", "Free", "ReservedAllocate",
                                                "ReservedFree"):
                a = e.get("args", {})
                mem.append(MemEvent(float(e["ts"]) * 1e3, _tid_key(e.get("tid")),
                                    "Allocate" if "Allocate" in e["cat"] else "Free",
                                    a.get("increase_bytes", 0), a.get("place", "Place(cpu)"),
                                    a.get("addr", 0), a.get("current_allocated", 0),
                                    a.get("peak_allocated", 0), a.get("current_reserved"),
                                    a.get("peak_reserved")))
        extra = {}
        if isinstance(data, dict):
            for k, v in (data.get("ExtraInfo") or {}).items():
                extra[k] = v
            extra["span_indx"] = data.get("span_indx", 0)
        names = {}
        for t, nm in threads.items():
            names[str(_tid_key(t))] = nm.split(":", 1)[-1] if ":" in nm else nm
        extra["thread_names"] = names
        return cls(events, mem, extra)


def _strip_duration(name):
    """Paddle appends ``[1.234 ms]`` to event names in its traces; drop it."""
    return re.sub(r"\[[0-9.]+ ?(ns|us|ms|s)\]$", "", name)


def _tid_key(tid):
    """Paddle writes tids as ``'1234(Python)'``; the numeric part identifies the thread."""
    if isinstance(tid, str):
        m = re.match(r"\d+", tid)
        if m:
            return int(m.group(0))
    return tid


def _int_tid(tid):
    """Perfetto wants integer tids; thread idents are large but fit a JS safe integer."""
    if isinstance(tid, int):
        return tid % (1 << 31)
    return zlib.crc32(str(tid).encode()) % (1 << 31)
