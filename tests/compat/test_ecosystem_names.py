"""The names real Paddle programs use beyond the API list (``shared/reference/ecosystem-names.md``):
every listed name is imported the way model code imports it and exercised, and the ones that
compute numbers are compared with real Paddle.

The list is read from the shared file, so a name added there without an exercise here fails
``test_listed_name``.
"""

from __future__ import annotations

import hashlib
import importlib
import pathlib
import re
import threading
import warnings

import numpy as np
import pytest

import paddle_hl as paddle

NAMES_FILE = (pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference" /
              "ecosystem-names.md")

EXERCISES = {}


def exercise(*names):
    """Register a function that exercises the given listed names."""

    def register(fn):
        for n in names:
            EXERCISES[n] = fn
        return fn

    return register


def _listed():
    if not NAMES_FILE.exists():  # outside the workspace: the names registered here
        return sorted(EXERCISES)
    return re.findall(r"^\| `([^`]+)` \|", NAMES_FILE.read_text(), re.M)


def _resolve(name):
    """The object Paddle's dotted ``name`` names in paddle_hl: the longest importable module
    prefix, then attributes."""
    parts = ["paddle_hl"] + name.split(".")[1:]
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


# Names that are instance attributes in Paddle too (set in __init__ or by a method): the
# exercise checks them on an instance instead of resolving them on the class.
INSTANCE_ATTRS = {
    "paddle.nn.Conv2D._channel_dim", "paddle.nn.Conv2D._op_type",
    "paddle.nn.Conv2D._padding_algorithm", "paddle.nn.Conv2D._reversed_padding_repeated_twice",
    "paddle.nn.Conv2D._updated_padding", "paddle.nn.Conv2D._use_cudnn",
    "paddle.vision.Compose.transforms", "paddle.nn.decode.BeamSearchDecoder.batch_size",
}


@pytest.mark.parametrize("name", _listed())
def test_listed_name(name):
    fn = EXERCISES.get(name)
    assert fn is not None, f"{name} is listed in ecosystem-names.md but exercised by no test"
    if name not in INSTANCE_ATTRS:
        _resolve(name)
    fn()


# ----------------------------------------------------------------------------- top level
@exercise("paddle.norm", "paddle.inverse", "paddle.cholesky")
def _top_level_linalg():
    a = paddle.to_tensor([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(paddle.norm(a).numpy(), np.linalg.norm(a.numpy()), rtol=1e-6)
    np.testing.assert_allclose(paddle.inverse(a).numpy(), np.linalg.inv(a.numpy()), rtol=1e-5)
    np.testing.assert_allclose(paddle.cholesky(a).numpy(), np.linalg.cholesky(a.numpy()),
                               rtol=1e-6)
    assert paddle.norm is paddle.linalg.norm and paddle.cholesky is paddle.linalg.cholesky


@exercise("paddle.__git_commit__")
def _git_commit():
    assert isinstance(paddle.__git_commit__, str) and paddle.__git_commit__


# ----------------------------------------------------------------------------- dataset, reader
@exercise("paddle.dataset.common.md5file")
def _md5file(tmp=None):
    import tempfile

    from paddle_hl.dataset.common import md5file

    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "f.bin"
        data = np.random.default_rng(0).bytes(3 << 20)  # more than one read chunk
        p.write_bytes(data)
        assert md5file(str(p)) == hashlib.md5(data).hexdigest()


def _reader(n=5):
    return lambda: iter(range(n))


@exercise("paddle.reader.buffered")
def _buffered():
    import paddle_hl.reader as R

    assert list(R.buffered(_reader(50), 3)()) == list(range(50))

    def bad():
        yield 1
        raise OSError("disk gone")

    it = R.buffered(bad, 2)()
    assert next(it) == 1
    with pytest.raises(OSError, match="disk gone"):
        next(it)


@exercise("paddle.reader.xmap_readers", "paddle.reader.decorator.xmap_readers")
def _xmap():
    from paddle_hl.reader import decorator, xmap_readers

    assert xmap_readers is decorator.xmap_readers
    assert list(xmap_readers(lambda x: x * 2, _reader(40), 4, 8, order=True)()) == \
        [2 * i for i in range(40)]
    assert sorted(xmap_readers(lambda x: x + 1, _reader(40), 3, 5)()) == list(range(1, 41))
    # the mapper runs in threads other than the caller's
    seen = set()

    def who(x):
        seen.add(threading.get_ident())
        return x

    list(xmap_readers(who, _reader(20), 2, 4)())
    assert threading.get_ident() not in seen


def test_reader_decorators_match_paddle_semantics():
    import paddle_hl.reader as R

    r = _reader()
    assert list(R.chain(r, r)()) == list(range(5)) * 2
    assert list(R.firstn(r, 3)()) == [0, 1, 2]
    assert list(R.map_readers(lambda a, b: a + b, r, r)()) == [0, 2, 4, 6, 8]
    assert list(R.compose(lambda: iter([(1, 2), (3, 4)]), lambda: iter([5, 6]))()) == \
        [(1, 2, 5), (3, 4, 6)]
    with pytest.raises(R.ComposeNotAligned):
        list(R.compose(r, _reader(3))())
    assert list(R.compose(r, _reader(3), check_alignment=False)()) == [(0, 0), (1, 1), (2, 2)]
    assert sorted(R.shuffle(_reader(30), 7)()) == list(range(30))
    c = R.cache(r)
    assert list(c()) == list(c()) == list(range(5))
    got = sorted(R.multiprocess_reader([_reader(5), lambda: iter(range(10, 13))])())
    assert got == [0, 1, 2, 3, 4, 10, 11, 12]


def test_dataset_common_download_and_split(tmp_path, monkeypatch):
    from paddle_hl.dataset import common
    from tests.http_server import serve_directory

    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    www = tmp_path / "www"
    www.mkdir()
    (www / "data.txt").write_bytes(b"hello paddle\n")
    md5 = hashlib.md5(b"hello paddle\n").hexdigest()
    with serve_directory(www) as server:
        path = common.download(server.url("data.txt"), "mymod", md5, save_name="d.txt")
        assert pathlib.Path(path) == pathlib.Path(common.DATA_HOME) / "mymod" / "d.txt"
        assert pathlib.Path(path).read_bytes() == b"hello paddle\n"
        common.download(server.url("data.txt"), "mymod", md5, save_name="d.txt")
        assert server.hits("data.txt") == 1  # the cached copy with the right md5 is used
    prefix = str(tmp_path / "part-")
    common.split(_reader(7), 3, suffix=prefix + "%05d.pickle")
    files = sorted(tmp_path.glob("part-*.pickle"))
    assert len(files) == 3
    assert sorted(common.cluster_files_reader(prefix + "*.pickle", 2, 0)()) == [0, 1, 2, 6]
    assert sorted(common.cluster_files_reader(prefix + "*.pickle", 2, 1)()) == [3, 4, 5]


# ----------------------------------------------------------------------------- nn privates
@exercise("paddle.nn.layer.transformer._convert_attention_mask")
def _attention_mask():
    from paddle_hl.nn.layer.transformer import _convert_attention_mask

    m = _convert_attention_mask(paddle.to_tensor([[True, False]]), "float32")
    np.testing.assert_array_equal(m.numpy(), [[0.0, -1e9]])
    assert m.dtype == paddle.float32
    f = _convert_attention_mask(paddle.to_tensor([[1.0, 0.0]], dtype="float64"), "float32")
    assert f.dtype == paddle.float32 and f.numpy().tolist() == [[1.0, 0.0]]
    assert _convert_attention_mask(None, "float32") is None


@exercise("paddle.nn.layer.transformer._convert_param_attr_to_list")
def _param_attr_list():
    from paddle_hl.nn.layer.transformer import _convert_param_attr_to_list

    out = _convert_param_attr_to_list(None, 3)
    assert len(out) == 3 and all(isinstance(a, paddle.ParamAttr) for a in out)
    assert _convert_param_attr_to_list(False, 2) == [False, False]
    mixed = _convert_param_attr_to_list([None, False], 2)
    assert isinstance(mixed[0], paddle.ParamAttr) and mixed[1] is False
    named = _convert_param_attr_to_list(paddle.ParamAttr(name="w"), 2)
    assert [a.name for a in named] == ["w", "w"] and named[0] is not named[1]
    with pytest.raises(ValueError, match="length of param_attr should be 2"):
        _convert_param_attr_to_list([None], 2)


@exercise(*(n for n in INSTANCE_ATTRS if n.startswith("paddle.nn.Conv2D")))
def _conv_private_attrs():
    c = paddle.nn.Conv2D(3, 4, 3, padding=1)
    assert (c._channel_dim, c._op_type, c._padding_algorithm, c._updated_padding,
            c._use_cudnn) == (1, "conv2d", "EXPLICIT", [1, 1], False)
    c = paddle.nn.Conv2D(3, 4, 3, padding=1, padding_mode="reflect")
    assert c._reversed_padding_repeated_twice == [1, 1, 1, 1] and c._updated_padding == [0, 0]
    c = paddle.nn.Conv2D(4, 8, 3, groups=4, padding="SAME", data_format="NHWC")
    assert (c._channel_dim, c._op_type, c._padding_algorithm) == (3, "depthwise_conv2d", "SAME")


@exercise("paddle.nn.clip._squared_l2_norm")
def _squared_l2():
    from paddle_hl.nn.clip import _squared_l2_norm

    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    s = _squared_l2_norm(x)
    assert s.shape == [1] and s.numpy().tolist() == [30.0]
    s.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


@exercise("paddle.nn.clip._clip_by_global_norm_using_mp_type")
def _mp_type():
    from paddle_hl.nn.clip import _clip_by_global_norm_using_mp_type as flag

    old = flag()
    try:
        assert flag(True) == old and flag() is True and flag(False) is True and flag() is False
    finally:
        flag(old)


@exercise("paddle.nn.functional.flash_attention.flash_attention")
def _flash():
    from paddle_hl.nn.functional.flash_attention import flash_attention

    rng = np.random.default_rng(0)
    q, k, v = (paddle.to_tensor(rng.standard_normal((2, 5, 2, 4)).astype("float32"))
               for _ in range(3))
    out, sm = flash_attention(q, k, v, causal=True, return_softmax=True)
    qa, ka, va = (t.numpy().transpose(0, 2, 1, 3) for t in (q, k, v))
    s = qa @ ka.transpose(0, 1, 3, 2) / 2.0 + np.triu(np.full((5, 5), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(sm.numpy(), p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), (p @ va).transpose(0, 2, 1, 3), rtol=1e-5,
                               atol=1e-6)
    assert flash_attention(q, k, v)[1] is None


@exercise("paddle.nn.decode.BeamSearchDecoder.batch_size")
def _beam_batch_size():
    cell = paddle.nn.GRUCell(4, 4)
    dec = paddle.nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=2)
    dec.initialize(cell.get_initial_states(paddle.zeros([3, 4])))
    assert dec.batch_size == 3


@exercise("paddle.sparse.nn.SyncBatchNorm.convert_sync_batchnorm")
def _sparse_sync_bn():
    model = paddle.nn.Sequential(paddle.sparse.nn.BatchNorm(3), paddle.sparse.nn.ReLU())
    bn = model[0]
    out = paddle.sparse.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(out[0], paddle.sparse.nn.SyncBatchNorm)
    assert out[0].weight is bn.weight and out[0]._mean is bn._mean
    single = paddle.sparse.nn.SyncBatchNorm.convert_sync_batchnorm(paddle.sparse.nn.BatchNorm(2))
    assert isinstance(single, paddle.sparse.nn.SyncBatchNorm)


@exercise("paddle.Tensor._register_grad_hook")
def _grad_hook():
    x = paddle.ones([2])
    x.stop_gradient = False
    y = x * 3
    hid = y._register_grad_hook(lambda g: g * 2)
    assert isinstance(hid, int)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    z = paddle.ones([2])
    z.stop_gradient = False
    z._register_grad_hook(lambda g: g * 5)
    (z * 1).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [5.0, 5.0])


# ----------------------------------------------------------------------------- hapi, io, vision
@exercise("paddle.hapi.dynamic_flops.register_hooks", "paddle.hapi.dynamic_flops.count_io_info",
          "paddle.hapi.dynamic_flops.count_parameters")
def _dynamic_flops():
    from paddle_hl.hapi.dynamic_flops import count_io_info, count_parameters, register_hooks

    m = paddle.nn.Conv2D(3, 4, 3)
    m.register_buffer("total_ops", paddle.zeros([1], dtype="int64"))
    m.register_buffer("total_params", paddle.zeros([1], dtype="int64"))
    x = paddle.rand([1, 3, 8, 8])
    y = m(x)
    assert register_hooks[paddle.nn.Conv2D](m, (x,), y) is None
    assert m.total_ops.numpy().tolist() == [4032]  # real Paddle's count
    count_parameters(m, (x,), y)
    assert m.total_params.numpy().tolist() == [112]
    count_io_info(m, (x,), y)
    assert m.input_shape.numpy().tolist() == [1, 3, 8, 8]
    assert m.output_shape.numpy().tolist() == [1, 4, 6, 6]
    # as forward post hooks they leave the output alone
    lin = paddle.nn.Linear(3, 5)
    h = lin.register_forward_post_hook(register_hooks[paddle.nn.Linear])
    out = lin(paddle.rand([2, 3]))
    h.remove()
    assert out.shape == [2, 5] and lin.total_ops.numpy().tolist() == [30]


@exercise("paddle.hapi.model._all_gather")
def _hapi_all_gather():
    from paddle_hl.hapi.model import _all_gather

    x = paddle.to_tensor([[1.0, 2.0]])
    out = _all_gather(x)
    assert out.numpy().tolist() == [[1.0, 2.0]] and out is not x


@exercise("paddle.io.dataloader.collate.default_collate_fn")
def _collate():
    from paddle_hl.io.dataloader.collate import default_collate_fn, default_convert_fn

    batch = default_collate_fn([(np.ones(2, "float32"), 1), (np.zeros(2, "float32"), 0)])
    assert batch[0].shape == [2, 2] and batch[1].numpy().tolist() == [1, 0]
    assert default_convert_fn is paddle.io.default_convert_fn


@exercise("paddle.io.DataLoader.pin_memory")
def _pin_memory():
    loader = paddle.io.DataLoader(paddle.io.TensorDataset([paddle.ones([4, 2])]), batch_size=2)
    assert loader.pin_memory is False


@exercise("paddle.vision.Compose", "paddle.vision.Compose.transforms", "paddle.vision.Normalize",
          "paddle.vision.Resize", "paddle.vision.Transpose")
def _vision_transforms():
    v = paddle.vision
    assert v.Compose is v.transforms.Compose and v.Resize is v.transforms.Resize
    t = v.Compose([v.Resize((4, 6)), v.Normalize(mean=127.5, std=127.5, data_format="HWC"),
                   v.Transpose()])
    assert len(t.transforms) == 3
    img = (np.arange(8 * 10 * 3) % 255).astype("uint8").reshape(8, 10, 3)
    out = t(img)
    assert out.shape == (3, 4, 6) and out.min() >= -1.0 and out.max() <= 1.0


# ----------------------------------------------------------------------------- framework
@exercise("paddle.framework.io.EagerParamBase", "paddle.base.framework.EagerParamBase",
          "paddle.base.framework.EagerParamBase.from_tensor",
          "paddle.framework.io.EagerParamBase._copy_gradient_from",
          "paddle.framework.io.EagerParamBase.stop_gradient", "paddle.framework.Parameter")
def _eager_param_base():
    from paddle_hl.base.framework import EagerParamBase
    from paddle_hl.framework.io import EagerParamBase as E2

    assert EagerParamBase is E2 is paddle.framework.Parameter
    t = paddle.ones([2, 3])
    p = EagerParamBase.from_tensor(t, name="w", trainable=True)
    assert isinstance(p, EagerParamBase) and p.name == "w" and p.stop_gradient is False
    t[0, 0] = 5.0  # shares the buffer
    assert float(p[0, 0]) == 5.0
    q = paddle.create_parameter([2, 3], "float32")
    (q * 2).sum().backward()
    p._copy_gradient_from(q.grad)
    np.testing.assert_array_equal(p.grad.numpy(), np.full((2, 3), 2.0, "float32"))
    with pytest.raises(ValueError, match="does not match"):
        p._copy_gradient_from(paddle.ones([3]))
    frozen = EagerParamBase.from_tensor(paddle.ones([1]), trainable=False)
    assert frozen.stop_gradient is True


@exercise("paddle.framework.use_pir_api", "paddle.framework.in_dynamic_or_pir_mode",
          "paddle.framework._current_expected_place", "paddle.framework.dygraph_only")
def _framework_flags():
    fw = paddle.framework
    assert fw.use_pir_api() is False and fw.in_dynamic_or_pir_mode() is True
    assert isinstance(fw._current_expected_place(), paddle.CPUPlace)

    @fw.dygraph_only
    def f(a):
        return a + 1

    assert f(1) == 2


@exercise("paddle.utils.download._get_unique_endpoints")
def _unique_endpoints():
    from paddle_hl.utils.download import _get_unique_endpoints

    eps = ["127.0.0.1:6170", "127.0.0.1:6171", "10.0.0.2:6170", "10.0.0.2:6171"]
    assert _get_unique_endpoints(eps) == {"127.0.0.1:6170", "10.0.0.2:6170"}
    assert _get_unique_endpoints([]) == set()


@exercise("paddle.device.cuda.Stream", "paddle.device.cuda.Event",
          "paddle.device.cuda.stream_guard")
def _cuda_streams():
    cuda = paddle.device.cuda
    if paddle.device.cuda.device_count() == 0:
        for make in (cuda.Stream, cuda.Event):
            with pytest.raises(RuntimeError, match="GPU platform"):
                make()
        with cuda.stream_guard(None):  # None changes nothing, as in Paddle
            pass
        return
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream_guard(s):
        start.record(s)
        x = paddle.to_tensor(np.ones((256, 256), "float32"), place=paddle.CUDAPlace(0))
        y = (x @ x).sum()
        end.record(s)
    s.synchronize()
    assert s.query() and end.query() and end.elapsed_time is not None
    assert float(y) == 256.0 ** 3
    assert start.elapsed_time(end) >= 0.0
    cuda.current_stream().wait_stream(s)


@exercise("paddle.incubate.multiprocessing", "paddle.incubate.multiprocessing.get_context")
def _incubate_mp():
    mp = paddle.incubate.multiprocessing
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_child_put, args=(q,))
    proc.start()
    got = q.get(timeout=60)
    proc.join(timeout=60)
    assert isinstance(got, paddle.Tensor) and got.numpy().tolist() == [6, 8]
    assert got.stop_gradient is False and got.name == "sent"


def _child_put(q):
    t = paddle.to_tensor([3, 4]) * 2
    t.stop_gradient = False
    t.name = "sent"
    q.put(t)


# ----------------------------------------------------------------------------- tensor, signal
@exercise("paddle.tensor.create_array", "paddle.tensor.array_write", "paddle.tensor.array_length")
def _tensor_array():
    T = paddle.tensor
    arr = T.create_array("float32")
    assert arr == [] and T.array_length(arr) == 0
    i = paddle.zeros([1], dtype="int64")
    arr = T.array_write(paddle.ones([2]), i, array=arr)
    assert T.array_length(arr) == 1
    arr = T.array_write(paddle.full([2], 3.0), paddle.to_tensor([1]), array=arr)
    assert T.array_read(arr, paddle.to_tensor([1])).numpy().tolist() == [3.0, 3.0]
    assert T.array_write(paddle.ones([1]), paddle.to_tensor([0]))[0].shape == [1]
    with pytest.raises(IndexError):
        T.array_write(paddle.ones([1]), paddle.to_tensor([5]), array=arr)
    with pytest.raises(TypeError, match="must be a Tensor"):
        T.create_array("float32", [1.0])


@exercise("paddle.signal.frame")
def _frame():
    x = paddle.arange(8, dtype="float32")
    f = paddle.signal.frame(x, 4, 2)
    assert f.shape == [4, 3]
    np.testing.assert_array_equal(f.numpy()[:, 1], [2, 3, 4, 5])
    g = paddle.signal.frame(paddle.arange(16, dtype="float32").reshape([8, 2]), 4, 2, axis=0)
    assert g.shape == [3, 4, 2]
    with pytest.raises(ValueError, match="frame_length"):
        paddle.signal.frame(x, 10, 2)
    with pytest.raises(ValueError, match="hop_length"):
        paddle.signal.frame(x, 4, 0)
    with pytest.raises(ValueError, match="axis"):
        paddle.signal.frame(x, 4, 2, axis=1)


# ----------------------------------------------------------------------------- distributed
@exercise("paddle.distributed.parallel.parallel_helper._is_parallel_ctx_initialized",
          "paddle.distributed.collective._get_default_group",
          "paddle.distributed.parallel._global_parallel_env",
          "paddle.distributed.parallel.sync_params_buffers",
          "paddle.distributed.stream.reduce_scatter")
def _distributed_privates():
    import paddle_hl.distributed as dist
    from paddle_hl.distributed.parallel import parallel_helper, sync_params_buffers

    if not dist.is_initialized():  # a single process that never initialised
        assert parallel_helper._is_parallel_ctx_initialized() is False
        assert dist.parallel._global_parallel_env is None
        with pytest.raises(RuntimeError, match="init_parallel_env"):
            dist.collective._get_default_group()
    sync_params_buffers(paddle.nn.Linear(2, 2))  # one rank: nothing to send
    started = not dist.is_initialized()
    if started:
        dist.init_parallel_env()
    try:
        assert parallel_helper._is_parallel_ctx_initialized() is True
        assert dist.parallel._global_parallel_env.world_size == dist.get_world_size()
        assert dist.collective._get_default_group().nranks == dist.get_world_size()
        out = paddle.zeros([2])
        dist.stream.reduce_scatter(out, paddle.to_tensor([1.0, 2.0]))
        assert out.numpy().tolist() == [1.0, 2.0]
    finally:
        if started:
            dist.destroy_process_group()


FLEET_NAMES = [
    "paddle.distributed.fleet", "paddle.distributed.fleet.distributed_optimizer",
    "paddle.distributed.fleet.utils.recompute", "paddle.distributed.fleet.init",
    "paddle.distributed.fleet.worker_index", "paddle.distributed.fleet.DistributedStrategy",
    "paddle.distributed.fleet.utils.hybrid_parallel_util.fused_allreduce_gradients",
    "paddle.distributed.fleet.barrier_worker", "paddle.distributed.fleet.distributed_model",
    "paddle.distributed.fleet.worker_num", "paddle.distributed.fleet.Fleet",
    "paddle.distributed.fleet.is_first_worker", "paddle.distributed.fleet.local_rank",
    "paddle.distributed.fleet.DistributedStrategy.amp",
    "paddle.distributed.fleet.DistributedStrategy.amp_configs",
    "paddle.distributed.fleet.DistributedStrategy.hybrid_configs",
    "paddle.distributed.fleet.distributed_scaler",
    "paddle.distributed.fleet.DistributedStrategy.fuse_grad_size_in_MB",
    "paddle.distributed.fleet.DistributedStrategy.nccl_comm_num",
    "paddle.distributed.fleet.DistributedStrategy.recompute",
    "paddle.distributed.fleet.worker_endpoints",
    "paddle.distributed.fleet.DistributedStrategy.find_unused_parameters",
    "paddle.distributed.fleet.DistributedStrategy.gradient_merge",
    "paddle.distributed.fleet.DistributedStrategy.gradient_merge_configs",
    "paddle.distributed.fleet.fleet",
    "paddle.distributed.fleet.utils.hybrid_parallel_util.fused_allreduce_gradients_with_group",
    "paddle.distributed.fleet.DistributedStrategy.fuse_all_reduce_ops",
    "paddle.distributed.fleet.node_num", "paddle.distributed.fleet.utils.hybrid_parallel_util",
]


@exercise(*FLEET_NAMES)
def _fleet_single_process():
    """One process, as a training script starts without the launcher (tests/distributed/
    test_fleet.py covers fleet in depth, on 1 and 2 processes)."""
    from paddle_hl.distributed import fleet
    from paddle_hl.distributed.fleet.utils import hybrid_parallel_util, recompute

    strategy = fleet.DistributedStrategy()
    strategy.amp = True
    strategy.amp_configs = {"init_loss_scaling": 1024.0}
    strategy.recompute = True
    strategy.gradient_merge = False
    strategy.gradient_merge_configs = {"k_steps": 1, "avg": True}
    strategy.hybrid_configs = {"dp_degree": 1}
    strategy.fuse_grad_size_in_MB = 16
    strategy.nccl_comm_num = 2
    strategy.fuse_all_reduce_ops = True
    strategy.find_unused_parameters = False
    assert strategy.amp_configs["incr_ratio"] == 2.0  # defaults kept beside the given keys
    assert isinstance(fleet.fleet, fleet.Fleet)
    fleet.init(is_collective=True, strategy=strategy)
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker(),
            fleet.local_rank(), fleet.node_num()) == (0, 1, True, 0, 1)
    assert len(fleet.worker_endpoints()) == 1
    fleet.barrier_worker()
    model = paddle.nn.Linear(4, 2)
    assert fleet.distributed_model(model) is model  # one rank: nothing to wrap
    opt = fleet.distributed_optimizer(paddle.optimizer.SGD(0.1, parameters=model.parameters()))
    scaler = fleet.distributed_scaler(paddle.amp.GradScaler(init_loss_scaling=1024.0))
    x = paddle.rand([3, 4])
    x.stop_gradient = False
    loss = recompute(model, x).sum()
    with warnings.catch_warnings():  # the CPU scaler declines float32 losses, with a warning
        warnings.simplefilter("ignore", UserWarning)
        scaled = scaler.scale(loss)
    scaled.backward()
    hybrid_parallel_util.fused_allreduce_gradients(list(model.parameters()), None)
    hybrid_parallel_util.fused_allreduce_gradients_with_group(list(model.parameters()), None)
    before = model.weight.numpy().copy()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    assert not np.array_equal(before, model.weight.numpy())


# ----------------------------------------------------------------------------- against Paddle
@pytest.mark.parity
def test_numbers_match_paddle(pd):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype("float32")
    spd = (a @ a.T + 4 * np.eye(4)).astype("float32")
    for name in ("norm", "inverse", "cholesky"):
        ours = getattr(paddle, name)(paddle.to_tensor(spd)).numpy()
        ref = getattr(pd, name)(pd.to_tensor(spd)).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6, err_msg=name)
    x = rng.standard_normal((2, 3, 11)).astype("float32")
    for axis, data in ((-1, x), (0, x.transpose(2, 0, 1).copy())):
        ours = paddle.signal.frame(paddle.to_tensor(data), 4, 3, axis=axis).numpy()
        ref = pd.signal.frame(pd.to_tensor(data), 4, 3, axis=axis).numpy()
        np.testing.assert_array_equal(ours, ref)
    # the gradient of frame adds the overlaps back
    t = paddle.to_tensor(x, stop_gradient=False)
    r = pd.to_tensor(x, stop_gradient=False)
    (paddle.signal.frame(t, 5, 2) ** 2).sum().backward()
    (pd.signal.frame(r, 5, 2) ** 2).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-6)
    from paddle.nn.clip import _squared_l2_norm as pd_sq
    from paddle.nn.layer.transformer import _convert_attention_mask as pd_mask

    from paddle_hl.nn.clip import _squared_l2_norm
    from paddle_hl.nn.layer.transformer import _convert_attention_mask

    np.testing.assert_allclose(_squared_l2_norm(paddle.to_tensor(a)).numpy(),
                               pd_sq(pd.to_tensor(a)).numpy(), rtol=1e-6)
    for m in (np.array([[True, False, True]]), np.array([[1, 0, 1]], "int64"),
              np.array([[0.5, -2.0, 0.0]], "float64")):
        np.testing.assert_array_equal(_convert_attention_mask(paddle.to_tensor(m),
                                                              "float32").numpy(),
                                      pd_mask(pd.to_tensor(m), "float32").numpy())


@pytest.mark.parity
def test_conv_private_attrs_match_paddle(pd):
    names = ("_channel_dim", "_op_type", "_padding_algorithm", "_updated_padding",
             "_use_cudnn", "_reversed_padding_repeated_twice")
    cases = [((3, 4, 3), {"padding": 1}), ((3, 4, 3), {"padding": "SAME",
                                                        "data_format": "NHWC"}),
             ((3, 4, 3), {"padding": "valid"}), ((4, 4, 3), {"padding": [1, 2], "groups": 4}),
             ((4, 8, 3), {"padding": [1, 2, 3, 4], "groups": 4}),
             ((3, 4, 3), {"padding": 2, "padding_mode": "reflect"}),
             ((3, 4, (3, 5)), {"padding": [[0, 0], [0, 0], [1, 2], [3, 4]]}),
             ((3, 4, 3), {"padding": [1, 1, 2, 2]}), ((3, 6, 3), {"groups": 3})]
    for args, kw in cases:
        ours, ref = paddle.nn.Conv2D(*args, **kw), pd.nn.Conv2D(*args, **kw)
        for n in names:
            assert getattr(ours, n, None) == getattr(ref, n, None), (args, kw, n)


@pytest.mark.parity
def test_dynamic_flops_hooks_match_paddle(pd):
    import paddle.hapi.dynamic_flops as pdf

    import paddle_hl.hapi.dynamic_flops as ours

    x = np.random.default_rng(1).standard_normal((2, 3, 9, 9)).astype("float32")
    cases = [("count_convNd", lambda m: m.nn.Conv2D(3, 4, 3, stride=2, groups=1)),
             ("count_avgpool", lambda m: m.nn.AvgPool2D(2)),
             ("count_adap_avgpool", lambda m: m.nn.AdaptiveAvgPool2D(3)),
             ("count_zero_ops", lambda m: m.nn.ReLU()),
             ("count_parameters", lambda m: m.nn.Conv2D(3, 2, 1))]
    for fn, make in cases:
        results = []
        for lib, mod in ((paddle, ours), (pd, pdf)):
            layer = make(lib)
            layer.register_buffer("total_ops", lib.zeros([1], dtype="int64"))
            layer.register_buffer("total_params", lib.zeros([1], dtype="int64"))
            t = lib.to_tensor(x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                getattr(mod, fn)(layer, (t,), layer(t))
            results.append((layer.total_ops.numpy().tolist(),
                            layer.total_params.numpy().tolist()))
        assert results[0] == results[1], fn
