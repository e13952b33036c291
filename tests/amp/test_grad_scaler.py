"""GradScaler: the loss-scale sequence with injected inf/NaN gradients (against Paddle
2.6.2's scaler and its documented algorithm), skipped steps, unscale_, state, accessors."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import paddle_hl as paddle

# injected inf/NaN losses make NumPy warn on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def _float16_amp():
    # a dynamic scaler disables itself unless the last auto_cast used float16 (as in Paddle)
    with paddle.amp.auto_cast():
        pass


def _net(seed=0):
    paddle.seed(seed)
    lin = paddle.nn.Linear(2, 2)
    return lin, paddle.optimizer.SGD(0.1, parameters=lin.parameters())


def _loss(lin, bad):
    with paddle.amp.auto_cast():
        out = lin(paddle.ones([1, 2])).sum()
    # small enough that the scaled float16 gradients never overflow on their own
    return out * (float("inf") if bad == 1 else float("nan") if bad == 2 else 1e-3)


def _reference(pattern, init, incr, decr, n_incr, n_decr):
    """Paddle's documented rule, step by step."""
    scale, good, bad, seq = init, 0, 0, []
    for b in pattern:
        if b:
            good, bad = 0, bad + 1
            if bad == n_decr:
                scale, bad = scale * decr, 0
        else:
            bad, good = 0, good + 1
            if good == n_incr:
                scale, good = scale * incr, 0
        seq.append(scale)
    return seq


def _run(pattern, api="step", **kw):
    lin, opt = _net()
    s = paddle.amp.GradScaler(**kw)
    seq = []
    for b in pattern:
        loss = _loss(lin, b)
        s.scale(loss).backward()
        if api == "step":
            s.step(opt)
            s.update()
        else:
            s.minimize(opt, loss)
        opt.clear_grad()
        seq.append(float(s.state_dict()["scale"][0]))
    return seq, s


PATTERN = [0, 0, 0, 1, 1, 0, 1, 0, 2, 1, 1, 1, 0, 0, 0, 0, 0]
CONFIGS = [
    dict(init_loss_scaling=1024.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=2),
    dict(init_loss_scaling=2.0 ** 15, incr_ratio=4.0, decr_ratio=0.25, incr_every_n_steps=3,
         decr_every_n_nan_or_inf=1),
    dict(),
]


@pytest.mark.parametrize("api", ["step", "minimize"])
@pytest.mark.parametrize("kw", CONFIGS)
def test_scale_sequence_matches_documented_rule(kw, api, capsys):
    seq, _ = _run(PATTERN, api, **kw)
    full = dict(init_loss_scaling=65536.0, incr_ratio=2.0, decr_ratio=0.5,
                incr_every_n_steps=2000, decr_every_n_nan_or_inf=1)
    full.update(kw)
    ref = _reference(PATTERN, full["init_loss_scaling"], full["incr_ratio"], full["decr_ratio"],
                     full["incr_every_n_steps"], full["decr_every_n_nan_or_inf"])
    np.testing.assert_allclose(seq, ref)
    if any(PATTERN):
        assert "Found inf or nan, current scale is:" in capsys.readouterr().out


def _paddle_sequence(pd, pattern, kw):
    """Paddle 2.6.2's own GradScaler arithmetic. Its CPU build disables the scaler, so the
    constructor is shown a GPU place; every op it then runs exists on the CPU."""
    import paddle.amp.grad_scaler as gs

    class _Place:
        def is_gpu_place(self):
            return True

        def is_xpu_place(self):
            return False

        def is_custom_place(self):
            return False

    class _Tracer:
        _expected_place = _Place()

    real, real_float = gs._dygraph_tracer, pd.Tensor.__float__
    gs._dygraph_tracer = lambda: _Tracer()
    # its log line calls float() on a shape-[1] tensor, which NumPy 2 refuses
    pd.Tensor.__float__ = lambda t: float(t.numpy().reshape(-1)[0])
    state = sys.modules["paddle.amp.auto_cast"].amp_global_state()
    prev_dtype = state.amp_dtype
    state.amp_dtype = "float16"
    try:
        s = pd.amp.GradScaler(**kw)
        gs._dygraph_tracer = real
        lin = pd.nn.Linear(2, 2)
        opt = pd.optimizer.SGD(0.1, parameters=lin.parameters())
        seq = []
        for b in pattern:
            loss = lin(pd.ones([1, 2])).sum() * (
                float("inf") if b == 1 else float("nan") if b == 2 else 1.0)
            s.scale(loss).backward()
            s.step(opt)
            s.update()
            opt.clear_grad()
            seq.append(float(s.state_dict()["scale"][0]))
        return seq, s.state_dict()
    finally:
        gs._dygraph_tracer = real
        pd.Tensor.__float__ = real_float
        state.amp_dtype = prev_dtype


@pytest.mark.parity
@pytest.mark.parametrize("kw", CONFIGS[:2])
def test_scale_sequence_matches_paddle(pd, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, their_state = _paddle_sequence(pd, PATTERN, kw)
    ours, s = _run(PATTERN, **kw)
    np.testing.assert_allclose(ours, theirs)
    mine = s.state_dict()
    assert set(mine) == set(their_state)
    for k, v in their_state.items():
        np.testing.assert_allclose(np.asarray(mine[k]), np.asarray(v))
    assert mine["scale"].dtype == np.float32 and mine["scale"].shape == (1,)


def test_bad_step_is_skipped_and_good_step_matches_fp32():
    lin, opt = _net()
    w0 = lin.weight.numpy().copy()
    s = paddle.amp.GradScaler(init_loss_scaling=256.0)
    s.scale(_loss(lin, 1)).backward()
    s.step(opt)
    s.update()
    np.testing.assert_array_equal(lin.weight.numpy(), w0)
    opt.clear_grad()
    s.scale(_loss(lin, 0)).backward()
    s.step(opt)
    s.update()
    ref, ref_opt = _net()
    with paddle.amp.auto_cast():
        out = ref(paddle.ones([1, 2])).sum() * 1e-3
    out.backward()
    ref_opt.step()
    np.testing.assert_allclose(lin.weight.numpy(), ref.weight.numpy(), rtol=1e-6)


def test_unscale_before_clipping_unscales_once():
    lin, opt = _net()
    s = paddle.amp.GradScaler(init_loss_scaling=64.0)
    s.scale(_loss(lin, 0)).backward()
    scaled = lin.bias.grad.numpy().copy()
    s.unscale_(opt)
    np.testing.assert_allclose(lin.bias.grad.numpy(), scaled / 64.0)
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(opt)
    s.step(opt)  # does not unscale again
    np.testing.assert_allclose(lin.bias.grad.numpy(), scaled / 64.0)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        s.unscale_(opt)
    s.update()
    opt.clear_grad()
    s.scale(_loss(lin, 0)).backward()
    s.unscale_(opt)  # allowed again after update()


def test_minimize_does_not_run_backward_again():
    lin, opt = _net()
    s = paddle.amp.GradScaler(init_loss_scaling=8.0)
    loss = _loss(lin, 0)
    scaled = s.scale(loss)
    scaled.backward()
    ops, pairs = s.minimize(opt, scaled)
    assert ops == [] and len(pairs) == 2
    assert {id(p) for p, _ in pairs} == {id(lin.weight), id(lin.bias)}


def test_scale_shape_and_dtype():
    s = paddle.amp.GradScaler(init_loss_scaling=4.0)
    loss = paddle.to_tensor(3.0)
    out = s.scale(loss)
    assert out.shape == [1] and out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [12.0])
    assert s.scale(paddle.to_tensor([1.0, 2.0]).astype("float16")).dtype == paddle.float32
    with pytest.raises(TypeError, match="GradScaler.scale"):
        s.scale(3.0)


def test_state_dict_round_trip_and_errors():
    _, s = _run([0, 1, 0], init_loss_scaling=512.0, incr_every_n_steps=5)
    sd = s.state_dict()
    t = paddle.amp.GradScaler()
    t.load_state_dict(sd)
    assert t.state_dict().keys() == sd.keys()
    np.testing.assert_array_equal(t.state_dict()["scale"], sd["scale"])
    assert t.get_init_loss_scaling() == float(sd["scale"][0])
    assert t.get_incr_every_n_steps() == 5 and t.state_dict()["incr_count"] == 1
    with pytest.raises(RuntimeError, match="empty"):
        t.load_state_dict({})
    off = paddle.amp.GradScaler(enable=False)
    assert off.state_dict() == {}
    off.load_state_dict(sd)  # ignored, as in Paddle
    assert off.state_dict() == {}


def test_state_dict_saves_and_loads(tmp_path):
    _, s = _run([0, 1], init_loss_scaling=128.0)
    path = str(tmp_path / "x.pdscaler")
    paddle.save(s.state_dict(), path)
    t = paddle.amp.GradScaler()
    t.load_state_dict(paddle.load(path))
    np.testing.assert_array_equal(t.state_dict()["scale"], s.state_dict()["scale"])


def test_accessors():
    s = paddle.amp.GradScaler(init_loss_scaling=8.0)
    assert s.is_enable() and s.is_use_dynamic_loss_scaling()
    assert (s.get_init_loss_scaling(), s.get_incr_ratio(), s.get_decr_ratio()) == (8.0, 2.0, 0.5)
    assert (s.get_incr_every_n_steps(), s.get_decr_every_n_nan_or_inf()) == (2000, 1)
    s.set_init_loss_scaling(32.0)
    s.set_incr_ratio(3.0)
    s.set_decr_ratio(0.25)
    s.set_incr_every_n_steps(7)
    s.set_decr_every_n_nan_or_inf(3)
    assert (s.get_init_loss_scaling(), s.get_incr_ratio(), s.get_decr_ratio()) == \
        (32.0, 3.0, 0.25)
    assert (s.get_incr_every_n_steps(), s.get_decr_every_n_nan_or_inf()) == (7, 3)
    np.testing.assert_array_equal(s.state_dict()["scale"], np.array([32.0], np.float32))
    with pytest.raises(AssertionError):
        s.set_incr_ratio(0.5)
    with pytest.raises(AssertionError):
        s.set_decr_ratio(2.0)
    with pytest.raises(AssertionError):
        paddle.amp.GradScaler(incr_ratio=1.0)
    with pytest.raises(AssertionError):
        paddle.amp.GradScaler(decr_ratio=1.0)


def test_static_scaling_keeps_the_scale():
    seq, s = _run([1, 0, 0, 1], init_loss_scaling=4.0, use_dynamic_loss_scaling=False,
                  incr_every_n_steps=1)
    assert seq == [4.0] * 4
    assert not s.is_use_dynamic_loss_scaling()


def test_disabled_scaler_passes_through():
    lin, opt = _net()
    s = paddle.amp.GradScaler(enable=False)
    loss = _loss(lin, 0)
    assert s.scale(loss) is loss
    w0 = lin.weight.numpy().copy()
    loss.backward()
    s.step(opt)
    s.update()
    assert not np.array_equal(lin.weight.numpy(), w0)


def test_bfloat16_disables_dynamic_scaling():
    with paddle.amp.auto_cast(dtype="bfloat16"):
        loss = paddle.ones([1]).sum()
    s = paddle.amp.GradScaler()
    with pytest.warns(UserWarning, match="not recommended"):
        out = s.scale(loss)
    assert out is loss and not s.is_enable()


def test_gradients_of_a_float16_model():
    paddle.seed(1)
    net = paddle.nn.Linear(4, 3)
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    net, opt = paddle.amp.decorate(net, opt, level="O2")
    s = paddle.amp.GradScaler(init_loss_scaling=2.0 ** 20)
    with paddle.amp.auto_cast(level="O2"):
        loss = net(paddle.rand([8, 4]).astype("float16")).astype("float32").mean() * 1e3
    s.scale(loss).backward()  # float16 gradients overflow at this scale
    assert net.weight.grad.dtype == paddle.float16
    s.step(opt)
    s.update()
    assert s.state_dict()["scale"][0] == 2.0 ** 19


def test_history_records_skipped_steps():
    _, s = _run([0, 1, 0, 2], init_loss_scaling=16.0)
    assert [h[2] for h in s._history] == [False, True, False, True]
    assert [h[1] for h in s._history] == [16.0, 8.0, 8.0, 4.0]
    assert "skipped=2" in repr(s)
