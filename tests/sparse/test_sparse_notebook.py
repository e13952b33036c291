"""The sparse point-cloud notebook runs top to bottom, offline, in a real Jupyter kernel."""

from __future__ import annotations

import re

import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.slow
def test_sparse_point_cloud_notebook():
    run = run_notebook("06_sparse_point_cloud.ipynb", requires=("matplotlib",))
    text = run.text
    assert not run.stderr, run.stderr
    assert re.search(r"voxels per cloud: \d+ of 4096", text)
    assert any("paddle sparse COO" in h and "nnz=" in h and "<svg" in h for h in run.htmls)
    assert len(run.pngs) == 1  # the 3-D voxel scatter
    assert float(re.search(r"test accuracy: ([0-9.]+)", text).group(1)) > 0.7
    assert "(the input's sites, unchanged)" in text
    assert "rulebooks kept on the tensor: ['grid16']" in text
