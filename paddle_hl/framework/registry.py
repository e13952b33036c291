"""Collecting public names from family modules (tensor categories, nn families)."""

from __future__ import annotations

import importlib

__all__ = []


def family_modules(package: str, names) -> list:
    """Import ``package.<name>`` for each name that exists; missing modules are skipped, while
    an import error inside an existing module propagates."""
    mods = []
    for name in names:
        full = f"{package}.{name}"
        try:
            mods.append(importlib.import_module(full))
        except ModuleNotFoundError as e:
            if e.name != full:
                raise
    return mods


def collect_api(modules, attr="API") -> dict:
    """name -> object for every name each module lists in ``attr``."""
    out = {}
    for mod in modules:
        for n in getattr(mod, attr, ()):
            out[n] = getattr(mod, n)
    return out
