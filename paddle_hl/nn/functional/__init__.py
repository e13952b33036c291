"""paddle_hl.nn.functional: the functional forms of the layers.

Each family module (``common``, ``conv``, ``pooling``, ``norm``, ``activation``, ``loss``,
``input``, ``vision``, ``extension``, ``distance``, ``flash_attention``) lists its public names
in ``API``; they are collected here.
"""

from __future__ import annotations

from ...framework.registry import collect_api, family_modules

_FAMILIES = ("common", "conv", "pooling", "norm", "activation", "loss", "input", "vision",
             "extension", "distance", "flash_attention", "sparse_attention")


globals().update(collect_api(family_modules(__name__, _FAMILIES)))
