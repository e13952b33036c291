"""Semi-automatic parallelism, split, sharded checkpoints and distributed.io: single-process
behaviour (against real Paddle where it runs without a job) and multi-process runs on MPI
(2 ranks; checkpoints across 2 -> 1 and 2 -> 3 ranks)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.distributed as dist

from .test_multiprocess import _launch, _ok

# ------------------------------------------------------------------ one process


def test_process_mesh():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    assert mesh.shape == [2, 2] and mesh.process_ids == [0, 1, 2, 3] and mesh.ndim == 2
    assert mesh.get_dim_size("y") == 2 and mesh.get_dim_size(0) == 2
    t = mesh.get_mesh_with_dim("y")
    assert t.process_ids == [0, 2, 1, 3] and t.dim_names == ["y", "x"]
    assert mesh == dist.ProcessMesh(shape=[2, 2], process_ids=[0, 1, 2, 3], dim_names=["x", "y"])
    assert dist.ProcessMesh([0, 1]).dim_names == ["d0"]
    assert 3 in mesh and 4 not in mesh
    with pytest.raises(ValueError, match="ProcessMesh: ranks must be distinct"):
        dist.ProcessMesh([0, 0])
    with pytest.raises(ValueError, match="dim_names must be 2 distinct names"):
        dist.ProcessMesh([[0, 1]], dim_names=["x"])
    with pytest.raises(ValueError, match="'z' is not a dimension"):
        mesh.get_dim_size("z")


def test_placements_and_enums():
    assert dist.Shard(1).get_dim() == 1 and dist.Shard(0) == dist.Shard(0)
    assert dist.Shard(0) != dist.Shard(1) and dist.Shard(0) != dist.Replicate()
    assert dist.Partial().is_partial() and dist.Replicate().is_replicated()
    assert dist.Shard(0).is_shard() and dist.Shard(0).is_shard(0) and not dist.Shard(0).is_shard(1)
    assert repr(dist.Shard(0)) == "Shard(dim=0)" and repr(dist.Replicate()) == "Replicate()"
    assert repr(dist.Partial()) == "Partial(reduce_type=SUM)"
    assert repr(dist.Partial(dist.ReduceType.kRedAvg)) == "Partial(reduce_type=AVG)"
    assert [int(getattr(dist.ReduceType, k)) for k in
            ("kRedSum", "kRedMax", "kRedMin", "kRedProd", "kRedAvg", "kRedAny", "kRedAll")] == \
        list(range(7))
    assert (dist.ParallelMode.DATA_PARALLEL, dist.ParallelMode.TENSOR_PARALLEL,
            dist.ParallelMode.PIPELINE_PARALLEL, dist.ParallelMode.SHARDING_PARALLEL,
            dist.ParallelMode.SEGMENT_PARALLEL) == (0, 1, 2, 3, 4)
    with pytest.raises(TypeError, match="Shard: dim must be an int"):
        dist.Shard("0")
    with pytest.raises(ValueError, match="Partial: reduce_type must be a ReduceType"):
        dist.Partial(9)


def test_dist_attr_and_strategy():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["x", "y"])
    a = dist.DistAttr(mesh, ["y", None])
    assert a.dims_mapping == [1, -1] and a.placements() == [dist.Replicate(), dist.Shard(0)]
    with pytest.raises(ValueError, match="'z' is not a dim name"):
        dist.DistAttr(mesh, ["z"])
    s = dist.Strategy({"gradient_merge": {"enable": True, "k_steps": 2}})
    assert s.gradient_merge.k_steps == 2 and s.sharding.stage == 1 and not s.pipeline.enable
    assert s.to_dict()["gradient_merge"] == {"enable": True, "k_steps": 2, "avg": True}
    with pytest.raises(ValueError, match="unknown config sections"):
        dist.Strategy({"amp": {}})


def test_one_process_shard_and_reshard():
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])  # a mesh larger than the job: all local
    g = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = dist.shard_tensor(g, mesh, [dist.Shard(0)])
    assert x.is_dist() and x.shape == [4, 3] and not paddle.ones([1]).is_dist()
    np.testing.assert_array_equal(x._local_value().numpy(), g[:2])
    assert x.dist_attr.sharding_specs == ["x", None]
    r = dist.reshard(x, mesh, [dist.Replicate()])
    np.testing.assert_array_equal(r._local_value().numpy(), g)
    p = dist.reshard(r, mesh, [dist.Partial()])
    np.testing.assert_array_equal(dist.reshard(p, mesh, [dist.Shard(1)]).numpy(), g)
    # a DistAttr may stand for the placements
    y = dist.shard_tensor(g, mesh, dist.DistAttr(mesh, [None, "x"]))
    assert y.placements == [dist.Shard(1)]
    # computations on a distributed tensor run on its global value and give dense tensors
    z = x + 1
    assert not z.is_dist()
    np.testing.assert_array_equal(z.numpy(), g + 1)
    with pytest.raises(ValueError, match=r"shard_tensor: Shard\(dim=0\) for a tensor of 0"):
        dist.shard_tensor(paddle.to_tensor(1.0), mesh, [dist.Shard(0)])
    with pytest.raises(TypeError, match="placements must hold Shard, Replicate or Partial"):
        dist.shard_tensor(g, mesh, ["x"])
    with pytest.raises(TypeError, match="dtensor_from_fn: fn must be callable"):
        dist.dtensor_from_fn(None, mesh, [dist.Replicate()])


def test_one_process_shard_layer_optimizer_and_to_static():
    mesh = dist.ProcessMesh([0], dim_names=["x"])
    paddle.seed(3)
    net = paddle.nn.Linear(4, 2)
    ref = paddle.nn.Linear(4, 2)
    ref.set_state_dict(net.state_dict())
    dist.shard_layer(net, mesh, lambda name, sub, m: setattr(
        sub, "weight", dist.shard_tensor(sub.weight, m, [dist.Shard(0)])))
    assert net.weight.placements == [dist.Shard(0)] and net.bias.is_dist()
    opt = dist.shard_optimizer(paddle.optimizer.SGD(0.1, parameters=net.parameters()))
    model = dist.to_static(net, loss=paddle.nn.MSELoss(), optimizer=opt)
    ref_opt = paddle.optimizer.SGD(0.1, parameters=ref.parameters())
    x, y = paddle.ones([3, 4]), paddle.zeros([3, 2])
    for _ in range(2):
        loss = model(x, y)
        ref_loss = paddle.nn.MSELoss()(ref(x), y)
        np.testing.assert_allclose(loss.numpy(), ref_loss.numpy(), rtol=1e-6)
        ref_loss.backward()
        ref_opt.step()
        ref_opt.clear_grad()
    np.testing.assert_allclose(net.weight.numpy(), ref.weight.numpy(), rtol=1e-6)
    model.eval()
    before = net.weight.numpy().copy()
    model(x, y)
    np.testing.assert_array_equal(net.weight.numpy(), before)
    model.predict()
    assert model(x).shape == [3, 2]
    with pytest.raises(TypeError, match="to_static: layer must be a paddle.nn.Layer"):
        dist.to_static(lambda v: v)
    with pytest.raises(TypeError, match="shard_optimizer: optimizer must be"):
        dist.shard_optimizer(object())
    with pytest.raises(TypeError, match="shard_layer: process_mesh must be a ProcessMesh"):
        dist.shard_layer(net, [0])


def test_one_process_split_matches_plain_layers():
    x = paddle.to_tensor(np.arange(8, dtype=np.float32).reshape(2, 4))
    y = dist.split(x, (4, 3), "linear", axis=1, name="t_single")
    layer = dist.split.layers["t_single"]
    np.testing.assert_allclose(y.numpy(), x.numpy() @ layer.weight.numpy() + layer.bias.numpy(),
                               rtol=1e-6)
    ids = paddle.to_tensor([[1, 2]])
    e = dist.split(ids, (5, 2), "embedding", name="t_emb")
    np.testing.assert_array_equal(e.numpy(), dist.split.layers["t_emb"].weight.numpy()[[[1, 2]]])
    with pytest.raises(ValueError, match="num_partitions must equal the number of processes"):
        dist.split(x, (4, 2), "linear", num_partitions=2)
    with pytest.raises(TypeError, match="split: x must be a Tensor"):
        dist.split([1.0], (1, 1), "linear")


def test_one_process_checkpoint_round_trip(tmp_path):
    paddle.seed(5)
    net = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    net(paddle.ones([1, 3])).sum().backward()
    opt.step()
    state = {"model": net.state_dict(), "opt": opt.state_dict()}
    saved = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    dist.save_state_dict(state, str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.metadata", "0_0.distcp"]
    for v in net.parameters():
        v.set_value(np.zeros(v.shape, np.float32))
    dist.load_state_dict(state, str(tmp_path))
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), saved[k])
    with pytest.raises(FileNotFoundError, match="no .metadata file"):
        dist.load_state_dict(state, str(_empty(tmp_path)))
    with pytest.raises(ValueError, match="coordinator_rank must be a rank of the group"):
        dist.save_state_dict(state, str(tmp_path), coordinator_rank=1)


def _empty(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_io_module():
    assert dist.io.is_persistable(paddle.nn.Linear(1, 1).weight)
    assert not dist.io.is_persistable(paddle.ones([1]))
    with pytest.raises(RuntimeError, match="save_persistables: .*paddle.distributed.save_state"):
        dist.io.save_persistables(None, "d")
    with pytest.raises(TypeError, match="is_persistable: var must be a Tensor"):
        dist.io.is_persistable(1)


@pytest.mark.parity
def test_mesh_and_placements_match_paddle():
    import zlib  # noqa: F401

    import numpy.random  # noqa: F401

    real = pytest.importorskip("paddle").distributed
    for mesh, names in (([[0, 1], [2, 3]], ["x", "y"]), ([3, 1, 2], None)):
        ours, theirs = dist.ProcessMesh(mesh, names), real.ProcessMesh(mesh, names)
        assert ours.shape == theirs.shape and ours.process_ids == theirs.process_ids
        assert ours.dim_names == theirs.dim_names
        assert ours.get_mesh_with_dim(ours.dim_names[-1]).process_ids == \
            theirs.get_mesh_with_dim(theirs.dim_names[-1]).process_ids
    assert str(dist.Partial(dist.ReduceType.kRedMax)) == \
        str(real.Partial(real.ReduceType.kRedMax))
    assert str(dist.Shard(1)) == str(real.Shard(1))
    assert [int(getattr(dist.ReduceType, k)) for k in ("kRedSum", "kRedAvg", "kRedAll")] == \
        [int(getattr(real.ReduceType, k)) for k in ("kRedSum", "kRedAvg", "kRedAll")]
    g = np.arange(12, dtype=np.float32).reshape(3, 4)
    m1 = real.ProcessMesh([0], dim_names=["x"])
    theirs = real.shard_tensor(real_tensor(g), m1, [real.Shard(0)])
    ours = dist.shard_tensor(g, dist.ProcessMesh([0], dim_names=["x"]), [dist.Shard(0)])
    np.testing.assert_array_equal(ours._local_value().numpy(), theirs._local_value().numpy())
    assert ours.shape == list(theirs.shape)


def real_tensor(a):
    import paddle as real

    return real.to_tensor(a)


# ------------------------------------------------------------------ several processes


def test_semi_auto_on_two_ranks():
    _ok(_launch(2, "semi_auto.py"), 2)


def test_split_on_two_ranks():
    _ok(_launch(2, "model_parallel.py"), 2)


def test_checkpoint_two_ranks_to_one_and_three(tmp_path):
    path = str(tmp_path / "ckpt")
    _ok(_launch(2, "checkpoint.py", "save", path), 2)
    _ok(_launch(1, "checkpoint.py", "load", path), 1)
    _ok(_launch(3, "checkpoint.py", "load", path), 3)
