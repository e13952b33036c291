"""The data-to-diagnosis tutorial runs top to bottom in a real Jupyter kernel: ``show_batch``
on a dataset and on a DataLoader, ``Model.lr_find`` (restoring the weights exactly) and
``interpret``, each leaving its static HTML form in the notebook."""

from __future__ import annotations

import re
import time

import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.slow
def test_data_to_diagnosis_notebook():
    t0 = time.monotonic()
    run = run_notebook("13_data_to_diagnosis.ipynb", requires=("matplotlib",))
    took = time.monotonic() - t0
    assert not run.stderr, f"unexpected stderr output: {run.stderr}"
    text = run.text
    assert "6000 training and 1000 test images" in text
    lr = float(re.search(r"suggested learning rate: ([0-9.e+-]+)", text).group(1))
    assert 1e-4 < lr < 1e-1
    assert "weights restored exactly: True" in text
    assert float(re.search(r"test accuracy: ([0-9.]+)", text).group(1)) > 0.85
    assert re.search(r"most confused: \d taken for \d \d+ times", text)
    assert "confusion matrix rows sum to the class sizes: True" in text
    # each view left its static form (HTML with PNG pictures) in the saved outputs
    views = {k: [h for h in run.htmls if f"phl-{k}" in h] for k in ("batch", "lrfind",
                                                                     "interpret")}
    assert len(views["batch"]) == 2 and len(views["lrfind"]) == 1
    assert len(views["interpret"]) == 1
    assert all("data:image/png;base64," in h for v in views.values() for h in v)
    assert "Suggested learning rate" in views["lrfind"][0]
    assert "Per class" in views["interpret"][0] and "Most confused" in views["interpret"][0]
    assert took < 120, f"the tutorial took {took:.0f} s"
