"""modjax.experimental.sparse (JAX's jax.experimental.sparse): BCOO against numpy and scipy.

Property tests draw small random shapes, layouts (n_batch, n_dense), dtypes and
sparsity; the answers recorded from JAX 0.10.2 (padding layout, reprs, index dtypes,
errors) are written literally below. Shapes come from a few small sizes so that the
programs modjax compiles stay few.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax.experimental import sparse
from modjax.experimental.sparse import BCOO

SIZES = st.sampled_from([1, 3])


@st.composite
def dense_arrays(draw, min_ndim=1, max_ndim=3, dtypes=("float32", "int32")):
    """A dense numpy array with about half of its entries zero, and a layout for it."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(SIZES) for _ in range(ndim))
    dtype = draw(st.sampled_from(dtypes))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    values = rng.integers(-4, 5, size=shape).astype(dtype)
    values[rng.random(shape) < draw(st.sampled_from([0.0, 0.5, 0.9]))] = 0
    n_batch = draw(st.integers(0, ndim))
    n_dense = draw(st.integers(0, ndim - n_batch))
    return values, n_batch, n_dense


def nonzero_count(x, n_batch, n_dense):
    mask = x != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(x.ndim - n_dense, x.ndim)))
    counts = mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1)
    return int(counts.max()) if counts.size else 0


# --- conversions ---------------------------------------------------------------------


@settings(max_examples=examples(5), deadline=None)
@given(dense_arrays())
def test_fromdense_todense_roundtrip(case):
    x, n_batch, n_dense = case
    m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    assert (m.n_batch, m.n_dense, m.n_sparse) == (n_batch, n_dense, x.ndim - n_batch - n_dense)
    assert m.nse == nonzero_count(x, n_batch, n_dense)
    assert m.shape == x.shape and m.dtype == x.dtype and m.ndim == x.ndim and m.size == x.size
    assert m.indices.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(m.todense()), x)
    np.testing.assert_array_equal(np.asarray(sparse.todense(m)), x)
    padded = sparse.bcoo_fromdense(x, nse=m.nse + 2, n_batch=n_batch, n_dense=n_dense)
    np.testing.assert_array_equal(np.asarray(sparse.bcoo_todense(padded)), x)


@settings(max_examples=examples(3), deadline=None)
@given(dense_arrays(dtypes=("float32",)))
def test_sum_duplicates_sort_and_extract(case):
    x, n_batch, n_dense = case
    m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    doubled = m + m  # every index twice
    np.testing.assert_array_equal(np.asarray(doubled.todense()), 2 * x)
    summed = sparse.bcoo_sum_duplicates(doubled)
    assert (
        summed.nse == (m.nse if m.n_sparse else 1)
        and summed.indices_sorted
        and summed.unique_indices
    )
    np.testing.assert_array_equal(np.asarray(summed.todense()), 2 * x)
    ordered = sparse.bcoo_sort_indices(doubled)
    assert ordered.indices_sorted
    np.testing.assert_array_equal(np.asarray(ordered.todense()), 2 * x)
    arr = np.arange(x.size, dtype=np.float32).reshape(x.shape) + 1
    got = sparse.bcoo_extract(doubled, arr)  # duplicates: the value at the first one only
    covered = np.asarray(BCOO((jnp.ones_like(m.data), m.indices), shape=m.shape).todense()) != 0
    np.testing.assert_array_equal(np.asarray(got.todense()), np.where(covered, arr, 0))


@settings(max_examples=examples(3), deadline=None)
@given(dense_arrays(min_ndim=2, dtypes=("float32",)), st.data())
def test_update_layout(case, data):
    x, n_batch, n_dense = case
    m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    new_batch = data.draw(st.integers(0, x.ndim))
    new_dense = data.draw(st.integers(0, x.ndim - new_batch))
    out = sparse.bcoo_update_layout(m, n_batch=new_batch, n_dense=new_dense, on_inefficient=None)
    assert (out.n_batch, out.n_dense) == (new_batch, new_dense)
    np.testing.assert_array_equal(np.asarray(out.todense()), x)


@pytest.mark.parametrize("kind", ["csr", "coo", "csc"])
def test_from_scipy_sparse(kind):
    rng = np.random.default_rng(0)
    dense = rng.integers(-3, 4, size=(4, 5)).astype(np.float32) * (rng.random((4, 5)) < 0.4)
    mat = getattr(scipy.sparse, f"{kind}_matrix")(dense)
    if kind == "coo":  # duplicates and an unsorted order survive the conversion
        mat = scipy.sparse.coo_matrix(
            (np.array([1.0, 2.0, 3.0], np.float32), (np.array([3, 0, 3]), np.array([4, 1, 4]))),
            shape=(4, 5),
        )
    m = BCOO.from_scipy_sparse(mat)
    coo = mat.tocoo()
    np.testing.assert_array_equal(np.asarray(m.todense()), mat.toarray())
    np.testing.assert_array_equal(np.asarray(m.indices), np.stack([coo.row, coo.col], axis=1))
    assert m.indices.dtype == np.int32 and m.data.dtype == np.float32
    assert not m.indices_sorted and not m.unique_indices
    with pytest.raises(NotImplementedError):
        BCOO.from_scipy_sparse(mat, n_batch=1)


# --- products, transposes and sums against numpy ------------------------------------


@settings(max_examples=examples(4), deadline=None)
@given(dense_arrays(min_ndim=1, max_ndim=2), st.sampled_from([1, 2]), st.data())
def test_matmul_against_numpy(case, vec_ndim, data):
    x, n_batch, n_dense = case
    m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    k = x.shape[-1]
    v = np.linspace(-1, 1, k * 2, dtype=np.float32).reshape((k, 2) if vec_ndim == 2 else (k * 2,))[
        : k if vec_ndim == 1 else None
    ]
    np.testing.assert_allclose(np.asarray(m @ v), x @ v, rtol=1e-6, atol=1e-5)
    w = np.linspace(-1, 1, x.shape[0] * 3, dtype=np.float32).reshape(3, x.shape[0])
    w = w[0] if data.draw(st.booleans()) else w
    np.testing.assert_allclose(np.asarray(w @ m), w @ x, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(np.asarray(np.asarray(w) @ m), w @ x, rtol=1e-6, atol=1e-5)


def test_dot_general_batched_and_dense_contractions():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 4)).astype(np.float32) * (rng.random((2, 3, 4)) < 0.5)
    y = rng.normal(size=(2, 4, 5)).astype(np.float32)
    want = np.einsum("bij,bjk->bik", x, y)
    numbers = (((2,), (1,)), ((0,), (0,)))
    for n_batch, n_dense in [(0, 0), (1, 0), (1, 1), (0, 1), (2, 0)]:
        m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
        got = sparse.bcoo_dot_general(m, y, dimension_numbers=numbers)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    # dense @ sparse, with the batch axis in the middle of the dense operand
    z = np.moveaxis(rng.normal(size=(2, 5, 3)).astype(np.float32), 0, 1)  # (5, 2, 3)
    m = BCOO.fromdense(x, n_batch=1)
    got = sparse.bcoo_dot_general(z, m, dimension_numbers=(((2,), (1,)), ((1,), (0,))))
    np.testing.assert_allclose(
        np.asarray(got), np.einsum("kbi,bij->bkj", z, x), rtol=1e-5, atol=1e-6
    )
    # mixed dtypes and preferred_element_type
    mi = BCOO.fromdense(np.array([[0, 2], [3, 0]], np.int32))
    assert (mi @ jnp.ones(2)).dtype == np.float32
    assert (mi @ jnp.ones(2, jnp.int32)).dtype == np.int32
    got = sparse.bcoo_dot_general(
        mi,
        np.ones((2, 2), np.int32),
        dimension_numbers=(((1,), (0,)), ((), ())),
        preferred_element_type=jnp.float32,
    )
    assert got.dtype == np.float32


@settings(max_examples=examples(3), deadline=None)
@given(dense_arrays(dtypes=("float32",)), st.data())
def test_transpose_sum_multiply_against_numpy(case, data):
    x, n_batch, n_dense = case
    m = BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    n_sparse = x.ndim - n_batch - n_dense
    groups = [
        list(range(n_batch)),
        list(range(n_batch, n_batch + n_sparse)),
        list(range(n_batch + n_sparse, x.ndim)),
    ]
    perm = [a for g in groups for a in data.draw(st.permutations(g))]
    t = sparse.bcoo_transpose(m, permutation=perm)
    np.testing.assert_array_equal(np.asarray(t.todense()), x.transpose(perm))
    if n_batch == 0 and n_dense == 0:
        np.testing.assert_array_equal(np.asarray(m.T.todense()), x.T)
    axes = sorted(data.draw(st.sets(st.integers(0, x.ndim - 1))))
    reduced = sparse.bcoo_reduce_sum(m, axes=axes)
    np.testing.assert_allclose(
        np.asarray(reduced.todense()), x.sum(axis=tuple(axes)), rtol=1e-6, atol=1e-5
    )
    np.testing.assert_allclose(np.asarray(m.sum()), x.sum(), rtol=1e-6, atol=1e-5)
    v = np.linspace(-2, 2, x.shape[-1], dtype=np.float32)
    for product in (m * v, v * m, m * 3.0, -m, m - m):
        assert isinstance(product, BCOO)
    np.testing.assert_allclose(np.asarray((m * v).todense()), x * v)
    np.testing.assert_allclose(np.asarray((2.0 * m).todense()), 2 * x)
    np.testing.assert_allclose(
        np.asarray(sparse.bcoo_multiply_dense(m, x)), np.asarray(m.data) ** 2
    )
    np.testing.assert_array_equal(np.asarray((-m).todense()), -x)
    np.testing.assert_array_equal(np.asarray(m + x), 2 * x)


def test_empty_eye_random():
    np.testing.assert_array_equal(np.asarray(sparse.empty((3, 4)).todense()), np.zeros((3, 4)))
    e = sparse.empty((2, 3, 4), n_batch=1, n_dense=1, nse=2)
    assert (e.nse, e.n_batch, e.n_dense) == (2, 1, 1)
    np.testing.assert_array_equal(np.asarray(e.todense()), np.zeros((2, 3, 4)))
    for n, m_, k, n_batch in [(3, 4, 1, 0), (3, 4, -1, 1), (3, 3, 5, 0)]:
        np.testing.assert_array_equal(
            np.asarray(sparse.eye(n, m_, k, n_batch=n_batch).todense()), np.eye(n, m_, k)
        )
    r = sparse.random_bcoo(modjax.random.key(0), (2, 5, 6), n_batch=1, nse=0.5, dtype=jnp.float32)
    assert r.shape == (2, 5, 6) and r.nse == 15 and r.n_batch == 1 and r.unique_indices
    assert (np.count_nonzero(np.asarray(r.todense()), axis=(1, 2)) == 15).all()
    s = sparse.random_bcoo(
        modjax.random.key(1), (4, 4), nse=5, sorted_indices=True, dtype=jnp.float32
    )
    rows = [tuple(i) for i in np.asarray(s.indices)]
    assert rows == sorted(rows) and len(set(rows)) == 5


# --- transformations -----------------------------------------------------------------

X = np.array([[0.0, 1.5, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 1.0]], np.float32)
V = np.array([1.0, -1.0, 2.0, 0.5], np.float32)


def _program(m, v):
    return m @ v, (v[:3] @ m), m.T.todense(), m.sum(0).todense(), (m * 2.0).data


def test_jit_equals_eager():
    m = BCOO.fromdense(X)
    eager = _program(m, V)
    jitted = modjax.jit(_program)(m, V)
    for a, b in zip(eager, jitted, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-5)
    roundtrip = modjax.jit(lambda x: BCOO.fromdense(x, nse=6))(X)
    assert isinstance(roundtrip, BCOO) and roundtrip.nse == 6 and roundtrip.indices_sorted
    np.testing.assert_array_equal(np.asarray(roundtrip.todense()), X)
    same = modjax.jit(lambda q: q)(m)
    assert repr(same) == repr(m) and same.unique_indices


def test_vmap_equals_loop():
    xs = np.stack([X, 2 * X[::-1], np.zeros_like(X)])
    per_example = modjax.vmap(lambda x: BCOO.fromdense(x, nse=5) @ V)(xs)
    np.testing.assert_allclose(
        np.asarray(per_example), np.stack([x @ V for x in xs]), rtol=1e-6, atol=1e-5
    )
    # a BCOO with a batch dimension is mapped over it; one returned gains one
    batched = BCOO.fromdense(xs, n_batch=1)
    out = modjax.vmap(lambda m: m @ V)(batched)
    np.testing.assert_allclose(np.asarray(out), xs @ V, rtol=1e-6, atol=1e-5)
    made = modjax.vmap(lambda x: BCOO.fromdense(x, nse=5))(xs)
    assert isinstance(made, BCOO) and made.shape == xs.shape and made.n_batch == 1
    np.testing.assert_array_equal(np.asarray(made.todense()), xs)
    with pytest.raises(ValueError, match="n_batch=0"):
        modjax.vmap(lambda m: m.todense())(BCOO.fromdense(X))


def test_grad_against_finite_differences():
    m = BCOO.fromdense(X)

    def loss(data):
        y = BCOO((data, m.indices), shape=m.shape) @ V
        return jnp.sum(jnp.sin(y)) + jnp.sum(
            (BCOO((data, m.indices), shape=m.shape).T @ V[:3]) ** 2
        )

    data = np.asarray(m.data, np.float32)
    got = np.asarray(modjax.grad(loss)(data))
    eps = 1e-2
    want = np.array(
        [
            (float(loss(data + eps * e)) - float(loss(data - eps * e))) / (2 * eps)
            for e in np.eye(len(data), dtype=np.float32)
        ]
    )
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
    # sparse.grad: the gradient of a BCOO argument is a BCOO with its indices
    g = sparse.grad(lambda mat: jnp.sum(jnp.sin(mat @ V)))(m)
    assert isinstance(g, BCOO) and g.shape == m.shape
    np.testing.assert_array_equal(np.asarray(g.indices), np.asarray(m.indices))
    dense_grad = np.cos(X @ V)[:, None] * V[None, :]
    np.testing.assert_allclose(np.asarray(g.todense()), np.where(X != 0, dense_grad, 0), rtol=1e-5)
    jac = sparse.jacrev(lambda mat: mat @ V)(m)
    assert jac.shape == (3, *m.shape) and jac.n_batch == 1
    # the gradient with respect to the dense operand of a product
    gv = modjax.grad(lambda v: jnp.sum((m @ v) ** 2))(V)
    np.testing.assert_allclose(np.asarray(gv), 2 * X.T @ (X @ V), rtol=1e-5)


# --- JAX 0.10.2's answers -------------------------------------------------------------


def test_recorded_jax_answers():
    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], np.float32)
    m = BCOO.fromdense(x, nse=5)
    # JAX 0.10.2: padding entries have data 0 and the index (3, 3), one past each dimension.
    assert repr(m) == "BCOO(float32[3, 3], nse=5)"
    np.testing.assert_array_equal(np.asarray(m.data), [1.0, 2.0, 3.0, 0.0, 0.0])
    assert np.asarray(m.indices).tolist() == [[0, 1], [1, 0], [2, 2], [3, 3], [3, 3]]
    assert m.indices.dtype == np.int32 and m.indices_sorted and m.unique_indices
    # JAX 0.10.2's reprs with batch and dense dimensions, and of an all-zero array.
    ones = np.ones((2, 3, 4), np.float32)
    assert repr(BCOO.fromdense(ones, n_batch=1)) == "BCOO(float32[2, 3, 4], nse=12, n_batch=1)"
    m3 = BCOO.fromdense(ones, n_batch=1, n_dense=1)
    assert repr(m3) == "BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)"
    assert (m3.data.shape, m3.indices.shape) == ((2, 3, 4), (2, 3, 1))
    assert repr(BCOO.fromdense(np.zeros((3, 4), np.int32))) == "BCOO(int32[3, 4], nse=0)"
    # JAX 0.10.2: transposes and sums keep padding indices out of range.
    assert np.asarray(m.T.indices).tolist() == [[1, 0], [0, 1], [2, 2], [3, 3], [3, 3]]
    assert not m.T.indices_sorted and m.T.unique_indices
    s0 = m.sum(0)
    assert repr(s0) == "BCOO(float32[3], nse=5)" and np.asarray(s0.indices).tolist() == [
        [1],
        [0],
        [2],
        [3],
        [3],
    ]
    assert not s0.indices_sorted and not s0.unique_indices
    assert float(m.sum()) == 6.0 and not isinstance(m.sum(), BCOO)
    # JAX 0.10.2's sum_duplicates: padding dropped (nse=None) or rewritten (nse=5).
    sd = sparse.bcoo_sum_duplicates(m)
    assert repr(sd) == "BCOO(float32[3, 3], nse=3)" and np.asarray(sd.indices).tolist() == [
        [0, 1],
        [1, 0],
        [2, 2],
    ]
    dup = BCOO((jnp.array([1.0, 2.0, 3.0]), jnp.array([[1, 1], [0, 0], [1, 1]])), shape=(2, 2))
    sd = sparse.bcoo_sum_duplicates(dup)
    assert np.asarray(sd.indices).tolist() == [[0, 0], [1, 1]] and np.asarray(sd.data).tolist() == [
        2.0,
        4.0,
    ]
    so = sparse.bcoo_sort_indices(dup)
    assert np.asarray(so.indices).tolist() == [[0, 0], [1, 1], [1, 1]] and np.asarray(
        so.data
    ).tolist() == [2.0, 1.0, 3.0]
    assert so.indices_sorted and not so.unique_indices
    # JAX 0.10.2: eye and empty.
    assert np.asarray(sparse.eye(3, k=1).indices).tolist() == [[0, 1], [1, 2]]
    e = sparse.empty((3, 4))
    assert repr(e) == "BCOO(float32[3, 4], nse=0)" and e.indices.shape == (0, 2)
    assert (
        repr(sparse.empty((2, 3, 4), n_batch=1, n_dense=1))
        == "BCOO(float32[2, 3, 4], nse=0, n_batch=1, n_dense=1)"
    )
    b = BCOO.fromdense(ones, n_batch=1)
    assert repr(sparse.bcoo_update_layout(b, n_batch=0)) == "BCOO(float32[2, 3, 4], nse=24)"
    # JAX 0.10.2: fromdense under jit without nse raises ConcretizationTypeError.
    with pytest.raises(modjax.errors.ConcretizationTypeError, match="nse"):
        modjax.jit(BCOO.fromdense)(x)
    # JAX 0.10.2 raises SparseEfficiencyError (a ValueError) for an inefficient layout.
    with pytest.raises(sparse.SparseEfficiencyError, match="increasing n_batch from 0 to 1"):
        sparse.bcoo_update_layout(m, n_batch=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sparse.bcoo_update_layout(m, n_batch=1, on_inefficient="warn")
    assert any(issubclass(w.category, sparse.SparseEfficiencyWarning) for w in caught)
    # JAX 0.10.2: from_scipy_sparse of a CSR keeps its row-major order, int32 indices.
    sm = BCOO.from_scipy_sparse(scipy.sparse.csr_matrix(np.array([[0, 1.5, 0], [2.0, 0, 3.0]])))
    assert repr(sm) == "BCOO(float32[2, 3], nse=3)" and sm.indices.dtype == np.int32
    assert np.asarray(sm.indices).tolist() == [[0, 1], [1, 0], [1, 2]]
    # JAX 0.10.2: transposing a batch axis with a sparse one is NotImplementedError.
    with pytest.raises(NotImplementedError):
        sparse.bcoo_transpose(BCOO.fromdense(np.ones((2, 3)), n_batch=1), permutation=(1, 0))


# sorted(n for n in dir(jax.experimental.sparse) if not n.startswith("_")) in JAX 0.10.2
JAX_PUBLIC_NAMES = """
BCOO BCSR COO CSC CSR CuSparseEfficiencyWarning JAXSparse SparseEfficiencyError
SparseEfficiencyWarning SparseTracer ad api bcoo bcoo_broadcast_in_dim bcoo_concatenate
bcoo_conv_general_dilated bcoo_dot_general bcoo_dot_general_p bcoo_dot_general_sampled
bcoo_dot_general_sampled_p bcoo_dynamic_slice bcoo_extract bcoo_extract_p bcoo_fromdense
bcoo_fromdense_p bcoo_gather bcoo_multiply_dense bcoo_multiply_sparse bcoo_reduce_sum
bcoo_reshape bcoo_rev bcoo_slice bcoo_sort_indices bcoo_sort_indices_p bcoo_spdot_general_p
bcoo_squeeze bcoo_sum_duplicates bcoo_sum_duplicates_p bcoo_todense bcoo_todense_p
bcoo_transpose bcoo_transpose_p bcoo_update_layout bcsr bcsr_broadcast_in_dim
bcsr_concatenate bcsr_dot_general bcsr_dot_general_p bcsr_extract bcsr_extract_p
bcsr_fromdense bcsr_fromdense_p bcsr_sum_duplicates bcsr_todense bcsr_todense_p coo
coo_fromdense coo_fromdense_p coo_matmat coo_matmat_p coo_matvec coo_matvec_p coo_todense
coo_todense_p csr csr_fromdense csr_fromdense_p csr_matmat csr_matmat_p csr_matvec
csr_matvec_p csr_todense csr_todense_p empty eye grad jacfwd jacobian jacrev linalg random
random_bcoo sparsify todense todense_p transform util value_and_grad
""".split()


def test_public_names_and_unimplemented():
    assert sorted(n for n in dir(sparse) if not n.startswith("_")) == JAX_PUBLIC_NAMES
    # The BCOO operations are implemented: tests_integration/test_sparse_bcoo_ops.py.
    # BCSR, COO, CSR and CSC are implemented: tests_integration/test_sparse_formats.py.
    assert repr(sparse.BCSR.fromdense(X)) == "BCSR(float32[3, 4], nse=5)"
    assert not isinstance(BCOO.fromdense(X), sparse.BCSR) and isinstance(
        BCOO.fromdense(X), sparse.JAXSparse
    )
    with pytest.raises(NotImplementedError, match="bcoo_todense_p"):
        sparse.bcoo_todense_p.bind(X)


def test_jax_alias_import():
    """numpyro's import: ``from jax.experimental.sparse import BCOO`` with the alias."""
    import subprocess
    import sys

    code = (
        "import modjax; modjax.install_jax_alias()\n"
        "from jax.experimental.sparse import BCOO\n"
        "import scipy.sparse, numpy as np\n"
        "m = BCOO.from_scipy_sparse(scipy.sparse.eye(3, format='csr'))\n"
        "print(repr(m), float((m @ np.ones(3)).sum()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "BCOO(float32[3, 3], nse=3) 3.0"
