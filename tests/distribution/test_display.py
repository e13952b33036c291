"""The notebook display: a PNG of the first batch element's law, and the text fallback."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import paddle_hl

D = paddle_hl.distribution
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("make", [
    lambda: D.Normal(paddle_hl.to_tensor([[0.0, 1.0], [2.0, 3.0]]), 1.0),
    lambda: D.Uniform(0.0, 2.0),
    lambda: D.Cauchy(0.0, 1.0),
    lambda: D.Beta(2.0, 3.0),
    lambda: D.LogNormal(0.0, 0.5),
    lambda: D.Gumbel(0.0, 1.0),
    lambda: D.Bernoulli(paddle_hl.to_tensor([0.3, 0.9])),
    lambda: D.Geometric(0.3),
    lambda: D.Categorical(paddle_hl.to_tensor([[1.0, 2.0, 3.0]])),
])
def test_png_of_first_batch_element(make):
    pytest.importorskip("matplotlib")
    d = make()
    state = paddle_hl.get_rng_state()
    png = d._repr_png_()
    assert png[:8] == PNG and len(png) > 1000
    # drawing the picture does not move the user's random stream
    after = paddle_hl.get_rng_state()
    paddle_hl.set_rng_state(state)
    a = paddle_hl.rand([3]).numpy()
    paddle_hl.set_rng_state(after)
    np.testing.assert_array_equal(a, paddle_hl.rand([3]).numpy())


def test_text_fallback(monkeypatch):
    d = D.Normal(paddle_hl.to_tensor([0.0, 1.0]), 2.0)
    text = repr(d)
    assert text.startswith("Normal(") and "batch_shape=[2]" in text and "loc=[0., 1.]" in text
    # without matplotlib, Jupyter falls back to the text repr
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert d._repr_png_() is None
    # a multivariate law has no single curve: text only
    assert D.Dirichlet(paddle_hl.to_tensor([1.0, 2.0]))._repr_png_() is None
    assert "event_shape=[2]" in repr(D.Dirichlet(paddle_hl.to_tensor([1.0, 2.0])))


@pytest.mark.slow
def test_displays_as_png_in_a_real_kernel():
    """A distribution as the last expression of a cell shows its plot in Jupyter."""
    import base64
    import pathlib

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    root = pathlib.Path(__file__).resolve().parents[2]  # the kernel imports this checkout
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import paddle_hl as paddle\n"
        "paddle.distribution.Gumbel(paddle.to_tensor([0.0, 1.0]), 2.0)")]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(root)}}).execute()
    outs = nb.cells[0].outputs
    assert all(o.output_type != "error" for o in outs), outs
    data = outs[-1]["data"]
    assert base64.b64decode(data["image/png"])[:8] == PNG
    assert data["text/plain"].startswith("Gumbel(loc=[0., 1.]")


def test_large_batches_plot_from_moments():
    pytest.importorskip("matplotlib")
    d = D.Normal(paddle_hl.zeros([20000]), 1.0)
    from paddle_hl.distribution._display import _range

    lo, hi = _range(d)
    np.testing.assert_allclose([lo, hi], [-4.0, 4.0])
    assert d._repr_png_()[:8] == PNG
    # no mean to lean on: a few draws still give the range
    lo, hi = _range(D.Cauchy(paddle_hl.zeros([20000]), 1.0))
    assert lo < 0 < hi
