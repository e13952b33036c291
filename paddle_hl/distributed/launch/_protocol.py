"""The launcher's monitor protocol, spoken by both sides: the monitor in ``_job`` and the
ranks in ``_worker`` (each imports it; neither imports the other)."""

from __future__ import annotations

import os

__all__ = []


def socket_name(address):
    """The name to bind or connect to for a monitor address (``@name``: abstract)."""
    return "\0" + address[1:] if address.startswith("@") else address


def error_path(run_dir, rank):
    """Where a rank that raised leaves its traceback for the launcher."""
    return os.path.join(run_dir, f"rank{rank}.error")


def messages(sock):
    """``(word, rest)`` for each line of the launcher's monitor protocol read from ``sock``,
    until the connection closes."""
    buf = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            word, _, rest = line.decode(errors="replace").partition(" ")
            yield word, rest
