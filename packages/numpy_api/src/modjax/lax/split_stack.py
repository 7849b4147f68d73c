"""``split``, ``stack``, ``unstack`` and ``tile``: primitives of their own, as in JAX.

``split_p`` cuts an array along one axis into pieces of given sizes, ``stack_p``
joins arrays of one shape along a new axis, ``unstack_p`` takes an array apart
along an axis and ``tile_p`` repeats an array along each axis. JAX 0.10 binds these
(``jnp.split``, ``jnp.stack``, ``jnp.unstack`` and ``jnp.tile`` too), so jaxprs read
``split[axis=0 sizes=(2, 4)]`` as JAX's do. Each lowers to the slices, broadcasts,
concatenations and reshapes it stands for (with their rules for PRNG key arrays);
all four are linear: split and concatenate, stack and unstack transpose into each
other, and tile transposes to a sum over its repetitions.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

from modjax.autodiff import Zero, deflinear
from modjax.batching import batching_rules, bdim_at_front, not_mapped
from modjax.lowering import lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from . import indexing as _ix
from . import reductions as _rd
from . import structural as _st
from ._common import aval_of

__all__ = [
    "split",
    "split_p",
    "stack",
    "stack_p",
    "tile",
    "tile_p",
    "unstack",
    "unstack_p",
]


def _axis(axis: int, ndim: int, name: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _instantiate(cts: Sequence) -> list:
    return [ct.instantiate() if type(ct) is Zero else ct for ct in cts]


# --- split ------------------------------------------------------------------------------------


def _split_abstract_eval(x, *, sizes, axis):
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(sizes):
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand "
            f"shape {list(x.shape)}"
        )
    shape = list(x.shape)
    out = []
    for size in sizes:
        shape[axis] = size
        out.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return out


def _split_slices(x, *, sizes, axis):
    pieces, start = [], 0
    for size in sizes:
        pieces.append(_ix.slice_in_dim(x, start, start + size, axis=axis))
        start += size
    return pieces


def _split_transpose(cts, x, *, sizes, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [_st.concatenate(_instantiate(cts), axis)]


def _split_batch(args, dims, *, sizes, axis):
    (x,), (d,) = args, dims
    out = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= d else axis)
    return out, [d] * len(sizes)


split_p = Primitive("split")
split_p.multiple_results = True
split_p.def_abstract_eval(_split_abstract_eval)
split_p.def_impl(partial(apply_primitive, split_p))
register_lowering(split_p, lower_fun(_split_slices, multiple_results=True))
deflinear(split_p, _split_transpose)
batching_rules[split_p] = _split_batch


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Cut ``operand`` along ``axis`` into pieces of ``sizes`` (jax.lax.split).

    The sizes must be non-negative and add up to the axis' size (ValueError otherwise).
    """
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape), "split")
    sizes = tuple(operator.index(s) for s in sizes)
    return split_p.bind(operand, sizes=sizes, axis=axis)


# --- stack and unstack --------------------------------------------------------------------------


def _stack_abstract_eval(*xs, axis):
    if not xs:
        raise ValueError("stack requires at least one operand")
    first = xs[0]
    for x in xs[1:]:
        if x.dtype != first.dtype:
            raise TypeError(
                "lax.stack requires arguments to have the same dtypes, got "
                + ", ".join(str(a.dtype) for a in xs)
                + "."
            )
        if x.shape != first.shape:
            raise TypeError(
                "lax.stack requires arguments to have the same shapes, got "
                + ", ".join(str(a.shape) for a in xs)
                + "."
            )
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    return ShapedArray(tuple(shape), first.dtype, all(x.weak_type for x in xs))


def _stack_concat(*xs, axis):
    return _st.concatenate([_st.expand_dims(x, (axis,)) for x in xs], axis)


def _stack_transpose(ct, *xs, axis):
    if type(ct) is Zero:
        return [Zero(x.aval) for x in xs]
    return unstack_p.bind(ct, axis=axis)


def _stack_batch(args, dims, *, axis):
    d0 = dims[0]
    if d0 is not not_mapped and all(d == d0 for d in dims):
        if axis <= d0:
            return stack_p.bind(*args, axis=axis), d0 + 1
        return stack_p.bind(*args, axis=axis + 1), d0
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not not_mapped)
    front = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return stack_p.bind(*front, axis=axis + 1), 0


stack_p = Primitive("stack")
stack_p.def_abstract_eval(_stack_abstract_eval)
stack_p.def_impl(partial(apply_primitive, stack_p))
register_lowering(stack_p, lower_fun(_stack_concat))
deflinear(stack_p, _stack_transpose)
batching_rules[stack_p] = _stack_batch


def _unstack_abstract_eval(x, *, axis):
    if not x.shape:
        raise ValueError(
            "unstack requires arrays with rank > 0, however a scalar array of shape () was passed."
        )
    shape = list(x.shape)
    n = shape.pop(axis)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)] * n


def _unstack_slices(x, *, axis):
    n = aval_of(x).shape[axis]
    return [_ix.index_in_dim(x, i, axis, keepdims=False) for i in range(n)]


def _unstack_transpose(cts, x, *, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [stack_p.bind(*_instantiate(cts), axis=axis)]


def _unstack_batch(args, dims, *, axis):
    (x,), (d,) = args, dims
    if axis < d:
        out = unstack_p.bind(x, axis=axis)
        return out, [d - 1] * len(out)
    out = unstack_p.bind(x, axis=axis + 1)
    return out, [d] * len(out)


unstack_p = Primitive("unstack")
unstack_p.multiple_results = True
unstack_p.def_abstract_eval(_unstack_abstract_eval)
unstack_p.def_impl(partial(apply_primitive, unstack_p))
register_lowering(unstack_p, lower_fun(_unstack_slices, multiple_results=True))
deflinear(unstack_p, _unstack_transpose)
batching_rules[unstack_p] = _unstack_batch


def stack(operands: Sequence[Any], axis: int = 0):
    """Join arrays of one shape and dtype along a new axis ``axis`` (jax.lax.stack)."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack needs at least one operand")
    ndim = len(aval_of(operands[0]).shape)
    return stack_p.bind(*operands, axis=_axis(axis, ndim + 1, "stack"))


def unstack(x: Any, axis: int = 0) -> tuple:
    """Split ``x`` along ``axis`` into its slices, without that axis (jax.lax.unstack)."""
    shape = aval_of(x).shape
    if not shape:
        raise ValueError(
            "unstack requires arrays with rank > 0, however a scalar array of shape () was passed."
        )
    return tuple(unstack_p.bind(x, axis=_axis(axis, len(shape), "unstack")))


# --- tile ---------------------------------------------------------------------------------------


def _tile_abstract_eval(x, *, reps):
    if len(reps) != len(x.shape):
        raise TypeError(
            f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and "
            f"x.ndim={len(x.shape)}."
        )
    if any(r < 0 for r in reps):
        raise ValueError(f"lax.tile: reps must be non-negative, got {reps}")
    shape = tuple(r * s for r, s in zip(reps, x.shape, strict=True))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _tile_broadcast(x, *, reps):
    # Broadcast to (r0, s0, r1, s1, ...) and merge each pair.
    shape = aval_of(x).shape
    spread = tuple(d for pair in zip(reps, shape, strict=True) for d in pair)
    dims = tuple(2 * d + 1 for d in range(len(shape)))
    tiled = _st.broadcast_in_dim(x, spread, dims)
    return _st.reshape(tiled, tuple(r * s for r, s in zip(reps, shape, strict=True)))


def _tile_transpose(ct, x, *, reps):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    shape = x.aval.shape
    spread = tuple(d for pair in zip(reps, shape, strict=True) for d in pair)
    summed = _rd.reduce_sum(_st.reshape(ct, spread), tuple(range(0, 2 * len(shape), 2)))
    return [summed]


def _tile_batch(args, dims, *, reps):
    (x,), (d,) = args, dims
    reps = list(reps)
    reps.insert(d, 1)
    return tile_p.bind(x, reps=tuple(reps)), d


tile_p = Primitive("tile")
tile_p.def_abstract_eval(_tile_abstract_eval)
tile_p.def_impl(partial(apply_primitive, tile_p))
register_lowering(tile_p, lower_fun(_tile_broadcast))
deflinear(tile_p, _tile_transpose)
batching_rules[tile_p] = _tile_batch


def tile(operand: Any, reps: Sequence[int]):
    """Repeat ``operand`` ``reps[d]`` times along each dimension ``d`` (jax.lax.tile)."""
    return tile_p.bind(operand, reps=tuple(operator.index(r) for r in reps))
