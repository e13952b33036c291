"""Run a notebook of ``notebooks/`` top to bottom in a real Jupyter kernel (nbclient +
ipykernel), from that folder as Jupyter does, and collect what it showed."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


@dataclasses.dataclass
class NotebookRun:
    nb: object  # the executed notebook
    text: str  # everything printed to stdout
    stderr: list  # what was printed to stderr, one entry per stream output
    pngs: list  # base64 PNG images shown
    htmls: list  # HTML outputs shown
    plain: list  # text/plain reprs of display outputs


def run_notebook(name: str, requires=(), timeout: int = 300) -> NotebookRun:
    """Execute ``notebooks/<name>``; skip when the kernel's packages (or ``requires``) are
    missing; fail on a saved output or an error output."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    for mod in ("ipykernel", *requires):
        pytest.importorskip(mod)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        f"{name} is saved without outputs"
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    run = NotebookRun(nb, "", [], [], [], [])
    text = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            if out.output_type == "stream":
                (text if out.name == "stdout" else run.stderr).append(out.text)
                continue
            data = out.get("data", {})
            if "image/png" in data:
                run.pngs.append(data["image/png"])
            if "text/html" in data:
                run.htmls.append(data["text/html"])
            if "text/plain" in data:
                run.plain.append(data["text/plain"])
    run.text = "".join(text)
    return run
