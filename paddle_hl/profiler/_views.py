"""The profiler's side of its notebook views: it builds the summary tables and hands the
finished tables (and the result's events) to ``paddle_hl.notebook.timeline``, which renders
them and knows nothing of how they were computed."""

from __future__ import annotations

from ._statistic import SortedKeys, build_tables

__all__ = []


def _tables(result, sorted_by, op_detail, thread_sep, time_unit, views, with_flops):
    return build_tables(result, sorted_by or SortedKeys.CPUTotal, op_detail, thread_sep,
                        time_unit, views, with_flops)


def show_summary(result, text, sorted_by=None, op_detail=True, thread_sep=False,
                 time_unit="ms", views=None, with_flops=False) -> bool:
    """In Jupyter, display the summary tables as HTML (sortable, themed) instead of printing
    the text tables; False elsewhere (the caller prints ``text``)."""
    from ..notebook._env import in_notebook

    if not in_notebook():
        return False
    try:
        from IPython.display import display

        from ..notebook.timeline import SummaryTables
    except ImportError:
        return False
    tables = _tables(result, sorted_by, op_detail, thread_sep, time_unit, views, with_flops)
    display(SummaryTables(tables, text))
    return True


def timeline(result, summary=False, sorted_by=None, time_unit="ms", views=None,
             with_flops=False, **kwargs):
    """A :class:`paddle_hl.notebook.timeline.Timeline` of ``result``; with ``summary`` the
    sortable summary tables (operator details on, threads merged) are drawn under it.

    Other keyword arguments (``max_events``) go to the Timeline."""
    from ..notebook.timeline import Timeline

    tables = _tables(result, sorted_by, True, False, time_unit, views, with_flops) \
        if summary else None
    return Timeline(result, tables=tables, **kwargs)
