import numpy as np
import pytest

from tests.op_check import check_parity, gradcheck


@pytest.mark.parity
def test_add_mul_parity(pd):
    x = np.random.rand(3, 4).astype("float32")
    y = np.random.rand(4).astype("float32")
    check_parity(lambda P, a, b: P.add(a, b) * b, [x, y], pd)


def test_matmul_gradcheck():
    gradcheck(lambda a, b: a @ b, [np.random.rand(2, 3, 4), np.random.rand(4, 5)])
