"""modjax.scipy.linalg: factorizations, solves and matrix functions against numpy references.

No scipy: the references are numpy.linalg and the defining identities
(``P L U = a``, ``Z T Z^H = a``, ``sqrtm(a)^2 = a``, ``A X + X B = C``,
``expm`` against a Taylor series and ``expm(A) expm(-A) = I``), and the
special matrices against their definitions written as numpy loops.
"""

from __future__ import annotations

import math

import linalg_reference
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
import modjax.scipy.linalg as sl
from modjax.autodiff import jvp
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

TOL = 3e-4


def random(rng, shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def general(rng, shape, dtype=np.float32):
    return (random(rng, shape, dtype) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def hpd(rng, shape, dtype=np.float32):
    b = random(rng, shape, dtype)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(x, y, scale=1.0):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=TOL * scale, atol=TOL * scale)


def _h(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


cases = st.tuples(
    st.sampled_from([(), (2,)]),
    st.sampled_from([np.float32, np.complex64]),
    st.integers(0, 2**16),
)


@given(cases)
def test_cholesky_family(case):
    batch, dtype, seed = case
    rng = np.random.default_rng(seed)
    a = hpd(rng, batch + (4, 4), dtype)
    b = random(rng, batch + (4, 2), dtype)
    upper = sl.cholesky(a)
    close(_h(upper) @ np.asarray(upper), a, 30)
    close(sl.cholesky(a, lower=True), np.linalg.cholesky(a), 10)
    for lower in (False, True):
        close(sl.cho_solve(sl.cho_factor(a, lower=lower), b), np.linalg.solve(a, b), 10)
        close(sl.solve(a, b, assume_a="pos", lower=lower), np.linalg.solve(a, b), 10)
    close(sl.solve(a, b), np.linalg.solve(a, b), 10)


@given(cases, st.sampled_from([0, 1, 2, "N", "T", "C"]), st.booleans(), st.booleans())
def test_solve_triangular(case, trans, lower, unit):
    batch, dtype, seed = case
    rng = np.random.default_rng(seed)
    a = general(rng, batch + (4, 4), dtype)
    a = np.tril(a) if lower else np.triu(a)
    b = random(rng, batch + (4, 3), dtype)
    x = sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
    m = a.copy()
    if unit:
        m[..., np.arange(4), np.arange(4)] = 1
    op = {0: m, "N": m, 1: np.swapaxes(m, -1, -2), "T": np.swapaxes(m, -1, -2)}.get(trans, _h(m))
    close(op @ np.asarray(x), b, 10)
    if not batch:
        close(
            sl.solve_triangular(a, b[:, 0], trans=trans, lower=lower),
            np.asarray(sl.solve_triangular(a, b, trans=trans, lower=lower))[:, 0],
        )
    with pytest.raises(ValueError, match="Invalid 'trans' value"):
        sl.solve_triangular(a, b, trans=3)


@given(cases, st.sampled_from([(4, 4), (5, 3), (3, 5)]))
def test_lu(case, shape):
    batch, dtype, seed = case
    a = random(np.random.default_rng(seed), batch + shape, dtype)
    p, low, up = sl.lu(a)
    close(np.asarray(p) @ np.asarray(low) @ np.asarray(up), a, 10)
    np.testing.assert_array_equal(np.triu(np.asarray(low), 1), 0)
    np.testing.assert_array_equal(np.tril(np.asarray(up), -1), 0)
    pl, up2 = sl.lu(a, permute_l=True)
    close(np.asarray(pl) @ np.asarray(up2), a, 10)


@given(cases, st.sampled_from([0, 1, 2]))
def test_lu_factor_solve(case, trans):
    batch, dtype, seed = case
    rng = np.random.default_rng(seed)
    a = general(rng, batch + (4, 4), dtype)
    b = random(rng, batch + (4, 2), dtype)
    op = [a, np.swapaxes(a, -1, -2), _h(a)][trans]
    close(sl.lu_solve(sl.lu_factor(a), b, trans=trans), np.linalg.solve(op, b), 10)
    if not batch:
        close(sl.lu_solve(sl.lu_factor(a), b[:, 0], trans=trans), np.linalg.solve(op, b[:, 0]), 10)


def test_qr_svd_eigh_det_inv():
    rng = np.random.default_rng(1)
    a = random(rng, (5, 3))
    q, r = sl.qr(a)
    assert q.shape == (5, 5) and r.shape == (5, 3)
    close(np.asarray(q) @ np.asarray(r), a, 10)
    q, r = sl.qr(a, mode="economic")
    assert q.shape == (5, 3)
    (r,) = sl.qr(a, mode="r")
    assert r.shape == (5, 3)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        sl.qr(a, mode="bad")
    cq, r = sl.qr_multiply(a, np.eye(3, dtype=np.float32), mode="left")
    close(np.asarray(cq) @ np.asarray(r), a, 10)
    # Column pivoting: a[:, p] = q r (scipy's convention, JAX's geqp3 lowering).
    q, r, p = sl.qr(a, pivoting=True)
    assert q.shape == (5, 5) and r.shape == (5, 3) and p.dtype == np.int32
    close(np.asarray(q) @ np.asarray(r), a[:, np.asarray(p)], 10)
    r_only, p_only = sl.qr(a, mode="r", pivoting=True)
    np.testing.assert_array_equal(p_only, p)
    cq, r, p = sl.qr_multiply(a, np.eye(3, dtype=np.float32), mode="left", pivoting=True)
    close(np.asarray(cq) @ np.asarray(r), a[:, np.asarray(p)], 10)
    close(sl.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), 10)
    h = hpd(rng, (4, 4))
    w, v = sl.eigh(h)
    close(w, np.linalg.eigvalsh(h), 30)
    # JAX symmetrizes the input: a triangle alone is the matrix (tril + tril^H) / 2.
    lower_only = np.tril(h)
    symmetrized = (lower_only + lower_only.T) / 2
    close(sl.eigh(lower_only, eigvals_only=True), np.linalg.eigvalsh(symmetrized), 30)
    close(sl.eigh(lower_only, lower=False, eigvals_only=True), np.linalg.eigvalsh(symmetrized), 30)
    with pytest.raises(NotImplementedError, match="b=None"):
        sl.eigh(h, h)
    m = general(rng, (4, 4))
    close(sl.det(m), np.linalg.det(m), 100)
    close(sl.inv(m), np.linalg.inv(m), 10)


def test_schur_hessenberg_rsf2csf():
    m = general(np.random.default_rng(2), (2, 4, 4))
    t, z = sl.schur(m)
    close(np.asarray(z) @ np.asarray(t) @ _h(z), m, 30)
    tc, zc = sl.schur(m, output="complex")
    close(np.asarray(zc) @ np.asarray(tc) @ _h(zc), m, 30)
    np.testing.assert_array_equal(np.tril(np.asarray(tc), -1), 0)
    h, q = sl.hessenberg(m, calc_q=True)
    close(np.asarray(q) @ np.asarray(h) @ _h(q), m, 30)
    np.testing.assert_array_equal(np.tril(np.asarray(h), -2), 0)
    with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex'"):
        sl.schur(m, output="bad")
    t2, z2 = sl.rsf2csf(np.asarray(t, np.float64).astype(np.float32), z)
    close(np.asarray(z2) @ np.asarray(t2) @ _h(z2), m, 30)


def _expm_taylor(a, terms=40):
    out, term = np.eye(a.shape[-1]), np.eye(a.shape[-1])
    for k in range(1, terms):
        term = term @ a / k
        out = out + term
    return out


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.0, 3.0])
def test_expm(scale):
    a = random(np.random.default_rng(3), (4, 4)) * scale
    close(sl.expm(a), _expm_taylor(a.astype(np.float64), 80), 10 * max(1, scale**2))
    close(np.asarray(sl.expm(a)) @ np.asarray(sl.expm(-a)), np.eye(4), 10 * max(1, scale**2))
    batch = np.stack([a, 2 * a])
    close(sl.expm(batch)[1], sl.expm(2 * a), 10)
    with pytest.raises(ValueError, match="Expected A to be a"):
        sl.expm(np.ones(3))


def test_expm_double_precision_frechet_and_grads():
    with enable_x64(True):
        a = random(np.random.default_rng(4), (3, 3), np.float64)
        close(sl.expm(a), _expm_taylor(a, 80), 1e-3)
        e = random(np.random.default_rng(5), (3, 3), np.float64)
        value, frechet = sl.expm_frechet(a, e)
        ref = jvp(sl.expm, (a,), (e,))[1]
        close(frechet, ref, 1e-3)
        eps = 1e-6
        fd = (_expm_taylor(a + eps * e, 80) - _expm_taylor(a - eps * e, 80)) / (2 * eps)
        close(frechet, fd, 0.1)
        check_grads(sl.expm, (a,), order=1)
        with pytest.raises(ValueError, match="expected A and E to be the same shape"):
            sl.expm_frechet(a, e[:2, :2])


def test_sqrtm_funm_polar_sylvester():
    rng = np.random.default_rng(6)
    h = hpd(rng, (4, 4))
    root = np.asarray(sl.sqrtm(h))
    close(root @ root, h, 100)
    m = general(rng, (4, 4)) * 0.25
    close(sl.funm(m, jnp.exp), sl.expm(m), 30)
    a = random(rng, (5, 3))
    for side in ("right", "left"):
        method = "svd" if side == "left" else "qdwh"
        u, p = sl.polar(a if side == "right" else a.T, side=side, method=method)
        recon = np.asarray(u) @ np.asarray(p) if side == "right" else np.asarray(p) @ np.asarray(u)
        close(recon, a if side == "right" else a.T, 10)
    A, B = general(rng, (3, 3)), general(rng, (2, 2))
    C = random(rng, (3, 2))
    for method in ("schur", "eigen"):
        X = np.asarray(sl.solve_sylvester(A, B, C, method=method))
        close(A @ X + X @ B, C, 10)
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        sl.solve_sylvester(A, A, C)


def test_eigh_tridiagonal():
    rng = np.random.default_rng(7)
    d, e = random(rng, (6,)), random(rng, (5,))
    dense = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    close(sl.eigh_tridiagonal(d, e, eigvals_only=True), np.linalg.eigvalsh(dense), 10)
    close(
        sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        np.linalg.eigvalsh(dense)[1:4],
        10,
    )
    with pytest.raises(TypeError, match="same dtype"):
        sl.eigh_tridiagonal(d, e.astype(np.complex64), eigvals_only=True)


def test_eigh_tridiagonal_eigenvectors_jit_vmap():
    rng = np.random.default_rng(8)
    d, e = random(rng, (2, 5)), random(rng, (2, 4))
    w, v = map(np.asarray, sl.eigh_tridiagonal(d[0], e[0]))
    dense = np.diag(d[0]) + np.diag(e[0], 1) + np.diag(e[0], -1)
    close(dense @ v, v * w, 10)  # T v = v diag(w), orthonormal columns
    close(v.T @ v, np.eye(5), 10)
    jitted = jit(lambda a, b: sl.eigh_tridiagonal(a, b))(d[0], e[0])
    close(jitted[1], v)  # the same start vectors (random.key(42)) under jit
    batched = vmap(lambda a, b: sl.eigh_tridiagonal(a, b))(d, e)
    for i in range(2):
        close(batched[1][i], sl.eigh_tridiagonal(d[i], e[i])[1])


def test_polar_qdwh_matches_svd_method():
    a = random(np.random.default_rng(9), (2, 4, 3))
    u, p = sl.polar(a)  # QDWH, batched by vectorize
    u_svd, p_svd = sl.polar(a, method="svd")
    close(u, u_svd, 10)
    close(p, p_svd, 10)
    u_left, p_left = sl.polar(np.swapaxes(a, -1, -2), side="left")
    close(np.asarray(p_left) @ np.asarray(u_left), np.swapaxes(a, -1, -2), 10)


def test_special_matrices():
    c, r = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 6.0, 7.0])
    toe = np.array([[c[i - j] if i >= j else r[j - i] for j in range(4)] for i in range(3)])
    close(sl.toeplitz(c, r), toe)
    close(sl.toeplitz(c), np.array([[c[abs(i - j)] for j in range(3)] for i in range(3)]))
    close(vmap(sl.toeplitz)(np.stack([c, 2 * c]), np.stack([r, r]))[1], sl.toeplitz(2 * c, r))
    v = np.concatenate([c, r[1:]])
    close(sl.hankel(c, r), np.array([[v[i + j] for j in range(4)] for i in range(3)]))
    close(sl.circulant(c), np.array([[c[(i - j) % 3] for j in range(3)] for i in range(3)]))
    blocks = sl.block_diag(np.ones((2, 2)), np.array(3.0), np.array([[4.0, 5.0]]))
    close(blocks, [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4, 5]])
    close(sl.companion(np.array([1.0, -6.0, 11.0, -6.0])), [[6, -11, 6], [1, 0, 0], [0, 1, 0]])
    close(sl.leslie(np.array([0.1, 2.0]), np.array([0.5])), [[0.1, 2.0], [0.5, 0.0]])
    close(sl.fiedler(np.array([1.0, 4.0, 2.0])), [[0, 3, 1], [3, 0, 2], [1, 2, 0]])
    fc = np.asarray(sl.fiedler_companion(np.array([1.0, -6.0, 11.0, -6.0])))
    close(np.sort(np.linalg.eigvals(fc).real), [1, 2, 3], 30)
    n = 4
    close(sl.hilbert(n), [[1 / (i + j + 1) for j in range(n)] for i in range(n)])
    close(np.asarray(sl.invhilbert(n)) @ np.asarray(sl.hilbert(n)), np.eye(n), 100)
    close(np.asarray(sl.invpascal(n)) @ np.asarray(sl.pascal(n)), np.eye(n), 10)
    binomials = [[math.comb(i, j) for j in range(n)] for i in range(n)]
    close(sl.pascal(n, kind="lower"), binomials, 10)
    hm = np.asarray(sl.helmert(n, full=True))
    close(hm @ hm.T, np.eye(n))
    had = np.asarray(sl.hadamard(n))
    np.testing.assert_array_equal(had @ had.T, n * np.eye(n))
    close(sl.dft(n), np.fft.fft(np.eye(n)))
    close(sl.dft(n, scale="sqrtn"), np.fft.fft(np.eye(n)) / 2)
    a = np.array([1.0, 2.0, 3.0])
    x = np.array([1.0, -1.0, 0.5, 2.0])
    for mode in ("full", "same", "valid"):
        close(np.asarray(sl.convolution_matrix(a, 4, mode)) @ x, np.convolve(a, x, mode))
    with pytest.raises(ValueError, match="n must be a positive power of 2"):
        sl.hadamard(3)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        sl.block_diag(np.ones((1, 1, 1)))


# --- known answers recorded from JAX 0.10.2 (linalg_jax_reference.json) ----------------------

_REFERENCE = linalg_reference.table("scipy.")


@pytest.mark.parametrize(
    ("case", "expected"), _REFERENCE, ids=[case["name"] for case, _ in _REFERENCE]
)
def test_matches_jax_reference(case, expected):
    """Structure, dtypes, weak types, values, errors and warnings as JAX gives them."""
    linalg_reference.check(linalg_reference.modjax_framework(), case, expected)
