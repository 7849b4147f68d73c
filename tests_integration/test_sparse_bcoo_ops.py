"""BCOO operations of modjax.experimental.sparse against numpy and JAX 0.10.2's answers.

Reshape, squeeze, broadcast_in_dim, slice, dynamic_slice, rev, concatenate, gather and
indexing, sparse × sparse products and the 1-D convolution. Property tests compare the
dense form of each result with numpy's answer on the dense array, over the layouts
(n_batch, n_dense) of one shared shape so that the compiled programs stay few; the
layouts, nse, flags and errors that JAX 0.10.2 gives are written literally.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental import sparse
from modjax.experimental.sparse import BCOO

SHAPE = (2, 3, 4)
LAYOUTS = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)]


def dense(seed: int, shape=SHAPE, density=0.4, dtype=np.float32):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 5, size=shape).astype(dtype)
    return values * (rng.random(shape) < density)


def layout(m: BCOO):
    return (m.n_batch, m.n_sparse, m.n_dense, m.nse, m.indices_sorted, m.unique_indices)


def check(m, expected):
    assert isinstance(m, BCOO)
    np.testing.assert_array_equal(np.asarray(m.todense()), expected)


cases = st.tuples(st.sampled_from(LAYOUTS), st.integers(0, 2**16))


def case_arrays(case):
    """The dense array of a drawn case and its BCOO in the case's (n_batch, n_dense)."""
    (nb, nd), seed = case
    x = dense(seed)
    return x, BCOO.fromdense(x, n_batch=nb, n_dense=nd)


# --- reshape -------------------------------------------------------------------------

# JAX 0.10.2: bcoo_reshape of a (2, 3, 4) array per layout and new shape:
# (n_batch, n_sparse, n_dense, nse) of the result, or the exception raised.
RESHAPES = {
    (0, 0): {(24,): (0, 1, 0), (6, 4): (0, 2, 0), (1, 2, 3, 4): (1, 3, 0), (2, 3, 2, 2): (0, 4, 0)},
    (1, 0): {(24,): ValueError, (2, 12): (1, 1, 0), (1, 2, 3, 4): (2, 2, 0), (3, 8): ValueError},
    (0, 1): {(6, 4): (0, 1, 1), (2, 12): ValueError, (2, 3, 2, 2): (0, 2, 2)},
    (2, 0): {(6, 4): (1, 1, 0), (2, 3, 2, 2): (2, 2, 0), (2, 12): ValueError},
    (0, 2): {(2, 12): (0, 1, 1), (2, 3, 2, 2): (0, 1, 3), (6, 4): ValueError},
}


@pytest.mark.parametrize("lay", list(RESHAPES))
def test_reshape_layouts_match_jax(lay):
    x = dense(0)
    m = BCOO.fromdense(x, n_batch=lay[0], n_dense=lay[1])
    for new_shape, expected in RESHAPES[lay].items():
        if isinstance(expected, type):
            with pytest.raises(expected, match="cannot mix"):
                sparse.bcoo_reshape(m, new_sizes=new_shape)
            continue
        out = m.reshape(new_shape)
        assert (out.n_batch, out.n_sparse, out.n_dense) == expected
        assert out.nse == m.nse and not out.indices_sorted
        check(out, x.reshape(new_shape))
    # Reshaping to the same shape returns the array itself (its flags kept), as jnp does.
    assert m.reshape(SHAPE) is m
    assert not sparse.bcoo_reshape(m, new_sizes=SHAPE).indices_sorted


def test_reshape_arguments_and_errors():
    x = dense(1)
    m = BCOO.fromdense(x)
    check(m.reshape(-1), x.reshape(-1))
    check(m.reshape(2, -1), x.reshape(2, -1))
    out = sparse.bcoo_reshape(m, new_sizes=(2, 12), dimensions=(0, 2, 1))
    check(out, x.transpose(0, 2, 1).reshape(2, 12))
    with pytest.raises(ValueError):
        sparse.bcoo_reshape(m, new_sizes=(5, 5))
    with pytest.raises(TypeError):
        m.reshape(5, 5)
    # JAX: a permutation mixing sparse and dense axes is NotImplementedError.
    with pytest.raises(NotImplementedError):
        sparse.bcoo_reshape(BCOO.fromdense(x, n_dense=1), new_sizes=(2, 12), dimensions=(0, 2, 1))


@settings(max_examples=examples(6), deadline=None)
@given(cases)
def test_reshape_and_sum_keepdims_property(case):
    x, m = case_arrays(case)
    for new_shape in [(2, 3, 2, 2), (2, 1, 3, 4)]:
        try:
            out = m.reshape(new_shape)
        except ValueError:
            continue
        check(out, x.reshape(new_shape))
    out = m.sum(axis=1, keepdims=True)
    check(out, x.sum(1, keepdims=True))
    total = m.sum(keepdims=True)
    assert not isinstance(total, BCOO) and total.shape == (1, 1, 1)


def test_sum_keepdims_layout():
    m = BCOO.fromdense(dense(2))
    # JAX 0.10.2: the kept axes come back through bcoo_broadcast_in_dim.
    assert layout(m.sum(axis=1, keepdims=True))[:3] == (0, 3, 0)
    assert layout(m.sum(axis=(0, 2), keepdims=True))[:3] == (1, 2, 0)
    assert layout(BCOO.fromdense(dense(2), n_batch=1).sum(axis=1, keepdims=True))[:3] == (2, 1, 0)


# --- squeeze and broadcast_in_dim ----------------------------------------------------


@pytest.mark.parametrize("lay", LAYOUTS)
def test_squeeze(lay):
    x = dense(3, shape=(1, 3, 1), density=0.9)
    m = BCOO.fromdense(x, n_batch=lay[0], n_dense=lay[1])
    for dims in [(0,), (2,), (0, -1)]:
        out = sparse.bcoo_squeeze(m, dimensions=dims)
        check(out, np.squeeze(x, tuple(d % 3 for d in dims)))
        assert (out.indices_sorted, out.unique_indices) == (True, True)
    with pytest.raises(ValueError, match="size not equal to one"):
        sparse.bcoo_squeeze(m, dimensions=(1,))
    with pytest.raises(ValueError, match="out of bounds"):
        sparse.bcoo_squeeze(m, dimensions=(3,))


# JAX 0.10.2: (n_batch, n_sparse, n_dense) of bcoo_broadcast_in_dim, or its error.
BROADCASTS = {
    ((5, 2, 3, 4), (1, 2, 3)): {(0, 0): (1, 3, 0), (1, 1): (2, 1, 1), (0, 2): (1, 1, 2)},
    ((2, 5, 3, 4), (0, 2, 3)): {(0, 0): NotImplementedError, (1, 0): (2, 2, 0)},
    ((2, 3, 4, 5), (0, 1, 2)): {(0, 1): (0, 2, 2), (2, 0): NotImplementedError},
    ((2, 3, 1, 4), (0, 1, 3)): {(0, 0): (0, 4, 0), (1, 1): (1, 2, 1), (2, 0): (3, 1, 0)},
}


@pytest.mark.parametrize("target", list(BROADCASTS))
def test_broadcast_in_dim(target):
    shape, dims = target
    x = dense(4)
    for lay, expected in BROADCASTS[target].items():
        m = BCOO.fromdense(x, n_batch=lay[0], n_dense=lay[1])
        if isinstance(expected, type):
            with pytest.raises(expected):
                sparse.bcoo_broadcast_in_dim(m, shape=shape, broadcast_dimensions=dims)
            continue
        out = sparse.bcoo_broadcast_in_dim(m, shape=shape, broadcast_dimensions=dims)
        assert (out.n_batch, out.n_sparse, out.n_dense) == expected and out.nse == m.nse
        check(out, np.asarray(lax.broadcast_in_dim(jnp.asarray(x), shape, dims)))
    m = BCOO.fromdense(x)
    with pytest.raises(ValueError, match="same length"):
        sparse.bcoo_broadcast_in_dim(m, shape=SHAPE, broadcast_dimensions=(0, 1))


# --- slicing -------------------------------------------------------------------------


@settings(max_examples=examples(6), deadline=None)
@given(cases)
def test_slice_dynamic_slice_rev_property(case):
    x, m = case_arrays(case)
    out = sparse.bcoo_slice(m, start_indices=(0, 0, 1), limit_indices=(2, 3, 4), strides=(1, 2, 2))
    check(out, x[:, ::2, 1::2])
    out = sparse.bcoo_slice(m, start_indices=(1, 1, 1), limit_indices=(2, 2, 3))
    check(out, x[1:2, 1:2, 1:3])
    assert out.nse <= max(m.nse, 1)
    out = sparse.bcoo_dynamic_slice(m, (-1, 2, -3), (1, 2, 2))
    check(out, x[1:2, 1:3, 1:3])
    jitted = modjax.jit(lambda m, i: sparse.bcoo_dynamic_slice(m, (i, i, i), (1, 2, 2)))
    check(jitted(m, 1), x[1:2, 1:3, 1:3])
    check(sparse.bcoo_rev(m, (0, 1, 2)), x[::-1, ::-1, ::-1])
    check(sparse.bcoo_rev(m, (1,)), x[:, ::-1])


def test_slice_layouts_and_errors():
    m = BCOO.fromdense(dense(5))
    assert m.nse > 6
    # JAX 0.10.2: nse shrinks to the slice's sparse positions when they are fewer,
    # and a slice claims neither sorted nor unique indices.
    out = sparse.bcoo_slice(m, start_indices=(1, 1, 1), limit_indices=(2, 2, 3))
    assert layout(out) == (0, 3, 0, 2, False, False)
    out = sparse.bcoo_slice(m, start_indices=(0, 1, 1), limit_indices=(2, 3, 4))
    assert layout(out) == (0, 3, 0, min(m.nse, 12), False, False)
    assert layout(sparse.bcoo_dynamic_slice(m, (1, 1, 1), (1, 2, 3))) == (0, 3, 0, 6, False, False)
    with pytest.raises(ValueError, match="invalid indices"):
        sparse.bcoo_slice(m, start_indices=(0, 1, 1), limit_indices=(2, 4, 4))
    with pytest.raises(ValueError):
        sparse.bcoo_slice(m, start_indices=(0, 1), limit_indices=(2, 3))
    with pytest.raises(ValueError, match="strides"):
        sparse.bcoo_slice(m, start_indices=(0, 0, 0), limit_indices=(2, 3, 4), strides=(0, 1, 1))
    with pytest.raises(TypeError):
        sparse.bcoo_dynamic_slice(m, (1, 1, 1), (1, 4, 3))
    with pytest.raises(ValueError):
        sparse.bcoo_dynamic_slice(m, (1, 1), (1, 2))
    with pytest.raises(TypeError, match="less than operand ndim"):
        sparse.bcoo_rev(m, (3,))
    with pytest.raises(TypeError, match="unique"):
        sparse.bcoo_rev(m, (1, 1))


# --- concatenate ---------------------------------------------------------------------

# JAX 0.10.2: n_batch of bcoo_concatenate([m, m2]) along each dimension, or its
# error; nse is the larger operand's along a batch dimension, the sum along a sparse one.
CONCATS = {
    (0, 0): [0, 0, 0],
    (1, 0): [1, 1, 1],
    (0, 1): [0, 0, NotImplementedError],
    (2, 0): [2, 2, 2],
    (0, 2): [0, NotImplementedError, NotImplementedError],
}


@pytest.mark.parametrize("lay", list(CONCATS))
def test_concatenate(lay):
    rng = np.random.default_rng(0)
    a = rng.integers(1, 5, size=SHAPE).astype(np.float32) * (rng.random(SHAPE) < 0.4)
    b = rng.integers(1, 5, size=SHAPE).astype(np.float32) * (rng.random(SHAPE) < 0.9)
    m, m2 = (BCOO.fromdense(v, n_batch=lay[0], n_dense=lay[1]) for v in (a, b))
    for dim, expected in enumerate(CONCATS[lay]):
        if isinstance(expected, type):
            with pytest.raises(expected, match="dense dimensions"):
                sparse.bcoo_concatenate([m, m2], dimension=dim)
            continue
        out = sparse.bcoo_concatenate([m, m2], dimension=dim)
        nse = max(m.nse, m2.nse) if dim < m.n_batch else m.nse + m2.nse
        assert (out.n_batch, out.nse) == (expected, nse)
        check(out, np.concatenate([a, b], axis=dim))
    with pytest.raises(TypeError, match="out of bounds"):
        sparse.bcoo_concatenate([m, m], dimension=-1)
    with pytest.raises(ValueError, match="sequence of BCOO"):
        sparse.bcoo_concatenate([m, jnp.asarray(a)], dimension=0)


# --- indexing ------------------------------------------------------------------------

INDICES = [
    0,
    -1,
    (0, 1),
    slice(1, 3),
    (slice(None), 1),
    (Ellipsis, 2),
    None,
    (0, None, slice(1, 3)),
    slice(None, None, -1),
    (slice(None), slice(2, 0, -1)),
    (1, slice(0, 2), -2),
    (slice(None), slice(None), slice(1, None, 2)),
    (slice(None), None, 1),
    (0, 0, 0),
    np.array([0, 1]),
    (slice(None), np.array([0, 2])),
]


@settings(max_examples=examples(4), deadline=None)
@given(st.sampled_from([(0, 0), (1, 0), (1, 1), (2, 0)]), st.integers(0, 2**16))
def test_getitem_property(lay, seed):
    x = dense(seed)
    m = BCOO.fromdense(x, n_batch=lay[0], n_dense=lay[1])
    for idx in INDICES:
        check(m[idx], x[idx])
    check(modjax.jit(lambda m, i: m[i])(m, 1), x[1])
    check(modjax.jit(lambda m, i: m[:, i])(m, -1), x[:, -1])


def test_getitem_layouts_match_jax():
    x = dense(0)
    m = BCOO.fromdense(x)
    # JAX 0.10.2's results: (n_batch, n_sparse, n_dense, nse, sorted, unique).
    # nse is at most the number of sparse positions a slice keeps.
    assert layout(m[0]) == (0, 2, 0, min(m.nse, 12), False, False)
    assert layout(m[0, 1]) == (0, 1, 0, min(m.nse, 4), False, False)
    assert layout(m[None]) == (1, 3, 0, m.nse, False, False)
    assert layout(m[..., None]) == (0, 4, 0, m.nse, False, False)
    assert layout(m[0, 0, 0]) == (0, 0, 0, 1, False, False)
    assert layout(m[np.array([0, 1])]) == (1, 2, 0, min(m.nse, 12), False, False)
    assert layout(m[:, np.array([0, 2])]) == (0, 3, 0, 2 * min(m.nse, 8), False, False)
    assert m[()] is m and m[:, :] is m
    mb = BCOO.fromdense(x, n_batch=1, n_dense=1)
    assert layout(mb[:, 1]) == (1, 0, 1, 1, False, False)
    assert layout(mb[:, None, 1]) == (2, 0, 1, 1, False, False)
    # An out-of-range static integer is clamped (JAX takes the dynamic-slice route).
    check(m[5], x[-1])
    assert [np.asarray(row.todense()).tolist() for row in m] == x.tolist()
    with pytest.raises(IndexError):
        m[0, 0, 0, 0]


def test_gather():
    x = dense(6)
    m = BCOO.fromdense(x)
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    out = sparse.bcoo_gather(m, jnp.array([[1], [0], [1]]), numbers, (1, 3, 4))
    check(out, x[[1, 0, 1]])
    with pytest.raises(NotImplementedError, match="mode"):
        sparse.bcoo_gather(m, jnp.array([[1]]), numbers, (1, 3, 4), mode="fill")


# --- products of two BCOO arrays -----------------------------------------------------


@settings(max_examples=examples(6), deadline=None)
@given(cases, st.sampled_from(LAYOUTS))
def test_multiply_sparse_property(case, other):
    (nb, nd), seed = case
    x, y = dense(seed), dense(seed + 1, density=0.7)
    m = BCOO.fromdense(x, n_batch=nb, n_dense=nd)
    m2 = BCOO.fromdense(y, n_batch=other[0], n_dense=other[1])
    if nd != other[1]:
        with pytest.raises(NotImplementedError, match="dense dimensions"):
            sparse.bcoo_multiply_sparse(m, m2)
        return
    out = m * m2
    assert out.n_batch == min(nb, other[0])
    check(out, x * y)
    yb = dense(seed + 2, shape=(1, 3, 4), density=0.7)
    check(sparse.bcoo_multiply_sparse(m, BCOO.fromdense(yb, n_batch=nb, n_dense=nd)), x * yb)


def test_multiply_sparse_layout_and_transforms():
    x, y = dense(0), dense(1, density=0.9)
    m, m2 = BCOO.fromdense(x), BCOO.fromdense(y)
    # JAX 0.10.2: nse is the product of the operands' nse; no flags.
    assert layout(m * m2) == (0, 3, 0, m.nse * m2.nse, False, False)
    with pytest.raises(TypeError, match="same number of dimensions"):
        sparse.bcoo_multiply_sparse(m, BCOO.fromdense(x[0]))
    a = BCOO.fromdense(x[0])
    grad = modjax.grad(lambda d: (BCOO((d, a.indices), shape=a.shape) * a).todense().sum())
    np.testing.assert_array_equal(np.asarray(grad(a.data)), np.asarray(a.data))
    mb = BCOO.fromdense(x, n_batch=1)
    out = modjax.vmap(lambda p, q: p * q)(mb, mb)
    assert out.n_batch == 1
    check(out, x * x)
    check(modjax.jit(lambda p, q: p * q)(m, m2), x * y)


def test_spdot_general():
    a, b = dense(7, shape=(3, 4)), dense(8, shape=(4, 5))
    A, B = BCOO.fromdense(a), BCOO.fromdense(b)
    out = A @ B
    # JAX 0.10.2: a BCOO with nse = A.nse * B.nse (at most the output's size).
    assert isinstance(out, BCOO) and out.nse == min(A.nse * B.nse, 15) and out.n_sparse == 2
    np.testing.assert_allclose(np.asarray(out.todense()), a @ b)
    v = dense(9, shape=(4,), density=0.8)
    np.testing.assert_allclose(np.asarray((A @ BCOO.fromdense(v)).todense()), a @ v)
    vv = BCOO.fromdense(v) @ BCOO.fromdense(v)
    assert vv.shape == () and vv.nse == 1
    out = sparse.bcoo_dot_general(A, A, dimension_numbers=(((0,), (0,)), ((), ())))
    np.testing.assert_allclose(np.asarray(out.todense()), a.T @ a)
    ab, bb = dense(10, shape=(2, 3, 4)), dense(11, shape=(2, 4, 5))
    Ab, Bb = BCOO.fromdense(ab, n_batch=1), BCOO.fromdense(bb, n_batch=1)
    out = Ab @ Bb
    assert (out.n_batch, out.nse) == (1, 15)
    np.testing.assert_allclose(np.asarray(out.todense()), ab @ bb)
    out = modjax.vmap(lambda p, q: p @ q)(Ab, Bb)
    np.testing.assert_allclose(np.asarray(out.todense()), ab @ bb)
    np.testing.assert_allclose(np.asarray(modjax.jit(lambda p, q: p @ q)(A, B).todense()), a @ b)
    with pytest.raises(TypeError, match="contracting dimensions"):
        A @ A
    with pytest.raises(NotImplementedError, match="batch dimensions of the sparse"):
        Ab @ BCOO.fromdense(bb)
    with pytest.raises(NotImplementedError, match="contraction of sparse indices"):
        sparse.bcoo_dot_general(Ab, Bb, dimension_numbers=(((0,), (0,)), ((), ())))
    with pytest.raises(ValueError, match="unused batch dims"):
        sparse.bcoo_dot_general(A, Bb, dimension_numbers=(((1,), (1,)), ((), ())))
    with pytest.raises(NotImplementedError, match="dense dimensions"):
        BCOO.fromdense(a, n_dense=1) @ B
    # modjax differentiates the product w.r.t. the data (JAX 0.10.2 has no transpose rule).
    grad = modjax.grad(lambda d: (BCOO((d, A.indices), shape=A.shape) @ B).todense().sum())
    np.testing.assert_allclose(np.asarray(grad(A.data)), b.sum(1)[np.asarray(A.indices)[:, 1]])


def test_from_scipy_sparse_layout_refused():
    import scipy.sparse

    mat = scipy.sparse.random(4, 5, density=0.4, random_state=0, format="csr")
    # JAX 0.10.2 refuses n_batch/n_dense here too.
    for kwargs in ({"n_batch": 1}, {"n_dense": 1}):
        with pytest.raises(NotImplementedError):
            BCOO.from_scipy_sparse(mat, **kwargs)


# --- convolution ---------------------------------------------------------------------


def test_conv_general_dilated():
    x = np.array([[[0, 1, 0, 2, 0, 0, 3, 1.0]]], np.float32)
    k = np.array([[[1, 0, 2.0]]], np.float32)
    X, K = BCOO.fromdense(x), BCOO.fromdense(k)
    for padding in ["VALID", "SAME", [(1, 2)], [(-1, 1)]]:
        expected = np.asarray(lax.conv_general_dilated(x, k, (1,), padding))
        for lhs, rhs, nse in [(X, K, 8), (X, k, 12), (x, K, 16)]:
            out = sparse.bcoo_conv_general_dilated(lhs, rhs, window_strides=(1,), padding=padding)
            # JAX 0.10.2: n_batch 2 and nse = product of the operands' element counts.
            assert (out.n_batch, out.nse) == (2, nse)
            np.testing.assert_allclose(np.asarray(out.todense()), expected)
    with pytest.raises(NotImplementedError, match="window_strides"):
        sparse.bcoo_conv_general_dilated(X, K, window_strides=(2,), padding="VALID")
    with pytest.raises(NotImplementedError, match="dilation"):
        sparse.bcoo_conv_general_dilated(
            X, K, window_strides=(1,), padding="VALID", rhs_dilation=(2,)
        )
    with pytest.raises(TypeError):
        sparse.bcoo_conv_general_dilated(
            X, BCOO.fromdense(np.ones((1, 1, 2, 2))), window_strides=(1,), padding="VALID"
        )
