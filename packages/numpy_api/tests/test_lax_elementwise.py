"""Elementwise lax primitives, eagerly and under jit, against numpy references.

References compute in float64/complex128 (or in the integer dtype itself, so
that overflow wraps as in XLA) and are compared with a tolerance per dtype.
Where XLA and numpy differ by design (integer division by zero, shifts past
the bit width, float-to-int conversion of out-of-range values), the reference
implements XLA's definition, which JAX documents.
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.runtime import jit

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16]
SIGNED = [np.dtype(np.int32), np.dtype(np.int8)]
UNSIGNED = [np.dtype(np.uint8), np.dtype(np.uint32)]
INTS = SIGNED + UNSIGNED
COMPLEX = [np.dtype(np.complex64)]
BOOL = [np.dtype(np.bool_)]
SHAPES = [(), (0,), (2, 3)]
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan]


def kind(dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == BF16:
        return "f"
    return dtype.kind


def make_values(rng, dtype, shape, lo=-3.0, hi=3.0, specials=False):
    """Random values of ``dtype``; floats in [lo, hi] with some specials (inf, nan, -0)."""
    k = kind(dtype)
    if k == "b":
        return rng.random(shape) < 0.5
    if k in "iu":
        info = np.iinfo(dtype)
        low = int(max(lo, info.min)) if lo > -math.inf else int(info.min)
        high = int(min(hi, info.max)) if hi < math.inf else int(info.max)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    if k == "c":
        parts = rng.uniform(lo, hi, (2, *shape))
        return (parts[0] + 1j * parts[1]).astype(dtype)
    x = rng.uniform(lo, hi, shape)
    if specials and x.size:
        mask = rng.random(shape) < 0.25
        x = np.where(mask, rng.choice(SPECIALS, size=shape), x)
    return x.astype(dtype)


def wide(x):
    """The values of ``x`` in the type numpy references compute in."""
    x = np.asarray(x)
    k = kind(x.dtype)
    if k == "f":
        return x.astype(np.float64)
    if k == "c":
        return x.astype(np.complex128)
    return x


TOL = {
    np.dtype(np.float32): (2e-5, 1e-6),
    np.dtype(np.float16): (2e-3, 2e-3),
    BF16: (2e-2, 2e-2),
    np.dtype(np.complex64): (1e-4, 1e-5),
}


def assert_matches(out, ref, dtype, shape=None):
    """Check ``out`` (a modjax Array) has ``dtype``/``shape`` and the values of ``ref``."""
    assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
    got = np.asarray(out)
    if shape is not None:
        assert got.shape == tuple(shape), (got.shape, shape)
    ref = np.asarray(ref)
    k = kind(dtype)
    if k in "fc":
        rtol, atol = TOL[np.dtype(dtype)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = wide(ref.astype(dtype))  # round the reference like the result
        np.testing.assert_allclose(wide(got), expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref.astype(dtype))


def check_eager_and_jit(fn, args, ref, dtype):
    out = fn(*args)
    assert_matches(out, ref, dtype, np.shape(ref))
    assert_matches(jit(fn)(*args), ref, dtype, np.shape(ref))
    return out


def np_call(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


# --- unary ---------------------------------------------------------------------------------


def _round_afz(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


# name, lax function, numpy reference, dtypes, (lo, hi), specials
UNARY = [
    ("neg", lax.neg, np.negative, FLOATS + INTS + COMPLEX, (-100, 100), True),
    ("sign", lax.sign, np.sign, FLOATS + INTS, (-100, 100), True),
    ("floor", lax.floor, np.floor, FLOATS, (-10, 10), True),
    ("ceil", lax.ceil, np.ceil, FLOATS, (-10, 10), True),
    ("round", lax.round, _round_afz, FLOATS, (-4, 4), True),
    ("is_finite", lax.is_finite, np.isfinite, FLOATS, (-10, 10), True),
    ("exp", lax.exp, np.exp, FLOATS + COMPLEX, (-5, 5), True),
    ("exp2", lax.exp2, np.exp2, FLOATS + COMPLEX, (-5, 5), True),
    ("log", lax.log, np.log, FLOATS + COMPLEX, (0.01, 100), True),
    ("log1p", lax.log1p, np.log1p, FLOATS + COMPLEX, (-0.9, 10), True),
    ("expm1", lax.expm1, np.expm1, FLOATS + COMPLEX, (-5, 5), True),
    ("tanh", lax.tanh, np.tanh, FLOATS + COMPLEX, (-5, 5), True),
    ("logistic", lax.logistic, _logistic, FLOATS + COMPLEX, (-8, 8), True),
    ("sin", lax.sin, np.sin, FLOATS + COMPLEX, (-6, 6), False),
    ("cos", lax.cos, np.cos, FLOATS + COMPLEX, (-6, 6), False),
    ("tan", lax.tan, np.tan, FLOATS + COMPLEX, (-1.3, 1.3), False),
    ("asin", lax.asin, np.arcsin, FLOATS + COMPLEX, (-0.95, 0.95), False),
    ("acos", lax.acos, np.arccos, FLOATS + COMPLEX, (-0.95, 0.95), False),
    ("atan", lax.atan, np.arctan, FLOATS + COMPLEX, (-5, 5), True),
    ("sinh", lax.sinh, np.sinh, FLOATS + COMPLEX, (-4, 4), True),
    ("cosh", lax.cosh, np.cosh, FLOATS + COMPLEX, (-4, 4), True),
    ("asinh", lax.asinh, np.arcsinh, FLOATS + COMPLEX, (-5, 5), True),
    ("acosh", lax.acosh, np.arccosh, FLOATS + COMPLEX, (1.01, 10), False),
    ("atanh", lax.atanh, np.arctanh, FLOATS + COMPLEX, (-0.95, 0.95), False),
    ("sqrt", lax.sqrt, np.sqrt, FLOATS + COMPLEX, (0, 10), True),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS + COMPLEX, (0.01, 10), False),
    ("cbrt", lax.cbrt, np.cbrt, FLOATS, (-10, 10), True),
    ("abs", lax.abs, np.abs, FLOATS + SIGNED + COMPLEX, (-100, 100), True),
    ("not", lax.bitwise_not, np.invert, INTS + BOOL, (-100, 100), False),
]


@pytest.mark.parametrize("name,fn,ref,dtypes,domain,specials", UNARY, ids=[u[0] for u in UNARY])
@given(data=st.data())
def test_unary_matches_numpy(name, fn, ref, dtypes, domain, specials, data):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = make_values(rng, dtype, shape, *domain, specials=specials)
    expected = np_call(ref, wide(x))
    out_dtype = np.dtype(np.bool_) if name == "is_finite" else dtype
    if name == "abs" and kind(dtype) == "c":
        out_dtype = np.dtype(np.float32)
    check_eager_and_jit(fn, (x,), expected, out_dtype)


def test_round_to_nearest_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.2], np.float32)
    even = lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    np.testing.assert_array_equal(np.asarray(even), [0.0, 2.0, 2.0, -0.0, -2.0, 3.0])
    away = lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)
    np.testing.assert_array_equal(np.asarray(away), [1.0, 2.0, 3.0, -1.0, -3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(jit(lambda x: lax.round(x, 1))(x)), np.asarray(even))


@given(data=st.data())
def test_integer_pow_matches_repeated_multiplication(data):
    dtype = data.draw(st.sampled_from(FLOATS + SIGNED + COMPLEX))
    y = data.draw(
        st.sampled_from([0, 1, 2, 3, 5, -1, -2] if kind(dtype) != "i" else [0, 1, 2, 3, 7])
    )
    shape = data.draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = make_values(rng, dtype, shape, 0.5, 2.0)
    if kind(dtype) == "i":
        expected = np.ones(shape, dtype)
        for _ in range(y):
            expected = np_call(np.multiply, expected, x)  # wraps like XLA
    else:
        expected = np_call(np.power, wide(x), y)
    check_eager_and_jit(lambda x: lax.integer_pow(x, y), (x,), expected, dtype)


# --- binary -----------------------------------------------------------------------------------


def _xla_div(x, y):
    """XLA's integer division: truncates; x/0 is -1 (all ones unsigned); MIN/-1 is MIN."""
    if kind(x.dtype) not in "iu":
        return np_call(np.divide, x, y)
    xb, yb = np.broadcast_arrays(x.astype(np.int64), y.astype(np.int64))
    safe = np.where(yb == 0, 1, yb)
    q = np.sign(xb) * np.sign(safe) * (np.abs(xb) // np.abs(safe))
    q = np.where(yb == 0, -1, q)
    return q.astype(x.dtype)  # wraps MIN/-1 back to MIN and -1 to all ones


def _xla_rem(x, y):
    if kind(x.dtype) not in "iu":
        return np_call(np.fmod, x, y)
    xb, yb = np.broadcast_arrays(x.astype(np.int64), y.astype(np.int64))
    safe = np.where(yb == 0, 1, yb)
    r = np.sign(xb) * (np.abs(xb) % np.abs(safe))
    return np.where(yb == 0, xb, r).astype(x.dtype)


def _shift(direction):
    """XLA's shifts: an amount outside [0, bits) gives 0 (or the sign fill for arithmetic)."""

    def ref(x, y):
        bits = x.dtype.itemsize * 8
        xb, yb = np.broadcast_arrays(x, y)
        amount = (
            yb.astype(np.int64) if kind(y.dtype) == "i" else yb.astype(np.uint64).astype(np.int64)
        )
        out_of_range = (amount < 0) | (amount >= bits)
        a = np.where(out_of_range, 0, amount).astype(np.uint64)
        unsigned = xb.astype(np.int64).astype(np.uint64) & np.uint64((1 << bits) - 1)
        if direction == "left":
            r = (unsigned << a) & np.uint64((1 << bits) - 1)
            fill = np.zeros_like(r)
        elif direction == "logical":
            r = unsigned >> a
            fill = np.zeros_like(r)
        else:
            signed = xb.astype(np.int64)
            r = (signed >> a.astype(np.int64)).astype(np.int64).astype(np.uint64)
            fill = np.where(signed < 0, np.uint64((1 << bits) - 1), np.uint64(0))
        r = np.where(out_of_range, fill, r) & np.uint64((1 << bits) - 1)
        out = r.astype(np.uint64)
        if kind(x.dtype) == "i":
            out = np.where(
                out >= (1 << (bits - 1)), out.astype(np.int64) - (1 << bits), out.astype(np.int64)
            )
        return np.asarray(out).astype(x.dtype)

    return ref


ANY = FLOATS + INTS + BOOL
# name, lax function, numpy reference, dtypes, (lo, hi), specials, result is bool
BINARY = [
    ("add", lax.add, np.add, FLOATS + INTS + COMPLEX, (-100, 100), True, False),
    ("sub", lax.sub, np.subtract, FLOATS + INTS + COMPLEX, (-100, 100), True, False),
    ("mul", lax.mul, np.multiply, FLOATS + INTS + COMPLEX, (-20, 20), True, False),
    ("div", lax.div, _xla_div, FLOATS + INTS + COMPLEX, (-50, 50), True, False),
    ("rem", lax.rem, _xla_rem, FLOATS + INTS, (-50, 50), True, False),
    ("max", lax.max, np.maximum, ANY + COMPLEX, (-100, 100), True, False),
    ("min", lax.min, np.minimum, ANY + COMPLEX, (-100, 100), True, False),
    ("atan2", lax.atan2, np.arctan2, FLOATS, (-5, 5), True, False),
    ("and", lax.bitwise_and, np.bitwise_and, INTS + BOOL, (-100, 100), False, False),
    ("or", lax.bitwise_or, np.bitwise_or, INTS + BOOL, (-100, 100), False, False),
    ("xor", lax.bitwise_xor, np.bitwise_xor, INTS + BOOL, (-100, 100), False, False),
    ("shift_left", lax.shift_left, _shift("left"), INTS, (-2, 40), False, False),
    (
        "shift_right_logical",
        lax.shift_right_logical,
        _shift("logical"),
        INTS,
        (-2, 40),
        False,
        False,
    ),
    (
        "shift_right_arithmetic",
        lax.shift_right_arithmetic,
        _shift("arithmetic"),
        INTS,
        (-2, 40),
        False,
        False,
    ),
    (
        "nextafter",
        lax.nextafter,
        np.nextafter,
        [np.dtype(np.float32), np.dtype(np.float16)],
        (-3, 3),
        True,
        False,
    ),
    ("pow", lax.pow, np.power, FLOATS + COMPLEX, (0.1, 3), False, False),
    ("eq", lax.eq, np.equal, ANY + COMPLEX, (-3, 3), True, True),
    ("ne", lax.ne, np.not_equal, ANY + COMPLEX, (-3, 3), True, True),
    ("lt", lax.lt, np.less, ANY, (-3, 3), True, True),
    ("le", lax.le, np.less_equal, ANY, (-3, 3), True, True),
    ("gt", lax.gt, np.greater, ANY, (-3, 3), True, True),
    ("ge", lax.ge, np.greater_equal, ANY, (-3, 3), True, True),
]
# Shapes lax's binary ops accept: equal, rank 0 with anything, size-1 dims.
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), ()), ((), ()), ((1, 3), (2, 1)), ((0,), (0,)), ((), (0,))]


@pytest.mark.parametrize(
    "name,fn,ref,dtypes,domain,specials,to_bool", BINARY, ids=[b[0] for b in BINARY]
)
@given(data=st.data())
def test_binary_matches_numpy(name, fn, ref, dtypes, domain, specials, to_bool, data):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    sx, sy = data.draw(st.sampled_from(SHAPE_PAIRS), label="shapes")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = make_values(rng, dtype, sx, *domain, specials=specials)
    y_domain = domain
    if name == "pow":
        y_domain = (-3, 3)
    y = make_values(rng, dtype, sy, *y_domain, specials=specials)
    if kind(dtype) in "iu" and name in ("div", "rem"):
        # mix in zeros and the MIN / -1 overflow, which XLA defines
        y = np.where(rng.random(sy) < 0.3, 0, y).astype(dtype)
        if kind(dtype) == "i" and x.size:
            x = np.where(rng.random(sx) < 0.3, np.iinfo(dtype).min, x).astype(dtype)
            y = np.where(rng.random(sy) < 0.3, -1, y).astype(dtype)
    if kind(dtype) in "fc" and name != "nextafter":  # nextafter is about the dtype's own grid
        expected = np_call(ref, wide(x), wide(y))
    else:
        expected = np_call(ref, x, y)
    out_dtype = np.dtype(np.bool_) if to_bool else dtype
    check_eager_and_jit(fn, (x, y), expected, out_dtype)


def test_pow_with_integer_exponent():
    x = np.array([0.5, 2.0, 3.0], np.float32)
    y = np.array([2, -1, 3], np.int32)
    out = lax.pow(x, y)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [0.25, 0.5, 27.0])
    np.testing.assert_allclose(np.asarray(jit(lax.pow)(x, np.int32(2))), x**2)


def test_integer_division_follows_xla():
    x = np.array([7, -7, 7, -7, 5, 0, -(2**31), -(2**31)], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, -1, 0], np.int32)
    np.testing.assert_array_equal(np.asarray(lax.div(x, y)), [3, -3, -3, 3, -1, -1, -(2**31), -1])
    np.testing.assert_array_equal(np.asarray(lax.rem(x, y)), [1, -1, 1, -1, 5, 0, 0, -(2**31)])
    u = np.array([7, 5, 0], np.uint32)
    np.testing.assert_array_equal(np.asarray(lax.div(u, np.uint32(0))), [2**32 - 1] * 3)
    np.testing.assert_array_equal(np.asarray(lax.rem(u, np.uint32(0))), u)


def test_shifts_past_the_width_follow_xla():
    one, minus8 = np.int32(1), np.int32(-8)
    assert int(lax.shift_left(one, np.int32(33))) == 0
    assert int(lax.shift_right_arithmetic(minus8, np.int32(40))) == -1
    assert int(lax.shift_right_logical(minus8, np.int32(40))) == 0
    assert int(lax.shift_left(one, np.int32(-1))) == 0


# --- conversion, select, clamp --------------------------------------------------------------------


def _saturating_cast(x, dtype):
    """XLA's float -> int conversion on CPU: truncate, saturate, NaN -> 0."""
    info = np.iinfo(dtype)
    t = np.trunc(wide(x))
    t = np.where(np.isnan(t), 0, np.clip(t, info.min, info.max))
    return t.astype(dtype)


CONVERT_DTYPES = FLOATS + INTS + BOOL + COMPLEX


@given(data=st.data())
def test_convert_element_type_matches_numpy(data):
    src = data.draw(st.sampled_from(CONVERT_DTYPES), label="from")
    dst = data.draw(st.sampled_from(CONVERT_DTYPES), label="to")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = make_values(rng, src, shape, -300, 300, specials=kind(src) == "f")
    ks, kd = kind(src), kind(dst)
    if kd == "b":
        expected = wide(x) != 0
    elif ks == "c" and kd != "c":
        expected = np_call(lambda v: v.real.astype(np.float64), x)
        expected = _saturating_cast(expected, dst) if kd in "iu" else expected
    elif ks == "f" and kd in "iu":
        expected = _saturating_cast(x, dst)
    else:
        expected = np_call(lambda v: v.astype(dst), x if ks in "iub" else wide(x))
    check_eager_and_jit(lambda v: lax.convert_element_type(v, dst), (x,), expected, dst)


def test_convert_element_type_canonicalizes_and_is_strong():
    out = lax.convert_element_type(np.float32(2.5), np.float64)
    assert out.dtype == np.float32 and not out.weak_type
    assert lax.convert_element_type(1.0, np.int32).dtype == np.int32


def test_mul_out_dtype_converts_the_operands_first():
    # JAX 0.10.2's answers: mixed dtypes allowed, the product in out_dtype.
    wide = lax.mul(np.int8(100), np.int8(3), out_dtype=np.int32)
    assert wide.dtype == np.int32 and int(wide) == 300
    mixed = lax.mul(np.float16(2), np.float32(3), out_dtype="float32")
    assert mixed.dtype == np.float32 and float(mixed) == 6.0
    assert float(lax.mul(np.int32(3), 2.5, out_dtype=np.float32)) == 7.5
    with pytest.raises(TypeError, match="lax.mul requires arguments to have the same dtypes"):
        lax.mul(np.int8(1), np.int16(2))


@given(data=st.data())
def test_select_n_matches_numpy(data):
    dtype = data.draw(st.sampled_from(FLOATS + INTS + BOOL))
    shape = data.draw(st.sampled_from(SHAPES))
    n = data.draw(st.sampled_from([1, 2, 3]))
    scalar_which = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cases = [make_values(rng, dtype, shape) for _ in range(n)]
    wshape = () if scalar_which else shape
    if n <= 2 and data.draw(st.booleans()):
        which = rng.random(wshape) < 0.5 if n == 2 else np.zeros(wshape, bool)
    else:
        which = rng.integers(0, n, size=wshape).astype(np.int32)
    expected = np.choose(np.broadcast_to(which.astype(np.int64), shape), cases)
    check_eager_and_jit(lambda w, *c: lax.select_n(w, *c), (which, *cases), expected, dtype)


@given(data=st.data())
def test_clamp_matches_numpy(data):
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    shape = data.draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = make_values(rng, dtype, shape, -50, 50)
    lo_shape = data.draw(st.sampled_from([(), shape]))
    lo = make_values(rng, dtype, lo_shape, -20, 0)
    hi = make_values(rng, dtype, (), 0, 20)
    expected = np.minimum(np.maximum(x, lo), hi)
    check_eager_and_jit(lax.clamp, (lo, x, hi), expected, dtype)


# --- Python scalars and weak types -----------------------------------------------------------


def test_python_scalars_are_weak_values_of_their_default_dtype():
    # as in JAX: a Python scalar is weakly typed with its default dtype, and lax
    # then requires equal dtypes (no promotion, not even to a narrower float)
    out = lax.add(np.ones(3, np.float32), 1.0)
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [2, 2, 2])
    assert lax.mul(np.ones(3, np.int32), 3).dtype == np.int32
    with pytest.raises(
        TypeError, match="lax.add requires arguments to have the same dtypes, got float16, float32"
    ):
        lax.add(np.ones(3, np.float16), 1.0)
    with pytest.raises(TypeError, match="got int8, int32"):
        lax.mul(np.ones(3, np.int8), 3)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(np.ones(3, np.int32), 1.5)
    with pytest.raises(TypeError, match="lax.clamp requires"):
        lax.clamp(0.0, np.ones(3, np.float16), 1.0)
    with pytest.raises(OverflowError):
        lax.add(np.ones(3, np.int32), 2**40)


def test_weak_types_of_results():
    both_weak = lax.add(2.0, 1.0)
    assert both_weak.weak_type and both_weak.dtype == np.float32
    assert not lax.add(np.float32(2.0), 1.0).weak_type
    assert lax.lt(2.0, 1.0).weak_type  # a weak bool, as JAX 0.10.2 gives
    assert not lax.lt(np.float32(2.0), 1.0).weak_type
    assert lax.neg(2).weak_type and lax.neg(2).dtype == np.int32


def test_total_order_comparisons_match_jax():
    # JAX 0.10.2's lax.eq_to_p / le_to_p / lt_to_p on these values: -0 < +0 and NaN equal
    # to itself and above everything, eagerly, under jit and under vmap.
    from modjax.batching import vmap

    x = np.array([-0.0, 0.0, np.nan, -np.inf, 1.0], np.float32)
    y = np.array([0.0, -0.0, np.nan, 2.0, np.nan], np.float32)
    expected = {
        lax.eq_to_p: [False, False, True, False, False],
        lax.le_to_p: [True, False, True, True, True],
        lax.lt_to_p: [True, False, False, True, True],
    }
    for prim, want in expected.items():
        for fn in (prim.bind, jit(prim.bind), vmap(prim.bind)):
            assert np.asarray(fn(x, y)).tolist() == want
    assert np.asarray(lax.lt_to_p.bind(np.arange(3, dtype=np.int32), 1)).tolist() == [
        True,
        False,
        False,
    ]


def test_logistic_of_bfloat16_is_jaxs_bits():
    # JAX lowers logistic as 1 / (1 + exp(-x)); XLA's own logistic rounds bfloat16 otherwise.
    # The bit patterns below are JAX 0.10.2's inputs and jax.nn.sigmoid outputs.
    x_bits = [
        [16354, 16077, 16251, 16399, 16367, 49018],
        [16243, 48667, 48595, 16082, 15892, 16314],
    ]
    want = [[16218, 16153, 16186, 16231, 16221, 16012], [16184, 16109, 16115, 16154, 16137, 16207]]
    x = np.array(x_bits, np.uint16).view(ml_dtypes.bfloat16)
    got = np.asarray(lax.logistic(x)).view(np.uint16)
    np.testing.assert_array_equal(got, np.array(want, np.uint16))
