"""Compatibility module: the sparse layouts live in ``paddle_hl.sparse``.

The names are resolved on first access so that importing the framework never imports the sparse
package.
"""

from __future__ import annotations

__all__ = []


def __getattr__(name):
    from ..sparse import _tensor

    try:
        return getattr(_tensor, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
