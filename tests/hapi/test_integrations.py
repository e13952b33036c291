"""The VisualDL and Wandb callbacks: a clear ImportError without the package, real logging with
it (wandb in offline mode; skipped when the optional package is not installed)."""

from __future__ import annotations

import builtins
import os

import pytest

import paddle_hl as paddle
from tests.hapi.test_model import _dataset, _model


@pytest.mark.parametrize("cls,pkg", [("VisualDL", "visualdl"), ("WandbCallback", "wandb")])
def test_missing_package_names_the_install(monkeypatch, cls, pkg):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == pkg or name.startswith(pkg + "."):
            raise ImportError(f"No module named {pkg!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=f"pip install {pkg}"):
        getattr(paddle.callbacks, cls)(**({"log_dir": "x"} if cls == "VisualDL" else {}))


def test_wandb_logs_a_fit_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    m = _model(paddle)
    cb = paddle.callbacks.WandbCallback(project="paddle_hl-test", dir=str(tmp_path),
                                        mode="offline")
    m.fit(_dataset(paddle, 16), _dataset(paddle, 8), batch_size=8, epochs=2, verbose=0,
          callbacks=[cb])
    runs = [d for d in os.listdir(tmp_path / "wandb") if d.startswith("offline-run")]
    assert runs
    run_dir = tmp_path / "wandb" / runs[0]
    assert any(f.endswith(".wandb") for f in os.listdir(run_dir))


def test_visualdl_writes_scalars(tmp_path):
    pytest.importorskip("visualdl")
    m = _model(paddle)
    m.fit(_dataset(paddle, 16), _dataset(paddle, 8), batch_size=8, epochs=1, verbose=0,
          callbacks=[paddle.callbacks.VisualDL(str(tmp_path / "vdl"))])
    assert os.listdir(tmp_path / "vdl")
