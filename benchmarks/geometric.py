"""Graph ops side by side: paddle_hl.geometric, PyTorch Geometric (CPU) and Paddle 2.6.2.

Cases, all in one process with the libraries' runs interleaved round by round:

- ``send_u_recv`` sum and mean, forward + backward, on a Cora-sized graph (2,708 nodes,
  10,556 edges) with 64 features: paddle_hl and Paddle's ``send_u_recv``, PyG's
  ``torch_geometric.utils.scatter(x[src], dst, reduce=...)``;
- one training step (forward, backward, Adam) of a 2-layer GCN (1,433 -> 16 -> 7) on that
  graph: paddle_hl and Paddle with ``send_ue_recv`` (mul by the symmetric edge norm, sum), PyG
  with two ``GCNConv(cached=True)`` layers (the normalisation is computed once, as the others
  precompute it);
- neighbour sampling of 1,024 seeds x [25, 10] on a 100,000-node graph (average in-degree 15,
  skewed): ``sample_neighbors`` + ``reindex_graph`` per hop, paddle_hl against Paddle.

PyG runs its pure-torch paths when its compiled extensions (torch_scatter, torch_sparse,
pyg_lib) are not installed; the header says which. Prints the median and range in ms and the
ratios, for wall-clock time and for the process's CPU time (on a shared machine the CPU time is
the steadier number; ``--threads 1`` keeps torch and BLAS from fighting over cores).

Run: python benchmarks/geometric.py [--repeat 30] [--threads N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, E, D, H, C, F = 2708, 10556, 1433, 16, 7, 64


def _cora_like(seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, N, E)
    dst = rng.integers(0, N, E)
    x = rng.standard_normal((N, F)).astype("float32")
    feats = (rng.random((N, D)) < 0.01).astype("float32")
    labels = rng.integers(0, C, N)
    return src, dst, x, feats, labels


def _gcn_norm(src, dst):
    loop = np.arange(N)
    s, d = np.concatenate([src, loop]), np.concatenate([dst, loop])
    deg = np.bincount(d, minlength=N).astype("float32")
    return s, d, (1.0 / np.sqrt(deg[s] * deg[d])).astype("float32")[:, None]


# ------------------------------------------------------------------------------ per library

def paddle_like_cases(lib, data):
    src, dst, x, feats, labels = data
    nn = lib.nn
    cases = {}
    s, d = lib.to_tensor(src), lib.to_tensor(dst)
    xt = lib.to_tensor(x, stop_gradient=False)
    for red in ("sum", "mean"):
        def run(red=red):
            out = lib.geometric.send_u_recv(xt, s, d, reduce_op=red)
            out.sum().backward()
            xt.clear_grad()
        cases[f"send_u_recv {red}"] = run

    gs, gd, w = _gcn_norm(src, dst)
    # the edge norm is a constant, as in PyG's cached GCNConv; but Paddle 2.6.2's send_ue_recv
    # backward fails when y stops gradient, so there it has to ask for (and pay) y's gradient
    real_paddle = not hasattr(lib, "backend")
    gs, gd, w = lib.to_tensor(gs), lib.to_tensor(gd), lib.to_tensor(w,
                                                                    stop_gradient=not real_paddle)
    l1, l2 = nn.Linear(D, H), nn.Linear(H, C)
    opt = lib.optimizer.Adam(learning_rate=0.01,
                             parameters=l1.parameters() + l2.parameters())
    ft, yt = lib.to_tensor(feats), lib.to_tensor(labels)

    def gcn_step():
        h = lib.geometric.send_ue_recv(l1(ft), w, gs, gd, "mul", "sum")
        h = lib.geometric.send_ue_recv(l2(nn.functional.relu(h)), w, gs, gd, "mul", "sum")
        loss = nn.functional.cross_entropy(h, yt)
        loss.backward()
        opt.step()
        opt.clear_grad()

    cases["GCN 2-layer step"] = gcn_step
    return cases


def pyg_cases(data):
    import torch
    from torch_geometric.nn import GCNConv
    from torch_geometric.utils import scatter

    src, dst, x, feats, labels = data
    s, d = torch.from_numpy(src), torch.from_numpy(dst)
    xt = torch.from_numpy(x).requires_grad_()
    cases = {}
    for red in ("sum", "mean"):
        def run(red=red):
            out = scatter(xt[s], d, dim=0, dim_size=N, reduce=red)
            out.sum().backward()
            xt.grad = None
        cases[f"send_u_recv {red}"] = run

    edge_index = torch.stack([s, d])
    c1, c2 = GCNConv(D, H, cached=True), GCNConv(H, C, cached=True)
    opt = torch.optim.Adam(list(c1.parameters()) + list(c2.parameters()), lr=0.01)
    ft, yt = torch.from_numpy(feats), torch.from_numpy(labels)

    def gcn_step():
        h = c2(torch.relu(c1(ft, edge_index)), edge_index)
        loss = torch.nn.functional.cross_entropy(h, yt)
        loss.backward()
        opt.step()
        opt.zero_grad()

    cases["GCN 2-layer step"] = gcn_step
    return cases


def _big_graph(seed=1, n=100_000, avg=15):
    rng = np.random.default_rng(seed)
    deg = np.minimum(rng.zipf(2.0, n) * avg // 2, 2000)
    colptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=colptr[1:])
    row = rng.integers(0, n, int(colptr[-1])).astype(np.int64)
    seeds = rng.choice(n, 1024, replace=False).astype(np.int64)
    return row, colptr, seeds


def sampling_case(lib, graph):
    row, colptr, seeds = (lib.to_tensor(a) for a in graph)

    def run():
        nodes = seeds
        for k in (25, 10):
            nb, cnt = lib.geometric.sample_neighbors(row, colptr, nodes, sample_size=k)
            _, _, nodes = lib.geometric.reindex_graph(nodes, nb, cnt)

    return run


# ------------------------------------------------------------------------------ driver

def _time(fn, repeat, warmup=3):
    """(wall seconds, CPU seconds of this process) per run."""
    from _timing import timed

    for _ in range(warmup):
        fn()
    return list(zip(*timed(fn, repeat)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per case")
    ap.add_argument("--threads", type=int, default=0,
                    help="limit torch's and BLAS's threads (0: library defaults)")
    args = ap.parse_args(argv)

    sys.path.insert(0, ROOT)
    import paddle_hl

    libs = {"paddle_hl": None, "pyg": None, "paddle": None}
    data = _cora_like()
    graph = _big_graph()
    cases = {"paddle_hl": paddle_like_cases(paddle_hl, data)}
    cases["paddle_hl"]["sample 1024 x [25, 10]"] = sampling_case(paddle_hl, graph)
    if importlib.util.find_spec("torch_geometric") is not None:
        import torch

        if args.threads:
            torch.set_num_threads(args.threads)
            torch.set_num_interop_threads(args.threads)
        cases["pyg"] = pyg_cases(data)
        ext = [m for m in ("torch_scatter", "torch_sparse", "pyg_lib")
               if importlib.util.find_spec(m) is not None]
        libs["pyg"] = (f"torch {torch.__version__}, {torch.get_num_threads()} threads; "
                       f"compiled extensions: {', '.join(ext) or 'none (pure-torch paths)'}")
    if importlib.util.find_spec("paddle") is not None:
        import zlib  # noqa: F401  (paddle 2.6.2 under NumPy 2 needs these first)

        import numpy.random  # noqa: F401
        import paddle

        paddle.disable_signal_handler()
        cases["paddle"] = paddle_like_cases(paddle, data)
        cases["paddle"]["sample 1024 x [25, 10]"] = sampling_case(paddle, graph)
        libs["paddle"] = f"paddle {paddle.__version__}"
    libs["paddle_hl"] = f"numpy {np.__version__}"
    for k, v in libs.items():
        print(f"{k:10s} {v or 'not installed'}")
    print(f"Cora-sized graph: {N} nodes, {E} edges; send_u_recv on {F} features; "
          f"{args.rounds} x {args.repeat} runs per case, interleaved\n")

    names = list(cases["paddle_hl"])
    if args.threads:
        try:
            from threadpoolctl import threadpool_limits

            threadpool_limits(args.threads)
        except ImportError:
            print("threadpoolctl is not installed: BLAS threads are not limited")
    times = {(lib, n): [] for lib in cases for n in cases[lib]}
    for _ in range(args.rounds):
        for n in names:
            for lib in cases:
                if n in cases[lib]:
                    times[(lib, n)] += _time(cases[lib][n], args.repeat)

    for col, label in ((0, "wall-clock"), (1, "CPU time of the process (steadier when the "
                                               "machine is shared)")):
        print(f"\n{label}: median ms [min-max]")
        print(f"{'case':26s}" + "".join(f"{lib:>26s}" for lib in cases) + "   hl/pyg  hl/paddle")
        for n in names:
            line = f"{n:26s}"
            med = {}
            for lib in cases:
                ts = times.get((lib, n))
                if not ts:
                    line += f"{'-':>26s}"
                    continue
                ms = [t[col] * 1e3 for t in ts]
                med[lib] = statistics.median(ms)
                line += f"{med[lib]:.3f} ms [{min(ms):.2f}-{max(ms):.2f}]".rjust(26)
            for other in ("pyg", "paddle"):
                line += (f"{med['paddle_hl'] / med[other]:>9.2f}x" if other in med
                         else f"{'-':>10s}")
            print(line)

if __name__ == "__main__":
    main()
