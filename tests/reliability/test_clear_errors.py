"""Clear errors instead of silent wrong answers: mixed float/int inputs to the functions Paddle
refuses them in, non-finite creation bounds, Dropout's p, BCE labels, loss shapes, collate
shapes (also from a worker process), Optimizer(parameters=None)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F


def _t(dtype, shape=(3, 3)):
    return paddle.to_tensor(np.ones(shape).astype(dtype))


# (name, call) for every binary function whose mixed float/int check was added; each is
# refused by real paddle 2.6.2 for the same inputs (see test_paddle_refuses_the_same_mixes)
BINARY = {
    "add": lambda P, a, b: P.add(a, b),
    "subtract": lambda P, a, b: P.subtract(a, b),
    "multiply": lambda P, a, b: P.multiply(a, b),
    "divide": lambda P, a, b: P.divide(a, b),
    "floor_divide": lambda P, a, b: P.floor_divide(a, b),
    "remainder": lambda P, a, b: P.remainder(a, b),
    "pow": lambda P, a, b: P.pow(a, b),
    "maximum": lambda P, a, b: P.maximum(a, b),
    "minimum": lambda P, a, b: P.minimum(a, b),
    "fmax": lambda P, a, b: P.fmax(a, b),
    "fmin": lambda P, a, b: P.fmin(a, b),
    "atan2": lambda P, a, b: P.atan2(a, b),
    "logaddexp": lambda P, a, b: P.logaddexp(a, b),
    "heaviside": lambda P, a, b: P.heaviside(a, b),
    "matmul": lambda P, a, b: P.matmul(a, b),
    "mm": lambda P, a, b: P.mm(a, b),
    "bmm": lambda P, a, b: P.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "mv": lambda P, a, b: P.mv(a, b[0]),
    "dot": lambda P, a, b: P.dot(a[0], b[0]),
    "inner": lambda P, a, b: P.inner(a, b),
    "outer": lambda P, a, b: P.outer(a, b),
    "cross": lambda P, a, b: P.cross(a, b, axis=0),
    "kron": lambda P, a, b: P.kron(a, b),
    "tensordot": lambda P, a, b: P.tensordot(a, b, axes=1),
    "einsum": lambda P, a, b: P.einsum("ij,jk->ik", a, b),
    "addmm": lambda P, a, b: P.addmm(a, a, b),
    "lerp": lambda P, a, b: P.lerp(a, b, 0.5),
    "concat": lambda P, a, b: P.concat([a, b]),
    "stack": lambda P, a, b: P.stack([a, b]),
    "broadcast_tensors": lambda P, a, b: P.broadcast_tensors([a, b]),
    "where": lambda P, a, b: P.where(a > 0, a, b),
    "equal": lambda P, a, b: P.equal(a, b),
    "not_equal": lambda P, a, b: P.not_equal(a, b),
    "less_than": lambda P, a, b: P.less_than(a, b),
    "less_equal": lambda P, a, b: P.less_equal(a, b),
    "greater_than": lambda P, a, b: P.greater_than(a, b),
    "greater_equal": lambda P, a, b: P.greater_equal(a, b),
    "equal_all": lambda P, a, b: P.equal_all(a, b),
    "logical_and": lambda P, a, b: P.logical_and(a, b),
    "logical_or": lambda P, a, b: P.logical_or(a, b),
    "logical_xor": lambda P, a, b: P.logical_xor(a, b),
}
MIXES = [("float32", "int64"), ("int64", "float32"), ("float32", "int32"), ("float64", "bool")]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dx,dy", MIXES)
def test_mixed_float_int_is_refused_with_op_and_dtypes(op, dx, dy):
    with pytest.raises(ValueError) as info:
        BINARY[op](paddle, _t(dx), _t(dy))
    assert isinstance(info.value, TypeError)  # both: Paddle's ValueError, Python's TypeError
    msg = str(info.value)
    assert dx in msg and dy in msg and "Cast one of them" in msg
    assert op in msg or op in ("mm", "bmm", "mv", "outer", "inner")  # these name matmul


@pytest.mark.parametrize("op", sorted(BINARY))
def test_same_kind_inputs_still_work(op):
    BINARY[op](paddle, _t("float32"), _t("float32"))
    if op not in ("atan2", "logaddexp", "lerp", "einsum", "pow"):
        BINARY[op](paddle, _t("int32"), _t("int64"))  # integer widths still promote


def test_python_operators_keep_promoting():
    f, i = _t("float32"), _t("int64")
    for out in (f + i, i - f, f * i, f / i, f // i, f % i, f ** i, f @ i, i @ f):
        assert out.dtype == paddle.float32
    np.testing.assert_array_equal((f == i).numpy(), np.ones((3, 3), bool))
    assert (f < i).dtype == paddle.bool
    # the methods are Paddle's functions, so they refuse as the functions do
    with pytest.raises(ValueError, match="matmul"):
        f.matmul(i)


@pytest.mark.parity
def test_paddle_refuses_the_same_mixes(pd):
    def t(dtype):
        return pd.to_tensor(np.ones((3, 3)).astype(dtype))

    accepted = []
    for op, call in sorted(BINARY.items()):
        for dx, dy in MIXES[:3]:
            try:
                call(pd, t(dx), t(dy))
            except (ValueError, RuntimeError, TypeError):
                continue
            accepted.append((op, dx, dy))
    assert accepted == []


@pytest.mark.parametrize("call,op,arg", [
    (lambda: paddle.arange(0, float("nan")), "arange", "end"),
    (lambda: paddle.arange(float("-inf"), 3), "arange", "start"),
    (lambda: paddle.arange(0, 10, float("inf")), "arange", "step"),
    (lambda: paddle.arange(paddle.to_tensor(float("nan"))), "arange", "start"),
    (lambda: paddle.linspace(0, float("inf"), 4), "linspace", "stop"),
    (lambda: paddle.linspace(float("nan"), 1, 4), "linspace", "start"),
    (lambda: paddle.logspace(0, float("nan"), 4), "logspace", "stop"),
    (lambda: paddle.logspace(0, 2, 4, base=float("inf")), "logspace", "base"),
])
def test_creation_ops_name_non_finite_bounds(call, op, arg):
    with pytest.raises(ValueError, match=rf"{op}: '{arg}' must be a finite number"):
        call()


def test_finite_creation_unchanged():
    assert paddle.arange(0, 1, 0.25).shape == [4]
    np.testing.assert_allclose(paddle.linspace(0, 1, 3).numpy(), [0, 0.5, 1])
    assert np.isnan(paddle.full([2], float("nan")).numpy()).all()  # a NaN fill is a value


@pytest.mark.parametrize("layer", [paddle.nn.Dropout, paddle.nn.Dropout2D, paddle.nn.Dropout3D,
                                   paddle.nn.AlphaDropout])
@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_dropout_p_outside_unit_interval(layer, p):
    with pytest.raises(ValueError, match=r"p must be between 0 and 1"):
        layer(p)


def test_dropout_p_edges_accepted():
    assert paddle.nn.Dropout(0.0).p == 0.0 and paddle.nn.Dropout(1.0).p == 1.0


def test_bce_label_outside_unit_interval():
    x = paddle.full([4], 0.5)
    with pytest.raises(ValueError, match=r"binary_cross_entropy: .*'label' must lie in \[0, 1\]"
                       r".*\[-1\.0, 1\.0\]"):
        F.binary_cross_entropy(x, paddle.to_tensor([0.0, 1.0, -1.0, 0.5]))
    with pytest.raises(ValueError, match="'label'"):
        paddle.nn.BCELoss()(x, paddle.to_tensor([0.0, 2.0, 1.0, 1.0]))
    # soft labels inside [0, 1] are fine
    F.binary_cross_entropy(x, paddle.to_tensor([0.0, 0.3, 1.0, 0.5]))


@pytest.mark.parametrize("fn,extra", [
    (F.mse_loss, ()), (F.l1_loss, ()), (F.square_error_cost, ()), (F.log_loss, ()),
    (F.poisson_nll_loss, ()), (F.hinge_embedding_loss, ()),
])
def test_losses_report_shapes_in_their_own_terms(fn, extra):
    with pytest.raises(ValueError) as info:
        fn(paddle.full([2, 3], 0.5), paddle.full([3, 2], 0.5), *extra)
    msg = str(info.value)
    assert msg.startswith(f"{fn.__name__}: input [2, 3] and label [3, 2]")
    assert "subtract" not in msg and "multiply" not in msg


def test_margin_ranking_loss_names_other():
    with pytest.raises(ValueError, match=r"margin_ranking_loss: input \[2, 3\] and other \[3, 2\]"):
        F.margin_ranking_loss(paddle.ones([2, 3]), paddle.ones([3, 2]), paddle.ones([2, 3]))


def test_loss_broadcasting_still_allowed():
    out = F.mse_loss(paddle.ones([2, 3]), paddle.zeros([3]), reduction="none")
    assert out.shape == [2, 3]


class _Ragged(paddle.io.Dataset):
    def __getitem__(self, i):
        return {"image": np.zeros(3 + (i == 1), "float32"), "label": np.int64(i)}

    def __len__(self):
        return 2


@pytest.mark.parametrize("workers", [0, 1])
def test_collate_names_field_entries_and_shapes(workers):
    loader = paddle.io.DataLoader(_Ragged(), batch_size=2, num_workers=workers, timeout=60)
    # a worker's error comes back as RuntimeError carrying the worker's traceback
    with pytest.raises(ValueError if workers == 0 else RuntimeError) as info:
        next(iter(loader))
    msg = str(info.value)
    assert "field sample['image']" in msg
    assert "shape [3] at entry 0 and [4] at entry 1" in msg


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Momentum", "RMSProp", "Adagrad"])
def test_optimizer_without_parameters_raises_at_construction(name):
    with pytest.raises(AttributeError, match="should not be None in dygraph mode"):
        getattr(paddle.optimizer, name)(learning_rate=0.1)


@pytest.mark.parity
def test_optimizer_none_matches_paddle(pd):
    with pytest.raises(AttributeError, match="should not be None in dygraph mode"):
        pd.optimizer.SGD(learning_rate=0.1)
