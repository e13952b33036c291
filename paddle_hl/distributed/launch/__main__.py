"""``python -m paddle_hl.distributed.launch ...``: see the package docstring."""

import sys

from . import launch

__all__ = []

if __name__ == "__main__":  # importing the module (e.g. to list the package) starts nothing
    sys.exit(launch())
