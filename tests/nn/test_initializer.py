"""Parameter initializers (paddle_hl/nn/initializer)."""

import math

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.nn import initializer as I  # noqa: N812  (Paddle's customary alias)


def make(shape, init, dtype="float32"):
    return paddle.create_parameter(shape, dtype, default_initializer=init)


@pytest.fixture(autouse=True)
def _no_global_initializer():
    yield
    I.set_global_initializer(None)


# ----------------------------------------------------------------------------------- gains
@pytest.mark.parametrize("name,expected", [
    ("linear", 1), ("conv1d", 1), ("conv2d", 1), ("conv3d", 1), ("conv1d_transpose", 1),
    ("conv2d_transpose", 1), ("conv3d_transpose", 1), ("sigmoid", 1), ("tanh", 5 / 3),
    ("relu", math.sqrt(2)), ("leaky_relu", math.sqrt(2 / (1 + 0.01 ** 2))), ("selu", 0.75)])
def test_calculate_gain(name, expected):
    assert I.calculate_gain(name) == pytest.approx(expected, rel=1e-12)


def test_calculate_gain_param_and_errors():
    assert I.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert I.calculate_gain("leaky_relu", 0) == pytest.approx(math.sqrt(2))
    assert I.calculate_gain("tanh", 3) == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="foo"):
        I.calculate_gain("foo")
    with pytest.raises(ValueError, match="foo"):
        I.KaimingNormal(nonlinearity="foo")


@pytest.mark.parity
def test_calculate_gain_parity(pd):
    for name in ("linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
        for param in (None, 0.3):
            assert I.calculate_gain(name, param) == pytest.approx(
                pd.nn.initializer.calculate_gain(name, param), rel=1e-12)


# --------------------------------------------------------------------------- distributions
def test_kaiming_scales_with_gain():
    # Fan_in of a conv weight [out, in, k, k] is in * k * k
    w = make([256, 64, 3, 3], I.KaimingNormal()).numpy()
    np.testing.assert_allclose(w.std(), math.sqrt(2) / math.sqrt(64 * 9), rtol=0.02)
    w = make([256, 64, 3, 3], I.KaimingNormal(nonlinearity="leaky_relu",
                                              negative_slope=0.5)).numpy()
    np.testing.assert_allclose(w.std(), math.sqrt(2 / 1.25) / math.sqrt(64 * 9), rtol=0.02)
    # Linear [in, out]: fan_in is shape[0]
    w = make([500, 400], I.KaimingUniform(nonlinearity="tanh")).numpy()
    limit = 5 / 3 * math.sqrt(3 / 500)
    assert np.abs(w).max() <= limit
    assert np.abs(w).max() > 0.99 * limit
    w = make([300, 400], I.KaimingUniform(fan_in=7)).numpy()
    assert np.abs(w).max() == pytest.approx(math.sqrt(2) * math.sqrt(3 / 7), rel=0.01)


def test_xavier():
    w = make([300, 400, 5], I.XavierNormal()).numpy()
    np.testing.assert_allclose(w.std(), math.sqrt(2 / (400 * 5 + 300 * 5)), rtol=0.02)
    w = make([300, 500], I.XavierUniform()).numpy()
    limit = math.sqrt(6 / 800)
    assert limit * 0.99 < np.abs(w).max() <= limit
    w = make([3000, 300], I.XavierUniform(fan_in=10, fan_out=20)).numpy()
    assert np.abs(w).max() == pytest.approx(math.sqrt(6 / 30), rel=0.01)
    assert make([], I.XavierUniform()).shape == []
    w = make([1000], I.XavierUniform()).numpy()  # a vector: fan_in = fan_out = its length
    assert np.abs(w).max() <= math.sqrt(6 / 2000)


def test_normal_uniform_truncated():
    w = make([400, 500], I.Normal(1.0, 0.5)).numpy()
    np.testing.assert_allclose([w.mean(), w.std()], [1.0, 0.5], atol=0.01)
    w = make([400, 500], I.Uniform(-2.0, 3.0)).numpy()
    assert w.min() >= -2.0 and w.max() < 3.0
    np.testing.assert_allclose(w.mean(), 0.5, atol=0.02)
    w = make([400, 500], I.TruncatedNormal(1.0, 2.0), "float64").numpy()
    assert w.dtype == np.float64
    assert w.min() >= -3.0 and w.max() <= 5.0
    assert w.min() < -2.9 and w.max() > 4.9
    np.testing.assert_allclose(w.mean(), 1.0, atol=0.02)
    # the std of N(0, 1) truncated to [-2, 2] is 0.8796
    np.testing.assert_allclose(w.std(), 2.0 * 0.8796, rtol=0.01)
    with pytest.raises(ValueError, match="Uniform"):
        I.Uniform(2.0, 1.0)
    with pytest.raises(TypeError, match="Normal"):
        I.Normal("a")


@pytest.mark.parity
def test_statistics_parity(pd):
    shape = [128, 64, 3, 3]
    for name, args in (("KaimingNormal", {}), ("XavierNormal", {}),
                       ("KaimingUniform", {"nonlinearity": "leaky_relu", "negative_slope": 0.2}),
                       ("XavierUniform", {}), ("TruncatedNormal", {"std": 0.5}),
                       ("Normal", {"mean": 0.5, "std": 0.1}), ("Uniform", {"low": -0.3})):
        ours = make(shape, getattr(I, name)(**args)).numpy()
        theirs = pd.create_parameter(shape, "float32",
                                     default_initializer=getattr(pd.nn.initializer,
                                                                 name)(**args)).numpy()
        np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.02, err_msg=name)
        np.testing.assert_allclose(ours.mean(), theirs.mean(), atol=0.01, err_msg=name)
        if "Uniform" in name or "Truncated" in name:  # bounded: the extremes sit at the bound
            np.testing.assert_allclose(np.abs(ours).max(), np.abs(theirs).max(), rtol=0.1,
                                       err_msg=name)


# --------------------------------------------------------------------------- deterministic
def test_constant_and_assign():
    np.testing.assert_array_equal(make([2, 3], I.Constant(1.5)).numpy(), np.full([2, 3], 1.5))
    np.testing.assert_array_equal(make([3], I.Constant(2), "int64").numpy(), [2, 2, 2])
    val = np.arange(6.0).reshape(2, 3)
    for v in (val, val.tolist(), paddle.to_tensor(val)):
        np.testing.assert_array_equal(make([2, 3], I.Assign(v)).numpy(), val)
    p = make([2, 2], I.Assign(np.array([[1, 2], [3, 4.5]])), "float16")
    assert p.dtype == paddle.float16
    np.testing.assert_array_equal(p.numpy(), [[1, 2], [3, 4.5]])
    with pytest.raises(ValueError, match=r"Assign.*\[2\].*\[4, 5\]"):
        make([4, 5], I.Assign([1, 2]))
    with pytest.raises(TypeError, match="Assign"):
        I.Assign("abc")


@pytest.mark.parity
def test_deterministic_parity(pd):
    val = np.arange(12.0).reshape(3, 4)
    for shape, name, args in (([3, 4], "Constant", (0.25,)), ([3, 4], "Assign", (val,)),
                              ([6, 2, 3], "Dirac", (3,)), ([4, 3, 3, 3], "Dirac", ()),
                              ([2, 4, 3], "Dirac", ()), ([8, 2, 3, 3, 3], "Dirac", (2,))):
        ours = make(shape, getattr(I, name)(*args)).numpy()
        theirs = pd.create_parameter(
            shape, "float32", default_initializer=getattr(pd.nn.initializer, name)(*args))
        np.testing.assert_array_equal(ours, theirs.numpy(), err_msg=f"{name}{args}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("init", [I.Normal(1.0, 0.1), I.Constant(0.5), I.Uniform(),
                                  I.TruncatedNormal(), I.XavierNormal(), I.KaimingUniform(),
                                  I.Orthogonal(), I.Bilinear()])
def test_dtype_preserved(init, dtype, device):
    # Fp16 parameters get fp16 values directly
    p = make([4, 4, 3, 3], init, dtype)
    assert p.dtype == getattr(paddle, dtype)
    assert p.place.is_gpu_place() == (device == "gpu")
    assert np.isfinite(p.astype("float32").numpy()).all()


def test_orthogonal():
    # W^T W = gain^2 I for tall matrices, W W^T for wide ones
    w = make([400, 200], I.Orthogonal(2.0)).numpy().astype(np.float64)
    np.testing.assert_allclose(w.T @ w, 4 * np.eye(200), atol=1e-4)
    w = make([200, 400], I.Orthogonal(0.5)).numpy().astype(np.float64)
    np.testing.assert_allclose(w @ w.T, 0.25 * np.eye(200), atol=1e-5)
    w = make([16, 4, 3, 3], I.Orthogonal()).numpy().reshape(16, -1).astype(np.float64)
    np.testing.assert_allclose(w @ w.T, np.eye(16), atol=1e-5)
    with pytest.raises(ValueError, match="Orthogonal.*2 or more"):
        make([4], I.Orthogonal())


def _conv_nd(x, w, groups):
    """Grouped cross-correlation with 'same' padding (odd kernels), in NumPy."""
    k = w.shape[2:]
    pad = [(0, 0), (0, 0)] + [(s // 2, s // 2) for s in k]
    xp = np.pad(x, pad)
    win = np.lib.stride_tricks.sliding_window_view(xp, k, axis=tuple(range(2, x.ndim)))
    cin = x.shape[1] // groups
    cout = w.shape[0] // groups
    outs = []
    for g in range(groups):
        xs = win[:, g * cin:(g + 1) * cin]
        ws = w[g * cout:(g + 1) * cout]
        letters = "defg"[:len(k)]
        spatial = "xyz"[:len(k)]
        eq = f"nc{spatial}{letters},oc{letters}->no{spatial}"
        outs.append(np.einsum(eq, xs, ws))
    return np.concatenate(outs, axis=1)


@pytest.mark.parametrize("shape,groups", [([4, 4, 3], 1), ([6, 2, 3, 3], 3),
                                          ([4, 2, 3, 3, 3], 2), ([8, 8, 5, 5], 1)])
def test_dirac_conv_is_identity(shape, groups):
    # A conv with Dirac weights copies its input (per group)
    w = make(shape, I.Dirac(groups)).numpy().astype(np.float64)
    cin = shape[1] * groups
    x = np.random.default_rng(0).standard_normal([2, cin] + [5] * (len(shape) - 2))
    out = _conv_nd(x, w, groups)
    np.testing.assert_allclose(out, x, atol=1e-12)
    conv = getattr(paddle.nn.functional, f"conv{len(shape) - 2}d", None)
    if conv is not None:
        got = conv(paddle.to_tensor(x), paddle.to_tensor(w), padding=shape[-1] // 2,
                   groups=groups)
        np.testing.assert_allclose(got.numpy(), x, atol=1e-12)


def test_dirac_errors():
    with pytest.raises(ValueError, match="3, 4 or 5"):
        make([4, 3], I.Dirac())
    with pytest.raises(ValueError, match="divisible by groups"):
        make([5, 3, 3], I.Dirac(2))


def test_bilinear_kernel():
    w = make([2, 3, 4, 4], I.Bilinear()).numpy()
    k1 = np.array([0.25, 0.75, 0.75, 0.25])
    for o in range(2):
        for c in range(3):
            np.testing.assert_allclose(w[o, c], np.outer(k1, k1))
    w = make([1, 1, 3, 3], I.Bilinear()).numpy()
    np.testing.assert_allclose(w[0, 0], np.outer([0.25, 0.75, 0.75], [0.25, 0.75, 0.75]))
    with pytest.raises(ValueError, match="4-D"):
        make([3, 3], I.Bilinear())
    with pytest.raises(ValueError, match=r"shape\[2\] must equal shape\[3\]"):
        make([2, 1, 3, 4], I.Bilinear())


def test_initializer_call_fills_in_place():
    p = paddle.create_parameter([2, 3], "float64")
    ver = p._ver.v
    data = p._data
    assert I.Constant(4.0)(p) is None
    assert p._data is data and p._ver.v > ver
    np.testing.assert_array_equal(p.numpy(), np.full([2, 3], 4.0))
    t = paddle.zeros([3])
    I.Constant(2.0)(t)
    np.testing.assert_array_equal(t.numpy(), [2, 2, 2])
    with pytest.raises(TypeError, match="Constant"):
        I.Constant(1.0)(np.zeros(3))


# --------------------------------------------------------------------------- seeds / global
def test_seed_reproducible(device):
    paddle.seed(123)
    a = [p.numpy() for p in paddle.nn.Linear(5, 7).parameters()]
    a.append(make([3, 3], I.Orthogonal()).numpy())
    a.append(make([3, 3], I.TruncatedNormal()).numpy())
    paddle.seed(123)
    b = [p.numpy() for p in paddle.nn.Linear(5, 7).parameters()]
    b.append(make([3, 3], I.Orthogonal()).numpy())
    b.append(make([3, 3], I.TruncatedNormal()).numpy())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    paddle.seed(124)
    c = paddle.nn.Linear(5, 7).weight.numpy()
    assert not np.array_equal(a[0], c)


def test_set_global_initializer():
    # Applies to every parameter created afterwards; ParamAttr initializers still win
    I.set_global_initializer(I.Constant(2.0), I.Constant(3.0))
    fc = paddle.nn.Linear(2, 3)
    np.testing.assert_array_equal(fc.weight.numpy(), np.full([2, 3], 2.0))
    np.testing.assert_array_equal(fc.bias.numpy(), np.full([3], 3.0))
    emb = paddle.nn.Embedding(3, 2)
    np.testing.assert_array_equal(emb.weight.numpy(), np.full([3, 2], 2.0))
    layer = paddle.nn.Layer()
    w = layer.create_parameter([2], default_initializer=I.Constant(9.0))
    np.testing.assert_array_equal(w.numpy(), [2.0, 2.0])  # overrides a layer default
    fc = paddle.nn.Linear(2, 3, weight_attr=paddle.ParamAttr(initializer=I.Constant(5.0)))
    np.testing.assert_array_equal(fc.weight.numpy(), np.full([2, 3], 5.0))
    I.set_global_initializer(I.Constant(2.0))
    np.testing.assert_array_equal(paddle.nn.Linear(2, 3).bias.numpy(), np.zeros(3))
    I.set_global_initializer(None)
    assert not np.all(paddle.nn.Linear(2, 3).weight.numpy() == 2.0)
    with pytest.raises(TypeError, match="set_global_initializer"):
        I.set_global_initializer("xavier")


@pytest.mark.parity
def test_set_global_initializer_parity(pd):
    for lib in (paddle, pd):
        lib.nn.initializer.set_global_initializer(lib.nn.initializer.Constant(2.0),
                                                  lib.nn.initializer.Constant(3.0))
    try:
        ours = paddle.nn.Bilinear(2, 3, 4).state_dict()
        theirs = pd.nn.Bilinear(2, 3, 4).state_dict()
        for k in theirs:
            np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    finally:
        pd.nn.initializer.set_global_initializer(None)


def test_default_initializers():
    layer = paddle.nn.Layer()
    b = layer.create_parameter([4], is_bias=True)
    np.testing.assert_array_equal(b.numpy(), np.zeros(4))
    with pytest.raises(TypeError, match="default initializer"):
        paddle.create_parameter([2], "int32")
    p = paddle.create_parameter([2], "int64", default_initializer=I.Constant(3))
    np.testing.assert_array_equal(p.numpy(), [3, 3])
