"""paddle_hl.nn.functional: the functional forms of the layers.

Each family module (``common``, ``conv``, ``pooling``, ``norm``, ``activation``, ``loss``,
``input``, ``vision``, ``extension``, ``distance``, ``flash_attention``) lists its public names
in ``API``; they are collected here.
"""

from __future__ import annotations

import importlib as _importlib

_FAMILIES = ("common", "conv", "pooling", "norm", "activation", "loss", "input", "vision",
             "extension", "distance", "flash_attention", "sparse_attention")


def _collect():
    names = {}
    for fam in _FAMILIES:
        try:
            mod = _importlib.import_module(f"{__name__}.{fam}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{fam}":
                raise
            continue
        for n in getattr(mod, "API", ()):
            names[n] = getattr(mod, n)
    return names


globals().update(_collect())
