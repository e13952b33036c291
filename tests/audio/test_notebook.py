"""notebooks/03_audio_classification.ipynb runs top to bottom in a real Jupyter kernel: it builds
an ESC-50-format dataset, shows a sample (player and spectrogram), trains with Model.fit and
draws a confusion matrix."""

from __future__ import annotations

import re

import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.slow
def test_audio_classification_notebook_executes():
    run = run_notebook("03_audio_classification.ipynb", requires=("matplotlib", "soundfile"))
    html = "".join(run.htmls)
    # the dataset item and the display helper each rendered a player and spectrogram images
    assert html.count("<audio controls") >= 2
    assert html.count("data:image/png;base64,") >= 3
    assert run.pngs, "the confusion matrix is drawn"
    m = re.search(r"dev accuracy: ([0-9.]+)", run.text + "".join(run.plain))
    assert m, run.text[-2000:]
    assert float(m.group(1)) >= 0.75
