"""Reductions over axes: ``reduce_sum/prod/max/min/and/or/xor`` and ``argmax/argmin``.

Each monoid reduction is declared from one line (name, accepted dtypes, the
combining op and its identity); ``argmax``/``argmin`` lower to a variadic
``stablehlo.reduce`` over (value, index) pairs that returns the first index of
the extreme value, with NaN counting as the extreme (as numpy does).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import defjvp_zero, deflinear, jvp_rules
from modjax.batching import defreducer
from modjax.lowering import hlo, ir, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.sharding.constraint import resharded_result
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.options import allow_f16_reductions

from ._common import (
    ANY,
    NUMBER,
    Category,
    check_dtype,
    compare,
    constant,
    kind,
    real_dtype,
    reducer_region,
)
from ._rules import const, zeros
from .elementwise import _convert_element_type, add, div, eq, mul
from .structural import broadcast_in_dim_p, pad_p, reshape, slice_p, transpose, typed_as

__all__ = [
    "argmax",
    "argmin",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
]


def _check_axes(name: str, operand: ShapedArray, axes: tuple[int, ...]) -> None:
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if any(not 0 <= a < operand.ndim for a in axes):
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for {operand.str_short()}."
        )


def _reduce_abstract_eval(name, accepted, operand, *, axes):
    if accepted is None:  # the logical reductions
        if kind(operand.dtype) not in "biu":
            raise TypeError(
                "logical reduction requires operand dtype bool or int, got "
                f"{dtypes.dtype_name(operand.dtype)}."
            )
    else:
        check_dtype(name, operand, accepted)
    _check_axes(name, operand, axes)
    shape = tuple(d for i, d in enumerate(operand.shape) if i not in axes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _extreme(dtype: np.dtype, largest: bool):
    """The identity of min (``largest``) or max: the extreme value of ``dtype``."""
    k = kind(dtype)
    if k == "b":
        return largest
    if k in "iu":
        info = dtypes.iinfo(dtype)
        return int(info.max if largest else info.min)
    inf = np.inf if largest else -np.inf
    return complex(inf, inf) if k == "c" else inf


def _lexicographic(op: Callable, direction: str) -> Callable:
    """max/min of complex scalars: compare real parts, then imaginary parts."""

    def combine(x, y, dtype):
        if kind(dtype) != "c":
            return op(x, y)
        part = real_dtype(dtype)
        rx, ry, ix, iy = hlo.real(x), hlo.real(y), hlo.imag(x), hlo.imag(y)
        pick_x = hlo.select(
            compare(rx, ry, "EQ", part),
            compare(ix, iy, direction, part),
            compare(rx, ry, direction, part),
        )
        return hlo.select(pick_x, x, y)

    return combine


def _reduce_lowering(combine, identity, ctx, x, *, axes):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    dtype = aval_in.dtype
    op = hlo.ReduceOp([ir_type(aval_out)], [x], [constant(identity(dtype), dtype)], list(axes))
    block = reducer_region(op, dtype)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments, dtype)])
    return op.result


def _plain(op):
    return lambda x, y, dtype: op(x, y)


def reduce_primitive(
    name: str, accepted: Sequence[Category] | None, combine: Callable, identity: Callable
) -> Primitive:
    """Declare a reduction by a monoid: ``combine(x, y, dtype)`` with ``identity(dtype)``.

    ``accepted`` lists the operand's dtype categories (None: bool or integer,
    with the logical reductions' error message).
    """
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_reduce_abstract_eval, name, accepted))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, partial(_reduce_lowering, combine, identity))
    return prim


def _kept(ndim: int, axes) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_sum_transpose(ct, x, *, axes):
    shape = x.aval.shape
    out = broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=_kept(len(shape), axes))
    return [typed_as(out, x.aval.type_sharding)]


def _rows(v, start: int, stop: int):
    """Rows ``start:stop`` of ``v`` (along its first axis)."""
    shape = to_aval(v).shape
    rest = (0,) * (len(shape) - 1)
    return slice_p.bind(
        v, start_indices=(start, *rest), limit_indices=(stop, *shape[1:]), strides=None
    )


def _reduce_prod_jvp(primals, tangents, *, axes):
    """Differentiate a product by a tree of pairwise products (exact with zeros, as JAX).

    The reduced axes are flattened into a leading axis of length n, then halves are
    multiplied together, d(a b) = da b + a db, until one row is left: the tangent
    is linear in ``t`` and costs O(log n) steps.
    """
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    shape = to_aval(x).shape
    kept = _kept(len(shape), axes)
    n = math.prod(shape[a] for a in axes)
    if n == 0:
        return ans, zeros(to_aval(ans))
    rest = tuple(shape[i] for i in kept)

    def rows(v):
        return reshape(transpose(v, (*axes, *kept)), (n, *rest))

    x, t = rows(x), rows(t)
    while n > 1:
        if n % 2:  # pad with a row of ones (zeros for the tangent)
            config = ((0, 1, 0), *((0, 0, 0) for _ in rest))
            x = pad_p.bind(x, const(x, 1), padding_config=config)
            t = pad_p.bind(t, const(t, 0), padding_config=config)
            n += 1
        half = n // 2
        xa, xb = _rows(x, 0, half), _rows(x, half, n)
        ta, tb = _rows(t, 0, half), _rows(t, half, n)
        x, t, n = mul(xa, xb), add(mul(ta, xb), mul(xa, tb)), half
    return ans, reshape(t, rest)


def _reduce_chooser_jvp(prim, primals, tangents, *, axes):
    """The tangent of a max/min reduction: the mean of the tangents of the elements chosen.

    Ties split the derivative evenly, as JAX does.
    """
    (x,), (t,) = primals, tangents
    ans = prim.bind(x, axes=axes)
    aval = to_aval(x)
    kept = _kept(aval.ndim, axes)
    spread = broadcast_in_dim_p.bind(ans, shape=aval.shape, broadcast_dimensions=kept)
    chosen = _convert_element_type(eq(x, spread), aval.dtype, aval.weak_type)
    count = reduce_sum_p.bind(chosen, axes=axes)
    return ans, div(reduce_sum_p.bind(mul(t, chosen), axes=axes), count)


reduce_sum_p = reduce_primitive("reduce_sum", [NUMBER], _plain(hlo.add), lambda d: 0)


def _reduce_sum_abstract_eval(operand, *, axes):
    # jax_allow_f16_reductions=False: a half-precision sum over more than one element
    # raises (JAX's dtype rule); jnp.sum is unaffected, it accumulates in float32.
    if (
        not allow_f16_reductions.value
        and operand.dtype.name in ("float16", "bfloat16")
        and any(operand.shape[a] != 1 for a in axes)
    ):
        raise ValueError(
            f"reduce_sum on operand {operand.str_short(short_dtypes=True)} is not allowed when "
            "jax_allow_f16_reductions=False."
        )
    return _reduce_abstract_eval("reduce_sum", [NUMBER], operand, axes=axes)


reduce_sum_p.def_abstract_eval(_reduce_sum_abstract_eval)
deflinear(reduce_sum_p, _reduce_sum_transpose)
defreducer(reduce_sum_p)
reduce_prod_p = reduce_primitive("reduce_prod", [NUMBER], _plain(hlo.multiply), lambda d: 1)
jvp_rules[reduce_prod_p] = _reduce_prod_jvp
defreducer(reduce_prod_p)
reduce_max_p = reduce_primitive(
    "reduce_max", ANY, _lexicographic(hlo.maximum, "GT"), lambda d: _extreme(d, largest=False)
)
jvp_rules[reduce_max_p] = partial(_reduce_chooser_jvp, reduce_max_p)
defreducer(reduce_max_p)
reduce_min_p = reduce_primitive(
    "reduce_min", ANY, _lexicographic(hlo.minimum, "LT"), lambda d: _extreme(d, largest=True)
)
jvp_rules[reduce_min_p] = partial(_reduce_chooser_jvp, reduce_min_p)
defreducer(reduce_min_p)
reduce_and_p = reduce_primitive(
    "reduce_and", None, _plain(hlo.and_), lambda d: True if kind(d) == "b" else -1
)
defjvp_zero(reduce_and_p)
defreducer(reduce_and_p)
reduce_or_p = reduce_primitive("reduce_or", None, _plain(hlo.or_), lambda d: 0)
defjvp_zero(reduce_or_p)
defreducer(reduce_or_p)
reduce_xor_p = reduce_primitive("reduce_xor", None, _plain(hlo.xor), lambda d: 0)
defjvp_zero(reduce_xor_p)
defreducer(reduce_xor_p)


def _axes(axes) -> tuple[int, ...]:
    try:
        return tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"reduction axes must be a sequence of integers, got {axes!r}") from None


def reduce_sum(operand, axes: Sequence[int], *, out_sharding=None):
    """Sum ``operand`` over ``axes`` (jax.lax.reduce_sum).

    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh) is
    the result's sharding.
    """
    out = reduce_sum_p.bind(operand, axes=_axes(axes))
    if out_sharding is None:
        return out
    return resharded_result(out, out_sharding, "reduce_sum", [to_aval(operand)], operation=True)


def reduce_prod(operand, axes: Sequence[int]):
    """Multiply ``operand``'s elements over ``axes`` (jax.lax.reduce_prod)."""
    return reduce_prod_p.bind(operand, axes=_axes(axes))


def reduce_max(operand, axes: Sequence[int]):
    """Take the maximum of ``operand`` over ``axes``; NaN propagates (jax.lax.reduce_max)."""
    return reduce_max_p.bind(operand, axes=_axes(axes))


def reduce_min(operand, axes: Sequence[int]):
    """Take the minimum of ``operand`` over ``axes``; NaN propagates (jax.lax.reduce_min)."""
    return reduce_min_p.bind(operand, axes=_axes(axes))


def reduce_and(operand, axes: Sequence[int]):
    """Reduce ``operand`` over ``axes`` with bitwise/logical AND (jax.lax.reduce_and)."""
    return reduce_and_p.bind(operand, axes=_axes(axes))


def reduce_or(operand, axes: Sequence[int]):
    """Reduce ``operand`` over ``axes`` with bitwise/logical OR (jax.lax.reduce_or)."""
    return reduce_or_p.bind(operand, axes=_axes(axes))


def reduce_xor(operand, axes: Sequence[int]):
    """Reduce ``operand`` over ``axes`` with bitwise/logical XOR (jax.lax.reduce_xor)."""
    return reduce_xor_p.bind(operand, axes=_axes(axes))


# --- argmax and argmin ---------------------------------------------------------------------------


def _arg_abstract_eval(name, operand, *, axes, index_dtype):
    # JAX's error comes from the comparison its reducer applies (gt for argmax, lt for argmin).
    compare = "gt" if name == "argmax" else "lt"
    check_dtype(compare, operand, [c for c in ANY if c.name != "complexfloating"], position=0)
    (axis,) = axes
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
    if operand.shape[axis] == 0:
        raise ValueError(
            "argmin and argmax require non-empty reduced dimension. "
            f"operand.shape={operand.shape} axis={axis}"
        )
    if kind(index_dtype) not in "iu":
        raise TypeError(
            f"index_dtype must be an integer type, but got {dtypes.dtype_name(index_dtype)}"
        )
    shape = tuple(d for i, d in enumerate(operand.shape) if i != axis)
    return ShapedArray(shape, index_dtype)


def _arg_lowering(direction, ctx, x, *, axes, index_dtype):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    dtype = aval_in.dtype
    (axis,) = axes
    index_aval = ShapedArray(aval_in.shape, index_dtype)
    indices = hlo.iota(ir_type(index_aval), axis)
    init_value = constant(_extreme(dtype, largest=direction == "LT"), dtype)
    op = hlo.ReduceOp(
        [ir_type(aval_out.update(dtype=dtype)), ir_type(aval_out)],
        [x, indices],
        [init_value, constant(0, index_dtype)],
        [axis],
    )
    block = op.regions[0].blocks.append(
        *[ir_type(ShapedArray((), d)) for d in (dtype, index_dtype, dtype, index_dtype)]
    )
    with ir.InsertionPoint(block):
        x1, i1, x2, i2 = block.arguments
        better = compare(x1, x2, direction, dtype)
        tie = compare(x1, x2, "EQ", dtype)
        if kind(dtype) == "f":  # NaN is the extreme; the first of several NaNs wins
            nan1 = compare(x1, x1, "NE", dtype)
            nan2 = compare(x2, x2, "NE", dtype)
            better = hlo.or_(better, hlo.and_(nan1, hlo.not_(nan2)))
            tie = hlo.or_(tie, hlo.and_(nan1, nan2))
        first = compare(i1, i2, "LT", index_dtype)
        pick1 = hlo.or_(better, hlo.and_(tie, first))
        hlo.return_([hlo.select(pick1, x1, x2), hlo.select(pick1, i1, i2)])
    return op.results[1]


argmax_p = Primitive("argmax")
argmax_p.def_abstract_eval(partial(_arg_abstract_eval, "argmax"))
argmax_p.def_impl(partial(apply_primitive, argmax_p))
register_lowering(argmax_p, partial(_arg_lowering, "GT"))
defjvp_zero(argmax_p)
defreducer(argmax_p)

argmin_p = Primitive("argmin")
argmin_p.def_abstract_eval(partial(_arg_abstract_eval, "argmin"))
argmin_p.def_impl(partial(apply_primitive, argmin_p))
register_lowering(argmin_p, partial(_arg_lowering, "LT"))
defjvp_zero(argmin_p)
defreducer(argmin_p)


def _index_dtype(index_dtype, name: str) -> np.dtype:
    return dtypes.check_and_canonicalize_user_dtype(index_dtype, name)


def argmax(operand, axis: int, index_dtype):
    """Return the index of the first maximum on ``axis``; NaN is greatest (jax.lax.argmax)."""
    return argmax_p.bind(
        operand, axes=(operator.index(axis),), index_dtype=_index_dtype(index_dtype, "argmax")
    )


def argmin(operand, axis: int, index_dtype):
    """Return the index of the first minimum on ``axis``; NaN is the least (jax.lax.argmin)."""
    return argmin_p.bind(
        operand, axes=(operator.index(axis),), index_dtype=_index_dtype(index_dtype, "argmin")
    )
