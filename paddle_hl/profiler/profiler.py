"""``Profiler``: scheduled recording windows over training steps, summaries and exports."""

from __future__ import annotations

import datetime
import os
import socket
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, Union
from warnings import warn

from . import _recorder, _timer, _views
from ._statistic import SortedKeys, build_text
from .utils import RecordEvent, TracerEventType

__all__ = []


class ProfilerState(Enum):
    """The state of a :class:`Profiler` at a step.

    - ``CLOSED``: nothing is recorded.
    - ``READY``: the profiler is prepared but records nothing yet (a warm-up step).
    - ``RECORD``: events are recorded.
    - ``RECORD_AND_RETURN``: the last step of a record window; at its end the data is returned
      (``on_trace_ready`` is called).
    """

    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class ProfilerTarget(Enum):
    """The devices a :class:`Profiler` traces (CPU always; GPU with CuPy and a CUDA GPU)."""

    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


def make_scheduler(*, closed: int, ready: int, record: int, repeat: int = 0,
                   skip_first: int = 0) -> Callable:
    """A scheduler: step number -> :class:`ProfilerState`.

    After ``skip_first`` CLOSED steps, each cycle has ``closed`` CLOSED steps, ``ready`` READY
    steps and ``record`` recording steps, the last of which is RECORD_AND_RETURN. The cycle runs
    ``repeat`` times (0: until the profiler stops), then everything is CLOSED.

    Args:
        closed (int): CLOSED steps per cycle (>= 0).
        ready (int): READY steps per cycle (>= 0).
        record (int): recording steps per cycle (> 0).
        repeat (int, optional): number of cycles; 0 repeats forever. Defaults to 0.
        skip_first (int, optional): CLOSED steps before the first cycle. Defaults to 0.

    Returns:
        Callable[[int], ProfilerState]: the scheduler.

    Example:
        >>> import paddle_hl.profiler as profiler
        >>> s = profiler.make_scheduler(closed=1, ready=1, record=4, repeat=1)
        >>> [s(i).name for i in range(7)]  # doctest: +NORMALIZE_WHITESPACE
        ['CLOSED', 'READY', 'RECORD', 'RECORD', 'RECORD', 'RECORD_AND_RETURN', 'CLOSED']
    """
    for name, v in (("closed", closed), ("ready", ready), ("record", record),
                    ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"make_scheduler: {name} must be an int, got {type(v).__name__}")
    if closed < 0 or ready < 0 or record <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(
            f"make_scheduler: invalid arguments closed={closed}, ready={ready}, "
            f"record={record}, repeat={repeat}, skip_first={skip_first}: record must be > 0 "
            "and the others >= 0")
    if ready == 0:
        warn("Profiler will record data after enabling profiler immediately, some data "
             "collected at the beginning of profiling may be 'noisy' because of overhead.",
             stacklevel=2)
    period = closed + ready + record

    def scheduler(step: int) -> ProfilerState:
        if step < 0:
            raise ValueError(f"scheduler: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerState.CLOSED
        step -= skip_first
        if repeat > 0 and step // period >= repeat:
            return ProfilerState.CLOSED
        pos = step % period
        if pos < closed:
            return ProfilerState.CLOSED
        if pos < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD if pos < period - 1 else ProfilerState.RECORD_AND_RETURN

    return scheduler


def _default_state_scheduler(step: int) -> ProfilerState:
    """Record from start to stop."""
    return ProfilerState.RECORD


def _make_dir(dir_name, where):
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as err:
        raise RuntimeError(f"{where}: can not create directory '{dir_name}' for saving "
                           f"profiling results ({err})") from None


def _trace_file(dir_name, worker_name, ext):
    if not worker_name:
        worker_name = f"host_{socket.gethostname()}pid_{os.getpid()}"
    now = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S_%f")
    return os.path.join(dir_name, f"{worker_name}_time_{now}.paddle_trace.{ext}")


def export_chrome_tracing(dir_name: str, worker_name: str | None = None) -> Callable:
    """An ``on_trace_ready`` callback that writes each window as a Chrome trace JSON file.

    Files are named ``{worker_name}_time_{timestamp}.paddle_trace.json`` in ``dir_name``
    (created now); open them in chrome://tracing or https://ui.perfetto.dev, or load them
    back with :func:`load_profiler_result`.

    Args:
        dir_name (str): the output directory.
        worker_name (str, optional): the file name prefix; defaults to
            ``host_{hostname}pid_{pid}``.

    Returns:
        Callable[[Profiler], None]: the callback.

    Example:
        >>> import paddle_hl.profiler as profiler
        >>> with profiler.Profiler(scheduler=(1, 3),
        ...                        on_trace_ready=profiler.export_chrome_tracing("./log")) as p:
        ...     for _ in range(4):
        ...         p.step()
    """
    _make_dir(dir_name, "export_chrome_tracing")

    def handle_fn(prof):
        prof.export(_trace_file(dir_name, worker_name, "json"), "json")

    return handle_fn


def export_protobuf(dir_name: str, worker_name: str | None = None) -> Callable:
    """An ``on_trace_ready`` callback that writes each window as a binary ``.pb`` file.

    The file (``{worker_name}_time_{timestamp}.paddle_trace.pb``) reloads with
    :func:`load_profiler_result`. It is paddle_hl's own compact format, not Paddle's internal
    protobuf schema.

    Args:
        dir_name (str): the output directory (created now).
        worker_name (str, optional): the file name prefix; defaults to
            ``host_{hostname}pid_{pid}``.

    Returns:
        Callable[[Profiler], None]: the callback.
    """
    _make_dir(dir_name, "export_protobuf")

    def handle_fn(prof):
        prof.export(_trace_file(dir_name, worker_name, "pb"), "pb")

    return handle_fn


def _supported_targets():
    from .. import backend

    targets = [ProfilerTarget.CPU, ProfilerTarget.CUSTOM_DEVICE]
    if backend.gpu_available():
        targets.insert(1, ProfilerTarget.GPU)
    return targets


class Profiler:
    """Records what training spends its time on, step by step.

    Events come from every op (forward and backward separately), Layer calls, optimizer steps,
    DataLoader reads, user :class:`RecordEvent` ranges and one ``ProfileStep#N`` span per step;
    on GPU, op kernel time is measured with CUDA events. ``step()`` moves the scheduler; at the
    end of each record window ``on_trace_ready(profiler)`` runs. In a notebook the profiler
    displays an interactive timeline and sortable summary tables (``timeline()``).

    Args:
        targets (list[ProfilerTarget], optional): devices to trace; defaults to all available.
        scheduler (Callable|tuple, optional): ``step -> ProfilerState`` (see
            :func:`make_scheduler`), or ``(start, end)`` to record steps in [start, end). None
            records from start to stop.
        on_trace_ready (Callable, optional): called with the profiler at the end of each
            record window; defaults to ``export_chrome_tracing('./profiler_log/')``.
        record_shapes (bool, optional): record each op's input shapes and dtypes.
        profile_memory (bool, optional): record op output allocations and their frees.
        timer_only (bool, optional): only time steps (reader cost, batch cost, ips) without
            tracing.
        emit_nvtx (bool, optional): accepted for compatibility (NVTX ranges are not emitted).
        custom_device_types (list, optional): accepted for compatibility.
        with_flops (bool, optional): count FLOPs of conv / matmul / elementwise ops from their
            shapes and add them to the operator table.

    Example:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.profiler as profiler
        >>> linear = paddle.nn.Linear(8, 2)
        >>> with profiler.Profiler(scheduler=(1, 3), on_trace_ready=lambda p: None) as p:
        ...     for _ in range(4):
        ...         linear(paddle.randn([4, 8])).mean().backward()
        ...         p.step()
        >>> p.summary(views=profiler.SummaryView.OverView)  # doctest: +SKIP
    """

    def __init__(self, *, targets: Iterable[ProfilerTarget] | None = None,
                 scheduler: Union[Callable[[int], ProfilerState], tuple, None] = None,
                 on_trace_ready: Callable[..., Any] | None = None,
                 record_shapes: bool | None = False, profile_memory: bool | None = False,
                 timer_only: bool | None = False, emit_nvtx: bool | None = False,
                 custom_device_types: list | None = [],  # noqa: B006  (Paddle's default)
                 with_flops: bool | None = False):
        supported = _supported_targets()
        if targets:
            chosen = []
            for t in targets:
                if not isinstance(t, ProfilerTarget):
                    raise TypeError(f"Profiler: targets must be ProfilerTarget members, got "
                                    f"{t!r}")
                if t not in supported:
                    warn(f"Profiling {t} is not supported in current context.", stacklevel=2)
                elif t not in chosen:
                    chosen.append(t)
            self.targets = chosen
        else:
            self.targets = supported
        if callable(scheduler):
            self.scheduler = scheduler
        elif isinstance(scheduler, (tuple, list)):
            if len(scheduler) != 2 or not all(isinstance(v, int) for v in scheduler) or \
                    scheduler[1] <= scheduler[0]:
                raise ValueError(f"Profiler: scheduler as a tuple must be (start_batch, "
                                 f"end_batch) with end_batch > start_batch, got {scheduler}")
            start, end = max(scheduler[0], 0), scheduler[1]
            if start >= 1:
                self.scheduler = make_scheduler(closed=start - 1, ready=1, record=end - start,
                                                repeat=1)
            else:
                self.scheduler = make_scheduler(closed=0, ready=0, record=end - start,
                                                repeat=1)
        elif scheduler is None:
            self.scheduler = _default_state_scheduler
        else:
            raise TypeError(f"Profiler: scheduler must be a callable, a (start, end) tuple or "
                            f"None, got {type(scheduler).__name__}")
        if on_trace_ready is None:
            self.on_trace_ready = export_chrome_tracing("./profiler_log/")
        elif callable(on_trace_ready):
            self.on_trace_ready = on_trace_ready
        else:
            raise TypeError(f"Profiler: on_trace_ready must be callable, got "
                            f"{type(on_trace_ready).__name__}")
        self.step_num = 0
        self.previous_state = ProfilerState.CLOSED
        self.current_state = self.scheduler(self.step_num)
        self.record_event = None
        self.profiler_result = None
        self.timer_only = bool(timer_only)
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_flops = bool(with_flops)
        self.emit_nvtx = bool(emit_nvtx)
        self.custom_device_types = list(custom_device_types or [])
        self._recorder = None
        self._span_indx = 0
        self._running = False

    # ---------------------------------------------------------------- context manager
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    # ---------------------------------------------------------------- recording windows
    def _open(self):
        """prepare + start: a fresh recorder receives the events from now on."""
        if _recorder.current is not None and _recorder.current is not self._recorder:
            raise RuntimeError("Profiler: another Profiler is already recording in this "
                               "process; stop it before starting a new one")
        rec = _recorder.Recorder(self.record_shapes, self.profile_memory,
                                 ProfilerTarget.GPU in self.targets, self.with_flops)
        rec.span_indx = self._span_indx
        self._recorder = rec
        rec.activate()

    def _close(self):
        """stop: the window's events become ``profiler_result``."""
        rec = self._recorder
        if rec is None:
            return
        self._recorder = None
        rec.deactivate()
        self.profiler_result = rec.finish()
        self._span_indx += 1

    def _recording(self):
        return self.current_state in (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)

    def _begin_step_span(self):
        self.record_event = RecordEvent(f"ProfileStep#{self.step_num}",
                                        TracerEventType.ProfileStep)
        self.record_event.begin()

    def _end_step_span(self):
        if self.record_event is not None:
            self.record_event.end()
            self.record_event = None

    def start(self):
        """Start the profiler and enter step 0 (recording if the scheduler says so).

        Example:
            >>> import paddle_hl.profiler as profiler
            >>> prof = profiler.Profiler(on_trace_ready=lambda p: None)
            >>> prof.start()
            >>> prof.step()
            >>> prof.stop()
        """
        if self._running:
            raise RuntimeError("Profiler.start: the profiler is already started")
        self._running = True
        _timer.benchmark().begin()
        _recorder.install_patches()
        if self.timer_only:
            return
        if self._recording():
            self._open()
        self._begin_step_span()

    def stop(self):
        """Stop the profiler; a window still recording is returned (``on_trace_ready``)."""
        if not self._running:
            return
        self._running = False
        _timer.benchmark().end()
        try:
            if self.timer_only:
                return
            self._end_step_span()
            if self.current_state == ProfilerState.READY:
                warn("Inproper Profiler state transform: READY->CLOSED, profiler will start "
                     "and stop without saving data", stacklevel=2)
            if self._recording() and self._recorder is not None:
                self._close()
                if self.on_trace_ready:
                    self.on_trace_ready(self)
        finally:
            _recorder.remove_patches()

    def step(self, num_samples: int | None = None):
        """Mark the end of a step: time it and move the scheduler to the next state.

        Args:
            num_samples (int, optional): the batch size of the step, used for ips (samples
                per second) in :meth:`step_info`. Defaults to None (steps per second).
        """
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples < 0):
            raise ValueError(f"Profiler.step: num_samples must be a non-negative int or None, "
                             f"got {num_samples!r}")
        _timer.benchmark().step(num_samples)
        if self.timer_only:
            return
        self._end_step_span()
        self.previous_state = self.current_state
        self.step_num += 1
        self.current_state = self.scheduler(self.step_num)
        self._transition()
        self._begin_step_span()

    def _transition(self):
        prev, cur = self.previous_state, self.current_state
        rec_states = (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)
        if prev == ProfilerState.RECORD_AND_RETURN:
            self._close()
            if cur in rec_states:
                self._open()
            if self.on_trace_ready:
                self.on_trace_ready(self)
            return
        if prev == ProfilerState.RECORD:
            if cur == ProfilerState.CLOSED:
                warn("Improper schedule: RECORD->CLOSED, profiler will not saving data",
                     stacklevel=2)
                self._discard()
            elif cur == ProfilerState.READY:
                warn("Improper schedule: RECORD->READY, profiler will stop and re-prepare",
                     stacklevel=2)
                self._discard()
            return
        if prev == ProfilerState.READY and cur == ProfilerState.CLOSED:
            warn("Improper schedule: READY->CLOSED, profiler will start and stop without "
                 "saving data", stacklevel=2)
        if cur in rec_states and self._recorder is None:
            self._open()

    def _discard(self):
        rec = self._recorder
        if rec is not None:
            self._recorder = None
            rec.deactivate()

    # ---------------------------------------------------------------- results
    def step_info(self, unit=None):
        """Average reader cost, batch cost and ips since the previous call, as a string.

        Args:
            unit (str, optional): the sample unit for ips (e.g. ``'images'``) when
                ``step(num_samples)`` is given. Defaults to ``'samples'``.

        Returns:
            str: e.g. ``' reader_cost: 0.00012 s batch_cost: 0.00441 s ips: 907.009 images/s'``.
        """
        return _timer.benchmark().step_info("samples" if unit is None else unit)

    def export(self, path="", format="json"):  # noqa: A002  (Paddle's argument name)
        """Write the last recorded window to ``path``.

        Args:
            path (str): the output file.
            format (str, optional): ``'json'`` (Chrome trace) or ``'pb'`` (binary, reloads
                with :func:`load_profiler_result`). Defaults to ``'json'``.
        """
        if format not in ("json", "pb"):
            raise ValueError(f"Profiler.export: format must be 'json' or 'pb', got {format!r}")
        if self.profiler_result is not None:
            self.profiler_result.save(path, format)

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                time_unit="ms", views=None):
        """Print the summary tables of the last recorded window.

        Args:
            sorted_by (SortedKeys, optional): order of the operator / kernel / user-defined
                tables. Defaults to ``SortedKeys.CPUTotal``.
            op_detail (bool, optional): list each op's GPU kernels under it. Defaults to True.
            thread_sep (bool, optional): one operator table per thread. Defaults to False.
            time_unit (str, optional): ``'s'``, ``'ms'``, ``'us'`` or ``'ns'``. Defaults to
                ``'ms'``.
            views (SummaryView|list[SummaryView], optional): the tables to print; None prints
                all of them.
        """
        if self.profiler_result is not None:
            text = build_text(self.profiler_result, sorted_by, op_detail, thread_sep,
                              time_unit, views, self.with_flops)
            if not _views.show_summary(self.profiler_result, text, sorted_by, op_detail,
                                       thread_sep, time_unit, views, self.with_flops):
                print(text)
        if self.with_flops:
            self._print_flops()

    def _print_flops(self):
        if self.profiler_result is None:
            return
        from ._statistic import op_flops

        totals = {}
        for e in self.profiler_result.host_events:
            if e.type == "Operator":
                f = op_flops(e)
                if f:
                    totals[e.name] = totals.get(e.name, 0) + f
        print(" Flops Profiler Begin ".center(100, "-"))
        for name, f in sorted(totals.items(), key=lambda kv: -kv[1]):
            print(f"{name:<40}{f:>20,}")
        print(f"{'Total':<40}{sum(totals.values()):>20,}")
        print("- Flops Profiler End -".center(100, "-"))

    # ---------------------------------------------------------------- notebook
    def timeline(self, **kwargs):
        """An interactive timeline of the last recorded window (displays in notebooks).

        Keyword arguments: ``max_events`` (draw at most this many events), ``summary`` (draw
        the sortable summary tables under the timeline) and the table options of
        :meth:`summary` (``sorted_by``, ``time_unit``, ``views``).
        """
        if self.profiler_result is None:
            raise RuntimeError("Profiler.timeline: nothing was recorded yet; run steps inside "
                               "the profiler (and stop it) first")
        kwargs.setdefault("with_flops", self.with_flops)
        return _views.timeline(self.profiler_result, **kwargs)

    def _repr_html_(self):
        if self.profiler_result is None:
            return (f"<div><b>paddle_hl Profiler</b>: state {self.current_state.name}, step "
                    f"{self.step_num}; nothing recorded yet.</div>")
        return self.timeline(summary=True)._repr_html_()  # the profiler shows everything
