"""paddle_hl.linalg: norms and distances, statistics, decompositions and solvers."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_parity, gradcheck

rng = np.random.default_rng(0)


def R(*shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype)


def SPD(n, batch=(), dtype="float64"):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def sym(t):
    perm = list(range(t.ndim - 2)) + [t.ndim - 1, t.ndim - 2]
    return (t + paddle.transpose(t, perm)) * 0.5


NAMES = ["cholesky", "cholesky_solve", "cond", "corrcoef", "cov", "det", "eig", "eigh",
         "eigvals", "eigvalsh", "householder_product", "inv", "lstsq", "lu", "lu_unpack",
         "matrix_power", "matrix_rank", "multi_dot", "norm", "pca_lowrank", "pinv", "qr",
         "slogdet", "solve", "svd", "triangular_solve"]


def test_namespace_has_all_26_names_and_shares_functions():
    assert sorted(paddle.linalg.__all__) == sorted(NAMES)
    for n in NAMES:
        fn = getattr(paddle.linalg, n)
        method = "inverse" if n == "inv" else n
        if hasattr(paddle.Tensor, method):
            assert getattr(paddle.Tensor, method) is fn
    assert paddle.linalg.inv is paddle.Tensor.inverse


# float32 parity cases use a looser tolerance
PARITY = {
    "inv": (lambda P, a: P.linalg.inv(a), [R(2, 3, 3)]),
    "det": (lambda P, a: P.linalg.det(a), [R(2, 3, 3)]),
    "det2d": (lambda P, a: P.linalg.det(a), [R(3, 3)]),
    "slogdet": (lambda P, a: P.linalg.slogdet(a), [R(2, 3, 3)]),
    "solve": (lambda P, a, b: P.linalg.solve(a, b), [R(2, 3, 3), R(3, 2)]),
    "solve_vec": (lambda P, a, b: P.linalg.solve(a, b), [R(3, 3), R(3)]),
    "tri": (lambda P, a, b: P.linalg.triangular_solve(a, b), [R(2, 3, 3) + 3 * np.eye(3),
                                                             R(2, 3, 2)]),
    "tri_lower_t": (lambda P, a, b: P.linalg.triangular_solve(a, b, upper=False, transpose=True),
                    [R(3, 3) + 3 * np.eye(3), R(3, 2)]),
    "chol": (lambda P, a: P.linalg.cholesky(a), [SPD(3, (2,))]),
    "chol_upper": (lambda P, a: P.linalg.cholesky(a, upper=True), [SPD(3)]),
    "chol_solve": (lambda P, b, fac: P.linalg.cholesky_solve(b, fac),
                   [R(3, 2), np.linalg.cholesky(SPD(3))]),
    "chol_solve_u": (lambda P, b, u: P.linalg.cholesky_solve(b, u, upper=True),
                     [R(3, 2), np.linalg.cholesky(SPD(3)).T.copy()]),
    "qr": (lambda P, a: P.linalg.qr(a), [R(2, 4, 3)]),
    "qr_wide": (lambda P, a: P.linalg.qr(a), [R(3, 5)]),
    "svd": (lambda P, a: P.linalg.svd(a), [R(2, 4, 3)]),
    "svd_wide": (lambda P, a: P.linalg.svd(a), [R(3, 5)]),
    "eigh": (lambda P, a: P.linalg.eigh(a), [SPD(3)]),
    "eigh_upper": (lambda P, a: P.linalg.eigh(a, UPLO="U"), [R(3, 3)]),
    "eigvalsh": (lambda P, a: P.linalg.eigvalsh(a), [R(3, 3)]),
    "eig": (lambda P, a: P.linalg.eig(a), [R(3, 3)]),
    "lu": (lambda P, a: P.linalg.lu(a), [R(2, 3, 3)]),
    "lu_tall": (lambda P, a: P.linalg.lu(a), [R(4, 3)]),
    "lu_wide": (lambda P, a: P.linalg.lu(a), [R(3, 4)]),
    "pinv": (lambda P, a: P.linalg.pinv(a), [R(4, 3)]),
    "pinv_herm": (lambda P, a: P.linalg.pinv(a, hermitian=True), [SPD(3)]),
    "cond": (lambda P, a: P.linalg.cond(a), [R(2, 3, 3)]),
    "cond_fro": (lambda P, a: P.linalg.cond(a, p="fro"), [R(3, 3)]),
    "cond_inf": (lambda P, a: P.linalg.cond(a, p=np.inf), [R(3, 3)]),
    "cond_nuc": (lambda P, a: P.linalg.cond(a, p="nuc"), [R(3, 3)]),
    "cond_m1": (lambda P, a: P.linalg.cond(a, p=-1), [R(3, 3)]),
    "cov": (lambda P, a: P.linalg.cov(a), [R(3, 6)]),
    "cov_weights": (lambda P, a, f, w: P.linalg.cov(a, rowvar=False, fweights=f, aweights=w),
                    [R(6, 3), np.arange(1, 7), np.abs(R(6))]),
    "cov_1var": (lambda P, a: P.linalg.cov(a), [R(1, 6)]),
    "cov_1d": (lambda P, a: P.linalg.cov(a, ddof=False), [R(6)]),
    "corrcoef": (lambda P, a: P.linalg.corrcoef(a), [R(3, 6)]),
    "norm": (lambda P, a: P.linalg.norm(a), [R(3, 4)]),
    "norm_p3": (lambda P, a: P.linalg.norm(a, p=3, axis=1, keepdim=True), [R(3, 4)]),
    "norm_inf2": (lambda P, a: P.linalg.norm(a, p=np.inf, axis=[0, 1]), [R(3, 4)]),
    "norm_ninf": (lambda P, a: P.linalg.norm(a, p=-np.inf, axis=0), [R(3, 4)]),
    "norm_0": (lambda P, a: P.linalg.norm(a, p=0, axis=-1), [R(3, 4)]),
    "norm_fro_ax": (lambda P, a: P.linalg.norm(a, p="fro", axis=[1, 2]), [R(2, 3, 4)]),
    "dist": (lambda P, a, b: P.dist(a, b, p=3), [R(3, 4), R(4)]),
    "dist_inf": (lambda P, a, b: P.dist(a, b, p=np.inf), [R(3, 4), R(4)]),
    "dist_0": (lambda P, a, b: P.dist(a, b, p=0), [R(3, 4), R(4)]),
    "cdist": (lambda P, a, b: P.cdist(a, b), [R(2, 4, 3), R(2, 5, 3)]),
    "cdist_mm": (lambda P, a, b: P.cdist(a, b), [R(30, 3), R(5, 3)]),
    "cdist_p1": (lambda P, a, b: P.cdist(a, b, p=1.0), [R(4, 3), R(5, 3)]),
    "cdist_pinf": (lambda P, a, b: P.cdist(a, b, p=float("inf")), [R(4, 3), R(5, 3)]),
    "mpow": (lambda P, a: P.linalg.matrix_power(a, 3), [R(2, 3, 3)]),
}

NO_GRAD = {
    # outputs Paddle does not differentiate (or whose backward crashes in paddle 2.6.2)
    "qr_r": (lambda P, a: P.linalg.qr(a, mode="r"), [R(4, 3)]),
    "qr_complete": (lambda P, a: P.linalg.qr(a, mode="complete"), [R(4, 3)]),
    "matrix_rank": (lambda P, a: P.linalg.matrix_rank(a), [R(2, 3, 3)]),
    "lu_unpack": (lambda P, a: P.linalg.lu_unpack(*P.linalg.lu(a)), [R(4, 3)]),
    "householder": (lambda P, a, t: P.linalg.householder_product(a, t), [R(4, 3), R(3)]),
    "lstsq_gelsd": (lambda P, a, b: P.linalg.lstsq(a, b, driver="gelsd"), [R(5, 3), R(5, 2)]),
    "lstsq_gels": (lambda P, a, b: P.linalg.lstsq(a, b, driver="gels"), [R(5, 3), R(5, 2)]),
    "lstsq_default": (lambda P, a, b: P.linalg.lstsq(a, b), [R(2, 5, 3), R(2, 5, 2)]),
    "lstsq_wide": (lambda P, a, b: P.linalg.lstsq(a, b, driver="gelss"), [R(3, 5), R(3, 2)]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(PARITY))
def test_linalg_parity_float64(pd, name):
    fn, inputs = PARITY[name]
    check_parity(fn, inputs, pd, rtol=1e-6, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["inv", "det", "solve", "chol", "qr", "svd", "eigh", "lu",
                                  "pinv", "norm_p3", "cdist", "cov", "tri"])
def test_linalg_parity_float32(pd, name):
    fn, inputs = PARITY[name]
    ins = [a.astype("float32") if a.dtype == np.float64 else a for a in inputs]
    check_parity(fn, ins, pd, rtol=2e-3, atol=2e-3)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(NO_GRAD))
def test_linalg_parity_forward_only(pd, name):
    fn, inputs = NO_GRAD[name]
    check_parity(fn, inputs, pd, grad=False, rtol=1e-6, atol=1e-6)


@pytest.mark.parity
def test_eigvals_parity_up_to_order(pd):
    # the order of eigenvalues is unspecified (paddle's differs from LAPACK's geev order)
    a = R(2, 4, 4)
    ours = paddle.linalg.eigvals(paddle.to_tensor(a))
    theirs = pd.linalg.eigvals(pd.to_tensor(a)).numpy()
    assert ours.dtype == paddle.complex128 and ours.shape == list(theirs.shape)
    np.testing.assert_allclose(np.sort_complex(ours.numpy()), np.sort_complex(theirs),
                               rtol=1e-8)


GRADCHECK = {
    "inv": (lambda a: paddle.linalg.inv(a), [R(2, 3, 3) + 2 * np.eye(3)]),
    "det": (lambda a: paddle.linalg.det(a), [R(2, 3, 3)]),
    "slogdet": (lambda a: paddle.linalg.slogdet(a)[1], [R(2, 3, 3)]),
    "solve": (lambda a, b: paddle.linalg.solve(a, b), [R(2, 3, 3) + 2 * np.eye(3), R(3, 2)]),
    "tri_unit": (lambda a, b: paddle.linalg.triangular_solve(a, b, upper=False,
                                                            unitriangular=True),
                 [R(3, 3), R(3, 2)]),
    "tri_t": (lambda a, b: paddle.linalg.triangular_solve(a, b, transpose=True),
              [R(3, 3) + 3 * np.eye(3), R(2, 3, 2)]),
    "chol": (lambda a: paddle.linalg.cholesky(sym(a) + 3 * paddle.eye(3, dtype="float64")),
             [R(2, 3, 3)]),
    "chol_solve": (lambda b, fac: paddle.linalg.cholesky_solve(b, fac),
                   [R(3, 2), np.linalg.cholesky(SPD(3))]),
    "qr": (lambda a: paddle.linalg.qr(a), [R(2, 4, 3)]),
    "qr_wide": (lambda a: paddle.linalg.qr(a), [R(3, 5)]),
    "qr_r": (lambda a: paddle.linalg.qr(a, mode="r"), [R(4, 3)]),
    "qr_complete_square": (lambda a: paddle.linalg.qr(a, mode="complete"), [R(3, 3)]),
    "svd": (lambda a: paddle.linalg.svd(a), [R(2, 4, 3)]),
    "svd_wide": (lambda a: paddle.linalg.svd(a), [R(3, 5)]),
    "eigh_values": (lambda a: paddle.linalg.eigh(sym(a))[0], [R(2, 3, 3)]),
    "eigh_vectors": (lambda a: paddle.linalg.eigh(sym(a))[1] ** 2, [R(3, 3)]),
    "eigvalsh": (lambda a: paddle.linalg.eigvalsh(sym(a)), [R(2, 3, 3)]),
    "lu": (lambda a: paddle.linalg.lu(a)[0], [R(2, 3, 3)]),
    "lu_tall": (lambda a: paddle.linalg.lu(a)[0], [R(4, 3)]),
    "lu_wide": (lambda a: paddle.linalg.lu(a)[0], [R(3, 4)]),
    "lu_unpack": (lambda a: paddle.linalg.lu_unpack(*paddle.linalg.lu(a))[1:], [R(4, 3)]),
    "householder": (lambda a, t: paddle.linalg.householder_product(a, t), [R(2, 4, 3), R(2, 2)]),
    "pinv": (lambda a: paddle.linalg.pinv(a), [R(4, 3)]),
    "pinv_wide": (lambda a: paddle.linalg.pinv(a), [R(2, 3, 4)]),
    "lstsq": (lambda a, b: paddle.linalg.lstsq(a, b)[0], [R(5, 3), R(5, 2)]),
    "cond": (lambda a: paddle.linalg.cond(a), [R(3, 3)]),
    "cond_1": (lambda a: paddle.linalg.cond(a, p=1), [R(3, 3)]),
    "cov_aweights": (lambda a, w: paddle.linalg.cov(a, aweights=w), [R(2, 5),
                                                                    np.abs(R(5)) + 0.5]),
    "corrcoef": (lambda a: paddle.linalg.corrcoef(a), [R(3, 5)]),
    "cdist": (lambda a, b: paddle.cdist(a, b, p=1.5), [R(2, 3, 2), R(4, 2)]),
    "cdist_mm": (lambda a, b: paddle.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                 [R(3, 2), R(4, 2)]),
    "norm": (lambda a: paddle.linalg.norm(a, p=2.5, axis=[0, 1]), [R(3, 2)]),
    "norm_fro": (lambda a: paddle.linalg.norm(a), [R(2, 3)]),
    "dist": (lambda a, b: paddle.dist(a, b, p=1.5), [R(3, 2), R(2)]),
    "matrix_power": (lambda a: paddle.linalg.matrix_power(a, -3), [R(3, 3) + 3 * np.eye(3)]),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_linalg_gradcheck(name):
    fn, inputs = GRADCHECK[name]
    gradcheck(fn, inputs, rtol=1e-4, atol=1e-6)


def test_det_gradient_is_det_times_inverse_transpose_b42():
    a = R(3, 3) + 2 * np.eye(3)
    x = paddle.to_tensor(a, stop_gradient=False)
    paddle.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)


def test_det_gradient_of_singular_matrix_is_adjugate():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    x = paddle.to_tensor(a, stop_gradient=False)
    paddle.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_dist_of_equal_tensors_has_zero_gradient_b42():
    x = paddle.to_tensor(R(3, 4), stop_gradient=False)
    d = paddle.dist(x, x)
    d.backward()
    assert float(d.numpy()) == 0.0
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))


@pytest.mark.parametrize("p", ["fro", 2, 1, 3, np.inf, -np.inf, 0])
def test_norm_of_zero_vector_is_zero_with_finite_gradient_b56(p):
    x = paddle.to_tensor(np.zeros(5, dtype="float32"), stop_gradient=False)
    n = paddle.linalg.norm(x, p=p)
    n.backward()
    assert n.shape == [] and float(n.numpy()) == 0.0
    assert np.all(np.isfinite(x.grad.numpy()))
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(5))


def test_norm_shapes_dtypes_and_errors():
    x = paddle.to_tensor(R(2, 3, 4, dtype="float32"))
    assert paddle.linalg.norm(x).shape == [] and paddle.linalg.norm(x).dtype == paddle.float32
    assert x.norm(p=1, axis=-1, keepdim=True).shape == [2, 3, 1]
    bf = paddle.linalg.norm(x.astype("bfloat16"), p=2)
    np.testing.assert_allclose(float(bf.astype("float32").numpy()),
                               np.linalg.norm(x.numpy().ravel()), rtol=2e-2)
    with pytest.raises(ValueError, match="norm"):
        paddle.linalg.norm(x, axis=[0, 1, 2])
    with pytest.raises(ValueError, match="norm"):
        paddle.linalg.norm(x, p="abc")
    with pytest.raises(ValueError, match="norm"):
        paddle.linalg.norm(x, axis=5)
    with pytest.raises(TypeError, match="norm"):
        paddle.linalg.norm(paddle.to_tensor([1, 2, 3]))


def test_matrix_rank_tol_as_float64_tensor_b63():
    a = np.stack([np.diag([3.0, 0.4, 0.05]), np.diag([3.0, 2.0, 1.0])]).astype("float32")
    x = paddle.to_tensor(a)
    r = paddle.linalg.matrix_rank(x, tol=paddle.to_tensor(np.array([0.1, 1.5]),
                                                          dtype="float64"))
    np.testing.assert_array_equal(r.numpy(), [2, 2])
    assert r.dtype == paddle.int32
    np.testing.assert_array_equal(paddle.linalg.matrix_rank(x, tol=0.3).numpy(), [2, 3])
    assert paddle.linalg.matrix_rank(paddle.to_tensor(a[0])).shape == []
    np.testing.assert_array_equal(paddle.linalg.matrix_rank(x).numpy(), [3, 3])
    sym_a = SPD(3)
    assert int(paddle.linalg.matrix_rank(paddle.to_tensor(sym_a), hermitian=True).numpy()) == 3


def test_slogdet_layout_and_singular():
    out = paddle.linalg.slogdet(paddle.to_tensor(np.array([[0.0, 1.0], [1.0, 0.0]])))
    np.testing.assert_allclose(out.numpy(), [-1.0, 0.0])
    sing = paddle.linalg.slogdet(paddle.to_tensor(np.zeros((3, 3))))
    np.testing.assert_allclose(sing.numpy(), [0.0, -np.inf])


@pytest.mark.parametrize("fn,shape", [("inv", (3, 3)), ("solve", (3, 3))])
def test_singular_matrix_raises_value_error(fn, shape):
    x = paddle.zeros(list(shape), dtype="float64")
    with pytest.raises(ValueError, match=fn if fn != "inv" else "inverse"):
        if fn == "inv":
            paddle.linalg.inv(x)
        else:
            paddle.linalg.solve(x, paddle.ones([3, 1], dtype="float64"))


def test_decomposition_errors():
    with pytest.raises(ValueError, match="cholesky"):
        paddle.linalg.cholesky(paddle.to_tensor(-np.eye(3)))
    with pytest.raises(ValueError, match="det"):
        paddle.linalg.det(paddle.to_tensor(R(3, 2)))
    with pytest.raises(ValueError, match="qr"):
        paddle.linalg.qr(paddle.to_tensor(R(3, 2)), mode="bad")
    with pytest.raises(ValueError, match="eigh"):
        paddle.linalg.eigh(paddle.to_tensor(SPD(3)), UPLO="X")
    with pytest.raises(TypeError, match="inverse"):
        paddle.linalg.inv(paddle.to_tensor(np.eye(3, dtype="int64")))
    with pytest.raises(ValueError, match="solve"):
        paddle.linalg.solve(paddle.to_tensor(R(3, 3)), paddle.to_tensor(R(4, 2)))
    x = paddle.to_tensor(R(4, 3), stop_gradient=False)
    q, r = paddle.linalg.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="complete"):
        (q.sum() + r.sum()).backward()


def test_reconstructions_batched():
    a = R(2, 4, 3)
    x = paddle.to_tensor(a)
    q, r = paddle.linalg.qr(x)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    u, s, vh = paddle.linalg.svd(x)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a, atol=1e-12)
    lu_, piv = paddle.linalg.lu(x)
    p, lo, up = paddle.linalg.lu_unpack(lu_, piv)
    assert piv.dtype == paddle.int32
    np.testing.assert_allclose((p @ lo @ up).numpy(), a, atol=1e-12)
    lu3 = paddle.linalg.lu(x, get_infos=True)
    assert len(lu3) == 3 and lu3[2].dtype == paddle.int32
    np.testing.assert_array_equal(lu3[2].numpy(), [0, 0])
    w, v = paddle.linalg.eig(paddle.to_tensor(R(3, 3)))
    assert w.dtype == paddle.complex128 and v.shape == [3, 3]


def test_lstsq_outputs_and_empty_batch():
    a, b = R(5, 3), R(5, 2)
    sol, res, rank, sv = paddle.linalg.lstsq(paddle.to_tensor(a), paddle.to_tensor(b),
                                             driver="gelsd")
    ref = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(sol.numpy(), ref[0], rtol=1e-10)
    np.testing.assert_allclose(res.numpy(), ref[1], rtol=1e-8)
    assert int(rank.numpy()) == 3 and rank.dtype == paddle.int32
    np.testing.assert_allclose(sv.numpy(), ref[3], rtol=1e-10)
    with pytest.raises(ValueError, match="lstsq"):
        paddle.linalg.lstsq(paddle.to_tensor(a), paddle.to_tensor(b), driver="bad")


def test_pca_lowrank_recovers_low_rank_matrix():
    base = R(20, 3) @ R(3, 8)
    x = paddle.to_tensor(base)
    u, s, v = paddle.linalg.pca_lowrank(x, q=3, center=False)
    assert u.shape == [20, 3] and s.shape == [3] and v.shape == [8, 3]
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(base, compute_uv=False)[:3], rtol=1e-8)
    rec = (u * s.unsqueeze(0)) @ paddle.transpose(v, [1, 0])
    np.testing.assert_allclose(rec.numpy(), base, atol=1e-8)
    _, s6, _ = x.pca_lowrank()
    assert s6.shape == [6]  # default q = min(6, M, N)


def test_cov_corrcoef_match_numpy():
    a = R(3, 7)
    np.testing.assert_allclose(paddle.linalg.cov(paddle.to_tensor(a)).numpy(), np.cov(a),
                               rtol=1e-10)
    np.testing.assert_allclose(paddle.linalg.cov(paddle.to_tensor(a), ddof=False).numpy(),
                               np.cov(a, ddof=0), rtol=1e-10)
    np.testing.assert_allclose(paddle.linalg.corrcoef(paddle.to_tensor(a)).numpy(),
                               np.corrcoef(a), rtol=1e-10)
    with pytest.raises(ValueError, match="cov"):
        paddle.linalg.cov(paddle.to_tensor(R(2, 3, 4)))
