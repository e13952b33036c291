"""GPU indices from the forms Paddle's device functions accept."""

from __future__ import annotations

import numbers

from .. import backend

__all__ = []


def _device_id(device, api: str) -> int:
    """A GPU index from None (current), an int, 'gpu:N' / 'cuda:N' or a CUDAPlace."""
    from ..framework.place import Place, current_place

    if device is None:
        place = current_place()
        idx = place.index if place.kind == "gpu" else 0
    elif isinstance(device, Place):
        if device.kind != "gpu":
            raise ValueError(f"paddle.device.cuda.{api}: expected a CUDAPlace, got {device}")
        idx = device.index
    elif isinstance(device, numbers.Integral) and not isinstance(device, bool):
        idx = int(device)
    elif isinstance(device, str) and device.startswith(("gpu", "cuda")):
        try:
            idx = int(device.split(":", 1)[1]) if ":" in device else 0
        except ValueError:
            raise ValueError(f"paddle.device.cuda.{api}: cannot parse device {device!r}; "
                             "expected 'gpu:N'") from None
    else:
        raise ValueError(f"paddle.device.cuda.{api}: the device must be a CUDAPlace, an int or "
                         f"a str like 'gpu:x', but received {device!r}")
    n = backend.device_count()
    if not 0 <= idx < n:
        raise ValueError(f"paddle.device.cuda.{api}: device id {idx} is out of range; {n} "
                         "GPU(s) are visible")
    return idx
