"""Run a model file with ``import paddle`` resolving to paddle_hl (the way users alias it)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``paddle`` and ``paddle.X`` import as ``paddle_hl`` and ``paddle_hl.X``."""

    def find_spec(self, name, path=None, target=None):
        if name == "paddle" or name.startswith("paddle."):
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("paddle_hl" + spec.name[len("paddle"):])

    def exec_module(self, module):
        pass


def load_model_file(name: str, as_paddle_hl: bool):
    """Import ``models/<name>.py`` as a fresh module, under paddle_hl or under real Paddle."""
    path = os.path.join(MODELS, name + ".py")
    mod_name = f"_compat_{name}_{'hl' if as_paddle_hl else 'pd'}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    if not as_paddle_hl:
        spec.loader.exec_module(module)
        return module
    saved = {k: v for k, v in sys.modules.items() if k == "paddle" or k.startswith("paddle.")}
    for k in saved:
        del sys.modules[k]
    finder = _AliasFinder()
    sys.meta_path.insert(0, finder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k == "paddle" or k.startswith("paddle.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    return module
