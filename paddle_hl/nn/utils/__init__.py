"""paddle_hl.nn.utils: gradient clipping helpers, parameter <-> vector, weight reparameterisations,
and (paddle_hl extras) :func:`fused`, the list of a model's declared fusion chains, and
:func:`explain`, the algorithm each convolution and pooling op of a model runs.
"""

from __future__ import annotations

from .._fusion import fused
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .explain import explain
from .spectral_norm_hook import spectral_norm
from .transform_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm_hook import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm",
           "fused", "explain"]
