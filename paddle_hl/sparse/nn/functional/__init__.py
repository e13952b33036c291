"""Sparse functional ops (``paddle.sparse.nn.functional``)."""
