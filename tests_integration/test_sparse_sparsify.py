"""modjax.experimental.sparse's sparsify, linalg.spsolve and linalg.lobpcg_standard.

sparsify is checked against the dense computation, and the kind of each result (BCOO
or dense, its nse and index flags) and the errors against the answers JAX 0.10.2
gives, written literally. spsolve is checked against scipy, lobpcg_standard against
numpy.linalg.eigh. Matrices are few and small so that the compiled programs stay few.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental import sparse
from modjax.experimental.sparse import BCOO, SparseTracer, linalg, sparsify
from modjax.experimental.sparse.transform import todense_p

A = np.array([[0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]], np.float32)
V = np.arange(4.0, dtype=np.float32)
D = A + 1


def matrix(values=A):
    return BCOO.fromdense(values)


def duplicated():
    """A BCOO of A's pattern that does not promise unique or sorted indices."""
    data = jnp.array([1.0, 2.0, 3.0, 4.0])
    indices = jnp.array([[0, 1], [0, 3], [2, 0], [2, 2]])
    return BCOO((data, indices), shape=(3, 4))


def dense(x):
    return np.asarray(x.todense() if isinstance(x, BCOO) else x)


# name -> (f, JAX 0.10.2's result: "dense" or (nse, indices_sorted, unique_indices))
CASES = {
    "matvec": (lambda M: M @ V, "dense"),
    "vecmat": (lambda M: jnp.arange(3.0) @ M, "dense"),
    "matmat": (lambda M: M @ D.T, "dense"),
    "transposed_matvec": (lambda M: M.T @ jnp.arange(3.0), "dense"),
    "scale": (lambda M: 2 * M, (4, True, True)),
    "transpose": (lambda M: M.T, (4, False, True)),
    "sin": (jnp.sin, (4, True, True)),
    "neg": (lambda M: -M, (4, True, True)),
    "abs": (jnp.abs, (4, True, True)),
    "tanh": (jnp.tanh, (4, True, True)),
    "square": (jnp.square, (4, True, True)),
    "cube": (lambda M: lax.integer_pow(M, 3), (4, True, True)),
    "sum": (lambda M: M.sum(), "dense"),
    "sum_rows": (lambda M: M.sum(0), (4, False, False)),
    "sum_cols": (lambda M: M.sum(1), (4, False, False)),
    "mean": (lambda M: M.mean(), "dense"),
    "times_dense": (lambda M: M * D, (4, True, True)),
    "times_row": (lambda M: M * V, (4, True, True)),
    "divide": (lambda M: M / 2, (4, True, True)),
    "power": (lambda M: M**2, (4, True, True)),
    "add_self": (lambda M: M + M, (4, True, True)),
    "add_sin": (lambda M: M + jnp.sin(M), (4, True, True)),
    "sub_self": (lambda M: M - M, (4, True, True)),
    "mul_self": (lambda M: M * M, (4, True, True)),
    "add_dense": (lambda M: M + D, "dense"),
    "astype": (lambda M: M.astype(jnp.int32), (4, True, True)),
    "identity": (lambda M: M, (4, True, True)),
    "jit": (lambda M: modjax.jit(lambda a: 2 * a)(M), (4, True, True)),
    "jit_matvec": (lambda M: modjax.jit(lambda a: a @ V)(M), "dense"),
    "nested_jit": (
        lambda M: modjax.jit(lambda a: modjax.jit(jnp.sin)(a) * 3)(M),
        (4, True, True),
    ),
    "cond": (lambda M: lax.cond(True, lambda a: a, lambda a: -a, M), (4, True, True)),
    "cond_dense": (lambda M: lax.cond(False, lambda a: a @ V, lambda a: (2 * a) @ V, M), "dense"),
    "while": (
        lambda M: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, M))[1],
        (4, True, True),
    ),
    "fori": (lambda M: lax.fori_loop(0, 3, lambda i, c: c * 2, M), (4, True, True)),
    "scan": (lambda M: lax.scan(lambda c, _: (c * 2, None), M, None, length=2)[0], (4, True, True)),
}


@settings(max_examples=examples(12), deadline=None)
@given(st.sampled_from(sorted(CASES)), st.booleans(), st.integers(0, 3))
def test_sparsify_matches_dense(name, use_tracer, seed):
    f, kind = CASES[name]
    values = A * np.random.default_rng(seed).integers(1, 4, A.shape).astype(np.float32)
    out = sparsify(f, use_tracer=use_tracer)(matrix(values))
    np.testing.assert_allclose(dense(out), np.asarray(f(jnp.asarray(values))), rtol=1e-5)
    if kind == "dense":
        assert not isinstance(out, BCOO)
    else:
        assert isinstance(out, BCOO)
        assert (out.nse, out.indices_sorted, out.unique_indices) == kind


def test_sparsify_layouts_recorded_from_jax():
    # Unique indices are not promised: nonlinear maps deduplicate first (new indices),
    # so adding the result concatenates the two patterns.
    cases = {
        lambda M: M + jnp.sin(M): (8, False, False),
        lambda M: M + 2 * M: (4, False, False),
        lambda M: M - jnp.sin(M): (8, False, False),
        jnp.sin: (4, True, True),
        lambda M: M.T: (4, False, False),
        lambda M: -M: (4, False, False),
    }
    for f, layout in cases.items():
        out = sparsify(f)(duplicated())
        assert (out.nse, out.indices_sorted, out.unique_indices) == layout
        np.testing.assert_allclose(dense(out), np.asarray(f(jnp.asarray(A))), rtol=1e-5)
    batched = BCOO.fromdense(jnp.arange(12.0).reshape(2, 2, 3) % 4, n_batch=1)
    expected = np.arange(12.0).reshape(2, 2, 3) % 4
    out = sparsify(lambda M: M.transpose((0, 2, 1)))(batched)
    assert (out.nse, out.n_batch) == (5, 1)
    np.testing.assert_array_equal(dense(out), expected.transpose(0, 2, 1))
    out = sparsify(lambda M: M.sum(0))(batched)
    assert (out.nse, out.n_batch) == (10, 0)
    np.testing.assert_array_equal(dense(out), expected.sum(0))
    out = sparsify(lambda M: M @ jnp.ones(3))(batched)
    np.testing.assert_array_equal(out, expected.sum(2))


def test_sparsify_pytrees_kwargs_and_constants():
    def f(mats, v, *, scale):
        return {"y": mats[0] @ v * scale, "m": mats[1], "c": 3.0}

    out = sparsify(f)((matrix(), matrix()), V, scale=2.0)
    np.testing.assert_allclose(out["y"], 2 * A @ V)
    assert isinstance(out["m"], BCOO) and float(out["c"]) == 3.0
    out = sparsify(lambda M, x: M @ x)(matrix(), np.ones(4, np.float32))
    np.testing.assert_allclose(out, A.sum(1))


def test_jit_and_vmap_of_sparsify():
    out = modjax.jit(sparsify(lambda M: jnp.sin(M) * 2))(matrix())
    assert isinstance(out, BCOO) and out.nse == 4
    np.testing.assert_allclose(dense(out), np.sin(A) * 2, rtol=1e-6)
    np.testing.assert_allclose(modjax.jit(sparsify(lambda M: M @ V))(matrix()), A @ V)
    out = modjax.vmap(sparsify(lambda M, x: M @ x), in_axes=(None, 0))(matrix(), jnp.ones((2, 4)))
    np.testing.assert_allclose(out, np.stack([A.sum(1)] * 2))


def test_sparse_tracer():
    seen = []

    def f(M):
        seen.append(M)
        return M @ V

    np.testing.assert_allclose(sparsify(f, use_tracer=True)(matrix()), A @ V)
    assert isinstance(seen[0], SparseTracer) and isinstance(seen[0].value, BCOO)
    assert seen[0].shape == (3, 4) and seen[0].dtype == np.float32
    with pytest.raises(TypeError, match="SparseTrace"):
        SparseTracer(None, value=matrix())


def test_todense_primitive():
    tree = modjax.tree_util.tree_structure(0)
    out = sparsify(lambda M: todense_p.bind(M, tree=tree) + 1)(matrix())
    np.testing.assert_array_equal(out, A + 1)
    np.testing.assert_array_equal(todense_p.bind(jnp.asarray(A), tree=tree), A)
    np.testing.assert_array_equal(
        modjax.grad(lambda x: todense_p.bind(x, tree=tree).sum())(jnp.asarray(A)), np.ones_like(A)
    )


def test_scan_with_dense_xs():
    # JAX 0.10.2 refuses every scan with xs and a sparse operand; modjax sparsifies
    # scans over dense xs and refuses sparse ones.
    out = sparsify(lambda M: lax.scan(lambda c, x: (c * x, x), M, V + 1)[0])(matrix())
    np.testing.assert_allclose(dense(out), A * 24)
    with pytest.raises(NotImplementedError, match="sparse rule for scan with x values"):
        sparsify(lambda M: lax.scan(lambda c, x: (c, x), 0.0, M))(matrix())


DENSE_OUTPUT = "would result in dense output"


@pytest.mark.parametrize(
    "f, message",
    [
        (jnp.exp, f"sparse rule for exp is not implemented because it {DENSE_OUTPUT}"),
        (jnp.cos, f"sparse rule for cos is not implemented because it {DENSE_OUTPUT}"),
        (lambda M: M > 0, f"sparse rule for gt is not implemented because it {DENSE_OUTPUT}"),
        (lambda M: jnp.maximum(M, 0), "sparse rule for max is not implemented."),
        (lambda M: modjax.checkpoint(lambda a: a * 2)(M), "sparse rule for remat is not"),
        (lambda M: M + 1, "Addition between a sparse array X and a dense array Y is not"),
        (lambda M: M - D, "Subtraction between sparse and dense array."),
        (lambda M: 1 / M, "Division by a sparse array is not implemented"),
        (lambda M: M**-1, "integer_pow with non-positive exponent -1 is not implemented"),
        (jnp.sort, "sparse rule for sort is not implemented."),
    ],
)
def test_sparsify_errors(f, message):
    with pytest.raises(NotImplementedError, match=message):
        sparsify(f)(matrix())


def test_sparsify_type_errors():
    with pytest.raises(TypeError, match="same type structure"):
        sparsify(lambda M: lax.cond(True, lambda a: a, lambda a: a.T.T, M))(matrix())
    with pytest.raises(NotImplementedError, match="sparse xla_call with donated_invars"):
        sparsify(lambda M: modjax.jit(lambda a: a * 2, donate_argnums=0)(M))(matrix())


def test_sparsify_bcsr():
    # JAX's BCSR table: elementwise zero-preserving maps, integer_pow, dot_general,
    # broadcast_in_dim, concatenate, stack, todense, custom_jvp; nothing else.
    m = sparse.BCSR.fromdense(A)
    np.testing.assert_allclose(sparsify(lambda M: M @ V)(m), A @ V)
    out = sparsify(lambda M: jnp.sin(M) ** 2)(m)
    assert isinstance(out, sparse.BCSR) and out.nse == 4
    np.testing.assert_allclose(dense(out.todense()), np.sin(A) ** 2, rtol=1e-6)
    for f, name in [
        (lambda M: 2 * M, "mul"),
        (lambda M: M.T, "transpose"),
        (jnp.sum, "reduce_sum"),
    ]:
        with pytest.raises(
            NotImplementedError, match=f"sparse rule for {name} is not implemented."
        ):
            sparsify(f)(m)
    with pytest.raises(NotImplementedError, match="sparse rule for jit is not implemented."):
        sparsify(lambda M: modjax.jit(jnp.sin)(M))(m)


# --- linalg.spsolve ------------------------------------------------------------------


def csr_system(n=6, seed=1):
    m = scipy.sparse.random(n, n, density=0.4, random_state=seed, format="csr")
    m = (m + 3 * scipy.sparse.eye(n)).tocsr().astype(np.float32)
    return m, jnp.asarray(m.data), jnp.asarray(m.indices), jnp.asarray(m.indptr)


@settings(max_examples=examples(3), deadline=None)
@given(st.integers(0, 100))
def test_spsolve_matches_scipy(seed):
    m, data, indices, indptr = csr_system(seed=seed)
    b = np.random.default_rng(seed).normal(size=6).astype(np.float32)
    x = linalg.spsolve(data, indices, indptr, jnp.asarray(b))
    assert x.dtype == np.float32 and x.shape == (6,)
    np.testing.assert_allclose(x, scipy.sparse.linalg.spsolve(m, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(modjax.jit(linalg.spsolve)(data, indices, indptr, b), x, rtol=1e-6)


def test_spsolve_derivatives():
    m, data, indices, indptr = csr_system()
    dense_m, b = m.toarray().astype(np.float64), np.arange(6, dtype=np.float32)
    grad_b = modjax.grad(lambda b: linalg.spsolve(data, indices, indptr, b).sum())(jnp.asarray(b))
    np.testing.assert_allclose(grad_b, np.linalg.solve(dense_m.T, np.ones(6)), rtol=1e-4)
    x = np.linalg.solve(dense_m, b)
    tangent = modjax.jvp(
        lambda d: linalg.spsolve(d, indices, indptr, jnp.asarray(b)),
        (data,),
        (jnp.ones_like(data),),
    )[1]
    pattern = scipy.sparse.csr_matrix((np.ones_like(m.data), m.indices, m.indptr)).toarray()
    np.testing.assert_allclose(tangent, -np.linalg.solve(dense_m, pattern @ x), rtol=1e-4)
    grad_data = modjax.grad(lambda d: linalg.spsolve(d, indices, indptr, jnp.asarray(b)).sum())(
        data
    )
    rows = np.repeat(np.arange(6), np.diff(m.indptr))
    adjoint = np.linalg.solve(dense_m.T, np.ones(6))
    np.testing.assert_allclose(grad_data, -adjoint[rows] * x[m.indices], rtol=1e-4)


def test_spsolve_errors():
    _, data, indices, indptr = csr_system()
    b = jnp.arange(6.0)
    cases = [
        ((data, indices, indptr, b.astype(jnp.int32)), "data types do not match: data.dtype=dtype"),
        ((data, indices.astype(jnp.float32), indptr, b), "index arrays must be integer typed"),
        ((data, indices, indptr, jnp.ones(5)), "Invalid CSR buffer sizes"),
        ((data[None], indices[None], indptr, b), "Arrays must be one-dimensional"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            linalg.spsolve(*args)
    with pytest.raises(ValueError, match=r"reorder=5 not valid, must be one of \[1, 2, 3, 4\]"):
        linalg.spsolve(data, indices, indptr, b, reorder=5)
    with pytest.raises(NotImplementedError, match="spsolve"):
        modjax.vmap(linalg.spsolve, (None, None, None, 0))(data, indices, indptr, jnp.ones((2, 6)))
    with pytest.warns(scipy.sparse.linalg.MatrixRankWarning):
        assert np.isnan(np.asarray(linalg.spsolve(jnp.zeros_like(data), indices, indptr, b))).all()


# --- linalg.lobpcg_standard ------------------------------------------------------------


def symmetric(n=30, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return ((q * np.linspace(1, 10, n)) @ q.T).astype(np.float32), rng


def test_lobpcg_matches_eigh():
    a, rng = symmetric()
    x = rng.normal(size=(30, 3)).astype(np.float32)
    w, v = np.linalg.eigh(a.astype(np.float64))
    theta, u, i = linalg.lobpcg_standard(jnp.asarray(a), jnp.asarray(x))
    np.testing.assert_allclose(theta, w[::-1][:3], rtol=1e-4)
    np.testing.assert_allclose(np.abs(np.asarray(u).T @ v[:, ::-1][:, :3]), np.eye(3), atol=2e-3)
    assert 0 < int(i) <= 100  # JAX 0.10.2: 19 iterations on this problem
    theta, _, i = linalg.lobpcg_standard(lambda y: jnp.asarray(a) @ y, jnp.asarray(x), m=5)
    assert int(i) == 5
    np.testing.assert_allclose(theta, [9.909947, 9.61209, 9.308372], rtol=1e-4)  # JAX's


def test_lobpcg_errors():
    a, _ = symmetric()
    x = jnp.ones((30, 3))
    with pytest.raises(ValueError, match="must have search dim > 0, got 0"):
        linalg.lobpcg_standard(jnp.asarray(a), jnp.zeros((30, 0)))
    with pytest.raises(ValueError, match=r"expected search dim \* 5 < matrix dim \(got 30, 30\)"):
        linalg.lobpcg_standard(jnp.asarray(a), jnp.zeros((30, 6)))
    with pytest.raises(ValueError, match=r"A, X must have same dtypes \(were int32, float32\)"):
        linalg.lobpcg_standard(lambda y: y.astype(jnp.int32), x)
    with pytest.raises(ValueError, match=r"A must be \(30, 30\) matrix A, got output \(29, 1\)"):
        linalg.lobpcg_standard(lambda y: y[1:], x)
