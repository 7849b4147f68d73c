"""modjax.numpy.linalg against numpy.linalg, with JAX 0.10's dtypes, derivatives and errors.

Inputs are generated well conditioned (a random matrix plus a multiple of the
identity; ``B B^H + n I`` for Hermitian positive-definite ones) over a small
pool of batch shapes, so compiled programs are shared between examples.
Decompositions are checked by their reconstruction identities (``L L^H = a``,
``Q R = a``, ``U diag(S) Vh = a``, ``a v = v w``) as well as against numpy;
derivatives with ``check_grads`` in float64; ``vmap`` against a loop.
"""

from __future__ import annotations

import linalg_reference
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

la = jnp.linalg
BATCHES = [(), (2,), (1, 3)]
DTYPES = [np.float32, np.complex64]
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}


@pytest.fixture
def x64():
    with enable_x64(True):
        yield


def random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def general(rng, shape, dtype):
    """A well-conditioned square matrix (batch): random plus ``n`` on the diagonal."""
    n = shape[-1]
    return (random(rng, shape, dtype) + n * np.eye(n)).astype(dtype)


def hpd(rng, shape, dtype):
    """A Hermitian positive-definite matrix (batch)."""
    b = random(rng, shape, dtype)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(x, y, dtype, scale=1.0):
    tol = TOL[np.dtype(dtype).type] * scale
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


cases = st.tuples(st.sampled_from(BATCHES), st.sampled_from(DTYPES), st.integers(0, 2**16))


# --- norms and products ---------------------------------------------------------------------


@given(cases, st.sampled_from([None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"]))
def test_matrix_norms_match_numpy(case, ord_):
    batch, dtype, seed = case
    x = random(np.random.default_rng(seed), batch + (3, 4), dtype)
    for keepdims in (False, True):
        got = la.norm(x, ord=ord_, axis=(-2, -1), keepdims=keepdims)
        close(got, np.linalg.norm(x, ord=ord_, axis=(-2, -1), keepdims=keepdims), dtype)
    if ord_ not in (None,):
        close(la.matrix_norm(x, ord=ord_), np.linalg.matrix_norm(x, ord=ord_), dtype)


@given(cases, st.sampled_from([None, 0, 1, 2, 3.5, -1.5, np.inf, -np.inf]))
def test_vector_norms_match_numpy(case, ord_):
    batch, dtype, seed = case
    x = random(np.random.default_rng(seed), batch + (5,), dtype)
    close(la.norm(x, ord=ord_, axis=-1), np.linalg.norm(x, ord=ord_, axis=-1), dtype)
    p = 2 if ord_ is None else ord_
    close(la.vector_norm(x, ord=p), np.linalg.vector_norm(x, ord=p), dtype)
    close(
        la.vector_norm(x, ord=p, axis=0, keepdims=True),
        np.linalg.vector_norm(x, ord=p, axis=0, keepdims=True),
        dtype,
    )


def test_norm_defaults_and_dtypes():
    x = np.arange(24).reshape(2, 3, 4)
    # Any rank without ord: the 2-norm of the flattened array; ints compute in float32.
    assert la.norm(x).dtype == np.float32
    close(la.norm(x), np.linalg.norm(x), np.float32)
    assert la.norm(x.astype(np.complex64)).dtype == np.float32
    assert la.vector_norm(x.astype(np.float32), ord=0).dtype == np.float32
    with pytest.raises(ValueError, match="Improper number of axes"):
        la.norm(x, ord=2)
    with pytest.raises(ValueError, match="Invalid order 'bad' for matrix norm"):
        la.norm(x[0], ord="bad")
    with pytest.raises(ValueError, match="Invalid order 'inf' for vector norm"):
        la.vector_norm(x, ord="inf")


def test_products_and_views():
    rng = np.random.default_rng(0)
    a, b = random(rng, (2, 3, 4), np.float32), random(rng, (2, 4, 5), np.float32)
    close(la.matmul(a, b), a @ b, np.float32)
    close(
        la.tensordot(a, b, axes=((0, 2), (0, 1))), np.tensordot(a, b, ((0, 2), (0, 1))), np.float32
    )
    close(la.vecdot(a, a), np.sum(a * a, -1), np.float32)
    # out_sharding types the result on the mesh, as jnp.tensordot's does.
    from modjax.sharding import PartitionSpec, make_mesh, set_mesh

    with set_mesh(make_mesh((1,), ("x",))):
        typed = la.tensordot(a[0], b[0], axes=1, out_sharding=PartitionSpec("x"))
    close(typed, a[0] @ b[0], np.float32)
    assert typed.sharding.mesh.axis_names == ("x",) and typed.sharding.spec[0] == "x"
    close(la.matrix_transpose(a), np.swapaxes(a, -1, -2), np.float32)
    close(la.diagonal(a, offset=1), np.diagonal(a, 1, -2, -1), np.float32)
    close(la.trace(a, offset=-1), np.trace(a, -1, -2, -1), np.float32)
    close(la.outer(a[0, 0], b[0, 0]), np.outer(a[0, 0], b[0, 0]), np.float32)
    v, w = random(rng, (4, 3), np.float32), random(rng, (4, 3), np.float32)
    close(la.cross(v, w), np.cross(v, w), np.float32)
    with pytest.raises(ValueError, match="one-dimensional"):
        la.outer(a, b)
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        la.cross(a, a)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.matrix_transpose(np.ones(3))


def test_multi_dot_matches_numpy_and_picks_the_cheap_order():
    rng = np.random.default_rng(1)
    arrs = [random(rng, s, np.float32) for s in [(10,), (10, 2), (2, 30), (30, 3)]]
    close(la.multi_dot(arrs), np.linalg.multi_dot(arrs), np.float32, scale=10)
    arrs2 = [random(rng, s, np.float32) for s in [(3, 4), (4, 5)]]
    close(la.multi_dot(arrs2), np.linalg.multi_dot(arrs2), np.float32)
    with pytest.raises(ValueError, match="at least two arrays"):
        la.multi_dot([])
    # JAX unpacks a lone array into its rows: three (4,) vectors, so the middle one is not 2-D.
    with pytest.raises(ValueError, match="must all be two-dimensional"):
        la.multi_dot([arrs2[0]])
    pair = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    assert float(la.multi_dot([pair])) == 3.0  # its two rows' dot product, as in JAX
    with pytest.raises(ValueError, match="must match first dimension"):
        la.multi_dot([arrs2[0], arrs2[0]])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, -2])
def test_matrix_power(n):
    a = general(np.random.default_rng(2), (2, 3, 3), np.float32) / 3
    close(la.matrix_power(a, n), np.linalg.matrix_power(a, n), np.float32, scale=10)


def test_matrix_power_errors():
    with pytest.raises(TypeError, match="Array must be at least two-dimensional"):
        la.matrix_power(np.ones(3), 2)
    with pytest.raises(TypeError, match="must be square"):
        la.matrix_power(np.ones((2, 3)), 2)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        la.matrix_power(np.eye(2), 1.5)


# --- LU: solve, inv, det, slogdet -----------------------------------------------------------


@given(cases)
def test_solve_inv_det_slogdet_match_numpy(case):
    batch, dtype, seed = case
    rng = np.random.default_rng(seed)
    a = general(rng, batch + (4, 4), dtype)
    b = random(rng, batch + (4, 2), dtype)
    close(la.solve(a, b), np.linalg.solve(a, b), dtype)
    vec = b.reshape(-1)[:4]  # one vector for every matrix of the batch
    close(la.solve(a, vec), np.linalg.solve(a, vec), dtype)
    close(la.inv(a), np.linalg.inv(a), dtype)
    close(la.det(a), np.linalg.det(a), dtype, scale=50)
    sign, logdet = la.slogdet(a)
    ref_sign, ref_logdet = np.linalg.slogdet(a)
    close(sign, ref_sign, dtype)
    close(logdet, ref_logdet, dtype, scale=10)
    assert la.solve(a, b).dtype == dtype and la.det(a).dtype == dtype
    assert logdet.dtype == np.finfo(dtype).dtype


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_det_small_and_large(n):
    a = general(np.random.default_rng(n), (2, n, n), np.float32)
    close(la.det(a), np.linalg.det(a), np.float32, scale=100)
    close(la.slogdet(a)[1], np.linalg.slogdet(a)[1], np.float32, scale=10)


def test_solve_broadcasts_and_promotes():
    rng = np.random.default_rng(3)
    a = general(rng, (3, 4, 4), np.float32)
    b = random(rng, (4, 2), np.float32)
    close(la.solve(a, b), np.linalg.solve(a, b), np.float32)
    ints = np.array([[2, 1], [1, 3]])
    assert la.solve(ints, np.array([1, 2])).dtype == np.float32
    assert la.inv(ints).dtype == np.float32 and la.det(ints).dtype == np.float32


def test_solve_permutes_rows_by_one_gather():
    # the LU solve (shared by jnp.linalg.solve and scipy.linalg.lu_solve) gathers whole
    # rows, as JAX does: no index constants become arguments, no permutation matmul;
    # jnp.linalg.solve solves column by column (a vmap, as JAX's), so the rows it
    # gathers are those of a [4, 1, 2] stack of columns
    from modjax.scipy import linalg as sl

    rng = np.random.default_rng(4)
    a = general(rng, (3, 4, 4), np.float32)
    b = random(rng, (4, 2), np.float32)
    text = jit(la.solve).lower(a[0], b).as_text()
    assert "@main(%arg0: tensor<4x4xf32>, %arg1: tensor<4x2xf32>)" in text
    assert text.count('"stablehlo.gather"') == 1 and "slice_sizes = array<i64: 2, 1, 1>" in text
    assert "dot_general" not in text
    factors = sl.lu_factor(a)
    for trans, op in enumerate([a, np.swapaxes(a, -1, -2), np.swapaxes(a, -1, -2)]):
        close(sl.lu_solve(factors, b, trans=trans), np.linalg.solve(op, b), np.float32)
    empty = np.zeros((0, 0), np.float32)  # no rows to gather (array-api-tests' test_inv)
    assert la.inv(empty).shape == (0, 0) and la.solve(empty, np.zeros((0, 1))).shape == (0, 1)


def test_slogdet_qr_method(x64):
    # method="qr": R's diagonal times the reflections' signs (JAX's), and the LU method's JVP.
    rng = np.random.default_rng(6)
    a = general(rng, (2, 4, 4), np.float64)
    sign, logdet = jit(lambda x: la.slogdet(x, method="qr"))(a)
    ref_sign, ref_logdet = np.linalg.slogdet(a)
    close(sign, ref_sign, np.float64)
    close(logdet, ref_logdet, np.float64)
    s32, l32 = la.slogdet(a.astype(np.float32), method="qr")
    assert s32.dtype == l32.dtype == np.float32
    close(l32, ref_logdet, np.float32, scale=10)
    # JAX 0.10.2: zeros give sign 0 and -inf; ones give sign 1 and a rounding-sized logdet.
    sign, logdet = la.slogdet(np.zeros((3, 3)), method="qr")
    assert float(sign) == 0 and float(logdet) == -np.inf
    check_grads(lambda x: la.slogdet(x, method="qr")[1], (a[0],), order=1)
    close(vmap(lambda x: la.slogdet(x, method="qr")[1])(a), ref_logdet, np.float64)
    with pytest.raises(NotImplementedError, match="not implemented for complex inputs"):
        la.slogdet(np.eye(2) * 1j, method="qr")


def test_singular_matrices():
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
    sign, logdet = la.slogdet(s)
    assert float(sign) == 0 and float(logdet) == -np.inf
    assert float(la.det(np.zeros((4, 4), np.float32))) == 0


def test_lu_errors():
    with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\]"):
        la.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Argument to slogdet\(\) must have shape"):
        la.slogdet(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Argument to _det\(\) must have shape"):
        la.det(np.ones(3))
    with pytest.raises(ValueError, match="left hand array must be at least two dimensional"):
        la.solve(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        la.solve(np.ones((2, 3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        la.slogdet(np.eye(3), method="bad")


def test_lu_derivatives(x64):
    rng = np.random.default_rng(4)
    a = general(rng, (3, 3), np.float64)
    b = random(rng, (3, 2), np.float64)
    check_grads(la.solve, (a, b), order=2)
    check_grads(la.inv, (a,), order=1)
    check_grads(la.det, (general(rng, (4, 4), np.float64),), order=2)
    check_grads(lambda a: la.slogdet(a)[1], (general(rng, (4, 4), np.float64),), order=2)
    check_grads(lambda a: la.slogdet(a)[1], (a[:2, :2],), order=1)
    ac = general(rng, (4, 4), np.complex128)
    check_grads(la.det, (ac,), order=1)
    check_grads(lambda a: la.slogdet(a)[1], (ac,), order=1)


def test_det_gradient_at_singular_matrix_is_the_adjugate(x64):
    # Rank n - 1: det is 0 but its gradient, the cofactor matrix, is not.
    s = np.array(
        [[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 2.0, 5.0]]
    )
    g = np.asarray(grad(la.det)(s))
    cof = np.array(
        [
            [(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(s, i, 0), j, 1)) for j in range(4)]
            for i in range(4)
        ]
    )
    np.testing.assert_allclose(g, cof, atol=1e-9)
    # Rank n - 2: every cofactor vanishes, and so does the gradient (finite, not NaN).
    z = np.zeros((4, 4))
    z[0, 0] = z[1, 1] = 1.0
    np.testing.assert_array_equal(np.asarray(grad(la.det)(z)), np.zeros((4, 4)))


def test_vmap_and_jit_equal_loops():
    rng = np.random.default_rng(5)
    a = general(rng, (3, 4, 4), np.float32)
    b = random(rng, (3, 4), np.float32)
    for f, args in [
        (la.solve, (a, b)),
        (la.inv, (a,)),
        (la.det, (a,)),
        (lambda x: la.slogdet(x)[1], (a,)),
    ]:
        looped = np.stack([np.asarray(f(*(x[i] for x in args))) for i in range(3)])
        close(vmap(f)(*args), looped, np.float32, scale=10)
        first = [x[0] for x in args]
        close(jit(f)(*first), f(*first), np.float32)
    # vmap over the right-hand side only.
    close(vmap(la.solve, in_axes=(None, 0))(a[0], b), np.linalg.solve(a[0], b.T).T, np.float32)


def test_tensorinv_tensorsolve():
    rng = np.random.default_rng(6)
    a = general(rng, (6, 6), np.float32).reshape(6, 2, 3)
    close(la.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1), np.float32)
    b = random(rng, (6,), np.float32)
    close(la.tensorsolve(a, b), np.linalg.tensorsolve(a, b), np.float32)
    a4 = np.moveaxis(a, 0, 2)
    close(la.tensorsolve(a4, b, axes=(0, 1)), np.linalg.tensorsolve(a4, b, axes=(0, 1)), np.float32)
    with pytest.raises(ValueError, match="ind must be a positive integer"):
        la.tensorinv(a, ind=0)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        la.tensorinv(np.ones((2, 3)), ind=1)


# --- Cholesky -------------------------------------------------------------------------------


@given(cases)
def test_cholesky(case):
    batch, dtype, seed = case
    a = hpd(np.random.default_rng(seed), batch + (4, 4), dtype)
    low = la.cholesky(a)
    close(low, np.linalg.cholesky(a), dtype, scale=10)
    close(low @ np.conj(np.swapaxes(np.asarray(low), -1, -2)), a, dtype, scale=30)
    close(la.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True), dtype, scale=10)


def test_cholesky_derivatives_and_vmap(x64):
    a = hpd(np.random.default_rng(7), (3, 3), np.float64)
    check_grads(la.cholesky, (a,), order=1)
    batch = hpd(np.random.default_rng(8), (2, 3, 3), np.float64)
    close(vmap(la.cholesky)(batch), np.linalg.cholesky(batch), np.float64)
    # As JAX 0.10.2 under x64: int32 becomes float32, int64 float64.
    assert la.cholesky(np.eye(2, dtype=np.int32)).dtype == np.float32
    assert la.cholesky(np.eye(2, dtype=np.int64)).dtype == np.float64


# --- QR, SVD, eigendecompositions and what is built on them ---------------------------------


def _h(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


@given(cases, st.sampled_from([(4, 3), (3, 4)]))
def test_qr_modes(case, shape):
    batch, dtype, seed = case
    a = random(np.random.default_rng(seed), batch + shape, dtype)
    k = min(shape)
    q, r = la.qr(a)
    assert q.shape == batch + (shape[0], k) and r.shape == batch + (k, shape[1])
    close(np.asarray(q) @ np.asarray(r), a, dtype, scale=10)
    close(_h(q) @ np.asarray(q), np.broadcast_to(np.eye(k), batch + (k, k)), dtype, scale=10)
    np.testing.assert_array_equal(np.tril(np.asarray(r), -1), 0)
    qc, rc = la.qr(a, mode="complete")
    assert qc.shape == batch + (shape[0], shape[0])
    close(np.asarray(qc) @ np.asarray(rc), a, dtype, scale=10)
    close(np.abs(la.qr(a, mode="r")), np.abs(np.linalg.qr(a, mode="r")), dtype, scale=10)
    if not batch:
        for got, ref in zip(la.qr(a, mode="raw"), np.linalg.qr(a, mode="raw"), strict=True):
            close(got, ref, dtype, scale=10)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        la.qr(a, mode="bad")


@given(cases, st.sampled_from([(4, 3), (3, 4)]))
def test_svd(case, shape):
    batch, dtype, seed = case
    a = random(np.random.default_rng(seed), batch + shape, dtype)
    s = la.svd(a, compute_uv=False)
    assert s.dtype == np.finfo(dtype).dtype
    close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=10)
    close(la.svdvals(a), s, dtype)
    u, s, vh = la.svd(a, full_matrices=False)
    close((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), a, dtype, scale=10)
    u, _, vh = la.svd(a)
    assert u.shape == batch + (shape[0],) * 2 and vh.shape == batch + (shape[1],) * 2


@given(cases)
def test_hermitian_eigh_and_svd(case):
    batch, dtype, seed = case
    h = hpd(np.random.default_rng(seed), batch + (4, 4), dtype) - 4 * np.eye(4, dtype=dtype)
    w, v = la.eigh(h)
    close(w, np.linalg.eigvalsh(h), dtype, scale=30)
    close(h @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], dtype, scale=30)
    close(la.eigvalsh(h), w, dtype, scale=10)
    # UPLO and symmetrize_input=False read one triangle only.
    lower_only = np.tril(h)
    close(la.eigh(lower_only, UPLO="L", symmetrize_input=False)[0], w, dtype, scale=30)
    close(la.eigh(np.triu(h), UPLO="U", symmetrize_input=False)[0], w, dtype, scale=30)
    s = la.svd(h, hermitian=True, compute_uv=False)
    close(s, np.linalg.svd(h, compute_uv=False), dtype, scale=30)
    u, s, vh = la.svd(h, hermitian=True)
    close((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), h, dtype, scale=30)
    with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U'"):
        la.eigh(h, UPLO="X")


@pytest.mark.parametrize("dtype", [np.float32])
def test_eig(dtype):
    a = general(np.random.default_rng(9), (2, 4, 4), dtype)
    w, v = la.eig(a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    close(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], np.complex64, scale=30)
    ref = np.sort_complex(np.linalg.eigvals(a).ravel())
    close(np.sort_complex(np.asarray(la.eigvals(a)).ravel()), ref, np.complex64, scale=30)


@given(cases, st.sampled_from([(4, 3), (3, 4)]))
def test_pinv_rank_cond(case, shape):
    batch, dtype, seed = case
    a = random(np.random.default_rng(seed), batch + shape, dtype)
    close(la.pinv(a), np.linalg.pinv(a), dtype, scale=30)
    np.testing.assert_array_equal(la.matrix_rank(a), np.linalg.matrix_rank(a))
    deficient = np.asarray(a)[..., :1, :].repeat(shape[0], axis=-2)
    np.testing.assert_array_equal(la.matrix_rank(deficient), np.linalg.matrix_rank(deficient))
    close(la.cond(a), np.linalg.cond(a), dtype, scale=100)
    sq = general(np.random.default_rng(seed), batch + (3, 3), dtype)
    for p in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"):
        close(la.cond(sq, p), np.linalg.cond(sq, p), dtype, scale=100)


def test_lstsq_matches_numpy():
    rng = np.random.default_rng(10)
    a, b = random(rng, (6, 3), np.float32), random(rng, (6, 2), np.float32)
    for got, ref in zip(la.lstsq(a, b), np.linalg.lstsq(a, b), strict=True):
        close(got, ref, np.float32, scale=30)
    x, resid, rank, s = la.lstsq(a.T, b[:3, 0], numpy_resid=True)
    close(x, np.linalg.lstsq(a.T, b[:3, 0])[0], np.float32, scale=30)
    assert resid.shape == (0,) and int(rank) == 3
    with pytest.raises(ValueError, match="Leading dimensions of input arrays must match"):
        la.lstsq(a, b[:3])
    with pytest.raises(TypeError, match="Array must be two-dimensional"):
        la.lstsq(np.ones((2, 6, 3)), np.ones((2, 6, 3)))


def test_svd_pinv_qr_eigh_derivatives(x64):
    rng = np.random.default_rng(11)
    a = random(rng, (4, 3), np.float64)
    check_grads(la.pinv, (a,), order=1)
    check_grads(la.pinv, (a.T,), order=1)
    check_grads(lambda x: la.svd(x, compute_uv=False), (a,), order=1)
    check_grads(lambda x: la.norm(x, 2), (a,), order=1)
    check_grads(lambda x: la.qr(x)[1], (a,), order=1)
    h = hpd(rng, (3, 3), np.float64)
    check_grads(lambda x: la.eigh(x)[0], (h,), order=1)
    check_grads(lambda x: la.lstsq(x, np.ones(4))[0], (a,), order=1)


def test_vmap_of_decompositions_equals_loop():
    rng = np.random.default_rng(12)
    a = random(rng, (3, 4, 3), np.float32)
    h = hpd(rng, (3, 3, 3), np.float32)
    for f, x in [
        (lambda x: la.svd(x, compute_uv=False), a),
        (la.pinv, a),
        (la.matrix_rank, a),
        (lambda x: la.eigh(x)[0], h),
        (lambda x: la.qr(x)[1], a),
        (la.cholesky, h),
    ]:
        looped = np.stack([np.asarray(f(x[i])) for i in range(3)])
        np.testing.assert_allclose(np.asarray(vmap(f)(x)), looped, rtol=1e-4, atol=1e-4)


# --- polynomials built on linalg ------------------------------------------------------------


def test_polyfit_roots_poly_of_matrix():
    x = np.linspace(0, 1, 12).astype(np.float32)
    y = (3 * x**2 - x + 1 + 0.01 * np.sin(30 * x)).astype(np.float32)
    close(jnp.polyfit(x, y, 2), np.polyfit(x, y, 2), np.float32, scale=30)
    w = np.linspace(1, 2, 12).astype(np.float32)
    close(jnp.polyfit(x, y, 2, w=w), np.polyfit(x, y, 2, w=w), np.float32, scale=30)
    c, cov = jnp.polyfit(x, y, 2, cov=True)
    close(cov, np.polyfit(x, y, 2, cov=True)[1], np.float32, scale=30)
    c, resid, rank, s, rcond = jnp.polyfit(x, y, 2, full=True)
    assert int(rank) == 3
    y2 = np.stack([y, 2 * y], axis=1)
    close(jnp.polyfit(x, y2, 1), np.polyfit(x, y2, 1), np.float32, scale=30)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jnp.polyfit(x, y[:3], 1)

    p = np.array([0.0, 1.0, -6.0, 11.0, -6.0], np.float32)
    r = jnp.roots(p)
    assert r.dtype == np.complex64 and r.shape == (3,)
    close(np.sort_complex(np.asarray(r)), [1, 2, 3], np.complex64, scale=30)
    r = jit(lambda p: jnp.roots(p, strip_zeros=False))(p)
    close(np.sort_complex(np.asarray(r)[:3]), [1, 2, 3], np.complex64, scale=30)
    assert np.isnan(np.asarray(r)[3])
    assert jnp.roots(np.array([2.0], np.float32)).shape == (0,)

    m = general(np.random.default_rng(13), (3, 3), np.float32)
    close(jnp.poly(m), np.poly(m), np.complex64, scale=100)


def test_inv_and_solve_of_an_empty_batch():
    # JAX 0.10.2 returns empty results for a zero-size batch of matrices
    z = jnp.zeros((0, 3, 3))
    assert jnp.linalg.inv(z).shape == (0, 3, 3)
    assert jnp.linalg.solve(z, jnp.zeros((0, 3, 2))).shape == (0, 3, 2)
    assert jnp.linalg.inv(jnp.zeros((2, 0, 2, 2))).shape == (2, 0, 2, 2)


def test_solve_rejects_a_scalar_right_hand_side_with_value_error():
    # JAX 0.10.2 raises ValueError (from its vectorize) for solve(eye(3), 3.)
    with pytest.raises(ValueError):
        jnp.linalg.solve(jnp.eye(3), 3.0)


# --- known answers recorded from JAX 0.10.2 (linalg_jax_reference.json) ----------------------

_REFERENCE = linalg_reference.table("numpy.")


@pytest.mark.parametrize(
    ("case", "expected"), _REFERENCE, ids=[case["name"] for case, _ in _REFERENCE]
)
def test_matches_jax_reference(case, expected):
    """Structure, dtypes, weak types, values, errors and warnings as JAX gives them."""
    linalg_reference.check(linalg_reference.modjax_framework(), case, expected)
