"""Every optimizer against Paddle 2.6.2 over several steps: plain, weight decay, param groups,
grad clipping, state_dict round trips, and the documented optimizer behaviours."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

SHAPES = [(3, 4), (4,)]


def _data(steps=4, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype("float32") for s in SHAPES]
    grads = [[rng.standard_normal(s).astype("float32") for s in SHAPES] for _ in range(steps)]
    return init, grads


def _params(lib, init):
    ps = []
    for i, a in enumerate(init):
        p = lib.create_parameter(list(a.shape), "float32") if hasattr(
            lib, "create_parameter") and lib is not paddle else None
        if p is None:
            from paddle_hl.framework.parameter import Parameter

            p = Parameter(a, name=f"p_{i}")
        else:
            p.set_value(a)
            p.name = f"p_{i}"  # the same names in both libraries
        ps.append(p)
    return ps


def _run(lib, name, kwargs, init, grads, groups=False, clip=None):
    ps = _params(lib, init)
    params = ps if not groups else [{"params": [ps[0]]},
                                    {"params": [ps[1]], "learning_rate": 0.5,
                                     "weight_decay": 0.05}]
    kw = dict(kwargs)
    if clip is not None:
        kw["grad_clip"] = clip(lib)
    opt = getattr(lib.optimizer, name)(parameters=params, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            # the gradient arrives through a real backward pass in both libraries
            (p * lib.to_tensor(g)).sum().backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy().copy() for p in ps], opt


CASES = [
    ("SGD", dict(learning_rate=0.1)),
    ("SGD", dict(learning_rate=0.1, weight_decay=0.01)),
    ("Momentum", dict(learning_rate=0.1, momentum=0.8)),
    ("Momentum", dict(learning_rate=0.1, momentum=0.8, use_nesterov=True, weight_decay=0.01)),
    ("Adam", dict(learning_rate=0.01)),
    ("Adam", dict(learning_rate=0.01, beta1=0.8, beta2=0.99, epsilon=1e-6, weight_decay=0.01)),
    ("AdamW", dict(learning_rate=0.01)),
    ("AdamW", dict(learning_rate=0.01, weight_decay=0.1,
                   apply_decay_param_fun=lambda n: n == "p_0")),
    ("Adamax", dict(learning_rate=0.01)),
    ("Adamax", dict(learning_rate=0.01, weight_decay=0.01)),
    ("Adagrad", dict(learning_rate=0.1)),
    ("Adagrad", dict(learning_rate=0.1, initial_accumulator_value=0.1, weight_decay=0.01)),
    ("Adadelta", dict(learning_rate=1.0)),
    ("Adadelta", dict(learning_rate=0.5, rho=0.9, weight_decay=0.01)),
    ("RMSProp", dict(learning_rate=0.01)),
    ("RMSProp", dict(learning_rate=0.01, momentum=0.5, centered=True, weight_decay=0.01)),
    ("Lamb", dict(learning_rate=0.01)),
    ("Lamb", dict(learning_rate=0.01, lamb_weight_decay=0.0)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                   enumerate(CASES)])
def test_updates_parity(pd, name, kwargs):
    init, grads = _data()
    ours, _ = _run(paddle, name, kwargs, init, grads)
    theirs, _ = _run(pd, name, kwargs, init, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(learning_rate=0.1)),
                                         ("Momentum", dict(learning_rate=0.1)),
                                         ("Adam", dict(learning_rate=0.01))])
def test_param_groups_parity(pd, name, kwargs):
    init, grads = _data()
    ours, _ = _run(paddle, name, kwargs, init, grads, groups=True)
    theirs, _ = _run(pd, name, kwargs, init, grads, groups=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def _clip_parity(pd, name, kwargs, make_clip):
    init, grads = _data()
    ours, _ = _run(paddle, name, kwargs, init, grads, clip=make_clip)
    theirs, _ = _run(pd, name, kwargs, init, grads, clip=make_clip)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


@pytest.mark.parity
def test_state_dict_keys_and_round_trip_with_paddle(pd):
    init, grads = _data()
    _, ours = _run(paddle, "Adam", dict(learning_rate=0.01), init, grads)
    _, theirs = _run(pd, "Adam", dict(learning_rate=0.01), init, grads)
    so, st = ours.state_dict(), theirs.state_dict()
    # parameter names differ between the libraries; the accumulator suffixes must agree
    suffix = lambda k: k.split("_", 2)[-1] if k.startswith("p_") else k.split(".w_0_")[-1]
    assert sorted({k.rsplit("_", 2)[0].split("_")[-1] for k in so}) == sorted(
        {k.rsplit("_", 2)[0].split("_")[-1] for k in st})
    assert callable(suffix)
    # load Paddle's accumulators into a fresh paddle_hl optimizer and continue identically
    ps = _params(paddle, init)
    names_pd = [p.name for p in theirs._parameter_list]
    for p, n in zip(ps, names_pd):
        p.name = n
    fresh = paddle.optimizer.Adam(learning_rate=0.01, parameters=ps)
    fresh.set_state_dict({k: v.numpy() for k, v in st.items()})
    for p, q in zip(ps, theirs._parameter_list):
        p.set_value(q.numpy())
    g = [np.ones(s, "float32") for s in SHAPES]
    for p, gg in zip(ps, g):
        (p * paddle.to_tensor(gg)).sum().backward()
    fresh.step()
    for q, gg in zip(theirs._parameter_list, g):
        (q * pd.to_tensor(gg)).sum().backward()
    theirs.step()
    for p, q in zip(ps, theirs._parameter_list):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=2e-5, atol=2e-6)


def test_state_dict_round_trip():
    init, grads = _data()
    ours, opt = _run(paddle, "Adam", dict(learning_rate=0.01), init, grads[:2])
    state = opt.state_dict()
    assert {"p_0_moment1_0", "p_0_moment2_0", "p_0_beta1_pow_acc_0",
            "p_0_beta2_pow_acc_0"} <= set(state)
    assert state["p_0_beta1_pow_acc_0"].shape == [1]
    ps = _params(paddle, [o for o in ours])
    opt2 = paddle.optimizer.Adam(learning_rate=0.01, parameters=ps)
    opt2.set_state_dict(state)
    for p, g in zip(opt._parameter_list, grads[2]):
        (p * paddle.to_tensor(g)).sum().backward()
    opt.step()
    for p, g in zip(ps, grads[2]):
        (p * paddle.to_tensor(g)).sum().backward()
    opt2.step()
    for a, b in zip(opt._parameter_list, ps):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_lr_scheduler_in_state_dict_and_set_lr():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[x])
    assert opt.state_dict()["LR_Scheduler"]["last_epoch"] == 0
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.5)
    opt2 = paddle.optimizer.SGD(learning_rate=0.1, parameters=[x])
    opt2.set_lr(0.5)
    assert opt2.get_lr() == 0.5
    (x * x).sum().backward()
    opt2.step()
    np.testing.assert_allclose(x.numpy(), [0.0, 0.0])


def test_clear_grad_modes():
    x = paddle.to_tensor([1.0], stop_gradient=False)
    opt = paddle.optimizer.SGD(0.1, parameters=[x])
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    opt.clear_grad()
    np.testing.assert_allclose(x.grad.numpy(), [0.0])
    opt.clear_grad(set_to_zero=False)
    assert x.grad is None


def test_skips_params_without_grad_or_frozen():
    a = paddle.to_tensor([1.0], stop_gradient=False)
    b = paddle.to_tensor([1.0], stop_gradient=False)
    opt = paddle.optimizer.Adam(0.1, parameters=[a, b])
    (a * 2).sum().backward()
    opt.step()
    assert b.numpy()[0] == 1.0 and a.numpy()[0] != 1.0


def test_adamw_is_decoupled():
    def run(cls, **kw):
        p = paddle.to_tensor([1.0, -2.0], stop_gradient=False)
        opt = cls(learning_rate=0.1, parameters=[p], **kw)
        (p * paddle.to_tensor([0.5, 0.5])).sum().backward()
        opt.step()
        return p.numpy()

    w = run(paddle.optimizer.AdamW, weight_decay=0.1)
    a = run(paddle.optimizer.Adam)
    np.testing.assert_allclose(w, np.array([1.0, -2.0]) * (1 - 0.1 * 0.1) - (
        np.array([1.0, -2.0]) - a), rtol=1e-5)
    assert not np.allclose(w, run(paddle.optimizer.Adam, weight_decay=0.1))


def test_float64_moments_and_weight_decay_float():
    p = paddle.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    opt = paddle.optimizer.Adam(0.1, parameters=[p])
    (p * p).sum().backward()
    opt.step()
    assert all(v.dtype == paddle.float64 for v in opt.state_dict().values())
    q1 = paddle.to_tensor([1.0], stop_gradient=False)
    q2 = paddle.to_tensor([1.0], stop_gradient=False)
    o1 = paddle.optimizer.Momentum(0.1, parameters=[q1], weight_decay=0.01)
    o2 = paddle.optimizer.Momentum(0.1, parameters=[q2],
                                   weight_decay=paddle.regularizer.L2Decay(0.01))
    for q, o in ((q1, o1), (q2, o2)):
        (q * 2).sum().backward()
        o.step()
    np.testing.assert_allclose(q1.numpy(), q2.numpy())


def test_l1_decay():
    p = paddle.to_tensor([1.0, -2.0], stop_gradient=False)
    opt = paddle.optimizer.SGD(1.0, parameters=[p], weight_decay=paddle.regularizer.L1Decay(0.1))
    (p * 0).sum().backward()
    opt.step()
    np.testing.assert_allclose(p.numpy(), [0.9, -1.9])


def test_multi_precision_master_weights():
    p = paddle.to_tensor([1.0, 2.0], dtype="float16", stop_gradient=False)
    opt = paddle.optimizer.SGD(1e-4, parameters=[p], multi_precision=True)
    for _ in range(3):
        (p.astype("float32") * 1.0).sum().backward()
        opt.step()
        opt.clear_grad()
    state = opt.state_dict()
    master = state["master_weights"][p.name]
    assert master.dtype == paddle.float32
    np.testing.assert_allclose(master.numpy(), [1.0 - 3e-4, 2.0 - 3e-4], rtol=1e-6)
    q = paddle.to_tensor([1.0, 2.0], dtype="float16", stop_gradient=False)
    q.name = p.name
    opt2 = paddle.optimizer.SGD(1e-4, parameters=[q], multi_precision=True)
    opt2.set_state_dict(state)
    (q.astype("float32") * 1.0).sum().backward()
    opt2.step()
    np.testing.assert_allclose(opt2.state_dict()["master_weights"][p.name].numpy(),
                               master.numpy() - 1e-4, rtol=1e-6)


def test_lamb_matches_reference():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(5)
    gs = [rng.standard_normal(5) for _ in range(3)]
    p = paddle.to_tensor(w0, stop_gradient=False)
    opt = paddle.optimizer.Lamb(learning_rate=0.01, lamb_weight_decay=0.01, parameters=[p])
    w, m, v = w0.copy(), np.zeros(5), np.zeros(5)
    b1, b2, eps = 0.9, 0.999, 1e-6
    for t, g in enumerate(gs, 1):
        (p * paddle.to_tensor(g)).sum().backward()
        opt.step()
        opt.clear_grad()
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        r = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + 0.01 * w
        w = w - 0.01 * (np.linalg.norm(w) / np.linalg.norm(r)) * r
    np.testing.assert_allclose(p.numpy(), w, rtol=1e-10)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_minimises_a_quadratic(line_search):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 6))
    a = paddle.to_tensor(a @ a.T + 6 * np.eye(6))
    b = paddle.to_tensor(rng.standard_normal(6))
    x = paddle.to_tensor(np.zeros(6), stop_gradient=False)
    opt = paddle.optimizer.LBFGS(learning_rate=1.0, max_iter=100, parameters=[x],
                                 line_search_fn=line_search)

    def closure():
        opt.clear_grad()
        loss = 0.5 * (x @ (a @ x)) - (b * x).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a.numpy(), b.numpy()), atol=1e-6)


@pytest.mark.parity
def test_lbfgs_parity(pd):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype("float64")
    a = a @ a.T + 4 * np.eye(4)
    b = rng.standard_normal(4)
    res = []
    for lib in (paddle, pd):
        x = lib.to_tensor(np.ones(4), stop_gradient=False)
        at, bt = lib.to_tensor(a), lib.to_tensor(b)
        opt = lib.optimizer.LBFGS(learning_rate=1.0, max_iter=5, parameters=[x],
                                  line_search_fn="strong_wolfe")

        def closure():
            opt.clear_grad()
            loss = 0.5 * (x @ (at @ x)) - (bt * x).sum() + (x ** 4).sum() * 0.01
            loss.backward()
            return loss

        opt.step(closure)
        res.append(x.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6, atol=1e-8)


def test_bad_arguments():
    x = paddle.to_tensor([1.0], stop_gradient=False)
    with pytest.raises(TypeError, match="learning_rate"):
        paddle.optimizer.SGD(learning_rate="fast", parameters=[x])
    with pytest.raises(TypeError, match="single Tensor"):
        paddle.optimizer.SGD(parameters=x)
    with pytest.raises(ValueError, match="beta1"):
        paddle.optimizer.Adam(beta1=1.5, parameters=[x])
    with pytest.raises(TypeError, match="weight_decay"):
        paddle.optimizer.SGD(parameters=[x], weight_decay="l2")
    with pytest.raises(ValueError, match="closure"):
        paddle.optimizer.LBFGS(parameters=[x]).step()
    with pytest.raises(AttributeError, match="parameters"):
        paddle.optimizer.SGD()


@pytest.mark.parity
@pytest.mark.parametrize("name", ["Adam", "Momentum", "AdamW", "RMSProp"])
@pytest.mark.parametrize("direction", ["hl_to_paddle", "paddle_to_hl"])
def test_pdopt_files_round_trip_with_paddle(pd, tmp_path, name, direction):
    """A .pdopt written by one library loads into the other's optimizer, which then continues
    with the same update as the writer."""
    import uuid

    kwargs = {"RMSProp": dict(learning_rate=0.01, centered=True)}.get(
        name, dict(learning_rate=0.01))
    src, dst = (paddle, pd) if direction == "hl_to_paddle" else (pd, paddle)
    init, grads = _data()
    values, writer = _run(src, name, kwargs, init, grads[:2])
    path = str(tmp_path / "opt.pdopt")
    src.save(writer.state_dict(), path)
    # a fresh process would have fresh accumulator names; Paddle numbers repeats within one
    tag = "n" + uuid.uuid4().hex[:8]
    ps = _params(dst, values)
    for i, p in enumerate(ps):
        p.name = f"{tag}_{i}"
    reader = getattr(dst.optimizer, name)(parameters=ps, **kwargs)
    state = {(f"{tag}_" + k[2:] if k.startswith("p_") else k): v
             for k, v in dst.load(path).items()}
    reader.set_state_dict(state)
    for lib, params, opt in ((src, writer._parameter_list, writer), (dst, ps, reader)):
        for p, g in zip(params, grads[2]):
            (p * lib.to_tensor(g)).sum().backward()
        opt.step()
    for a, b in zip(writer._parameter_list, ps):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=2e-6)
