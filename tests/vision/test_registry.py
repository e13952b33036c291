"""The model registry: every ``@register_model`` constructor builds and runs, names are unique
and match the lower-case names of ``vision.models.__all__``, and the decorator rejects bad
constructors."""

from __future__ import annotations

import inspect

import pytest
from paddle_hl.vision import models
from paddle_hl.vision.models import _registry

import paddle_hl

# Smallest input side each architecture accepts (the rest run at 32 x 32).
_SIDE = {"alexnet": 224, "googlenet": 224, "inception_v3": 75}
# Cheap enough (about a second to build and run) for every run; the others are slow.
_FAST = {"mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
         "resnet18", "densenet121", "squeezenet1_0", "squeezenet1_1", "shufflenet_v2_x0_25",
         "shufflenet_v2_x0_33", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
         "shufflenet_v2_swish"}


def test_registry_is_the_public_lower_case_names():
    public = [n for n in models.__all__ if n[0].islower()]
    assert len(public) == len(set(public))
    assert sorted(models.MODEL_REGISTRY) == sorted(public)
    assert models.MODEL_REGISTRY is _registry.MODEL_REGISTRY
    assert _registry.list_models() == sorted(public)


def test_entries_are_the_module_functions_under_their_own_names():
    for name, fn in models.MODEL_REGISTRY.items():
        assert fn is getattr(models, name)
        assert inspect.isfunction(fn) and fn.__name__ == name
        # a plain module-level function, not a closure made by a factory
        assert fn.__qualname__ == name and fn.__closure__ is None, name
        assert fn.__doc__ and f">>> model = {name}(" in fn.__doc__, name


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=() if n in _FAST else (pytest.mark.slow,))
    for n in models.MODEL_REGISTRY])
def test_every_entry_builds_and_runs(name):
    net = models.MODEL_REGISTRY[name](pretrained=False, num_classes=3)
    assert isinstance(net, paddle_hl.nn.Layer)
    net.eval()
    side = _SIDE.get(name, 32)
    with paddle_hl.no_grad():
        out = net(paddle_hl.rand([2, 3, side, side]))
    out = out[0] if isinstance(out, (list, tuple)) else out
    assert out.shape == [2, 3]


def test_get_model_builder():
    assert _registry.get_model_builder("resnet18") is models.resnet18
    with pytest.raises(ValueError, match="unknown model 'resnet7'.*resnet18"):
        _registry.get_model_builder("resnet7")


def test_register_model_adds_and_rejects_duplicates_and_bad_signatures():
    @_registry.register_model
    def tiny_registry_net(pretrained=False, **kwargs):
        """Tiny."""
        return paddle_hl.nn.Linear(2, kwargs.get("num_classes", 2))

    try:
        assert models.MODEL_REGISTRY["tiny_registry_net"] is tiny_registry_net
        # registering the same function again is a no-op; another one under the name is not
        assert _registry.register_model(tiny_registry_net) is tiny_registry_net

        def other(pretrained=False, **kwargs):
            return None

        with pytest.raises(ValueError, match="'tiny_registry_net' is already registered"):
            _registry.register_model(name="tiny_registry_net")(other)
    finally:
        del models.MODEL_REGISTRY["tiny_registry_net"]

    def no_kwargs(pretrained=False):
        return None

    def pretrained_true(pretrained=True, **kwargs):
        return None

    for bad in (no_kwargs, pretrained_true):
        with pytest.raises(ValueError, match=r"must have the signature \(pretrained=False"):
            _registry.register_model(bad)
        assert bad.__name__ not in models.MODEL_REGISTRY
