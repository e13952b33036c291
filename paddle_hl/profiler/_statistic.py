"""The summary tables: device, overview, model, operator, kernel, memory and user-defined.

Numbers follow Paddle 2.6's definitions:

- Overview: per event type, the calls and the time covered by its events, where overlapping
  events (nested ones, or on several threads) are merged first so no time counts twice; the
  ratio is against the total ProfileStep time.
- Model: the first Dataloader / Forward / Backward / Optimization events met under each
  ProfileStep (their own nested events are not counted again); "Others" is the step time none
  of them covers.
- Operator / UserDefined / Kernel: per name, calls and total / avg / max / min time; the ratio
  is against the sum over the table.
- Memory: per innermost enclosing event, allocations and frees of op outputs.

Each builder returns :class:`Table` objects; ``render_text`` prints them in Paddle's layout and
the notebook renders the same objects as sortable HTML tables.
"""

from __future__ import annotations

from enum import Enum

__all__ = []


class SummaryView(Enum):
    """The tables ``Profiler.summary`` can print (``views=``)."""

    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


class SortedKeys(Enum):
    """How the operator, kernel and user-defined tables are ordered.

    - ``CPUTotal`` / ``CPUAvg`` / ``CPUMax``: by CPU time, largest first.
    - ``CPUMin``: by the minimum CPU time, smallest first.
    - ``GPUTotal`` / ``GPUAvg`` / ``GPUMax`` / ``GPUMin``: the same on GPU time.
    """

    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
_MODEL_TYPES = ("Dataloader", "Forward", "Backward", "Optimization")
_ROW_LIMIT = 100


class Table:
    """A summary table: title, columns, rows (with indentation levels) and notes.

    ``rows`` holds ``(level, cells)`` for data rows and ``(None, text)`` for section bars
    (e.g. ``Thread: All threads merged``). ``keys`` gives, per data row, numeric sort keys for
    the HTML view (one per column, None where a column is text).
    """

    def __init__(self, title, columns, time_unit=None, notes=(), preamble=()):
        self.title = title
        self.columns = list(columns)
        self.rows = []
        self.keys = []
        self.time_unit = time_unit
        self.notes = list(notes)
        self.preamble = list(preamble)

    def add(self, cells, level=0, keys=None):
        self.rows.append((level, [str(c) for c in cells]))
        self.keys.append(keys)

    def section(self, text):
        self.rows.append((None, text))
        self.keys.append(None)

    def render(self):
        """Paddle's text layout: fixed-width columns separated by two spaces."""
        widths = [len(c) for c in self.columns]
        for level, cells in self.rows:
            if level is None:
                continue
            for i, c in enumerate(cells):
                w = len(c) + (2 * level if i == 0 else 0)
                widths[i] = max(widths[i], w)
        widths = [w + 4 for w in widths]
        total = sum(w + 2 for w in widths)
        bar = "".join("-" * w + "  " for w in widths)
        out = [self.title.center(total, "-")]
        out.extend(self.preamble)
        if self.time_unit:
            out.append(f"Time unit: {self.time_unit}")
        out.append(bar)
        out.append("".join(c.ljust(w) + "  " for c, w in zip(self.columns, widths)))
        out.append(bar)
        for level, cells in self.rows:
            if level is None:
                out.append(cells.center(total, "-"))
                continue
            line = ""
            for i, (c, w) in enumerate(zip(cells, widths)):
                c = "  " * level + c if i == 0 else c
                line += c.ljust(w) + "  "
            out.append(line)
        out.append(bar)
        if self.notes:
            out.append("Note:")
            out.extend(self.notes)
        out.append("-" * total)
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- helpers
def merge_ranges(ranges):
    """Union of ``(start, end)`` ranges as a sorted list of disjoint ranges."""
    out = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def sum_ranges(ranges):
    return sum(e - s for s, e in ranges)


def _fmt(ns, unit):
    return f"{ns / _UNITS[unit]:.2f}"


def _ratio(part, whole):
    return f"{(part / whole * 100 if whole else 0.0):.2f}"


class _Item:
    """Calls and CPU / GPU time statistics of one named row."""

    __slots__ = ("name", "calls", "cpu", "cpu_max", "cpu_min", "gpu", "gpu_max", "gpu_min",
                 "flops", "children")

    def __init__(self, name):
        self.name = name
        self.calls = 0
        self.cpu = 0
        self.cpu_max = 0
        self.cpu_min = None
        self.gpu = 0
        self.gpu_max = 0
        self.gpu_min = None
        self.flops = 0
        self.children = None

    def add(self, cpu_ns, gpu_ns=0, flops=0):
        self.calls += 1
        self.cpu += cpu_ns
        self.cpu_max = max(self.cpu_max, cpu_ns)
        self.cpu_min = cpu_ns if self.cpu_min is None else min(self.cpu_min, cpu_ns)
        self.gpu += gpu_ns
        self.gpu_max = max(self.gpu_max, gpu_ns)
        self.gpu_min = gpu_ns if self.gpu_min is None else min(self.gpu_min, gpu_ns)
        self.flops += flops

    def child(self, name):
        if self.children is None:
            self.children = {}
        it = self.children.get(name)
        if it is None:
            it = self.children[name] = _Item(name)
        return it

    def cells(self, unit, cpu_whole, gpu_whole):
        avg = self.cpu / self.calls if self.calls else 0
        gavg = self.gpu / self.calls if self.calls else 0
        cpu = " / ".join([_fmt(self.cpu, unit), _fmt(avg, unit), _fmt(self.cpu_max, unit),
                          _fmt(self.cpu_min or 0, unit), _ratio(self.cpu, cpu_whole)])
        gpu = " / ".join([_fmt(self.gpu, unit), _fmt(gavg, unit), _fmt(self.gpu_max, unit),
                          _fmt(self.gpu_min or 0, unit), _ratio(self.gpu, gpu_whole)])
        keys = [None, self.calls, self.cpu, self.gpu]
        return cpu, gpu, keys


def _sort(items, sorted_by):
    key = {
        SortedKeys.CPUTotal: (lambda i: i.cpu, True),
        SortedKeys.CPUAvg: (lambda i: i.cpu / max(i.calls, 1), True),
        SortedKeys.CPUMax: (lambda i: i.cpu_max, True),
        SortedKeys.CPUMin: (lambda i: i.cpu_min or 0, False),
        SortedKeys.GPUTotal: (lambda i: i.gpu, True),
        SortedKeys.GPUAvg: (lambda i: i.gpu / max(i.calls, 1), True),
        SortedKeys.GPUMax: (lambda i: i.gpu_max, True),
        SortedKeys.GPUMin: (lambda i: i.gpu_min or 0, False),
    }.get(sorted_by)
    if key is None:
        raise TypeError(f"Profiler.summary: sorted_by must be a SortedKeys member, got "
                        f"{sorted_by!r}")
    return sorted(items, key=key[0], reverse=key[1])


def _walk(events):
    stack = list(reversed(events))
    while stack:
        e = stack.pop()
        yield e
        stack.extend(reversed(e.children))


def _subtree_gpu(e):
    return sum(k.duration_ns for n in _walk([e]) for k in n.kernels)


# ---------------------------------------------------------------------------- flops
def op_flops(e):
    """Floating-point operations of one op from its recorded shapes (0 when unknown)."""
    shapes = e.args.get("input_shapes")
    outs = e.args.get("output_shapes")
    if not shapes or not outs or e.args.get("phase") == "backward":
        return 0
    out_n = 1
    for d in outs[0]:
        out_n *= d
    name = e.name
    if name.startswith("conv") and len(shapes) >= 2:
        k = 1
        for d in shapes[1][1:]:
            k *= d
        return 2 * out_n * k + (out_n if len(shapes) > 2 else 0)
    if name in ("linear", "matmul", "mm", "bmm", "addmm") and len(shapes) >= 2:
        x = shapes[-2] if name == "addmm" else shapes[0]
        if len(x) >= 2 and len(outs[0]) >= 2:
            k = x[-1] if x[-2] == outs[0][-2] else x[-2]
        else:
            k = x[-1] if x else 1
        return 2 * out_n * k
    return out_n


# ---------------------------------------------------------------------------- tables
def _step_total(result):
    steps = [e for e in result.host_events if e.type == "ProfileStep"]
    if steps:
        return sum_ranges(merge_ranges((e.start_ns, e.end_ns) for e in steps)), steps
    host = result.host_events
    if not host:
        return 0, []
    return max(e.end_ns for e in host) - min(e.start_ns for e in host), []


def device_table(result):
    info = result.extra_info
    t = Table("Device Summary", ["Device", "Utilization (%)"], notes=[
        "CPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed "
        "time, so max utilization can be reached 100% * number of cpu cores.",
        "CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / "
        "(busy time + idle time).",
        "GPU Utilization = Current process GPU time / elapsed time."])
    proc = float(info.get("Process Cpu Utilization", 0.0))
    t.add(["CPU(Process)", f"{proc * 100:.2f}"], keys=[None, proc])
    if "System Cpu Utilization" in info:
        sysu = float(info["System Cpu Utilization"])
        t.add(["CPU(System)", f"{sysu * 100:.2f}"], keys=[None, sysu])
    host = result.host_events
    if host:
        elapsed = max(e.end_ns for e in host) - min(e.start_ns for e in host)
        devices = sorted({e.device for e in result.device_events})
        for d in devices:
            busy = sum_ranges(merge_ranges((e.start_ns, e.end_ns) for e in result.events
                                           if e.device == d))
            u = busy / elapsed if elapsed else 0.0
            t.add([f"GPU{d.split(':')[-1]}", f"{u * 100:.2f}"], keys=[None, u])
    return t


def overview_table(result, unit):
    total, _ = _step_total(result)
    t = Table("Overview Summary", ["Event Type", "Calls", "CPU Time", "Ratio (%)"], unit,
              notes=[
                  "In this table, We sum up all collected events in terms of event type.",
                  "The time of events collected on host are presented as CPU Time, and as GPU "
                  "Time if on device.",
                  "Events with different types may overlap or inclusion, e.g. Operator includes"
                  " OperatorInner, so the sum of ratios is not 100%.",
                  "The time of events in the same type with overlap will not calculate twice, "
                  "and all time is summed after merged."])
    result.trees()
    cpu = {}
    calls = {}
    for e in result.host_events:
        cpu.setdefault(e.type, []).append((e.start_ns, e.end_ns))
        # an event nested in one of its own type (a Layer inside a Layer) is not a new call
        p = e.parent
        while p is not None and p.type != e.type:
            p = p.parent
        if p is None:
            calls[e.type] = calls.get(e.type, 0) + 1
    times = {k: sum_ranges(merge_ranges(v)) for k, v in cpu.items()}
    if "ProfileStep" in times:
        t.add(["ProfileStep", calls["ProfileStep"], _fmt(times["ProfileStep"], unit),
               _ratio(times["ProfileStep"], total)],
              keys=[None, calls["ProfileStep"], times["ProfileStep"], times["ProfileStep"]])
    for k in sorted((k for k in times if k != "ProfileStep"), key=lambda k: -times[k]):
        t.add([k, calls[k], _fmt(times[k], unit), _ratio(times[k], total)],
              level=1, keys=[None, calls[k], times[k], times[k]])
    t.section("")
    t.add(["", "Calls", "GPU Time", "Ratio (%)"])
    t.section("")
    gpu = {}
    gcalls = {}
    for e in result.device_events:
        gpu.setdefault((e.device, e.type), []).append((e.start_ns, e.end_ns))
        gcalls[e.type] = gcalls.get(e.type, 0) + 1
    gtimes = {}
    for (_, typ), r in gpu.items():
        gtimes[typ] = gtimes.get(typ, 0) + sum_ranges(merge_ranges(r))
    if gtimes:
        busy = sum(gtimes.values())
        t.add(["Device Total", sum(gcalls.values()), _fmt(busy, unit), _ratio(busy, total)],
              keys=[None, sum(gcalls.values()), busy, busy])
        for k in sorted(gtimes, key=lambda k: -gtimes[k]):
            t.add([k, gcalls[k], _fmt(gtimes[k], unit), _ratio(gtimes[k], total)], level=1,
                  keys=[None, gcalls[k], gtimes[k], gtimes[k]])
    return t


def model_items(result):
    """``{name: _Item}`` for ProfileStep, the four model phases; and the step total."""
    result.trees()
    total, steps = _step_total(result)
    items = {"ProfileStep": _Item("ProfileStep")}
    for s in steps:
        items["ProfileStep"].add(s.duration_ns, _subtree_gpu(s))
        todo = list(s.children)
        while todo:
            e = todo.pop(0)
            if e.type in _MODEL_TYPES:
                items.setdefault(e.type, _Item(e.type)).add(e.duration_ns, _subtree_gpu(e))
            else:
                todo.extend(e.children)
    return items, total


def model_table(result, unit):
    items, total = model_items(result)
    t = Table("Model Summary", ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                "GPU Total / Avg / Max / Min / Ratio(%)"], unit, notes=[
        "In this table, GPU time is the sum of all device(GPU) events called in the phase.",
        "Unlike overview summary, if two device(GPU) events execute on different streams with"
        " overlap time, we sum them directly here."])
    step = items["ProfileStep"]
    gtotal = step.gpu
    cpu, gpu, keys = step.cells(unit, total, gtotal)
    t.add(["ProfileStep", step.calls, cpu, gpu], keys=keys)
    used_cpu = used_gpu = 0
    for k in _MODEL_TYPES:
        it = items.get(k)
        if it is None:
            continue
        used_cpu += it.cpu
        used_gpu += it.gpu
        cpu, gpu, keys = it.cells(unit, total, gtotal)
        t.add([k, it.calls, cpu, gpu], level=1, keys=keys)
    other = max(total - used_cpu, 0)
    gother = max(gtotal - used_gpu, 0)
    t.add(["Others", "-", f"{_fmt(other, unit)} / - / - / - / {_ratio(other, total)}",
           f"{_fmt(gother, unit)} / - / - / - / {_ratio(gother, gtotal)}"], level=1,
          keys=[None, None, other, gother])
    return t


def _name_items(events, with_flops=False, detail=True):
    items = {}
    for e in events:
        it = items.get(e.name)
        if it is None:
            it = items[e.name] = _Item(e.name)
        g = sum(k.duration_ns for k in e.kernels)
        it.add(e.duration_ns, g, op_flops(e) if with_flops else 0)
        if detail:
            for k in e.kernels:
                it.child(k.name).add(0, k.duration_ns)
    return items


def _by_thread(result, pred, thread_sep):
    evs = [e for e in result.host_events if pred(e)]
    if not thread_sep:
        return [("All threads merged", evs)]
    groups = {}
    for e in evs:
        groups.setdefault(e.tid, []).append(e)
    return [(str(t), g) for t, g in sorted(groups.items(), key=lambda kv: str(kv[0]))]


def operator_table(result, unit, sorted_by, op_detail, thread_sep, with_flops):
    result.trees()
    t = Table("Operator Summary", ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                   "GPU Total / Avg / Max / Min / Ratio(%)", "FLOPs"], unit)
    for label, evs in _by_thread(result, lambda e: e.type == "Operator", thread_sep):
        t.section(f"Thread: {label}")
        items = _name_items(evs, with_flops, op_detail)
        cpu_whole = sum(i.cpu for i in items.values())
        gpu_whole = sum(i.gpu for i in items.values())
        for it in _sort(items.values(), sorted_by)[:_ROW_LIMIT]:
            cpu, gpu, keys = it.cells(unit, cpu_whole, gpu_whole)
            t.add([it.name, it.calls, cpu, gpu, it.flops], keys=keys + [it.flops])
            if op_detail and it.children:
                for ch in _sort(it.children.values(), SortedKeys.GPUTotal):
                    _, g, k2 = ch.cells(unit, 1, it.gpu)
                    t.add([ch.name, ch.calls, "-", g, "-"], level=1, keys=k2 + [None])
    return t


def kernel_table(result, unit, sorted_by):
    kernels = [e for e in result.device_events if e.type == "Kernel"]
    if not kernels:
        return None
    items = {}
    for k in kernels:
        it = items.get(k.name)
        if it is None:
            it = items[k.name] = _Item(k.name)
        it.add(0, k.duration_ns)
    whole = sum(i.gpu for i in items.values())
    t = Table("Kernel Summary", ["Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"],
              unit)
    if sorted_by in (SortedKeys.CPUTotal, SortedKeys.CPUAvg, SortedKeys.CPUMax,
                     SortedKeys.CPUMin):
        sorted_by = SortedKeys(sorted_by.value + 4)  # kernels have GPU time only
    for it in _sort(items.values(), sorted_by)[:_ROW_LIMIT]:
        _, gpu, keys = it.cells(unit, 1, whole)
        t.add([it.name, it.calls, gpu], keys=[None, it.calls, it.gpu])
    return t


def udf_table(result, unit, sorted_by, thread_sep):
    def is_udf(e):
        return e.type == "PythonUserDefined" and not _is_memcpy(e.name)

    if not any(is_udf(e) for e in result.host_events):
        return None
    result.trees()
    t = Table("UserDefined Summary", ["Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                      "GPU Total / Avg / Max / Min / Ratio(%)"], unit)
    total, _ = _step_total(result)
    for label, evs in _by_thread(result, is_udf, thread_sep):
        t.section(f"Thread: {label}")
        items = {}
        for e in evs:
            items.setdefault(e.name, _Item(e.name)).add(e.duration_ns, _subtree_gpu(e))
        gtotal = sum(i.gpu for i in items.values())
        for it in _sort(items.values(), sorted_by)[:_ROW_LIMIT]:
            cpu, gpu, keys = it.cells(unit, total, gtotal)
            t.add([it.name, it.calls, cpu, gpu], keys=keys)
    return t


def _is_memcpy(name):
    n = name.lower()
    return "memcpy" in n or "memorycopy" in n or "memset" in n


def memcpy_table(result, unit):
    evs = [e for e in result.host_events if e.type in ("UserDefined", "PythonUserDefined")
           and _is_memcpy(e.name)]
    if not evs:
        return None
    items = {}
    for e in evs:
        items.setdefault(e.name, _Item(e.name)).add(e.duration_ns, _subtree_gpu(e))
    total, _ = _step_total(result)
    t = Table("Memory Manipulation Summary", ["Name", "Calls",
                                              "CPU Total / Avg / Max / Min / Ratio(%)",
                                              "GPU Total / Avg / Max / Min / Ratio(%)"], unit)
    gtotal = sum(i.gpu for i in items.values())
    for it in _sort(items.values(), SortedKeys.CPUTotal):
        cpu, gpu, keys = it.cells(unit, total, gtotal)
        t.add([it.name, it.calls, cpu, gpu], keys=keys)
    return t


def memory_tables(result):
    if not result.memory_events:
        return []
    result.trees()
    places = {}
    for m in result.memory_events:
        places.setdefault(m.place, []).append(m)
    tables = []
    for place, evs in sorted(places.items()):
        rows = {}
        for m in evs:
            owner = result.innermost(m.tid, m.ts_ns)
            name = owner.name if owner is not None else "Unknown"
            r = rows.setdefault(name, [0, 0, 0, 0])
            if m.nbytes >= 0:
                r[0] += 1
                r[2] += m.nbytes
            else:
                r[1] += 1
                r[3] += -m.nbytes
        peak = max(m.peak for m in evs)
        peak_res = max(m.peak_reserved for m in evs)
        t = Table(f"Memory Summary - {place}", ["Name", "Type", "Allocation Count",
                                                 "Free Count", "Allocation Size", "Free Size",
                                                 "Increased Size"],
                  preamble=[f"Peak Allocated Memory: {peak}",
                            f"Peak Reserved Memory: {peak_res}"])
        for name, (na, nf, sa, sf) in sorted(rows.items(), key=lambda kv: -(kv[1][2] -
                                                                          kv[1][3])):
            t.add([name, "Allocated", na, nf, sa, sf, sa - sf],
                  keys=[None, None, na, nf, sa, sf, sa - sf])
        tables.append(t)
    return tables


def build_tables(result, sorted_by, op_detail=True, thread_sep=False, time_unit="ms",
                 views=None, with_flops=False):
    """The summary :class:`Table` list for ``views`` (None: all of them)."""
    if time_unit not in _UNITS:
        raise ValueError(f"Profiler.summary: time_unit must be one of {list(_UNITS)}, got "
                         f"{time_unit!r}")
    if isinstance(views, SummaryView):
        views = [views]
    if views is not None:
        views = list(views)
        for v in views:
            if not isinstance(v, SummaryView):
                raise TypeError(f"Profiler.summary: views must be SummaryView members, got "
                                f"{v!r}")
    want = set(SummaryView) if views is None else set(views)
    tables = []
    if SummaryView.DeviceView in want:
        tables.append(device_table(result))
    if SummaryView.OverView in want:
        tables.append(overview_table(result, time_unit))
    if SummaryView.ModelView in want:
        tables.append(model_table(result, time_unit))
    if SummaryView.OperatorView in want:
        tables.append(operator_table(result, time_unit, sorted_by, op_detail, thread_sep,
                                     with_flops))
    if SummaryView.KernelView in want:
        tables.append(kernel_table(result, time_unit, sorted_by))
    if SummaryView.MemoryManipulationView in want:
        tables.append(memcpy_table(result, time_unit))
    if SummaryView.UDFView in want:
        tables.append(udf_table(result, time_unit, sorted_by, thread_sep))
    if SummaryView.MemoryView in want:
        tables.extend(memory_tables(result))
    return [t for t in tables if t is not None]


def build_text(result, sorted_by, op_detail=True, thread_sep=False, time_unit="ms",
               views=None, with_flops=False):
    """The summary as the text ``Profiler.summary`` prints."""
    tables = build_tables(result, sorted_by, op_detail, thread_sep, time_unit, views,
                          with_flops)
    return "\n\n".join(t.render() for t in tables)
