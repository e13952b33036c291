"""Notebook rendering of ``hub.list`` and ``hub.help`` results.

The results stay what Paddle returns (a list of names, the entry's docstring) and only gain a
``_repr_html_`` method, which Jupyter calls to show them as a table and as a formatted docstring.
Nothing here imports IPython: a terminal keeps the plain list and str representations.
"""

from __future__ import annotations

import html
import inspect
import re

__all__ = []

# Google / NumPy style section headers, shown in bold.
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Keyword Args|Returns|Return|Yields|Raises|"
                      r"Examples?|Notes?|Warnings?|See Also|Attributes)\s*:?\s*$")


def _signature(obj) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    # annotations are dropped: under postponed evaluation they print as quoted strings
    empty = inspect.Parameter.empty
    params = [p.replace(annotation=empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=empty))


def _summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


class EntrypointList(list):
    """The entrypoint names of a hub repository; a table in a notebook.

    Compares, iterates and prints exactly as the plain list of names Paddle returns.
    """

    def __init__(self, names, module=None, repo: str = ""):
        super().__init__(names)
        self._repo = repo
        # signatures and summaries are taken now: the hubconf module is not kept alive
        self._rows = [(n, _signature(getattr(module, n)), _summary(getattr(module, n)))
                      if module is not None else (n, "", "") for n in names]

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td style='text-align:left'><code>{html.escape(name)}</code></td>"
            f"<td style='text-align:left'><code>{html.escape(sig)}</code></td>"
            f"<td style='text-align:left'>{html.escape(summary)}</td></tr>"
            for name, sig, summary in self._rows)
        caption = (f"<caption style='text-align:left'>{len(self)} entrypoints in "
                   f"<b>{html.escape(self._repo)}</b></caption>" if self._repo else "")
        return ("<table>" + caption + "<thead><tr><th style='text-align:left'>entrypoint</th>"
                "<th style='text-align:left'>signature</th>"
                "<th style='text-align:left'>summary</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")


class Docstring(str):
    """The docstring of a hub entrypoint; rendered with its signature in a notebook.

    It is the exact ``__doc__`` string Paddle returns (same value, same repr).
    """

    def __new__(cls, doc: str, name: str = "", signature: str = ""):
        self = super().__new__(cls, doc)
        self._name = name
        self._signature = signature
        return self

    def _repr_html_(self) -> str:
        lines = []
        for line in inspect.cleandoc(str(self)).splitlines():
            text = html.escape(line)
            lines.append(f"<b>{text}</b>" if _SECTION.match(line.strip()) else text)
        head = (f"<p><code><b>{html.escape(self._name)}</b>{html.escape(self._signature)}"
                "</code></p>" if self._name else "")
        body = "\n".join(lines)
        return f"<div>{head}<pre style='white-space:pre-wrap'>{body}</pre></div>"
