"""notebooks/04_text_classification.ipynb runs top to bottom in a real Jupyter kernel: the
aclImdb-layout archive is read by Imdb, an item shows as text, the LSTM classifier trained with
Model.fit learns, and the BiLSTM-CRF tagger decoded by ViterbiDecoder tags correctly."""

from __future__ import annotations

import pathlib
import re

import pytest

NOTEBOOK = (pathlib.Path(__file__).resolve().parents[2] / "notebooks"
            / "04_text_classification.ipynb")


def test_notebook_is_saved_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
def test_text_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # run from notebooks/, as Jupyter does; the notebook puts the checkout first on sys.path
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    htmls, text = [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                text.append(out.text)
            else:
                htmls.append(out.get("data", {}).get("text/html", ""))
    joined = "".join(text)

    assert "240 training and 120 test reviews" in joined
    # the item view rendered as an HTML table with the decoded review
    view = [h for h in htmls if "Imdb[1] (train)" in h]
    assert view and "<table" in view[0] and "positive" in view[0]
    acc = float(re.search(r"test accuracy: ([0-9.]+)", joined).group(1))
    assert acc > 0.8, joined
    tag_acc = float(re.search(r"tag accuracy ([0-9.]+)", joined).group(1))
    assert tag_acc > 0.9, joined
    assert re.search(r"\w+/B-(PER|LOC)", joined)
    assert "P(positive) =" in joined
