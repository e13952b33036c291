"""Public names come only from the documented namespaces; implementation modules export
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
                "paddle_hl.inference",
                "paddle_hl.distributed.fleet", "paddle_hl.distributed.fleet.utils",
                # the op library and the decoder module, as Paddle lays them out
                "paddle_hl.tensor", "paddle_hl.nn.decode",
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


def test_tensor_categories_are_exported_by_name():
    """Every public function of a tensor category is imported by name into paddle.tensor and the
    top-level namespace (the same object), and nothing else is."""
    from paddle_hl import tensor

    listed = []
    for category in tensor.CATEGORIES:
        for name in category.API:
            assert getattr(tensor, name) is getattr(category, name), name
            assert getattr(paddle_hl, name) is getattr(category, name), name
            listed.append(name)
    assert sorted(tensor.__all__) == sorted(listed)
    assert set(tensor.__all__) <= set(paddle_hl.__all__)


def test_domains_are_mapped_by_the_installation():
    """vision/, audio/, ... are packages of the install (pyproject's package-dir), not found by
    an import hook of paddle_hl's."""
    import sys

    assert not [f for f in sys.meta_path if "Domain" in type(f).__name__]
    root = pathlib.Path(paddle_hl.__file__).resolve().parents[1]
    for d in DOMAINS:
        mod = importlib.import_module(f"paddle_hl.{d}")
        assert pathlib.Path(mod.__file__).resolve() == root / d / "__init__.py"


def test_the_core_reaches_a_domain_only_lazily():
    import subprocess
    import sys

    code = ("import sys, paddle_hl, paddle_hl.nn, paddle_hl.optimizer, paddle_hl.io, "
            "paddle_hl.metric, paddle_hl.hapi, paddle_hl.amp, paddle_hl.profiler, "
            "paddle_hl.incubate\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[:2] in "
            f"[['paddle_hl', d] for d in {DOMAINS!r}]))\n"
            "print(paddle_hl.vision.models.LeNet.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "LeNet"
