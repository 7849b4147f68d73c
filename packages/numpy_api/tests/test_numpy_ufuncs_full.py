"""Every elementwise function of modjax.numpy: result dtypes against JAX, values against numpy.

``ufuncs_full_jax_dtypes.json`` records the result dtype (``*``: weakly typed)
or the exception JAX 0.10 gives for each function and input dtype, Python
scalars included (recorded with jax by the script kept in the file itself,
``recorded_with``: modjax never imports jax). Dtypes are read from
``make_jaxpr`` (no compilation). Values are
compared with numpy on float32 inputs that include the special values (signed
zeros, infinities, NaN), eagerly and under ``jit``; integer functions on
int8/int32/uint8. Inputs have one shape, so compiled programs are shared.
"""

from __future__ import annotations

import json
import math
import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

TABLE = json.loads(pathlib.Path(__file__).with_name("ufuncs_full_jax_dtypes.json").read_text())
DTYPES = {
    "b": np.bool_,
    "i8": np.int8,
    "u8": np.uint8,
    "i32": np.int32,
    "u32": np.uint32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "c64": np.complex64,
}
SCALARS = {"pyi": 1, "pyf": 1.0, "pyc": 1j, "pyb": True}
# JAX drops the weak type of these results as a side effect of how it computes them
# (a strong constant); modjax keeps it, consistently with the other functions.
WEAK_TYPE_QUIRKS = {("gcd", "b,pyi"), ("lcm", "b,pyi")}


def _describe(fn, keys):
    arrays = [k for k in keys if k not in SCALARS]

    def call(*xs):
        it = iter(xs)
        return fn(*(SCALARS[k] if k in SCALARS else next(it) for k in keys))

    try:
        closed = make_jaxpr(call)(*(np.ones(2, DTYPES[k]) for k in arrays))
    except Exception as e:  # noqa: BLE001 - the exception's type is the result
        return type(e).__name__, None
    return "/".join(np.dtype(a.dtype).name for a in closed.out_avals), [
        a.weak_type for a in closed.out_avals
    ]


def _split(expected: str):
    parts = expected.split("/")
    return "/".join(p.rstrip("*") for p in parts), [p.endswith("*") for p in parts]


@pytest.mark.parametrize("name", sorted(TABLE["unary"]))
def test_unary_result_dtypes_match_jax(name):
    for key, expected in TABLE["unary"][name].items():
        dtype, weak = _describe(getattr(jnp, name), [key])
        want_dtype, want_weak = _split(expected)
        assert dtype == want_dtype, f"jnp.{name}({key}): {dtype}, JAX gives {expected}"
        if weak is not None and "bool" not in dtype:
            assert weak == want_weak, f"jnp.{name}({key}) weak type {weak}, JAX: {expected}"


@pytest.mark.parametrize("name", sorted(TABLE["binary"]))
def test_binary_result_dtypes_match_jax(name):
    for key, expected in TABLE["binary"][name].items():
        dtype, weak = _describe(getattr(jnp, name), key.split(","))
        want_dtype, want_weak = _split(expected)
        assert dtype == want_dtype, f"jnp.{name}({key}): {dtype}, JAX gives {expected}"
        if weak is not None and "bool" not in dtype and (name, key) not in WEAK_TYPE_QUIRKS:
            assert weak == want_weak, f"jnp.{name}({key}) weak type {weak}, JAX: {expected}"


# --- values against numpy ------------------------------------------------------------------

N = 8
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5], np.float32)


def _floats(lo=-4.0, hi=4.0):
    """float32 vectors of length N mixing the special values with uniform draws.

    No subnormals: XLA's CPU arithmetic flushes them to zero (as JAX's does).
    """
    element = st.one_of(
        st.sampled_from([float(v) for v in SPECIALS]),
        st.floats(lo, hi, width=32, allow_subnormal=False),
    )
    return st.lists(element, min_size=N, max_size=N).map(lambda v: np.asarray(v, np.float32))


def _check(out, expected, rtol=2e-6, atol=0.0, signed_zeros=True, name="", flush=True):
    out = np.asarray(out)
    expected = np.asarray(expected)
    assert out.shape == expected.shape, name
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(out, expected, err_msg=name)
        return
    o, e = out.astype(np.complex128), expected.astype(np.complex128)
    # XLA's CPU arithmetic flushes subnormal results to zero: so does the reference
    tiny = float(np.finfo(np.float32).tiny)
    to_zero = np.vectorize(lambda v: math.copysign(0.0, v) if abs(v) < tiny else v, otypes=[float])
    if e.size and flush:  # (assembled part by part: -0.0 + 0j would lose the sign of the zero)
        real_part, imag_part = to_zero(e.real), to_zero(e.imag)
        e = np.empty(e.shape, np.complex128)
        e.real, e.imag = real_part, imag_part
    for part in (np.real, np.imag):
        po, pe = part(o), part(e)
        np.testing.assert_array_equal(np.isnan(po), np.isnan(pe), err_msg=f"{name}: NaNs")
        finite = ~np.isnan(pe)
        np.testing.assert_allclose(po[finite], pe[finite], rtol=rtol, atol=atol, err_msg=name)
        if signed_zeros:
            zeros = pe == 0
            np.testing.assert_array_equal(
                np.signbit(po[zeros]), np.signbit(pe[zeros]), err_msg=f"{name}: signed zeros"
            )


def _numpy(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


# name: (numpy reference, relative tolerance, signed zeros checked)
UNARY_FLOAT = {
    "fabs": (np.fabs, 0, True),
    "deg2rad": (np.deg2rad, 1e-6, True),
    "rad2deg": (np.rad2deg, 1e-6, True),
    "degrees": (np.degrees, 1e-6, True),
    "radians": (np.radians, 1e-6, True),
    "signbit": (np.signbit, 0, True),
    "spacing": (np.spacing, 0, True),
    "isposinf": (np.isposinf, 0, True),
    "isneginf": (np.isneginf, 0, True),
    "isreal": (np.isreal, 0, True),
    "iscomplex": (np.iscomplex, 0, True),
    "real": (np.real, 0, True),
    "imag": (np.imag, 0, False),
    "conj": (np.conj, 0, True),
    "conjugate": (np.conjugate, 0, True),
    "angle": (np.angle, 1e-6, True),
    "sinc": (np.sinc, 2e-6, False),
    "nan_to_num": (np.nan_to_num, 0, True),
    "reciprocal": (np.reciprocal, 1e-6, True),
    "negative": (np.negative, 0, True),
    "positive": (np.positive, 0, True),
    "square": (np.square, 1e-6, True),
    "trunc": (np.trunc, 0, True),
    "rint": (np.rint, 0, True),
    "round": (np.round, 0, True),
    "floor": (np.floor, 0, True),
    "ceil": (np.ceil, 0, True),
    "isfinite": (np.isfinite, 0, True),
    "isinf": (np.isinf, 0, True),
    "isnan": (np.isnan, 0, True),
    "sign": (np.sign, 0, False),
    "exp2": (np.exp2, 2e-6, True),
    "log2": (np.log2, 2e-6, False),
    "log10": (np.log10, 2e-6, False),
    "cbrt": (np.cbrt, 2e-6, True),
    "abs": (np.abs, 0, True),
    "sqrt": (np.sqrt, 1e-6, True),
    "logical_not": (np.logical_not, 0, True),
}


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
@given(data=st.data())
def test_unary_float_values_match_numpy(name, data):
    ref, rtol, signed = UNARY_FLOAT[name]
    x = data.draw(_floats())
    expected = _numpy(ref, x)
    fn = getattr(jnp, name)
    flush = name != "spacing"  # spacing(0) is the smallest subnormal, as in numpy
    if name == "spacing":
        # Elsewhere a subnormal gap is a subtraction's result, which XLA flushes to zero
        # (a known difference: JAX returns the subnormal gap next to the smallest normal).
        tiny = np.finfo(np.float32).tiny
        expected = np.where((x != 0) & (np.abs(expected) < tiny), 0.0, expected).astype(np.float32)
    _check(fn(x), expected, rtol=rtol, signed_zeros=signed, name=name, flush=flush)
    _check(jit(fn)(x), expected, rtol=rtol, signed_zeros=signed, name=f"jit {name}", flush=flush)


def test_i0_matches_numpy_and_jax_at_infinity():
    x = np.array([0.0, -0.0, 0.5, -1.5, 3.0, 10.0, -20.0, np.nan], np.float32)
    _check(jnp.i0(x), np.i0(x.astype(np.float64)), rtol=2e-6)
    # JAX computes exp(|x|) * i0e(x): inf * 0 is NaN at infinity (numpy gives inf)
    assert np.isnan(np.asarray(jnp.i0(np.float32(np.inf))))


@given(x=_floats(-(2.0**100), 2.0**100))
def test_frexp_and_ldexp_match_numpy(x):
    m, e = jnp.frexp(x)
    m_ref, e_ref = np.frexp(x)
    _check(m, m_ref, name="frexp mantissa")
    finite = np.isfinite(x)
    np.testing.assert_array_equal(np.asarray(e)[finite], e_ref[finite])
    assert np.asarray(e).dtype == np.int32
    shifts = np.arange(-4, 4, dtype=np.int32) * 17
    _check(jnp.ldexp(x, shifts), _numpy(np.ldexp, x, shifts), name="ldexp")
    _check(jit(jnp.ldexp)(x, shifts), _numpy(np.ldexp, x, shifts), name="jit ldexp")
    _check(jnp.ldexp(m, e), x, name="ldexp(frexp(x))")


def test_frexp_is_exact_for_subnormals_and_ldexp_rounds_once():
    sub = np.array([1e-40, -3e-42, 1.4e-45, 5e-39], np.float32)
    m, e = jnp.frexp(sub)
    m_ref, e_ref = np.frexp(sub)
    np.testing.assert_array_equal(np.asarray(m), m_ref)
    np.testing.assert_array_equal(np.asarray(e), e_ref)
    big = np.array([1.5, 3.0, 1.0, 1.0], np.float32)
    out = np.asarray(jnp.ldexp(big, np.array([127, 126, 128, -126], np.int32)))
    np.testing.assert_array_equal(out, np.ldexp(big, np.array([127, 126, 128, -126])))
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(big, big)


@given(x=_floats(-1e3, 1e3))
def test_modf_matches_numpy(x):
    frac, whole = jnp.modf(x)
    f_ref, w_ref = np.modf(x)
    _check(frac, f_ref, rtol=1e-6, atol=1e-6, name="modf fraction")
    _check(whole, w_ref, name="modf integral part")


# name: (numpy reference, relative tolerance, signed zeros checked)
BINARY_FLOAT = {
    "copysign": (np.copysign, 0, True),
    "fmax": (np.fmax, 0, False),
    "fmin": (np.fmin, 0, False),
    "float_power": (lambda a, b: np.float_power(a, b).astype(np.float32), 3e-6, False),
    "heaviside": (np.heaviside, 0, True),
    "hypot": (np.hypot, 2e-6, True),
    "logaddexp": (np.logaddexp, 2e-6, True),
    # A result near 0 is larger + log2(1 + 2**(smaller - larger)) with larger in [-1, 0]
    # cancelling a correction in [0, 1]: its error is a few ulp(1.0) = 1.2e-7 (within the
    # atol of 1e-6 below) and its sign is rounding noise: (-1, -1) gives numpy's 0.0, or
    # -1.06e-8 where XLA fuses the multiply-add (JAX's answer on FMA machines).
    "logaddexp2": (np.logaddexp2, 2e-6, False),
    "nextafter": (np.nextafter, 0, True),
    "arctan2": (np.arctan2, 2e-6, True),
    "atan2": (np.arctan2, 2e-6, True),
    "fmod": (np.fmod, 1e-6, True),
    "remainder": (np.remainder, 1e-6, False),
    "floor_divide": (np.floor_divide, 1e-6, False),
    "maximum": (np.maximum, 0, False),
    "minimum": (np.minimum, 0, False),
    "power": (np.power, 3e-6, False),
}


@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
@given(data=st.data())
def test_binary_float_values_match_numpy(name, data):
    ref, rtol, signed = BINARY_FLOAT[name]
    x1, x2 = data.draw(_floats()), data.draw(_floats())
    if name == "nextafter":  # XLA flushes subnormal results to zero on CPU
        x1 = np.where(np.abs(x1) < 1e-30, np.float32(1), x1)
    expected = _numpy(ref, x1, x2)
    fn = getattr(jnp, name)
    _check(fn(x1, x2), expected, rtol=rtol, atol=1e-6, signed_zeros=signed, name=name)
    _check(jit(fn)(x1, x2), expected, rtol=rtol, atol=1e-6, signed_zeros=signed, name=name)


def test_logaddexp_eager_and_jit_agree_bitwise():
    # Eager calls run the same compiled program as jit (JAX jits these functions), so
    # the fused multiply-add of logaddexp2 rounds the same way in both; one ulp(1.0)
    # bounds either rounding of this exact 0.
    args = [np.float32(-1.0), -1.0, np.full(3, -1.0, np.float32), jnp.asarray(np.float32(-1.0))]
    for name in ("logaddexp", "logaddexp2"):
        fn = getattr(jnp, name)
        for x in args:
            eager, jitted = fn(x, x), jit(fn)(x, x)
            assert eager.dtype == jitted.dtype and eager.weak_type == jitted.weak_type
            np.testing.assert_array_equal(np.signbit(eager), np.signbit(jitted), err_msg=name)
            np.testing.assert_array_equal(eager, jitted, err_msg=name)
    value = float(jnp.logaddexp2(np.float32(-1.0), np.float32(-1.0)))
    assert abs(value) <= float(np.spacing(np.float32(1.0)))


INT_DTYPES = [np.int8, np.int32, np.uint8]
BINARY_INT = {
    "gcd": np.gcd,
    "lcm": np.lcm,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "floor_divide": np.floor_divide,
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
    "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift,
    "bitwise_and": np.bitwise_and,
    "fmax": np.fmax,
    "fmin": np.fmin,
}


@pytest.mark.parametrize("name", sorted(BINARY_INT))
@given(data=st.data())
def test_binary_int_values_match_numpy(name, data):
    dtype = data.draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -100), min(info.max, 100))
    if "shift" in name:
        lo, hi = 0, np.iinfo(dtype).bits - 1
    ints = st.lists(st.integers(lo, hi), min_size=N, max_size=N)
    x1 = np.asarray(data.draw(ints), dtype)
    x2 = np.asarray(data.draw(ints), dtype)
    if name in ("fmod", "remainder", "floor_divide"):
        x2 = np.where(x2 == 0, dtype(1), x2)  # numpy warns and JAX defines its own value
    expected = _numpy(BINARY_INT[name], x1, x2)
    fn = getattr(jnp, name)
    _check(fn(x1, x2), expected, name=name)
    _check(jit(fn)(x1, x2), expected, name=f"jit {name}")


def test_gcd_and_lcm_edges():
    a = np.array([12, -12, 0, 0, -(2**31), 7, 2**31 - 1, 1836311903], np.int32)
    b = np.array([-18, -18, 5, 0, 6, 0, 2**31 - 2, 1134903170], np.int32)  # Fibonacci: slowest
    np.testing.assert_array_equal(np.asarray(jnp.gcd(a, b)), np.gcd(a, b))
    np.testing.assert_array_equal(np.asarray(jnp.lcm(a[:4], b[:4])), np.lcm(a[:4], b[:4]))
    with pytest.raises(ValueError, match="must be integers"):
        jnp.gcd(np.ones(2, np.float32), 1)


def test_bitwise_count_counts_the_magnitude():
    x = np.array([-1, 5, -128, 0, 127, 3, -3, 64], np.int8)
    out = jnp.bitwise_count(x)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(out), np.bitwise_count(x))
    np.testing.assert_array_equal(np.asarray(jnp.bitwise_count(np.array([True, False]))), [1, 0])


def test_complex_functions_match_numpy():
    z = np.array([1 + 2j, -3 - 0j, 0j, -0.5 + 2.5j, complex(np.inf, 1), complex(0, np.nan)])
    z = z.astype(np.complex64)
    for name in ["real", "imag", "conj", "angle", "isreal", "iscomplex", "isfinite", "isinf"]:
        _check(getattr(jnp, name)(z), _numpy(getattr(np, name), z), rtol=1e-6, name=name)
    finite = z[:4]
    _check(jnp.deg2rad(finite), finite * np.float32(np.pi / 180), rtol=1e-6, name="deg2rad")
    for name in ["rint", "sign", "square", "exp2", "log2", "log10", "sinc", "negative"]:
        fn, ref = getattr(jnp, name), getattr(np, name)
        _check(fn(finite), _numpy(ref, finite), rtol=2e-6, atol=1e-6, signed_zeros=False, name=name)
    _check(jnp.round(finite * 1.37, 1), np.round(finite * 1.37, 1), rtol=1e-6, name="round")
    _check(jnp.angle(finite, deg=True), np.angle(finite, deg=True), rtol=1e-6, name="angle deg")
    _check(
        jnp.nan_to_num(z), np.nan_to_num(z).astype(np.complex64), signed_zeros=False, name="nan2num"
    )
    a, b = finite, finite[::-1].copy()
    for name in ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax"]:
        _check(getattr(jnp, name)(a, b), getattr(np, name)(a, b), name=name)
    _check(jnp.logaddexp(a, b), np.log(np.exp(a) + np.exp(b)), rtol=1e-5, name="logaddexp")


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: jnp.fabs(np.ones(2, np.complex64)), TypeError, "fabs"),
        (lambda: jnp.signbit(np.ones(2, np.complex64)), ValueError, "signbit"),
        (lambda: jnp.spacing(1j), ValueError, "spacing"),
        (lambda: jnp.isposinf(1j), ValueError, "isposinf"),
        (lambda: jnp.i0(1j), ValueError, "i0"),
        (lambda: jnp.frexp(1j), TypeError, "frexp"),
        (lambda: jnp.modf(1j), TypeError, "modf"),
        (lambda: jnp.copysign(1j, 1.0), TypeError, "copysign"),
        (lambda: jnp.heaviside(1j, 1.0), TypeError, "heaviside"),
        (lambda: jnp.hypot(1j, 1.0), ValueError, "hypot"),
        (lambda: jnp.round(np.ones(2, np.bool_)), ValueError, "inexact"),
        (lambda: jnp.negative(np.ones(2, np.bool_)), TypeError, "neg"),
        (lambda: jnp.bitwise_count(np.ones(2, np.float32)), TypeError, "population_count"),
        (lambda: jnp.subtract(np.ones(2, np.bool_), True), TypeError, "sub"),
        (lambda: jnp.trunc(np.ones(2, np.complex64)), TypeError, "trunc"),
        (lambda: jnp.add([1, 2], 1), TypeError, "add requires ndarray or scalar"),
        (lambda: jnp.add(np.ones(2), np.ones(3)), TypeError, "incompatible shapes"),
    ],
)
def test_refused_inputs_raise(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_fix_is_gone_as_in_jax():
    # JAX 0.10.2 removed jnp.fix: looking it up raises AttributeError with its notice
    with pytest.raises(AttributeError) as info:
        jnp.fix  # noqa: B018
    assert str(info.value) == (
        "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0."
        " Use jax.numpy.trunc instead."
    )
    assert not hasattr(jnp, "fix") and "fix" not in dir(jnp)
    with pytest.raises(ImportError, match="cannot import name 'fix'"):
        from modjax.numpy import fix  # noqa: F401


def test_bools_compute_in_the_default_integer():
    t = np.array([True, False, True])
    for name, expected in [
        ("power", [1, 0, 1]),
        ("floor_divide", [1, 0, 1]),
        ("remainder", [0, 0, 0]),
        ("left_shift", [2, 0, 2]),
        ("square", None),
    ]:
        fn = getattr(jnp, name)
        out = fn(t) if expected is None else fn(t, np.array([True, True, True]))
        assert out.dtype == np.int32, name
        if expected is not None:
            np.testing.assert_array_equal(np.asarray(out), expected)
    assert jnp.power(t, 2).dtype == np.int32


def test_broadcasting_and_python_scalars():
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    assert jnp.copysign(x, -1.0).dtype == np.float16
    assert jnp.heaviside(x, 0.5).shape == (2, 3)
    out = jnp.logaddexp(x, np.zeros((1, 3), np.float16))
    assert out.shape == (2, 3) and out.dtype == np.float16
    assert jnp.hypot(np.ones((3, 1), np.float32), np.ones(4, np.float32)).shape == (3, 4)
    assert jnp.gcd(np.arange(6, dtype=np.int8), 4).dtype == np.int8
    assert jnp.fmax(np.zeros((0, 3), np.float32), 1.0).shape == (0, 3)
    assert jnp.spacing(np.float32(1.0)).shape == ()
    np.testing.assert_array_equal(
        np.asarray(jnp.ldexp(np.ones((2, 1), np.float32), np.arange(3, dtype=np.int32))),
        np.ldexp(np.ones((2, 1), np.float32), np.arange(3)),
    )


# --- the ufunc objects ---------------------------------------------------------------------

UFUNCS = [
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "subtract",
]


def test_ufunc_objects_like_jax():
    for name in UFUNCS:
        uf = getattr(jnp, name)
        assert isinstance(uf, jnp.ufunc), name
        assert repr(uf) == f"<jnp.ufunc '{name}'>"
        assert uf.nin == (1 if name == "negative" else 2) and uf.nout == 1
    assert jnp.add.identity == 0 and jnp.multiply.identity == 1
    assert jnp.logaddexp.identity == -math.inf and jnp.subtract.identity is None
    assert jnp.logical_and.identity is True and jnp.bitwise_and.identity == -1
    with pytest.raises(NotImplementedError, match="where argument"):
        jnp.add(1, 2, where=True)
    with pytest.raises(NotImplementedError, match="out argument"):
        jnp.add(1, 2, out=np.zeros(()))
    with pytest.raises(ValueError, match="only supported for binary ufuncs"):
        jnp.negative.reduce(np.ones(3))
    with pytest.raises(NotImplementedError, match="inplace"):
        jnp.add.at(np.zeros(3), 0, 1.0)


@pytest.mark.parametrize("name", [n for n in UFUNCS if n != "negative"])
def test_ufunc_reduce_accumulate_outer_match_numpy(name):
    x = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], np.int32)
    if name.startswith("logaddexp"):
        x = x.astype(np.float32) / 3
    uf, ref = getattr(jnp, name), getattr(np, name)
    for axis in (0, 1) if name == "subtract" else (0, 1, None):
        expected = ref.reduce(x, axis=axis)
        out = uf.reduce(x, axis=axis)
        _check(out, expected.astype(np.asarray(out).dtype), rtol=1e-6, name=f"{name}.reduce")
    out = uf.reduce(x, axis=1, keepdims=True)
    assert out.shape == (3, 1)
    if name != "subtract":
        acc = uf.accumulate(x, axis=1)
        _check(acc, ref.accumulate(x, axis=1).astype(acc.dtype), rtol=1e-6, name="accumulate")
    else:
        _check(uf.accumulate(x, axis=1), ref.accumulate(x, axis=1), name="subtract.accumulate")
    outer = uf.outer(x[0], x[1, :3])
    _check(outer, ref.outer(x[0], x[1, :3]).astype(outer.dtype), rtol=1e-6, name="outer")


def test_ufunc_reduce_dtypes_initial_and_where():
    x8 = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert jnp.add.reduce(x8).dtype == np.int32  # as jnp.sum
    assert jnp.maximum.reduce(x8).dtype == np.int8
    assert jnp.logaddexp.reduce(x8).dtype == np.float32
    assert jnp.logical_xor.reduce(x8).dtype == np.bool_
    assert int(jnp.add.reduce(x8, axis=None, initial=5)) == 20
    assert float(jnp.maximum.reduce(np.zeros(0, np.float32), initial=-1.0)) == -1.0
    with pytest.raises(ValueError, match="no identity"):
        jnp.maximum.reduce(np.zeros(0, np.float32))
    masked = jnp.logaddexp.reduce(np.zeros(4, np.float32), where=np.array([1, 1, 0, 0], bool))
    np.testing.assert_allclose(float(masked), math.log(2), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jnp.bitwise_or.reduce(x8, axis=1)), [3, 7])


def _clipped_difference(x, y):
    """A non-associative scalar function: ``x - y`` where positive, else ``y``."""
    return jnp.where(x > y, x - y, y)


@given(st.lists(st.integers(-4, 4), min_size=6, max_size=6), st.sampled_from([0, 1, None]))
def test_frompyfunc_matches_numpy_in_numpy_order(values, axis):
    x = np.array(values, np.float32).reshape(2, 3)
    uf = jnp.frompyfunc(_clipped_difference, 2, 1, identity=0)
    ref = np.frompyfunc(lambda a, b: a - b if a > b else b, 2, 1, identity=0)
    assert isinstance(uf, jnp.ufunc) and (uf.nin, uf.nout, uf.identity) == (2, 1, 0)
    _check(uf(x, np.float32(1)), ref(x, np.float32(1)).astype(np.float32), name="call")
    for fn in (lambda a: uf.reduce(a, axis=axis), jit(lambda a: uf.reduce(a, axis=axis))):
        _check(fn(x), np.asarray(ref.reduce(x, axis=axis), np.float32), name="reduce")
    _check(
        uf.reduce(x, axis=0, initial=np.float32(2)),
        np.asarray(ref.reduce(x, axis=0, initial=np.float32(2)), np.float32),
        name="reduce initial",
    )
    if axis is not None:
        _check(uf.accumulate(x, axis), ref.accumulate(x, axis).astype(np.float32), name="acc")
    _check(uf.outer(x[0], x[1]), ref.outer(x[0], x[1]).astype(np.float32), name="outer")
    assert float(uf.reduce(np.zeros(0, np.float32))) == 0.0


def test_frompyfunc_of_several_outputs_and_unsupported_overrides():
    split = jnp.frompyfunc(lambda v: (v, 2 * v), 1, 2)
    first, second = split(np.arange(3, dtype=np.int32))
    assert isinstance(first, type(jnp.zeros(1)))
    np.testing.assert_array_equal(np.asarray(second), [0, 2, 4])
    # Custom implementations replace the generic methods (JAX's keyword calls).
    seen = []
    custom = jnp.ufunc(
        _clipped_difference,
        2,
        1,
        reduce=lambda a, **kw: seen.append(("reduce", sorted(kw))) or 1,
        accumulate=lambda a, **kw: seen.append(("accumulate", sorted(kw))) or 2,
        at=lambda a, i, *b: seen.append(("at", len(b))) or 3,
        reduceat=lambda a, i, **kw: seen.append(("reduceat", sorted(kw))) or 4,
    )
    x = np.ones(3)
    assert custom.reduce(x) == 1 and custom.accumulate(x) == 2
    assert custom.at(x, 0, 1.0, inplace=False) == 3 and custom.reduceat(x, [0]) == 4
    assert seen == [
        ("reduce", ["axis", "dtype", "initial", "keepdims", "where"]),
        ("accumulate", ["axis", "dtype"]),
        ("at", 1),
        ("reduceat", ["axis", "dtype"]),
    ]
    with pytest.raises(ValueError, match="does not have an identity"):
        custom.reduce(x, where=np.ones(3, bool))


def test_numpy_types_and_iterable_reexported():
    assert jnp.object_ is np.object_ and jnp.character is np.character
    assert jnp.flexible is np.flexible and jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.iterable(jnp.ones(3)) and jnp.iterable([1]) and not jnp.iterable(jnp.ones(()))


def test_ufunc_at_accumulates_repeated_indices():
    x = jnp.zeros(4, jnp.float32)
    idx = np.array([0, 0, 2])
    expected = np.zeros(4, np.float32)
    np.add.at(expected, idx, 1.5)
    np.testing.assert_array_equal(np.asarray(jnp.add.at(x, idx, 1.5, inplace=False)), expected)


def test_ufunc_at_of_any_ufunc_visits_indices_in_order():
    # JAX 0.10.2's answers: repeated indices see the previous application.
    twice_plus = jnp.frompyfunc(lambda a, b: a * 2 + b, 2, 1)
    got = twice_plus.at(jnp.ones(4), np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), inplace=False)
    np.testing.assert_array_equal(np.asarray(got), [8.0, 1.0, 5.0, 1.0])
    twice = jnp.negative.at(jnp.arange(4.0), np.array([1, 1]), inplace=False)
    np.testing.assert_array_equal(np.asarray(twice), [0.0, 1.0, 2.0, 3.0])
    once = jnp.negative.at(jnp.arange(4.0), 2, inplace=False)
    np.testing.assert_array_equal(np.asarray(once), [0.0, 1.0, -2.0, 3.0])
    # A built-in ufunc without a scatter (logaddexp) takes the loop too; 2-d indices.
    where = (np.array([0, 0, 1]), np.array([1, 1, 2]))
    expected = np.zeros((2, 3), np.float32)
    np.logaddexp.at(expected, where, 1.0)
    got = jnp.logaddexp.at(jnp.zeros((2, 3)), where, 1.0, inplace=False)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_ufunc_reduceat_matches_numpy():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 2, 1, 3])  # a decreasing pair gives the element itself
    got = jit(lambda a, i: jnp.add.reduceat(a, i, axis=1))(x, idx)
    np.testing.assert_array_equal(np.asarray(got), np.add.reduceat(x, idx, axis=1))
    ints = np.arange(1, 9, dtype=np.int32)
    got = jnp.multiply.reduceat(ints, np.array([0, 2, 5]))
    np.testing.assert_array_equal(np.asarray(got), [2, 60, 336])  # JAX 0.10.2's
    assert got.dtype == np.int32
    with pytest.raises(ValueError, match="indices must be one-dimensional"):
        jnp.add.reduceat(x, np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match="single integer axis"):
        jnp.add.reduceat(x, idx, axis=None)
    with pytest.raises(ValueError, match="only supported for binary ufuncs"):
        jnp.negative.reduceat(x, idx)


def test_derivatives_follow_jax():
    from modjax.autodiff import grad

    cases = [
        (lambda x: jnp.logaddexp(x, 0.0), 0.0, 0.5),  # a tie splits the derivative
        (lambda x: jnp.logaddexp2(x, 2.0), 1.0, 1 / 3),
        (lambda x: jnp.hypot(x, 4.0), 3.0, 0.6),
        (jnp.sinc, 0.0, 0.0),
        (jnp.i0, 0.0, 0.0),
        (jnp.i0, 1.0, 0.5651591),
        (lambda x: jnp.copysign(x, -1.0), 2.0, -1.0),
        (jnp.deg2rad, 1.0, math.pi / 180),
        (lambda x: jnp.ldexp(x, 3), 2.0, 8.0),  # custom rules: the bit tricks are not smooth
        (lambda x: jnp.frexp(x)[0], 3.0, 0.25),
        (lambda x: jnp.float_power(x, 3.0), 2.0, 12.0),
        (jnp.log2, 3.5, 1 / (3.5 * math.log(2))),
    ]
    for fn, x, expected in cases:
        got = float(grad(fn)(np.float32(x)))
        assert math.isclose(got, expected, rel_tol=2e-6, abs_tol=1e-7), (fn, x, got)
    assert float(jit(grad(lambda x: jnp.ldexp(x, -2)))(np.float32(1.0))) == 0.25


def test_integers_become_float32_under_x64_unless_64_bit():
    # Recorded from JAX 0.10.2 with x64: its int-to-float table sends every integer
    # narrower than 64 bits (and bool) to float32, not to the default float64.
    from modjax.tracecore.config import enable_x64

    with enable_x64(True):
        for dtype, want in [
            (np.bool_, np.float32),
            (np.int8, np.float32),
            (np.uint16, np.float32),
            (np.int32, np.float32),
            (np.uint32, np.float32),
            (np.int64, np.float64),
            (np.uint64, np.float64),
        ]:
            x = jnp.ones(2, dtype)
            got = [jnp.sin(x), jnp.mean(x), jnp.true_divide(x, x), jnp.sqrt(x)]
            got.append(jnp.linalg.norm(x))
            assert [r.dtype for r in got] == [want] * 5, dtype
        # bool / weak int promotes to a weak int64 first, so float64, as JAX
        assert (jnp.ones(2, bool) / 2).dtype == np.float64
        assert jnp.histogram_bin_edges(jnp.arange(4, dtype=np.int32)).dtype == np.float32
        assert (jnp.sin(1).dtype, jnp.sin(1).weak_type) == (np.float64, True)
        i32 = jnp.arange(4, dtype=np.int32)
        assert jnp.median(i32).dtype == jnp.quantile(i32, np.float64(0.5)).dtype == np.float32
        assert jnp.trapezoid(i32).dtype == jnp.trapezoid(i32, dx=0.5).dtype == np.float32
        assert jnp.trapezoid(i32, dx=np.float64(2)).dtype == np.float64
        # rint is the exception: integers become the default float dtype.
        assert (jnp.rint(i32).dtype, jnp.rint(i32).weak_type) == (np.float64, False)
        assert float(jnp.rint(np.array([2**40 + 1]))[0]) == 2**40 + 1


def test_logaddexp_gradients_are_jax_bits():
    # JAX 0.10.2's gradients, bit for bit (its rule: exp(x - out), only +inf read as 0).
    from modjax import nn
    from modjax.autodiff import grad

    x = np.array([np.inf, -np.inf, 1.0, np.nan, 0.3, -2.5, 40.0], np.float32)
    y = np.array([np.inf, -np.inf, 1.0, 2.0, -1.7, 3.25, 0.0], np.float32)
    gx, gy = grad(lambda a, b: jnp.sum(jnp.logaddexp(a, b)), argnums=(0, 1))(x, y)
    nan = float("nan")
    want_x = ["0x1p+0", nan, "0x1p-1", nan, "0x1.c2f7d6p-1", "0x1.9fd994p-9", "0x1p+0"]
    want_y = ["0x1p+0", nan, "0x1p-1", nan, "0x1.e8415p-4", "0x1.fe602ap-1", "0x1.397924p-58"]
    want_softplus = ["0x1p+0", "0x0p+0", "0x1.764d4ep-1", nan, "0x1.261d54p-1", "0x1.36b70ep-4"]
    softplus = grad(lambda a: jnp.sum(nn.softplus(a)))(x)
    for got, want in [(gx, want_x), (gy, want_y), (softplus[:6], want_softplus)]:
        expected = np.array([w if w != w else float.fromhex(w) for w in want], np.float32)
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_complex_logaddexp_is_jax_bits():
    # JAX 0.10.2's answers, bit for bit: the lexicographic larger value, the imaginary
    # part wrapped into [-pi, pi) (logaddexp2: [-pi/ln2, pi/ln2)), NaN from any infinity.
    x = np.array([-1 + 2.5j, 3 + 3.1j, 1 + 3j, np.inf + 0j, 2 - 3j], np.complex64)
    y = np.array([-1 - 2.5j, 3 - 3.1j, 2 + 3j, 1 + 0j, 1 - 2.9j], np.complex64)
    nan = ("nan", "nan")
    want = {
        jnp.logaddexp: [
            ("-0x1.0ea072p-1", "-0x1.921fb6p+1"),
            ("0x1.d89cb2p+1", "-0x1.921fb6p+1"),
            ("0x1.2818f6p+1", "0x1.800002p+1"),
            nan,
            ("0x1.27f8bep+1", "-0x1.7c8f3ap+1"),
        ],
        jnp.logaddexp2: [
            ("-0x1.50d8dcp+1", "-0x1.22123p+2"),
            ("0x1.905c08p+1", "-0x1.22123p+2"),
            ("0x1.4ae00cp+1", "0x1.8p+1"),
            nan,
            ("0x1.4ac6d0p+1", "-0x1.7bbbeep+1"),
        ],
    }
    for fn, parts in want.items():
        expected = np.array(
            [complex(*(float(p) if p == "nan" else float.fromhex(p) for p in z)) for z in parts],
            np.complex64,
        )
        np.testing.assert_array_equal(np.asarray(fn(x, y)), expected)
