"""``_program.resolver``: the one place that turns a program's value references into values,
for the array replay (``run``), the Tensor replay (TranslatedLayer) and the ONNX exporter."""

from __future__ import annotations

import numpy as np
import pytest

from paddle_hl.jit import _program
from paddle_hl.jit._program import Sym, TraceError


def _get(**ops):
    base = np.arange(12.0).reshape(3, 4)
    vals = {"k": base}
    return base, _program.resolver(vals, [base + 100], {"w": base * 2}, [np.ones(2)], (3,),
                                   **ops)


def test_every_kind_on_arrays():
    base, get = _get()
    assert get(("v", "k")) is base
    np.testing.assert_array_equal(get(("in", 0)), base + 100)
    np.testing.assert_array_equal(get(("p", "w")), base * 2)
    np.testing.assert_array_equal(get(("c", 0)), np.ones(2))
    # Sym integers are bound to the free-dim sizes, in literals, reshapes and views
    assert get(("lit", [Sym((0, 2)), 5])) == [6, 5]
    assert get(("seq", "tuple", [("v", "k"), ("c", 0)]))[0] is base
    assert isinstance(get(("seq", "list", [("v", "k")])), list)
    np.testing.assert_array_equal(get(("reshape", ("v", "k"), (2, Sym((0, 2))))),
                                  base.reshape(2, 6))
    np.testing.assert_array_equal(get(("view", ("v", "k"), 1, (3, 2), (4, 2))),
                                  base[:, 1::2])


def test_operations_and_error_are_the_callers():
    def reshape(x, shape):
        return ("reshaped", x.shape, shape)

    def view(x, off, shape, strides):
        return ("view", off, shape, strides)

    _, get = _get(seq_item=lambda x: x.shape, reshape=reshape, view=view,
                  error=lambda msg: ValueError(f"here: {msg}"))
    assert get(("seq", "list", [("v", "k"), ("c", 0)])) == [(3, 4), (2,)]
    assert get(("reshape", ("v", "k"), [Sym((1, 1))])) == ("reshaped", (3, 4), [4])
    assert get(("view", ("v", "k"), Sym((0, 1)), (2,), (1,))) == ("view", 3, (2,), (1,))
    with pytest.raises(ValueError, match=r"^here: unknown value reference \('x', 1\)$"):
        get(("x", 1))


def test_unknown_reference_is_a_trace_error():
    _, get = _get()
    with pytest.raises(TraceError, match=r"^unknown value reference \('x', 1\)$"):
        get(("x", 1))

