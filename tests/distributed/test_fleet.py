"""paddle.distributed.fleet in collective mode: the strategy, init and what it refuses, the role
queries, gradient merge, recompute (same gradients, less memory), the gradient helpers; a
PaddleClas-style training script on 2 processes through the launcher (data parallel with AMP
and recompute, and stage-1 sharding), checked against a one-process replay; and the same script
on one process against real Paddle's loss curve."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.distributed import fleet
from paddle_hl.distributed.fleet.utils import hybrid_parallel_util, recompute

from .test_multiprocess import ROOT, SCRIPTS, _env, _launch, _ok

SUPPORTED = "paddle_hl's fleet runs collective data parallelism"


@pytest.fixture
def fresh_fleet():
    """fleet.init with the given strategy settings, on a fresh Fleet state."""

    def init(**settings):
        s = fleet.DistributedStrategy()
        for k, v in settings.items():
            setattr(s, k, v)
        fleet.init(is_collective=True, strategy=s)
        return s

    return init


# ----------------------------------------------------------------------------- strategy
def test_strategy_settings(tmp_path):
    s = fleet.DistributedStrategy()
    assert s.amp is False and s.fuse_grad_size_in_MB == 32 and s.nccl_comm_num == 1
    assert s.hybrid_configs["dp_degree"] == -1 and s.gradient_merge_configs == {
        "k_steps": 1, "avg": True}
    s.amp = True
    s.amp_configs = {"init_loss_scaling": 1024.0, "custom_white_list": ["matmul"]}
    assert s.amp_configs["init_loss_scaling"] == 1024.0 and s.amp_configs["incr_ratio"] == 2.0
    s.recompute_configs = {"checkpoints": ["x"]}
    s.hybrid_configs = {"dp_degree": 1}
    assert s.hybrid_configs["mp_degree"] == 1  # the other keys keep their defaults
    with pytest.raises(ValueError, match="unknown key 'bogus'") as e:
        s.amp_configs = {"bogus": 1}
    assert isinstance(e.value, AssertionError)  # Paddle asserts here
    with pytest.raises(ValueError, match="must be a bool"):
        s.amp = "yes"
    with pytest.raises(ValueError, match="must be a int"):
        s.fuse_grad_size_in_MB = 1.5
    with pytest.raises(AttributeError, match="no setting 'ampp'"):
        s.ampp = True
    assert isinstance(fleet.DistributedStrategy.amp, property)
    path = tmp_path / "strategy.prototxt"
    s.save_to_prototxt(str(path))
    t = fleet.DistributedStrategy()
    t.load_from_prototxt(str(path))
    assert t.amp is True and t.amp_configs == s.amp_configs
    assert t.recompute_configs["checkpoints"] == ["x"]


def test_init_refuses_what_it_does_not_run():
    with pytest.raises(ValueError, match="parameter-server") as e:
        fleet.init()
    assert SUPPORTED in str(e.value)
    with pytest.raises(ValueError, match="parameter-server"):
        fleet.init(role_maker=fleet.PaddleCloudRoleMaker(is_collective=False))
    for key, what in (("mp_degree", "tensor"), ("pp_degree", "pipeline"),
                      ("sep_degree", "sequence")):
        s = fleet.DistributedStrategy()
        s.hybrid_configs = {key: 2}
        with pytest.raises(ValueError, match=f"{key}=2 asks for {what}") as e:
            fleet.init(is_collective=True, strategy=s)
        assert SUPPORTED in str(e.value)
    s = fleet.DistributedStrategy()
    s.sharding = True
    s.sharding_configs = {"stage": 2}
    with pytest.raises(ValueError, match="sharding stage 2"):
        fleet.init(is_collective=True, strategy=s)
    s = fleet.DistributedStrategy()
    s.pipeline = True
    with pytest.raises(ValueError, match="strategy.pipeline"):
        fleet.init(is_collective=True, strategy=s)
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 4}
    with pytest.raises(ValueError, match="dp_degree=4 does not match the 1 ranks"):
        fleet.init(is_collective=True, strategy=s)
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"sharding_degree": 4}
    with pytest.raises(ValueError, match="sharding_degree=4"):
        fleet.init(is_collective=True, strategy=s)
    with pytest.raises(TypeError, match="DistributedStrategy"):
        fleet.init(is_collective=True, strategy={"amp": True})
    with pytest.raises(RuntimeError, match="parameter-server"):
        fleet.run_server()


def test_roles_and_topology_on_one_process(fresh_fleet, monkeypatch):
    fresh_fleet(hybrid_configs={"dp_degree": 1})
    assert fleet.worker_index() == 0 and fleet.worker_num() == 1 and fleet.is_first_worker()
    assert fleet.local_rank() == 0 and fleet.node_num() == 1 and fleet.is_worker()
    assert not fleet.is_server() and fleet.server_num() == 0 and fleet.server_endpoints() == []
    assert fleet.local_device_ids() == [0] and fleet.world_device_ids() == [[0]]
    fleet.barrier_worker()
    fleet.init_worker()
    fleet.stop_worker()
    monkeypatch.setenv("PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6170,10.0.0.1:6171,10.0.0.2:6170")
    assert fleet.worker_endpoints() == ["10.0.0.1:6170", "10.0.0.1:6171", "10.0.0.2:6170"]
    assert fleet.worker_endpoints(to_string=True).count(",") == 2 and fleet.node_num() == 2
    monkeypatch.setenv("PADDLE_LOCAL_RANK", "1")
    assert fleet.local_rank() == 1
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_data_parallel_world_size() == 1 and hcg.get_data_parallel_rank() == 0
    assert hcg.get_model_parallel_world_size() == 1 and hcg.get_pipe_parallel_world_size() == 1
    assert hcg.get_sharding_parallel_world_size() == 1
    assert hcg.get_parallel_mode() == fleet.ParallelMode.DATA_PARALLEL
    topo = hcg.topology()
    assert topo.get_hybrid_group_names() == ["data", "pipe", "sharding", "sep", "model"]
    assert topo.world_size() == 1 and topo.get_dim("data") == 1
    t = fleet.CommunicateTopology(["data", "model"], [2, 2])
    assert t.get_comm_list("data") == [[0, 2], [1, 3]] and t.get_axis_list("model", 1) == [1, 3]
    assert t.get_rank(data=1, model=0) == 2 and t.get_coord(3) == (1, 1)
    assert fleet.util.get_file_shard(["a", "b", "c"]) == ["a", "b", "c"]
    np.testing.assert_array_equal(fleet.util.all_reduce([1, 2]), [1, 2])
    assert fleet.util.all_gather(5) == [5]


def test_wrappers_need_init():
    f = fleet.Fleet()
    with pytest.raises(RuntimeError, match="call fleet.init"):
        f.distributed_model(paddle.nn.Linear(2, 2))


# ----------------------------------------------------------------------------- optimizer
def test_gradient_merge_steps_every_k_calls_on_the_mean(fresh_fleet):
    fresh_fleet(gradient_merge=True, gradient_merge_configs={"k_steps": 2, "avg": True})
    paddle.seed(3)
    net = paddle.nn.Linear(4, 3)
    ref = paddle.nn.Linear(4, 3)
    ref.set_state_dict(net.state_dict())
    opt = fleet.distributed_optimizer(paddle.optimizer.SGD(0.5, parameters=net.parameters()))
    ref_opt = paddle.optimizer.SGD(0.5, parameters=ref.parameters())
    xs = [paddle.rand([5, 4]) for _ in range(4)]
    for i, x in enumerate(xs):
        before = net.weight.numpy().copy()
        (net(x) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
        if i % 2 == 0:
            np.testing.assert_array_equal(net.weight.numpy(), before)  # merged, not applied
        else:
            ((ref(xs[i - 1]) ** 2).mean() / 2 + (ref(x) ** 2).mean() / 2).backward()
            ref_opt.step()
            ref_opt.clear_grad()
            np.testing.assert_allclose(net.weight.numpy(), ref.weight.numpy(), rtol=1e-6)
    assert opt.get_lr() == 0.5  # other attributes are the wrapped optimizer's
    assert copy.copy(opt).get_lr() == 0.5  # a copy is built without recursing into __getattr__


def test_distributed_scaler_skips_inf_steps(fresh_fleet):
    fresh_fleet()
    net = paddle.nn.Linear(2, 1)
    opt = fleet.distributed_optimizer(paddle.optimizer.SGD(0.1, parameters=net.parameters()))
    scaler = fleet.distributed_scaler(paddle.amp.GradScaler(init_loss_scaling=8.0))
    before = net.weight.numpy().copy()
    with paddle.amp.auto_cast():  # float16 matmul: the scaler stays on
        loss = (net(paddle.to_tensor([[np.inf, 1.0]], dtype="float32"))).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(net.weight.numpy(), before)
    assert scaler._found_inf is True
    opt.clear_grad()
    # unscale_ (e.g. before clipping) then step: the wrapper is unscaled once
    with paddle.amp.auto_cast():
        loss = net(paddle.ones([1, 2])).sum()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    grad = net.weight.grad.numpy().copy()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(net.weight.numpy(), before - 0.1 * grad, rtol=1e-6)


def test_fused_allreduce_gradients_one_process():
    net = paddle.nn.Linear(3, 2)
    net(paddle.ones([1, 3])).sum().backward()
    g = net.weight.grad.numpy().copy()
    hybrid_parallel_util.fused_allreduce_gradients(list(net.parameters()), None)
    np.testing.assert_array_equal(net.weight.grad.numpy(), g)  # the mean over one rank
    hybrid_parallel_util.fused_allreduce_gradients_with_group(list(net.parameters()), None,
                                                              bucket_size=8, scale=0.5)
    np.testing.assert_array_equal(net.weight.grad.numpy(), g * 0.5)


# ----------------------------------------------------------------------------- recompute
class _Block(paddle.nn.Layer):
    def __init__(self, d, p=0.2):
        super().__init__()
        self.l1 = paddle.nn.Linear(d, 4 * d)
        self.l2 = paddle.nn.Linear(4 * d, d)
        self.drop = paddle.nn.Dropout(p)

    def forward(self, x, scale=1.0):
        return x + scale * self.l2(self.drop(paddle.nn.functional.gelu(self.l1(x))))


class _Net(paddle.nn.Layer):
    def __init__(self, d, n, use_recompute, transformer=False):
        super().__init__()
        make = (lambda: paddle.nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1)) \
            if transformer else (lambda: _Block(d))
        self.blocks = paddle.nn.LayerList([make() for _ in range(n)])
        self.use_recompute = use_recompute

    def forward(self, x):
        for b in self.blocks:
            x = recompute(b, x) if self.use_recompute else b(x)
        return x


def _grads(net, x, amp=False):
    paddle.seed(11)  # the same dropout masks for both runs
    x = x.detach()
    x.stop_gradient = False
    with paddle.amp.auto_cast(enable=amp):
        y = net(x)
    (y.astype("float32") ** 2).mean().backward()
    out = [p.grad.numpy().copy() for p in net.parameters()] + [x.grad.numpy()]
    net.clear_gradients()
    return out


@pytest.mark.parametrize("transformer,amp", [(False, False), (True, False), (False, True)])
def test_recompute_gives_the_same_gradients(transformer, amp):
    paddle.seed(1)
    plain = _Net(16, 3, False, transformer)
    rc = _Net(16, 3, True, transformer)
    rc.set_state_dict(plain.state_dict())
    x = paddle.randn([4, 5, 16])
    for a, b in zip(_grads(plain, x, amp), _grads(rc, x, amp)):
        np.testing.assert_array_equal(a, b)


def test_recompute_arguments_and_rng():
    block = _Block(8, p=0.5)
    x = paddle.randn([3, 8])
    x.stop_gradient = False
    state = paddle.get_rng_state()
    y = recompute(block, x, 0.5, preserve_rng_state=True, use_reentrant=True)
    after = paddle.get_rng_state()
    y.sum().backward()
    # backward's second forward restores the first one's state and then puts back the current
    assert paddle.get_rng_state()[0].current_seed() == after[0].current_seed()
    g = x.grad.numpy().copy()
    x.clear_grad()
    paddle.set_rng_state(state)
    block(x, scale=0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), g)
    with pytest.raises(TypeError, match="must be callable"):
        recompute(3, x)
    frozen = paddle.randn([3, 8])
    with pytest.warns(UserWarning, match="None of the inputs"):
        out = recompute(block, frozen)
    assert out.stop_gradient  # reentrant, as Paddle: the block's parameters get no gradient
    # non-reentrant: they do, the same as without recompute
    block.clear_gradients()
    state = paddle.get_rng_state()
    recompute(block, frozen, use_reentrant=False).sum().backward()
    g = [p.grad.numpy().copy() for p in block.parameters()]
    block.clear_gradients()
    paddle.set_rng_state(state)
    block(frozen).sum().backward()
    for a, p in zip(g, block.parameters()):
        np.testing.assert_array_equal(a, p.grad.numpy())


def test_recompute_sequential_matches():
    from paddle_hl.distributed.fleet.recompute import recompute_sequential

    paddle.seed(5)
    seq = paddle.nn.Sequential(*(paddle.nn.Linear(6, 6) for _ in range(4)))
    x = paddle.randn([2, 6])
    x.stop_gradient = False
    recompute_sequential({"segments": 2}, seq, x).sum().backward()
    g = [p.grad.numpy().copy() for p in seq.parameters()]
    seq.clear_gradients()
    seq(x).sum().backward()
    for a, p in zip(g, seq.parameters()):
        np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-6)


def test_recompute_frees_activations():
    """Memory held between forward and backward, and the peak, measured by tracemalloc (NumPy
    reports its buffers to it) on a 6-block MLP."""
    paddle.seed(2)
    d = 128
    x = paddle.randn([256, d])
    results = {}
    for use in (False, True):
        net = _Net(d, 6, use)
        xin = x.detach()
        xin.stop_gradient = False
        tracemalloc.start()
        try:
            y = net(xin)
            held = tracemalloc.get_traced_memory()[0]
            (y ** 2).mean().backward()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        results[use] = (held, peak)
    (held_plain, peak_plain), (held_rc, peak_rc) = results[False], results[True]
    # each block keeps ~4 activations of [256, 512] without recompute; with it only its input
    assert held_rc * 3 < held_plain, results
    assert peak_rc < 0.8 * peak_plain, results


def test_rng_state_tracker():
    from paddle_hl.distributed.fleet.meta_parallel import get_rng_state_tracker

    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add("model_parallel_rng", 123)
    with pytest.raises(ValueError, match="already in use"):
        tracker.add("other", 123)
    paddle.seed(7)
    outside = paddle.rand([3]).numpy()
    paddle.seed(7)
    with tracker.rng_state():
        a = paddle.rand([3]).numpy()
    np.testing.assert_array_equal(paddle.rand([3]).numpy(), outside)  # global stream untouched
    with tracker.rng_state():
        b = paddle.rand([3]).numpy()
    assert not np.array_equal(a, b)  # the tracked stream advanced
    tracker.reset()


# ----------------------------------------------------------------------------- 2 processes
@pytest.mark.parametrize("n,mode", [(2, "dp --amp"), (2, "sharding"), (1, "dp --amp")])
def test_training_script_through_the_launcher(n, mode):
    """On 2 ranks every rank ends with the same parameters as a one-process replay on the whole
    batch (gradients averaged across ranks; with sharding, each rank held about half the Adam
    states); the same script runs unmodified on 1."""
    res = _launch(n, "fleet_train.py", *mode.split(), timeout=300)
    _ok(res, n)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["dp", pytest.param("sharding", marks=pytest.mark.slow)])
def test_training_script_one_process_matches_paddle(mode, tmp_path):
    if importlib.util.find_spec("paddle") is None:
        pytest.skip("paddlepaddle==2.6.2 is not installed (pip install '.[parity]')")
    curves = {}
    init = tmp_path / "init.npz"
    for lib in ("paddle_hl", "paddle"):
        out = tmp_path / f"{lib}.json"
        res = subprocess.run([sys.executable, str(SCRIPTS / "fleet_train.py"), mode, "--lib",
                              lib, "--out", str(out), "--init", str(init)], cwd=ROOT,
                             env=_env(), capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        curves[lib] = json.loads(out.read_text())
    assert len(curves["paddle"]) == 6
    np.testing.assert_allclose(curves["paddle_hl"], curves["paddle"], rtol=1e-5)


def test_meta_parallel_layers_at_degree_one():
    from paddle_hl.distributed.fleet import meta_parallel as mp

    col = mp.ColumnParallelLinear(4, 6, has_bias=True, gather_output=False)
    assert col.weight.shape == [4, 6] and col.bias.shape == [6]
    assert mp.ColumnParallelLinear(4, 6).bias is None  # has_bias=None: no bias, as in Paddle
    x = paddle.rand([2, 4])
    np.testing.assert_allclose(col(x).numpy(), x.numpy() @ col.weight.numpy() + col.bias.numpy(),
                               rtol=1e-6)
    row = mp.RowParallelLinear(6, 3, input_is_parallel=True)
    assert row.bias is not None and row(col(x)).shape == [2, 3]
    emb = mp.VocabParallelEmbedding(10, 4)
    ids = paddle.to_tensor([[1, 9]])
    np.testing.assert_array_equal(emb(ids).numpy(), emb.weight.numpy()[[[1, 9]]])
    logits = paddle.to_tensor(np.random.default_rng(0).standard_normal((3, 5)).astype("float32"))
    label = paddle.to_tensor([[1], [4], [-100]])
    loss = mp.ParallelCrossEntropy()(logits, label)
    ref = paddle.nn.functional.cross_entropy(logits[:2], label[:2], reduction="none")
    assert loss.shape == [3, 1] and float(loss[2]) == 0.0
    np.testing.assert_allclose(loss.numpy()[:2], ref.numpy(), rtol=1e-6)
