"""Message passing over edge lists: send_u_recv, send_ue_recv, send_uv."""

from .send_recv import send_u_recv, send_ue_recv, send_uv

__all__ = []  # the public names are exported by paddle_hl.geometric
