"""The batch- and instance-norm classes differ only in their default data_format, stated as a
class attribute: each class's signature, repr, state_dict keys and stored format are those of a
class that declares its own __init__ (as Paddle's do)."""

from __future__ import annotations

import inspect

import pytest

import paddle_hl as paddle

nn = paddle.nn

CASES = [(nn.BatchNorm1D, "NCL", True), (nn.BatchNorm2D, "NCHW", True),
         (nn.BatchNorm3D, "NCDHW", True), (nn.InstanceNorm1D, "NCL", False),
         (nn.InstanceNorm2D, "NCHW", False), (nn.InstanceNorm3D, "NCDHW", False)]


@pytest.mark.parametrize("cls, fmt, batch", CASES)
def test_signature_shows_the_class_default(cls, fmt, batch):
    params = inspect.signature(cls).parameters
    assert params["data_format"].default == fmt
    first = ["num_features", "momentum", "epsilon"] if batch else \
        ["num_features", "epsilon", "momentum"]
    assert list(params)[:3] == first
    assert ("use_global_stats" in params) == batch


@pytest.mark.parametrize("cls, fmt, batch", CASES)
def test_default_and_explicit_format(cls, fmt, batch):
    layer = cls(3)
    assert layer._data_format == fmt
    other = "NLC" if fmt == "NCL" else ("NHWC" if fmt == "NCHW" else "NDHWC")
    assert cls(3, data_format=other)._data_format == other
    keys = list(layer.state_dict())
    assert keys == (["weight", "bias", "_mean", "_variance"] if batch else ["scale", "bias"])


def test_repr_is_unchanged():
    assert repr(nn.BatchNorm1D(3)) == \
        "BatchNorm1D(num_features=3, momentum=0.9, epsilon=1e-05, data_format=NCL)"
    assert repr(nn.BatchNorm2D(3)) == "BatchNorm2D(num_features=3, momentum=0.9, epsilon=1e-05)"
    assert repr(nn.InstanceNorm3D(2)) == "InstanceNorm3D(num_features=2, epsilon=1e-05)"


def test_a_subclass_keeps_its_own_signature():
    class Own(nn.BatchNorm2D):
        def __init__(self, c, extra=1):
            super().__init__(c)

    class Inherits(nn.BatchNorm1D):
        pass

    assert list(inspect.signature(Own).parameters) == ["c", "extra"]
    assert Own(3)._data_format == "NCHW"
    assert inspect.signature(Inherits).parameters["data_format"].default == "NCL"
    assert Inherits(3)._data_format == "NCL"
    sync = inspect.signature(nn.SyncBatchNorm).parameters
    assert sync["data_format"].default == "NCHW" and "use_global_stats" not in sync
