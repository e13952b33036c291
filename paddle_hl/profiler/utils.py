"""User-side recording helpers: ``RecordEvent``, ``load_profiler_result`` and the event types."""

from __future__ import annotations

import threading
from contextlib import ContextDecorator
from enum import Enum
from typing import Any
from warnings import warn

from . import _recorder

__all__ = []


class TracerEventType(Enum):
    """The kinds of events the profiler records (the values of Paddle's ``TracerEventType``)."""

    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14


# The types a user RecordEvent may carry (the others are produced by the framework itself).
_ALLOWED_TYPES = (TracerEventType.Dataloader, TracerEventType.ProfileStep,
                  TracerEventType.Forward, TracerEventType.Backward,
                  TracerEventType.Optimization, TracerEventType.PythonOp,
                  TracerEventType.PythonUserDefined)


class RecordEvent(ContextDecorator):
    """Record a user-defined time range; it shows in the trace and in the UserDefined table.

    Works as a context manager, as a decorator, or with explicit ``begin()`` / ``end()``.
    Ranges nest: an inner RecordEvent (or any op run inside the range) is drawn under the outer
    one. It takes effect only while a :class:`Profiler` is in a RECORD state; otherwise it costs
    one check.

    Args:
        name (str): the name of the range.
        event_type (TracerEventType, optional): the event type; reserved for internal use.
            Defaults to ``TracerEventType.PythonUserDefined``.

    Example:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.profiler as profiler
        >>> with profiler.RecordEvent("make_data"):
        ...     x = paddle.randn([3])
        >>> ev = profiler.RecordEvent("step")
        >>> ev.begin()
        >>> y = x + 1
        >>> ev.end()
    """

    def __init__(self, name: str,
                 event_type: TracerEventType = TracerEventType.PythonUserDefined):
        if not isinstance(name, str):
            raise TypeError(f"RecordEvent: name must be a str, got {type(name).__name__}")
        self.name = name
        self.event_type = event_type
        self._rec = None
        self._t0 = 0.0
        self._tid = 0

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any):
        self.end()

    def begin(self):
        """Mark the start of the range (a no-op unless a profiler is recording)."""
        rec = _recorder.current
        if rec is None:
            self._rec = None
            return
        if self.event_type not in _ALLOWED_TYPES:
            warn(f"RecordEvent: only the event types {[t.name for t in _ALLOWED_TYPES]} can "
                 f"be recorded, got {self.event_type}; this range is not recorded", stacklevel=2)
            self._rec = None
            return
        self._rec = rec
        self._tid = threading.get_ident()
        self._t0 = _recorder.perf()

    def end(self):
        """Mark the end of the range started by :meth:`begin`."""
        rec = self._rec
        if rec is None:
            return
        self._rec = None
        # A range that began while recording is kept even if the step window closed meanwhile:
        # the recorder it belongs to still holds the rest of that window's events.
        rec.spans.append((self.name, self.event_type.name, self._t0, _recorder.perf(),
                          self._tid, None))


def load_profiler_result(filename: str):
    """Load profiling data saved by ``Profiler.export`` (``'pb'`` or chrome ``'json'``).

    Chrome-trace JSON files written by real Paddle 2.6 load as well (their event names and
    categories are read back; Paddle's own protobuf files are not readable without Paddle).

    Args:
        filename (str): the file written by ``export`` / ``export_protobuf`` /
            ``export_chrome_tracing``.

    Returns:
        ProfilerResult: the events, with ``summary()``, ``save()``, ``timeline()`` and an HTML
        view in notebooks.

    Example:
        >>> import paddle_hl.profiler as profiler
        >>> with profiler.Profiler(on_trace_ready=profiler.export_protobuf("./log")) as p:
        ...     p.step()
        >>> # result = profiler.load_profiler_result("./log/<file>.paddle_trace.pb")
    """
    from ._result import ProfilerResult

    return ProfilerResult.load(filename)
