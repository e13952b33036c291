"""The notebooks in notebooks/ run top to bottom in a real Jupyter kernel (nbclient) and leave
the views they promise: progress widgets with a live chart, static records, one HTML summary,
the digit grid, the profiler's HTML tables and timeline, and no stderr output."""

from __future__ import annotations

import json
import pathlib
import re
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _execute(name, monkeypatch, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    # a copy (notebooks write files next to themselves, e.g. profiler logs), laid out as in
    # the repository: quickstart.py one folder up
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / name
    shutil.copy(ROOT / name, path)
    shutil.copy(ROOT.parent / "quickstart.py", tmp_path / "quickstart.py")
    # the kernel imports this checkout's paddle_hl (not another installed copy)
    monkeypatch.setenv("PYTHONPATH", str(ROOT.parent))
    nb = nbformat.read(path, as_version=4)
    # run from notebooks/, as Jupyter does, so that the notebook finds ../quickstart.py
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}},
                                     store_widget_state=True)
    client.execute()
    out = {"views": [], "png": [], "svg": [], "html": [], "stdout": [], "stderr": []}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert "_scale_value" not in cell.source  # the notebooks use public API only
        for o in cell.outputs:
            assert o.output_type != "error", "\n".join(o.get("traceback", []))
            if o.output_type == "stream":
                out[o.name].append(o.text)
                continue
            data = o.get("data", {})
            if WIDGET_VIEW in data:
                out["views"].append(data[WIDGET_VIEW]["model_id"])
            for mime, key in (("image/png", "png"), ("image/svg+xml", "svg"),
                              ("text/html", "html")):
                if mime in data:
                    out[key].append(data[mime])
    # no raw warnings (NumPy's or others) in any cell
    assert not out["stderr"], "".join(out["stderr"])
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return out, state


@pytest.mark.slow
def test_quickstart_notebook_executes_with_widgets_and_chart(monkeypatch, tmp_path):
    out, state = _execute("01_quickstart.ipynb", monkeypatch, tmp_path)
    text = "".join(out["stdout"])
    # fit, evaluate, predict, then the early-stopped fit and the num_iters fit: one block each
    views = out["views"]
    assert len(views) == 5, views
    assert all(v in state for v in views)
    names = [m["model_name"] for m in state.values()]
    assert names.count("IntProgressModel") >= 6  # 2 epochs + 2 evals, evaluate, predict, ...
    fit_box = state[views[0]]["state"]
    assert len(fit_box["children"]) == 5  # header, folded-rows note, bars, messages, chart
    chart = state[fit_box["children"][4].replace("IPY_MODEL_", "")]["state"]
    assert "<svg" in chart["value"] and "loss (epoch)" in chart["value"]
    header = state[fit_box["children"][0].replace("IPY_MODEL_", "")]["state"]["value"]
    assert "Training finished" in header

    # each fit leaves its record: a table and the chart as an SVG image
    records = [h for h in out["html"] if "Training record" in h]
    assert len(records) == 3 and len(out["svg"]) >= 3
    assert any("Evaluation record" in h for h in out["html"])
    # the sample strip and the predicted digits are PNG images
    assert len(out["png"]) >= 2
    # one summary table, as HTML; no text copy
    assert sum("Model Summary" in h for h in out["html"]) == 1
    assert any("61,610" in h for h in out["html"])
    assert "Total params: 61,610" not in text

    acc = float(re.search(r"'acc': (?:np\.float64\()?([0-9.]+)", text).group(1))
    assert acc > 0.9
    assert "reloaded:" in text
    epochs_run = int(re.search(r"epochs run: (\d+)", text).group(1))
    assert 1 <= epochs_run < 8
    assert "steps run: 24" in text
    # EarlyStopping's message went into the block, not loose into the cell
    assert "Early stopping" not in text
    assert "Early stopping" in json.dumps(state)
    # the notebook reports the display's share of the training time (measured, not asserted)
    assert re.search(r"= ([0-9.]+)% of the training time", text), text


@pytest.mark.slow
def test_profiler_and_amp_notebook_executes_with_html_tables_and_timelines(monkeypatch,
                                                                         tmp_path):
    out, _state = _execute("02_profiler_and_amp.ipynb", monkeypatch, tmp_path)
    html = "\n".join(out["html"])
    text = "".join(out["stdout"])
    # prof.summary() renders HTML tables in a notebook, not the wrapped text tables
    assert "class='phl-sum'" in html and "Operator Summary" in html
    assert "Summary" not in text  # no text copy
    # three timelines; by default without the tables repeated under them
    timelines = [h for h in out["html"] if "phl-tl-" in h]
    assert len(timelines) == 3
    assert all("class='phl-sum'" not in t for t in timelines)
    assert "loss scale:" in text
    assert any("GradScaler" in h for h in out["html"])
