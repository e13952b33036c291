"""The sparse point-cloud notebook runs top to bottom, offline, in a real Jupyter kernel."""

from __future__ import annotations

import pathlib
import re

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"


def _execute(name):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    text, pngs, htmls = [], 0, []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                assert out.name == "stdout", f"unexpected stderr output: {out.text}"
                text.append(out.text)
            data = out.get("data", {})
            pngs += "image/png" in data
            if "text/html" in data:
                htmls.append(data["text/html"])
    return "".join(text), pngs, htmls


@pytest.mark.slow
def test_sparse_point_cloud_notebook():
    text, pngs, htmls = _execute("06_sparse_point_cloud.ipynb")
    assert re.search(r"voxels per cloud: \d+ of 4096", text)
    assert any("paddle sparse COO" in h and "nnz=" in h and "<svg" in h for h in htmls)
    assert pngs == 1  # the 3-D voxel scatter
    assert float(re.search(r"test accuracy: ([0-9.]+)", text).group(1)) > 0.7
    assert "(the input's sites, unchanged)" in text
    assert "rulebooks kept on the tensor: ['grid16']" in text
