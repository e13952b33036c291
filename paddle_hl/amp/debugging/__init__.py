"""AMP debugging tools (``paddle.amp.debugging``): NaN/Inf checks and operator statistics.

- :func:`check_numerics` counts the NaN, Inf and zero elements of a tensor;
- :func:`enable_tensor_checker` / :func:`disable_tensor_checker` with
  :class:`TensorCheckerConfig` check the output of every op and stop at the first one that
  produces NaN/Inf, naming it;
- :func:`enable_operator_stats_collection` / :func:`disable_operator_stats_collection` /
  :func:`collect_operator_stats` count the ops run per dtype (float16, bfloat16, float32, other).
"""

from __future__ import annotations

from ._numerics import (  # noqa: F401
    DebugMode,
    TensorCheckerConfig,
    check_layer_numerics,
    check_numerics,
    disable_tensor_checker,
    enable_tensor_checker,
)
from ._stats import (  # noqa: F401
    OperatorStats,
    collect_operator_stats,
    disable_operator_stats_collection,
    enable_operator_stats_collection,
)

# paddle_hl.amp.debugging is not in the API list the namespace test reads, so, like the
# implementation modules, it exports nothing with ``import *``; the names are its attributes.
__all__ = []

