"""paddle.base: the internal package Paddle 2.6 keeps its framework classes in. Model code
reaches ``paddle.base.framework.EagerParamBase`` (the dygraph Parameter) through it."""

from . import framework  # noqa: F401

__all__ = []
