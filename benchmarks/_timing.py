"""Timing shared by the benchmarks: wall-clock and CPU time of repeated calls."""

from __future__ import annotations

import time


def timed(fn, n):
    """Call ``fn()`` ``n`` times; returns ``(wall, cpu)``, two lists of seconds per call.

    CPU time is ``time.process_time``: every thread of this process, so on a machine shared
    with other processes it is the steadier number next to the wall-clock time."""
    wall, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return wall, cpu
