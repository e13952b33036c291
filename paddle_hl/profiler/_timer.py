"""Step timing for ``Profiler.step_info`` and ``timer_only``: reader cost, batch cost, ips.

Semantics follow Paddle 2.6: the reader cost is the time spent in the DataLoader's ``__next__``;
the batch cost is the time between two ``Profiler.step()`` calls (reader included); ips is
samples per second when ``step(num_samples)`` gives a batch size, else steps per second.
``step_info`` reports the averages since its previous call. When the profiler stops after more
than 10 steps, a "Perf Summary" of the steps after the first 10 is printed.
"""

from __future__ import annotations

import time

__all__ = []

_SKIP = 10  # the first steps are warm-up: left out of the final summary


class _Window:
    """Averages between two ``step_info`` calls."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.reader_total = 0.0
        self.reader_n = 0
        self.batch_total = 0.0
        self.batch_n = 0
        self.samples = 0


class _Run:
    """Timing of one profiler run (start to stop)."""

    def __init__(self):
        self.window = _Window()
        self.iters = 0
        self.per_sample = True
        self.unit = "samples/s"
        self.reader = [0.0, float("inf"), 0.0]  # max, min, total after the warm-up steps
        self.batch = [0.0, float("inf"), 0.0]
        self.speed = [0.0, float("inf")]
        self.samples = 0

    @staticmethod
    def _update(rec, value):
        rec[0] = max(rec[0], value)
        rec[1] = min(rec[1], value)
        if len(rec) > 2:
            rec[2] += value

    def add_reader(self, cost):
        self.window.reader_total += cost
        self.window.reader_n += 1
        if self.iters >= _SKIP:
            self._update(self.reader, cost)

    def add_batch(self, cost, num_samples):
        if num_samples is None:
            self.per_sample = False
            self.unit = "steps/s"
        w = self.window
        w.batch_total += cost
        w.batch_n += 1
        if num_samples:
            w.samples += num_samples
        self.iters += 1
        if self.iters >= _SKIP:
            self._update(self.batch, cost)
            if self.per_sample:
                self.samples += num_samples
                speed = num_samples / cost if cost > 0 else 0.0
            else:
                speed = 1.0 / cost if cost > 0 else 0.0
            self._update(self.speed, speed)


class Benchmark:
    """The process-wide step timer (runs may nest, e.g. evaluation inside training)."""

    def __init__(self):
        self._runs = []
        self._t_step = time.perf_counter()

    @property
    def current(self):
        return self._runs[-1] if self._runs else None

    def begin(self):
        self._runs.append(_Run())
        self._t_step = time.perf_counter()

    def after_reader(self, cost):
        run = self.current
        if run is not None and cost > 0:
            run.add_reader(cost)

    def step(self, num_samples=None):
        run = self.current
        if run is None:
            return
        now = time.perf_counter()
        run.add_batch(now - self._t_step, num_samples)
        self._t_step = time.perf_counter()

    def step_info(self, unit):
        run = self.current
        if run is None:
            return ""
        w = run.window
        msg = ""
        reader = w.reader_total / w.reader_n if w.reader_n else 0.0
        batch = w.batch_total / w.batch_n if w.batch_n else 0.0
        if reader:
            msg += f" reader_cost: {reader:.5f} s"
        if batch:
            run.unit = "steps/s" if not run.per_sample else unit + "/s"
            msg += f" batch_cost: {batch:.5f} s"
        if run.per_sample:
            speed = w.samples / w.batch_total if w.samples and w.batch_total else 0.0
        else:
            speed = w.batch_n / w.batch_total if w.batch_total else 0.0
        if speed:
            msg += f" ips: {speed:.3f} {run.unit}"
        w.reset()
        return msg

    def end(self):
        run = self.current
        if run is None:
            return
        self._print_summary(run)
        self._runs.pop()
        self._t_step = time.perf_counter()

    @staticmethod
    def _print_summary(run):
        n = run.iters - _SKIP
        if n <= 0:
            return
        reader_avg = run.reader[2] / n
        batch_avg = run.batch[2] / n
        if run.per_sample:
            speed_avg = run.samples / run.batch[2] if run.batch[2] else 0.0
        else:
            speed_avg = n / run.batch[2] if run.batch[2] else 0.0
        print("Perf Summary".center(100, "="))
        ratio = reader_avg / batch_avg * 100 if batch_avg else 0.0
        if ratio:
            print(f"Reader Ratio: {ratio:.3f}%")
        print(f"Time Unit: s, IPS Unit: {run.unit}")
        print("|", "".center(15), "|", "avg".center(15), "|", "max".center(15), "|",
              "min".center(15), "|")
        rows = []
        if reader_avg:
            rows.append(("reader_cost", reader_avg, run.reader[0], run.reader[1]))
        rows.append(("batch_cost", batch_avg, run.batch[0], run.batch[1]))
        rows.append(("ips", speed_avg, run.speed[0], run.speed[1]))
        for name, avg, mx, mn in rows:
            print("|", name.center(15), "|", (f"{avg:.5f}").center(15), "|",
                  (f"{mx:.5f}").center(15), "|", (f"{mn:.5f}").center(15), "|")


_BENCHMARK = Benchmark()


def benchmark() -> Benchmark:
    """The process-wide :class:`Benchmark`."""
    return _BENCHMARK
