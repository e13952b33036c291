"""paddle_hl.autograd.PyLayer and PyLayerContext."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.autograd import PyLayer, PyLayerContext


def T(v, sg=False, dtype="float32"):  # noqa: N802
    return paddle.to_tensor(v, dtype=dtype, stop_gradient=sg)


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


def _tanh_layer(lib):
    class Tanh(lib.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            y = lib.tanh(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensor()
            return dy * (1 - lib.square(y))

    return Tanh


def test_api_names():
    import paddle_hl.autograd as ag

    for n in ("PyLayer", "PyLayerContext", "backward", "jacobian", "hessian",
              "saved_tensors_hooks", "no_grad", "enable_grad", "grad", "is_grad_enabled",
              "set_grad_enabled"):
        assert hasattr(ag, n), n
    for m in ("save_for_backward", "saved_tensor", "mark_not_inplace", "mark_non_differentiable",
              "set_materialize_grads"):
        assert callable(getattr(PyLayerContext, m))


@pytest.mark.parity
def test_tanh_example_matches_paddle(pd):
    data = np.random.default_rng(0).standard_normal((2, 3))
    out = []
    for lib in (paddle, pd):
        x = lib.to_tensor(data, stop_gradient=False)
        z = _tanh_layer(lib).apply(x)
        assert not z.stop_gradient
        z.mean().backward()
        out.append((z.numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


def test_kwargs_and_ctx_attributes():
    x = T([0.5, 1.0])
    z = CusTanh.apply(x, func1=paddle.tanh)
    z.mean().backward()
    t = np.tanh([0.5, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), 0.5 * (1 - t ** 2), rtol=1e-6)


def test_saved_tensor_is_tuple_or_none():
    seen = {}

    class P(PyLayer):
        @staticmethod
        def forward(ctx, x):
            seen["none"] = ctx.saved_tensor()
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["saved"] = ctx.saved_tensor()
            return g * 2

    P.apply(T([1.0])).sum().backward()
    assert seen["none"] is None
    assert isinstance(seen["saved"], tuple) and len(seen["saved"]) == 1


def test_grad_modes_inside_forward_and_backward():
    modes = {}

    class P(PyLayer):
        @staticmethod
        def forward(ctx, x):
            modes["fwd"] = paddle.is_grad_enabled()
            y = x * 2
            modes["inner_sg"] = y.stop_gradient
            return y

        @staticmethod
        def backward(ctx, g):
            modes["bwd"] = paddle.is_grad_enabled()
            return g * 2

    x = T([1.0, 2.0])
    y = P.apply(x)
    assert not y.stop_gradient
    y.sum().backward()
    assert modes == {"fwd": False, "inner_sg": True, "bwd": False}
    with paddle.no_grad():
        assert P.apply(x).stop_gradient
    assert P.apply(T([1.0], sg=True)).stop_gradient


def test_create_graph_through_pylayer():
    class Cube(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensor()
            assert paddle.is_grad_enabled()
            return g * 3 * x * x

    x = T([1.0, 2.0])
    y = Cube.apply(x)
    (g,) = paddle.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    assert not g.stop_gradient
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_list_inputs_are_tracked():
    """Documented behaviour (Paddle 2.6.2 itself mixes up these gradients)."""
    class L(PyLayer):
        @staticmethod
        def forward(ctx, xs, w):
            ctx.save_for_backward(*xs, w)
            return xs[0] * w + xs[1]

        @staticmethod
        def backward(ctx, g):
            a, b, w = ctx.saved_tensor()
            return [g * w, g], g * a

    a, b, w = T([1.0, 2.0]), T([3.0, 4.0]), T([5.0, 6.0])
    L.apply([a, b], w).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [5.0, 6.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_list_inputs_flat_gradients_and_non_tensor_items():
    class L(PyLayer):
        @staticmethod
        def forward(ctx, xs, scale):
            return xs[0] * scale + xs[2]

        @staticmethod
        def backward(ctx, g):
            return g * 2, g * 3  # one per Tensor input, flat

    a, c = T([1.0]), T([2.0])
    L.apply([a, "not a tensor", c], 2.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0])
    np.testing.assert_allclose(c.grad.numpy(), [3.0])


def test_wrong_number_of_gradients():
    class L(PyLayer):
        @staticmethod
        def forward(ctx, xs, w):
            return xs[0] * w + xs[1]

        @staticmethod
        def backward(ctx, g):
            return g, g, g, g

    with pytest.raises(ValueError, match="should be 2"):
        L.apply([T([1.0]), T([1.0])], T([1.0])).sum().backward()


def test_inputs_of_different_dtypes():
    class Two(PyLayer):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2, b * 3

        @staticmethod
        def backward(ctx, ga, gb):
            assert ga.dtype == paddle.float32 and gb.dtype == paddle.float64
            return ga * 2, gb * 3

    a, b = T([1.0, 2.0]), T([1.0, 2.0], dtype="float64")
    ra, rb = Two.apply(a, b)
    (ra.sum() + rb.sum().astype("float32")).backward()
    assert a.grad.dtype == paddle.float32 and b.grad.dtype == paddle.float64
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 3.0])


def test_none_gradient_and_stop_gradient_input():
    class N(PyLayer):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, None

    a, b = T([1.0, 2.0]), T([3.0, 4.0])
    N.apply(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 1.0])
    assert b.grad is None

    class N2(PyLayer):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(ValueError, match="should return None at position 1"):
        N2.apply(T([1.0]), T([2.0], sg=True)).sum().backward()


def test_bad_gradient_type_and_shape():
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return 3

    with pytest.raises(TypeError, match="Tensor"):
        Bad.apply(T([1.0])).sum().backward()

    class Shape(PyLayer):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    with pytest.raises(ValueError, match="shape"):
        Shape.apply(T([1.0, 2.0])).sum().backward()


def test_multiple_outputs_non_differentiable_and_non_tensor():
    got = {}

    class M(PyLayer):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            idx = paddle.to_tensor([0, 1])
            ctx.mark_non_differentiable(b)
            return a, b, idx, 7

        @staticmethod
        def backward(ctx, ga, gb, gi):
            got["gb"], got["gi"] = gb.numpy(), gi
            return ga * 2

    x = T([1.0, 2.0])
    res = M.apply(x)
    assert isinstance(res, tuple) and res[3] == 7
    assert [r.stop_gradient for r in res[:3]] == [False, True, False]
    (res[0] + res[1]).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(got["gb"], [0.0, 0.0])
    assert got["gi"].dtype == paddle.int64
    np.testing.assert_allclose(got["gi"].numpy(), [0, 0])


def test_set_materialize_grads_false_passes_none():
    got = {}

    class M2(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got["ga"] = ga
            return ga * 2 if ga is not None else gb * 3

    x = T([1.0, 2.0])
    r = M2.apply(x)
    r[1].sum().backward()
    assert got["ga"] is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


class _Id(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy * 3


class _IdNotInplace(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_not_inplace(x)
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy * 3


class _ScaleInplace(PyLayer):
    @staticmethod
    def forward(ctx, x):
        x.scale_(2.0)
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy * 2


def test_forward_returning_leaf_input_raises():
    with pytest.raises(ValueError, match="inplace"):
        _Id.apply(T([1.0, 2.0]))


def test_forward_returning_non_leaf_input_rebinds_it(pd):
    for lib, cls in ((paddle, _Id), (pd, None)):
        if cls is None:
            class PdId(pd.autograd.PyLayer):
                @staticmethod
                def forward(ctx, x):
                    return x

                @staticmethod
                def backward(ctx, dy):
                    return dy * 3
            cls = PdId
        x = lib.to_tensor([1.0, 2.0], stop_gradient=False)
        d = x ** 2
        z = cls.apply(d)
        assert z is d
        (z + d).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [12.0, 24.0])


def test_mark_not_inplace_gives_a_new_tensor():
    x = T([1.0, 2.0])
    d = x ** 2
    z = _IdNotInplace.apply(d)
    assert z is not d
    np.testing.assert_allclose(z.numpy(), d.numpy())
    (z + d).sum().backward()
    # through the layer: 3 * 2x; directly: 2x
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 16.0])
    x = T([1.0, 2.0])
    z = _IdNotInplace.apply(x)  # a leaf is fine once marked
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_forward_changing_input_inplace():
    if not hasattr(paddle.Tensor, "scale_"):
        pytest.skip("Tensor.scale_ not available yet")
    x = T([1.0, 2.0])
    d = x ** 2
    z = _ScaleInplace.apply(d)
    assert z is d
    np.testing.assert_allclose(d.numpy(), [2.0, 8.0])
    assert d.inplace_version == 2
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])

    x = T([1.0, 2.0])
    d = x * 1
    e = d * d  # saves d
    _ScaleInplace.apply(d)
    with pytest.raises(RuntimeError, match="inplace"):
        e.sum().backward()


def test_subclass_must_define_forward_and_backward():
    class Incomplete(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(TypeError, match="forward and backward"):
        Incomplete.apply(T([1.0]))


def test_saved_tensors_hooks_with_pylayer():
    log = []

    def pack(t):
        log.append("pack")
        return t.numpy()

    def unpack(a):
        log.append("unpack")
        return paddle.to_tensor(a)

    class P(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, x * 2)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensor()
            return g * y

    a = T([1.0, 2.0])
    with paddle.autograd.saved_tensors_hooks(pack, unpack):
        r = P.apply(a)
    assert log == ["pack", "pack"]
    r.sum().backward()
    assert log == ["pack", "pack", "unpack", "unpack"]
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0])


def test_pylayer_in_a_bigger_graph_with_retain_graph():
    x = T([1.0, 2.0])
    y = _tanh_layer(paddle).apply(x * 2) * 3
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    t = np.tanh([2.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * 2 * (1 - t ** 2), rtol=1e-5, atol=1e-5)
