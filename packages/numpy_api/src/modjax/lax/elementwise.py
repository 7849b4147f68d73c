"""Elementwise primitives: unary math, binary arithmetic, comparisons, conversion, select.

The unary and binary families are declared from one line each (name, accepted
dtype categories, StableHLO op); the handful of primitives with params or
special rules (``round``, ``integer_pow``, ``pow``, ``convert_element_type``,
``select_n``, ``clamp``) are declared by hand below them. Each declaration
registers the abstract evaluation, the eager ``impl`` (runtime's
``apply_primitive``) and the lowering rule next to the primitive.

Binary operators follow JAX's lax rules: operands have the same dtype, and
shapes are equal up to rank-0 operands and size-1 dimensions, which broadcast.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.lowering import chlo, hlo, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from ._common import (
    ANY,
    BOOL,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    INT_OR_BOOL,
    NUM,
    PYTHON_SCALARS,
    SIGNED,
    Category,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    check_dtype,
    check_same_dtypes,
    compare,
    convert,
    convert_weak_scalars,
    full,
    kind,
    real_dtype,
)

__all__ = [
    "RoundingMethod",
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clamp",
    "convert_element_type",
    "cos",
    "cosh",
    "div",
    "eq",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "ge",
    "gt",
    "integer_pow",
    "is_finite",
    "le",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "nextafter",
    "pow",
    "rem",
    "round",
    "rsqrt",
    "select_n",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
]

# --- the unary family ------------------------------------------------------------------------


def _unary_abstract_eval(name, accepted, result, aval):
    check_dtype(name, aval, accepted)
    if result == "same":
        return aval
    if result == "bool":
        return ShapedArray(aval.shape, np.dtype(np.bool_))
    return ShapedArray(aval.shape, real_dtype(aval.dtype), aval.weak_type)  # "real"


def _hlo_unary(op):
    """A lowering rule that applies one StableHLO/CHLO op with the output's type."""

    def rule(ctx, x):
        return op(x, results=[ir_type(ctx.avals_out[0])])

    return rule


def unary_primitive(
    name: str,
    accepted: Sequence[Category],
    lowering: Callable,
    result: str = "same",
) -> Primitive:
    """Declare a unary elementwise primitive with its abstract eval, impl and lowering.

    ``accepted`` lists the dtype categories of the operand; ``result`` is the
    result dtype: ``"same"`` as the operand, ``"bool"``, or ``"real"`` (the
    component type of a complex operand).
    """
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_unary_abstract_eval, name, tuple(accepted), result))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


def _sign_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if kind(aval.dtype) == "u":  # stablehlo.sign has no unsigned form
        return hlo.select(compare(x, full(0, aval), "EQ", aval.dtype), full(0, aval), full(1, aval))
    return hlo.sign(x)


def _exp2_lowering(ctx, x):
    aval = ctx.avals_in[0]
    return hlo.exponential(hlo.multiply(full(math.log(2), aval), x))


def _logistic_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if kind(aval.dtype) == "c":  # 1 / (1 + exp(-x)); XLA's logistic is real-only on CPU
        one = full(1, aval)
        return hlo.divide(one, hlo.add(one, hlo.exponential(hlo.negate(x))))
    return hlo.logistic(x)


# name, accepted dtype categories, lowering (JAX's set of accepted dtypes for each)
neg_p = unary_primitive("neg", NUM, _hlo_unary(hlo.negate))
sign_p = unary_primitive("sign", NUM, _sign_lowering)
floor_p = unary_primitive("floor", [FLOAT], _hlo_unary(hlo.floor))
ceil_p = unary_primitive("ceil", [FLOAT], _hlo_unary(hlo.ceil))
is_finite_p = unary_primitive("is_finite", [FLOAT], _hlo_unary(hlo.is_finite), result="bool")
exp_p = unary_primitive("exp", INEXACT, _hlo_unary(hlo.exponential))
exp2_p = unary_primitive("exp2", INEXACT, _exp2_lowering)
log_p = unary_primitive("log", INEXACT, _hlo_unary(hlo.log))
log1p_p = unary_primitive("log1p", INEXACT, _hlo_unary(hlo.log_plus_one))
expm1_p = unary_primitive("expm1", INEXACT, _hlo_unary(hlo.exponential_minus_one))
tanh_p = unary_primitive("tanh", INEXACT, _hlo_unary(hlo.tanh))
logistic_p = unary_primitive("logistic", INEXACT, _logistic_lowering)
sin_p = unary_primitive("sin", INEXACT, _hlo_unary(hlo.sine))
cos_p = unary_primitive("cos", INEXACT, _hlo_unary(hlo.cosine))
tan_p = unary_primitive("tan", INEXACT, _hlo_unary(hlo.tan))
asin_p = unary_primitive("asin", INEXACT, _hlo_unary(chlo.asin))
acos_p = unary_primitive("acos", INEXACT, _hlo_unary(chlo.acos))
atan_p = unary_primitive("atan", INEXACT, _hlo_unary(chlo.atan))
sinh_p = unary_primitive("sinh", INEXACT, _hlo_unary(chlo.sinh))
cosh_p = unary_primitive("cosh", INEXACT, _hlo_unary(chlo.cosh))
asinh_p = unary_primitive("asinh", INEXACT, _hlo_unary(chlo.asinh))
acosh_p = unary_primitive("acosh", INEXACT, _hlo_unary(chlo.acosh))
atanh_p = unary_primitive("atanh", INEXACT, _hlo_unary(chlo.atanh))
sqrt_p = unary_primitive("sqrt", INEXACT, _hlo_unary(hlo.sqrt))
rsqrt_p = unary_primitive("rsqrt", INEXACT, _hlo_unary(hlo.rsqrt))
cbrt_p = unary_primitive("cbrt", [FLOAT], _hlo_unary(hlo.cbrt))
abs_p = unary_primitive("abs", [SIGNED, FLOAT, COMPLEX], _hlo_unary(hlo.abs), result="real")
not_p = unary_primitive("not", INT_OR_BOOL, _hlo_unary(hlo.not_))


def neg(x):
    """Negate ``x`` elementwise (jax.lax.neg)."""
    return neg_p.bind(x)


def sign(x):
    """Return the sign of ``x`` elementwise: -1, 0 or 1 (jax.lax.sign)."""
    return sign_p.bind(x)


def floor(x):
    """Round ``x`` down to an integral value elementwise (jax.lax.floor)."""
    return floor_p.bind(x)


def ceil(x):
    """Round ``x`` up to an integral value elementwise (jax.lax.ceil)."""
    return ceil_p.bind(x)


def is_finite(x):
    """Tell elementwise whether ``x`` is neither infinite nor NaN (jax.lax.is_finite)."""
    return is_finite_p.bind(x)


def exp(x):
    """Compute e to the power ``x`` elementwise (jax.lax.exp)."""
    return exp_p.bind(x)


def exp2(x):
    """Compute 2 to the power ``x`` elementwise (jax.lax.exp2)."""
    return exp2_p.bind(x)


def log(x):
    """Compute the natural logarithm of ``x`` elementwise (jax.lax.log)."""
    return log_p.bind(x)


def log1p(x):
    """Compute ``log(1 + x)`` elementwise, accurately near 0 (jax.lax.log1p)."""
    return log1p_p.bind(x)


def expm1(x):
    """Compute ``exp(x) - 1`` elementwise, accurately near 0 (jax.lax.expm1)."""
    return expm1_p.bind(x)


def tanh(x):
    """Compute the hyperbolic tangent of ``x`` elementwise (jax.lax.tanh)."""
    return tanh_p.bind(x)


def logistic(x):
    """Compute the logistic sigmoid ``1 / (1 + exp(-x))`` elementwise (jax.lax.logistic)."""
    return logistic_p.bind(x)


def sin(x):
    """Compute the sine of ``x`` elementwise (jax.lax.sin)."""
    return sin_p.bind(x)


def cos(x):
    """Compute the cosine of ``x`` elementwise (jax.lax.cos)."""
    return cos_p.bind(x)


def tan(x):
    """Compute the tangent of ``x`` elementwise (jax.lax.tan)."""
    return tan_p.bind(x)


def asin(x):
    """Compute the arc sine of ``x`` elementwise (jax.lax.asin)."""
    return asin_p.bind(x)


def acos(x):
    """Compute the arc cosine of ``x`` elementwise (jax.lax.acos)."""
    return acos_p.bind(x)


def atan(x):
    """Compute the arc tangent of ``x`` elementwise (jax.lax.atan)."""
    return atan_p.bind(x)


def sinh(x):
    """Compute the hyperbolic sine of ``x`` elementwise (jax.lax.sinh)."""
    return sinh_p.bind(x)


def cosh(x):
    """Compute the hyperbolic cosine of ``x`` elementwise (jax.lax.cosh)."""
    return cosh_p.bind(x)


def asinh(x):
    """Compute the inverse hyperbolic sine of ``x`` elementwise (jax.lax.asinh)."""
    return asinh_p.bind(x)


def acosh(x):
    """Compute the inverse hyperbolic cosine of ``x`` elementwise (jax.lax.acosh)."""
    return acosh_p.bind(x)


def atanh(x):
    """Compute the inverse hyperbolic tangent of ``x`` elementwise (jax.lax.atanh)."""
    return atanh_p.bind(x)


def sqrt(x):
    """Compute the square root of ``x`` elementwise (jax.lax.sqrt)."""
    return sqrt_p.bind(x)


def rsqrt(x):
    """Compute ``1 / sqrt(x)`` elementwise (jax.lax.rsqrt)."""
    return rsqrt_p.bind(x)


def cbrt(x):
    """Compute the cube root of ``x`` elementwise (jax.lax.cbrt)."""
    return cbrt_p.bind(x)


def abs(x):  # noqa: A001 - JAX's public name
    """Compute the absolute value of ``x`` elementwise; complex gives real (jax.lax.abs)."""
    return abs_p.bind(x)


def bitwise_not(x):
    """Invert the bits of ``x`` elementwise; logical not for bool (jax.lax.bitwise_not)."""
    return not_p.bind(x)


# --- round and integer_pow: unary with a param -----------------------------------------------


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties (jax.lax.RoundingMethod)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_abstract_eval(aval, *, rounding_method):
    check_dtype("round", aval, [FLOAT])
    return aval


def _round_lowering(ctx, x, *, rounding_method):
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return hlo.round_nearest_even(x)
    return hlo.round_nearest_afz(x)


round_p = Primitive("round")
round_p.def_abstract_eval(_round_abstract_eval)
round_p.def_impl(partial(apply_primitive, round_p))
register_lowering(round_p, _round_lowering)
# Printed as JAX prints it (``round[rounding_method=1]``) and read back as the enum.
register_param_printer(round_p, "rounding_method", lambda m: str(int(m)))
register_param_parser(round_p, "rounding_method", lambda text: RoundingMethod(int(text)))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
    """Round ``x`` to the nearest integral value, ties as ``rounding_method`` says (jax.lax.round).

    ``rounding_method`` is a :class:`RoundingMethod` (or its int value):
    ``AWAY_FROM_ZERO`` (the default) or ``TO_NEAREST_EVEN``.
    """
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def _integer_pow_abstract_eval(aval, *, y):
    check_dtype("integer_pow", aval, NUM)
    if y < 0 and kind(aval.dtype) in "iu":
        raise TypeError(
            f"Integers cannot be raised to negative powers, got "
            f"integer_pow({aval.str_short()}, {y})"
        )
    return aval


def _integer_pow_lowering(ctx, x, *, y):
    aval = ctx.avals_out[0]
    if y == 0:
        return full(1, aval)
    result, base, n = None, x, -y if y < 0 else y
    while n:  # square-and-multiply: about 2 log2(y) multiplications
        if n & 1:
            result = base if result is None else hlo.multiply(result, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    return hlo.divide(full(1, aval), result) if y < 0 else result


integer_pow_p = Primitive("integer_pow")
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
integer_pow_p.def_impl(partial(apply_primitive, integer_pow_p))
register_lowering(integer_pow_p, _integer_pow_lowering)


def integer_pow(x, y: int):
    """Raise ``x`` to the static integer power ``y`` elementwise (jax.lax.integer_pow)."""
    import operator

    return integer_pow_p.bind(x, y=operator.index(y))


def square(x):
    """Square ``x`` elementwise (jax.lax.square)."""
    return integer_pow_p.bind(x, y=2)


# --- the binary family -----------------------------------------------------------------------


def _binary_abstract_eval(name, accepted, out_bool, x, y):
    check_dtype(name, x, accepted, 0)
    check_dtype(name, y, accepted, 1)
    check_same_dtypes(name, (x, y))
    shape = broadcast_shapes(name, (x.shape, y.shape))
    if out_bool:
        return ShapedArray(shape, np.dtype(np.bool_))
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _hlo_binary(op):
    """A lowering rule that broadcasts both operands and applies one op."""

    def rule(ctx, x, y):
        out = ctx.avals_out[0]
        ax, ay = ctx.avals_in
        x = broadcast_to(x, ax, out.shape)
        y = broadcast_to(y, ay, out.shape)
        return op(x, y, results=[ir_type(out)])

    return rule


def binary_primitive(
    name: str, accepted: Sequence[Category], lowering: Callable, out_bool: bool = False
) -> Primitive:
    """Declare a binary elementwise primitive with its abstract eval, impl and lowering.

    Both operands must have one dtype of the ``accepted`` categories; the result
    has that dtype (bool with ``out_bool``) and the broadcast shape.
    """
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_binary_abstract_eval, name, tuple(accepted), out_bool))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


def _minmax_lowering(op, direction):
    """max/min; complex values compare lexicographically (real part, then imaginary)."""

    def rule(ctx, x, y):
        out = ctx.avals_out[0]
        ax, ay = ctx.avals_in
        x = broadcast_to(x, ax, out.shape)
        y = broadcast_to(y, ay, out.shape)
        if kind(out.dtype) != "c":
            return op(x, y)
        part = real_dtype(out.dtype)
        rx, ry, ix, iy = hlo.real(x), hlo.real(y), hlo.imag(x), hlo.imag(y)
        pick_x = hlo.select(
            compare(rx, ry, "EQ", part),
            compare(ix, iy, direction, part),
            compare(rx, ry, direction, part),
        )
        return hlo.select(pick_x, x, y)

    return rule


def _compare_lowering(direction):
    def rule(ctx, x, y):
        ax, ay = ctx.avals_in
        shape = ctx.avals_out[0].shape
        return compare(broadcast_to(x, ax, shape), broadcast_to(y, ay, shape), direction, ax.dtype)

    return rule


add_p = binary_primitive("add", NUM, _hlo_binary(hlo.add))
sub_p = binary_primitive("sub", NUM, _hlo_binary(hlo.subtract))
mul_p = binary_primitive("mul", NUM, _hlo_binary(hlo.multiply))
div_p = binary_primitive("div", NUM, _hlo_binary(hlo.divide))
rem_p = binary_primitive("rem", [INT, FLOAT], _hlo_binary(hlo.remainder))
max_p = binary_primitive("max", ANY, _minmax_lowering(hlo.maximum, "GT"))
min_p = binary_primitive("min", ANY, _minmax_lowering(hlo.minimum, "LT"))
atan2_p = binary_primitive("atan2", INEXACT, _hlo_binary(hlo.atan2))
and_p = binary_primitive("and", INT_OR_BOOL, _hlo_binary(hlo.and_))
or_p = binary_primitive("or", INT_OR_BOOL, _hlo_binary(hlo.or_))
xor_p = binary_primitive("xor", INT_OR_BOOL, _hlo_binary(hlo.xor))
shift_left_p = binary_primitive("shift_left", [INT], _hlo_binary(hlo.shift_left))
shift_right_logical_p = binary_primitive(
    "shift_right_logical", [INT], _hlo_binary(hlo.shift_right_logical)
)
shift_right_arithmetic_p = binary_primitive(
    "shift_right_arithmetic", [INT], _hlo_binary(hlo.shift_right_arithmetic)
)
nextafter_p = binary_primitive("nextafter", [FLOAT], _hlo_binary(chlo.next_after))
eq_p = binary_primitive("eq", ANY, _compare_lowering("EQ"), out_bool=True)
ne_p = binary_primitive("ne", ANY, _compare_lowering("NE"), out_bool=True)
lt_p = binary_primitive("lt", [INT, FLOAT, BOOL], _compare_lowering("LT"), out_bool=True)
le_p = binary_primitive("le", [INT, FLOAT, BOOL], _compare_lowering("LE"), out_bool=True)
gt_p = binary_primitive("gt", [INT, FLOAT, BOOL], _compare_lowering("GT"), out_bool=True)
ge_p = binary_primitive("ge", [INT, FLOAT, BOOL], _compare_lowering("GE"), out_bool=True)


def _bind_binary(prim, x, y):
    if type(x) in PYTHON_SCALARS or type(y) in PYTHON_SCALARS:
        x, y = convert_weak_scalars((x, y))
    return prim.bind(x, y)


def add(x, y):
    """Add ``x`` and ``y`` elementwise (jax.lax.add)."""
    return _bind_binary(add_p, x, y)


def sub(x, y):
    """Subtract ``y`` from ``x`` elementwise (jax.lax.sub)."""
    return _bind_binary(sub_p, x, y)


def mul(x, y):
    """Multiply ``x`` and ``y`` elementwise (jax.lax.mul)."""
    return _bind_binary(mul_p, x, y)


def div(x, y):
    """Divide ``x`` by ``y`` elementwise; integers round toward zero (jax.lax.div).

    Integer division by zero follows XLA: ``x / 0`` is -1 for signed and all
    ones for unsigned integers, and ``INT_MIN / -1`` is ``INT_MIN``.
    """
    return _bind_binary(div_p, x, y)


def rem(x, y):
    """Return the remainder of ``x / y``, with the sign of ``x`` (jax.lax.rem).

    Integer ``x % 0`` is ``x``, following XLA.
    """
    return _bind_binary(rem_p, x, y)


def max(x, y):  # noqa: A001 - JAX's public name
    """Return the elementwise maximum, propagating NaN (jax.lax.max)."""
    return _bind_binary(max_p, x, y)


def min(x, y):  # noqa: A001 - JAX's public name
    """Return the elementwise minimum, propagating NaN (jax.lax.min)."""
    return _bind_binary(min_p, x, y)


def atan2(x, y):
    """Compute the arc tangent of ``x / y`` using both signs elementwise (jax.lax.atan2)."""
    return _bind_binary(atan2_p, x, y)


def bitwise_and(x, y):
    """Compute bitwise AND (logical for bool) elementwise (jax.lax.bitwise_and)."""
    return _bind_binary(and_p, x, y)


def bitwise_or(x, y):
    """Compute bitwise OR (logical for bool) elementwise (jax.lax.bitwise_or)."""
    return _bind_binary(or_p, x, y)


def bitwise_xor(x, y):
    """Compute bitwise XOR (logical for bool) elementwise (jax.lax.bitwise_xor)."""
    return _bind_binary(xor_p, x, y)


def shift_left(x, y):
    """Shift ``x`` left by ``y`` bits elementwise; 0 past the width (jax.lax.shift_left)."""
    return _bind_binary(shift_left_p, x, y)


def shift_right_logical(x, y):
    """Shift ``x`` right by ``y`` bits, filling with zeros (jax.lax.shift_right_logical)."""
    return _bind_binary(shift_right_logical_p, x, y)


def shift_right_arithmetic(x, y):
    """Shift ``x`` right by ``y`` bits, copying the sign bit (jax.lax.shift_right_arithmetic)."""
    return _bind_binary(shift_right_arithmetic_p, x, y)


def nextafter(x1, x2):
    """Return the next float after ``x1`` toward ``x2`` elementwise (jax.lax.nextafter)."""
    return _bind_binary(nextafter_p, x1, x2)


def eq(x, y):
    """Compare ``x == y`` elementwise (jax.lax.eq)."""
    return _bind_binary(eq_p, x, y)


def ne(x, y):
    """Compare ``x != y`` elementwise (jax.lax.ne)."""
    return _bind_binary(ne_p, x, y)


def lt(x, y):
    """Compare ``x < y`` elementwise (jax.lax.lt)."""
    return _bind_binary(lt_p, x, y)


def le(x, y):
    """Compare ``x <= y`` elementwise (jax.lax.le)."""
    return _bind_binary(le_p, x, y)


def gt(x, y):
    """Compare ``x > y`` elementwise (jax.lax.gt)."""
    return _bind_binary(gt_p, x, y)


def ge(x, y):
    """Compare ``x >= y`` elementwise (jax.lax.ge)."""
    return _bind_binary(ge_p, x, y)


# --- pow: the exponent may be an integer of any width ----------------------------------------


def _pow_abstract_eval(x, y):
    check_dtype("pow", x, INEXACT, 0)
    check_dtype("pow", y, [INT, FLOAT, COMPLEX], 1)
    if kind(y.dtype) not in "iu":
        check_same_dtypes("pow", (x, y))
    shape = broadcast_shapes("pow", (x.shape, y.shape))
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _pow_lowering(ctx, x, y):
    out = ctx.avals_out[0]
    ax, ay = ctx.avals_in
    y_aval = ay.update(dtype=out.dtype)
    y = convert(y, ay, y_aval)  # an integer exponent becomes x's type
    ay = y_aval
    return hlo.power(broadcast_to(x, ax, out.shape), broadcast_to(y, ay, out.shape))


pow_p = Primitive("pow")
pow_p.def_abstract_eval(_pow_abstract_eval)
pow_p.def_impl(partial(apply_primitive, pow_p))
register_lowering(pow_p, _pow_lowering)


def pow(x, y):  # noqa: A001 - JAX's public name
    """Raise ``x`` to the power ``y`` elementwise; ``y`` may be an integer array (jax.lax.pow)."""
    return _bind_binary(pow_p, x, y)


# --- convert_element_type --------------------------------------------------------------------


def _convert_element_type_abstract_eval(aval, *, new_dtype, weak_type):
    if kind(new_dtype) == "?" or kind(aval.dtype) == "?":
        raise TypeError(
            f"convert_element_type cannot convert {dtypes.dtype_name(aval.dtype)} to "
            f"{dtypes.dtype_name(new_dtype)}"
        )
    return ShapedArray(aval.shape, new_dtype, weak_type)


def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type):
    return convert(x, ctx.avals_in[0], ctx.avals_out[0])


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.def_abstract_eval(_convert_element_type_abstract_eval)
convert_element_type_p.def_impl(partial(apply_primitive, convert_element_type_p))
register_lowering(convert_element_type_p, _convert_element_type_lowering)


def convert_element_type(operand, new_dtype):
    """Cast ``operand`` elementwise to ``new_dtype`` (jax.lax.convert_element_type).

    ``new_dtype`` is canonicalized (float64 becomes float32 with x64 off); the
    result is not weakly typed. Floats convert to integers by truncation toward
    zero (out-of-range values as XLA defines), complex to real keeps the real
    part, and anything to bool tests ``!= 0``.
    """
    return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand, new_dtype, weak_type: bool = False):
    """Cast ``operand`` to ``new_dtype`` with the given weak type; a no-op when nothing changes."""
    new_dtype = dtypes.canonicalize_dtype(dtypes.dtype(new_dtype))
    if not isinstance(operand, PYTHON_SCALARS) and not isinstance(operand, np.ndarray | np.generic):
        aval = aval_of(operand)
        if aval.dtype == new_dtype and aval.weak_type == weak_type:
            return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))


# --- select_n and clamp ------------------------------------------------------------------------


def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise ValueError("select_n() must have at least one case")
    k = kind(which.dtype)
    if k not in "biu":
        raise TypeError(
            f"select `which` must be boolean or integer type, got {dtypes.dtype_name(which.dtype)}."
        )
    if k == "b" and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    if any(c.shape != cases[0].shape for c in cases):
        raise TypeError(f"select cases must have the same shapes, got {[c.shape for c in cases]}.")
    check_same_dtypes("select", cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` shape "
            f"{which.shape} but case shape {cases[0].shape}."
        )
    return ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


def _select_n_lowering(ctx, which, *cases):
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return cases[0]
    if kind(which_aval.dtype) == "b":
        return hlo.select(which, cases[1], cases[0])

    def pick(offset, cases):  # a balanced tree of selects on ``which < offset + mid``
        if len(cases) == 1:
            return cases[0]
        mid = len(cases) // 2
        pred = compare(which, full(offset + mid, which_aval), "LT", which_aval.dtype)
        return hlo.select(pred, pick(offset, cases[:mid]), pick(offset + mid, cases[mid:]))

    return pick(0, list(cases))


select_n_p = Primitive("select_n")
select_n_p.def_abstract_eval(_select_n_abstract_eval)
select_n_p.def_impl(partial(apply_primitive, select_n_p))
register_lowering(select_n_p, _select_n_lowering)


def select_n(which, *cases):
    """Pick, elementwise, ``cases[which]`` (jax.lax.select_n).

    ``which`` is a bool (at most two cases: False picks ``cases[0]``) or an
    integer array, rank 0 or of the cases' shape; out-of-range integers pick
    an unspecified case, as in XLA.
    """
    if not cases:
        raise ValueError("select_n() must have at least one case")
    if any(type(c) in PYTHON_SCALARS for c in cases):
        cases = convert_weak_scalars(cases)
    return select_n_p.bind(which, *cases)


def _clamp_abstract_eval(lo, x, hi):
    check_dtype("clamp", x, [INT, FLOAT, BOOL])
    check_same_dtypes("clamp", (lo, x, hi))
    for name, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                f"{name}.shape={bound.shape}, operand.shape={x.shape}."
            )
    return ShapedArray(x.shape, x.dtype, lo.weak_type and x.weak_type and hi.weak_type)


def _clamp_lowering(ctx, lo, x, hi):
    a_lo, a_x, a_hi = ctx.avals_in
    return hlo.clamp(broadcast_to(lo, a_lo, a_x.shape), x, broadcast_to(hi, a_hi, a_x.shape))


clamp_p = Primitive("clamp")
clamp_p.def_abstract_eval(_clamp_abstract_eval)
clamp_p.def_impl(partial(apply_primitive, clamp_p))
register_lowering(clamp_p, _clamp_lowering)


def clamp(min, x, max):  # noqa: A002 - JAX's argument names
    """Clip ``x`` elementwise to ``[min, max]``, bounds of rank 0 or x's shape (jax.lax.clamp)."""
    if type(min) in PYTHON_SCALARS or type(max) in PYTHON_SCALARS:
        x, min, max = convert_weak_scalars((x, min, max))  # x first: it sets the dtype
    return clamp_p.bind(min, x, max)
