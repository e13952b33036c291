"""paddle_hl.geometric: message passing, segment reductions and graph sampling.

- ``send_u_recv`` / ``send_ue_recv`` / ``send_uv``: gather node features along edges, combine
  them with edge or node features, and reduce them into the destination nodes.
- ``segment_sum`` / ``segment_mean`` / ``segment_max`` / ``segment_min``: reductions over rows
  grouped by sorted segment ids.
- ``sample_neighbors`` / ``weighted_sample_neighbors`` / ``reindex_graph`` /
  ``reindex_heter_graph``: mini-batch subgraphs for GraphSAGE-style training.

Every op is differentiable where Paddle's is, runs on NumPy or CuPy arrays, and draws its random
numbers from paddle_hl's generator (``paddle.seed``).
"""

from .math import segment_max, segment_mean, segment_min, segment_sum
from .message_passing import send_u_recv, send_ue_recv, send_uv
from .reindex import reindex_graph, reindex_heter_graph
from .sampling import sample_neighbors, weighted_sample_neighbors

__all__ = [
    "send_u_recv",
    "send_ue_recv",
    "send_uv",
    "segment_sum",
    "segment_mean",
    "segment_min",
    "segment_max",
    "reindex_graph",
    "reindex_heter_graph",
    "sample_neighbors",
    "weighted_sample_neighbors",
]
