"""The table of KL divergence rules, dispatched on the pair of distribution types.

Each distribution's module registers its closed-form rule when it loads (through
``register_kl`` in distribution.py, which checks the types); this module imports no
distribution, so the base class dispatches through it without importing its subclasses.
"""

from __future__ import annotations

import functools
import warnings

__all__ = []

_REGISTER_TABLE: dict = {}


def add_rule(cls_p, cls_q, f):
    """Record ``f`` as the rule for ``(cls_p, cls_q)`` (types already checked by the caller)."""
    _REGISTER_TABLE[cls_p, cls_q] = f
    _dispatch.cache_clear()


def _mro_rank(cls, base):
    return cls.__mro__.index(base)


@functools.cache
def _dispatch(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _REGISTER_TABLE
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    # most specific: nearest to type_p in its MRO, ties broken by nearness to type_q
    by_p = min(matches, key=lambda m: (_mro_rank(type_p, m[0]), _mro_rank(type_q, m[1])))
    by_q = min(matches, key=lambda m: (_mro_rank(type_q, m[1]), _mro_rank(type_p, m[0])))
    if by_p != by_q:
        warnings.warn(f"kl_divergence: the rules for ({by_p[0].__name__}, {by_p[1].__name__}) "
                      f"and ({by_q[0].__name__}, {by_q[1].__name__}) both match "
                      f"({type_p.__name__}, {type_q.__name__}); using the first. Register "
                      "a rule for the exact pair to choose.", RuntimeWarning, stacklevel=3)
    return _REGISTER_TABLE[by_p]


# the rule for a pair of types, or None: the most specific registered pair that matches
rule_for = _dispatch
