"""modjax.experimental.sparse's BCSR, COO, CSR and CSC formats against numpy, scipy and JAX.

Property tests draw small random matrices (a few sizes, so the programs modjax
compiles stay few) and compare conversions and products with numpy and scipy; the
answers recorded from JAX 0.10.2 (buffer layouts of padding, reprs, pytree aux data,
index dtypes, errors) are written literally below.
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
from modjax.experimental import sparse
from modjax.experimental.sparse import BCOO, BCSR, COO, CSC, CSR

SIZES = st.sampled_from([1, 3])


def _random(seed: int, shape, dtype="float32", zeros=0.5):
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 4, size=shape).astype(dtype)
    values[rng.random(shape) < zeros] = 0
    return values


@st.composite
def bcsr_cases(draw):
    """A dense array with a BCSR layout (n_batch, n_dense) for it: 2 sparse dimensions."""
    n_batch = draw(st.integers(0, 1))
    n_dense = draw(st.integers(0, 1))
    shape = tuple(draw(SIZES) for _ in range(n_batch + 2 + n_dense))
    dtype = draw(st.sampled_from(["float32", "int32"]))
    return _random(draw(st.integers(0, 2**16)), shape, dtype), n_batch, n_dense


def _bufs(m):
    return [np.asarray(b).tolist() for b in m.tree_flatten()[0]]


def _scipy_csr_buffers(x):
    s = scipy.sparse.csr_matrix(x)
    return s.data.tolist(), s.indices.tolist(), s.indptr.tolist()


# --- BCSR ------------------------------------------------------------------------------


@settings(max_examples=examples(5), deadline=None)
@given(bcsr_cases())
def test_bcsr_conversions_against_numpy_and_scipy(case):
    x, n_batch, n_dense = case
    m = BCSR.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    assert (m.n_batch, m.n_sparse, m.n_dense) == (n_batch, 2, n_dense)
    assert m.shape == x.shape and m.dtype == x.dtype and m.indices.dtype == np.int32
    assert m.indptr.dtype == np.int32 and m.indptr.shape == (
        *x.shape[:n_batch],
        x.shape[n_batch] + 1,
    )
    np.testing.assert_array_equal(np.asarray(m.todense()), x)
    np.testing.assert_array_equal(np.asarray(sparse.todense(m)), x)
    if n_batch == 0 and n_dense == 0:
        assert _bufs(m) == [list(b) for b in _scipy_csr_buffers(x)]
    padded = sparse.bcsr_fromdense(x, nse=m.nse + 2, n_batch=n_batch, n_dense=n_dense)
    np.testing.assert_array_equal(np.asarray(sparse.bcsr_todense(padded)), x)
    # BCOO round trip: the same data, (row, column) indices; back to the same buffers
    coo = padded.to_bcoo()
    assert isinstance(coo, BCOO) and coo.n_batch == n_batch and coo.n_dense == n_dense
    np.testing.assert_array_equal(np.asarray(coo.todense()), x)
    back = BCSR.from_bcoo(coo)
    assert _bufs(back) == _bufs(padded)
    from_coo = BCSR.from_bcoo(BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense))
    assert _bufs(from_coo) == _bufs(m)
    # extract reads a dense array at the stored positions (padding reads 0)
    y = x + 1
    got = sparse.bcsr_extract(padded.indices, padded.indptr, y)
    assert got.shape == padded.data.shape and got.dtype == y.dtype
    flat_y = y.reshape((-1, *y.shape[n_batch:]))
    flat_indices = np.asarray(coo.indices).reshape((len(flat_y), -1, 2))
    zero = np.zeros(x.shape[n_batch + 2 :], y.dtype)
    want = [
        [yb[r, c] if r < x.shape[n_batch] else zero for r, c in ib]
        for yb, ib in zip(flat_y, flat_indices, strict=True)
    ]
    np.testing.assert_array_equal(np.asarray(got), np.reshape(want, got.shape))
    # duplicates: every entry twice (BCOO + BCOO concatenates; from_bcoo sorts them)
    doubled = BCSR.from_bcoo(m.to_bcoo() + m.to_bcoo())
    assert doubled.nse == 2 * m.nse
    np.testing.assert_array_equal(np.asarray(doubled.todense()), 2 * x)
    summed = sparse.bcsr_sum_duplicates(doubled)
    np.testing.assert_array_equal(np.asarray(summed.todense()), 2 * x)
    assert summed.nse == m.nse


@settings(max_examples=examples(5), deadline=None)
@given(bcsr_cases(), st.integers(1, 2))
def test_bcsr_matmul_and_dot_general_against_numpy(case, rhs_ndim):
    x, n_batch, n_dense = case
    x = x.astype(np.float32)
    m = BCSR.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    n_cols = x.shape[n_batch + 1]
    rhs = _random(7, (n_cols,) if rhs_ndim == 1 else (n_cols, 2))
    if n_dense:  # matmul contracts the last axis: a dense one (NotImplementedError in JAX)
        with pytest.raises(NotImplementedError, match="dense dimensions"):
            m @ np.ones(x.shape[-1], np.float32)
        got = sparse.bcsr_dot_general(
            m, jnp.asarray(rhs), dimension_numbers=(([n_batch + 1], [0]), ([], []))
        )
        want = np.tensordot(x, rhs, axes=([n_batch + 1], [0]))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        return
    np.testing.assert_allclose(np.asarray(m @ rhs), np.matmul(x, rhs), rtol=1e-6)
    # integer operands promote with the data's dtype, as jnp.matmul does
    out = m @ jnp.ones(rhs.shape, jnp.int32)
    assert out.dtype == np.float32
    # a contraction over the row axis, and a batched product
    got = sparse.bcsr_dot_general(
        m, jnp.ones((x.shape[n_batch], 2)), dimension_numbers=(([n_batch], [0]), ([], []))
    )
    np.testing.assert_allclose(
        np.asarray(got), np.tensordot(x, np.ones((x.shape[n_batch], 2)), ([n_batch], [0]))
    )
    if n_batch:
        b = _random(3, (x.shape[0], n_cols, 2))
        got = sparse.bcsr_dot_general(m, b, dimension_numbers=(([2], [1]), ([0], [0])))
        np.testing.assert_allclose(np.asarray(got), np.matmul(x, b), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(m @ b), np.matmul(x, b), rtol=1e-6)
    else:
        b = _random(3, (2, n_cols, 2))
        np.testing.assert_allclose(np.asarray(m @ b), np.matmul(x, b), rtol=1e-6)


X = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], np.float32)
XB = np.array(
    [
        [[2, 1, 0, -1], [-1, -2, -2, -2], [-2, 2, 1, 2]],
        [[0, 1, 2, 1], [1, 0, 0, 2], [-1, 2, 1, -2]],
    ],
    np.float32,
)


def test_bcsr_jit_vmap_grad():
    m = BCSR.fromdense(X)
    v = jnp.arange(3.0)
    out, dense, made = modjax.jit(
        lambda a, w: (a @ w, a.todense(), BCSR.fromdense(a.todense(), nse=3))
    )(m, v)
    np.testing.assert_array_equal(np.asarray(out), X @ np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(dense), X)
    assert isinstance(made, BCSR) and _bufs(made) == _bufs(m)
    assert repr(modjax.jit(lambda a: a)(m)) == "BCSR(float32[2, 3], nse=3)"
    # JAX 0.10.2: without nse, fromdense under jit needs a concrete value
    with pytest.raises(modjax.errors.ConcretizationTypeError, match="nse"):
        modjax.jit(BCSR.fromdense)(X)
    # vmap maps a batched BCSR over its batch axis and batches a returned one
    mb = BCSR.fromdense(XB, n_batch=1)
    seen = []
    per_entry = modjax.vmap(lambda a: seen.append(repr(a)) or a.todense())(mb)
    assert seen == ["BatchTracer[BCSR(float32[3, 4], nse=11)]"]
    np.testing.assert_array_equal(np.asarray(per_entry), XB)
    made = modjax.vmap(lambda a: BCSR.fromdense(a, nse=5))(XB[:, :2, :3])
    assert repr(made) == "BCSR(float32[2, 2, 3], nse=5, n_batch=1)"
    np.testing.assert_array_equal(np.asarray(made.todense()), XB[:, :2, :3])
    # JAX 0.10.2: mapping a BCSR without batch dimensions is a ValueError
    with pytest.raises(ValueError, match="n_batch=0"):
        modjax.vmap(lambda a: a.todense())(m)
    # sparse.grad: with respect to the data, a BCSR with the same indices
    g = sparse.grad(lambda a: jnp.sum(jnp.sin(a @ v)))(m)
    assert isinstance(g, BCSR) and _bufs(g)[1:] == _bufs(m)[1:]
    want = np.where(X != 0, np.cos(X @ np.arange(3.0))[:, None] * np.arange(3.0), 0)
    np.testing.assert_allclose(np.asarray(g.todense()), want, rtol=1e-6)
    # JAX 0.10.2: the Jacobian gains the output axis as a batch axis (indices broadcast)
    jac = sparse.jacfwd(lambda a: a @ v)(m)
    assert repr(jac) == "BCSR(float32[2, 2, 3], nse=3, n_batch=1)"
    assert [b.shape for b in jac.tree_flatten()[0]] == [(2, 3), (2, 3), (2, 3)]
    np.testing.assert_array_equal(np.asarray(jac.data), [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    # grad through dense conversions
    gd = modjax.grad(
        lambda d: jnp.sum(BCSR((d, m.indices, m.indptr), shape=m.shape).todense() ** 2)
    )(m.data)
    np.testing.assert_array_equal(np.asarray(gd), 2 * np.asarray(m.data))


def test_bcsr_recorded_jax_answers():
    # JAX 0.10.2: layouts, padding, flags and pytree aux data
    m = BCSR.fromdense(X)
    assert repr(m) == "BCSR(float32[2, 3], nse=3)"
    assert _bufs(m) == [[1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 3]]
    assert (m.indices_sorted, m.unique_indices) == (False, False)
    assert m.tree_flatten()[1] == {
        "shape": (2, 3),
        "indices_sorted": False,
        "unique_indices": False,
    }
    assert m._info == (((2, 3)), False, False) and m._sparse_shape == (2, 3) and len(m) == 2
    assert _bufs(BCSR.fromdense(X, nse=5)) == [
        [1.0, 2.0, 3.0, 0.0, 0.0],
        [1, 0, 2, 3, 3],
        [0, 1, 3],
    ]
    assert np.asarray(BCSR.fromdense(X, nse=5).to_bcoo().indices).tolist() == [
        [0, 1],
        [1, 0],
        [1, 2],
        [2, 3],
        [2, 3],
    ]
    assert [b.dtype for b in BCSR.fromdense(X, index_dtype=np.int8)._bufs] == [
        np.float32,
        np.int8,
        np.int8,
    ]
    mb = BCSR.fromdense(XB, n_batch=1)
    assert repr(mb) == "BCSR(float32[2, 3, 4], nse=11, n_batch=1)"
    assert _bufs(mb)[1:] == [
        [[0, 1, 3, 0, 1, 2, 3, 0, 1, 2, 3], [1, 2, 3, 0, 3, 0, 1, 2, 3, 4, 4]],
        [[0, 3, 7, 11], [0, 3, 5, 9]],
    ]
    assert repr(BCSR.fromdense(XB, n_dense=1)) == "BCSR(float32[2, 3, 4], nse=6, n_dense=1)"
    # from_bcoo sorts unsorted indices; sum_duplicates drops zeros unless asked not to
    unsorted = BCOO((jnp.array([1.0, 2, 3]), jnp.array([[1, 2], [0, 1], [1, 0]])), shape=(2, 3))
    assert _bufs(BCSR.from_bcoo(unsorted)) == [[2.0, 3.0, 1.0], [1, 0, 2], [0, 1, 3]]
    dup = BCSR((jnp.array([1.0, 2, 3]), jnp.array([1, 1, 0]), jnp.array([0, 2, 3])), shape=(2, 3))
    summed = sparse.bcsr_sum_duplicates(dup)
    assert _bufs(summed) == [[3.0, 3.0], [1, 0], [0, 1, 2]]
    assert (summed.indices_sorted, summed.unique_indices) == (False, False)
    zeros = BCSR((jnp.array([1.0, 0, 3]), jnp.array([1, 2, 0]), jnp.array([0, 2, 3])), shape=(2, 3))
    assert _bufs(zeros.sum_duplicates()) == [[1.0, 3.0], [1, 0], [0, 1, 2]]
    assert _bufs(zeros.sum_duplicates(remove_zeros=False, nse=4)) == [
        [1.0, 0.0, 3.0, 0.0],
        [1, 2, 0, 3],
        [0, 2, 3],
    ]
    # extract: repeated positions each read their value
    got = sparse.bcsr_extract(
        jnp.array([1, 1, 0]), jnp.array([0, 2, 3]), jnp.arange(6.0).reshape(2, 3)
    )
    assert np.asarray(got).tolist() == [1.0, 1.0, 3.0]
    # products keep jnp's promotion; preferred_element_type float64 is float32 without x64
    small = BCSR.fromdense(X.astype(np.int16))
    assert (small @ jnp.ones(3, jnp.int8)).dtype == np.int16
    assert np.asarray(small @ jnp.ones(3, jnp.int8)).tolist() == [1, 5]
    both = sparse.bcsr_dot_general(
        m, jnp.ones((2, 3)), dimension_numbers=(([0, 1], [0, 1]), ([], []))
    )
    assert float(both) == 6.0
    assert (m @ jnp.ones((5, 3, 2))).shape == (5, 2, 2)
    # from_scipy_sparse (its CSR form), empty
    sm = BCSR.from_scipy_sparse(scipy.sparse.coo_matrix(X), index_dtype=jnp.int16)
    assert _bufs(sm) == [[1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 3]] and sm.indptr.dtype == np.int16
    e = sparse.empty((2, 3, 4), sparse_format="bcsr", n_batch=1, nse=2)
    assert repr(e) == "BCSR(float32[2, 3, 4], nse=2, n_batch=1)"
    assert _bufs(sparse.empty((2, 3), sparse_format="bcsr", nse=2)) == [
        [0.0, 0.0],
        [3, 3],
        [0, 0, 0],
    ]


def test_bcsr_errors_as_in_jax():
    m = BCSR.fromdense(X)
    with pytest.raises(NotImplementedError, match="Transpose is not implemented"):
        _ = m.T
    assert not hasattr(m, "astype")  # nor has JAX's BCSR
    for bad in (
        lambda: jnp.ones(2) @ m,
        lambda: m @ BCSR.fromdense(X.T),
        lambda: m.sum(),
        lambda: -m,
    ):
        with pytest.raises(NotImplementedError):
            bad()
    with pytest.raises(NotImplementedError, match="BCSR lhs and ndarray rhs"):
        sparse.bcsr_dot_general(m, [1.0, 1.0, 1.0], dimension_numbers=(([1], [0]), ([], [])))
    with pytest.raises(NotImplementedError, match="BCSR lhs and ndarray rhs"):
        sparse.bcsr_dot_general(jnp.ones((2, 2)), m, dimension_numbers=(([1], [0]), ([], [])))
    with pytest.raises(TypeError, match="same shape"):
        sparse.bcsr_dot_general(m, jnp.ones(4), dimension_numbers=(([1], [0]), ([], [])))
    mb = BCSR.fromdense(XB, n_batch=1)
    with pytest.raises(NotImplementedError, match="batch dimensions"):
        sparse.bcsr_dot_general(mb, jnp.ones((3, 4, 5)), dimension_numbers=(([2], [1]), ([1], [0])))
    with pytest.raises(NotImplementedError, match="dense dimensions"):
        BCSR.fromdense(XB, n_dense=1) @ jnp.ones(4)
    for bad in (lambda: BCSR.fromdense(np.ones(2)), lambda: BCSR.fromdense(np.ones((2, 2, 2)))):
        with pytest.raises(ValueError, match="2 sparse dimensions"):
            bad()
    with pytest.raises(ValueError, match="2 sparse dimensions"):
        sparse.empty((2, 3, 4), sparse_format="bcsr")
    with pytest.raises(KeyError):
        sparse.eye(3, sparse_format="bcsr")
    with pytest.raises(NotImplementedError, match="n_sparse=2"):
        BCSR.from_bcoo(BCOO.fromdense(X, n_batch=1))
    with pytest.raises(NotImplementedError):
        BCSR.from_scipy_sparse(scipy.sparse.coo_matrix(X), n_batch=1)
    with pytest.raises(ValueError, match="indptr shape"):
        BCSR((jnp.ones(3), jnp.zeros(3, int), jnp.zeros(4, int)), shape=(2, 3))
    with pytest.raises(ValueError, match="Invalid data.shape"):
        BCSR((jnp.ones(4), jnp.zeros(3, int), jnp.zeros(3, int)), shape=(2, 3))
    with pytest.raises(ValueError, match="batch dimensions not compatible"):
        BCSR((jnp.ones((2, 3)), jnp.zeros((3, 3), int), jnp.zeros((2, 3), int)), shape=(2, 2, 3))
    with pytest.raises(AssertionError):  # JAX asserts integer indices
        BCSR((jnp.ones(3), jnp.zeros(3), jnp.zeros(3, int)), shape=(2, 3))
    with pytest.raises(TypeError):
        sparse.bcsr_extract(m.indices, m.indptr, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(ValueError, match="indptr shape"):
        sparse.bcsr_extract(m.indices, m.indptr, jnp.ones((3, 3)))
    with pytest.raises(NotImplementedError):
        sparse.bcsr_fromdense_p.bind(X)


# --- COO, CSR, CSC ---------------------------------------------------------------------


@st.composite
def matrices(draw):
    shape = (draw(SIZES), draw(st.sampled_from([1, 4])))
    dtype = draw(st.sampled_from(["float32", "int32"]))
    return _random(draw(st.integers(0, 2**16)), shape, dtype)


@settings(max_examples=examples(5), deadline=None)
@given(matrices(), st.sampled_from([COO, CSR, CSC]))
def test_legacy_formats_against_scipy_and_numpy(x, cls):
    m = cls.fromdense(x)
    nnz = int(np.count_nonzero(x))
    assert m.nse == nnz and m.shape == x.shape and m.dtype == x.dtype
    assert repr(m) == f"{cls.__name__}({x.dtype}[{x.shape[0]}, {x.shape[1]}], nse={nnz})"
    if cls is COO:
        s = scipy.sparse.coo_matrix(x)
        assert _bufs(m) == [s.data.tolist(), s.row.tolist(), s.col.tolist()]
    elif cls is CSR:
        assert _bufs(m) == [list(b) for b in _scipy_csr_buffers(x)]
    else:
        s = scipy.sparse.csc_matrix(x)
        assert _bufs(m) == [s.data.tolist(), s.indices.tolist(), s.indptr.tolist()]
    np.testing.assert_array_equal(np.asarray(m.todense()), x)
    np.testing.assert_array_equal(np.asarray(sparse.todense(m)), x)
    np.testing.assert_array_equal(np.asarray(m.T.todense()), x.T)
    padded = cls.fromdense(x, nse=nnz + 2)
    np.testing.assert_array_equal(np.asarray(padded.todense()), x)
    v = np.arange(x.shape[1], dtype=np.float32)
    np.testing.assert_allclose(np.asarray(padded @ v), x @ v, rtol=1e-6)
    b = _random(1, (x.shape[1], 2), "int32")
    np.testing.assert_array_equal(np.asarray(padded @ b), x @ b)
    np.testing.assert_allclose(np.asarray(padded.T @ np.ones(x.shape[0])), x.T.sum(1))
    jitted = modjax.jit(lambda a, w: (a @ w, a.todense()))(padded, v)
    np.testing.assert_allclose(np.asarray(jitted[0]), x @ v, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jitted[1]), x)
    # sparse.grad with respect to the data: the product's derivative on the pattern
    g = sparse.grad(lambda a: jnp.sum(a @ v))(cls.fromdense(x.astype(np.float32)))
    assert type(g) is cls
    np.testing.assert_array_equal(np.asarray(g.todense()), np.where(x != 0, v[None, :], 0))


def test_legacy_function_forms():
    c, r = COO.fromdense(X), CSR.fromdense(X)
    for fn, mat in ((sparse.coo_matvec, c), (sparse.csr_matvec, r)):
        assert np.asarray(fn(mat, jnp.ones(3))).tolist() == [1.0, 5.0]
        assert np.asarray(fn(mat, jnp.ones(2), transpose=True)).tolist() == [2.0, 1.0, 3.0]
    for fn, mat in ((sparse.coo_matmat, c), (sparse.csr_matmat, r)):
        assert np.asarray(fn(mat, jnp.ones((2, 2)), transpose=True)).tolist() == [
            [2.0, 2.0],
            [1.0, 1.0],
            [3.0, 3.0],
        ]
    np.testing.assert_array_equal(np.asarray(sparse.coo_todense(c)), X)
    np.testing.assert_array_equal(np.asarray(sparse.csr_todense(r)), X)
    assert repr(sparse.coo_fromdense(X)) == "COO(float32[2, 3], nse=3)"
    assert repr(sparse.csr_fromdense(X, nse=jnp.array(3))) == "CSR(float32[2, 3], nse=3)"
    # vmap maps every buffer of a legacy matrix (JAX 0.10.2 has no batching rule here)
    stacked = modjax.tree_util.tree_map(lambda b: jnp.stack([b, b]), c)
    np.testing.assert_array_equal(np.asarray(modjax.vmap(lambda a: a.todense())(stacked)), [X, X])


def test_legacy_recorded_jax_answers():
    # JAX 0.10.2: padding of COO is (0, 0) with data 0; of CSR column 0 past indptr[-1]
    assert _bufs(COO.fromdense(X, nse=5)) == [
        [1.0, 2.0, 3.0, 0.0, 0.0],
        [0, 1, 1, 0, 0],
        [1, 0, 2, 0, 0],
    ]
    assert _bufs(CSR.fromdense(X, nse=5)) == [[1.0, 2.0, 3.0, 0.0, 0.0], [1, 0, 2, 0, 0], [0, 1, 3]]
    assert _bufs(CSC.fromdense(X)) == [[2.0, 1.0, 3.0], [1, 0, 1], [0, 1, 2, 3]]
    c = COO.fromdense(X)
    assert c._info == ((2, 3), True, False)
    assert c.tree_flatten()[1] == {"shape": (2, 3), "rows_sorted": True, "cols_sorted": False}
    assert c.T._info == ((3, 2), False, True)
    assert CSR.fromdense(X).tree_flatten()[1] == {"shape": (2, 3)}
    assert CSC.fromdense(X).tree_flatten()[1] == {"shape": (2, 3)}
    assert repr(CSR.fromdense(X).T) == "CSC(float32[3, 2], nse=3)"
    assert repr(CSC.fromdense(X).T) == "CSR(float32[3, 2], nse=3)"
    assert not hasattr(CSC, "_bufs") and not hasattr(CSR, "_info")
    unsorted = COO(
        (jnp.array([1.0, 2, 3]), jnp.array([1, 0, 1]), jnp.array([2, 1, 0])), shape=(2, 3)
    )
    srt = unsorted._sort_indices()
    assert _bufs(srt) == [[2.0, 3.0, 1.0], [0, 1, 1], [1, 0, 2]] and srt._info[1:] == (True, False)
    # scatter and gather index rules of the kernels: negatives wrap, outside is dropped
    odd = COO((jnp.ones(3), jnp.array([0, 2, -1]), jnp.array([0, 0, 5])), shape=(2, 3))
    assert np.asarray(odd.todense()).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert np.asarray(odd @ jnp.arange(3.0)).tolist() == [0.0, 2.0]
    weird = (jnp.ones(3), jnp.array([0, 2, -1]), jnp.array([0, 3, 2]))
    assert np.asarray(CSR(weird, shape=(2, 3)).todense()).tolist() == [[1, 0, 1], [0, 0, 1]]
    # promotion in @; empty and eye
    assert (c @ jnp.ones(3, jnp.int32)).dtype == np.float32
    assert repr(sparse.empty((2, 3), sparse_format="coo")) == "COO(float32[2, 3], nse=0)"
    e = sparse.empty((2, 3), sparse_format="csr", dtype=jnp.int32)
    assert _bufs(e) == [[], [], [0, 0, 0]] and e.dtype == np.int32
    assert _bufs(sparse.empty((2, 3), sparse_format="csc"))[2] == [0, 0, 0, 0]
    eye = sparse.eye(3, 4, k=-1, sparse_format="coo", index_dtype="int16")
    assert _bufs(eye) == [[1.0, 1.0], [1, 2], [0, 1]] and eye.row.dtype == np.int16
    assert _bufs(sparse.eye(3, 4, k=1, sparse_format="coo")) == [[1.0] * 3, [0, 1, 2], [1, 2, 3]]
    assert _bufs(sparse.eye(3, 4, k=-1, sparse_format="csr")) == [[1.0, 1.0], [0, 1], [0, 0, 1, 2]]
    assert _bufs(sparse.eye(3, 4, k=1, sparse_format="csc")) == [
        [1.0, 1.0, 1.0],
        [0, 1, 2],
        [0, 0, 1, 2, 3],
    ]
    assert repr(sparse.eye(3, 4, k=5, sparse_format="csr")) == "CSR(float32[3, 4], nse=0)"
    # the Jacobian of a legacy matrix maps every buffer and keeps the 2-D shape
    jac = sparse.jacrev(lambda a: a @ jnp.arange(3.0))(c)
    assert repr(jac) == "COO(float32[2, 3], nse=6)"
    assert [b.shape for b in jac.tree_flatten()[0]] == [(2, 3)] * 3


def test_legacy_errors_as_in_jax():
    c, r = COO.fromdense(X), CSR.fromdense(X)
    with pytest.raises(NotImplementedError, match="axes argument"):
        c.transpose((1, 0))
    with pytest.raises(AssertionError):
        r.transpose((1, 0))
    for m in (c, r, CSC.fromdense(X)):
        with pytest.raises(NotImplementedError, match="two sparse objects"):
            m @ m.T
        with pytest.raises(NotImplementedError, match=r"shape \(3, 2, 2\)"):
            m @ jnp.ones((3, 2, 2))
        with pytest.raises(NotImplementedError):
            jnp.ones(2) @ m
    # JAX asserts: mismatched dtypes or shapes in the function forms, non-2-D fromdense
    with pytest.raises(AssertionError):
        sparse.coo_matvec(c, jnp.ones(3, jnp.int32))
    with pytest.raises(AssertionError):
        sparse.csr_matvec(r, jnp.ones(2))
    with pytest.raises(AssertionError):
        sparse.csr_matmat(r, jnp.ones(3))
    for cls in (COO, CSR):
        with pytest.raises(AssertionError):
            cls.fromdense(np.ones((2, 2, 2)))
    with pytest.raises(AttributeError):
        sparse.csr_matvec(CSC.fromdense(X), jnp.ones(3))
    with pytest.raises(ValueError, match="ndim=2"):
        sparse.empty((2, 3, 4), sparse_format="coo")
    with pytest.raises(TypeError):
        sparse.empty((2, 3), sparse_format="coo", nse=3)
    with pytest.raises(ValueError, match="not recognized"):
        sparse.empty((2, 3), sparse_format="xx")
    with pytest.raises(KeyError):
        sparse.eye(3, sparse_format="xx")
    with pytest.raises(modjax.errors.ConcretizationTypeError):
        modjax.jit(CSR.fromdense)(X)
    with pytest.raises(ValueError, match="invalid aux_data"):
        COO.tree_unflatten({"shape": (2, 3)}, c._bufs)
