"""modjax.numpy's sorting, searching, unique, convolution and cumulative/counting functions.

Compared with numpy (whose NaN ordering and results JAX shares), eagerly and
under jit, with the result dtypes JAX gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import both, check

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore.core import ConcretizationTypeError

VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf]
floats6 = st.lists(st.sampled_from(VALUES), min_size=6, max_size=6)


# --- sort, argsort, lexsort, partition -----------------------------------------------------------


def descending_argsort(x, axis):
    """JAX's stable descending order: ties keep their order, NaNs first."""
    n = x.shape[axis]
    rev = np.flip(x, axis)
    return n - 1 - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)


@given(floats6, st.sampled_from([0, 1, -1, None]), st.booleans())
def test_sort_and_argsort_against_numpy(values, axis, descending):
    x = np.array(values, np.float32).reshape(2, 3)
    sorted_ = np.sort(x, axis=axis)
    want = np.flip(sorted_, -1 if axis is None else axis) if descending else sorted_
    for got in both(lambda x: jnp.sort(x, axis=axis, descending=descending), x):
        check(got, want, np.float32)
    flat = x.ravel() if axis is None else x
    ax = 0 if axis is None else axis
    want_idx = descending_argsort(flat, ax) if descending else np.argsort(flat, ax, kind="stable")
    for got in both(lambda x: jnp.argsort(x, axis=axis, descending=descending), x):
        check(got, want_idx, np.int32)


def test_sort_dtypes_zero_size_and_errors():
    for dtype in (np.int8, np.uint16, np.bool_, np.float16, np.complex64):
        x = (np.arange(7)[::-1] % 3).astype(dtype)
        check(jnp.sort(x), np.sort(x), dtype)
    check(
        jnp.sort(np.array([1 + 2j, 1 - 1j, -3j], np.complex64)),
        np.sort(np.array([1 + 2j, 1 - 1j, -3j], np.complex64)),
    )
    assert jnp.sort(np.zeros((2, 0), np.float32)).shape == (2, 0)
    check(jnp.argsort(np.array([3, 1, 2]), dtype=np.int16), [1, 2, 0], np.int16)
    with pytest.raises(TypeError, match="order"):
        jnp.sort(np.ones(3), order="x")
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sort(np.float32(1.0))
    check(
        jnp.sort_complex(np.array([3, 1, 2])),
        np.sort_complex(np.array([3, 1, 2])).astype(np.complex64),
        np.complex64,
    )


def test_lexsort_partition_argpartition():
    rng = np.random.default_rng(0)
    k1, k2 = rng.integers(0, 3, 8), rng.integers(0, 3, 8)
    check(jnp.lexsort((k1, k2)), np.lexsort((k1, k2)).astype(np.int32), np.int32)
    check(jnp.lexsort(np.stack([k1, k2])), np.lexsort(np.stack([k1, k2])).astype(np.int32))
    m = rng.integers(0, 4, (3, 8))
    check(jnp.lexsort((m[0], m[1]), axis=0), np.lexsort((m[0], m[1]), axis=0))
    x = rng.standard_normal((2, 7)).astype(np.float32)
    for kth in (0, 3, -1):
        p = np.asarray(jnp.partition(x, kth))
        k = kth % x.shape[1]
        assert np.all(p[:, :k] <= p[:, k : k + 1]) and np.all(p[:, k + 1 :] >= p[:, k : k + 1])
        check(np.sort(p, axis=-1), np.sort(x, axis=-1))
        check(p[:, kth], np.partition(x, kth)[:, kth])
        idx = np.asarray(jnp.argpartition(x, kth, axis=1))
        check(np.take_along_axis(x, idx, 1)[:, kth], np.partition(x, kth)[:, kth])
    with pytest.raises(ValueError, match="kth"):
        jnp.partition(x, 7)


# --- searchsorted and digitize -------------------------------------------------------------------

SORTED = np.array([-np.inf, -1.0, 0.0, 0.0, 2.5, 2.5, np.inf, np.nan], np.float32)


@given(
    st.lists(st.sampled_from(VALUES + [3.0, -5.0]), min_size=5, max_size=5),
    st.sampled_from(["left", "right"]),
    st.sampled_from(["scan", "scan_unrolled", "compare_all", "sort"]),
)
def test_searchsorted_against_numpy(values, side, method):
    v = np.array(values, np.float32)
    want = np.searchsorted(SORTED, v, side=side).astype(np.int32)
    for got in both(lambda a, v: jnp.searchsorted(a, v, side=side, method=method), SORTED, v):
        check(got, want, np.int32)


def test_searchsorted_shapes_dtypes_sorter_and_errors():
    a = np.array([1, 2, 2, 5, 9])
    v = np.array([[0, 2], [5, 10]])
    check(jnp.searchsorted(a, v), np.searchsorted(a, v))
    check(jnp.searchsorted(a, 2, side="right"), np.searchsorted(a, 2, side="right"))
    check(jnp.searchsorted(a.astype(np.uint8), np.uint8(3)), 3)
    check(jnp.searchsorted(np.array([False, True]), True), 1)
    c = np.array([1 - 1j, 1 + 0j, 2 + 0j], np.complex64)
    check(
        jnp.searchsorted(c, np.array([1 + 0.5j, 3j], np.complex64)),
        np.searchsorted(c, np.array([1 + 0.5j, 3j])),
    )
    perm = np.array([3, 0, 4, 1, 2])
    check(
        jnp.searchsorted(a[perm], np.array([2, 6]), sorter=np.argsort(a[perm])),
        np.searchsorted(a[perm], np.array([2, 6]), sorter=np.argsort(a[perm])),
    )
    check(jnp.searchsorted(np.zeros(0, np.float32), np.ones(3, np.float32)), [0, 0, 0])
    with pytest.raises(ValueError, match="'middle' is an invalid value for keyword 'side'"):
        jnp.searchsorted(a, v, side="middle")
    with pytest.raises(ValueError, match="method"):
        jnp.searchsorted(a, v, method="bisect")
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(a.reshape(5, 1), v)


def test_digitize_against_numpy():
    x = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 9.0, np.nan], np.float32)
    for bins in (np.array([0.0, 1.0, 3.0], np.float32), np.array([3.0, 1.0, 0.0], np.float32)):
        for right in (False, True):
            for got in both(lambda x, b, right=right: jnp.digitize(x, b, right=right), x, bins):
                check(got, np.digitize(x, bins, right=right), np.int32)
    check(jnp.digitize(x, np.zeros(0, np.float32)), np.zeros(7, np.int32))
    with pytest.raises(ValueError, match="bins must be a 1-dimensional"):
        jnp.digitize(x, np.ones((2, 2)))


# --- unique --------------------------------------------------------------------------------------


@given(st.lists(st.integers(-2, 2), min_size=6, max_size=6))
def test_unique_against_numpy(values):
    x = np.array(values, np.int8).reshape(2, 3)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w, dt in zip(got, want, (np.int8, np.int32, np.int32, np.int32), strict=True):
        check(g, w.astype(dt), dt)
    # with size=: padded with the smallest value, its index, and zero counts
    size = 6

    def padded(w, fill, size=6):
        return np.concatenate([w[:size], np.full(max(size - len(w), 0), fill, w.dtype)])

    jitted = jit(
        lambda x: jnp.unique(
            x, return_index=True, return_inverse=True, return_counts=True, size=size
        )
    )(x)
    check(jitted[0], padded(want[0], want[0][0]))
    check(jitted[1], padded(want[1], want[1][0]).astype(np.int32))
    check(jitted[2], want[2].astype(np.int32))
    check(jitted[3], padded(want[3], 0).astype(np.int32))
    check(jnp.unique(x, size=2), padded(want[0], want[0][0], 2))


def test_unique_nan_zero_size_scalar_fill_and_errors():
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0], np.float32)
    values, counts = jnp.unique(x, return_counts=True)
    check(values, [-0.0, 1.0, np.nan])
    check(counts, [2, 1, 2])
    check(
        jnp.unique(np.array([np.nan, 1.0, np.nan], np.float32), equal_nan=False),
        [1.0, np.nan, np.nan],
    )
    assert jnp.unique(np.zeros(0, np.float32)).shape == (0,)
    values, inverse = jnp.unique(np.float32(3), return_inverse=True)
    check(values, [3.0])
    assert np.asarray(inverse).shape == ()
    check(jnp.unique(np.array([3, 1, 3]), size=4, fill_value=-1), [1, 3, -1, -1])
    check(jnp.unique(np.zeros(0, np.int32), size=2, fill_value=7), [7, 7])
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros(0, np.float32), size=3)
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.unique"):
        jit(jnp.unique)(np.array([1, 2]))
    r = jnp.unique_all(np.array([2, 1, 2]))
    check(r.values, [1, 2])
    check(r.indices, [1, 0])
    check(r.inverse_indices, [1, 0, 1])
    check(r.counts, [1, 2])
    check(jnp.unique_counts(np.array([2, 1, 2])).counts, [1, 2])
    check(jnp.unique_inverse(np.array([2, 1, 2])).inverse_indices, [1, 0, 1])
    check(jnp.unique_values(np.array([2, 1, 2])), [1, 2])
    check(jnp.unique(np.array([True, False, True])), [False, True])


# --- convolve and correlate ----------------------------------------------------------------------


@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from(["full", "same", "valid"]),
    st.sampled_from([np.float32, np.complex64]),
)
def test_convolve_correlate_against_numpy(n, m, mode, dtype):
    rng = np.random.default_rng(n * 10 + m)
    a = rng.standard_normal(n).astype(dtype)
    v = rng.standard_normal(m).astype(dtype)
    if dtype is np.complex64:
        a = a + 1j * rng.standard_normal(n).astype(np.float32)
        v = v - 2j * rng.standard_normal(m).astype(np.float32)
    for name in ("convolve", "correlate"):
        fn = getattr(jnp, name)
        want = getattr(np, name)(
            a.astype(np.complex128 if dtype is np.complex64 else np.float64), v, mode
        )
        check(fn(a, v, mode), want.astype(dtype), dtype, tol=1e-4)


def test_convolve_dtypes_jit_and_errors():
    check(jnp.convolve(np.array([1, 2, 3]), np.array([0, 1, 1])), [0, 1, 3, 5, 3], np.float32)
    check(
        jit(jnp.correlate)(np.array([1.0, 2, 3], np.float32), np.array([0.0, 1], np.float32)),
        np.correlate([1.0, 2, 3], [0.0, 1]),
        np.float32,
    )
    with pytest.raises(ValueError, match="only support 1-dimensional"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="cannot be empty"):
        jnp.correlate(np.ones(0), np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        jnp.convolve(np.ones(3), np.ones(2), mode="middle")


# --- cumulative functions ------------------------------------------------------------------------


@given(
    st.sampled_from(["cumsum", "cumprod", "nancumsum", "nancumprod"]),
    st.sampled_from([None, 0, 1, -1]),
    st.sampled_from([np.float32, np.int32, np.int8]),
)
def test_cumulative_against_numpy(name, axis, dtype):
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, (2, 3)).astype(dtype)
    if dtype is np.float32:
        x[0, 1] = np.nan
    want = getattr(np, name)(x, axis=axis).astype(dtype)  # JAX keeps the dtype (int8 wraps)
    for got in both(lambda x: getattr(jnp, name)(x, axis=axis), x):
        check(got, want, dtype)


def test_cumulative_dtypes_as_jax():
    for dtype, cum, api in [
        (np.int8, np.int8, np.int32),
        (np.uint8, np.uint8, np.uint32),
        (np.bool_, np.int32, np.int32),
        (np.int16, np.int16, np.int32),
        (np.float16, np.float16, np.float16),
        (np.uint32, np.uint32, np.uint32),
    ]:
        x = np.ones(3, dtype)
        assert jnp.cumsum(x).dtype == cum and jnp.cumprod(x).dtype == cum
        assert jnp.cumulative_sum(x).dtype == api
        # JAX 0.10.2 widens only the sum: the product keeps the dtype (bool: int32).
        assert jnp.cumulative_prod(x).dtype == cum
    check(jnp.cumsum(np.arange(4), dtype=np.float16), [0, 1, 3, 6], np.float16)
    check(jnp.cumsum(np.full(3, 100, np.int8)), np.array([100, -56, 44], np.int8))
    check(jnp.cumsum(np.float32(3)), np.cumsum(np.float32(3)), np.float32)  # 0-d: flattened
    assert jnp.cumprod(np.ones((0, 2), np.float32), axis=1).shape == (0, 2)


def test_cumulative_sum_and_prod_array_api():
    x = np.arange(1, 7).reshape(2, 3)
    check(
        jnp.cumulative_sum(x, axis=1, include_initial=True),
        np.cumulative_sum(x, axis=1, include_initial=True),
    )
    check(
        jnp.cumulative_prod(x, axis=0, include_initial=True),
        np.cumulative_prod(x, axis=0, include_initial=True),
    )
    check(jnp.cumulative_sum(np.arange(4)), np.cumulative_sum(np.arange(4)))
    with pytest.raises(ValueError, match="axis was not set"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="non-scalar"):
        jnp.cumulative_sum(np.float32(1))


def test_diff_and_ediff1d_against_numpy():
    x = np.array([[1, 4, 9, 16], [2, 3, 5, 8]], np.int32)
    for n in (0, 1, 2, 3):
        for axis in (0, 1, -1):
            if n > x.shape[axis]:
                continue
            check(jnp.diff(x, n=n, axis=axis), np.diff(x, n=n, axis=axis))
    check(
        jnp.diff(x, prepend=0, append=np.array([[7], [7]])),
        np.diff(x, prepend=0, append=np.array([[7], [7]])),
    )
    b = np.array([True, False, False, True])
    check(jnp.diff(b), np.diff(b))
    check(jit(lambda x: jnp.diff(x, 2))(x.astype(np.float32)), np.diff(x.astype(np.float32), 2))
    with pytest.raises(ValueError, match="order must be non-negative"):
        jnp.diff(x, n=-1)
    check(jnp.ediff1d(x), np.ediff1d(x))
    check(
        jnp.ediff1d(x, to_begin=np.array([-1.5, 0]), to_end=9), np.array([-1, 0, *np.ediff1d(x), 9])
    )
    check(jnp.ediff1d(np.ones(1)), np.ediff1d(np.ones(1)).astype(np.float32))


# --- histogram and bincount ----------------------------------------------------------------------


@given(
    st.sampled_from([1, 3, 5]),
    st.sampled_from([None, (0.0, 5.0), (2.0, 2.0)]),
    st.booleans(),
    st.booleans(),
)
def test_histogram_against_numpy(bins, range_, weighted, density):
    x = np.array([1.0, 2.0, 2.0, 3.0, 10.0, -1.0, 5.0], np.float32)
    w = np.linspace(0.5, 2, 7).astype(np.float32) if weighted else None
    want_counts, want_edges = np.histogram(x, bins, range_, weights=w, density=density)
    counts, edges = jnp.histogram(x, bins, range_, weights=w, density=density)
    check(edges, want_edges.astype(np.float32), np.float32, tol=1e-5)
    check(counts, want_counts.astype(np.float32), np.float32, tol=1e-5)
    check(jnp.histogram_bin_edges(x, bins, range_), want_edges.astype(np.float32))


def test_histogram_explicit_bins_ints_and_jit():
    x = np.array([1, 2, 2, 3, 10])
    edges = np.array([0.0, 2.0, 5.0, 11.0], np.float32)
    counts, got_edges = jit(lambda x, e: jnp.histogram(x, e))(x, edges)
    check(counts, np.histogram(x, edges)[0].astype(np.float32), np.float32)
    check(got_edges, edges)
    check(
        jnp.histogram(x, 3, range=(0, 5))[0], np.histogram(x, 3, range=(0, 5))[0].astype(np.float32)
    )
    with pytest.raises(ValueError, match="weights should have the same shape"):
        jnp.histogram(x, 3, weights=np.ones(2))


def test_bincount_against_numpy():
    x = np.array([0, 1, 1, 5, 3])
    check(jnp.bincount(x), np.bincount(x), np.int32)
    check(jnp.bincount(x, minlength=8), np.bincount(x, minlength=8))
    w = np.array([0.5, 1.0, 1.0, 2.0, -1.0], np.float32)
    check(jnp.bincount(x, weights=w), np.bincount(x, weights=w).astype(np.float32), np.float32)
    check(jit(lambda x: jnp.bincount(x, length=3))(x), [1, 2, 0])  # past the end: dropped
    check(jnp.bincount(np.array([-1, 0]), length=2), [2, 0])  # negative: bin 0, as in JAX
    check(jnp.bincount(np.zeros(0, np.int32)), np.zeros(0, np.int32))
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(np.ones(3, np.float32))
    with pytest.raises(ConcretizationTypeError, match="static `length`"):
        jit(jnp.bincount)(x)


# --- unique along an axis ------------------------------------------------------------------------

UNIQUE_AXIS_SHAPES = [(4, 3), (3, 2, 2), (5, 1), (6,)]


@given(st.data())
def test_unique_axis_against_numpy(data):
    shape = data.draw(st.sampled_from(UNIQUE_AXIS_SHAPES), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.bool_]), label="dtype")
    values = data.draw(st.lists(st.integers(0, 1), min_size=12, max_size=12), label="values")
    x = np.resize(np.array(values), shape).astype(dtype)  # few distinct values: repeated slices
    want = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    got = jnp.unique(x, axis=axis, **flags)
    for g, w, dt in zip(got, want, (dtype, np.int32, np.int32, np.int32), strict=True):
        check(g, w.reshape(np.shape(g)) if g is got[2] else w, dt)
    check(jnp.unique(x, axis=axis), want[0], dtype)
    # under jit with size=: extra slices repeat the first unique slice (or fill_value),
    # with its first index and zero counts; fewer slots truncate
    k = want[0].shape[axis]
    for size, fill in ((k + 2, None), (k + 1, 7), (1, None)):
        fn = jit(lambda x, s=size, f=fill: jnp.unique(x, axis=axis, size=s, fill_value=f, **flags))
        values_, index, inverse, counts = fn(x)
        pad = max(size - k, 0)
        fill_slice = (
            np.take(want[0], [0], axis)
            if fill is None
            else np.full_like(np.take(want[0], [0], axis), fill)
        )
        expect = np.concatenate(
            [np.take(want[0], range(min(k, size)), axis)] + [fill_slice] * pad, axis
        )
        check(values_, expect, dtype)
        check(index, np.concatenate([want[1][:size], np.full(pad, want[1][0])]))
        check(inverse, want[2].reshape(-1))
        check(counts, np.concatenate([want[3][:size], np.zeros(pad, int)]))


def test_unique_axis_nan_complex_empty_and_errors():
    x = np.array([[1, 2, 1], [0, np.nan, 0], [1, 2, 1], [0, np.nan, 0]], np.float32)
    # NaNs compare equal by default (JAX; numpy keeps the rows apart), not with equal_nan=False
    values, counts = jnp.unique(x, axis=0, return_counts=True)
    check(values, [[0, np.nan, 0], [1, 2, 1]])
    check(counts, [2, 2])
    values, inverse = jnp.unique(x, axis=0, return_inverse=True, equal_nan=False)
    check(values, [[0, np.nan, 0], [0, np.nan, 0], [1, 2, 1]])
    check(inverse, [2, 0, 2, 1])
    check(
        jnp.unique(np.array([[1 + 2j, 1 - 1j, 1 + 2j]], np.complex64), axis=1), [[1 - 1j, 1 + 2j]]
    )
    check(jnp.unique(np.array([[0.0], [-0.0]], np.float32), axis=0), [[0.0]])
    # zero-size: no rows, or rows of no elements (all equal)
    values, index, inverse, counts = jnp.unique(
        np.zeros((0, 3), np.float32),
        axis=0,
        return_index=True,
        return_inverse=True,
        return_counts=True,
    )
    assert values.shape == (0, 3) and index.shape == inverse.shape == counts.shape == (0,)
    values, index, inverse, counts = jnp.unique(
        np.zeros((3, 0), np.float32),
        axis=0,
        return_index=True,
        return_inverse=True,
        return_counts=True,
    )
    assert values.shape == (1, 0)
    check(index, [0])
    check(inverse, [0, 0, 0])
    check(counts, [3])
    check(jnp.unique(np.zeros((0, 2), np.int32), axis=0, size=2, fill_value=4), [[4, 4], [4, 4]])
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros((0, 3), np.float32), axis=0, size=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unique(np.ones(3), axis=1)
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.unique"):
        jit(lambda x: jnp.unique(x, axis=0))(x)


def test_partition_orders_as_jax():
    # JAX 0.10.2's answers: the kth + 1 smallest ascending, then the rest (values
    # descending; indices in increasing order).
    x = jnp.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3])
    assert jnp.partition(x, 4).tolist() == [1, 2, 3, 3, 4, 9, 8, 7, 6, 5]
    assert jnp.argpartition(x, 4).tolist() == [4, 8, 3, 9, 2, 0, 1, 5, 6, 7]
    u = jnp.array([3, 0, 2], jnp.uint8)
    assert jnp.partition(u, 1).tolist() == [0, 2, 3] and jnp.argpartition(u, 1).tolist() == [
        1,
        2,
        0,
    ]
    f = jnp.array([2.0, np.nan, -1.0, 0.0])
    np.testing.assert_array_equal(jnp.partition(f, 1), [-1.0, 0.0, np.nan, 2.0])
    assert jnp.argpartition(f, 1).tolist() == [2, 3, 0, 1]
    with pytest.raises(NotImplementedError, match="complex dtype"):
        jnp.partition(jnp.array([1 + 1j, 2]), 1)
    with pytest.raises(TypeError, match="neg does not accept dtype bool"):
        jnp.argpartition(jnp.array([True, False]), 0)


def test_index_dtypes_under_x64_are_jax_s():
    # Recorded from JAX 0.10.2 under x64: sort indices take the default integer dtype, as
    # numpy's; argpartition keeps int32; sort_complex of integers goes through float64.
    from modjax.tracecore.config import enable_x64

    x = np.array([[3, 1, 2], [0, -1, 5]])
    with enable_x64(True):
        assert jnp.argsort(x).dtype == np.int64
        assert jnp.argsort(x, descending=True, dtype=np.int16).dtype == np.int16
        assert jnp.lexsort((x[0], x[1])).dtype == np.int64
        zero = jnp.lexsort([jnp.array(1), jnp.array(2)])
        assert (zero.shape, zero.dtype, int(zero)) == ((), np.int64, 0)
        unique = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
        assert [r.dtype for r in unique] == [np.int64] * 4
        padded = jnp.unique(x, return_counts=True, size=8)
        assert padded[1].dtype == np.int64 and padded[1].tolist() == [1] * 6 + [0, 0]
        assert jnp.argpartition(x, 1).dtype == np.int32
        assert jnp.sort_complex(x).dtype == np.complex128
        assert jnp.sort_complex(x.astype(np.int32)).dtype == np.complex64
        assert jnp.sort_complex(x.astype(np.float32)).dtype == np.complex64
    assert jnp.sort_complex(x).dtype == np.complex64
    assert jnp.argsort(x).dtype == jnp.lexsort(x).dtype == np.int32
