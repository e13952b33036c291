"""Transforms: values against real Paddle, log-det-Jacobians against numerical Jacobians,
shapes, composition and errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl

D = paddle_hl.distribution
X = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]])
Y_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
Y_UNIT = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.9]])


def _make(lib, name, dtype):
    d = lib.distribution

    def t(a):
        return lib.to_tensor(np.asarray(a, dtype=dtype))

    return {
        "Affine": lambda: d.AffineTransform(t(1.0), t(-2.0)),
        "Exp": lambda: d.ExpTransform(),
        "Power": lambda: d.PowerTransform(t(3.0)),
        "Sigmoid": lambda: d.SigmoidTransform(),
        "Tanh": lambda: d.TanhTransform(),
        "StickBreaking": lambda: d.StickBreakingTransform(),
        "Chain": lambda: d.ChainTransform([d.AffineTransform(t(0.5), t(2.0)), d.ExpTransform()]),
        "Independent": lambda: d.IndependentTransform(d.ExpTransform(), 1),
        "Reshape": lambda: d.ReshapeTransform((3,), (3, 1)),
    }[name]()


# transform -> (x, y) test points
CASES = {
    "Affine": (X, X), "Exp": (X, np.abs(X) + 0.1), "Power": (np.abs(X) + 0.1, np.abs(X) + 0.1),
    "Sigmoid": (X, Y_UNIT), "Tanh": (X, Y_UNIT * 2 - 1), "StickBreaking": (X, Y_SIMPLEX),
    "Chain": (X, np.abs(X) + 0.1), "Independent": (X, np.abs(X) + 0.1),
    "Reshape": (X, X.reshape(2, 3, 1)),
}


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_parity(name, dtype, pd):
    ours, theirs = _make(paddle_hl, name, dtype), _make(pd, name, dtype)
    x, y = (a.astype(dtype) for a in CASES[name])
    # Paddle evaluates some float64 constants (log 2, log K) in float32, ~1e-8 off; exactness
    # in float64 is checked against numerical Jacobians below
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-6, atol=1e-8)
    for meth, arg in (("forward", x), ("inverse", y), ("forward_log_det_jacobian", x),
                      ("inverse_log_det_jacobian", y)):
        a = getattr(ours, meth)(paddle_hl.to_tensor(arg))
        b = getattr(theirs, meth)(pd.to_tensor(arg))
        assert str(a.dtype) == str(b.dtype), f"{name}.{meth} dtype"
        bb = b.numpy()
        if name == "Affine" and "log_det" in meth:
            # Paddle returns log|scale| unbroadcast; here it has x's shape
            bb = np.broadcast_to(bb, a.shape)
        np.testing.assert_allclose(a.numpy(), bb, err_msg=f"{name}.{meth}", **tol)
    for shp in [(2, 3), (4, 2, 3)]:
        if name == "Reshape":
            assert ours.forward_shape(shp) == tuple(theirs.forward_shape(shp))
            continue
        assert ours.forward_shape(shp) == tuple(theirs.forward_shape(shp))
        assert ours.inverse_shape(shp) == tuple(theirs.inverse_shape(shp))
    assert ours._domain.event_rank == theirs._domain.event_rank
    assert ours._codomain.event_rank == theirs._codomain.event_rank


def _num_jacobian(f, x, eps=1e-6):
    y0 = f(x)
    jac = np.zeros((y0.size, x.size))
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        jac[:, i] = ((f(x + d) - f(x - d)) / (2 * eps)).ravel()
    return jac


@pytest.mark.parametrize("name", ["Affine", "Exp", "Power", "Sigmoid", "Tanh", "Chain"])
def test_elementwise_log_det_matches_numerical(name):
    t = _make(paddle_hl, name, "float64")
    x = np.abs(X[0]) + 0.2 if name == "Power" else X[0]

    def f(a):
        return t.forward(paddle_hl.to_tensor(a)).numpy()

    jac = _num_jacobian(f, x)
    np.testing.assert_allclose(t.forward_log_det_jacobian(paddle_hl.to_tensor(x)).numpy(),
                               np.log(np.abs(np.diag(jac))), rtol=1e-6, atol=1e-7)
    y = t.forward(paddle_hl.to_tensor(x))
    np.testing.assert_allclose(t.inverse(y).numpy(), x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t.inverse_log_det_jacobian(y).numpy(),
                               -t.forward_log_det_jacobian(paddle_hl.to_tensor(x)).numpy(),
                               rtol=1e-10, atol=1e-12)


def test_stick_breaking_log_det_numerical_and_batched():
    t = D.StickBreakingTransform()
    x = np.array([0.5, -1.0, 2.0])

    def f(a):
        return t.forward(paddle_hl.to_tensor(a)).numpy()[:-1]  # K free coordinates

    jac = _num_jacobian(f, x)
    np.testing.assert_allclose(t.forward_log_det_jacobian(paddle_hl.to_tensor(x)).numpy(),
                               np.log(abs(np.linalg.det(jac))), rtol=1e-6)
    # more than two axes: [2, 2, 3] -> [2, 2, 4] on the simplex, log-det of shape [2, 2]
    xb = paddle_hl.to_tensor(np.random.default_rng(0).standard_normal((2, 2, 3)))
    y = t.forward(xb)
    assert y.shape == [2, 2, 4]
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    assert t.forward_log_det_jacobian(xb).shape == [2, 2]
    np.testing.assert_allclose(t.inverse(y).numpy(), xb.numpy(), rtol=1e-9, atol=1e-10)


def test_abs_softmax_not_injective():
    a = D.AbsTransform()
    y = paddle_hl.to_tensor([1.0, 2.0])
    neg, pos = a.inverse(y)
    np.testing.assert_allclose(neg.numpy(), [-1.0, -2.0])
    np.testing.assert_allclose(pos.numpy(), [1.0, 2.0])
    with pytest.raises(NotImplementedError, match="not injective"):
        a.forward_log_det_jacobian(y)
    s = D.SoftmaxTransform()
    x = paddle_hl.to_tensor(X)
    np.testing.assert_allclose(s.forward(x).numpy().sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(s.forward(s.inverse(s.forward(x))).numpy(), s.forward(x).numpy(),
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="not injective"):
        s.forward_log_det_jacobian(x)


def test_stack_transform():
    t = D.StackTransform([D.ExpTransform(),
                          D.AffineTransform(paddle_hl.to_tensor(1.0), paddle_hl.to_tensor(3.0))],
                         axis=1)
    x = np.array([[0.5, -1.0], [0.2, 0.3]], dtype="float32")
    y = t.forward(paddle_hl.to_tensor(x))
    np.testing.assert_allclose(y.numpy(), np.stack([np.exp(x[:, 0]), 1 + 3 * x[:, 1]], 1),
                               rtol=1e-6)
    np.testing.assert_allclose(t.inverse(y).numpy(), x, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(t.forward_log_det_jacobian(paddle_hl.to_tensor(x)).numpy(),
                               np.stack([x[:, 0], np.full(2, np.log(3.0))], 1), rtol=1e-6)
    with pytest.raises(ValueError, match="3 slices"):
        t.forward(paddle_hl.ones([2, 3]))


def test_call_and_composition():
    e, a = D.ExpTransform(), D.AffineTransform(paddle_hl.to_tensor(0.0),
                                               paddle_hl.to_tensor(2.0))
    c = e(a)  # exp after the affine map
    assert isinstance(c, D.ChainTransform)
    np.testing.assert_allclose(c.forward(paddle_hl.to_tensor([1.0])).numpy(), [np.exp(2.0)],
                               rtol=1e-6)
    td = e(D.Normal(0.0, 1.0))
    assert isinstance(td, D.TransformedDistribution)
    assert isinstance(e(paddle_hl.to_tensor([0.0])), paddle_hl.Tensor)
    # chain of different event ranks sums the elementwise part over the event axis
    ch = D.ChainTransform([D.ExpTransform(), D.StickBreakingTransform()])
    x = paddle_hl.to_tensor(X)
    ref = X.sum(-1) + D.StickBreakingTransform().forward_log_det_jacobian(x.exp()).numpy()
    np.testing.assert_allclose(ch.forward_log_det_jacobian(x).numpy(), ref, rtol=1e-6)


def test_transform_gradients_flow():
    x = paddle_hl.to_tensor(X, stop_gradient=False)
    t = D.ChainTransform([D.TanhTransform(), D.AffineTransform(paddle_hl.to_tensor(1.0),
                                                               paddle_hl.to_tensor(2.0))])
    (t.forward(x).sum() + t.forward_log_det_jacobian(x).sum()).backward()
    th = np.tanh(X)
    ref = 2 * (1 - th ** 2) + (-2 * th)  # d/dx [2 tanh x + log(1 - tanh^2 x)]
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-10)


def test_transform_errors():
    with pytest.raises(ValueError, match="elements"):
        D.ReshapeTransform((3,), (2, 1))
    with pytest.raises(ValueError, match="event shape"):
        D.ReshapeTransform((3,), (3, 1)).forward(paddle_hl.ones([2, 4]))
    with pytest.raises(ValueError, match="reinterpreted_batch_rank"):
        D.IndependentTransform(D.ExpTransform(), 0)
    with pytest.raises(TypeError, match="Transform"):
        D.ChainTransform([D.ExpTransform(), "exp"])
    with pytest.raises(ValueError, match="at least 1 axes"):
        D.StickBreakingTransform().forward(paddle_hl.to_tensor(1.0))
    with pytest.raises(TypeError, match="must be a Tensor"):
        D.ExpTransform().forward([1.0, 2.0])


@pytest.mark.parity
def test_abs_softmax_stack_forward_inverse_parity(pd):
    x = X.astype("float32")
    a, pa = D.AbsTransform(), pd.distribution.AbsTransform()
    np.testing.assert_allclose(a.forward(paddle_hl.to_tensor(x)).numpy(),
                               pa.forward(pd.to_tensor(x)).numpy())
    for o, t in zip(a.inverse(paddle_hl.to_tensor(x)), pa.inverse(pd.to_tensor(x))):
        np.testing.assert_allclose(o.numpy(), t.numpy())
    s, ps = D.SoftmaxTransform(), pd.distribution.SoftmaxTransform()
    np.testing.assert_allclose(s.forward(paddle_hl.to_tensor(x)).numpy(),
                               ps.forward(pd.to_tensor(x)).numpy(), rtol=1e-6)
    y = Y_SIMPLEX.astype("float32")
    np.testing.assert_allclose(s.inverse(paddle_hl.to_tensor(y)).numpy(),
                               ps.inverse(pd.to_tensor(y)).numpy(), rtol=1e-6)
    assert s._domain.event_rank == ps._domain.event_rank == 1
    st = D.StackTransform([D.ExpTransform(), D.AbsTransform()], 1)
    pst = pd.distribution.StackTransform([pd.distribution.ExpTransform(),
                                          pd.distribution.AbsTransform()], 1)
    xs = np.array([[0.5, -1.0], [0.2, 0.3]], dtype="float32")
    np.testing.assert_allclose(st.forward(paddle_hl.to_tensor(xs)).numpy(),
                               pst.forward(pd.to_tensor(xs)).numpy(), rtol=1e-6)
    assert st.forward_shape((2, 2)) == tuple(pst.forward_shape((2, 2)))


def test_transformed_distribution_event_axes():
    base = D.Normal(paddle_hl.zeros([2, 3]), paddle_hl.ones([2, 3]))
    ref = float(D.Normal(0.0, 1.0).log_prob(paddle_hl.to_tensor(0.5)))
    # a reshape of the event: base's last batch axis becomes part of the event
    td = D.TransformedDistribution(base, [D.ReshapeTransform((3,), (3, 1))])
    assert (td.batch_shape, td.event_shape) == ((2,), (3, 1))
    lp = td.log_prob(paddle_hl.full([2, 3, 1], 0.5))
    np.testing.assert_allclose(lp.numpy(), [3 * ref] * 2, rtol=1e-6)
    assert td.sample([4]).shape == [4, 2, 3, 1]
    # an elementwise transform made independent over one axis
    td = D.TransformedDistribution(base, [D.IndependentTransform(D.ExpTransform(), 1)])
    assert (td.batch_shape, td.event_shape) == ((2,), (3,))
    lp = td.log_prob(paddle_hl.full([2, 3], 0.5))
    np.testing.assert_allclose(lp.numpy(), [3 * (float(D.Normal(0.0, 1.0).log_prob(
        paddle_hl.to_tensor(np.log(0.5)))) - np.log(0.5))] * 2, rtol=1e-6)
    # the chain's event ranks: from 1 (stick breaking) through an elementwise map
    ch = D.ChainTransform([D.StickBreakingTransform(), D.ExpTransform()])
    assert (ch._domain.event_rank, ch._codomain.event_rank) == (1, 1)
    ch = D.ChainTransform([D.ExpTransform(), D.ReshapeTransform((2, 3), (6,))])
    assert (ch._domain.event_rank, ch._codomain.event_rank) == (2, 1)
