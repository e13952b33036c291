"""CUDA streams and events (``paddle.device.cuda.Stream`` / ``Event`` / ``stream_guard``) over
the GPU backend's: paddle_hl's GPU kernels are launched on the backend's current stream, so
``stream_guard`` moves the ops inside it onto the given stream. Without a GPU they raise, as a
CPU build of Paddle does."""

from __future__ import annotations

import contextlib

from .. import backend
from ._ids import _device_id

__all__ = []


def _gpu(what):
    if not backend.gpu_available():
        raise RuntimeError(f"paddle.device.cuda.{what} can only be used on the GPU platform: "
                           f"paddle_hl has no GPU backend here ({backend.gpu_error()})")
    return backend.gpu_backend()


def _device_index(device, what):
    return _device_id(device, what)


class Stream:
    """A CUDA stream: kernels queued on it run in order, independently of other streams.

    Args:
        device (int|str|CUDAPlace, optional): the GPU (the current one by default).
        priority (int): 1 (high) or 2 (normal, the default).
    """

    def __init__(self, device=None, priority=2, stream_base=None):
        gpu = _gpu("Stream")
        if priority not in (1, 2):
            raise ValueError(f"paddle.device.cuda.Stream: priority must be 1 (high) or 2 "
                             f"(normal), got {priority!r}")
        if stream_base is not None:  # wrap an existing CuPy stream (current_stream)
            self._stream, self.device = stream_base, stream_base.device_id
            return
        self.device = _device_index(device, "Stream")
        self._stream = gpu.new_stream(self.device, high_priority=priority == 1)

    @property
    def cuda_stream(self):
        """The raw ``cudaStream_t`` handle (an int)."""
        return self._stream.ptr

    def wait_event(self, event):
        """Make later work on this stream wait until ``event`` has happened."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued so far on ``stream``."""
        self._stream.wait_event(stream._stream.record())

    def record_event(self, event=None):
        """Record ``event`` (a new one by default) on this stream; returns it."""
        event = event if event is not None else Event()
        event.record(self)
        return event

    def query(self):
        """Whether all work queued on this stream has finished."""
        return self._stream.done

    def synchronize(self):
        """Wait for all work queued on this stream."""
        self._stream.synchronize()

    def __eq__(self, other):
        return isinstance(other, Stream) and self._stream.ptr == other._stream.ptr

    def __hash__(self):
        return hash((self._stream.ptr, self.device))

    def __repr__(self):
        return f"<paddle.device.cuda.Stream object at gpu:{self.device}, {self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a point in a stream's work that other streams or the host can wait for.

    Args:
        enable_timing (bool): record times, for :meth:`elapsed_time`.
        blocking (bool): :meth:`synchronize` sleeps instead of spinning.
        interprocess (bool): shareable between processes (needs timing off).
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._event = _gpu("Event").new_event(blocking, enable_timing, interprocess)

    def record(self, stream=None):
        """Record the event on ``stream`` (the current stream by default)."""
        if stream is None:
            stream = current_stream()
        self._event.record(stream._stream)

    def query(self):
        """Whether the work before the event has finished."""
        return self._event.done

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        return _gpu("Event").event_elapsed_ms(self._event, end_event._event)

    def synchronize(self):
        """Wait until the event has happened."""
        self._event.synchronize()


def current_stream(device=None):
    """The stream paddle_hl's GPU ops are queued on now (on ``device``)."""
    gpu = _gpu("current_stream")
    idx = _device_index(device, "current_stream")
    return Stream(stream_base=gpu.current_stream(idx))


@contextlib.contextmanager
def stream_guard(stream):
    """Queue the GPU ops run inside the ``with`` block on ``stream``; None changes nothing.

    Args:
        stream (Stream|None): the stream.
    """
    if stream is None:
        yield
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"paddle.device.cuda.stream_guard: stream must be a "
                        f"paddle.device.cuda.Stream, got {type(stream).__name__}")
    with _gpu("stream_guard").on_stream(stream._stream):
        yield
