"""ModelCheckpoint files and the ReduceLROnPlateau callback, against Paddle 2.6.2."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

import paddle_hl


def _fit_listing(lib, folder, epochs, save_freq, optimizer, callback):
    class _Data(lib.io.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return np.full(4, i, "float32"), np.array([i % 2], "int64")

    net = lib.nn.Linear(4, 2)
    model = lib.Model(net)
    model.prepare(getattr(lib.optimizer, optimizer)(parameters=net.parameters()),
                  lib.nn.CrossEntropyLoss())
    with contextlib.redirect_stdout(io.StringIO()):
        if callback:
            model.fit(_Data(), batch_size=4, epochs=epochs, verbose=0,
                      callbacks=[lib.callbacks.ModelCheckpoint(save_freq, str(folder))])
        else:
            model.fit(_Data(), batch_size=4, epochs=epochs, verbose=0, save_dir=str(folder),
                      save_freq=save_freq)
    return sorted(os.listdir(folder))


@pytest.mark.parity
@pytest.mark.parametrize("callback", [False, True], ids=["save_dir", "callback"])
@pytest.mark.parametrize(("epochs", "save_freq"), [(3, 1), (5, 2), (4, 3), (2, 5), (3, 2)])
def test_checkpoint_files_parity(pd, tmp_path, epochs, save_freq, callback):
    optimizer = "Adam" if epochs % 2 else "SGD"  # SGD has no state: no .pdopt files
    ours = _fit_listing(paddle_hl, tmp_path / "hl", epochs, save_freq, optimizer, callback)
    theirs = _fit_listing(pd, tmp_path / "pd", epochs, save_freq, optimizer, callback)
    assert ours == theirs
    assert "final.pdparams" in ours and "0.pdparams" in ours


def test_checkpoint_epochs_counted_from_zero(tmp_path):
    files = _fit_listing(paddle_hl, tmp_path, 5, 2, "Adam", False)
    assert files == ["0.pdopt", "0.pdparams", "2.pdopt", "2.pdparams", "4.pdopt",
                     "4.pdparams", "final.pdopt", "final.pdparams"]


SEQS = {
    "falling": [1.0, 0.99, 0.995, 0.9899, 0.98, 0.985, 0.97999, 0.9799, 0.96, 0.97, 0.9601],
    "negative": [-1.0, -1.00005, -1.0002, -1.0001, -1.0003, -1.00031, -1.0004, -0.9, -0.8],
    "accuracy": [0.5, 0.6, 0.6, 0.60005, 0.61, 0.61, 0.61, 0.7, 0.69, 0.69, 0.69],
}
SETTINGS = [{}, {"patience": 1}, {"patience": 0, "min_delta": 0.001},
            {"patience": 1, "cooldown": 2}, {"patience": 0, "factor": 0.5, "min_lr": 0.02},
            {"patience": 2, "mode": "max"}, {"monitor": "acc", "patience": 1}]


@pytest.mark.parity
@pytest.mark.parametrize("seq", sorted(SEQS))
@pytest.mark.parametrize("kw", SETTINGS, ids=[str(i) for i in range(len(SETTINGS))])
def test_reduce_lr_on_plateau_callback_parity(pd, kw, seq):
    res = {}
    for lib in (pd, paddle_hl):
        net = lib.nn.Linear(2, 1)
        model = lib.Model(net)
        model.prepare(lib.optimizer.SGD(0.1, parameters=net.parameters()), lib.nn.MSELoss())
        cb = lib.callbacks.ReduceLROnPlateau(**kw)
        cb.set_model(model)
        cb.on_train_begin()
        lrs = []
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for i, v in enumerate(SEQS[seq]):
                cb.on_epoch_begin(i)
                cb.on_eval_end({"loss": [v], "acc": v})
                lrs.append(float(model._optimizer.get_lr()))
        res[lib.__name__] = (lrs, out.getvalue())
    np.testing.assert_allclose(res["paddle_hl"][0], res["paddle"][0], rtol=1e-12)
    assert res["paddle_hl"][1] == res["paddle"][1]
