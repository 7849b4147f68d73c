"""Elementwise functions of modjax.numpy, with JAX's type promotion and broadcasting.

Most are one line on top of a lax primitive, made by the small factories
below; those whose numpy semantics differ from lax's (``floor_divide``,
``remainder``, ``power`` of integers, ``right_shift``, ``frexp``, ``gcd``, ...)
are written out. The fourteen functions that are ``jnp.ufunc`` objects in JAX
(``add``, ``multiply``, ``maximum``, ``logaddexp``, ...) are instances of
:class:`ufunc` (``_ufunc.py``); the factories are in ``_ufunc_factories.py``.

Special values follow JAX (and the Array API where JAX does): NaNs propagate,
signed zeros keep their sign where the operation defines it, and functions
refuse the dtypes JAX refuses with the same exception types.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from modjax import lax
from modjax.autodiff import custom_jvp
from modjax.lax._common import kind, python_scalar_as
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import Tracer, dtypes

from ._eager_jit import compiled_on_values
from ._ufunc import _make_ufunc, frompyfunc, ufunc
from ._ufunc_factories import (
    _as_array,
    _as_bool,
    _binary,
    _binary_inexact,
    _binary_int,
    _bool_as_int,
    _check_example_shapes,
    _const,
    _const_full_like,
    _dtype,
    _full_like,
    _scale_const,
    _strong,
    _unary,
    _unary_inexact,
    _where,
    _zero,
)
from ._util import (
    aval,
    broadcast_all,
    broadcast_shapes,
    broadcast_to,
    check_arraylike,
    promote_args,
    promote_args_inexact,
    promote_shapes,
    result_type,
)

__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_count",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "divide",
    "divmod",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "float_power",
    "floor",
    "floor_divide",
    "frompyfunc",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "gcd",
    "greater",
    "greater_equal",
    "heaviside",
    "hypot",
    "i0",
    "imag",
    "invert",
    "iscomplex",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "isreal",
    "lcm",
    "ldexp",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "modf",
    "multiply",
    "nan_to_num",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "power",
    "rad2deg",
    "radians",
    "real",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "spacing",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "ufunc",
]

# --- unary ---------------------------------------------------------------------------------------

sin = _unary_inexact(lax.sin, "sin", "Compute the sine")
cos = _unary_inexact(lax.cos, "cos", "Compute the cosine")
tan = _unary_inexact(lax.tan, "tan", "Compute the tangent")
arcsin = _unary_inexact(lax.asin, "arcsin", "Compute the inverse sine")
arccos = _unary_inexact(lax.acos, "arccos", "Compute the inverse cosine")
arctan = _unary_inexact(lax.atan, "arctan", "Compute the inverse tangent")
sinh = _unary_inexact(lax.sinh, "sinh", "Compute the hyperbolic sine")
cosh = _unary_inexact(lax.cosh, "cosh", "Compute the hyperbolic cosine")
tanh = _unary_inexact(lax.tanh, "tanh", "Compute the hyperbolic tangent")
arcsinh = _unary_inexact(lax.asinh, "arcsinh", "Compute the inverse hyperbolic sine")
arccosh = _unary_inexact(lax.acosh, "arccosh", "Compute the inverse hyperbolic cosine")
arctanh = _unary_inexact(lax.atanh, "arctanh", "Compute the inverse hyperbolic tangent")
asin = _unary_inexact(lax.asin, "asin", "Compute the inverse sine (the Array API name)")
acos = _unary_inexact(lax.acos, "acos", "Compute the inverse cosine (the Array API name)")
atan = _unary_inexact(lax.atan, "atan", "Compute the inverse tangent (the Array API name)")
asinh = _unary_inexact(lax.asinh, "asinh", "Compute the inverse hyperbolic sine (Array API)")
acosh = _unary_inexact(lax.acosh, "acosh", "Compute the inverse hyperbolic cosine (Array API)")
atanh = _unary_inexact(lax.atanh, "atanh", "Compute the inverse hyperbolic tangent (Array API)")
exp = _unary_inexact(lax.exp, "exp", "Compute e to the power x")
exp2 = _unary_inexact(lax.exp2, "exp2", "Compute 2 to the power x")
expm1 = _unary_inexact(lax.expm1, "expm1", "Compute exp(x) - 1")
log = _unary_inexact(lax.log, "log", "Compute the natural logarithm")
log1p = _unary_inexact(lax.log1p, "log1p", "Compute log(1 + x)")
sqrt = _unary_inexact(lax.sqrt, "sqrt", "Compute the square root")
cbrt = _unary_inexact(lax.cbrt, "cbrt", "Compute the cube root")

sign = _unary(lax.sign, "sign", "Return the sign (-1, 0 or 1; x / |x| for complex)")


def _negative(x, /):
    """Negate ``x`` elementwise; unsigned integers wrap around (jax.numpy.negative)."""
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def square(x, /):
    """Square ``x`` elementwise; bools compute in the default integer (jax.numpy.square)."""
    (x,) = promote_args("square", x)
    return lax.square(_bool_as_int(x))


def absolute(x, /):
    """Compute the absolute value elementwise; complex gives real (jax.numpy.absolute)."""
    (x,) = promote_args("absolute", x)
    return _as_array(x) if kind(_dtype(x)) in "bu" else lax.abs(x)


abs = absolute  # noqa: A001 - numpy's name


def fabs(x, /):
    """Compute the absolute value in floating point elementwise (jax.numpy.fabs)."""
    (x,) = promote_args_inexact("fabs", x)
    if kind(_dtype(x)) == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(x)


def _log_base(x, base: float):
    dtype = _dtype(x)
    if kind(dtype) == "c":  # divide the parts: a complex division would turn -inf into NaN
        log = lax.log(x)
        part = lax._common.real_dtype(dtype)
        scale = lax.log(python_scalar_as(base, part))
        return lax.complex(lax.div(lax.real(log), scale), lax.div(lax.imag(log), scale))
    return lax.div(lax.log(x), lax.log(python_scalar_as(base, dtype)))


def log2(x, /):
    """Compute the base-2 logarithm elementwise (jax.numpy.log2)."""
    (x,) = promote_args_inexact("log2", x)
    return _log_base(x, 2.0)


# 1 / log(10), rounded once to the dtype: JAX multiplies by it (log2 divides by log(2)).
_ONE_OVER_LOG10 = 0.4342944819032518


def log10(x, /):
    """Compute the base-10 logarithm elementwise (jax.numpy.log10)."""
    (x,) = promote_args_inexact("log10", x)
    dtype = _dtype(x)
    if kind(dtype) == "c":  # scale the parts: a complex product would turn -inf into NaN
        log = lax.log(x)
        scale = np.array(_ONE_OVER_LOG10, lax._common.real_dtype(dtype))
        return lax.complex(lax.mul(lax.real(log), scale), lax.mul(lax.imag(log), scale))
    return lax.mul(lax.log(x), np.array(_ONE_OVER_LOG10, dtype))


def positive(x, /):
    """Return ``x`` unchanged, as an array (jax.numpy.positive)."""
    (x,) = promote_args("positive", x)
    return _as_array(x)


def reciprocal(x, /):
    """Compute ``1 / x`` elementwise (jax.numpy.reciprocal)."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def deg2rad(x, /):
    """Convert angles from degrees to radians elementwise (jax.numpy.deg2rad)."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, _scale_const(x, math.pi / 180))


def rad2deg(x, /):
    """Convert angles from radians to degrees elementwise (jax.numpy.rad2deg)."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, _scale_const(x, 180 / math.pi))


def radians(x, /):
    """Convert angles from degrees to radians elementwise (jax.numpy.radians)."""
    return deg2rad(x)


def degrees(x, /):
    """Convert angles from radians to degrees elementwise (jax.numpy.degrees)."""
    return rad2deg(x)


def _integral_identity(lax_fn, name: str, what: str):
    def fn(x, /):
        (x,) = promote_args(name, x)
        return _as_array(x) if kind(_dtype(x)) in "biu" else lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise; integers are returned unchanged (jax.numpy.{name})."
    return fn


floor = _integral_identity(lax.floor, "floor", "Round down to an integral value")
ceil = _integral_identity(lax.ceil, "ceil", "Round up to an integral value")


def _trunc(x):
    if kind(_dtype(x)) == "c":
        raise TypeError(f"trunc does not accept dtype {_dtype(x)}")
    return _where(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))


def trunc(x):
    """Round toward zero elementwise; integers are returned unchanged (jax.numpy.trunc)."""
    (x,) = promote_args("trunc", x)
    return _as_array(x) if kind(_dtype(x)) in "biu" else _trunc(x)


def _round_even(x):
    if kind(_dtype(x)) == "c":
        return lax.complex(_round_even(lax.real(x)), _round_even(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def rint(x, /):
    """Round to the nearest integer, ties to even (jax.numpy.rint).

    Integers and bools become the default float dtype (float64 under x64), strongly
    typed, as JAX's.
    """
    (x_inexact,) = promote_args_inexact("rint", x)  # checks x is array-like
    if kind(result_type(x)[0]) in "biu":
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    x = x_inexact
    return _round_even(x)


def round(a, decimals: int = 0, out=None):  # noqa: A001 - numpy's name
    """Round to ``decimals`` decimal places, ties to even (jax.numpy.round).

    Complex values round their real and imaginary parts; integers with
    ``decimals >= 0`` are returned unchanged.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    (a,) = promote_args("round", a)
    decimals = operator.index(decimals)
    dtype = _dtype(a)
    if dtype == np.bool_:
        raise ValueError(f"data type {np.bool_} not inexact")
    if kind(dtype) in "iu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return _as_array(a)
    if decimals == 0:
        return _round_even(a)

    def part(x):
        factor = _scale_const(x, 10.0**decimals)
        return lax.div(_round_even(lax.mul(x, factor)), factor)

    if kind(dtype) == "c":
        return lax.complex(part(lax.real(a)), part(lax.imag(a)))
    return part(a)


around = round


def isfinite(x, /):
    """Tell elementwise whether ``x`` is finite; complex needs both parts (jax.numpy.isfinite)."""
    (x,) = promote_args("isfinite", x)
    k = kind(_dtype(x))
    if k == "f":
        return lax.is_finite(x)
    if k == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return _full_like(x, True, np.bool_)


def isnan(x, /):
    """Tell elementwise whether ``x`` is NaN; complex if either part is (jax.numpy.isnan)."""
    (x,) = promote_args("isnan", x)
    return lax.ne(x, x)  # for integers too, as JAX's (a weakly typed x gives a weak bool)


def isinf(x, /):
    """Tell elementwise whether ``x`` is +inf or -inf; complex if a part is (jax.numpy.isinf)."""
    (x,) = promote_args("isinf", x)
    dtype = _dtype(x)
    if kind(dtype) in "biu":
        return _full_like(x, False, np.bool_)
    if kind(dtype) == "c":
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), python_scalar_as(math.inf, dtype))


def _isinf_signed(name: str, value: float):
    def fn(x, /, out=None):
        if out is not None:
            raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
        (x,) = promote_args(name, x)
        dtype = _dtype(x)
        if kind(dtype) == "c":
            raise ValueError("isposinf/isneginf are not well defined for complex types")
        if kind(dtype) in "biu":
            return _full_like(x, False, np.bool_)
        return lax.eq(x, python_scalar_as(value, dtype))

    fn.__name__ = fn.__qualname__ = name
    sign_name = "positive" if value > 0 else "negative"
    fn.__doc__ = f"Tell elementwise whether ``x`` is {sign_name} infinity (jax.numpy.{name})."
    return fn


isposinf = _isinf_signed("isposinf", math.inf)
isneginf = _isinf_signed("isneginf", -math.inf)


def signbit(x, /):
    """Tell elementwise whether the sign bit of ``x`` is set (jax.numpy.signbit).

    True for negative numbers, -0.0 and NaNs with the sign bit set; False for
    unsigned integers and bools. Complex inputs raise ValueError.
    """
    (x,) = promote_args("signbit", x)
    dtype = _dtype(x)
    k = kind(dtype)
    if k == "c":
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    if k in "bu":
        return _full_like(x, False, np.bool_)
    if k == "i":
        return lax.lt(x, _zero(x))
    signed = np.dtype(f"int{dtypes.itemsize_bits(dtype)}")
    return lax.lt(lax.bitcast_convert_type(x, signed), np.zeros((), signed))


def logical_not(x, /):
    """Compute logical NOT elementwise (jax.numpy.logical_not)."""
    (x,) = promote_args("logical_not", x)
    return lax.bitwise_not(_as_bool(x, "logical_not"))


def invert(x, /):
    """Compute bitwise NOT (logical for bool) elementwise (jax.numpy.invert)."""
    (x,) = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = invert
bitwise_invert = invert


def bitwise_count(x, /):
    """Count the set bits of ``|x|`` elementwise, as uint8 (jax.numpy.bitwise_count)."""
    (x,) = promote_args("bitwise_count", x)
    if kind(_dtype(x)) == "b":
        return _convert_element_type(x, np.uint8)
    if kind(_dtype(x)) == "i":
        x = lax.abs(x)
    return _convert_element_type(lax.population_count(x), np.uint8)


# --- complex parts -----------------------------------------------------------------------------


def real(val, /):
    """Return the real part of ``val``; a real ``val`` is returned as it is (jax.numpy.real)."""
    (x,) = promote_args("real", val)
    return lax.real(x) if kind(_dtype(x)) == "c" else _as_array(x)


def imag(val, /):
    """Return the imaginary part of ``val``; zeros of its dtype if real (jax.numpy.imag)."""
    (x,) = promote_args("imag", val)
    return lax.imag(x) if kind(_dtype(x)) == "c" else _full_like(_as_array(x), 0)


def conjugate(x, /):
    """Return the complex conjugate; a real ``x`` is returned as it is (jax.numpy.conjugate)."""
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if kind(_dtype(x)) == "c" else _as_array(x)


def conj(x, /):
    """Return the complex conjugate; a real ``x`` is returned as it is (jax.numpy.conj)."""
    return conjugate(x)


def angle(z, deg: bool = False):
    """Return the angle of complex ``z`` in radians, or degrees with ``deg`` (jax.numpy.angle).

    Types follow JAX's: a real ``z`` of one or more dimensions keeps its dtype and weak
    type (its imaginary part is zeros like it); integers, bools and 0-d reals are taken
    in the default float type, strongly typed.
    """
    (z,) = promote_args("angle", z)
    z = _as_array(z)
    if kind(_dtype(z)) == "c":
        re, im = lax.real(z), lax.imag(z)
    else:
        re, im = z, _full_like(z, 0)
    if kind(_dtype(re)) != "f" or (kind(_dtype(z)) == "f" and not aval(z).shape):
        float_dtype = dtypes.default_float_dtype()
        re, im = (_convert_element_type(v, float_dtype, weak_type=False) for v in (re, im))
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


def isreal(x):
    """Tell elementwise whether the imaginary part of ``x`` is zero (jax.numpy.isreal)."""
    (x,) = promote_args("isreal", x)
    if kind(_dtype(x)) != "c":
        return _full_like(_as_array(x), True, np.bool_)
    return lax.eq(lax.imag(x), np.zeros((), lax._common.real_dtype(_dtype(x))))


def iscomplex(x):
    """Tell elementwise whether the imaginary part of ``x`` is nonzero (jax.numpy.iscomplex)."""
    return logical_not(isreal(x))


# --- more unary functions --------------------------------------------------------------------


def sinc(x, /):
    """Compute ``sin(pi x) / (pi x)``, with ``sinc(0) = 1`` (jax.numpy.sinc)."""
    (x,) = promote_args_inexact("sinc", x)
    x = _as_array(x)
    is_zero = lax.eq(x, _zero(x))
    pi_x = lax.mul(x, _scale_const(x, math.pi))
    safe = _where(is_zero, _full_like(x, 1), pi_x)
    return _where(is_zero, _full_like(x, 1), lax.div(lax.sin(safe), safe))


def i0(x):
    """Compute the modified Bessel function of the first kind, order 0 (jax.numpy.i0)."""
    (x,) = promote_args_inexact("i0", x)
    if kind(_dtype(x)) == "c":
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {_dtype(x)}")
    # exp(|x|) as exp(max(x, -x)): the derivative at 0 is 0, as i0's is
    return lax.mul(lax.exp(lax.max(x, lax.neg(x))), lax.bessel_i0e(x))


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (jax.numpy.nan_to_num).

    The defaults for infinities are the dtype's largest and smallest finite
    values; complex values are handled part by part; integers pass through.
    """
    del copy
    (x,) = promote_args("nan_to_num", x)
    x = _as_array(x)
    dtype = _dtype(x)
    if kind(dtype) in "biu":
        return x
    if kind(dtype) == "c":
        re = nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return _strong(lax.complex(re, im))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _where(lax.ne(x, x), _full_like(x, nan), x)
    out = _where(lax.eq(x, python_scalar_as(math.inf, dtype)), _full_like(x, posinf), out)
    out = _where(lax.eq(x, python_scalar_as(-math.inf, dtype)), _full_like(x, neginf), out)
    return _strong(out)


def spacing(x, /):
    """Return the distance to the next float away from zero, signed as ``x`` (jax.numpy.spacing).

    ``spacing(0)`` is the smallest positive subnormal; infinities and NaN give NaN.
    """
    (x,) = promote_args_inexact("spacing", x)
    if kind(_dtype(x)) == "c":
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    x = _as_array(x)
    away = _where(lax.lt(x, _zero(x)), _full_like(x, -math.inf), _full_like(x, math.inf))
    out = lax.sub(lax.nextafter(x, away), x)
    # below the normal range the difference is subnormal, which XLA's CPU arithmetic
    # flushes to zero: the answer there is the smallest subnormal, signed as ``x``
    info = dtypes.finfo(_dtype(x))
    tiny = lax.lt(lax.abs(x), python_scalar_as(float(info.smallest_normal), _dtype(x)))
    least = python_scalar_as(float(info.smallest_subnormal), _dtype(x))
    least = _where(lax.lt(x, _zero(x)), _full_like(x, -float(least)), _full_like(x, float(least)))
    out = _where(tiny, least, out)
    return _strong(_where(isinf(x), _full_like(x, math.nan), out))


def _float_work_dtype(dtype):
    """The float type frexp/ldexp compute in: float32 for the narrow floats."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _float_layout(work):
    info = dtypes.finfo(work)
    bits = dtypes.itemsize_bits(work)
    return bits, int(info.nmant), int(info.maxexp) - 1, np.dtype(f"int{bits}")


def _frexp_parts(x):
    """Mantissa in [0.5, 1) and exponent of a float32/float64 ``x``, by integer bit operations.

    Subnormals are normalized exactly; zeros, infinities and NaN give ``(x, 0)``.
    """
    bits, nmant, bias, int_t = _float_layout(_dtype(x))

    def c(v):
        return np.asarray(v, int_t)[()]

    raw = lax.bitcast_convert_type(x, int_t)
    sign = lax.bitwise_and(raw, c(np.iinfo(int_t).min))
    mag = lax.bitwise_and(raw, c(np.iinfo(int_t).max))
    field = lax.shift_right_logical(mag, c(nmant))
    mant = lax.bitwise_and(mag, c((1 << nmant) - 1))
    special = lax.bitwise_or(
        lax.eq(mag, c(0)), lax.eq(field, c((1 << (bits - 1 - nmant)) - 1))
    )  # zero, inf, nan
    subnormal = lax.bitwise_and(lax.eq(field, c(0)), lax.ne(mant, c(0)))
    lz = lax.sub(lax.clz(mant), c(bits - nmant))  # leading zeros inside the mantissa field
    sub_mant = lax.bitwise_and(lax.shift_left(mant, lax.add(lz, c(1))), c((1 << nmant) - 1))
    exponent = _where(subnormal, lax.sub(c(1 - bias), lz), lax.sub(field, c(bias - 1)))
    mant = _where(subnormal, sub_mant, mant)
    m_bits = lax.bitwise_or(lax.bitwise_or(sign, c((bias - 1) << nmant)), mant)
    m = _where(special, x, lax.bitcast_convert_type(m_bits, _dtype(x)))
    exponent = _where(special, _full_like(exponent, 0), exponent)
    return m, _convert_element_type(exponent, np.int32)


def frexp(x, /):
    """Split ``x`` into a mantissa in [0.5, 1) and an int32 exponent (jax.numpy.frexp)."""
    (x,) = promote_args_inexact("frexp", x)
    dtype = _dtype(x)
    if kind(dtype) == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(_as_array(x))


@custom_jvp
def _frexp(x):
    """(mantissa, exponent) on the bits; the mantissa's derivative is ``2**-exponent``."""
    m, e = _frexp_parts(_convert_element_type(x, _float_work_dtype(_dtype(x))))
    return _convert_element_type(m, _dtype(x)), e


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    scale = _ldexp(_full_like(x, 1), lax.neg(e))  # 2**-e
    return (m, e), (lax.mul(t, scale), np.zeros(aval(e).shape, dtypes.float0))


def modf(x, /, out=None):
    """Split ``x`` into fractional and integral parts, both signed as ``x`` (jax.numpy.modf).

    Infinities give a zero fractional part (numpy's definition; JAX 0.10 gives NaN).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = promote_args_inexact("modf", x)
    if kind(_dtype(x)) == "c":
        raise TypeError("modf does not support complex-valued inputs")
    x = _as_array(x)
    whole = _trunc(x)
    frac = lax.sub(x, whole)
    frac = _where(isinf(x), _full_like(x, 0), frac)
    return copysign(frac, x), whole


# --- binary ------------------------------------------------------------------------------------


def _add(x, y):
    return lax.bitwise_or(x, y) if _dtype(x) == np.bool_ else lax.add(x, y)


def _mul(x, y):
    return lax.bitwise_and(x, y) if _dtype(x) == np.bool_ else lax.mul(x, y)


add = _make_ufunc(_binary(_add, "add", "Add the arguments"), "add", 2, identity=0)
subtract = _make_ufunc(
    _binary(lax.sub, "subtract", "Subtract the second argument from the first"), "subtract", 2
)
multiply = _make_ufunc(
    _binary(_mul, "multiply", "Multiply the arguments"), "multiply", 2, identity=1
)
negative = _make_ufunc(_negative, "negative", 1)
divide = _binary_inexact(lax.div, "divide", "Divide the first argument by the second")
true_divide = divide
maximum = _make_ufunc(
    _binary(lax.max, "maximum", "Take the maximum of the arguments (NaN propagates)"), "maximum", 2
)
minimum = _make_ufunc(
    _binary(lax.min, "minimum", "Take the minimum of the arguments (NaN propagates)"), "minimum", 2
)
equal = _binary(lax.eq, "equal", "Compare x1 == x2")
not_equal = _binary(lax.ne, "not_equal", "Compare x1 != x2")


def _ordered(compare):
    """An order comparison; complex values compare lexicographically, (real, imag)."""

    def fn(x, y):
        if kind(_dtype(x)) != "c":
            return compare(x, y)
        x, y = broadcast_all(x, y)
        rx, ry = lax.real(x), lax.real(y)
        strict = lax.lt if compare in (lax.lt, lax.le) else lax.gt
        return _where(lax.eq(rx, ry), compare(lax.imag(x), lax.imag(y)), strict(rx, ry))

    return fn


less = _binary(_ordered(lax.lt), "less", "Compare x1 < x2")
less_equal = _binary(_ordered(lax.le), "less_equal", "Compare x1 <= x2")
greater = _binary(_ordered(lax.gt), "greater", "Compare x1 > x2")
greater_equal = _binary(_ordered(lax.ge), "greater_equal", "Compare x1 >= x2")
bitwise_and = _make_ufunc(
    _binary(lax.bitwise_and, "bitwise_and", "Compute bitwise AND"), "bitwise_and", 2, identity=-1
)
bitwise_or = _make_ufunc(
    _binary(lax.bitwise_or, "bitwise_or", "Compute bitwise OR"), "bitwise_or", 2, identity=0
)
bitwise_xor = _make_ufunc(
    _binary(lax.bitwise_xor, "bitwise_xor", "Compute bitwise XOR"), "bitwise_xor", 2, identity=0
)
left_shift = _binary_int(lax.shift_left, "left_shift", "Shift the bits of x1 left by x2")
bitwise_left_shift = _binary_int(
    lax.shift_left, "bitwise_left_shift", "Shift the bits of x1 left by x2 (the Array API name)"
)
arctan2 = _binary_inexact(lax.atan2, "arctan2", "Compute the angle of the point (x2, x1)")
atan2 = _binary_inexact(lax.atan2, "atan2", "Compute the angle of the point (x2, x1) (Array API)")
nextafter = _binary_inexact(lax.nextafter, "nextafter", "Return the next float after x1 toward x2")


def fmod(x1, x2, /):
    """Compute the remainder with the sign of the dividend, as C's fmod (jax.numpy.fmod).

    Integer ``x % 0`` is 0 and a float ``x % 0`` is NaN, as in numpy.
    """
    x1, x2 = promote_args("fmod", x1, x2)
    x1, x2 = _bool_as_int(x1), _bool_as_int(x2)
    k = kind(_dtype(x1))
    if k == "c":
        raise TypeError("fmod does not support complex-valued inputs")
    if k in "iu":
        x1, x2 = broadcast_all(x1, x2)
        zero = _zero(x2)
        safe = _where(lax.eq(x2, zero), _full_like(x2, 1), x2)
        return _where(lax.eq(x2, zero), _full_like(x1, 0), lax.rem(x1, safe))
    return lax.rem(x1, x2)


def _shift_right(x1, x2):
    if kind(_dtype(x1)) == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


def right_shift(x1, x2, /):
    """Shift the bits of ``x1`` right by ``x2`` (jax.numpy.right_shift).

    The shift is arithmetic for signed and logical for unsigned integers.
    """
    x1, x2 = promote_args("right_shift", x1, x2)
    return _shift_right(_bool_as_int(x1), _bool_as_int(x2))


def bitwise_right_shift(x1, x2, /):
    """Shift the bits of ``x1`` right by ``x2`` (jax.numpy.bitwise_right_shift).

    The Array API name of ``right_shift``.
    """
    x1, x2 = promote_args("bitwise_right_shift", x1, x2)
    return _shift_right(_bool_as_int(x1), _bool_as_int(x2))


def _logical(lax_fn, name: str, what: str):
    def fn(x1, x2, /):
        # As JAX: promote first, so the result is weak iff the common type is a weak
        # number (two bools, weak or not, promote to a strong bool).
        x1, x2 = promote_args(name, x1, x2)
        return lax_fn(_as_bool(x1, name), _as_bool(x2, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise, on the truth values of the arguments (jax.numpy.{name})."
    return fn


logical_and = _make_ufunc(
    _logical(lax.bitwise_and, "logical_and", "Compute logical AND"), "logical_and", 2, True
)
logical_or = _make_ufunc(
    _logical(lax.bitwise_or, "logical_or", "Compute logical OR"), "logical_or", 2, False
)
logical_xor = _make_ufunc(
    _logical(lax.bitwise_xor, "logical_xor", "Compute logical XOR"), "logical_xor", 2, False
)


def floor_divide(x1, x2, /):
    """Divide and round down to an integral value, as numpy's ``//`` (jax.numpy.floor_divide).

    Integer division by zero follows JAX (it is not an error); two bools
    divide in the default integer type.
    """
    x1, x2 = promote_args("floor_divide", x1, x2)
    x1, x2 = broadcast_all(_bool_as_int(x1), _bool_as_int(x2))
    dtype = _dtype(x1)
    k = kind(dtype)
    if k == "u":
        return lax.div(x1, x2)
    if k == "i":
        quotient = lax.div(x1, x2)
        fix = lax.bitwise_and(
            lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), _zero(x1))
        )
        return lax.select_n(fix, quotient, lax.sub(quotient, _const(quotient, 1)))
    if k == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """numpy's divmod for floats: a floor quotient and a remainder with the divisor's sign."""
    zero = _zero(x1)
    one = _const(x1, 1)
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(x2, zero), lax.lt(mod, zero)))
    mod = lax.select_n(fix, mod, lax.add(mod, x2))
    div = lax.select_n(fix, div, lax.sub(div, one))
    floor_div = lax.floor(div)
    floor_div = lax.select_n(
        lax.gt(lax.sub(div, floor_div), _const(x1, 0.5)), floor_div, lax.add(floor_div, one)
    )
    # a zero divisor gives numpy's inf/nan quotient: x1 / x2 there
    quotient = lax.select_n(lax.eq(x2, zero), floor_div, lax.div(x1, x2))
    return quotient, mod


def remainder(x1, x2, /):
    """Return the remainder of floor division, with the sign of ``x2`` (jax.numpy.remainder).

    Integer ``x % 0`` is 0, as in numpy and JAX.
    """
    x1, x2 = promote_args("remainder", x1, x2)
    x1, x2 = broadcast_all(_bool_as_int(x1), _bool_as_int(x2))
    dtype = _dtype(x1)
    k = kind(dtype)
    if k in "iu":
        zero = _zero(x1)
        trunc_mod = lax.rem(x1, x2)
        if k == "i":
            fix = lax.bitwise_and(
                lax.ne(trunc_mod, zero), lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero))
            )
            trunc_mod = lax.select_n(fix, trunc_mod, lax.add(trunc_mod, x2))
        return lax.select_n(lax.eq(x2, zero), trunc_mod, lax.full_like(trunc_mod, 0))
    if k == "f":
        return _float_divmod(x1, x2)[1]
    raise TypeError(f"remainder does not support {dtype} inputs")


mod = remainder


def divmod(x1, x2, /):  # noqa: A001 - numpy's name
    """Return ``(floor_divide(x1, x2), remainder(x1, x2))`` (jax.numpy.divmod)."""
    return floor_divide(x1, x2), remainder(x1, x2)


def power(x1, x2, /):
    """Raise ``x1`` to the power ``x2`` elementwise (jax.numpy.power).

    A Python int exponent lowers to repeated multiplication (``integer_pow``),
    as in JAX; integer bases with array exponents use square-and-multiply over
    the exponent's bits (a negative exponent gives 0 unless the base is 1 or -1).
    Bools compute in the default integer type.
    """
    check_arraylike("power", x1, x2)
    exponent = _concrete_integer(x2)
    if exponent is not None:  # the base keeps its own dtype, as in JAX
        (x1,) = promote_args("power", x1)
        return lax.integer_pow(_bool_as_int(x1), exponent)
    d1, d2 = dtypes.dtype(x1, canonicalize=True), dtypes.dtype(x2, canonicalize=True)
    if kind(d1) in "fc" and kind(d2) in "iu":
        # An inexact base and an integer exponent go to lax.pow unpromoted, as JAX's do:
        # the base's dtype, weakly typed only when both operands are.
        ((x1,), (x2,)) = promote_args("power", x1), promote_args("power", x2)
        x1, x2 = promote_shapes("power", x1, x2)
        _check_example_shapes(lax.pow, x1, x2)
        return lax.pow(x1, x2)
    x1, x2 = promote_args("power", x1, x2)
    x1, x2 = _bool_as_int(x1), _bool_as_int(x2)
    k = kind(_dtype(x1))
    if k in "fc":
        _check_example_shapes(lax.pow, x1, x2)
        return lax.pow(x1, x2)
    return _integer_power(x1, x2)


def _concrete_integer(x):
    """Return ``x`` as a Python int when it is a concrete integer scalar, else None.

    JAX's ``power`` takes ``integer_pow`` for such exponents (Python ints and bools,
    numpy integers, concrete 0-d integer arrays), whatever their container.
    """
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
    if x is None:
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _integer_power(base, exponent):
    """``base ** exponent`` for integer arrays, by square-and-multiply over the exponent's bits."""
    dtype = _dtype(base)
    one = np.ones((), dtype)
    shape = broadcast_shapes(aval(base).shape, aval(exponent).shape)
    base = broadcast_to(base, shape)
    exponent = broadcast_to(exponent, shape)
    acc = lax.full(shape, 1, dtype)
    bits, b, e = np.dtype(dtype).itemsize * 8, base, exponent
    for _ in range(bits):  # a negative exponent's bits still give the right sign for base -1
        acc = lax.select_n(lax.ne(lax.bitwise_and(e, one), _zero(e)), acc, lax.mul(acc, b))
        b = lax.mul(b, b)
        e = lax.shift_right_logical(e, one)
    if kind(dtype) == "i":
        unit = lax.bitwise_or(lax.eq(base, one), lax.eq(base, np.asarray(-1, dtype)[()]))
        to_zero = lax.bitwise_and(lax.lt(exponent, _zero(exponent)), lax.bitwise_not(unit))
        acc = lax.select_n(to_zero, acc, lax.full(shape, 0, dtype))
    return acc


pow = power  # noqa: A001 - numpy's name


def float_power(x1, x2, /):
    """Raise ``x1`` to the power ``x2`` in floating point (jax.numpy.float_power)."""
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return lax.pow(x1, x2)


@compiled_on_values  # one program eagerly, as JAX's jitted hypot: 1 + r*r may fuse
def hypot(x1, x2, /):
    """Compute ``sqrt(x1**2 + x2**2)`` elementwise without undue overflow (jax.numpy.hypot).

    An infinite argument gives inf even if the other is NaN (the Array API rule).
    """
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if kind(_dtype(x1)) == "c":
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to real "
            "values first, such as by using abs(x)"
        )
    x1, x2 = broadcast_all(lax.abs(x1), lax.abs(x2))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    safe_big = _where(lax.eq(big, _zero(big)), _full_like(big, 1), big)
    ratio = lax.div(small, safe_big)
    out = lax.mul(big, lax.sqrt(lax.add(_scale_const(big, 1), lax.mul(ratio, ratio))))
    out = _where(lax.eq(big, _zero(big)), big, out)
    inf = python_scalar_as(math.inf, _dtype(big))
    either_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    return _where(either_inf, _full_like(out, math.inf), out)


def copysign(x1, x2, /):
    """Return ``|x1|`` with the sign bit of ``x2``, elementwise (jax.numpy.copysign).

    The sign of a NaN or a zero in ``x2`` counts. Complex inputs raise TypeError.
    """
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if kind(_dtype(x1)) == "c":
        raise TypeError("copysign does not support complex-valued inputs")
    x1, x2 = broadcast_all(x1, x2)
    magnitude = lax.abs(x1)
    if aval(x1).weak_type and not aval(x2).weak_type:  # promotion made both strong
        magnitude = _strong(magnitude)
    return _where(signbit(x2), lax.neg(magnitude), magnitude)


def heaviside(x1, x2, /):
    """Compute the Heaviside step: 0 below zero, 1 above, ``x2`` at zero (jax.numpy.heaviside)."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    if kind(_dtype(x1)) == "c":
        raise TypeError("heaviside does not support complex-valued inputs")
    # JAX's error lists x1's shape twice (its where(x1 > 0, ones_like(x1), x2)).
    shape = broadcast_shapes(aval(x1).shape, aval(x1).shape, aval(x2).shape)
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    zero = _zero(x1)
    step = _where(lax.gt(x1, zero), _const_full_like(x1, 1), x2)
    step = _where(lax.lt(x1, zero), _const_full_like(x1, 0), step)
    return _where(lax.ne(x1, x1), x1, step)  # NaN stays NaN


def _fminmax(name: str, compare):
    def fn(x1, x2):
        x1, x2 = promote_args(name, x1, x2)
        x1, x2 = broadcast_all(x1, x2)
        if kind(_dtype(x1)) in "biu":
            return (lax.max if compare is lax.gt else lax.min)(x1, x2)
        pick_first = lax.bitwise_or(_lexical(compare, x1, x2), isnan(x2))
        return _where(pick_first, x1, x2)

    fn.__name__ = fn.__qualname__ = name
    which = "maximum" if compare is lax.gt else "minimum"
    fn.__doc__ = f"Take the elementwise {which}, ignoring NaNs (jax.numpy.{name})."
    return fn


def _lexical(compare, x1, x2):
    """``compare`` (lax.gt or lax.lt), lexicographic on (real, imag) for complex values."""
    if kind(_dtype(x1)) != "c":
        return compare(x1, x2)
    r1, r2 = lax.real(x1), lax.real(x2)
    return _where(lax.eq(r1, r2), compare(lax.imag(x1), lax.imag(x2)), compare(r1, r2))


fmax = _fminmax("fmax", lax.gt)
fmin = _fminmax("fmin", lax.lt)


def _logaddexp(x1, x2, exp_fn, log1p_fn, period):
    """``log(exp(x1) + exp(x2))`` as ``larger + log1p(exp(smaller - larger))``.

    Ties split the derivative evenly; equal infinities give that infinity and
    NaN propagates (``x1 - x2`` is NaN exactly then). Complex values take JAX's
    form: the lexicographic larger one, and the imaginary part wrapped into
    ``[-period / 2, period / 2)`` (any infinity gives NaN, as JAX's).
    """
    if kind(_dtype(x1)) == "c":
        larger = lax.max(x1, x2)
        delta = lax.sub(lax.add(x1, x2), lax.add(larger, larger))
        out = lax.add(larger, log1p_fn(exp_fn(delta)))
        return lax.complex(lax.real(out), _wrap_into_period(lax.imag(out), period))
    first = lax.ge(x1, x2)
    larger, smaller = _where(first, x1, x2), _where(first, x2, x1)
    stable = lax.add(larger, log1p_fn(exp_fn(lax.sub(smaller, larger))))
    delta = lax.sub(x1, x2)
    return _where(lax.ne(delta, delta), lax.add(x1, x2), stable)


def _wrap_into_period(x, period):
    """``x`` moved by whole periods into ``[-period / 2, period / 2)``."""
    half = _scale_const(x, period / 2)
    rem = lax.rem(lax.add(x, half), _scale_const(x, period))
    rem = _where(lax.lt(rem, _full_like(rem, 0)), lax.add(rem, _scale_const(x, period)), rem)
    return lax.sub(rem, half)


def _logaddexp_e(x1, x2, /):
    """Compute ``log(exp(x1) + exp(x2))`` without overflow (jax.numpy.logaddexp)."""
    x1, x2 = broadcast_all(*promote_args_inexact("logaddexp", x1, x2))
    return _logaddexp_differentiable(x1, x2)


@custom_jvp
def _logaddexp_differentiable(x1, x2):
    """``logaddexp`` with JAX's derivative, so gradients round as JAX's do."""
    return _logaddexp(x1, x2, lax.exp, lax.log1p, 2 * math.pi)


def _plus_inf_as_zero(x):
    # Only +inf (of the real part), as JAX's rule: -inf - -inf stays NaN there too.
    real = lax.real(x) if kind(_dtype(x)) == "c" else x
    return _where(lax.eq(real, python_scalar_as(math.inf, _dtype(real))), _full_like(x, 0), x)


@_logaddexp_differentiable.defjvp
def _logaddexp_jvp(primals, tangents):
    # d/dx1 = exp(x1 - out), +inf read as 0 so that (inf, inf) gives no NaN.
    x1, x2 = primals
    t1, t2 = tangents
    out = _logaddexp_differentiable(x1, x2)
    finite_out = _plus_inf_as_zero(out)
    weight1 = lax.exp(lax.sub(_plus_inf_as_zero(x1), finite_out))
    weight2 = lax.exp(lax.sub(_plus_inf_as_zero(x2), finite_out))
    return out, lax.add(lax.mul(t1, weight1), lax.mul(t2, weight2))


def _logaddexp_2(x1, x2, /):
    """Compute ``log2(2**x1 + 2**x2)`` without overflow (jax.numpy.logaddexp2)."""
    x1, x2 = broadcast_all(*promote_args_inexact("logaddexp2", x1, x2))
    inv_ln2 = _scale_const(x1, 1 / math.log(2))
    return _logaddexp(
        x1, x2, lax.exp2, lambda t: lax.mul(lax.log1p(t), inv_ln2), 2 * math.pi / math.log(2)
    )


# One compiled program eagerly too (as JAX's jitted functions): op by op, the
# multiply-add of logaddexp2 would round differently from its fused jitted form.
_NEG_INF = -math.inf
logaddexp = _make_ufunc(_logaddexp_e, "logaddexp", 2, _NEG_INF, eager=compiled_on_values)
logaddexp2 = _make_ufunc(_logaddexp_2, "logaddexp2", 2, _NEG_INF, eager=compiled_on_values)


def ldexp(x1, x2, /):
    """Compute ``x1 * 2**x2`` exactly, for integer ``x2`` (jax.numpy.ldexp).

    The product is rounded once: overflow gives inf and results below the
    normal range are flushed to zero (as XLA flushes subnormals on CPU).
    """
    check_arraylike("ldexp", x1, x2)
    d1, d2 = result_type(x1)[0], result_type(x2)[0]
    if kind(d2) not in "biu" or kind(d1) == "c":
        raise ValueError(f"ldexp not supported for input types ({d1!r}, {d2!r})")
    (x1,) = promote_args_inexact("ldexp", x1)
    x1, x2 = broadcast_all(_as_array(x1), _convert_element_type(x2, np.int32))
    return _ldexp(x1, x2)


@custom_jvp
def _ldexp(x1, x2):
    """``x1 * 2**x2`` on the bits; its derivative in ``x1`` is ``2**x2``."""
    dtype = _dtype(x1)
    work = _float_work_dtype(dtype)
    x = _convert_element_type(x1, work)
    bits, nmant, bias, int_t = _float_layout(work)
    m, e = _frexp_parts(x)
    limit = np.int32(4 * bias)
    k = lax.add(e, lax.clamp(-limit, x2, limit))
    k = lax.clamp(np.int32(2 * (1 - bias)), k, np.int32(2 * bias))
    half = lax.shift_right_arithmetic(k, np.int32(1))  # floor(k / 2)
    out = lax.mul(lax.mul(m, _pow2(half, work)), _pow2(lax.sub(k, half), work))
    return _convert_element_type(out, dtype)


@_ldexp.defjvp
def _ldexp_jvp(primals, tangents):
    x1, x2 = primals
    scale = _ldexp(_full_like(x1, 1), x2)  # 2**x2: a residual, so the tangent map is linear
    return _ldexp(x1, x2), lax.mul(tangents[0], scale)


def _pow2(k, work):
    """``2**k`` for int32 ``k`` in the normal range of float type ``work``, built from its bits."""
    bits, nmant, bias, int_t = _float_layout(work)
    biased = _convert_element_type(lax.add(k, np.int32(bias)), int_t)
    return lax.bitcast_convert_type(lax.shift_left(biased, np.asarray(nmant, int_t)[()]), work)


def _euclid_steps(dtype) -> int:
    """An upper bound on Euclid's steps for integers of ``dtype`` (Lame's theorem)."""
    return math.ceil(1.4405 * dtypes.itemsize_bits(dtype)) + 2


def _gcd(x1, x2):
    dtype = _dtype(x1)
    if kind(dtype) == "i":
        x1, x2 = lax.abs(x1), lax.abs(x2)
    zero = _zero(x1)
    a, b = x1, x2
    for _ in range(_euclid_steps(dtype)):
        nonzero = lax.ne(b, zero)
        safe_b = _where(nonzero, b, _full_like(b, 1))
        a, b = _where(nonzero, b, a), _where(nonzero, lax.rem(a, safe_b), b)
    return lax.abs(a) if kind(dtype) == "i" else a


def _int_args(name, x1, x2):
    x1, x2 = promote_args(name, x1, x2)
    if kind(_dtype(x1)) not in "iu":
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return broadcast_all(_as_array(x1), _as_array(x2))


def gcd(x1, x2):
    """Return the greatest common divisor of ``|x1|`` and ``|x2|`` (jax.numpy.gcd)."""
    x1, x2 = _int_args("gcd", x1, x2)
    return _gcd(x1, x2)


def lcm(x1, x2):
    """Return the least common multiple of ``|x1|`` and ``|x2|`` (jax.numpy.lcm)."""
    x1, x2 = _int_args("lcm", x1, x2)
    g = _gcd(x1, x2)
    zero = _zero(g)
    safe_g = _where(lax.eq(g, zero), _full_like(g, 1), g)
    if kind(_dtype(x1)) == "i":
        x1, x2 = lax.abs(x1), lax.abs(x2)
    out = lax.mul(lax.div(x1, safe_g), x2)  # wraps on overflow, as numpy's does
    return _where(lax.eq(g, zero), _full_like(out, 0), out)
