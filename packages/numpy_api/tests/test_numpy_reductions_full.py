"""modjax.numpy reductions against numpy: axes, keepdims, where, dtype, initial, nan-variants,
quantiles and averages, eagerly and under jit; result dtypes against JAX 0.10.2's."""

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

BF16 = np.dtype(ml_dtypes.bfloat16)
SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 3), (3, 1, 4)]
DTYPES = ["float32", "int8", "uint8", "int32", "bool", "float16"]

# --- result dtypes recorded from JAX 0.10.2 (x64 off) ------------------------------------------
# Columns: int8, uint8, bool, float16, bfloat16, int32 inputs; "TypeError" where JAX raises.
DTYPE_COLUMNS = ["int8", "uint8", "bool", "float16", "bfloat16", "int32"]
JAX_RESULT_DTYPES = """
sum            int32   uint32  int32   float16 bfloat16 int32
prod           int32   uint32  int32   float16 bfloat16 int32
mean           float32 float32 float32 float16 bfloat16 float32
var            float32 float32 float32 float16 bfloat16 float32
std            float32 float32 float32 float16 bfloat16 float32
max            int8    uint8   bool    float16 bfloat16 int32
ptp            int8    uint8   TypeError float16 bfloat16 int32
nansum         int32   uint32  int32   float16 bfloat16 int32
nanprod        int32   uint32  int32   float16 bfloat16 int32
nanmean        float32 float32 float32 float16 bfloat16 float32
nanvar         float32 float32 float32 float16 bfloat16 float32
nanmax         int8    uint8   bool    float16 bfloat16 int32
count_nonzero  int32   int32   int32   int32   int32    int32
average        float32 float32 float32 float16 bfloat16 float32
"""


def _dtype_cases():
    for line in JAX_RESULT_DTYPES.strip().splitlines():
        name, *results = line.split()
        for column, expected in zip(DTYPE_COLUMNS, results, strict=True):
            yield name, column, expected


@pytest.mark.parametrize("name,dtype,expected", list(_dtype_cases()))
def test_result_dtypes_match_jax(name, dtype, expected):
    fn = getattr(jnp, name)
    x = jnp.ones(3, dtype)
    if expected == "TypeError":
        with pytest.raises(TypeError):
            make_jaxpr(fn)(x)
        return
    (out,) = make_jaxpr(fn)(x).out_avals
    assert out.dtype.name == expected and not out.weak_type


def test_reduction_dtype_details_from_jax():
    f16, i8 = jnp.ones(3, jnp.float16), jnp.ones(3, jnp.int8)
    assert jnp.sum(i8, promote_integers=False).dtype == np.int8
    assert jnp.sum(jnp.ones(3, bool), promote_integers=False).dtype == np.int32
    assert jnp.sum(jnp.ones(3, jnp.uint16)).dtype == np.uint32
    assert jnp.sum(i8, dtype=bool).dtype == np.bool_
    assert jnp.sum(i8, initial=1.5).dtype == np.int32
    assert jnp.sum(f16, dtype=jnp.float32).dtype == np.float32
    assert jnp.mean(f16, dtype=jnp.float32).dtype == np.float32
    assert jnp.var(jnp.array([1j, 2])).dtype == np.float32
    assert jnp.mean(jnp.array([1j, 2])).dtype == np.complex64
    assert jnp.max(i8, initial=300).tolist() == 44  # the initial value wraps to int8
    assert jnp.argmax(jnp.ones((2, 3)), keepdims=True).shape == (1, 1)
    assert jnp.count_nonzero(jnp.ones((2, 3)), axis=(0, 1)).tolist() == 6
    assert not jnp.sum(jnp.asarray(2.0)).weak_type


# --- generated comparisons with numpy --------------------------------------------------------


def rand(rng, shape, dtype, nan=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    x = rng.uniform(-3, 3, shape)
    if nan and x.size:
        x[rng.random(shape) < 0.3] = np.nan
    return x.astype(dtype)


def wide(x):
    x = np.asarray(x)
    if x.dtype.kind == "f" or x.dtype == BF16:
        return x.astype(np.float64)
    return x


def draw_case(data, dtypes=DTYPES, nan=False, shapes=SHAPES):
    shape = data.draw(st.sampled_from(shapes), label="shape")
    dtype = np.dtype(data.draw(st.sampled_from(dtypes), label="dtype"))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    x = rand(rng, shape, dtype, nan=nan)
    ndim = len(shape)
    axes = [None] + list(range(-ndim, ndim)) + ([(0, ndim - 1)] if ndim > 1 else [])
    axis = data.draw(st.sampled_from(axes), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    where = None
    if ndim and data.draw(st.booleans(), label="use_where"):
        where = rng.random(shape[-1:]) < 0.7  # broadcasts along the leading axes
    return x, axis, keepdims, where


def compare(fn, ref, x, kwargs, out_dtype, tol):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(ref(wide(x), **kwargs))
    outs = [fn(x, **kwargs), jit(lambda v: fn(v, **kwargs))(x)]
    for out in outs:
        assert out.shape == expected.shape, (out.shape, expected.shape)
        assert out.dtype == np.dtype(out_dtype), (out.dtype, out_dtype)
        assert not out.weak_type
        got = wide(np.asarray(out))
        if expected.dtype.kind in "iub" and got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, expected.astype(got.dtype))
        else:
            np.testing.assert_allclose(got, wide(expected), rtol=tol, atol=tol)


def _sum_dtype(dtype):
    return {"b": np.int32, "i": np.int32, "u": np.uint32}.get(dtype.kind, dtype)


def _mean_dtype(dtype):
    return dtype if dtype.kind == "f" or dtype == BF16 else np.dtype(np.float32)


def _tol(dtype):
    return 1e-5 if dtype in (np.float32, np.int32, np.int8, np.uint8, np.bool_) else 2e-2


@pytest.mark.parametrize("name", ["sum", "prod", "nansum", "nanprod"])
@given(data=st.data())
def test_sum_prod(name, data):
    x, axis, keepdims, where = draw_case(data, nan=name.startswith("nan"))
    kwargs = {"axis": axis, "keepdims": keepdims}
    if where is not None:
        kwargs["where"] = where
    if data.draw(st.booleans(), label="initial"):
        kwargs["initial"] = 2
    out_dtype = _sum_dtype(x.dtype)
    ref = getattr(np, name)
    tol = _tol(x.dtype) if "prod" not in name else 2e-2
    compare(getattr(jnp, name), ref, x, kwargs, out_dtype, tol)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
@given(data=st.data())
def test_max_min(name, data):
    x, axis, keepdims, where = draw_case(data, nan=name.startswith("nan"))
    kwargs = {"axis": axis, "keepdims": keepdims}
    if where is not None or data.draw(st.booleans(), label="initial") or x.size == 0:
        low = -1 if x.dtype.kind in "fi" else 0
        kwargs["initial"] = np.asarray(low if name.endswith("max") else 1, x.dtype)[()]
        if where is not None:
            kwargs["where"] = where
    if x.dtype == np.bool_:
        kwargs.pop("initial", None)
        kwargs.pop("where", None)
        if x.size == 0:
            return
    compare(getattr(jnp, name), getattr(np, name), x, kwargs, x.dtype, _tol(x.dtype))


@pytest.mark.parametrize("name", ["all", "any", "count_nonzero", "ptp"])
@given(data=st.data())
def test_logical_count_ptp(name, data):
    x, axis, keepdims, where = draw_case(data)
    kwargs = {"axis": axis, "keepdims": keepdims}
    if name in ("all", "any") and where is not None:
        kwargs["where"] = where
    if name == "ptp":
        if x.dtype == np.bool_ or x.size == 0:
            return
        out_dtype = x.dtype
    else:
        out_dtype = np.bool_ if name in ("all", "any") else np.int32
    compare(getattr(jnp, name), getattr(np, name), x, kwargs, out_dtype, _tol(x.dtype))


@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean", "nanvar", "nanstd"])
@given(data=st.data())
def test_mean_var_std(name, data):
    x, axis, keepdims, where = draw_case(data, nan=name.startswith("nan"))
    kwargs = {"axis": axis, "keepdims": keepdims}
    if where is not None:
        kwargs["where"] = where
    if "var" in name or "std" in name:
        kwargs["ddof"] = data.draw(st.sampled_from([0, 1]), label="ddof")
    out_dtype = _mean_dtype(x.dtype)

    def ref(v, **kw):  # JAX: no degrees of freedom left gives NaN (numpy gives inf)
        out = getattr(np, name)(v, **kw)
        if "ddof" in kw:
            count = np.sum(
                ~np.isnan(v) if name.startswith("nan") else np.ones_like(v),
                axis=kw["axis"],
                keepdims=kw["keepdims"],
                where=kw.get("where", True),
            )
            out = np.where(count - kw["ddof"] <= 0, np.nan, out)
        return out

    compare(getattr(jnp, name), ref, x, kwargs, out_dtype, _tol(x.dtype))


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
@given(data=st.data())
def test_argmax_argmin(name, data):
    x, axis, keepdims, _ = draw_case(
        data, nan=name.startswith("nan"), shapes=[(5,), (2, 3), (3, 1, 4)]
    )
    if isinstance(axis, tuple):
        axis = axis[0]
    kwargs = {"axis": axis, "keepdims": keepdims}

    def ref(v, **kw):
        fn = getattr(np, name)
        if name.startswith("nan"):  # an all-NaN slice gives -1, as in JAX
            all_nan = np.all(np.isnan(v), axis=kw["axis"], keepdims=kw["keepdims"])
            safe = np.where(np.isnan(v), -np.inf if name == "nanargmax" else np.inf, v)
            return np.where(all_nan, -1, getattr(np, name[3:])(safe, **kw))
        return fn(v, **kw)

    compare(getattr(jnp, name), ref, x, kwargs, np.int32, 0)


@given(data=st.data())
def test_average(data):
    x, axis, keepdims, _ = draw_case(
        data, dtypes=["float32", "int8", "float16"], shapes=[(5,), (2, 3), (3, 1, 4)]
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    use_1d = axis is not None and not isinstance(axis, tuple)
    weights = rng.uniform(0.5, 2, x.shape[axis] if use_1d else x.shape).astype(np.float32)
    out_dtype = (
        np.result_type(_mean_dtype(x.dtype), np.float32) if x.dtype != np.float16 else np.float32
    )
    for fn in (jnp.average, jit(jnp.average, static_argnames=("axis", "returned", "keepdims"))):
        avg, total = fn(x, axis=axis, weights=weights, returned=True, keepdims=keepdims)
        ref_avg, ref_total = np.average(
            wide(x), axis=axis, weights=weights, returned=True, keepdims=keepdims
        )
        assert avg.dtype == out_dtype and total.shape == avg.shape
        np.testing.assert_allclose(wide(avg), ref_avg, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(wide(total), ref_total, rtol=1e-5)
    plain = jnp.average(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(
        wide(plain), np.average(wide(x), axis=axis, keepdims=keepdims), rtol=2e-3, atol=2e-3
    )


# --- quantiles --------------------------------------------------------------------------------

METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@given(data=st.data())
def test_quantiles(name, data):
    x, axis, keepdims, _ = draw_case(
        data,
        dtypes=["float32", "int32"],
        nan=name.startswith("nan"),
        shapes=[(5,), (2, 3), (3, 1, 4)],
    )
    method = data.draw(st.sampled_from(METHODS))
    scale = 100 if "percentile" in name else 1
    # q * (n - 1) stays away from ties of "nearest" (JAX rounds half down, numpy to even)
    q = (
        data.draw(st.sampled_from([np.float32(0.37), np.array([0.0, 0.37, 1.0], np.float32)]))
        * scale
    )
    kwargs = {"axis": axis, "keepdims": keepdims, "method": method}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(wide(x), q, **kwargs)
    for fn in (
        getattr(jnp, name),
        jit(getattr(jnp, name), static_argnames=("axis", "keepdims", "method")),
    ):
        out = fn(x, q, **kwargs)
        assert out.dtype == np.float32 and out.shape == np.shape(expected)
        np.testing.assert_allclose(wide(out), expected, rtol=1e-5, atol=1e-5)


@given(data=st.data())
def test_median(data):
    x, axis, keepdims, _ = draw_case(
        data, dtypes=["float32", "int8", "float16"], nan=True, shapes=[(5,), (2, 3), (3, 1, 4)]
    )
    for name in ("median", "nanmedian"):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(np, name)(wide(x), axis=axis, keepdims=keepdims)
        for fn in (
            getattr(jnp, name),
            jit(getattr(jnp, name), static_argnames=("axis", "keepdims")),
        ):
            out = fn(x, axis=axis, keepdims=keepdims)
            assert out.dtype == _mean_dtype(x.dtype)
            np.testing.assert_allclose(wide(out), expected, rtol=_tol(x.dtype), atol=_tol(x.dtype))


def test_quantile_details():
    x = jnp.arange(5.0)
    q = jnp.array([0.1, 0.5, 0.625, 0.375, 0.125])
    assert jnp.quantile(x, q, method="nearest").tolist() == [0.0, 2.0, 2.0, 1.0, 0.0]  # JAX's ties
    assert jnp.quantile(jnp.ones(3, jnp.float16), 0.5).dtype == np.float16
    assert jnp.quantile(jnp.ones(3, bool), 0.5).dtype == np.float32
    assert jnp.median(jnp.arange(4)).tolist() == 1.5
    traced_q = jit(lambda v, p: jnp.quantile(v, p))(
        np.arange(5.0, dtype=np.float32), np.float32(0.25)
    )
    assert float(traced_q) == 1.0
    # q / 100 may compile to q * 0.01 (100 -> 0.99999994): the top percentile is still the max
    data = np.random.default_rng(0).uniform(-3, 3, (2, 3)).astype(np.float32)
    top = jit(lambda v, p: jnp.percentile(v, p, method="lower"))(data, np.float32([0, 100]))
    assert top.tolist() == [data.min(), data.max()]
    with pytest.raises(ValueError, match="rank <= 1"):
        jnp.quantile(x, jnp.ones((2, 2)) * 0.5)
    with pytest.raises(ValueError, match="complex"):
        jnp.quantile(jnp.ones(3, jnp.complex64), 0.5)
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(x, 0.5, method="weibull")


# --- errors and edge cases ------------------------------------------------------------------


def test_reduction_edge_cases():
    x = jnp.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="initial"):
        jnp.max(x, where=x > 2)
    assert jnp.max(x, axis=0, where=jnp.array([True, False, True]), initial=-1).tolist() == [
        3,
        -1,
        5,
    ]
    assert np.isnan(jnp.var(jnp.array([1.0, 2.0]), ddof=2))
    with pytest.raises(ValueError, match="simultaneously"):
        jnp.std(x, ddof=1, correction=1)
    assert jnp.nanargmax(jnp.array([[np.nan, 1.0], [np.nan, np.nan]]), axis=1).tolist() == [1, -1]
    assert float(jnp.nanmax(jnp.array([np.nan, np.nan]), initial=3.0)) == 3.0
    assert np.isnan(float(jnp.nanmax(jnp.array([np.nan, np.nan]))))
    assert np.isnan(float(jnp.nanmean(jnp.array([np.nan]))))
    assert jnp.mean(jnp.ones((0, 3)), axis=0).shape == (3,)
    assert jnp.argmax(jnp.ones((0, 3)), axis=1).shape == (0,)
    with pytest.raises(ValueError, match="empty"):
        jnp.argmax(jnp.ones((0, 3)), axis=0)
    with pytest.raises(ValueError, match="zero-size"):
        jnp.min(jnp.ones((0,)))
    with pytest.raises(TypeError):
        jnp.ptp(jnp.ones(3, bool))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(x, weights=jnp.ones(3))
    with pytest.raises(ValueError, match="consistent"):
        jnp.average(x, axis=1, weights=jnp.ones(2))
    with pytest.raises(NotImplementedError, match="out"):
        jnp.sum(x, out=x)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.mean(x, axis=(0, 2))
    with pytest.raises(ValueError, match="repeated"):
        jnp.sum(x, axis=(0, 0))
    with pytest.raises(TypeError, match="ndarray or scalar"):
        jnp.sum([1, 2])
