"""``where=`` masks, ``initial=``, precomputed ``mean=`` and ``out=`` of modjax.numpy's
reductions: values against numpy's ``where=`` (eagerly and with the mask traced under jit),
result dtypes against a table recorded from JAX 0.10.2, and JAX's errors."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

SHAPE = (2, 3, 4)
# Axes and the mask shapes that broadcast against SHAPE (scalar, trailing, size-1, full).
AXES = [None, 0, -1, (0, 2), (1,), ()]
MASK_SHAPES = [(), (4,), (3, 1), (2, 1, 4), SHAPE]
SUMS = ["sum", "prod", "nansum", "nanprod"]
MEANS = ["mean", "var", "std", "nanmean", "nanvar", "nanstd"]
EXTREMES = ["max", "min", "amax", "amin", "nanmax", "nanmin"]
LOGICAL = ["all", "any"]
ALL = SUMS + MEANS + EXTREMES + LOGICAL
ALIASES = {"amax": "max", "amin": "min"}  # their messages name the function they alias, as JAX

# --- result dtypes recorded from JAX 0.10.2 (x64 off) ------------------------------------------
# jax.eval_shape of jnp.<name>(x, where=[True, False, True], [initial=1], [dtype=...]) on a
# (3,) input of each column's dtype; "ValueError" where JAX raises it.
DTYPE_COLUMNS = ["int8", "uint8", "bool", "float16", "bfloat16", "int32", "complex64"]
JAX_WHERE_DTYPES = """
sum               int32      uint32     int32      float16    bfloat16   int32      complex64
prod              int32      uint32     int32      float16    bfloat16   int32      complex64
mean              float32    float32    float32    float16    bfloat16   float32    complex64
var               float32    float32    float32    float16    bfloat16   float32    float32
std               float32    float32    float32    float16    bfloat16   float32    float32
max               int8       uint8      bool       float16    bfloat16   int32      complex64
min               int8       uint8      bool       float16    bfloat16   int32      complex64
all               bool       bool       bool       bool       bool       bool       bool
any               bool       bool       bool       bool       bool       bool       bool
nansum            int32      uint32     int32      float16    bfloat16   int32      complex64
nanprod           int32      uint32     int32      float16    bfloat16   int32      complex64
nanmean           float32    float32    float32    float16    bfloat16   float32    complex64
nanvar            float32    float32    float32    float16    bfloat16   float32    float32
nanstd            float32    float32    float32    float16    bfloat16   float32    float32
nanmax            int8       uint8      bool       float16    bfloat16   int32      complex64
nanmin            int8       uint8      bool       float16    bfloat16   int32      complex64
sum/float32       float32    float32    float32    float32    float32    float32    float32
prod/float32      float32    float32    float32    float32    float32    float32    float32
mean/float32      float32    float32    float32    float32    float32    float32    float32
var/float32       float32    float32    float32    float32    float32    float32    ValueError
std/float32       float32    float32    float32    float32    float32    float32    ValueError
nansum/float32    float32    float32    float32    float32    float32    float32    float32
nanprod/float32   float32    float32    float32    float32    float32    float32    float32
nanmean/float32   float32    float32    float32    float32    float32    float32    float32
nanvar/float32    float32    float32    float32    float32    float32    float32    ValueError
nanstd/float32    float32    float32    float32    float32    float32    float32    ValueError
sum/complex64     complex64  complex64  complex64  complex64  complex64  complex64  complex64
mean/complex64    complex64  complex64  complex64  complex64  complex64  complex64  complex64
var/complex64     complex64  complex64  complex64  complex64  complex64  complex64  complex64
std/complex64     complex64  complex64  complex64  complex64  complex64  complex64  complex64
nanvar/complex64  complex64  complex64  complex64  complex64  complex64  complex64  complex64
nanstd/complex64  complex64  complex64  complex64  complex64  complex64  complex64  complex64
"""


def _dtype_cases():
    for line in JAX_WHERE_DTYPES.strip().splitlines():
        label, *results = line.split()
        name, _, dtype = label.partition("/")
        for column, expected in zip(DTYPE_COLUMNS, results, strict=True):
            yield name, dtype or None, column, expected


def _kwargs(name, where, dtype=None):
    kwargs = {"where": where}
    if name in EXTREMES:
        kwargs["initial"] = 1
    if dtype is not None:
        kwargs["dtype"] = dtype
    return kwargs


@pytest.mark.parametrize("name,dtype,column,expected", list(_dtype_cases()))
def test_where_result_dtypes_match_jax(name, dtype, column, expected):
    fn = getattr(jnp, name)
    where = np.array([True, False, True])
    x = jnp.ones(3, ml_dtypes.bfloat16 if column == "bfloat16" else column)
    kwargs = _kwargs(name, where, dtype)
    if expected == "ValueError":
        with pytest.raises(ValueError, match=f"jnp.{name}"):
            fn(x, **kwargs)
        return
    (out,) = make_jaxpr(lambda x: fn(x, **kwargs))(x).out_avals
    assert out.dtype.name == expected and not out.weak_type


# --- values against numpy ---------------------------------------------------------------------


def _numpy(name, x, axis, keepdims, where, initial, dtype):
    """numpy's reduction with ``where``; NaN means of empty selections stay quiet."""
    fn = getattr(np, ALIASES.get(name, name))
    kwargs = {"axis": axis, "keepdims": keepdims, "where": where}
    if initial is not None:
        kwargs["initial"] = initial
    if dtype is not None:
        kwargs["dtype"] = dtype
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(x, **kwargs))


def _draw(data, name, dtypes):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rng.normal(size=SHAPE) * 2
    if dtype == "bool":
        x = x > 0
    elif np.dtype(dtype).kind in "iu":
        x = np.round(x + (4 if np.dtype(dtype).kind == "u" else 0)).clip(
            0 if dtype == "uint8" else -9
        )
    if name.startswith("nan") and np.dtype(dtype).kind == "f":
        x = np.where(rng.random(SHAPE) < 0.2, np.nan, x)
    x = x.astype(dtype)
    where = rng.random(data.draw(st.sampled_from(MASK_SHAPES), label="mask_shape")) < 0.6
    axis = data.draw(st.sampled_from(AXES), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    return x, np.asarray(where), axis, keepdims


def _check(name, x, where, axis, keepdims, initial=None, dtype=None, rtol=2e-5):
    kwargs = {"axis": axis, "keepdims": keepdims}
    if initial is not None:
        kwargs["initial"] = initial
    if dtype is not None:
        kwargs["dtype"] = dtype
    fn = getattr(jnp, name)
    expected = _numpy(
        name,
        x.astype(np.float64) if x.dtype.kind == "f" else x,
        axis,
        keepdims,
        where,
        initial,
        dtype,
    )
    eager = fn(jnp.asarray(x), where=where, **kwargs)
    traced = jit(lambda x, w: fn(x, where=w, **kwargs))(jnp.asarray(x), jnp.asarray(where))
    for got in (eager, traced):
        assert got.shape == expected.shape, (got.shape, expected.shape)
        np.testing.assert_allclose(
            np.asarray(got).astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=1e-5
        )
    assert eager.dtype == traced.dtype


@pytest.mark.parametrize("name", SUMS)
@given(data=st.data())
def test_sum_prod_where_matches_numpy(name, data):
    x, where, axis, keepdims = _draw(data, name, ["float32", "int32", "int8", "bool"])
    initial = data.draw(st.sampled_from([None, 2]), label="initial")
    dtype = data.draw(st.sampled_from([None, "float32"]), label="dtype")
    if x.dtype.kind in "iub" and name == "prod":
        x = np.clip(x, -2, 2).astype(x.dtype)  # keep products inside int32
    _check(name, x, where, axis, keepdims, initial, dtype)


@pytest.mark.parametrize("name", MEANS)
@given(data=st.data())
def test_mean_var_std_where_matches_numpy(name, data):
    x, where, axis, keepdims = _draw(data, name, ["float32", "int8", "bool"])
    dtype = data.draw(st.sampled_from([None, "float32"]), label="dtype")
    _check(name, x, where, axis, keepdims, dtype=dtype, rtol=1e-4)


@pytest.mark.parametrize("name", EXTREMES)
@given(data=st.data())
def test_max_min_where_with_initial_matches_numpy(name, data):
    x, where, axis, keepdims = _draw(data, name, ["float32", "int32", "uint8", "bool"])
    initial = {"b": True}.get(x.dtype.kind, data.draw(st.sampled_from([-1, 0, 3]), label="init"))
    if x.dtype.kind == "u":
        initial = abs(initial)
    _check(name, x, where, axis, keepdims, initial=initial)


@pytest.mark.parametrize("name", LOGICAL)
@given(data=st.data())
def test_all_any_where_matches_numpy(name, data):
    x, where, axis, keepdims = _draw(data, name, ["float32", "int8", "bool"])
    _check(name, x, where, axis, keepdims)


def test_where_with_zero_size_and_empty_selection():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    none = np.zeros(3, bool)
    assert jnp.sum(x, axis=1, where=none).tolist() == [0.0, 0.0]
    assert jnp.prod(x, axis=1, where=none).tolist() == [1.0, 1.0]
    assert np.isnan(jnp.mean(x, axis=1, where=none)).all()
    assert np.isnan(jnp.var(x, axis=1, where=np.array([True, False, False]), ddof=1)).all()
    assert jnp.max(x, axis=1, where=none, initial=-7).tolist() == [-7.0, -7.0]
    assert jnp.all(x, where=none).tolist() is True
    assert jnp.any(x, where=none).tolist() is False
    empty = jnp.zeros((0, 3))
    assert jnp.max(empty, axis=0, where=np.ones(3, bool), initial=2.0).tolist() == [2.0] * 3
    # nanmax: an all-NaN (or fully masked) slice gives the initial value
    nan = jnp.asarray([[np.nan, np.nan, 1.0]])
    assert jnp.nanmax(nan, axis=1, initial=-1.0, where=np.array([True, True, False])).tolist() == [
        -1.0
    ]


# --- precomputed means ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_precomputed_mean_matches_numpy(name, axis):
    rng = np.random.default_rng(3)
    x = rng.normal(size=SHAPE).astype(np.float32)
    where = rng.random(SHAPE) < 0.7
    mean = np.mean(x, axis=axis, keepdims=True, where=where) + 0.25  # any given mean is used
    expected = getattr(np, name)(x.astype(np.float64), axis=axis, where=where, mean=mean)
    fn = getattr(jnp, name)
    for got in (
        fn(x, axis=axis, where=where, mean=mean),
        jit(lambda x, m: fn(x, axis=axis, where=where, mean=m))(x, mean),
    ):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)
    assert fn(x, axis=axis, mean=mean, keepdims=True).shape == np.shape(mean)
    assert fn(x, mean=1.0).shape == ()


def test_precomputed_mean_of_another_rank_raises_type_error():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError):
        jnp.var(x, axis=1, mean=jnp.ones(2))
    with pytest.raises(TypeError):
        jnp.std(x, axis=1, mean=jnp.ones((1, 2)))


# --- errors as JAX raises them ----------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_non_boolean_where_raises_value_error(name):
    kwargs = _kwargs(name, np.array([1, 0, 1]))
    shown = ALIASES.get(name, name)
    with pytest.raises(ValueError, match=f"jnp.{shown}: where must be None or a boolean array"):
        getattr(jnp, name)(jnp.ones((2, 3)), **kwargs)
    with pytest.raises(ValueError, match="boolean"):
        jit(lambda x, w: getattr(jnp, name)(x, **_kwargs(name, w)))(jnp.ones((2, 3)), jnp.ones(3))


@pytest.mark.parametrize("name", ALL)
def test_where_of_a_bad_shape_raises_value_error(name):
    with pytest.raises(ValueError):
        getattr(jnp, name)(jnp.ones((2, 3)), **_kwargs(name, np.ones(4, bool)))


@pytest.mark.parametrize("name", EXTREMES)
def test_max_min_where_without_initial_raises(name):
    op = name.removeprefix("nan").removeprefix("a")
    with pytest.raises(ValueError, match=f"reduction operation {op} does not have an identity"):
        getattr(jnp, name)(jnp.ones(3), where=np.array([True, False, True]))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "nanmin"])
def test_initial_must_be_a_scalar(name):
    with pytest.raises(ValueError, match="initial value must be a scalar"):
        getattr(jnp, name)(jnp.ones((2, 3)), axis=0, initial=jnp.ones(3))


OUT_NOT_IMPLEMENTED = ALL + ["ptp", "argmax", "argmin", "nanargmax", "nanargmin", "cumsum"]


@pytest.mark.parametrize("name", OUT_NOT_IMPLEMENTED)
def test_out_raises_not_implemented_as_jax(name):
    shown = ALIASES.get(name, name)
    with pytest.raises(NotImplementedError, match=f"The 'out' argument to jnp.{shown}"):
        getattr(jnp, name)(jnp.ones((2, 3)), out=np.zeros(3))


@pytest.mark.parametrize(
    "name,family",
    [
        ("median", "quantile"),
        ("nanmedian", "nanquantile"),
        ("quantile", "quantile"),
        ("percentile", "quantile"),
        ("nanquantile", "nanquantile"),
    ],
)
def test_quantiles_refuse_out_and_overwrite_input_as_jax(name, family):
    args = (0.5,) if "quantile" in name or "percentile" in name else ()
    for kwargs in ({"out": np.zeros(())}, {"overwrite_input": True}):
        with pytest.raises(ValueError, match=f"jax.numpy.{family} does not support"):
            getattr(jnp, name)(jnp.ones(3), *args, **kwargs)


def test_variance_dtype_errors_as_jax():
    z = jnp.asarray([1j, 2.0])
    with pytest.raises(ValueError, match="complex"):
        jnp.var(z, dtype=jnp.float32)
    with pytest.raises(ValueError, match="must be inexact"):
        jnp.std(jnp.ones(3), dtype=jnp.int32)
    with pytest.raises(TypeError, match="sqrt"):
        jnp.nanstd(jnp.ones(3), dtype=jnp.int32)
    out = jnp.var(z, dtype=jnp.complex64)
    assert out.dtype == np.complex64 and np.asarray(out) == pytest.approx(np.var(np.array([1j, 2])))
