"""A distributed checkpoint saved and loaded by however many ranks, on however many hosts run.

``ckpt_hosts.py save DIR``: every rank writes its rows of a weight sharded over all ranks and
its columns of an optimizer moment; the coordinator writes the replicated bias, an int64
tensor and a number. ``ckpt_hosts.py load DIR``: the same state with other placements (the
weight by columns, the moment by rows; plain tensors on one process) is loaded and checked bit
for bit, globally and rank by rank. Prints ``SAVED rank R on HOST`` or ``LOADED rank R of N on
HOST``.
"""

import socket
import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

mode, path = sys.argv[1], sys.argv[2]
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
host = socket.gethostname()
rng = np.random.default_rng(7)
W = rng.standard_normal((8, 6)).astype("float32")
M = rng.standard_normal((6, 8)).astype("float32")
B = rng.standard_normal(6).astype("float32")
IDX = np.arange(12, dtype=np.int64).reshape(3, 4)
mesh = dist.ProcessMesh(list(range(n)), dim_names=["x"]) if n > 1 else None


def place(value, dim):
    """``value`` as a tensor split along ``dim`` over the ranks (plain on one process)."""
    t = paddle.to_tensor(value)
    return t if mesh is None else dist.shard_tensor(t, mesh, [dist.Shard(dim)])


if mode == "save":
    state = {"w": place(W, 0), "opt": {"m": place(M, 1), "step": 5},
             "b": paddle.to_tensor(B), "idx": paddle.to_tensor(IDX)}
    dist.save_state_dict(state, path)
    print(f"SAVED rank {rank} on {host}", flush=True)
else:
    state = {"w": place(np.zeros_like(W), 1), "opt": {"m": place(np.zeros_like(M), 0)},
             "b": paddle.zeros([6]), "idx": paddle.zeros([3, 4], dtype="int64")}
    dist.load_state_dict(state, path)
    for name, got, want in (("w", state["w"], W), ("m", state["opt"]["m"], M),
                            ("b", state["b"], B), ("idx", state["idx"], IDX)):
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
    if mesh is not None:  # this rank's own shards
        cols = np.array_split(np.arange(6), n)[rank]
        rows = np.array_split(np.arange(6), n)[rank]
        np.testing.assert_array_equal(state["w"]._local_value().numpy(), W[:, cols])
        np.testing.assert_array_equal(state["opt"]["m"]._local_value().numpy(), M[rows])
    assert state["opt"]["step"] == 5, state["opt"]
    print(f"LOADED rank {rank} of {n} on {host}", flush=True)
