"""B17: public names come only from the documented namespaces; implementation modules export
nothing with ``import *``; there is no ``paddle_hl.fluid``."""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil

import pytest

import paddle_hl

API_FILE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "api" / "paddle-2.6-api.json"
EXTRA_PUBLIC = {"paddle_hl.amp.debugging", "paddle_hl.regularizer", "paddle_hl.static",
                "paddle_hl.device", "paddle_hl.device.cuda", "paddle_hl.utils",
                "paddle_hl.optimizer", "paddle_hl.nn", "paddle_hl.nn.functional",
                "paddle_hl.callbacks", "paddle_hl.hapi", "paddle_hl.utils.download",
                # Paddle's own public paths that dygraph model code imports
                "paddle_hl.version", "paddle_hl.onnx", "paddle_hl.static.amp",
                "paddle_hl.static.amp.bf16", "paddle_hl.incubate", "paddle_hl.incubate.nn",
                "paddle_hl.incubate.nn.functional", "paddle_hl.incubate.autograd",
                "paddle_hl.incubate.optimizer", "paddle_hl.nn.loss",
                "paddle_hl.utils.unique_name", "paddle_hl.utils.datasets",
                "paddle_hl.hapi.progressbar",
                "paddle_hl.hapi.callbacks", "paddle_hl.distributed.launch",
                *(f"paddle_hl.nn.initializer.{m}" for m in (
                    "assign", "constant", "dirac", "initializer", "kaiming", "normal",
                    "orthogonal", "uniform", "xavier"))}


OPTIONAL_DEPS = {"cupy", "cupyx", "ipywidgets", "matplotlib", "soundfile", "cv2", "visualdl",
                 "wandb", "mpi4py"}


def _public():
    if not API_FILE.exists():
        pytest.skip(f"{API_FILE} not found (it lives in ../shared beside the checkout)")
    return set(json.loads(API_FILE.read_text())) | EXTRA_PUBLIC


DOMAINS = ("vision", "audio", "text", "geometric", "hub")


def _modules():
    roots = [(paddle_hl.__path__, "paddle_hl.")]
    for d in DOMAINS:  # domain folders are mapped into the namespace, walk them too
        mod = importlib.import_module(f"paddle_hl.{d}")
        roots.append((mod.__path__, f"paddle_hl.{d}."))
    for path, prefix in roots:
        for info in pkgutil.walk_packages(path, prefix):
            if info.name.endswith(".__main__"):
                continue  # a command (python -m ...): importing it would run it
            yield info.name


def test_no_fluid():
    with pytest.raises(AttributeError):
        paddle_hl.fluid  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("paddle_hl.fluid")


def test_implementation_modules_export_nothing():
    public = _public()
    leaking = []
    for name in _modules():
        if name in public:
            continue
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name in OPTIONAL_DEPS:  # a backend or extra that is not installed here
                continue
            raise
        if getattr(mod, "__all__", None) != []:
            leaking.append(name)
    assert not leaking, f"implementation modules without __all__ = []: {leaking}"
