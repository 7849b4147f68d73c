"""Cumulative reductions along an axis: ``cumsum``, ``cumprod``, ``cummax``, ``cummin``,
``cumlogsumexp`` (each with ``reverse``).

Each primitive lowers, as JAX does on CPU, to a ``stablehlo.reduce_window``
whose window spans the whole axis, padded on one side with the monoid's
identity. ``cumsum`` is linear (its transpose is the cumsum the other way);
the others differentiate as JAX does: by the JVP of an associative scan over
(value, tangent) pairs, which for ``cummax``/``cummin`` splits the tangent
evenly between tied values at each combine.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from modjax.autodiff import Zero, deflinear, jvp_rules
from modjax.batching import defreducer
from modjax.lowering import hlo, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from ._common import NUMBER, aval_of, check_dtype, compare, constant, kind, real_dtype
from .reductions import _extreme, _lexicographic
from .windowed import lower_monoid_window

__all__ = [
    "cumlogsumexp",
    "cumlogsumexp_p",
    "cummax",
    "cummax_p",
    "cummin",
    "cummin_p",
    "cumprod",
    "cumprod_p",
    "cumsum",
    "cumsum_p",
]


def _abstract_eval(name, accepted, operand, *, axis, reverse):
    check_dtype(name, operand, accepted)
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _lowering(combine, identity, ctx, x, *, axis, reverse):
    aval = ctx.avals_in[0]
    n = aval.shape[axis]
    if n == 0:
        return x
    ones = (1,) * aval.ndim
    window = tuple(n if i == axis else 1 for i in range(aval.ndim))
    pad = (0, n - 1) if reverse else (n - 1, 0)
    padding = tuple(pad if i == axis else (0, 0) for i in range(aval.ndim))
    return lower_monoid_window(
        ctx.avals_out[0],
        x,
        aval.dtype,
        combine,
        identity(aval.dtype),
        window_dimensions=window,
        window_strides=ones,
        padding=padding,
        base_dilation=ones,
        window_dilation=ones,
    )


def _logaddexp_combine(x, y, dtype):
    """``log(exp(x) + exp(y))`` without overflow; ``x + y`` where ``x - y`` is NaN (infinities).

    Complex values take JAX's complex formula (``_complex_logaddexp_combine``); other
    dtypes raise JAX's ValueError here, when the program is lowered, as in JAX.
    """
    k = kind(dtype)
    if k == "c":
        return _complex_logaddexp_combine(x, y, dtype)
    if k != "f":
        raise ValueError(
            f"logaddexp requires floating-point or complex inputs; got {dtypes.dtype_name(dtype)}"
        )
    big = hlo.maximum(x, y)
    diff = hlo.subtract(x, y)
    undefined = compare(diff, diff, "NE", dtype)
    stable = hlo.add(big, hlo.log_plus_one(hlo.exponential(hlo.negate(hlo.abs(diff)))))
    return hlo.select(undefined, hlo.add(x, y), stable)


def _complex_logaddexp_combine(x, y, dtype):
    """JAX's complex logaddexp, op for op: ``m + log1p(exp(x + y - 2m))`` for the
    lexicographic maximum ``m``, its imaginary part wrapped into ``[-pi, pi)``."""
    part = real_dtype(dtype)
    big = _lexicographic(hlo.maximum, "GT")(x, y, dtype)
    delta = hlo.subtract(hlo.add(x, y), hlo.multiply(big, constant(2, dtype)))
    out = hlo.add(big, hlo.log_plus_one(hlo.exponential(delta)))
    pi, two_pi = constant(np.pi, part), constant(2 * np.pi, part)
    rem = hlo.remainder(hlo.add(hlo.imag(out), pi), two_pi)
    negative = compare(rem, constant(0, part), "LT", part)
    rem = hlo.select(negative, hlo.add(rem, two_pi), rem)
    return hlo.complex(hlo.real(out), hlo.subtract(rem, pi))


def _plain(op):
    return lambda x, y, dtype: op(x, y)


def _declare(name, accepted, combine, identity) -> Primitive:
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_abstract_eval, name, accepted))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, partial(_lowering, combine, identity))
    defreducer(prim, "axis", keepdims=True)
    return prim


cumsum_p = _declare("cumsum", [NUMBER], _plain(hlo.add), lambda d: 0)
cumprod_p = _declare("cumprod", [NUMBER], _plain(hlo.multiply), lambda d: 1)
cummax_p = _declare(
    "cummax",
    [NUMBER],
    _lexicographic(hlo.maximum, "GT"),
    lambda d: _extreme(d, largest=False),
)
cummin_p = _declare(
    "cummin",
    [NUMBER],
    _lexicographic(hlo.minimum, "LT"),
    lambda d: _extreme(d, largest=True),
)
# Any number type passes the type check, as in JAX: integers fail when lowered (logaddexp's
# ValueError); complex values combine with JAX's complex logaddexp.
cumlogsumexp_p = _declare("cumlogsumexp", [NUMBER], _logaddexp_combine, lambda d: -np.inf)

deflinear(
    cumsum_p, lambda ct, x, *, axis, reverse: [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]
)


# --- associative scan -----------------------------------------------------------------------


# --- JVPs of the non-linear cumulative ops --------------------------------------------------


def _prod_pair(a, b):
    from .elementwise import add, mul

    (x, tx), (y, ty) = a, b
    return mul(x, y), add(mul(tx, y), mul(x, ty))


def _chooser_pair(choose, a, b):
    """max/min of pairs, each tangent weighted by 1 if its value alone wins, 1/2 on a tie."""
    from .elementwise import add, convert_element_type, div, eq, mul

    (x, tx), (y, ty) = a, b
    m = choose(x, y)
    dtype = aval_of(tx).dtype
    x_wins = convert_element_type(eq(x, m), dtype)
    y_wins = convert_element_type(eq(y, m), dtype)
    one = np.ones((), dtype)
    wx = div(x_wins, add(y_wins, one))
    wy = div(y_wins, add(x_wins, one))
    return m, add(mul(tx, wx), mul(ty, wy))


def _complex_logaddexp(x, y):
    """JAX's complex logaddexp on arrays (the primal of the complex scan's combine)."""
    from .bits import complex as make_complex
    from .bits import imag, real
    from .elementwise import add, exp, log1p, lt, max, mul, rem, select_n, sub

    big = max(x, y)
    out = add(big, log1p(exp(sub(add(x, y), mul(big, np.asarray(2, aval_of(big).dtype))))))
    part = real_dtype(aval_of(out).dtype)
    pi, two_pi = np.asarray(np.pi, part), np.asarray(2 * np.pi, part)
    wrapped = rem(add(imag(out), pi), two_pi)
    wrapped = select_n(lt(wrapped, np.zeros((), part)), wrapped, add(wrapped, two_pi))
    return make_complex(real(out), sub(wrapped, pi))


def _logaddexp_pair(a, b):
    from .bits import real
    from .elementwise import abs, add, eq, exp, log1p, max, mul, ne, neg, select_n, sub
    from .structural import full_like

    (x, tx), (y, ty) = a, b
    if kind(aval_of(x).dtype) == "c":
        m = _complex_logaddexp(x, y)
    else:
        diff = sub(x, y)
        stable = add(max(x, y), log1p(exp(neg(abs(diff)))))
        m = select_n(ne(diff, diff), stable, add(x, y))

    def finite(v):  # +inf (of the real part) counts as 0 in the weights, as in JAX's JVP
        re = real(v) if kind(aval_of(v).dtype) == "c" else v
        return select_n(eq(re, full_like(re, np.inf)), v, full_like(v, 0))

    wx = exp(sub(finite(x), finite(m)))
    wy = exp(sub(finite(y), finite(m)))
    return m, add(mul(tx, wx), mul(ty, wy))


def _scan_jvp(prim, pair_fn, primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = prim.bind(x, axis=axis, reverse=reverse)
    if type(t) is Zero:
        return out, Zero(t.aval)
    from .control_flow.associative_scan import associative_scan

    _, t_out = associative_scan(pair_fn, (x, t), reverse=reverse, axis=axis)
    return out, t_out


def _max_fn(x, y):
    from .elementwise import max as lax_max

    return lax_max(x, y)


def _min_fn(x, y):
    from .elementwise import min as lax_min

    return lax_min(x, y)


jvp_rules[cumprod_p] = partial(_scan_jvp, cumprod_p, _prod_pair)
jvp_rules[cummax_p] = partial(_scan_jvp, cummax_p, partial(_chooser_pair, _max_fn))
jvp_rules[cummin_p] = partial(_scan_jvp, cummin_p, partial(_chooser_pair, _min_fn))
jvp_rules[cumlogsumexp_p] = partial(_scan_jvp, cumlogsumexp_p, _logaddexp_pair)


# --- public functions ----------------------------------------------------------------------------


def _bind(prim, operand, axis, reverse):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{prim.name} axis must be an integer, got {axis!r}") from None
    if axis < 0:
        raise ValueError("XLA operations do not allow negative axes")
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis: int = 0, reverse: bool = False):
    """Return the running sum of ``operand`` along ``axis`` (jax.lax.cumsum).

    The dtype is kept (int8 stays int8 and wraps); ``reverse`` sums from the end.
    """
    return _bind(cumsum_p, operand, axis, reverse)


def cumprod(operand, axis: int = 0, reverse: bool = False):
    """Return the running product of ``operand`` along ``axis`` (jax.lax.cumprod)."""
    return _bind(cumprod_p, operand, axis, reverse)


def cummax(operand, axis: int = 0, reverse: bool = False):
    """Return the running maximum of ``operand`` along ``axis``; NaN propagates (jax.lax.cummax)."""
    return _bind(cummax_p, operand, axis, reverse)


def cummin(operand, axis: int = 0, reverse: bool = False):
    """Return the running minimum of ``operand`` along ``axis``; NaN propagates (jax.lax.cummin)."""
    return _bind(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """Return the running ``log(sum(exp(x)))`` along ``axis`` (jax.lax.cumlogsumexp).

    Complex values combine as JAX's complex ``logaddexp`` (imaginary parts wrapped
    into ``[-pi, pi)``); an integer operand fails as in JAX, whose -inf identity
    cannot be an integer.
    """
    if kind(aval_of(operand).dtype) in "iu":
        raise OverflowError("cannot convert float infinity to integer")
    return _bind(cumlogsumexp_p, operand, axis, reverse)
