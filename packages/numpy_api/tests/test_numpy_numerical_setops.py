"""modjax.numpy's set operations, polynomials, numerical and statistical functions, functional
helpers and window functions.

Compared with numpy eagerly and under jit. Where JAX departs from numpy the expected
values and dtypes are JAX 0.10's, recorded here as literals: ``size=``/``fill_value=``
padding of the set operations, integer counts of ``histogramdd``, inexact results of
``polymul``/``polyder``/``polyint``, ``polydiv``'s untrimmed remainder.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import both, check

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.core import ConcretizationTypeError

small_ints = st.lists(st.integers(0, 5), min_size=5, max_size=5)
other_ints = st.lists(st.integers(2, 7), min_size=4, max_size=4)
# XLA on CPU flushes subnormals to zero; numpy keeps them.
finite = st.floats(-2.0, 2.0, width=32, allow_subnormal=False)
floats5 = st.lists(finite, min_size=5, max_size=5)


# --- set operations -------------------------------------------------------------------------------


@given(small_ints, other_ints)
def test_set_operations_against_numpy(a, b):
    a, b = np.array(a, np.int32), np.array(b, np.int32)
    check(jnp.union1d(a, b), np.union1d(a, b), np.int32)
    check(jnp.setdiff1d(a, b), np.setdiff1d(a, b), np.int32)
    check(jnp.setxor1d(a, b), np.setxor1d(a, b), np.int32)
    values, i1, i2 = jnp.intersect1d(a, b, return_indices=True)
    for got, want in zip((values, i1, i2), np.intersect1d(a, b, return_indices=True), strict=True):
        check(got, want, np.int32)
    ua, ub = np.unique(a), np.unique(b)
    check(jnp.setxor1d(ua, ub, assume_unique=True), np.setxor1d(ua, ub, assume_unique=True))
    check(jnp.setdiff1d(ua, ub, assume_unique=True), np.setdiff1d(ua, ub, assume_unique=True))
    got = jnp.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    want = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    for g, w in zip(got, want, strict=True):
        check(g, w)


@given(small_ints, other_ints, st.sampled_from(["auto", "compare_all", "binary_search", "sort"]))
def test_isin_against_numpy(a, b, method):
    a, b = np.array(a, np.int32).reshape(5, 1), np.array(b, np.int32)
    for invert in (False, True):
        for got in both(lambda a, b, i=invert: jnp.isin(a, b, invert=i, method=method), a, b):
            check(got, np.isin(a, b, invert=invert), np.bool_)


def padded(values, size, fill):
    values = np.asarray(values)[:size]
    return np.concatenate([values, np.full(size - values.size, fill, values.dtype)])


@given(small_ints, other_ints, st.sampled_from([2, 8]), st.sampled_from([None, -1]))
def test_set_operations_with_size_under_jit(a, b, size, fill_value):
    """JAX's padding: setdiff1d with 0, intersect1d and setxor1d with their smallest member
    (0 if none), union1d with its smallest; intersect1d's indices with the inputs' lengths."""
    a, b = np.array(a, np.int32), np.array(b, np.int32)

    def fill(want, default):
        if fill_value is not None:
            return fill_value
        return default if default is not None else (want[0] if want.size else 0)

    kw = {"size": size, "fill_value": fill_value}
    want = np.union1d(a, b)
    for got in both(lambda a, b: jnp.union1d(a, b, **kw), a, b):
        check(got, padded(want, size, fill(want, None)), np.int32)
    want = np.setdiff1d(a, b)
    for got in both(lambda a, b: jnp.setdiff1d(a, b, **kw), a, b):
        check(got, padded(want, size, fill(want, 0)), np.int32)
    want = np.setxor1d(a, b)
    for got in both(lambda a, b: jnp.setxor1d(a, b, **kw), a, b):
        check(got, padded(want, size, fill(want, None)), np.int32)
    want, i1, i2 = np.intersect1d(a, b, return_indices=True)
    for got in both(lambda a, b: jnp.intersect1d(a, b, return_indices=True, **kw), a, b):
        check(got[0], padded(want, size, fill(want, None)), np.int32)
        check(got[1], padded(i1, size, a.size), np.int32)
        check(got[2], padded(i2, size, b.size), np.int32)


def test_set_operations_with_nan_match_numpy():
    x = np.array([1.0, np.nan, np.nan, 2.0], np.float32)
    y = np.array([np.nan, 2.0], np.float32)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d", "isin"):
        check(getattr(jnp, name)(x, y), getattr(np, name)(x, y))


def test_set_operations_need_size_under_jit():
    a, b = np.arange(4), np.arange(3)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        with pytest.raises(ConcretizationTypeError, match=f"size argument of jnp.{name}"):
            jit(getattr(jnp, name))(a, b)
    with pytest.raises(ValueError, match="method='table' is not implemented"):
        jnp.isin(a, b, method="table")
    with pytest.raises(TypeError, match="intersect1d requires ndarray"):
        jnp.intersect1d([1, 2], b)


def test_set_operation_dtypes_are_jax():
    i8 = np.array([1, 2], np.int8)
    f32 = np.array([2.5, 1.0], np.float32)
    check(jnp.setdiff1d(i8, f32), np.array([2], np.int8), np.int8)  # keeps ar1's dtype
    assert jnp.union1d(i8, np.arange(2, dtype=np.int32)).dtype == np.int32
    values, i1, _ = jnp.intersect1d(i8, f32, return_indices=True)
    assert (values.dtype, i1.dtype) == (np.float32, np.int32)
    assert jnp.union1d(2, 3.0).weak_type and jnp.setdiff1d(2.0, 3).weak_type


def test_set_operations_under_vmap():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    b = np.array([[2], [7]], np.int32)
    check(vmap(lambda a, b: jnp.setdiff1d(a, b, size=3))(a, b), [[1, 3, 0], [4, 5, 6]])


# --- polynomials ----------------------------------------------------------------------------------


@given(floats5, floats5)
def test_polynomials_against_numpy(p, q):
    p, q = np.array(p, np.float32), np.array(q[:3], np.float32)
    # Leading coefficients away from 0: numpy's poly1d-based functions trim leading zeros.
    p[0], q[0] = 1.25, 1.5
    x = np.linspace(-1, 1, 4).astype(np.float32)
    check(jnp.poly(p), np.poly(p), np.float32, tol=1e-4)
    for got in both(jnp.polyadd, p, q):
        check(got, np.polyadd(p, q), np.float32)
    check(jnp.polysub(q, p), np.polysub(q, p), np.float32)
    for got in both(jnp.polymul, p, q):
        check(got, np.polymul(p, q), np.float32, tol=1e-4)
    for got in both(jnp.polyval, p, x):
        check(got, np.polyval(p, x), np.float32, tol=1e-4)
    check(jnp.polyder(p, 2), np.polyder(p, 2), np.float32, tol=1e-4)
    check(jnp.polyint(p, 2, k=np.float32(0.5)), np.polyint(p, 2, k=0.5), np.float32, tol=1e-4)
    quotient, remainder = jit(jnp.polydiv)(p, q)
    want_q, want_r = np.polydiv(p, q)
    check(quotient, want_q, np.float32, tol=1e-3)
    # JAX keeps the remainder at the dividend's length.
    check(remainder, padded(np.zeros(0), 5 - want_r.size, 0).tolist() + list(want_r), tol=1e-3)


def test_polynomial_dtypes_and_options_are_jax():
    i = np.array([1, 2, 3], np.int32)
    i8 = i.astype(np.int8)
    assert jnp.polymul(i8, i8).dtype == np.float32  # numpy: int8
    assert jnp.polyder(i).dtype == np.float32  # numpy: int
    assert jnp.polyint(i8).dtype == np.float32
    assert jnp.polyval(i8, 2).dtype == np.int8 and jnp.polyval(i8, 2.5).dtype == np.float32
    assert jnp.polyadd(i8, i).dtype == np.int32 and jnp.poly(i8).dtype == np.float32
    check(jnp.poly(np.array([1 + 1j, 1 - 1j], np.complex64)), [1, -2, 2], np.complex64)
    check(jnp.poly(np.float32(2.0)), [1.0, -2.0], np.float32)
    check(jnp.poly(np.zeros(0, np.float32)), 1.0, np.float32)
    check(jnp.polymul(np.array([0, 1, 2]), np.array([0, 3])), [0.0, 0.0, 3.0, 6.0])
    check(jnp.polymul(np.array([0, 1, 2]), np.array([0, 3]), trim_leading_zeros=True), [3.0, 6.0])
    check(jnp.polyint(np.array([3.0, 2, 1]), 2, k=np.array([1.0, 2])), [0.25, 1 / 3, 0.5, 1, 2])
    check(jnp.polyder(np.array([1.0, 2]), 5), np.zeros(0, np.float32), np.float32)
    check(jnp.polyval(np.zeros(0, np.float32), np.arange(3.0)), np.zeros(3), np.float32)
    rows = np.arange(12.0, dtype=np.float32).reshape(3, 2, 2)  # coefficients along axis 0
    x2 = np.array([1.0, 2.0], np.float32)
    check(jnp.polyval(rows, x2), np.polyval(rows, x2), np.float32)
    check(jnp.polyval(rows[:, 0], np.float32(2)), np.polyval(rows[:, 0], 2.0), np.float32)
    check(grad(lambda x: jnp.polyval(np.array([1.0, 2, 3], np.float32), x))(2.0), 6.0)
    check(jit(jnp.polyder, static_argnums=1)(np.array([1.0, 2, 3]), 1), [2.0, 2.0])


def test_polynomial_errors():
    with pytest.raises(IndexError, match="at least one dimension"):
        jnp.polyval(np.float32(3), 2.0)
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(np.ones(3), -1)
    with pytest.raises(ValueError, match="Order of integral must be positive"):
        jnp.polyint(np.ones(3), -1)
    with pytest.raises(TypeError):
        jnp.polyder(np.ones(3), 1.5)
    # As JAX 0.10.2: polyadd adds the shorter into the tail of the longer, any rank.
    assert np.asarray(jnp.polyadd(np.ones((2, 2)), np.ones(2))).tolist() == [[2, 2], [2, 2]]
    with pytest.raises(ValueError, match="square 2d"):
        jnp.poly(np.ones((2, 3)))


# --- interpolation, derivatives, integrals --------------------------------------------------------


@given(floats5, st.sampled_from([None, -3.0]), st.sampled_from([None, 2.5]))
def test_interp_against_numpy(fp, left, right):
    xp = np.array([-1.5, -0.5, 0.0, 0.7, 1.5], np.float32)
    fp = np.array(fp, np.float32)
    x = np.linspace(-2.5, 2.5, 11).astype(np.float32)
    for got in both(lambda x, xp, fp: jnp.interp(x, xp, fp, left, right), x, xp, fp):
        check(got, np.interp(x, xp, fp, left, right), np.float32)
    for got in both(lambda x, xp, fp: jnp.interp(x, xp, fp, period=2.0), x, fp, xp):
        check(got, np.interp(x, fp, xp, period=2.0), np.float32, tol=1e-4)


def test_interp_extrapolates_and_has_jax_dtypes():
    xp = np.arange(5.0, dtype=np.float32)
    got = jnp.interp(
        np.array([-1.0, 0.5, 9.0]), xp, xp * 2, left="extrapolate", right="extrapolate"
    )
    check(got, [-2.0, 1.0, 18.0])
    f16, i32 = xp.astype(np.float16), np.arange(5, dtype=np.int32)
    # JAX's dtypes: x and xp promote (inexact) together, then with fp.
    for args, dtype in [
        ((f16, i32, f16), np.float16),
        ((f16, f16, i32), np.float32),
        ((2, i32, f16), np.float32),
        ((2.0, f16, f16), np.float16),
        ((i32, i32, i32), np.float32),
        ((xp, xp, xp + 1j), np.complex64),
    ]:
        assert jnp.interp(*args).dtype == dtype, (args, dtype)
    check(grad(lambda x: jnp.interp(x, xp, xp**2))(2.5), 5.0)
    with pytest.raises(ValueError, match="equal size"):
        jnp.interp(xp, xp[:3], xp)
    with pytest.raises(ValueError, match="'extrapolate'"):
        jnp.interp(xp, xp, xp, left="foo")


@given(floats5, st.sampled_from([0, 1]))
def test_gradient_against_numpy(values, axis):
    f = np.outer(np.array(values, np.float32), np.arange(1, 4, dtype=np.float32))
    coords = np.array([0.0, 0.5, 1.7, 2.0, 3.1], np.float32)[: f.shape[axis]]
    for got in both(lambda f: jnp.gradient(f, axis=axis), f):
        check(got, np.gradient(f, axis=axis), np.float32)
    for got in both(lambda f, c: jnp.gradient(f, c, axis=axis), f, coords):
        check(got, np.gradient(f, coords, axis=axis), np.float32, tol=1e-4)
    got = jnp.gradient(f, 2.0, coords[:3])
    for g, w in zip(got, np.gradient(f, 2.0, coords[:3]), strict=True):
        check(g, w, np.float32, tol=1e-4)


def test_gradient_errors_and_dtypes():
    assert jnp.gradient(np.arange(4)).dtype == np.float32
    assert jnp.gradient(np.arange(4, dtype=np.float16)).dtype == np.float16
    check(jnp.gradient(np.float32(2.0)), np.zeros(0))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(np.arange(4.0), edge_order=1)
    with pytest.raises(ValueError, match="at least 2 elements"):
        jnp.gradient(np.ones((3, 1)))
    with pytest.raises(TypeError, match="Invalid number of spacing arguments"):
        jnp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="same length"):
        jnp.gradient(np.ones(4), np.ones(2))


@given(floats5, st.sampled_from([0, 1, -1]))
def test_trapezoid_against_numpy(values, axis):
    y = np.outer(np.array(values, np.float32), np.arange(1, 4, dtype=np.float32))
    x = np.array([0.0, 0.5, 1.7, 2.0, 3.1], np.float32)[: y.shape[axis]]
    for got in both(lambda y: jnp.trapezoid(y, axis=axis), y):
        check(got, np.trapezoid(y, axis=axis), np.float32, tol=1e-4)
    for got in both(lambda y, x: jnp.trapezoid(y, x, axis=axis), y, x):
        check(got, np.trapezoid(y, x, axis=axis), np.float32, tol=1e-4)
    check(jnp.trapezoid(y, dx=0.3, axis=axis), np.trapezoid(y, dx=0.3, axis=axis), tol=1e-4)
    assert jnp.trapezoid(np.arange(4, dtype=np.int8)).dtype == np.float32


@given(st.lists(st.floats(-8.0, 8.0, width=32), min_size=6, max_size=6))
def test_unwrap_against_numpy(values):
    p = np.array(values, np.float32).reshape(2, 3)
    for got in both(jnp.unwrap, p):
        check(got, np.unwrap(p), np.float32, tol=1e-4)
    check(jnp.unwrap(p, axis=0, period=3.0), np.unwrap(p, axis=0, period=3.0), tol=1e-4)
    check(jnp.unwrap(p, discont=4.0), np.unwrap(p, discont=4.0), tol=1e-4)
    ints = np.array([0, 5, 1, 6, 20, -3], np.int32)
    check(jnp.unwrap(ints, period=4), np.unwrap(ints, period=4), np.int32)
    assert jnp.unwrap(ints.astype(np.int8), period=4).dtype == np.int8


# --- statistics and histograms --------------------------------------------------------------------


@given(st.lists(finite, min_size=12, max_size=12), st.booleans(), st.booleans())
def test_cov_and_corrcoef_against_numpy(values, rowvar, bias):
    m = np.array(values, np.float32).reshape(3, 4)
    for got in both(lambda m: jnp.cov(m, rowvar=rowvar, bias=bias), m):
        check(got, np.cov(m, rowvar=rowvar, bias=bias), np.float32, tol=1e-4)
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    check(jnp.cov(m, fweights=fw, aweights=aw), np.cov(m, fweights=fw, aweights=aw), tol=1e-4)
    check(jnp.cov(m, ddof=2, aweights=aw), np.cov(m, ddof=2, aweights=aw), tol=1e-4)
    check(jnp.cov(m[0], m[1]), np.cov(m[0], m[1]), tol=1e-4)
    check(jnp.corrcoef(m, rowvar=rowvar), np.corrcoef(m, rowvar=rowvar), np.float32, tol=1e-4)


def test_cov_corrcoef_dtypes_and_errors():
    assert jnp.cov(np.ones((2, 3), np.int8)).dtype == np.float32
    assert jnp.cov(np.ones(3, np.float16)).dtype == np.float16
    assert jnp.cov(np.ones((2, 3)), dtype=np.float16).dtype == np.float16
    assert jnp.cov(np.ones((2, 3), np.complex64)).dtype == np.complex64
    assert jnp.cov(np.ones(3), rowvar=False).shape == ()
    check(jnp.corrcoef(np.arange(3.0)), 1.0)
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="fweights must be integer"):
        jnp.cov(np.ones((2, 3)), fweights=np.array([1.0, 2, 1]))


@given(st.lists(finite, min_size=16, max_size=16), st.booleans())
def test_histogramdd_and_histogram2d_against_numpy(values, density):
    sample = np.array(values, np.float32).reshape(8, 2)
    w = np.linspace(0.5, 2.0, 8).astype(np.float32)
    bins_and_ranges = [
        (3, None),
        ([2, 4], [(-1.0, 1.0), None]),
        ([np.array([-2.0, 0.0, 0.5, 2.0], np.float32), 2], None),
    ]
    for bins, range_ in bins_and_ranges:
        want, want_edges = np.histogramdd(sample, bins, range_, weights=w, density=density)
        got, edges = jnp.histogramdd(sample, bins, range_, weights=w, density=density)
        check(got, want, np.float32, tol=1e-4)
        for g, e in zip(edges, want_edges, strict=True):
            check(g, e, np.float32)
    counts, ex, ey = jit(lambda x, y: jnp.histogram2d(x, y, bins=[2, 3]))(*sample.T)
    want, want_x, want_y = np.histogram2d(*sample.T, bins=[2, 3])
    check(counts, want.astype(np.int32), np.int32)  # JAX counts in int32 (numpy: float64)
    check(ex, want_x, np.float32)
    check(ey, want_y, np.float32)


def test_histogram_dtypes_and_errors():
    s16 = np.ones((4, 2), np.float16)
    assert jnp.histogramdd(s16, density=True)[0].dtype == np.float16
    got = jnp.histogramdd(np.ones((4, 2), np.int32), weights=np.ones(4, np.float16))
    assert (got[0].dtype, got[1][0].dtype) == (np.float16, np.float16)
    assert jnp.histogramdd(np.ones((4, 2)), weights=np.ones(4, np.int8))[0].dtype == np.float32
    with pytest.raises(ValueError, match="one weight for each sample"):
        jnp.histogramdd(np.ones((4, 2)), weights=np.ones(3))
    with pytest.raises(ValueError, match="a bin for each dimension"):
        jnp.histogramdd(np.ones((4, 2)), bins=[2, 3, 4])
    with pytest.raises(ValueError, match="range must be a sequence of 2 pairs"):
        jnp.histogramdd(np.ones((4, 2)), range=[(0, 1)])


# --- functional helpers and windows ---------------------------------------------------------------


def test_apply_along_and_over_axes_against_numpy():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for axis in (0, 1, -1):
        for fn, np_fn in [
            (lambda v: v[:2] * v.sum(), lambda v: v[:2] * v.sum()),
            (lambda v: jnp.outer(v, v), lambda v: np.outer(v, v)),
            (jnp.sum, np.sum),
        ]:
            for got in both(lambda x, f=fn, ax=axis: jnp.apply_along_axis(f, ax, x), x):
                check(got, np.apply_along_axis(np_fn, axis, x), np.float32)
    check(
        jnp.apply_along_axis(lambda v, p: v**p, 0, x, 2),
        np.apply_along_axis(lambda v, p: v**p, 0, x, 2),
    )
    check(jnp.apply_over_axes(jnp.sum, x, [0, 2]), np.apply_over_axes(np.sum, x, [0, 2]))
    check(jnp.apply_over_axes(jnp.cumsum, x, [1]), np.apply_over_axes(np.cumsum, x, [1]))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.apply_along_axis(jnp.sum, 3, x)
    with pytest.raises(ValueError, match="correct shape"):
        jnp.apply_over_axes(lambda a, axis: a.sum(), x, [0])


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_against_numpy(name):
    for m in (0, 1, 2, 7):
        check(getattr(jnp, name)(m), getattr(np, name)(m), np.float32)
    with pytest.raises(ConcretizationTypeError):
        jit(getattr(jnp, name))(3)
    with pytest.raises(TypeError, match="nonnegative"):  # JAX's: from lax.full
        getattr(jnp, name)(-2)


def test_kaiser_against_numpy():
    for m, beta in [(0, 1.0), (1, 2.0), (6, 3.0), (7, 0.5)]:
        check(jnp.kaiser(m, beta), np.kaiser(m, beta), np.float32)
    check(jit(jnp.kaiser, static_argnums=0)(5, 3.0), np.kaiser(5, 3.0))
    assert jnp.kaiser(4, np.float16(2.0)).dtype == np.float32
    betas = np.array([1.0, 2.0], np.float32)
    check(vmap(lambda b: jnp.kaiser(4, b))(betas), [np.kaiser(4, b) for b in betas])
    eps = 1e-3
    want = (np.kaiser(5, 3.0 + eps).sum() - np.kaiser(5, 3.0 - eps).sum()) / (2 * eps)
    check(grad(lambda b: jnp.kaiser(5, b).sum())(3.0), want, tol=1e-3)
