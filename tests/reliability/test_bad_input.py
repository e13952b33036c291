"""Numbers that do not fit the dtype asked for, and shapes too large for any array: an error
naming the value (or shape), the dtype and the op, never a silently wrapped result or NumPy's
bare "array is too big".

Paddle 2.6.2 wraps most of these values silently (``to_tensor([2**40], 'int32')`` gives 0,
``full([2], 300, 'int8')`` gives 44; ``full_like`` raises ValueError for its out-of-range values,
and ``arange`` fails or returns a wrong-length result from its wrapped bounds); paddle_hl raises
ValueError for all of them, the error type Paddle uses where it checks.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import paddle_hl as paddle

BIG = 2**40


def _tensor64(v):
    return paddle.to_tensor([v], "int64")


# (label, call, the value and dtype the error must name)
TO_TENSOR = [
    ("list-int32", lambda: paddle.to_tensor([BIG], "int32"), "1099511627776", "int32"),
    ("scalar-int32", lambda: paddle.to_tensor(BIG, "int32"), "1099511627776", "int32"),
    ("int8", lambda: paddle.to_tensor([1, 300], "int8"), "300", "int8"),
    ("int16", lambda: paddle.to_tensor([70000], "int16"), "70000", "int16"),
    ("uint8-negative", lambda: paddle.to_tensor([-1, 3], "uint8"), "-1", "uint8"),
    ("int64-default", lambda: paddle.to_tensor([2**63]), "9223372036854775808", "int64"),
    ("beyond-64-bits", lambda: paddle.to_tensor([2**64], "int64"), "18446744073709551616",
     "int64"),
    ("scalar-beyond-int64", lambda: paddle.to_tensor(-2**63 - 1), "-9223372036854775809",
     "int64"),
    ("ndarray", lambda: paddle.to_tensor(np.array([BIG]), "int32"), "1099511627776", "int32"),
    ("uint64-ndarray", lambda: paddle.to_tensor(np.array([2**63], np.uint64)),
     "9223372036854775808", "int64"),
    ("tensor", lambda: paddle.to_tensor(_tensor64(BIG), "int32"), "1099511627776", "int32"),
    ("float", lambda: paddle.to_tensor([1.0, 1e10], "int32"), "10000000000.0", "int32"),
    ("nan", lambda: paddle.to_tensor([float("nan")], "int32"), "nan", "int32"),
]


@pytest.mark.parametrize(("call", "value", "dtype"), [c[1:] for c in TO_TENSOR],
                         ids=[c[0] for c in TO_TENSOR])
def test_to_tensor_refuses_values_the_integer_dtype_cannot_hold(call, value, dtype):
    with pytest.raises(ValueError, match=rf"to_tensor: value {value} does not fit "
                                         rf"paddle\.{dtype} \(range \["):
        call()


def test_to_tensor_keeps_values_at_the_edges_of_the_range():
    cases = [([2**31 - 1, -2**31], "int32"), ([-128, 127], "int8"), ([0, 255], "uint8"),
             ([-2**15, 2**15 - 1], "int16"), ([2**63 - 1, -2**63], "int64")]
    for vals, dt in cases:
        np.testing.assert_array_equal(paddle.to_tensor(vals, dt).numpy(), np.array(vals))
        np.testing.assert_array_equal(paddle.to_tensor(np.array(vals), dt).numpy(), vals)
    # floats truncate toward zero, as before; bools become 0/1
    assert paddle.to_tensor([2.9, -2147483648.5], "int32").numpy().tolist() == [2, -2147483648]
    assert paddle.to_tensor([True, False], "uint8").numpy().tolist() == [1, 0]
    assert paddle.to_tensor(2**63 - 1).numpy().item() == 2**63 - 1


FILLS = [
    ("full-int32", lambda: paddle.full([2], BIG, "int32"), "full", "1099511627776", "int32"),
    ("full-int8", lambda: paddle.full([2], 300, "int8"), "full", "300", "int8"),
    ("full-uint8", lambda: paddle.full([2], -1, "uint8"), "full", "-1", "uint8"),
    ("full-int16", lambda: paddle.full([2], -40000, "int16"), "full", "-40000", "int16"),
    ("full-float", lambda: paddle.full([2], 1e10, "int32"), "full", "10000000000.0", "int32"),
    ("full-int64", lambda: paddle.full([2], 2**70, "int64"), "full", str(2**70), "int64"),
    ("full-tensor-value", lambda: paddle.full([2], _tensor64(BIG), "int32"), "full",
     "1099511627776", "int32"),
    ("full_like-int32", lambda: paddle.full_like(paddle.zeros([2], "int32"), BIG),
     "full_like", "1099511627776", "int32"),
    ("full_like-int8", lambda: paddle.full_like(paddle.zeros([2], "int8"), 300), "full_like",
     "300", "int8"),
    ("full_like-dtype", lambda: paddle.full_like(paddle.zeros([2]), 256, "uint8"), "full_like",
     "256", "uint8"),
]


@pytest.mark.parametrize(("call", "op", "value", "dtype"), [c[1:] for c in FILLS],
                         ids=[c[0] for c in FILLS])
def test_fill_values_outside_the_integer_dtype_raise(call, op, value, dtype):
    with pytest.raises(ValueError, match=rf"{op}: value {value} does not fit paddle\.{dtype}"):
        call()


def test_fill_values_at_the_edges_are_kept():
    assert paddle.full([2], -128, "int8").numpy().tolist() == [-128, -128]
    assert paddle.full([1], 2**31 - 1, "int32").numpy().tolist() == [2**31 - 1]
    assert paddle.full_like(paddle.zeros([1], "uint8"), 255).numpy().tolist() == [255]
    assert paddle.full([1], 2.9, "int32").numpy().tolist() == [2]


SEQUENCES = [
    ("arange-past-int32", lambda: paddle.arange(2**31 - 2, 2**31 + 2, dtype="int32"), "arange",
     "2147483649", "int32"),
    ("arange-step-past-int32", lambda: paddle.arange(0, 2**33, 2**31, dtype="int32"), "arange",
     "6442450944", "int32"),
    ("arange-below-int32", lambda: paddle.arange(-2**31 + 1, -2**31 - 3, -1, dtype="int32"),
     "arange", "-2147483650", "int32"),
    ("arange-float-steps", lambda: paddle.arange(0, 4e9, 1e9, dtype="int32"), "arange",
     "3000000000.0", "int32"),
    ("arange-int8", lambda: paddle.arange(0, 200, dtype="int8"), "arange", "199", "int8"),
    ("arange-beyond-int64", lambda: paddle.arange(0, 2**70, 2**69), "arange", str(2**69),
     "int64"),
    ("linspace-uint8", lambda: paddle.linspace(0, 300, 3, dtype="uint8"), "linspace", "300",
     "uint8"),
    ("logspace-int32", lambda: paddle.logspace(0, 10, 11, dtype="int32"), "logspace",
     "10000000000.0", "int32"),
]


@pytest.mark.parametrize(("call", "op", "value", "dtype"), [c[1:] for c in SEQUENCES],
                         ids=[c[0] for c in SEQUENCES])
def test_sequences_past_the_integer_dtype_raise(call, op, value, dtype):
    with pytest.raises(ValueError, match=rf"{op}: value ({value}) does not fit "
                                         rf"paddle\.{dtype}"):
        call()


def test_sequences_up_to_the_edge_are_kept():
    got = paddle.arange(2**31 - 3, 2**31, dtype="int32").numpy().tolist()
    assert got == [2**31 - 3, 2**31 - 2, 2**31 - 1]
    assert paddle.arange(0, 10, 2.5, dtype="int32").numpy().tolist() == [0, 2, 5, 7]
    assert paddle.arange(-128, 128, 127, dtype="int8").numpy().tolist() == [-128, -1, 126]
    assert paddle.linspace(0, 255, 3, dtype="uint8").numpy().tolist() == [0, 127, 255]
    for a in [(0, 10, 3), (10, 0, -3), (5, 5, 1), (0, 1, 5), (-7, 3, 4), (3, -7, -4)]:
        assert paddle.arange(*a).numpy().tolist() == list(range(*a)), a


HUGE = [2**62, 4]
TOO_BIG = [
    ("zeros", lambda: paddle.zeros(HUGE), "[4611686018427387904, 4]"),
    ("ones", lambda: paddle.ones(HUGE, "int8"), "[4611686018427387904, 4]"),
    ("full", lambda: paddle.full(HUGE, 1.5), "[4611686018427387904, 4]"),
    ("empty", lambda: paddle.empty(HUGE), "[4611686018427387904, 4]"),
    ("eye", lambda: paddle.eye(2**40, 2**40), "[1099511627776, 1099511627776]"),
    ("arange", lambda: paddle.arange(0, 2**62), "[4611686018427387904]"),
    ("linspace", lambda: paddle.linspace(0, 1, 2**62), "[4611686018427387904]"),
    ("logspace", lambda: paddle.logspace(0, 1, 2**62), "[4611686018427387904]"),
]


@pytest.mark.parametrize(("call", "shape"), [c[1:] for c in TOO_BIG], ids=[c[0] for c in TOO_BIG])
def test_shapes_beyond_any_array_name_the_op_and_the_shape(call, shape, request):
    op = request.node.callspec.id
    with pytest.raises(ValueError, match=rf"^{op}: shape {re.escape(shape)} of paddle\.\w+ "
                                         r"needs \d+ bytes, more than an array can address"):
        call()


def _overcommit_refuses_huge():
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() != "1"
    except OSError:
        return False


@pytest.mark.skipif(not _overcommit_refuses_huge(),
                    reason="the kernel grants any allocation (vm.overcommit_memory=1)")
@pytest.mark.parametrize("op", ["zeros", "empty", "ones"])
def test_allocation_failure_names_the_op_and_the_shape(op):
    # 16 TiB: addressable, but more than this machine has; the kernel refuses it at once
    with pytest.raises(MemoryError, match=rf"^{op}: not enough memory for shape "
                                          r"\[4398046511104\] of paddle\.float32 \(16\.0 TiB\)"):
        getattr(paddle, op)([2**42])
