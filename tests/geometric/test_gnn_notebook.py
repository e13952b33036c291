"""notebooks/05_graph_neural_network.ipynb runs top to bottom in a real Jupyter kernel: it draws
the graph, and its GCN and GraphSAGE (with neighbour sampling) learn the synthetic topics."""

from __future__ import annotations

import pathlib
import re

import pytest

NOTEBOOK = (pathlib.Path(__file__).resolve().parents[2] / "notebooks"
            / "05_graph_neural_network.ipynb")


@pytest.mark.slow
def test_gnn_notebook_executes_and_learns():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "the notebook is saved without outputs"
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    pngs, text = [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                text.append(out.text)
            elif "image/png" in out.get("data", {}):
                pngs.append(out["data"]["image/png"])
    joined = "".join(text)
    assert "2708 nodes, 10556 edges, 1433 features, 7 classes" in joined
    assert len(pngs) == 2  # the neighbourhood drawing and the accuracy bars
    gcn = float(re.search(r"GCN: test accuracy ([0-9.]+)", joined).group(1))
    sage = float(re.search(r"GraphSAGE: test accuracy ([0-9.]+)", joined).group(1))
    assert gcn > 0.7 and sage > 0.7, joined  # 7 classes: chance is 0.14
