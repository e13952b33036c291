"""``paddle.io.dataloader.collate``: the module path model code imports the collate functions
from (``from paddle.io.dataloader.collate import default_collate_fn``). The functions live in
the DataLoader module; this module names them under Paddle's path."""

from .dataloader import default_collate_fn, default_convert_fn  # noqa: F401

__all__ = []
