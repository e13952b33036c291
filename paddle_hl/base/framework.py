"""paddle.base.framework: the dygraph Parameter class under Paddle's internal name."""

from ..framework.parameter import Parameter as EagerParamBase  # noqa: F401
from ..framework.tensor import Tensor  # noqa: F401

__all__ = []
