"""Neighbour sampling on CSC graphs: uniform and weighted, plus the multi-hop sampler that
``paddle.incubate.graph_khop_sampler`` names."""

from .neighbors import graph_khop_sampler, sample_neighbors, weighted_sample_neighbors

__all__ = []  # the public names are exported by paddle_hl.geometric
