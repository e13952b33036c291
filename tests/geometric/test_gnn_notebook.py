"""notebooks/05_graph_neural_network.ipynb runs top to bottom in a real Jupyter kernel: it draws
the graph, and its GCN and GraphSAGE (with neighbour sampling) learn the synthetic topics."""

from __future__ import annotations

import re

import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.slow
def test_gnn_notebook_executes_and_learns():
    run = run_notebook("05_graph_neural_network.ipynb", requires=("matplotlib",))
    joined = run.text
    assert "2708 nodes, 10556 edges, 1433 features, 7 classes" in joined
    assert len(run.pngs) == 2  # the neighbourhood drawing and the accuracy bars
    gcn = float(re.search(r"GCN: test accuracy ([0-9.]+)", joined).group(1))
    sage = float(re.search(r"GraphSAGE: test accuracy ([0-9.]+)", joined).group(1))
    assert gcn > 0.7 and sage > 0.7, joined  # 7 classes: chance is 0.14
