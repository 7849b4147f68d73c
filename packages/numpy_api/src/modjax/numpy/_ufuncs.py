"""Elementwise functions of modjax.numpy, with JAX's type promotion and broadcasting.

Most are one line on top of a lax primitive, made by the small factories
below; those whose numpy semantics differ from lax's (``floor_divide``,
``remainder``, ``power`` of integers, ``right_shift``, ...) are written out.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from modjax import lax
from modjax.lax._common import kind

from ._util import (
    ARRAY_TYPES,
    aval,
    broadcast_all,
    broadcast_shapes,
    broadcast_to,
    check_arraylike,
    convert,
    promote_args,
    promote_args_inexact,
    promote_binary,
    promote_shapes,
    result_type,
)

# --- factories ------------------------------------------------------------------------------


def _unary_inexact(lax_fn, name: str, what: str):
    """A unary function that computes in floating point (ints and bools become float)."""

    def fn(x, /):
        if isinstance(x, ARRAY_TYPES) and kind(x.dtype) in "fc":
            return lax_fn(x)
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise (jax.numpy.{name})."
    return fn


def _unary(lax_fn, name: str, what: str):
    """A unary function that keeps the dtype of its argument."""

    def fn(x, /):
        (x,) = promote_args(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise (jax.numpy.{name})."
    return fn


def _binary(lax_fn, name: str, what: str):
    """A binary function: promote dtypes, broadcast, apply the lax op."""

    def fn(x1, x2, /):
        return lax_fn(*promote_binary(name, x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{what} elementwise, with JAX's type promotion and broadcasting (jax.numpy.{name})."
    )
    return fn


def _binary_inexact(lax_fn, name: str, what: str):
    def fn(x1, x2, /):
        return lax_fn(*promote_args_inexact(name, x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise, computing in floating point (jax.numpy.{name})."
    return fn


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
exp = _unary_inexact(lax.exp, "exp", "Compute e to the power x")
exp2 = _unary_inexact(lax.exp2, "exp2", "Compute 2 to the power x")
expm1 = _unary_inexact(lax.expm1, "expm1", "Compute exp(x) - 1")
log = _unary_inexact(lax.log, "log", "Compute the natural logarithm")
log1p = _unary_inexact(lax.log1p, "log1p", "Compute log(1 + x)")
sqrt = _unary_inexact(lax.sqrt, "sqrt", "Compute the square root")
cbrt = _unary_inexact(lax.cbrt, "cbrt", "Compute the cube root")

negative = _unary(lax.neg, "negative", "Negate x")
sign = _unary(lax.sign, "sign", "Return the sign (-1, 0 or 1)")
square = _unary(lax.square, "square", "Square x")
absolute = _unary(
    lambda x: x if kind(x.dtype) in "bu" else lax.abs(x), "absolute", "Compute the absolute value"
)
abs = absolute  # noqa: A001 - numpy's name


def log2(x, /):
    """Compute the base-2 logarithm elementwise (jax.numpy.log2)."""
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(lax._common.python_scalar_as(2.0, aval(x).dtype)))


def log10(x, /):
    """Compute the base-10 logarithm elementwise (jax.numpy.log10)."""
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(lax._common.python_scalar_as(10.0, aval(x).dtype)))


def positive(x, /):
    """Return ``x`` unchanged, as an array (jax.numpy.positive)."""
    (x,) = promote_args("positive", x)
    return x


def reciprocal(x, /):
    """Compute ``1 / x`` elementwise (jax.numpy.reciprocal)."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def _integral_identity(lax_fn, name: str, what: str):
    def fn(x, /):
        (x,) = promote_args(name, x)
        return x if kind(aval(x).dtype) in "biu" else lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise; integers are returned unchanged (jax.numpy.{name})."
    return fn


floor = _integral_identity(lax.floor, "floor", "Round down to an integral value")
ceil = _integral_identity(lax.ceil, "ceil", "Round up to an integral value")
trunc = _integral_identity(
    lambda x: lax.select_n(lax.lt(x, _zero(x)), lax.floor(x), lax.ceil(x)),
    "trunc",
    "Round toward zero",
)
rint = _integral_identity(
    lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "rint",
    "Round to the nearest integer, ties to even",
)


def round(a, decimals: int = 0, out=None):  # noqa: A001 - numpy's name
    """Round to ``decimals`` decimal places, ties to even (jax.numpy.round)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    (a,) = promote_args("round", a)
    decimals = operator.index(decimals)
    dtype = aval(a).dtype
    if kind(dtype) in "biu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if kind(dtype) == "c":
        raise NotImplementedError("jnp.round of complex arrays is not supported yet")
    if decimals == 0:
        return rint(a)
    factor = lax._common.python_scalar_as(10.0**decimals, dtype)
    return lax.div(rint(lax.mul(a, factor)), factor)


around = round


def isfinite(x, /):
    """Tell elementwise whether ``x`` is finite (jax.numpy.isfinite)."""
    (x,) = promote_args("isfinite", x)
    k = kind(aval(x).dtype)
    if k == "f":
        return lax.is_finite(x)
    if k == "c":
        raise NotImplementedError("jnp.isfinite of complex arrays is not supported yet")
    return lax.full_like(x, True, np.bool_)


def isnan(x, /):
    """Tell elementwise whether ``x`` is NaN (jax.numpy.isnan)."""
    (x,) = promote_args("isnan", x)
    if kind(aval(x).dtype) in "biu":
        return lax.full_like(x, False, np.bool_)
    return lax.ne(x, x)


def isinf(x, /):
    """Tell elementwise whether ``x`` is +inf or -inf (jax.numpy.isinf)."""
    (x,) = promote_args("isinf", x)
    dtype = aval(x).dtype
    if kind(dtype) in "biu":
        return lax.full_like(x, False, np.bool_)
    if kind(dtype) == "c":
        raise NotImplementedError("jnp.isinf of complex arrays is not supported yet")
    return lax.eq(lax.abs(x), lax._common.python_scalar_as(math.inf, dtype))


def logical_not(x, /):
    """Compute logical NOT elementwise (jax.numpy.logical_not)."""
    return lax.bitwise_not(_as_bool(x, "logical_not"))


def invert(x, /):
    """Compute bitwise NOT (logical for bool) elementwise (jax.numpy.invert)."""
    (x,) = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = invert
bitwise_invert = invert


def _as_bool(x, name):
    check_arraylike(name, x)
    if type(x) in (bool, int, float, complex):
        return np.bool_(x)
    if isinstance(x, np.ndarray | np.generic):
        return np.asarray(x) != 0
    dtype = aval(x).dtype
    return x if dtype == np.bool_ else lax.ne(x, np.zeros((), dtype))


# --- binary ------------------------------------------------------------------------------------


def _add(x, y):
    return lax.bitwise_or(x, y) if aval(x).dtype == np.bool_ else lax.add(x, y)


def _mul(x, y):
    return lax.bitwise_and(x, y) if aval(x).dtype == np.bool_ else lax.mul(x, y)


add = _binary(_add, "add", "Add the arguments")
subtract = _binary(lax.sub, "subtract", "Subtract the second argument from the first")
multiply = _binary(_mul, "multiply", "Multiply the arguments")
divide = _binary_inexact(lax.div, "divide", "Divide the first argument by the second")
true_divide = divide
maximum = _binary(lax.max, "maximum", "Take the maximum of the arguments (NaN propagates)")
minimum = _binary(lax.min, "minimum", "Take the minimum of the arguments (NaN propagates)")
equal = _binary(lax.eq, "equal", "Compare x1 == x2")
not_equal = _binary(lax.ne, "not_equal", "Compare x1 != x2")
less = _binary(lax.lt, "less", "Compare x1 < x2")
less_equal = _binary(lax.le, "less_equal", "Compare x1 <= x2")
greater = _binary(lax.gt, "greater", "Compare x1 > x2")
greater_equal = _binary(lax.ge, "greater_equal", "Compare x1 >= x2")
bitwise_and = _binary(lax.bitwise_and, "bitwise_and", "Compute bitwise AND")
bitwise_or = _binary(lax.bitwise_or, "bitwise_or", "Compute bitwise OR")
bitwise_xor = _binary(lax.bitwise_xor, "bitwise_xor", "Compute bitwise XOR")
left_shift = _binary(lax.shift_left, "left_shift", "Shift the bits of x1 left by x2")
arctan2 = _binary_inexact(lax.atan2, "arctan2", "Compute the angle of the point (x2, x1)")
nextafter = _binary_inexact(lax.nextafter, "nextafter", "Return the next float after x1 toward x2")
fmod = _binary(lax.rem, "fmod", "Compute the remainder with the sign of the dividend (C's fmod)")


def right_shift(x1, x2, /):
    """Shift the bits of ``x1`` right by ``x2`` (jax.numpy.right_shift).

    The shift is arithmetic for signed and logical for unsigned integers.
    """
    x1, x2 = promote_args("right_shift", x1, x2)
    if kind(aval(x1).dtype) == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


def _logical(lax_fn, name: str, what: str):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        return lax_fn(*promote_shapes(name, _as_bool(x1, name), _as_bool(x2, name)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise, on the truth values of the arguments (jax.numpy.{name})."
    return fn


logical_and = _logical(lax.bitwise_and, "logical_and", "Compute logical AND")
logical_or = _logical(lax.bitwise_or, "logical_or", "Compute logical OR")
logical_xor = _logical(lax.bitwise_xor, "logical_xor", "Compute logical XOR")


def _zero(x):
    return np.zeros((), aval(x).dtype)


def floor_divide(x1, x2, /):
    """Divide and round down to an integral value, as numpy's ``//`` (jax.numpy.floor_divide).

    Integer division by zero follows JAX (it is not an error).
    """
    x1, x2 = broadcast_all("floor_divide", *promote_args("floor_divide", x1, x2))
    dtype = aval(x1).dtype
    k = kind(dtype)
    if k == "u":
        return lax.div(x1, x2)
    if k == "i":
        quotient = lax.div(x1, x2)
        fix = lax.bitwise_and(
            lax.ne(lax.sign(x1), lax.sign(x2)), lax.ne(lax.rem(x1, x2), _zero(x1))
        )
        return lax.select_n(fix, quotient, lax.sub(quotient, np.ones((), dtype)))
    if k == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    if k == "b":
        raise TypeError("floor_divide does not support bool inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """numpy's divmod for floats: a floor quotient and a remainder with the divisor's sign."""
    dtype = aval(x1).dtype
    zero = np.zeros((), dtype)
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.lt(x2, zero), lax.lt(mod, zero)))
    mod = lax.select_n(fix, mod, lax.add(mod, x2))
    div = lax.select_n(fix, div, lax.sub(div, np.ones((), dtype)))
    floor_div = lax.floor(div)
    half = np.asarray(0.5, dtype)[()]
    floor_div = lax.select_n(
        lax.gt(lax.sub(div, floor_div), half), floor_div, lax.add(floor_div, np.ones((), dtype))
    )
    # a zero divisor gives numpy's inf/nan quotient: x1 / x2 there
    quotient = lax.select_n(lax.eq(x2, zero), floor_div, lax.div(x1, x2))
    return quotient, mod


def remainder(x1, x2, /):
    """Return the remainder of floor division, with the sign of ``x2`` (jax.numpy.remainder).

    Integer ``x % 0`` is 0, as in numpy and JAX.
    """
    x1, x2 = broadcast_all("remainder", *promote_args("remainder", x1, x2))
    dtype = aval(x1).dtype
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
    """
    check_arraylike("power", x1, x2)
    if type(x2) is int:
        dtype, weak = result_type(x1, x2)
        return lax.integer_pow(convert(x1, dtype, weak), x2)
    x1, x2 = promote_args("power", x1, x2)
    k = kind(aval(x1).dtype)
    if k in "fc":
        return lax.pow(x1, x2)
    if k == "b":
        raise TypeError("power does not support bool inputs")
    return _integer_power(x1, x2)


def _integer_power(base, exponent):
    """``base ** exponent`` for integer arrays, by square-and-multiply over the exponent's bits."""
    dtype = aval(base).dtype
    one = np.ones((), dtype)
    shape = broadcast_shapes("power", aval(base).shape, aval(exponent).shape)
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


def hypot(x1, x2, /):
    """Compute ``sqrt(x1**2 + x2**2)`` elementwise (jax.numpy.hypot)."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    return lax.sqrt(lax.add(lax.square(x1), lax.square(x2)))
