"""Map the top-level domain folders into the paddle_hl namespace (see docs/architecture.md)."""

import os

from setuptools import setup

DOMAINS = ["vision", "audio", "text", "geometric", "hub"]


def _packages(root, prefix):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
        if "__init__.py" in filenames:
            rel = os.path.relpath(dirpath, root)
            out.append(prefix if rel == "." else prefix + "." + rel.replace(os.sep, "."))
    return out


packages = _packages("paddle_hl", "paddle_hl")
package_dir = {"paddle_hl": "paddle_hl"}
for d in DOMAINS:
    packages += _packages(d, f"paddle_hl.{d}")
    package_dir[f"paddle_hl.{d}"] = d

setup(packages=packages, package_dir=package_dir)
