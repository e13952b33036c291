"""notebooks/03_audio_classification.ipynb runs top to bottom in a real Jupyter kernel: it builds
an ESC-50-format dataset, shows a sample (player and spectrogram), trains with Model.fit and
draws a confusion matrix."""

from __future__ import annotations

import pathlib
import re

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / \
    "03_audio_classification.ipynb"


@pytest.mark.slow
def test_audio_classification_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    pytest.importorskip("soundfile")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "the notebook is saved without outputs"
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    htmls, pngs, text = [], [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                text.append(out.text)
            data = out.get("data", {})
            htmls.append(data.get("text/html", ""))
            if "image/png" in data:
                pngs.append(data["image/png"])
            text.append(data.get("text/plain", ""))
    html = "".join(htmls)
    # the dataset item and the display helper each rendered a player and spectrogram images
    assert html.count("<audio controls") >= 2
    assert html.count("data:image/png;base64,") >= 3
    assert pngs, "the confusion matrix is drawn"
    m = re.search(r"dev accuracy: ([0-9.]+)", "".join(text))
    assert m, "".join(text)[-2000:]
    assert float(m.group(1)) >= 0.75
