"""The event recorder behind the profiler, and the hooks that feed it.

While a Profiler is in a RECORD state, one :class:`Recorder` is ``current``. It collects raw
tuples only (no names, no formatting) so that recording stays cheap; ``Recorder.finish`` turns
them into a ProfilerResult afterwards.

Sources of events:

- every op through the op wrapper (``framework.state.prof_hook``), with input shapes and dtypes
  when asked, output allocations with ``profile_memory``, and CUDA-event kernel times on GPU;
- every backward node and each whole backward pass (``framework.state.prof_bw``);
- ``Layer.__call__`` (Forward), ``Optimizer.step`` / ``minimize`` (Optimization) and the
  DataLoader iterators' ``__next__`` (Dataloader, and the reader cost of ``step_info``). These
  are wrapped only while a profiler runs and restored afterwards, so they cost nothing when off;
- user :class:`RecordEvent` ranges and the profiler's ``ProfileStep#N`` spans.
"""

from __future__ import annotations

import os
import threading
import time
import weakref

from .. import backend
from ..backend import plans as _plans
from ..framework import state
from ._result import Event, MemEvent, ProfilerResult

__all__ = []

perf = time.perf_counter
_ident = threading.get_ident
# Op events keep the Thread object (not just its ident) so that a thread that ended before the
# profiler stopped still gets its name in the result.
_thread = threading.current_thread

# The recorder receiving events, or None. Read on every hooked call.
current = None


def _op_name(fn):
    return getattr(fn, "op_name", None) or fn.__name__.strip("_")


def _describe(arrays):
    """Input shapes and dtypes of an op (Tensors' arrays only; constants are skipped)."""
    shapes = []
    dtypes = []
    for a in arrays:
        shp = getattr(a, "shape", None)
        if shp is None or not hasattr(a, "dtype"):
            continue
        shapes.append(list(shp))
        dtypes.append(str(a.dtype))
    return shapes, dtypes


def _out_shapes(out):
    if type(out) is tuple:
        return [list(o.shape) for o in out if hasattr(o, "shape")]
    return [list(out.shape)] if hasattr(out, "shape") else []


class Recorder:
    """Collects the raw events of one RECORD window."""

    def __init__(self, record_shapes=False, profile_memory=False, gpu=False, with_flops=False):
        # (kernel or node fn, t0, t1, tid, phase 0 fwd/1 bwd, info or None); info: (input
        # shapes, dtypes, output shapes) with record_shapes, then the plan label (or None)
        self.ops = []
        self.spans = []   # (name, type name, t0, t1, tid, args or None)
        self.kernels = []  # (index into ops, start event, end event, device id)
        self.mem = []     # (t, tid, 'Allocate'|'Free', nbytes, place, addr, allocated, peak)
        self.record_shapes = bool(record_shapes or with_flops)
        self.profile_memory = bool(profile_memory)
        self.gpu = gpu
        self._allocated = {}
        self._peak = {}
        self._finalizers = []
        self.t_perf0 = perf()
        self.t_wall0 = time.time_ns()
        self.cpu0 = time.process_time()
        self.sys0 = _system_cpu_times()
        self.t_perf1 = None
        self.closed = False
        self._gpu = None
        self._ref_event = None
        if gpu:
            if not backend.gpu_available():
                self.gpu = False
            else:
                self._gpu = backend.gpu_backend()
                # device timestamps are measured from this event, recorded "now" on the host
                self._ref_event = self._gpu.record_event()
                self._ref_host = perf()
        self.op_hook = self._make_op_hook()

    # ---------------------------------------------------------------- the op wrapper hook
    def _make_op_hook(self):
        ops_append = self.ops.append
        # kernels that run a convolution or pooling plan: their event carries the plan's label
        labelled = _plans.LABELLED
        take_label = _plans.take_label
        if not (self.record_shapes or self.profile_memory or self.gpu):
            # the common case, kept as small as possible (the overhead budget is per op)
            def hook(fn, arrays, attrs):
                t0 = perf()
                out, bw = fn(*arrays, **attrs)
                t1 = perf()
                info = (None, None, None, take_label()) if fn in labelled else None
                ops_append((fn, t0, t1, _thread(), 0, info))
                return out, bw

            return hook

        shapes = self.record_shapes
        memory = self.profile_memory
        gpu = self._gpu if self.gpu else None

        def full_hook(fn, arrays, attrs):
            ev0 = ev1 = None
            on_gpu = gpu is not None and any(backend.is_gpu_array(a) for a in arrays)
            if on_gpu:
                ev0 = gpu.record_event()
            t0 = perf()
            out, bw = fn(*arrays, **attrs)
            t1 = perf()
            if on_gpu:
                ev1 = gpu.record_event()
            info = None
            if shapes:
                ins, dts = _describe(arrays)
                info = (ins, dts, _out_shapes(out))
            if fn in labelled:
                info = (*(info or (None, None, None)), take_label())
            idx = len(self.ops)
            ops_append((fn, t0, t1, _thread(), 0, info))
            if on_gpu:
                self.kernels.append((idx, ev0, ev1, gpu.current_device()))
            if memory:
                self._track(out, t1)
            return out, bw

        return full_hook

    # ---------------------------------------------------------------- backward hooks
    def node(self, node, bw, grads):
        """Run one backward closure and record it as ``<op>_grad`` (engine hook)."""
        gpu = self._gpu if self.gpu else None
        on_gpu = gpu is not None and any(backend.is_gpu_array(g) for g in grads)
        ev0 = gpu.record_event() if on_gpu else None
        t0 = perf()
        res = bw(*grads)
        t1 = perf()
        if on_gpu:  # the backward's kernels, timed on the device like the forward's
            self.kernels.append((len(self.ops), ev0, gpu.record_event(), gpu.current_device()))
        # a plan's adjoints note its label as its forward does
        info = (None, None, None, _plans.take_label()) if node.fn in _plans.LABELLED else None
        self.ops.append((node.fn, t0, t1, _thread(), 1, info))
        if self.profile_memory:
            self._track(tuple(r for r in res if r is not None), t1)
        return res

    def span(self, run, *args):
        """Run a whole backward pass and record it as one Backward span (engine hook)."""
        t0 = perf()
        try:
            return run(*args)
        finally:
            self.spans.append(("Gradient Backward", "Backward", t0, perf(), _ident(), None))

    # ---------------------------------------------------------------- memory
    def _track(self, out, t):
        """Record allocations of the arrays an op returned, and their frees (weakref)."""
        outs = out if type(out) is tuple else (out,)
        tid = _ident()
        for a in outs:
            nbytes = getattr(a, "nbytes", None)
            if nbytes is None or getattr(a, "base", None) is not None:
                continue  # views own no memory
            place = (f"Place(gpu:{backend.for_array(a).device_of(a)})" if backend.is_gpu_array(a)
                     else "Place(cpu)")
            self._mem_event(t, tid, "Allocate", nbytes, place, id(a))
            try:
                self._finalizers.append(weakref.finalize(a, self._freed, nbytes, place, id(a)))
            except TypeError:
                pass

    def _freed(self, nbytes, place, addr):
        if not self.closed:
            self._mem_event(perf(), _ident(), "Free", -nbytes, place, addr)

    def _mem_event(self, t, tid, kind, nbytes, place, addr):
        cur = self._allocated.get(place, 0) + nbytes
        self._allocated[place] = cur
        peak = max(self._peak.get(place, 0), cur)
        self._peak[place] = peak
        self.mem.append((t, tid, kind, nbytes, place, addr, cur, peak))

    # ---------------------------------------------------------------- activation
    def activate(self):
        global current
        current = self
        state.set_profiler(self.op_hook, self)  # process-wide: ops of every thread are recorded

    def deactivate(self):
        global current
        if current is self:
            current = None
            state.set_profiler(None, None)
        self.t_perf1 = perf()
        self.cpu1 = time.process_time()
        self.sys1 = _system_cpu_times()
        self.closed = True
        # detached finalizers: a long run does not keep one callback per array it ever made
        for f in self._finalizers:
            f.detach()
        self._finalizers = []

    def finish(self):
        """The ProfilerResult of this window (after :meth:`deactivate`)."""
        return from_recorder(self)

    def gpu_times(self):
        """(op index, device id, device start offset s, duration s) of each timed GPU op."""
        if not self.kernels:
            return []
        seconds = self._gpu.event_seconds  # waits for the later event (done after the first)
        res = []
        for idx, e0, e1, dev in self.kernels:
            start = seconds(self._ref_event, e0)
            dur = seconds(e0, e1)
            res.append((idx, dev, self._ref_host + start, dur))
        return res

    def thread_names(self):
        names = {t.ident: t.name for t in threading.enumerate()}
        return names


def _system_cpu_times():
    """(busy, total) jiffies of the whole machine, or None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()[1:]
    except OSError:
        return None
    vals = [int(v) for v in parts]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    total = sum(vals[:8])
    return total - idle, total


def cpu_utilization(rec):
    """(process utilization, system utilization or None) over the recorder's window."""
    wall = max((rec.t_perf1 or perf()) - rec.t_perf0, 1e-9)
    # like Paddle: CPU time over wall time, so a process busy on n cores reaches n * 100%
    proc = (rec.cpu1 - rec.cpu0) / wall
    system = None
    if rec.sys0 is not None and rec.sys1 is not None:
        busy = rec.sys1[0] - rec.sys0[0]
        total = rec.sys1[1] - rec.sys0[1]
        system = busy / total if total > 0 else None
    return proc, system


# ------------------------------------------------------------------------ wrapped framework calls
_patched = {}
_patch_users = 0
_patch_lock = threading.Lock()


def _timed(orig, name_of, type_name):
    def wrapper(self, *args, **kwargs):
        rec = current
        if rec is None:
            return orig(self, *args, **kwargs)
        t0 = perf()
        try:
            return orig(self, *args, **kwargs)
        finally:
            rec.spans.append((name_of(self), type_name, t0, perf(), _ident(), None))

    wrapper.__wrapped__ = orig
    wrapper.__name__ = orig.__name__
    wrapper.__doc__ = orig.__doc__
    return wrapper


def _reader(orig, name):
    from . import _timer

    def __next__(self):  # noqa: N807
        t0 = perf()
        out = orig(self)
        t1 = perf()
        _timer.benchmark().after_reader(t1 - t0)
        rec = current
        if rec is not None:
            rec.spans.append((name, "Dataloader", t0, t1, _ident(), None))
        return out

    __next__.__wrapped__ = orig
    return __next__


def _all_subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def _targets():
    """(class, attribute, wrapper factory) of every framework call the profiler wraps."""
    import sys

    res = []
    layers = sys.modules.get("paddle_hl.nn.layer.layers")
    if layers is None:
        from ..nn.layer import layers
    res.append((layers.Layer, "__call__",
                lambda f: _timed(f, lambda self: type(self).__name__, "Forward")))
    from ..optimizer.optimizer import Optimizer

    for cls in _all_subclasses(Optimizer):
        for attr in ("step", "minimize"):
            if attr in cls.__dict__:
                res.append((cls, attr, lambda f: _timed(f, lambda self: "Optimization Step",
                                                        "Optimization")))
    from ..io import dataloader

    res.append((dataloader._SingleProcessIter, "__next__",
                lambda f: _reader(f, "_DataLoaderIterSingleProcess")))
    res.append((dataloader._MultiProcessIter, "__next__",
                lambda f: _reader(f, "_DataLoaderIterMultiProcess")))
    return res


def install_patches():
    """Wrap Layer calls, optimizer steps and DataLoader reads (reference counted)."""
    global _patch_users
    with _patch_lock:
        _patch_users += 1
        if _patch_users > 1:
            return
        for cls, attr, make in _targets():
            orig = cls.__dict__[attr]
            _patched[(cls, attr)] = orig
            setattr(cls, attr, make(orig))


def remove_patches():
    """Undo :func:`install_patches` once its last user is done."""
    global _patch_users
    with _patch_lock:
        if _patch_users == 0:
            return
        _patch_users -= 1
        if _patch_users:
            return
        for (cls, attr), orig in _patched.items():
            setattr(cls, attr, orig)
        _patched.clear()


def from_recorder(rec):
    """Turn a stopped Recorder's raw tuples into a ProfilerResult."""
    p0 = rec.t_perf0
    w0 = rec.t_wall0

    def ns(t):
        return w0 + int(round((t - p0) * 1e9))

    names = {}
    events = []
    threads = {}
    for i, (fn, t0, t1, th, phase, info) in enumerate(rec.ops):
        tid = th.ident
        threads[tid] = th.name
        nm = names.get(fn)
        if nm is None:
            nm = names[fn] = _op_name(fn)
        args = {"id": i, "phase": "backward" if phase else "forward"}
        if info is not None:
            if info[0] is not None:
                args["input_shapes"] = info[0]
                args["input_dtypes"] = info[1]
                args["output_shapes"] = info[2]
            if len(info) > 3 and info[3] is not None:
                args["plan"] = info[3]  # which algorithm ran (backend/plans.py)
        events.append(Event(nm + "_grad" if phase else nm, "Operator", ns(t0), ns(t1), tid,
                            args))
    for name, typ, t0, t1, tid, args in rec.spans:
        events.append(Event(name, typ, ns(t0), ns(t1), tid, dict(args) if args else None))
    for idx, dev, start, dur in rec.gpu_times():
        op = events[idx]
        events.append(Event(op.name, "Kernel", ns(start), ns(start + dur), 0,
                            {"stream": 0, "correlation": idx}, f"gpu:{dev}", idx))
    mem = []
    for t, tid, kind, nbytes, place, addr, cur, peak in rec.mem:
        mem.append(MemEvent(ns(t), tid, kind, nbytes, place, addr, cur, peak))
    proc, system = cpu_utilization(rec)
    threads.update(rec.thread_names())
    extra = {"pid": os.getpid(), "thread_names": {str(k): v for k, v in threads.items()},
             "Process Cpu Utilization": f"{proc:.6f}",
             "span_indx": getattr(rec, "span_indx", 0)}
    if system is not None:
        extra["System Cpu Utilization"] = f"{system:.6f}"
    return ProfilerResult(events, mem, extra)
