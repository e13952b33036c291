"""notebooks/07_data_parallel.ipynb runs top to bottom in a real Jupyter kernel: LeNet trained
on 2 processes with spawn reaches the same accuracy (and weights) as on one, and the progress
shows one row per rank with the merged metrics."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "07_data_parallel.ipynb"


@pytest.mark.slow
def test_data_parallel_notebook(monkeypatch):
    pytest.importorskip("mpi4py")
    pytest.importorskip("cloudpickle")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("ipywidgets")
    from .test_multiprocess import _mpiexec

    _mpiexec()
    # the kernel (and the processes it spawns) import this checkout's paddle_hl
    root = str(NOTEBOOK.parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    text, widgets = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                text.append(out.text)
            elif "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
                widgets.append(out)
    text = "".join(text)
    one = float(re.search(r"1 process:\s+test accuracy ([0-9.]+)", text).group(1))
    r0, r1 = map(float, re.search(r"2 processes: test accuracy ([0-9.]+) on rank 0, ([0-9.]+) "
                                  r"on rank 1", text).groups())
    assert one > 0.5 and r0 == r1 and abs(r0 - one) <= 0.01, text
    diff = float(re.search(r"largest weight difference between 1 and 2 processes: (\S+)",
                           text).group(1))
    assert diff < 1e-3, text
    merged = re.findall(r"merged (train|eval)\s+epoch (\d): loss ([0-9.]+), acc ([0-9.]+)", text)
    assert [(m, e) for m, e, _, _ in merged] == [("train", "1"), ("eval", "1"), ("train", "2"),
                                                 ("eval", "2")], text
    assert "\x1epaddle_hl.progress" not in text  # the progress lines were drawn, not printed
    assert len(widgets) >= 2  # the one-process fit's display and the per-rank rows
