"""batch, check_shape, flags, LazyGuard and the static-mode switches."""

from __future__ import annotations

import warnings

import pytest

import paddle_hl as paddle


def test_batch_reader():
    reader = paddle.batch(lambda: iter(range(7)), batch_size=3)
    assert list(reader()) == [[0, 1, 2], [3, 4, 5], [6]]
    reader = paddle.batch(lambda: iter(range(7)), batch_size=3, drop_last=True)
    assert list(reader()) == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="batch_size"):
        paddle.batch(lambda: iter([]), 0)


@pytest.mark.parity
def test_batch_parity(pd):
    ours = list(paddle.batch(lambda: iter(range(10)), 4)())
    theirs = list(pd.batch(lambda: iter(range(10)), 4)())
    assert ours == theirs


def test_check_shape():
    paddle.check_shape([2, 3], "zeros")
    paddle.check_shape([2, paddle.to_tensor(3)], "zeros")
    paddle.check_shape(paddle.to_tensor([2, 3]), "zeros")
    with pytest.raises(TypeError, match="zeros"):
        paddle.check_shape("2,3", "zeros")
    with pytest.raises(TypeError, match="zeros"):
        paddle.check_shape([2.5], "zeros")
    with pytest.raises(TypeError, match="dtype"):
        paddle.check_shape(paddle.to_tensor([2.0]), "zeros")


def test_flags_round_trip():
    assert paddle.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}
    paddle.set_flags({"FLAGS_check_nan_inf": True})
    try:
        assert paddle.get_flags(["FLAGS_check_nan_inf"])["FLAGS_check_nan_inf"] is True
    finally:
        paddle.set_flags({"FLAGS_check_nan_inf": False})
    with pytest.raises(ValueError, match="FLAGS_nonexistent"):
        paddle.get_flags("FLAGS_nonexistent")
    with pytest.raises(TypeError):
        paddle.set_flags(["FLAGS_check_nan_inf"])


def test_lazy_guard_and_modes():
    from paddle_hl.framework.misc import lazy_init_enabled

    assert not lazy_init_enabled()
    with paddle.LazyGuard():
        assert lazy_init_enabled()
    assert not lazy_init_enabled()
    assert paddle.in_dynamic_mode()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        paddle.enable_static()
    assert any("eager" in str(x.message) for x in w)
    assert paddle.in_dynamic_mode()
    paddle.disable_static()
    assert paddle.disable_signal_handler() is None
