"""Operator statistics: how many times each op ran in float16, bfloat16, float32 or other."""

from __future__ import annotations

import contextlib

from .. import _hook

__all__ = []

_COLUMNS = (("fp16", "FP16 Calls"), ("bf16", "BF16 Calls"), ("fp32", "FP32 Calls"),
            ("other", "Other Calls"))
_last = [None]  # the table of the last finished collection


class OperatorStats:
    """A table of op calls per dtype, filled while stats are collected.

    ``counts`` maps each op name (Paddle's) to ``{'fp16': n, 'bf16': n, 'fp32': n,
    'other': n}``. ``str()`` gives Paddle's text table; in a notebook it renders as HTML.
    """

    def __init__(self, raw=None):
        self._raw = raw if raw is not None else {}

    @property
    def counts(self) -> dict:
        """``{op: {'fp16': n, 'bf16': n, 'fp32': n, 'other': n}}``, ops sorted by name."""
        out = {}
        for (name, kind), n in self._raw.items():
            row = out.setdefault(name, {k: 0 for k, _ in _COLUMNS})
            row[kind] += n
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        """The same as :attr:`counts`."""
        return self.counts

    def __len__(self):
        return len(self.counts)

    def __str__(self):
        rows = self.counts
        width, name_w, col_w = 122, 42, 19  # Paddle's layout: 42 + 4 * (1 + 19) columns

        def rule(title):
            return "<" + f" {title} ".center(width - 2, "-") + ">"

        def cell(title, end=" "):
            return " " + f" {title} ".center(col_w - 2, "-") + end

        head = "<" + " Op Name ".center(name_w - 2, "-") + " |"
        head += "|".join(cell(t) for _, t in _COLUMNS[:-1]) + "|" + cell(_COLUMNS[-1][1], ">")
        lines = [rule("op list"), head]
        for name, row in rows.items():
            cells = "|".join(f"  {row[k]}".ljust(col_w) for k, _ in _COLUMNS)
            lines.append(f"  {name}".ljust(name_w) + "|" + cells)
        lines.append(rule(f"op count: {len(rows)}"))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        from ...notebook.amp import stats_html

        return stats_html(self)


def enable_operator_stats_collection():
    """Start counting the ops that run, per dtype (the previous counts are dropped).

    Example:
        >>> paddle.amp.debugging.enable_operator_stats_collection()
        >>> with paddle.amp.auto_cast():
        ...     y = paddle.matmul(x, x)
        >>> paddle.amp.debugging.disable_operator_stats_collection()   # prints the table
    """
    if _hook.stats is None:
        _hook.retain()
    _hook.stats = {}


def disable_operator_stats_collection():
    """Stop counting and print the table (an HTML table in a notebook)."""
    if _hook.stats is None:
        return
    table = OperatorStats(_hook.stats)
    _hook.stats = None
    _hook.release()
    _last[0] = table
    _show(table)


def _show(table):
    from ...notebook.amp import display_stats

    if not display_stats(table):
        print(table)


@contextlib.contextmanager
def collect_operator_stats():
    """Context manager: count the ops run inside the block and print the table at the end.

    Yields:
        OperatorStats: the live table (also renders as HTML in a notebook).

    Example:
        >>> with paddle.amp.debugging.collect_operator_stats() as stats:
        ...     with paddle.amp.auto_cast():
        ...         y = paddle.matmul(x, x)
        >>> stats.counts['matmul_v2']['fp16']   # 1
    """
    enable_operator_stats_collection()
    table = OperatorStats(_hook.stats)
    try:
        yield table
    finally:
        disable_operator_stats_collection()
