"""modjax.lax.linalg: decompositions against numpy.linalg and their identities.

Inputs are generated well conditioned (SPD for Cholesky, diagonally dominant
for solves, distinct eigenvalues where derivatives need them) over a small
pool of batch shapes and sizes, 0 and 1 included, so that compiled programs
are shared between examples. Checked: reconstruction identities (``L L^H = A``,
``P A = L U``, ``Q R = A`` with orthonormal ``Q``, ``U diag(s) V^H = A``,
``A v = w v``), values against numpy, every dtype JAX accepts on CPU, ``vmap``
against a loop, ``jit`` against eager, ``check_grads`` of every differentiable
primitive (float64), and JAX 0.10's errors for bad shapes and dtypes.
"""

from __future__ import annotations

import linalg_reference
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

L = lax.linalg

BATCHES = [(), (2,), (0,), (1, 2)]
SIZES = [0, 1, 3]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4}

batches = st.sampled_from(BATCHES)
sizes = st.sampled_from(SIZES)
seeds = st.integers(0, 2**16)
few = settings(max_examples=5, deadline=None)


@pytest.fixture(autouse=True, scope="module")
def _x64():
    # x64 on, so that float64/complex128 are honoured; float32 inputs stay float32.
    # Once per module: every switch of enable_x64 clears all compiled programs.
    with enable_x64(True):
        yield


def _tol(dtype):
    return TOL.get(np.dtype(dtype), 1e-10)


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _eye(n, dtype):
    return np.eye(n, dtype=dtype)


def _spd(rng, shape, dtype):
    a = _random(rng, shape, dtype)
    n = shape[-1]
    return (a @ _h(a) / max(n, 1) + _eye(n, dtype)).astype(dtype)


def _hermitian(rng, shape, dtype):
    a = _random(rng, shape, dtype)
    return ((a + _h(a)) / 2).astype(dtype)


def _close(x, y, dtype):
    tol = _tol(dtype)
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol * 10, atol=tol * 10)


# --- factorizations: identities and numpy -------------------------------------------------------


@few
@given(batches, sizes, st.sampled_from(DTYPES), seeds)
def test_cholesky(batch, n, dtype, seed):
    a = _spd(np.random.default_rng(seed), (*batch, n, n), dtype)
    c = np.asarray(L.cholesky(a))
    assert c.dtype == dtype and c.shape == a.shape
    _close(c @ _h(c), a, dtype)
    _close(c, np.linalg.cholesky(a) if a.size else c, dtype)
    np.testing.assert_array_equal(np.triu(c, 1), 0)


def test_cholesky_not_positive_definite_gives_nans():
    a = np.array([[[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 1.0]]], np.float32)
    c = np.asarray(L.cholesky(a))
    # NaNs in the lower triangle (the upper one is zeroed afterwards, as in JAX).
    assert np.isnan(c[0][np.tril_indices(2)]).all() and np.isfinite(c[1]).all()


TRSM_CASES = [
    {"left_side": True, "lower": True},
    {"left_side": False, "lower": False, "transpose_a": True},
    {"left_side": True, "lower": False, "transpose_a": True, "conjugate_a": True},
    {"left_side": False, "lower": True, "unit_diagonal": True},
]


def _op(a, lower, transpose_a=False, conjugate_a=False, unit_diagonal=False, **_):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diagonal(t)) + np.eye(a.shape[-1])
    if conjugate_a:
        t = np.conj(t)
    return t.T if transpose_a else t


@few
@given(st.sampled_from(TRSM_CASES), st.sampled_from([np.float32, np.complex128]), seeds)
def test_triangular_solve(kw, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (_random(rng, (3, 3), dtype) + 4 * _eye(3, dtype)).astype(dtype)
    b = _random(rng, (3, 2) if kw["left_side"] else (2, 3), dtype)
    x = np.asarray(L.triangular_solve(a, b, **kw))
    op = _op(a, **kw)
    _close(op @ x if kw["left_side"] else x @ op, b, dtype)
    # A vector right-hand side (one rank less than a).
    v = np.asarray(L.triangular_solve(a, b[:, 0] if kw["left_side"] else b[0], **kw))
    _close(v, x[:, 0] if kw["left_side"] else x[0], dtype)


def _permutation_loop(pivots, m):
    perm = np.arange(m)
    for i, j in enumerate(pivots):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


@few
@given(batches, sizes, sizes, st.sampled_from(DTYPES), seeds)
def test_lu(batch, m, n, dtype, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, n), dtype)
    lu, pivots, perm = map(np.asarray, L.lu(a))
    k = min(m, n)
    assert lu.shape == a.shape and pivots.shape == (*batch, k) and perm.shape == (*batch, m)
    assert pivots.dtype == perm.dtype == np.int32
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a, perm[..., :, None], axis=-2)
    _close(lower @ upper, permuted, dtype)
    for idx in np.ndindex(*batch):
        np.testing.assert_array_equal(perm[idx], _permutation_loop(pivots[idx], m))


def test_lu_pivots_to_permutation():
    pivots = np.array([[2, 2, 3], [1, 4, 2], [0, 1, 2]], np.int32)
    perm = np.asarray(L.lu_pivots_to_permutation(pivots, 5))
    assert perm.dtype == np.int32
    for row, p in zip(pivots, perm, strict=True):
        np.testing.assert_array_equal(p, _permutation_loop(row, 5))


@few
@given(batches, sizes, sizes, st.sampled_from(DTYPES), st.booleans(), seeds)
def test_qr(batch, m, n, dtype, full_matrices, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, n), dtype)
    q, r = map(np.asarray, L.qr(a, full_matrices=full_matrices))
    k = m if full_matrices else min(m, n)
    assert q.shape == (*batch, m, k) and r.shape == (*batch, k, n)
    _close(q @ r, a, dtype)
    _close(_h(q) @ q, np.broadcast_to(_eye(k, dtype), (*batch, k, k)), dtype)
    np.testing.assert_array_equal(np.tril(r, -1), 0)


@few
@given(batches, sizes, sizes, st.sampled_from(DTYPES), st.booleans(), seeds)
def test_qr_pivoting(batch, m, n, dtype, full_matrices, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, n), dtype)
    q, r, p = map(np.asarray, L.qr(a, pivoting=True, full_matrices=full_matrices))
    k = m if full_matrices else min(m, n)
    assert q.shape == (*batch, m, k) and r.shape == (*batch, k, n) and p.shape == (*batch, n)
    assert p.dtype == np.int32
    if m == 0:  # nothing to factor: JAX's p is all zeros
        np.testing.assert_array_equal(p, 0)
        return
    np.testing.assert_array_equal(np.sort(p, axis=-1), np.broadcast_to(np.arange(n), p.shape))
    _close(q @ r, np.take_along_axis(a, p[..., None, :], -1), dtype)
    _close(_h(q) @ q, np.broadcast_to(_eye(k, dtype), (*batch, k, k)), dtype)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert np.all(diag[..., :-1] >= diag[..., 1:] * (1 - 1e-4))  # rank revealing


# Permutations JAX 0.10.2 gives (recorded with jax.lax.linalg.qr(..., pivoting=True)).
_PIVOT_RNG = np.random.RandomState(1)
PIVOT_CASES = [
    (np.random.RandomState(0).randn(4, 3), [0, 2, 1]),
    (np.arange(12.0).reshape(3, 4) ** 2, [3, 0, 2, 1]),
    (_PIVOT_RNG.randn(2, 5, 3).astype(np.float32), [[2, 0, 1], [0, 2, 1]]),
    ((_PIVOT_RNG.randn(3, 5) + 1j * _PIVOT_RNG.randn(3, 5)).astype(np.complex64), [2, 3, 1, 0, 4]),
]


@pytest.mark.parametrize("case", range(len(PIVOT_CASES)))
def test_qr_pivoting_matches_jax(case):
    a, expected = PIVOT_CASES[case]
    q, r, p = jit(lambda x: L.qr(x, pivoting=True, full_matrices=False))(a)
    np.testing.assert_array_equal(p, expected)
    _close(
        np.asarray(q) @ np.asarray(r),
        np.take_along_axis(a, np.asarray(p)[..., None, :], -1),
        a.dtype,
    )


def test_geqp3_keeps_columns_marked_first():
    a = np.diag([1.0, 5.0, 3.0])
    _, jpvt, taus = L.geqp3(a, np.array([0, 0, 0], np.int32))
    np.testing.assert_array_equal(jpvt, [2, 3, 1])  # 1-based, largest column first
    _, jpvt, _ = L.geqp3(a, np.array([1, 0, 0], np.int32))
    np.testing.assert_array_equal(jpvt, [1, 2, 3])
    assert taus.shape == (3,)


@few
@given(batches, sizes, st.sampled_from([np.float32, np.float64]), st.booleans(), seeds)
def test_symmetric_product(batch, m, dtype, symmetrize, seed):
    rng = np.random.default_rng(seed)
    a = _random(rng, (*batch, m, 2), dtype)
    c = _hermitian(rng, (*batch, m, m), dtype)
    out = np.asarray(L.symmetric_product(a, c, alpha=2.0, beta=-0.5, symmetrize_output=symmetrize))
    assert out.dtype == dtype
    _close(out, 2.0 * a @ np.swapaxes(a, -1, -2) - 0.5 * c, dtype)


def test_cholesky_update_is_the_factor_of_the_updated_matrix():
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float64):
        spd = _spd(rng, (4, 4), dtype)
        r = np.linalg.cholesky(spd).T.astype(dtype)
        w = _random(rng, (4,), dtype)
        updated = np.asarray(jit(L.cholesky_update)(r, w))
        assert updated.dtype == dtype
        # Givens rotations keep the diagonal positive: numpy's factor, transposed.
        expected = np.linalg.cholesky(spd + np.outer(w, w)).T
        _close(np.triu(updated), expected, dtype)
        _close(np.tril(updated, -1), 0, dtype)
    # JAX 0.10.2's float32 answer, entries below the diagonal included.
    r = np.linalg.cholesky(np.eye(3) * 2 + 0.1).T.astype(np.float32)
    got = L.cholesky_update(r, np.array([0.5, -0.2, 0.3], np.float32))
    jax_answer = [
        [1.5329709e00, -1.8457746e-09, 1.6308202e-01],
        [4.3102006e-09, 1.4628738e00, 2.7343437e-02],
        [-5.3711773e-09, -1.6595944e-09, 1.4705973e00],
    ]
    np.testing.assert_allclose(got, jax_answer, rtol=1e-6, atol=1e-12)


@few
@given(batches, st.sampled_from(DTYPES), st.booleans(), st.booleans(), seeds)
def test_ormqr_applies_q(batch, dtype, left, transpose, seed):
    rng = np.random.default_rng(seed)
    a = _random(rng, (*batch, 4, 3), dtype)
    reflectors, taus = L.geqrf(a)
    full = np.pad(np.asarray(reflectors), [(0, 0)] * len(batch) + [(0, 0), (0, 1)])
    q = np.asarray(L.householder_product(full, taus))  # the full 4 x 4 Q
    op = _h(q) if transpose else q
    c = _random(rng, (*batch, 4, 2) if left else (*batch, 2, 4), dtype)
    got = L.ormqr(reflectors, taus, c, left=left, transpose=transpose)
    _close(got, op @ c if left else c @ op, dtype)


def test_householder_product_is_numpys_q():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5, 3))
    reflectors, taus = L.geqrf(a)
    q = np.asarray(L.householder_product(reflectors, taus))
    expected = np.linalg.qr(a)[0]
    _close(np.abs(q), np.abs(expected), np.float64)
    _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)), np.float64)


@few
@given(batches, sizes, st.sampled_from(DTYPES), st.booleans(), seeds)
def test_eigh(batch, n, dtype, lower, seed):
    a = _hermitian(np.random.default_rng(seed), (*batch, n, n), dtype)
    v, w = map(np.asarray, L.eigh(a, lower=lower))
    assert w.dtype == np.finfo(dtype).dtype and v.dtype == dtype
    _close(a @ v, v * w[..., None, :].astype(dtype), dtype)
    _close(w, np.linalg.eigvalsh(a) if a.size else w, dtype)
    # Without symmetrize_input only the chosen triangle is read.
    noisy = np.tril(a) if lower else np.triu(a)
    w2 = np.asarray(L.eigh(noisy, lower=lower, symmetrize_input=False)[1])
    _close(w2, w, dtype)


@few
@given(batches, sizes, sizes, st.sampled_from(DTYPES), st.booleans(), seeds)
def test_svd(batch, m, n, dtype, full_matrices, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, n), dtype)
    u, s, vh = map(np.asarray, L.svd(a, full_matrices=full_matrices))
    k = min(m, n)
    assert s.shape == (*batch, k) and s.dtype == np.finfo(dtype).dtype
    assert u.shape == (*batch, m, m if full_matrices else k)
    assert vh.shape == (*batch, n if full_matrices else k, n)
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype)
    if a.size:
        _close(s, np.linalg.svd(a, compute_uv=False), dtype)
    _close(np.asarray(L.svd(a, compute_uv=False)), s, dtype)
    assert np.all(np.diff(s, axis=-1) <= 0)


@few
@given(batches, sizes, st.sampled_from(DTYPES), seeds)
def test_eig(batch, n, dtype, seed):
    a = _random(np.random.default_rng(seed), (*batch, n, n), dtype)
    w, vl, vr = map(np.asarray, L.eig(a))
    cdtype = np.result_type(dtype, np.complex64)
    assert w.dtype == vl.dtype == vr.dtype == cdtype
    _close(a @ vr, vr * w[..., None, :], dtype)
    _close(_h(vl) @ a, w[..., :, None] * _h(vl), dtype)
    if a.size:
        expected = np.linalg.eigvals(a)
        _close(np.sort_complex(w.reshape(-1, n)), np.sort_complex(expected.reshape(-1, n)), dtype)
    (only,) = L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    _close(only, w, dtype)


@few
@given(batches, st.sampled_from([1, 3]), st.sampled_from(DTYPES), seeds)
def test_schur_hessenberg_tridiagonal(batch, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = _random(rng, (*batch, n, n), dtype)
    t, q = map(np.asarray, L.schur(a))
    _close(q @ t @ _h(q), a, dtype)
    _close(_h(q) @ q, np.broadcast_to(_eye(n, dtype), (*batch, n, n)), dtype)
    np.testing.assert_array_equal(np.tril(t, -2), 0)
    t_only = L.schur(a, compute_schur_vectors=False)
    assert isinstance(t_only, list) and len(t_only) == 1  # JAX's [t]
    _close(np.asarray(t_only[0]), t, dtype)
    h, taus = map(np.asarray, L.hessenberg(a))
    assert taus.shape == (*batch, n - 1)
    if a.size:  # the Hessenberg form is similar to a
        eig_h = np.linalg.eigvals(np.triu(h, -1)).reshape(-1, n)
        _close(np.sort_complex(eig_h), np.sort_complex(np.linalg.eigvals(a).reshape(-1, n)), dtype)
    s = _hermitian(rng, (*batch, n, n), dtype)
    _, d, e, taus = map(np.asarray, L.tridiagonal(s))
    assert d.dtype == e.dtype == np.finfo(dtype).dtype and e.shape == (*batch, n - 1)
    if s.size:
        tri = np.zeros((*batch, n, n)) + d[..., None] * np.eye(n)
        idx = np.arange(n - 1)
        tri[..., idx + 1, idx] = e
        tri[..., idx, idx + 1] = e
        _close(np.linalg.eigvalsh(tri), np.linalg.eigvalsh(s), dtype)


def _tridiagonal_system(rng, batch, m, dtype):
    dl, d, du = (_random(rng, (*batch, m), dtype) for _ in range(3))
    d = (d + 4).astype(dtype)  # diagonally dominant
    b = _random(rng, (*batch, m, 2), dtype)
    return dl, d, du, b


def _dense(dl, d, du):
    m = d.shape[-1]
    a = d[..., None] * np.eye(m)
    idx = np.arange(m - 1)
    a[..., idx + 1, idx] = dl[..., 1:]
    a[..., idx, idx + 1] = du[..., :-1]
    return a


@few
@given(batches, sizes, st.sampled_from(DTYPES), st.booleans(), seeds)
def test_tridiagonal_solve(batch, m, dtype, perturb, seed):
    dl, d, du, b = _tridiagonal_system(np.random.default_rng(seed), batch, m, dtype)
    x = np.asarray(L.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb))
    assert x.dtype == dtype and x.shape == b.shape
    _close(_dense(dl, d, du) @ x, b, dtype)


def test_jit_equals_eager():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    for f in (L.lu, L.qr, L.svd, L.eig, lambda x: L.eigh(x + np.swapaxes(x, -1, -2))):
        for x, y in zip(jit(f)(a), f(a), strict=True):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_result_containers_are_jaxs():
    # JAX 0.10.2 returns the primitive's list from these, a tuple from the others.
    a = np.eye(3, dtype=np.float32)
    lists = (L.lu, L.eig, L.schur, L.hessenberg, L.tridiagonal, lambda x: lax.top_k(x[0], 2))
    assert all(type(f(a)) is list for f in lists)
    tuples = (L.qr, L.svd, L.eigh)
    assert all(type(f(a)) is tuple for f in tuples)


def test_batch_dims_are_native():
    # One custom call for the whole batch: the jaxpr holds one equation, no loop.
    a = np.ones((4, 2, 3, 3), np.float32)
    jaxpr = make_jaxpr(L.lu)(a).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["lu"]


# --- vmap equals a loop -------------------------------------------------------------------------


def _flat(out):
    return [np.asarray(x) for x in (out if isinstance(out, tuple | list) else [out])]


def _check_vmap(f, args, in_axes):
    out = _flat(vmap(f, in_axes=in_axes)(*args))
    size = next(x.shape[d] for x, d in zip(args, in_axes, strict=True) if d is not None)
    loop = [
        _flat(
            f(*[x if d is None else np.take(x, i, d) for x, d in zip(args, in_axes, strict=True)])
        )
        for i in range(size)
    ]
    for j, o in enumerate(out):
        np.testing.assert_allclose(o, np.stack([r[j] for r in loop]), rtol=1e-5, atol=1e-5)


rng0 = np.random.default_rng(7)
_A = rng0.standard_normal((3, 4, 4)).astype(np.float32)
_SPD = (_A @ np.swapaxes(_A, -1, -2) + 4 * np.eye(4)).astype(np.float32)
_SYM = (_A + np.swapaxes(_A, -1, -2)).astype(np.float32)
_B = rng0.standard_normal((4, 3, 2)).astype(np.float32)
_TRI = _tridiagonal_system(rng0, (3,), 4, np.float32)

VMAP_CASES = {
    "cholesky": (L.cholesky, (_SPD,), (0,)),
    "cholesky_axis1": (L.cholesky, (np.swapaxes(_SPD, 0, 1),), (1,)),
    "triangular_solve_b": (
        lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
        (_SPD[0], _B),
        (None, 1),
    ),
    "triangular_solve_a": (
        lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
        (_SPD, _B[:, 0]),
        (0, None),
    ),
    "lu": (L.lu, (_A,), (2,)),
    "pivots": (
        lambda p: L.lu_pivots_to_permutation(p, 5),
        (np.array([[2, 2, 3], [1, 4, 2]], np.int32),),
        (0,),
    ),
    "qr": (L.qr, (_A,), (0,)),
    "qr_pivoting": (lambda a: L.qr(a, pivoting=True), (_A,), (1,)),
    "householder_product": (L.householder_product, (_A[0], _A[:, 0, :2]), (None, 0)),
    "symmetric_product": (lambda a, c: L.symmetric_product(a, c, beta=2.0), (_A, _SYM), (0, 0)),
    "ormqr": (
        lambda c: L.ormqr(_A[0], _A[0, 0, :3], c, left=False),
        (_A,),
        (1,),
    ),
    "eigh": (L.eigh, (_SYM,), (0,)),
    "svd": (L.svd, (_A,), (1,)),
    "eig": (lambda a: L.eig(a)[0], (_A,), (0,)),
    "schur": (L.schur, (_A,), (0,)),
    "hessenberg": (L.hessenberg, (_A,), (0,)),
    "tridiagonal": (L.tridiagonal, (_SYM,), (0,)),
    "tridiagonal_solve": (L.tridiagonal_solve, _TRI, (0, 0, 0, 0)),
    "tridiagonal_solve_b": (
        L.tridiagonal_solve,
        (*(x[0] for x in _TRI[:3]), np.stack([_TRI[3][0]] * 2)),
        (None, None, None, 0),
    ),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_equals_loop(name):
    f, args, in_axes = VMAP_CASES[name]
    _check_vmap(f, args, in_axes)


# --- derivatives (float64) ----------------------------------------------------------------------

_rng = np.random.default_rng(3)
_X = _rng.standard_normal((2, 3, 3))
_Q = np.eye(3) + 0.3 * _rng.standard_normal((3, 3))
_DISTINCT = _Q @ np.diag([1.0, 2.0, 3.5]) @ np.linalg.inv(_Q)  # real, distinct eigenvalues
_XC = _rng.standard_normal((3, 3)) + 1j * _rng.standard_normal((3, 3))

GRAD_CASES = {
    "cholesky": (L.cholesky, (_X @ np.swapaxes(_X, -1, -2) + 3 * np.eye(3),), 2),
    "cholesky_complex": (lambda x: L.cholesky(x @ x.conj().T + 3 * np.eye(3)), (_XC,), 1),
    "triangular_solve": (
        lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
        (np.tril(_X) + 3 * np.eye(3), _X[:, :, :2]),
        2,
    ),
    "triangular_solve_right_t": (
        lambda a, b: L.triangular_solve(a, b, lower=False, transpose_a=True, conjugate_a=True),
        (np.triu(_XC) + 3 * np.eye(3), _XC[:2]),
        1,
    ),
    "lu": (lambda x: L.lu(x)[0], (_X,), 1),
    "lu_wide": (lambda x: L.lu(x)[0], (_X[0, :2],), 1),
    "qr": (L.qr, (_X,), 1),
    "qr_tall_full": (L.qr, (_rng.standard_normal((4, 2)),), 1),
    "qr_wide": (lambda x: L.qr(x, full_matrices=False), (_X[0, :2],), 1),
    "qr_complex": (L.qr, (_XC,), 1),
    "qr_pivoting": (lambda x: L.qr(x, pivoting=True)[:2], (_X,), 1),
    "qr_pivoting_wide": (
        lambda x: L.qr(x, pivoting=True, full_matrices=False)[:2],
        (_rng.standard_normal((2, 4)),),
        1,
    ),
    "eigh": (L.eigh, (_X + np.swapaxes(_X, -1, -2),), 1),
    "eigh_values": (lambda x: L.eigh(x)[1], (_X + np.swapaxes(_X, -1, -2),), 2),
    "eigh_complex_values": (lambda x: L.eigh(x)[1], (_XC,), 1),
    "svd": (lambda x: L.svd(x, full_matrices=False), (_rng.standard_normal((2, 4, 3)),), 1),
    "svd_wide": (lambda x: L.svd(x, full_matrices=False), (_rng.standard_normal((3, 4)),), 1),
    "svd_values": (lambda x: L.svd(x, compute_uv=False), (_X,), 2),
    "svd_complex_values": (lambda x: L.svd(x, compute_uv=False), (_XC,), 1),
    "eig_values": (
        lambda x: L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False),
        (_DISTINCT,),
        1,
    ),
    "eig_vectors": (lambda x: L.eig(x, enable_eigvec_derivs=True), (_DISTINCT,), 1),
    "eig_vectors_complex": (lambda x: L.eig(x, enable_eigvec_derivs=True), (_XC,), 1),
    "tridiagonal_solve": (
        L.tridiagonal_solve,
        tuple(x.astype(np.float64) for x in _tridiagonal_system(_rng, (2,), 4, np.float64)),
        2,
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name):
    f, args, order = GRAD_CASES[name]
    # Under jit a first-order derivative program compiles once instead of op by op (nested
    # jvps of a jit recompile per level, so second order runs eagerly).
    check_grads(jit(f) if order == 1 else f, args, order=order, modes=("fwd", "rev"))


def test_eigh_tangent_matches_perturbation_theory():
    a = np.diag([1.0, 2.0, 4.0])
    da = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    from modjax.autodiff import jvp

    (_, w), (dv, dw) = jvp(L.eigh, (a,), (da,))
    np.testing.assert_allclose(np.asarray(dw), [0.0, 0.0, 1.0], atol=1e-12)
    # dv[:, 0] = v1 * da[1, 0] / (w0 - w1) = -e1; dv[:, 1] = +e0.
    np.testing.assert_allclose(np.asarray(dv)[:, :2], [[0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])


def test_eig_vector_derivatives_need_opt_in():
    from modjax.autodiff import jvp

    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jvp(L.eig, (_DISTINCT,), (_DISTINCT,))


def test_svd_full_matrices_jvp_raises_for_non_square():
    from modjax.autodiff import jvp

    x = np.ones((3, 2))
    with pytest.raises(NotImplementedError, match="full matrices"):
        jvp(L.svd, (x,), (x,))


# --- errors (JAX 0.10's classes and messages) ---------------------------------------------------

ERRORS = [
    (lambda: L.lu(np.ones(3, np.float32)), TypeError, "Input 0 to lu must have rank at least 2"),
    (lambda: L.svd(np.ones(3, np.float32)), TypeError, "Input 0 to svd must have rank at least 2"),
    (lambda: L.qr(np.ones(3, np.float32)), TypeError, "Input 0 to qr must have rank at least 2"),
    (lambda: L.eig(np.ones((3, 4), np.float32)), ValueError, "must be a square matrix"),
    (lambda: L.schur(np.ones((3, 4), np.float32)), ValueError, "must be a square matrix"),
    (lambda: L.hessenberg(np.ones((3, 4))), ValueError, r"must have shape \[..., n, n\]"),
    (lambda: L.tridiagonal(np.ones((0, 0))), ValueError, "must be a square matrix"),
    (
        lambda: L.cholesky(np.ones((3, 4), np.float32), symmetrize_input=False),
        ValueError,
        "The input to cholesky must be a square matrix. Got shape",
    ),
    (
        lambda: L.eigh(np.ones((3, 4), np.float32), symmetrize_input=False),
        ValueError,
        "Argument to symmetric eigendecomposition must have shape",
    ),
    (
        lambda: L.cholesky(np.eye(3, dtype=np.int32), symmetrize_input=False),
        TypeError,
        "cholesky does not accept dtype int32",
    ),
    (
        lambda: L.triangular_solve(np.ones((3, 4)), np.ones((3, 4))),
        ValueError,
        "The first input to triangular_solve must be a square matrix",
    ),
    (
        lambda: L.triangular_solve(np.ones((3, 3)), np.ones((3, 4))),
        ValueError,
        r"Incompatible shapes for arguments to triangular_solve: \(3, 3\) and \(3, 4\)",
    ),
    (
        lambda: L.triangular_solve(np.ones((3, 3)), np.ones((2, 3, 4)), left_side=True),
        TypeError,
        "must have the same number of batch dimensions",
    ),
    (
        lambda: L.triangular_solve(np.ones((3, 3), np.float32), np.ones((3, 3), np.float16)),
        TypeError,
        "requires arguments to have the same dtypes, got float32, float16",
    ),
    (
        lambda: L.lu_pivots_to_permutation(np.ones(3, np.int32), 2),
        ValueError,
        "Output permutation size 2 has to exceed the trailing dimension of the pivots",
    ),
    (
        lambda: L.lu_pivots_to_permutation(np.ones(3, np.float32), 4),
        TypeError,
        "does not accept dtype float32 at position 0",
    ),
    (
        lambda: L.householder_product(np.ones((3, 4)), np.ones(2)),
        ValueError,
        "must have at least as many rows as columns",
    ),
    (
        lambda: L.householder_product(np.ones((4, 3)), np.ones(4)),
        ValueError,
        "must not have more rows than the minimum",
    ),
    (
        lambda: L.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(4), np.ones((3, 1))),
        TypeError,
        "all diagonal arguments have the same shape",
    ),
    (
        lambda: L.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(3), np.ones((4, 1))),
        TypeError,
        "leading ndim-1 dimensions of b",
    ),
    (
        lambda: L.svd(np.ones((3, 4)), subset_by_index=(0, 1)),
        ValueError,
        "full_matrices and subset_by_index cannot both be set",
    ),
    (
        lambda: L.svd(np.ones((3, 4)), full_matrices=False, subset_by_index=(0, 1)),
        NotImplementedError,
        "subset_by_index not implemented",
    ),
    (
        lambda: L.eigh(np.ones((3, 3)), subset_by_index=(0, 1)),
        NotImplementedError,
        "subset_by_index not supported",
    ),
    (
        lambda: L.geqp3(np.ones((3, 3)), np.zeros(3, np.float32)),
        TypeError,
        "geqp3 does not accept dtype float32 at position 1",
    ),
    (lambda: L.geqp3(np.ones((3, 3)), np.zeros(2, np.int32)), ValueError, "one entry per column"),
    (
        lambda: L.symmetric_product(np.ones((2, 3)), np.ones((3, 3))),
        ValueError,
        "symmetric_update expects a rectangular matrix",
    ),
    (
        lambda: L.symmetric_product(np.ones((3, 3), np.complex64), np.ones((3, 3), np.complex64)),
        TypeError,
        "symmetric_product does not accept dtype complex64",
    ),
    (
        lambda: L.cholesky_update(np.eye(3), np.ones(2)),
        ValueError,
        "Rank-1 update to Cholesky decomposition",
    ),
    (
        lambda: L.cholesky_update(np.ones((2, 3, 3)), np.ones((2, 3))),
        TypeError,
        "must have a rank of exactly 2",
    ),
    (
        lambda: vmap(L.cholesky_update)(np.ones((2, 3, 3)), np.ones((2, 3))),
        NotImplementedError,
        "Batching rule for 'cholesky_update' not implemented",
    ),
    (
        lambda: L.ormqr(np.ones((4, 3)), np.ones(3), np.ones((3, 4))),
        ValueError,
        "ormqr with left=True expects c to have the same number of rows",
    ),
    (
        lambda: L.ormqr(np.ones((4, 3)), np.ones(3), np.ones((3, 3)), left=False),
        ValueError,
        "ormqr with left=False expects c to have the same number of columns",
    ),
    (lambda: L.ormqr(np.ones((4, 3)), np.ones(4), np.ones((4, 4))), ValueError, "at most"),
    (lambda: L.schur(np.ones((3, 3)), sort_eig_vals=True), NotImplementedError, "sort"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    f, kind, message = ERRORS[case]
    with pytest.raises(kind, match=message):
        f()


# --- known answers recorded from JAX 0.10.2 (linalg_jax_reference.json) ----------------------

_REFERENCE = linalg_reference.table("lax.")


@pytest.mark.parametrize(
    ("case", "expected"), _REFERENCE, ids=[case["name"] for case, _ in _REFERENCE]
)
def test_matches_jax_reference(case, expected):
    """Structure, dtypes, weak types, values, errors and warnings as JAX gives them."""
    linalg_reference.check(linalg_reference.modjax_framework(), case, expected)
