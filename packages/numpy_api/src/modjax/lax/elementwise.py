"""Elementwise primitives: unary math, binary arithmetic, comparisons, conversion, select.

The unary and binary families are declared from one line each (name, accepted
dtype categories, StableHLO op); the handful of primitives with params or
special rules (``round``, ``integer_pow``, ``pow``, ``convert_element_type``,
``select_n``, ``clamp``, ``reduce_precision``) are declared by hand below them. Each declaration
registers the abstract evaluation, the eager ``impl`` (runtime's
``apply_primitive``) and the lowering rule next to the primitive.

Binary operators follow JAX's lax rules: operands have the same dtype, and
shapes are equal up to rank-0 operands and size-1 dimensions, which broadcast.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import (
    Zero,
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
)
from modjax.autodiff.jvp import with_array_values
from modjax.batching import (
    batching_rules,
    bdim_at_front,
    defbroadcasting,
    defvectorized,
    matchaxis,
)
from modjax.lowering import chlo, hlo, ir_type, lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
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
from ._rules import (
    batch_size,
    brcast,
    broadcast_in_dim,
    const,
    instantiate,
    strong_const,
    unbroadcast,
    zeros,
)
from .accuracy import AccuracyMode, accuracy_attr, format_accuracy, parse_accuracy

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
    "reduce_precision",
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
    "square_p",
    "sub",
    "tan",
    "tanh",
]

# --- the unary family ------------------------------------------------------------------------


def _unary_abstract_eval(name, accepted, result, aval):
    check_dtype(name, aval, accepted)
    if result == "same":
        return aval
    if result == "bool":  # is_finite: a bool as weakly typed as the operand (JAX's)
        return ShapedArray(aval.shape, np.dtype(np.bool_), aval.weak_type)
    return ShapedArray(aval.shape, real_dtype(aval.dtype), aval.weak_type)  # "real"


def _hlo_unary(op):
    """A lowering rule that applies one StableHLO/CHLO op with the output's type."""

    def rule(ctx, x):
        return op(x, results=[ir_type(ctx.avals_out[0])])

    return rule


class _AccurateLowering:
    """The lowering rule of a primitive taking the ``accuracy`` param (its marker too)."""

    def __init__(self, rule: Callable):
        self.rule = rule

    def __call__(self, ctx, x, accuracy=None):
        return self.rule(ctx, x, accuracy)


def _accurate_unary(op, real_only: bool = False) -> _AccurateLowering:
    """A lowering rule of one StableHLO op carrying the ``accuracy`` param as the op's
    ``result_accuracy`` (as JAX lowers it); ``real_only``: dropped for complex operands,
    which JAX lowers without it."""

    def rule(ctx, x, accuracy):
        out_type = ir_type(ctx.avals_out[0])
        if accuracy is None or (real_only and kind(ctx.avals_in[0].dtype) == "c"):
            return op(x, results=[out_type])
        return op(x, results=[out_type], result_accuracy=accuracy_attr(accuracy))

    return _AccurateLowering(rule)


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
    abstract_eval = partial(_unary_abstract_eval, name, tuple(accepted), result)
    if isinstance(lowering, _AccurateLowering):  # takes ``accuracy=`` (any value, as JAX)
        prim.def_abstract_eval(lambda aval, accuracy=None: abstract_eval(aval))
    else:
        prim.def_abstract_eval(abstract_eval)
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


def _sign_lowering(ctx, x):
    aval = ctx.avals_in[0]
    if kind(aval.dtype) == "u":  # stablehlo.sign has no unsigned form
        return hlo.select(compare(x, full(0, aval), "EQ", aval.dtype), full(0, aval), full(1, aval))
    return hlo.sign(x)


def _exp2_lowering(ctx, x, accuracy=None):
    aval = ctx.avals_in[0]
    return hlo.exponential(
        hlo.multiply(full(math.log(2), aval), x), result_accuracy=accuracy_attr(accuracy)
    )


def _logistic_lowering(ctx, x, accuracy=None):  # JAX lowers logistic without the accuracy
    # 1 / (1 + exp(-x)) as JAX writes it, not stablehlo.logistic: XLA expands the two
    # differently for bfloat16 and float16, and complex logistic has no CPU kernel.
    one = full(1, ctx.avals_in[0])
    return hlo.divide(one, hlo.add(one, hlo.exponential(hlo.negate(x))))


def _real(z):
    """The real part of a complex ``z`` (a conversion, so linear and transposable)."""
    aval = to_aval(z)
    return convert_element_type_p.bind(z, new_dtype=real_dtype(aval.dtype), weak_type=False)


def _abs_jvp(g, ans, x):
    """d|x| is sign(x) g, with 1 at 0 (JAX's convention); Re(conj(x) g) / |x| for complex x."""
    if kind(to_aval(x).dtype) != "c":
        return select_n(ge(x, const(x, 0)), neg(g), g)
    from .bits import conj, real  # bits is built on this module

    # JAX's operation order, real(g * (conj(x) / |x|)) in complex arithmetic, so that
    # gradients of complex norms round as JAX's; |x| = 0 divides by 1 instead (the sum
    # |x| + (|x| == 0) is JAX's select of 1 there, bit for bit).
    dtype = to_aval(x).dtype
    ans_c = _convert_element_type(ans, dtype, False)
    nonzero = add(ans_c, _convert_element_type(eq(ans_c, const(ans_c, 0)), dtype, False))
    return real(mul(g, div(conj(x), nonzero)))


def _expm1_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:  # as JAX: exp(x) at that accuracy, not ans + 1
        return mul(g, exp(x, accuracy=accuracy))
    return mul(g, add(ans, const(ans, 1)))


def _tanh_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:  # as JAX: 4 logistic(2x) logistic(-2x)
        both = mul(
            logistic(mul(const(x, 2), x), accuracy=accuracy),
            logistic(mul(const(x, -2), x), accuracy=accuracy),
        )
        return mul(g, mul(const(x, 4), both))
    # JAX's form, (g + g y)(1 - y), so that gradients round as JAX's do.
    return mul(add(g, mul(g, ans)), sub(const(x, 1), ans))


def _logistic_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:  # as JAX: ans logistic(-x), not ans (1 - ans)
        return mul(g, mul(ans, logistic(neg(x))))
    return mul(g, mul(ans, sub(const(ans, 1), ans)))


# name, accepted dtype categories, lowering (JAX's set of accepted dtypes for each), then one
# line per rule table: JVP (and transpose where linear), batching.
neg_p = unary_primitive("neg", NUM, _hlo_unary(hlo.negate))
deflinear(neg_p, lambda ct, x: [neg(ct)])
defvectorized(neg_p)
sign_p = unary_primitive("sign", NUM, _sign_lowering)
defjvp_zero(sign_p)
defvectorized(sign_p)
floor_p = unary_primitive("floor", [FLOAT], _hlo_unary(hlo.floor))
defjvp_zero(floor_p)
defvectorized(floor_p)
ceil_p = unary_primitive("ceil", [FLOAT], _hlo_unary(hlo.ceil))
defjvp_zero(ceil_p)
defvectorized(ceil_p)
is_finite_p = unary_primitive("is_finite", [FLOAT], _hlo_unary(hlo.is_finite), result="bool")
defjvp_zero(is_finite_p)
defvectorized(is_finite_p)
# The functions taking ``accuracy=`` (JAX's set): their rules accept the param, and the
# JVPs of expm1, tanh, logistic, sin and cos pass it on as JAX's do.
exp_p = unary_primitive("exp", INEXACT, _accurate_unary(hlo.exponential))
defjvp2(exp_p, lambda g, ans, x, accuracy=None: mul(g, ans))
defvectorized(exp_p)
exp2_p = unary_primitive("exp2", INEXACT, _AccurateLowering(_exp2_lowering))
defjvp2(exp2_p, lambda g, ans, x, accuracy=None: mul(log(strong_const(x, 2)), mul(g, ans)))
defvectorized(exp2_p)
log_p = unary_primitive("log", INEXACT, _accurate_unary(hlo.log))
defjvp(log_p, lambda g, x, accuracy=None: div(g, x))
defvectorized(log_p)
log1p_p = unary_primitive("log1p", INEXACT, _accurate_unary(hlo.log_plus_one))
defjvp(log1p_p, lambda g, x, accuracy=None: div(g, add(x, const(x, 1))))
defvectorized(log1p_p)
expm1_p = unary_primitive("expm1", INEXACT, _accurate_unary(hlo.exponential_minus_one))
defjvp2(expm1_p, _expm1_jvp)
defvectorized(expm1_p)
tanh_p = unary_primitive("tanh", INEXACT, _accurate_unary(hlo.tanh))
defjvp2(tanh_p, _tanh_jvp)
defvectorized(tanh_p)
logistic_p = unary_primitive("logistic", INEXACT, _AccurateLowering(_logistic_lowering))
defjvp2(logistic_p, _logistic_jvp)
defvectorized(logistic_p)


def _complex_sin_or_cos(x, cosine: bool):
    """sin or cos of a complex ``x`` as JAX lowers them (not StableHLO's complex op, which
    rounds otherwise): sin/cos of the real part times cosh/sinh of the imaginary part, the
    hyperbolic functions from ``expm1`` (no cancellation near 0). A zero real part gives an
    exact zero component, where ``inf * 0`` would be NaN."""
    from .bits import complex as make_complex  # bits is built on this module
    from .bits import imag, real

    a, b = real(x), imag(x)
    zero, two = strong_const(a, 0), strong_const(a, 2)
    e1, e2 = expm1(b), expm1(neg(b))
    sinh = div(sub(e1, e2), two)
    cosh = div(add(add(e1, e2), two), two)
    if cosine:
        re, im = mul(cos(a), cosh), mul(neg(sin(a)), sinh)
        on_axis = make_complex(re, zero)
    else:
        re, im = mul(sin(a), cosh), mul(cos(a), sinh)
        on_axis = make_complex(zero, im)
    return select_n(eq(a, zero), make_complex(re, im), on_axis)


def _sin_cos_lowering(op, cosine: bool) -> _AccurateLowering:
    real_rule = _accurate_unary(op, real_only=True)
    complex_rule = lower_fun(partial(_complex_sin_or_cos, cosine=cosine))

    def rule(ctx, x, accuracy):
        if kind(ctx.avals_in[0].dtype) == "c":
            return complex_rule(ctx, x)
        return real_rule(ctx, x, accuracy)

    return _AccurateLowering(rule)


sin_p = unary_primitive("sin", INEXACT, _sin_cos_lowering(hlo.sine, cosine=False))
defjvp(sin_p, lambda g, x, accuracy=None: mul(g, cos(x, accuracy=accuracy)))
defvectorized(sin_p)
cos_p = unary_primitive("cos", INEXACT, _sin_cos_lowering(hlo.cosine, cosine=True))
defjvp(cos_p, lambda g, x, accuracy=None: neg(mul(g, sin(x, accuracy=accuracy))))
defvectorized(cos_p)
tan_p = unary_primitive("tan", INEXACT, _accurate_unary(hlo.tan))
defjvp2(tan_p, lambda g, ans, x, accuracy=None: mul(g, add(strong_const(x, 1), square(ans))))
defvectorized(tan_p)
asin_p = unary_primitive("asin", INEXACT, _hlo_unary(chlo.asin))
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(strong_const(x, 1), square(x)))))
defvectorized(asin_p)
acos_p = unary_primitive("acos", INEXACT, _hlo_unary(chlo.acos))
defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(strong_const(x, 1), square(x))))))
defvectorized(acos_p)
atan_p = unary_primitive("atan", INEXACT, _hlo_unary(chlo.atan))
defjvp(atan_p, lambda g, x: div(g, add(strong_const(x, 1), square(x))))
defvectorized(atan_p)
sinh_p = unary_primitive("sinh", INEXACT, _hlo_unary(chlo.sinh))
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
defvectorized(sinh_p)
cosh_p = unary_primitive("cosh", INEXACT, _hlo_unary(chlo.cosh))
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
defvectorized(cosh_p)
asinh_p = unary_primitive("asinh", INEXACT, _hlo_unary(chlo.asinh))
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), const(x, 1)))))
defvectorized(asinh_p)
acosh_p = unary_primitive("acosh", INEXACT, _hlo_unary(chlo.acosh))
# JAX's forms (x^2 - 1, not (x - 1)(x + 1); atanh's 1/(1+x) g/(1-x)): JAX's rounding.
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), const(x, 1)))))
defvectorized(acosh_p)
atanh_p = unary_primitive("atanh", INEXACT, _hlo_unary(chlo.atanh))
defjvp(atanh_p, lambda g, x: mul(integer_pow(add(const(x, 1), x), -1), div(g, sub(const(x, 1), x))))
defvectorized(atanh_p)
sqrt_p = unary_primitive("sqrt", INEXACT, _accurate_unary(hlo.sqrt))
# g * (0.5 / ans), grouped as JAX's (the bits depend on it); inf at 0.
defjvp2(sqrt_p, lambda g, ans, x, accuracy=None: mul(g, div(strong_const(x, 0.5), ans)))
defvectorized(sqrt_p)
rsqrt_p = unary_primitive("rsqrt", INEXACT, _accurate_unary(hlo.rsqrt))
defjvp2(rsqrt_p, lambda g, ans, x, accuracy=None: mul(g, mul(strong_const(x, -0.5), div(ans, x))))
defvectorized(rsqrt_p)
cbrt_p = unary_primitive("cbrt", [FLOAT], _accurate_unary(hlo.cbrt))
defjvp2(
    cbrt_p,
    lambda g, ans, x, accuracy=None: mul(g, mul(strong_const(x, 1 / 3), integer_pow(ans, -2))),
)
defvectorized(cbrt_p)
abs_p = unary_primitive("abs", [SIGNED, FLOAT, COMPLEX], _hlo_unary(hlo.abs), result="real")
defjvp2(abs_p, _abs_jvp)
defvectorized(abs_p)
not_p = unary_primitive("not", INT_OR_BOOL, _hlo_unary(hlo.not_))
defjvp_zero(not_p)
defvectorized(not_p)


def _bind_accurate(prim, x, accuracy):
    # No param for the default: the equation reads as JAX prints it (``sin a``).
    return prim.bind(x) if accuracy is None else prim.bind(x, accuracy=accuracy)


_ACCURATE = (exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p, cos_p, tan_p)
_ACCURATE += (sqrt_p, rsqrt_p, cbrt_p)
for _prim in _ACCURATE:  # printed as JAX prints it, read back; hidden when None
    register_param_printer(_prim, "accuracy", format_accuracy)
    register_param_parser(_prim, "accuracy", parse_accuracy)


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


def exp(x, *, accuracy=None):
    """Compute e to the power ``x`` elementwise (jax.lax.exp).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(exp_p, x, accuracy)


def exp2(x, *, accuracy=None):
    """Compute 2 to the power ``x`` elementwise (jax.lax.exp2).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(exp2_p, x, accuracy)


def log(x, *, accuracy=None):
    """Compute the natural logarithm of ``x`` elementwise (jax.lax.log).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(log_p, x, accuracy)


def log1p(x, *, accuracy=None):
    """Compute ``log(1 + x)`` elementwise, accurately near 0 (jax.lax.log1p).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(log1p_p, x, accuracy)


def expm1(x, *, accuracy=None):
    """Compute ``exp(x) - 1`` elementwise, accurately near 0 (jax.lax.expm1).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(expm1_p, x, accuracy)


def tanh(x, *, accuracy=None):
    """Compute the hyperbolic tangent of ``x`` elementwise (jax.lax.tanh).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(tanh_p, x, accuracy)


def logistic(x, *, accuracy=None):
    """Compute the logistic sigmoid ``1 / (1 + exp(-x))`` elementwise (jax.lax.logistic).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(logistic_p, x, accuracy)


def sin(x, *, accuracy=None):
    """Compute the sine of ``x`` elementwise (jax.lax.sin).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(sin_p, x, accuracy)


def cos(x, *, accuracy=None):
    """Compute the cosine of ``x`` elementwise (jax.lax.cos).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(cos_p, x, accuracy)


def tan(x, *, accuracy=None):
    """Compute the tangent of ``x`` elementwise (jax.lax.tan).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(tan_p, x, accuracy)


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


def sqrt(x, *, accuracy=None):
    """Compute the square root of ``x`` elementwise (jax.lax.sqrt).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(sqrt_p, x, accuracy)


def rsqrt(x, *, accuracy=None):
    """Compute ``1 / sqrt(x)`` elementwise (jax.lax.rsqrt).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(rsqrt_p, x, accuracy)


def cbrt(x, *, accuracy=None):
    """Compute the cube root of ``x`` elementwise (jax.lax.cbrt).

    ``accuracy``: an ``AccuracyMode`` or ``Tolerance`` asking XLA for an implementation
    of that accuracy (StableHLO's ``result_accuracy``); None for the default.
    """
    return _bind_accurate(cbrt_p, x, accuracy)


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
defjvp_zero(round_p)
defvectorized(round_p)
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


def _integer_pow_jvp(g, x, *, y):
    if y == 0:
        return Zero(to_aval(g))
    if y == 1:
        return g
    return mul(g, mul(strong_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


def _integer_pow_transpose(ct, x, *, y):
    if y != 1:  # only x ** 1 is linear
        raise NotImplementedError(f"integer_pow with y={y} is not linear: it has no transpose")
    return [ct]


integer_pow_p = Primitive("integer_pow")
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
integer_pow_p.def_impl(partial(apply_primitive, integer_pow_p))
register_lowering(integer_pow_p, _integer_pow_lowering)
defjvp(integer_pow_p, _integer_pow_jvp)
transpose_rules[integer_pow_p] = _integer_pow_transpose
defvectorized(integer_pow_p)


def integer_pow(x, y: int):
    """Raise ``x`` to the static integer power ``y`` elementwise (jax.lax.integer_pow)."""
    import operator

    return integer_pow_p.bind(x, y=operator.index(y))


def _square_lowering(ctx, x):
    # as JAX: x * x for integers, chlo.square otherwise (XLA fuses the two differently)
    if kind(ctx.avals_in[0].dtype) in "iub":
        return hlo.multiply(x, x)
    return chlo.square(x)


square_p = unary_primitive("square", NUM, _square_lowering)
defjvp(square_p, lambda g, x: mul(g, mul(strong_const(x, 2), x)))
defvectorized(square_p)


def square(x):
    """Square ``x`` elementwise (jax.lax.square)."""
    return square_p.bind(x)


# --- the binary family -----------------------------------------------------------------------


def _binary_abstract_eval(name, accepted, out_bool, x, y):
    # Equal dtypes and shapes are the common case of every traced binary op: one check.
    if x.dtype == y.dtype:
        check_dtype(name, x, accepted, 0)
    else:
        check_dtype(name, x, accepted, 0)
        check_dtype(name, y, accepted, 1)
        check_same_dtypes(name, (x, y))
    shape = x.shape if x.shape == y.shape else broadcast_shapes(name, (x.shape, y.shape))
    weak_type = x.weak_type and y.weak_type
    if out_bool:  # comparisons: a bool as weakly typed as the operands together (JAX's)
        return ShapedArray(shape, np.dtype(np.bool_), weak_type)
    if shape == x.shape and weak_type == x.weak_type:
        return x  # avals are immutable: share the operand's (one fewer per equation)
    return ShapedArray(shape, x.dtype, weak_type)


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


def _shape(x) -> tuple[int, ...]:
    return to_aval(x).shape


def _to_result(g, ans, x, y):
    """The tangent of an operand that a binary op passes through: broadcast to the result."""
    return _maybe_broadcast(g, _shape(ans))


def _maybe_broadcast(t, shape: tuple[int, ...]):
    """``t`` broadcast to ``shape`` as JAX's add/sub/rem JVPs do.

    A rank-0 tangent is broadcast directly; otherwise its size-1 axes are first
    reshaped away and the rest broadcast, so that the transpose (reduce_sum, then
    reshape back) and the compiled program are JAX's.
    """
    t_shape = _shape(t)
    if t_shape == shape:
        return t
    if not t_shape:
        return broadcast_in_dim(t, shape, ())
    from .structural import reshape

    kept = tuple(i for i, (a, b) in enumerate(zip(t_shape, shape, strict=True)) if a == b)
    return broadcast_in_dim(reshape(t, tuple(t_shape[i] for i in kept)), shape, kept)


def _additive_jvp(prim, negate_y: bool):
    """The JVP of ``add``/``sub`` as JAX writes it.

    With both tangents the tangent is the op itself on them (its transpose then
    negates the full cotangent before summing it back, as JAX's does); with one
    tangent, that tangent (negated for sub's ``y``) broadcast to the result.
    """

    def rule(primals, tangents):
        ans = prim.bind(*primals)
        tx, ty = tangents
        if type(tx) is Zero and type(ty) is Zero:
            return ans, Zero.from_primal_value(ans)
        if type(tx) is Zero:
            return ans, _maybe_broadcast(neg(ty) if negate_y else ty, _shape(ans))
        if type(ty) is Zero:
            return ans, _maybe_broadcast(tx, _shape(ans))
        return ans, prim.bind(tx, ty)

    return rule


def _operand_aval(v) -> ShapedArray:
    return v.aval if is_undefined_primal(v) else aval_of(v)


def _strong_result(x, y) -> bool:
    """Whether a binary op's result is strongly typed while an operand is weak.

    JAX's ``jnp`` promotion then converts a weak constant operand (its weak type
    dropped: a strong literal); modjax's op may take the constant directly, so a
    transpose multiplies by the converted constant, as JAX's does.
    """
    wx, wy = _operand_aval(x).weak_type, _operand_aval(y).weak_type
    return wx != wy


def _as_converted(v, strong: bool):
    """A known operand as JAX's converted operand: strongly typed when ``strong``."""
    if not strong or not aval_of(v).weak_type:
        return v
    if isinstance(v, PYTHON_SCALARS):  # a literal: JAX's is a strongly typed literal too
        return np.asarray(v, aval_of(v).dtype)[()]
    return _convert_element_type(v, aval_of(v).dtype, weak_type=False)


def _ct_of_operand(operand, ct, strong: bool):
    """The cotangent of an operand: ``ct`` summed back to its shape.

    Its weak type is not restored: where JAX converts a weakly typed traced operand
    (``jnp`` promotion), modjax's jaxpr holds the same ``convert_element_type``, whose
    transpose restores it; a ``lax`` op that takes a weak operand directly (JAX's rules
    do: pow's JVP multiplies a weak tangent by a strong factor) leaves its cotangent
    strong, as JAX's transposes do.
    """
    return unbroadcast(operand.aval, ct)


def _add_transpose(ct, x, y):
    strong = _strong_result(x, y)
    return [
        _ct_of_operand(x, ct, strong) if is_undefined_primal(x) else None,
        _ct_of_operand(y, ct, strong) if is_undefined_primal(y) else None,
    ]


def _sub_transpose(ct, x, y):
    strong = _strong_result(x, y)
    return [
        _ct_of_operand(x, ct, strong) if is_undefined_primal(x) else None,
        _ct_of_operand(y, neg(ct), strong) if is_undefined_primal(y) else None,
    ]


def _div_transpose(ct, x, y):
    if is_undefined_primal(y):
        raise NotImplementedError("div is linear in its dividend only: it has no transpose in y")
    strong = _strong_result(x, y)
    return [_ct_of_operand(x, div(ct, _as_converted(y, strong)), strong), None]


def _mul_transpose_lhs(ct, x, y):
    strong = _strong_result(x, y)
    return _ct_of_operand(x, mul(ct, _as_converted(y, strong)), strong)


def _mul_transpose_rhs(ct, x, y):
    strong = _strong_result(x, y)
    return _ct_of_operand(y, mul(_as_converted(x, strong), ct), strong)


def _rem_jvp_rhs(g, ans, x, y):
    # d rem(x, y) / dy = -trunc(x / y), with x / y formed twice as in JAX's rule.
    return mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y)))))


def _filled(ans, value):
    """``value`` in ``ans``'s type and shape (JAX's ``full_like``): a literal at rank 0."""
    c = const(ans, value)
    shape = _shape(ans)
    return broadcast_in_dim(c, shape, ()) if shape else c


def _select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def _minmax_share(x, y, ans):
    """The share of x in d(max(x, y)) (or min): 1 where x alone is the result, 0.5 on ties.

    Formed as JAX's ``_balanced_eq`` is, select(x == ans, 1, 0) / select(y == ans, 2, 1)
    (equations in JAX's order), so that the compiled derivative is JAX's.
    """
    mine = _select(eq(x, ans), _filled(ans, 1), _filled(ans, 0))
    tie = _select(eq(y, ans), _filled(ans, 2), _filled(ans, 1))
    return div(mine, tie)


def _minmax_jvp_lhs(g, ans, x, y):
    return mul(g, _minmax_share(x, y, ans))


def _minmax_jvp_rhs(g, ans, x, y):
    return mul(g, _minmax_share(y, x, ans))


def _atan2_jvp(g, x, y, *, wrt_x: bool):
    numerator = y if wrt_x else neg(x)  # d atan2(x, y) = (y dx - x dy) / (x^2 + y^2)
    return mul(g, div(numerator, add(square(x), square(y))))


add_p = binary_primitive("add", NUM, _hlo_binary(hlo.add))
jvp_rules[add_p] = _additive_jvp(add_p, negate_y=False)
transpose_rules[add_p] = _add_transpose
defbroadcasting(add_p)
sub_p = binary_primitive("sub", NUM, _hlo_binary(hlo.subtract))
jvp_rules[sub_p] = _additive_jvp(sub_p, negate_y=True)
transpose_rules[sub_p] = _sub_transpose
defbroadcasting(sub_p)
mul_p = binary_primitive("mul", NUM, _hlo_binary(hlo.multiply))
defbilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)
defbroadcasting(mul_p)
div_p = binary_primitive("div", NUM, _hlo_binary(hlo.divide))
# d(x / y)/dy as JAX writes it, -g * x * y**-2 (not -g * ans / y: the bits differ).
defjvp(div_p, lambda g, x, y: div(g, y), lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
transpose_rules[div_p] = _div_transpose
defbroadcasting(div_p)
rem_p = binary_primitive("rem", [INT, FLOAT], _hlo_binary(hlo.remainder))
defjvp2(rem_p, _to_result, _rem_jvp_rhs)
defbroadcasting(rem_p)
max_p = binary_primitive("max", ANY, _minmax_lowering(hlo.maximum, "GT"))
defjvp2(max_p, _minmax_jvp_lhs, _minmax_jvp_rhs)
defbroadcasting(max_p)
min_p = binary_primitive("min", ANY, _minmax_lowering(hlo.minimum, "LT"))
defjvp2(min_p, _minmax_jvp_lhs, _minmax_jvp_rhs)
defbroadcasting(min_p)
atan2_p = binary_primitive("atan2", INEXACT, _hlo_binary(hlo.atan2))
defjvp(atan2_p, partial(_atan2_jvp, wrt_x=True), partial(_atan2_jvp, wrt_x=False))
defbroadcasting(atan2_p)
and_p = binary_primitive("and", INT_OR_BOOL, _hlo_binary(hlo.and_))
defjvp_zero(and_p)
defbroadcasting(and_p)
or_p = binary_primitive("or", INT_OR_BOOL, _hlo_binary(hlo.or_))
defjvp_zero(or_p)
defbroadcasting(or_p)
xor_p = binary_primitive("xor", INT_OR_BOOL, _hlo_binary(hlo.xor))
defjvp_zero(xor_p)
defbroadcasting(xor_p)
shift_left_p = binary_primitive("shift_left", [INT], _hlo_binary(hlo.shift_left))
defjvp_zero(shift_left_p)
defbroadcasting(shift_left_p)
shift_right_logical_p = binary_primitive(
    "shift_right_logical", [INT], _hlo_binary(hlo.shift_right_logical)
)
defjvp_zero(shift_right_logical_p)
defbroadcasting(shift_right_logical_p)
shift_right_arithmetic_p = binary_primitive(
    "shift_right_arithmetic", [INT], _hlo_binary(hlo.shift_right_arithmetic)
)
defjvp_zero(shift_right_arithmetic_p)
defbroadcasting(shift_right_arithmetic_p)
nextafter_p = binary_primitive("nextafter", [FLOAT], _hlo_binary(chlo.next_after))
# No JVP rule, as in JAX: differentiating nextafter raises NotImplementedError.
defbroadcasting(nextafter_p)


def _equality_abstract_eval(name, x, y):
    # As JAX's eq/ne: arrays of one extended dtype (PRNG keys) compare whole elements; their
    # lowering is extended_rules'.
    if isinstance(x.dtype, dtypes.ExtendedDType) and x.dtype == y.dtype:
        shape = x.shape if x.shape == y.shape else broadcast_shapes(name, (x.shape, y.shape))
        return ShapedArray(shape, np.dtype(np.bool_))
    return _binary_abstract_eval(name, ANY, True, x, y)


eq_p = binary_primitive("eq", ANY, _compare_lowering("EQ"), out_bool=True)
eq_p.def_abstract_eval(partial(_equality_abstract_eval, "eq"))
defjvp_zero(eq_p)
defbroadcasting(eq_p)
ne_p = binary_primitive("ne", ANY, _compare_lowering("NE"), out_bool=True)
ne_p.def_abstract_eval(partial(_equality_abstract_eval, "ne"))
defjvp_zero(ne_p)
defbroadcasting(ne_p)
lt_p = binary_primitive("lt", [INT, FLOAT, BOOL], _compare_lowering("LT"), out_bool=True)
defjvp_zero(lt_p)
defbroadcasting(lt_p)
le_p = binary_primitive("le", [INT, FLOAT, BOOL], _compare_lowering("LE"), out_bool=True)
defjvp_zero(le_p)
defbroadcasting(le_p)
gt_p = binary_primitive("gt", [INT, FLOAT, BOOL], _compare_lowering("GT"), out_bool=True)
defjvp_zero(gt_p)
defbroadcasting(gt_p)
ge_p = binary_primitive("ge", [INT, FLOAT, BOOL], _compare_lowering("GE"), out_bool=True)
defjvp_zero(ge_p)
defbroadcasting(ge_p)


def _total_order_lowering(direction):
    # Floats compare by IEEE total order (-NaN < -inf < -0 < +0 < inf < NaN), as sorting
    # does; other dtypes as the plain comparisons.
    def rule(ctx, x, y):
        ax, ay = ctx.avals_in
        shape = ctx.avals_out[0].shape
        x, y = broadcast_to(x, ax, shape), broadcast_to(y, ay, shape)
        if kind(ax.dtype) not in "fc":
            return compare(x, y, direction, ax.dtype)
        return hlo.compare(
            x,
            y,
            hlo.ComparisonDirectionAttr.get(direction),
            compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"),
        )

    return rule


# JAX's total-order comparison primitives (lax.eq_to_p, le_to_p, lt_to_p): no wrapper
# function, bound directly.
eq_to_p = binary_primitive("eq_to", ANY, _total_order_lowering("EQ"), out_bool=True)
le_to_p = binary_primitive("le_to", [INT, FLOAT, BOOL], _total_order_lowering("LE"), out_bool=True)
lt_to_p = binary_primitive("lt_to", [INT, FLOAT, BOOL], _total_order_lowering("LT"), out_bool=True)
for _prim in (eq_to_p, le_to_p, lt_to_p):
    defjvp_zero(_prim)
    defbroadcasting(_prim)


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


def mul(x, y, *, out_dtype=None):
    """Multiply ``x`` and ``y`` elementwise (jax.lax.mul).

    With ``out_dtype`` the operands (which may then differ in dtype) are converted
    to it before multiplying, so the product has that dtype.
    """
    if out_dtype is not None:
        out_dtype = dtypes.check_and_canonicalize_user_dtype(out_dtype, "mul")
        x, y = convert_element_type(x, out_dtype), convert_element_type(y, out_dtype)
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


def _replace_zero(x):
    """``x`` with its zeros replaced by ones (JAX's ``_replace_zero``)."""
    return _select(eq(x, const(x, 0)), _filled(x, 1), x)


def _pow_jvp_lhs(g, ans, x, y):
    """d(x ** y)/dx = y x ** (y - 1); 0 where an integer y is 0 (JAX's conventions).

    Formed as JAX's: both operands converted to the result dtype first (strongly typed,
    so the tangent and a weak base's cotangent are strong:
    ``grad(lambda x: (x ** jnp.arange(3)).sum())(2.0)``), and for an integer ``y`` both
    broadcast to the result, zeros of ``y`` replaced before multiplying.
    """
    dtype = to_aval(x).dtype
    integer_y = kind(to_aval(y).dtype) in "iu"
    x = _convert_element_type(x, dtype, weak_type=False)
    y = _convert_element_type(y, dtype, weak_type=False)
    if not integer_y:
        return mul(g, mul(y, pow(x, sub(y, _filled(y, 1)))))
    if _shape(x) != _shape(y):
        x, y = _maybe_broadcast(x, _shape(ans)), _maybe_broadcast(y, _shape(ans))
    jac = _select(
        eq(y, const(y, 0)),
        _filled(y, 0),
        mul(_replace_zero(y), pow(x, sub(y, _filled(y, 1)))),
    )
    return mul(g, jac)


def _pow_jvp_rhs(g, ans, x, y):
    """d(x ** y)/dy = log(x) x ** y, taking log(1) where x is 0 (so 0 there, as JAX).

    Strongly typed in y's dtype, as JAX's.
    """
    return _convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), to_aval(y).dtype)


pow_p = Primitive("pow")
pow_p.def_abstract_eval(_pow_abstract_eval)
pow_p.def_impl(partial(apply_primitive, pow_p))
register_lowering(pow_p, _pow_lowering)
defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
defbroadcasting(pow_p)


def pow(x, y):  # noqa: A001 - JAX's public name
    """Raise ``x`` to the power ``y`` elementwise; ``y`` may be an integer array (jax.lax.pow)."""
    return _bind_binary(pow_p, x, y)


# --- convert_element_type --------------------------------------------------------------------


def _convert_element_type_abstract_eval(aval, *, new_dtype, weak_type):
    if kind(new_dtype) == "?" or kind(aval.dtype) == "?":
        raise ValueError(  # JAX's class and words
            f"Cannot convert_element_type from {dtypes.dtype_name(aval.dtype)} to "
            f"{dtypes.dtype_name(new_dtype)}"
        )
    return ShapedArray(aval.shape, new_dtype, weak_type)


def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type):
    return convert(x, ctx.avals_in[0], ctx.avals_out[0])


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if kind(new_dtype) not in "fc":  # integer and bool results have float0 tangents
        return out, Zero.from_primal_value(out)
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_element_type_transpose(ct, x, *, new_dtype, weak_type):
    aval = x.aval
    if kind(aval.dtype) not in "fc":
        return [Zero(tangent_aval(aval))]
    return [_convert_element_type(ct, aval.dtype, aval.weak_type)]


convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.def_abstract_eval(_convert_element_type_abstract_eval)
convert_element_type_p.def_impl(partial(apply_primitive, convert_element_type_p))
register_lowering(convert_element_type_p, _convert_element_type_lowering)
jvp_rules[convert_element_type_p] = _convert_element_type_jvp
transpose_rules[convert_element_type_p] = _convert_element_type_transpose
defvectorized(convert_element_type_p)


def convert_element_type(operand, new_dtype):
    """Cast ``operand`` elementwise to ``new_dtype`` (jax.lax.convert_element_type).

    ``new_dtype`` is canonicalized (float64 becomes float32 with x64 off); the
    result is not weakly typed. Floats convert to integers by truncation toward
    zero (out-of-range values as XLA defines), complex to real keeps the real
    part, and anything to bool tests ``!= 0``. An explicit 64-bit ``new_dtype``
    with x64 off warns, as in JAX.
    """
    new_dtype = dtypes.check_and_canonicalize_user_dtype(new_dtype, "convert_element_type")
    jax_array = getattr(operand, "__jax_array__", None)  # JAX converts such objects here
    if jax_array is not None:
        operand = jax_array()
    return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand, new_dtype, weak_type: bool = False):
    """Cast ``operand`` to ``new_dtype`` with the given weak type; a no-op when nothing changes."""
    new_dtype = dtypes.canonicalize_dtype(dtypes.dtype(new_dtype), allow_extended_dtype=True)
    if not isinstance(operand, PYTHON_SCALARS) and not isinstance(operand, np.ndarray | np.generic):
        aval = aval_of(operand)
        if aval.dtype == new_dtype and aval.weak_type == weak_type:
            return with_array_values(operand)
        if isinstance(aval.dtype, dtypes.PrimalTangentDType):  # out of a primal-tangent dtype
            from .edtype import from_edtype_p

            return from_edtype_p.bind(operand, dtype=new_dtype)
    if isinstance(new_dtype, dtypes.PrimalTangentDType):
        from .edtype import to_edtype_p

        return to_edtype_p.bind(operand, edtype=new_dtype)
    if not weak_type and isinstance(operand, _HOST_SCALARS):
        host = _host_converted(operand, new_dtype)
        if host is not None:
            from .array_helpers import stage

            return stage(host)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))


_HOST_SCALARS = (*PYTHON_SCALARS, np.generic)


def _host_converted(operand, new_dtype):
    """NumPy's cast of a Python or NumPy scalar to ``new_dtype``, or None where JAX casts in XLA.

    JAX converts such a scalar on the host, from its own precision: the Python
    float 16777217.5 becomes the int32 16777217 (not 16777216, a cast through
    float32 would give). A non-finite float to an integer, float0 and a value
    NumPy cannot represent (OverflowError) are left to XLA's convert, as in JAX.
    """
    if isinstance(new_dtype, dtypes.ExtendedDType) or new_dtype == dtypes.float0:
        return None  # keys and float0 are XLA's (or the primitive's) to refuse
    inexact = isinstance(operand, float | complex | np.inexact)
    if inexact and not np.isfinite(operand) and kind(new_dtype) in "iu":
        return None
    try:
        if type(operand) is int:  # a wide Python int wraps as NumPy's int64 cast does
            return np.asarray(operand).astype(new_dtype)
        return np.asarray(operand, dtype=new_dtype)
    except OverflowError:
        return None


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


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if all(type(t) is Zero for t in tangents[1:]):
        return out, Zero.from_primal_value(out)
    return out, select_n_p.bind(which, *map(instantiate, tangents[1:]))


def _select_n_transpose(ct, which, *cases):
    if is_undefined_primal(which):
        raise NotImplementedError("select_n is not linear in its predicate `which`")
    zero = zeros(to_aval(ct))
    return [None] + [
        select_n_p.bind(which, *[ct if j == i else zero for j in range(len(cases))])
        if is_undefined_primal(case)
        else None
        for i, case in enumerate(cases)
    ]


def _select_n_batching_rule(args, dims):
    which, *cases = args
    which_dim, *case_dims = dims
    size = batch_size(args, dims)
    which_rank = to_aval(which).ndim - (which_dim is not None)
    if which_dim is None and which_rank == 0:  # a scalar predicate: align the cases only
        out_dim = next(d for d in case_dims if d is not None)
        cases = [matchaxis(size, d, out_dim, c) for c, d in zip(cases, case_dims, strict=True)]
        return select_n_p.bind(which, *cases), out_dim
    case_rank = to_aval(cases[0]).ndim - (case_dims[0] is not None)
    if which_rank == case_rank and all(d == which_dim for d in case_dims):
        return select_n_p.bind(which, *cases), which_dim
    cases = [bdim_at_front(c, d, size) for c, d in zip(cases, case_dims, strict=True)]
    which = bdim_at_front(which, which_dim, size)
    if which_rank == 0 and case_rank:  # a batch of scalar predicates
        which = broadcast_in_dim(which, _shape(cases[0]), (0,))
    return select_n_p.bind(which, *cases), 0


select_n_p = Primitive("select_n")
select_n_p.def_abstract_eval(_select_n_abstract_eval)
select_n_p.def_impl(partial(apply_primitive, select_n_p))
register_lowering(select_n_p, _select_n_lowering)
jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose
batching_rules[select_n_p] = _select_n_batching_rule


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


def _clamp_jvp_bound(g, lo, x, hi, *, above: bool):
    """The tangent of a bound where it is the result (strictly), 0 elsewhere (as JAX)."""
    active = gt(lo, x) if not above else lt(hi, x)
    return select_n(active, zeros(to_aval(x)), brcast(g, _shape(x)))


def _clamp_jvp_operand(g, lo, x, hi):
    inside = bitwise_and(gt(x, lo), lt(x, hi))  # 0 on the bounds themselves, as JAX
    return select_n(inside, zeros(to_aval(g)), g)


def _clamp_batching_rule(args, dims):
    lo, x, hi = args
    lo_dim, x_dim, hi_dim = dims
    if lo_dim is None and hi_dim is None and not _shape(lo) and not _shape(hi):
        return clamp_p.bind(lo, x, hi), x_dim
    size = batch_size(args, dims)
    x = bdim_at_front(x, x_dim, size)
    shape = _shape(x)

    def bound(b, d):  # scalar bounds stay scalars; others become batched arrays of x's shape
        if d is None and not _shape(b):
            return b
        b = bdim_at_front(b, d, size)
        if _shape(b) != shape:  # a batch of scalar bounds
            b = broadcast_in_dim(b, shape, (0,))
        return b

    return clamp_p.bind(bound(lo, lo_dim), x, bound(hi, hi_dim)), 0


clamp_p = Primitive("clamp")
clamp_p.def_abstract_eval(_clamp_abstract_eval)
clamp_p.def_impl(partial(apply_primitive, clamp_p))
register_lowering(clamp_p, _clamp_lowering)
defjvp(
    clamp_p,
    partial(_clamp_jvp_bound, above=False),
    _clamp_jvp_operand,
    partial(_clamp_jvp_bound, above=True),
)
batching_rules[clamp_p] = _clamp_batching_rule


def clamp(min, x, max):  # noqa: A002 - JAX's argument names
    """Clip ``x`` elementwise to ``[min, max]``, bounds of rank 0 or x's shape (jax.lax.clamp)."""
    if type(min) in PYTHON_SCALARS or type(max) in PYTHON_SCALARS:
        x, min, max = convert_weak_scalars((x, min, max))  # x first: it sets the dtype
    return clamp_p.bind(min, x, max)


# --- reduce_precision ----------------------------------------------------------------------------


def _reduce_precision_abstract_eval(operand, *, exponent_bits, mantissa_bits):
    check_dtype("reduce_precision", operand, [FLOAT])
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}"
        )
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _reduce_precision_lowering(ctx, x, *, exponent_bits, mantissa_bits):
    return hlo.ReducePrecisionOp(
        x, exponent_bits, mantissa_bits, results=[ir_type(ctx.avals_out[0])]
    ).result


reduce_precision_p = Primitive("reduce_precision")
reduce_precision_p.def_abstract_eval(_reduce_precision_abstract_eval)
reduce_precision_p.def_impl(partial(apply_primitive, reduce_precision_p))
register_lowering(reduce_precision_p, _reduce_precision_lowering)
deflinear(
    reduce_precision_p,
    lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)],
)
defvectorized(reduce_precision_p)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round ``operand`` to a float format with fewer bits (jax.lax.reduce_precision).

    The format has ``exponent_bits`` exponent and ``mantissa_bits`` mantissa bits;
    the result keeps ``operand``'s dtype, and values that overflow the narrower
    format become infinities, as XLA's ``reduce-precision`` does.
    """
    if type(operand) in (int, float):
        operand = np.asarray(operand, dtypes.canonicalize_dtype(np.float64))
    return reduce_precision_p.bind(
        operand,
        exponent_bits=operator.index(exponent_bits),
        mantissa_bits=operator.index(mantissa_bits),
    )
