"""paddle_hl.device and paddle_hl.device.cuda (CPU-only behaviour as Paddle without CUDA; the
CuPy-backed answers on a GPU machine)."""

from __future__ import annotations

import pytest

import paddle_hl as paddle
from paddle_hl import backend, device
from paddle_hl.device import cuda

HAS_GPU = backend.device_count() > 0
cpu_only = pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU")


def test_set_and_get_device_are_the_framework_ones():
    from paddle_hl.framework import place

    assert device.set_device is place.set_device
    assert device.get_device is place.get_device
    prev = device.get_device()
    p = device.set_device("cpu")
    assert str(p) == "Place(cpu)" and device.get_device() == "cpu"
    device.set_device(prev)
    with pytest.raises(ValueError):
        device.set_device("foo")


def test_capability_queries():
    assert device.is_compiled_with_cuda() == HAS_GPU
    for fn in (device.is_compiled_with_rocm, device.is_compiled_with_xpu,
               device.is_compiled_with_ipu, device.is_compiled_with_cinn):
        assert fn() is False
    assert device.is_compiled_with_custom_device("npu") is False
    assert device.get_all_custom_device_type() == []
    assert device.get_available_custom_device() == []
    assert device.device_count() == cuda.device_count() == backend.device_count()


@cpu_only
def test_cpu_only_answers():
    assert cuda.device_count() == 0
    assert device.get_all_device_type() == ["cpu"]
    assert device.get_available_device() == ["cpu"]
    assert device.get_cudnn_version() is None
    assert cuda.empty_cache() is None
    with pytest.raises(ValueError, match="gpu"):
        device.set_device("gpu")
    with pytest.raises(RuntimeError, match="synchronize"):
        cuda.synchronize()
    with pytest.raises(TypeError, match="gpu"):
        device.synchronize()
    for fn in (cuda.memory_allocated, cuda.max_memory_allocated, cuda.memory_reserved,
               cuda.max_memory_reserved, cuda.get_device_name, cuda.get_device_capability,
               cuda.get_device_properties):
        with pytest.raises(ValueError, match="not supported in CPU-only"):
            fn()


@cpu_only
@pytest.mark.parity
def test_cpu_only_matches_paddle(pd):
    if pd.device.is_compiled_with_cuda():
        pytest.skip("the installed paddle has CUDA")
    assert cuda.device_count() == pd.device.cuda.device_count()
    assert cuda.empty_cache() == pd.device.cuda.empty_cache()
    pairs = [("synchronize", ()), ("memory_allocated", ()), ("max_memory_allocated", ()),
             ("memory_reserved", ()), ("get_device_name", ()), ("get_device_capability", ())]
    for name, args in pairs:
        types = []
        for mod in (cuda, pd.device.cuda):
            with pytest.raises(Exception) as info:
                getattr(mod, name)(*args)
            types.append(type(info.value))
        assert types[0] is types[1], name
    assert device.get_cudnn_version() == pd.device.get_cudnn_version()


def test_lazy_submodule():
    assert paddle.device.cuda is cuda
    with pytest.raises(AttributeError):
        device.no_such_thing  # noqa: B018


@pytest.mark.gpu
def test_gpu_queries(device):  # noqa: F811  (the conftest fixture switches to each device)
    if device != "gpu":
        pytest.skip("GPU only")
    assert cuda.device_count() >= 1
    assert paddle.device.get_available_device()[1] == "gpu:0"
    assert "gpu" in paddle.device.get_all_device_type()
    name = cuda.get_device_name(0)
    assert isinstance(name, str) and name
    major, minor = cuda.get_device_capability("gpu:0")
    assert major >= 3 and minor >= 0
    props = cuda.get_device_properties()
    assert props.total_memory > 0 and props.name == name
    x = paddle.ones([1024, 1024])
    cuda.synchronize()
    paddle.device.synchronize()
    used = cuda.memory_allocated()
    assert used >= x.size * 4
    assert cuda.max_memory_allocated() >= used
    assert cuda.memory_reserved() >= used
    assert cuda.max_memory_reserved() >= cuda.memory_reserved()
    del x
    cuda.empty_cache()
    with pytest.raises(ValueError, match="out of range"):
        cuda.get_device_name(cuda.device_count())
