"""notebooks/04_text_classification.ipynb runs top to bottom in a real Jupyter kernel: the
aclImdb-layout archive is read by Imdb, an item shows as text, the LSTM classifier trained with
Model.fit learns, and the BiLSTM-CRF tagger decoded by ViterbiDecoder tags correctly."""

from __future__ import annotations

import re

import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.slow
def test_text_notebook_executes():
    run = run_notebook("04_text_classification.ipynb")
    joined = run.text
    assert "240 training and 120 test reviews" in joined
    # the item view rendered as an HTML table with the decoded review
    view = [h for h in run.htmls if "Imdb[1] (train)" in h]
    assert view and "<table" in view[0] and "positive" in view[0]
    acc = float(re.search(r"test accuracy: ([0-9.]+)", joined).group(1))
    assert acc > 0.8, joined
    tag_acc = float(re.search(r"tag accuracy ([0-9.]+)", joined).group(1))
    assert tag_acc > 0.9, joined
    assert re.search(r"\w+/B-(PER|LOC)", joined)
    assert "P(positive) =" in joined
