"""Resuming from a saved optimizer state, and ReduceOnPlateau stepping, against Paddle 2.6.2."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddle_hl

OPTIMIZERS = [
    ("Adam", {"learning_rate": 0.1}),
    ("AdamW", {"learning_rate": 0.1, "weight_decay": 0.05}),
    ("Momentum", {"learning_rate": 0.1, "momentum": 0.9}),
    ("Momentum", {"learning_rate": 0.1, "use_nesterov": True, "weight_decay": 0.01}),
    ("RMSProp", {"learning_rate": 0.05}),
    ("RMSProp", {"learning_rate": 0.05, "momentum": 0.9, "centered": True}),
]
IDS = ["adam", "adamw", "momentum", "nesterov", "rmsprop", "rmsprop-centered"]


def _data():
    rng = np.random.RandomState(0)
    w = rng.randn(4, 3).astype("float32")
    b = rng.randn(3).astype("float32")
    xs = [rng.randn(5, 4).astype("float32") for _ in range(6)]
    return w, b, xs


def _train(lib, pd, name, kw, path, resume, scheduled):
    """N steps, save state_dict, rebuild the optimizer from the file, M more steps."""
    w, b, xs = _data()
    net = lib.nn.Linear(4, 3)
    net.weight.set_value(w)
    net.bias.set_value(b)
    sched = [None]

    def build():
        kw2 = dict(kw)
        if scheduled:
            sched[0] = lib.optimizer.lr.StepDecay(kw["learning_rate"], step_size=2, gamma=0.5)
            kw2["learning_rate"] = sched[0]
        return getattr(lib.optimizer, name)(parameters=net.parameters(), **kw2)

    def steps(opt, a, z):
        for i in range(a, z):
            loss = (net(lib.to_tensor(xs[i])) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            if sched[0] is not None:
                sched[0].step()

    opt = build()
    steps(opt, 0, 3)
    if resume:
        lib.save(opt.state_dict(), path)
        opt = build()
        opt.set_state_dict(lib.load(path))
    # Paddle names the rebuilt optimizer's accumulators with a fresh suffix unless the name
    # counter restarts, as it does in a new process
    guard = pd.utils.unique_name.guard() if lib is pd else contextlib.nullcontext()
    with guard:
        steps(opt, 3, 6)
    return net.weight.numpy(), net.bias.numpy()


@pytest.mark.parity
@pytest.mark.parametrize("scheduled", [False, True], ids=["float-lr", "scheduler"])
@pytest.mark.parametrize(("name", "kw"), OPTIMIZERS, ids=IDS)
def test_resume_from_state_dict_parity(pd, tmp_path, name, kw, scheduled):
    ours = _train(paddle_hl, pd, name, kw, str(tmp_path / "hl.pdopt"), True, scheduled)
    theirs = _train(pd, pd, name, kw, str(tmp_path / "pd.pdopt"), True, scheduled)
    straight = _train(paddle_hl, pd, name, kw, None, False, scheduled)
    for a, b, c in zip(ours, theirs, straight):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        # resuming changes nothing against an uninterrupted run
        np.testing.assert_allclose(a, c, rtol=0, atol=0)


_CROSS = textwrap.dedent("""
    import sys, zlib
    import numpy.random
    import numpy as np
    lib_name, phase, name, kind, folder = sys.argv[1:6]
    if lib_name == "paddle":
        import paddle as lib
    else:
        import paddle_hl as lib
    rng = np.random.RandomState(0)
    w = rng.randn(4, 3).astype("float32"); b = rng.randn(3).astype("float32")
    xs = [rng.randn(5, 4).astype("float32") for _ in range(6)]
    net = lib.nn.Linear(4, 3)
    extra = {"momentum": 0.9, "centered": True} if kind == "centered" else {}
    opt = getattr(lib.optimizer, name)(learning_rate=0.05, parameters=net.parameters(), **extra)
    if phase == "first":
        net.weight.set_value(w); net.bias.set_value(b); rng_steps = range(0, 3)
    else:
        net.set_state_dict(lib.load(folder + "/m.pdparams"))
        opt.set_state_dict(lib.load(folder + "/m.pdopt")); rng_steps = range(3, 6)
    for i in rng_steps:
        loss = (net(lib.to_tensor(xs[i])) ** 2).mean(); loss.backward()
        opt.step(); opt.clear_grad()
    lib.save(net.state_dict(), folder + "/m.pdparams")
    lib.save(opt.state_dict(), folder + "/m.pdopt")
    np.save(folder + "/w_" + phase + ".npy", net.weight.numpy())
""")


def _run(script, *args):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, script, *args], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain", "centered"])
@pytest.mark.parametrize("first,second", [("paddle_hl", "paddle")])
def test_rmsprop_state_moves_between_libraries(pd, tmp_path, first, second, kind):
    # Paddle's set_state_dict insists on every accumulator it would create, mean_grad included
    # even without centering; each half runs in a fresh process so that parameter names match
    script = tmp_path / "cross.py"
    script.write_text(_CROSS)
    _run(str(script), first, "first", "RMSProp", kind, str(tmp_path))
    _run(str(script), second, "second", "RMSProp", kind, str(tmp_path))
    resumed = np.load(tmp_path / "w_second.npy")
    _run(str(script), "paddle", "first", "RMSProp", kind, str(tmp_path))
    _run(str(script), "paddle", "second", "RMSProp", kind, str(tmp_path))
    np.testing.assert_allclose(resumed, np.load(tmp_path / "w_second.npy"), rtol=1e-5,
                               atol=1e-6)


def test_rmsprop_state_dict_has_mean_grad_without_centering():
    net = paddle_hl.nn.Linear(2, 2)
    opt = paddle_hl.optimizer.RMSProp(0.1, parameters=net.parameters())
    net(paddle_hl.ones([1, 2])).sum().backward()
    opt.step()
    keys = {k for k in opt.state_dict() if "mean_grad" in k}
    assert keys == {f"{net.weight.name}_mean_grad_0", f"{net.bias.name}_mean_grad_0"}
    np.testing.assert_array_equal(opt.state_dict()[f"{net.weight.name}_mean_grad_0"].numpy(),
                                  np.zeros((2, 2), "float32"))


def _plateau_run(lib, kw, seq, kinds):
    s = lib.optimizer.lr.ReduceOnPlateau(0.1, **kw)
    out = []
    for v, kind in zip(seq, kinds):
        if kind == 0:
            m = float(v)
        elif kind == 1:
            m = lib.to_tensor([v], dtype="float32")
        elif kind == 2:
            m = np.array([v], "float32")
        else:
            m = lib.to_tensor(v, dtype="float64")
        s.step(m)
        out.append(s.last_lr)
    return out


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(6))
def test_reduce_on_plateau_random_sequences_parity(pd, seed):
    # float metrics, float32 / float64 Tensor metrics and float32 arrays, mixed: a Tensor
    # metric is compared in its own dtype, with the Python-float bound made float32
    rng = np.random.RandomState(seed)
    for _ in range(40):
        kw = {"mode": str(rng.choice(["min", "max"])),
              "factor": float(rng.choice([0.1, 0.5, 0.9])),
              "patience": int(rng.randint(0, 4)),
              "threshold": float(rng.choice([1e-4, 0.01, 0.1, 0.5])),
              "threshold_mode": str(rng.choice(["rel", "abs"])),
              "cooldown": int(rng.randint(0, 3)),
              "min_lr": float(rng.choice([0, 1e-3, 0.02]))}
        seq = rng.randn(25).cumsum() * rng.choice([0.01, 1, 100]) + rng.choice([-5, 0, 5])
        if rng.rand() < 0.5:
            seq = np.round(seq, 1)  # repeated values hit the threshold boundary
        kinds = rng.randint(0, 4, len(seq))
        np.testing.assert_allclose(_plateau_run(paddle_hl, kw, seq, kinds),
                                   _plateau_run(pd, kw, seq, kinds), rtol=1e-12,
                                   err_msg=str(kw))


@pytest.mark.parity
def test_reduce_on_plateau_float32_boundary_parity(pd):
    # -5.1 from a float64 tensor against best - threshold = -5.0 - 0.1: Paddle rounds the
    # Python-float bound to float32 (-5.0999999), so the float64 metric counts as better
    kw = {"mode": "min", "patience": 0, "threshold": 0.1, "threshold_mode": "abs",
          "factor": 0.5}
    for lib in (paddle_hl, pd):
        s = lib.optimizer.lr.ReduceOnPlateau(0.1, **kw)
        s.step(-5.0)
        s.step(lib.to_tensor(-5.1, dtype="float64"))
        assert s.num_bad_epochs == 0
        assert s.last_lr == 0.1
    s = paddle_hl.optimizer.lr.ReduceOnPlateau(0.1, **kw)
    s.step(-5.0)
    s.step(-5.1)  # two Python floats: exact float64 comparison, not better
    assert s.last_lr == 0.05


@pytest.mark.parity
@pytest.mark.parametrize("name", ["Adam", "Momentum", "RMSProp"])
def test_state_saved_for_other_parameters_is_refused_parity(pd, name):
    # a model rebuilt in the same process gets new parameter names; the saved accumulators
    # then match nothing, and resuming from zeros would silently change the updates
    for lib in (pd, paddle_hl):
        net = lib.nn.Linear(2, 2)
        opt = getattr(lib.optimizer, name)(learning_rate=0.1, parameters=net.parameters())
        net(lib.ones([1, 2])).sum().backward()
        opt.step()
        state = opt.state_dict()
        other = lib.nn.Linear(2, 2)
        opt2 = getattr(lib.optimizer, name)(learning_rate=0.1, parameters=other.parameters())
        opt2.set_state_dict(state)
        other(lib.ones([1, 2])).sum().backward()
        with pytest.raises((ValueError, AssertionError), match="state"):
            opt2.step()


def test_empty_or_matching_state_still_loads():
    net = paddle_hl.nn.Linear(2, 2)
    opt = paddle_hl.optimizer.Adam(parameters=net.parameters())
    net(paddle_hl.ones([1, 2])).sum().backward()
    opt.step()
    state = opt.state_dict()
    again = paddle_hl.optimizer.Adam(parameters=net.parameters())
    again.set_state_dict(state)
    again.step()
    fresh = paddle_hl.optimizer.Adam(parameters=net.parameters())
    fresh.set_state_dict({})
    fresh.step()
