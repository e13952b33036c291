"""DataParallel in one process, and the environment queries."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle


def test_single_process_wrapper_is_transparent():
    net = paddle.nn.Linear(2, 2)
    dp = paddle.DataParallel(net)
    assert list(dp.state_dict()) == ["weight", "bias"]
    assert "(_layers): Linear" in repr(dp)
    x = paddle.ones([3, 2])
    np.testing.assert_allclose(dp(x).numpy(), net(x).numpy())
    loss = dp.scale_loss(dp(x).sum())
    loss.backward()
    g = net.weight.grad.numpy().copy()
    dp.apply_collective_grads()
    np.testing.assert_allclose(net.weight.grad.numpy(), g)
    with dp.no_sync():
        assert dp._grad_need_sync is False
    assert dp._grad_need_sync is True
    dp.set_state_dict({"weight": paddle.zeros([2, 2]), "bias": paddle.zeros([2])})
    assert not net.weight.numpy().any()


def test_environment(monkeypatch):
    assert paddle.distributed.get_world_size() == 1
    assert paddle.distributed.get_rank() == 0
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    env = paddle.distributed.ParallelEnv()
    assert (env.world_size, env.rank, env.nranks, env.local_rank) == (4, 2, 4, 2)


def test_environment_is_read_after_the_group_is_made(monkeypatch):
    # ParallelEnv describes the launcher's variables, as Paddle's does, even once this
    # process has made its (one-process) global group
    paddle.distributed.init_parallel_env()
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    env = paddle.distributed.ParallelEnv()
    assert (env.world_size, env.rank) == (4, 2)


def test_decorate_after_data_parallel_is_refused():
    dp = paddle.DataParallel(paddle.nn.Linear(2, 2))
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        paddle.amp.decorate(dp, level="O2")


def test_bad_input():
    with pytest.raises(TypeError, match="Layer"):
        paddle.DataParallel(object())
