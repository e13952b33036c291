"""The preamble every collective shares (``collective._collective``): argument checks that name
the collective and the argument, Python's own errors for a call of the wrong shape, the group
resolved, and nothing done on a rank outside the group. In one process; the collectives'
results on several ranks are checked by tests/distributed/test_multiprocess.py."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.distributed as dist
from paddle_hl.distributed import collective
from paddle_hl.distributed._comm import Group, Task

# every collective with the arguments that make a valid call on one rank, given ``x``
CALLS = {
    "all_reduce": lambda x: ((x,), {}),
    "reduce": lambda x: ((x, 0), {}),
    "reduce_scatter": lambda x: ((x, [x.clone()]), {}),
    "broadcast": lambda x: ((x, 0), {}),
    "all_gather": lambda x: (([], x), {}),
    "gather": lambda x: ((x, []), {}),
    "scatter": lambda x: ((x, [x.clone()]), {}),
    "alltoall": lambda x: (([x], []), {}),
    "alltoall_single": lambda x: ((x, x.clone()), {}),
}
TENSOR_ARG = {"alltoall_single": "in_tensor"}


@pytest.fixture(autouse=True)
def _world():
    dist.init_parallel_env()


def _outsider():
    """A group this process is not a member of (rank -1), with no communicator: any attempt
    to communicate on it fails."""
    return Group(-1, 99, [1, 2], None)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_rank_outside_the_group_does_nothing(name):
    x = paddle.to_tensor(np.arange(4.0, dtype=np.float32))
    args, kw = CALLS[name](x)
    fn = getattr(dist, name)
    assert fn(*args, group=_outsider(), **kw) is None
    task = fn(*args, group=_outsider(), sync_op=False, **kw)
    assert isinstance(task, Task) and task.is_completed()
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0, dtype=np.float32))


@pytest.mark.parametrize("name", ["all_gather_object", "broadcast_object_list",
                                  "scatter_object_list"])
def test_object_collectives_outside_the_group_leave_the_list(name):
    out = ["kept"]
    args = {"all_gather_object": (out, 1), "broadcast_object_list": (out, 1),
            "scatter_object_list": (out, [1, 2], 1)}[name]
    assert getattr(dist, name)(*args, group=_outsider()) is None
    assert out == ["kept"]


# alltoall takes lists only: its body checks their tensors (one per rank)
@pytest.mark.parametrize("name", sorted(set(CALLS) - {"alltoall"}))
def test_a_non_tensor_is_refused_naming_the_collective_and_argument(name):
    x = paddle.to_tensor([1.0])
    args, kw = CALLS[name](x)
    arg = TENSOR_ARG.get(name, "tensor")
    pos = list(collective.inspect.signature(getattr(dist, name)).parameters).index(arg)
    args = args[:pos] + ([1.0],) + args[pos + 1:]
    with pytest.raises(TypeError, match=rf"distributed\.{name}: {arg} must be a Tensor"):
        getattr(dist, name)(*args, **kw)


def test_the_checks_come_before_the_group_and_the_membership():
    # a bad tensor or op is reported even on a rank outside the group, as before
    with pytest.raises(TypeError, match="all_reduce: tensor must be a Tensor"):
        dist.all_reduce(np.ones(2), group=_outsider())
    with pytest.raises(ValueError, match="all_reduce: op must be one of"):
        dist.all_reduce(paddle.ones([2]), op="sum", group=_outsider())
    with pytest.raises(TypeError, match="all_gather_object: object_list must be a list"):
        dist.all_gather_object((), 1, group=_outsider())
    with pytest.raises(TypeError, match="reduce: group must be a Group"):
        dist.reduce(paddle.ones([2]), 0, group="world")


def test_a_call_python_refuses_raises_pythons_error_naming_the_collective():
    x = paddle.ones([2])
    with pytest.raises(TypeError, match=r"all_reduce\(\) takes from 1 to 4 positional"):
        dist.all_reduce(x, dist.ReduceOp.SUM, None, True, 5)
    with pytest.raises(TypeError, match=r"broadcast\(\) got multiple values for argument"):
        dist.broadcast(x, 0, tensor=x)
    with pytest.raises(TypeError, match=r"reduce\(\) missing 1 required positional"):
        dist.reduce(x)
    with pytest.raises(TypeError, match=r"gather\(\) got an unexpected keyword argument"):
        dist.gather(x, [], dest=0)


def test_keywords_and_defaults_reach_the_body():
    x = paddle.to_tensor([3.0, 4.0])
    dist.all_reduce(tensor=x, op=dist.ReduceOp.MAX, sync_op=True)
    out = []
    dist.all_gather(tensor=x, tensor_list=out)
    np.testing.assert_array_equal(out[0].numpy(), [3.0, 4.0])
    task = dist.broadcast(x, src=0, sync_op=False)
    task.wait()
    assert task.is_completed()
    assert list(collective.inspect.signature(dist.reduce).parameters) == [
        "tensor", "dst", "op", "group", "sync_op"]
