"""paddle_hl.profiler: Paddle 2.6's profiler, with an inline timeline for notebooks.

``Profiler`` records every op (forward and backward), Layer calls, optimizer steps, DataLoader
reads, user ``RecordEvent`` ranges and per-step spans; ``summary()`` prints Paddle's tables,
``export()`` writes Chrome traces, and ``timeline()`` draws them inline in Jupyter.
"""

from ._statistic import SortedKeys, SummaryView
from .profiler import (
    Profiler,
    ProfilerState,
    ProfilerTarget,
    export_chrome_tracing,
    export_protobuf,
    make_scheduler,
)
from .utils import RecordEvent, load_profiler_result

__all__ = ["ProfilerState", "ProfilerTarget", "make_scheduler", "export_chrome_tracing",
           "export_protobuf", "Profiler", "RecordEvent", "load_profiler_result", "SortedKeys",
           "SummaryView"]
