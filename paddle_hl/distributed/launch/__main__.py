"""``python -m paddle_hl.distributed.launch ...``: see the package docstring."""

import sys

from . import launch

sys.exit(launch())
