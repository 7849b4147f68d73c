"""Structural primitives: they move, repeat or drop elements without computing new ones.

``broadcast_in_dim``, ``reshape``, ``squeeze``, ``transpose``, ``rev``,
``slice``, ``concatenate``, ``pad``, ``iota`` and ``copy``, each declared with
its abstract evaluation, eager ``impl`` and lowering rule; and the public
functions built on them (``broadcast``, ``expand_dims``, ``full``,
``broadcasted_iota``, ...).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import deflinear, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import (
    batching_rules,
    bdim_at_front,
    defreducer,
    defvectorized,
    matchaxis,
    moveaxis,
    shift_axes,
)
from modjax.lowering import hlo, ir_type, register_lowering
from modjax.runtime import apply_primitive, device_put
from modjax.sharding import reshard, with_sharding_constraint
from modjax.sharding.constraint import (
    operation_out_sharding,
    placed_out_sharding,
    resharded_result,
)
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, canonicalize_shape, sharding_entries
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes, vma_checked

from ._common import (
    NUM,
    PYTHON_SCALARS,
    aval_of,
    check_dtype,
    check_same_dtypes,
    python_scalar_as,
)
from ._rules import batch_size, const, linear_jvp, strong_const
from .elementwise import select_n_p, sub

__all__ = [
    "broadcast",
    "broadcast_in_dim",
    "broadcasted_iota",
    "concatenate",
    "copy",
    "expand_dims",
    "extended_full",
    "full",
    "full_like",
    "iota",
    "pad",
    "reshape",
    "rev",
    "slice",
    "squeeze",
    "transpose",
]


def _ints(values, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from None


def _shape(x) -> tuple[int, ...]:
    return to_aval(x).shape


def _is_array(x) -> bool:
    """Tell whether ``x`` is an Array or tracer (not a Python or numpy value)."""
    # PYTHON_SCALARS leaves out bool (it is not weakly typed), but a bool is no array either.
    return type(x) not in (bool, *PYTHON_SCALARS) and not isinstance(x, np.ndarray | np.generic)


def _declare(name: str, abstract_eval, lowering) -> Primitive:
    prim = Primitive(name)
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


# --- broadcast_in_dim ---------------------------------------------------------------------------


def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions):
    if any(d < 0 for d in broadcast_dimensions):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have every element be nonnegative, "
            f"got {broadcast_dimensions}."
        )
    if len(broadcast_dimensions) != operand.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {broadcast_dimensions} for operand ndim {operand.ndim}."
        )
    if len(shape) < operand.ndim:
        raise TypeError(
            "broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand shape {operand.shape}, target shape {shape}."
        )
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
            f"{broadcast_dimensions} for operand ndim {operand.ndim} and shape {shape}."
        )
    if any(
        operand.shape[i] != 1 and operand.shape[i] != shape[d]
        for i, d in enumerate(broadcast_dimensions)
    ):
        raise TypeError(  # JAX's text, its trailing space included
            "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
            "corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{operand.shape}, target broadcast shape {shape}, broadcast_dimensions "
            f"{broadcast_dimensions} "
        )
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must not contain duplicates, got "
            f"broadcast_dimensions {broadcast_dimensions}"
        )
    # Decreasing dimensions are allowed, as in JAX: the broadcast also transposes.
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions):
    return hlo.broadcast_in_dim(ir_type(ctx.avals_out[0]), x, list(broadcast_dimensions))


def _reduce_sum(x, axes: tuple[int, ...]):
    if not axes:
        return x
    from .reductions import reduce_sum_p  # reductions imports this module

    return reduce_sum_p.bind(x, axes=axes)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    dims = broadcast_dimensions
    stretched = [d for d, size in zip(dims, in_shape, strict=True) if size != shape[d]]
    new = [d for d in range(len(shape)) if d not in dims]
    summed = _reduce_sum(ct, tuple(sorted(new + stretched)))
    # The kept dimensions come out in the result's order; with decreasing
    # broadcast_dimensions (a transposing broadcast) they go back to the operand's.
    # (JAX 0.10.2's rule skips this and fails with a mis-shaped cotangent.)
    kept = [d for d in dims if d not in stretched]
    order = sorted(kept)
    perm = tuple(order.index(d) for d in kept)
    if perm != tuple(range(len(perm))):
        summed = transpose(summed, perm)
    return [reshape(summed, in_shape)]


def _broadcast_in_dim_batching_rule(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    # As JAX's rule: the batch axis moves to the front of operand and result, so the
    # program (and what XLA compiles of it) is JAX's.
    if d:
        x = moveaxis(x, d, 0)
    new_dims = (0, *(b + 1 for b in broadcast_dimensions))
    out = broadcast_in_dim_p.bind(x, shape=(_shape(x)[0], *shape), broadcast_dimensions=new_dims)
    return out, 0


broadcast_in_dim_p = _declare(
    "broadcast_in_dim", _broadcast_in_dim_abstract_eval, _broadcast_in_dim_lowering
)
deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batching_rule


def _broadcast_shape(shape) -> tuple[int, ...]:
    """``canonicalize_shape`` with JAX's error for a negative size: broadcast_in_dim's TypeError.

    ``broadcast``, ``full`` and ``full_like`` broadcast too, and report it the same way.
    """
    try:
        return canonicalize_shape(shape)
    except ValueError:
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {tuple(shape)}."
        ) from None


def broadcast_in_dim(
    operand, shape: Sequence[int], broadcast_dimensions: Sequence[int], *, out_sharding=None
):
    """Broadcast ``operand`` to ``shape``, its axis ``i`` going to ``broadcast_dimensions[i]``.

    The counterpart of jax.lax.broadcast_in_dim: each operand dimension must be
    1 or equal to the target dimension it maps to. ``out_sharding`` (a
    NamedSharding, or a PartitionSpec on the current mesh) is the result's sharding.
    """
    if out_sharding is not None:
        out = broadcast_in_dim(operand, shape, broadcast_dimensions)
        operands = [aval_of(operand)] if _is_array(operand) else []
        out_sharding = placed_out_sharding(out_sharding, "broadcast_in_dim", out, operands)
        return out if out_sharding is None else reshard(out, out_sharding)
    shape = _broadcast_shape(shape)
    dims = _ints(broadcast_dimensions, "broadcast_dimensions")
    if _is_array(operand) and aval_of(operand).shape == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes: Sequence[int], *, out_sharding=None):
    """Add leading dimensions of ``sizes`` to ``operand`` (jax.lax.broadcast).

    ``out_sharding`` is the result's sharding.
    """
    sizes = _broadcast_shape(sizes)
    ndim = aval_of(operand).ndim
    shape = sizes + aval_of(operand).shape
    dims = tuple(range(len(sizes), len(sizes) + ndim))
    return broadcast_in_dim(operand, shape, dims, out_sharding=out_sharding)


def expand_dims(array, dimensions: Sequence[int]):
    """Insert size-1 axes at the positions ``dimensions`` of the result (jax.lax.expand_dims)."""
    aval = aval_of(array)
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    ndim_out = aval.ndim + len(dimensions)
    dims = []
    for d in _ints(dimensions, "dimensions"):
        if not -ndim_out <= d < ndim_out:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim_out}")
        dims.append(d + ndim_out if d < 0 else d)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    kept = [i for i in range(ndim_out) if i not in dims]
    shape = [1] * ndim_out
    for i, size in zip(kept, aval.shape, strict=True):
        shape[i] = size
    return broadcast_in_dim(array, tuple(shape), tuple(kept))


# --- reshape and squeeze ----------------------------------------------------------------------


def _reshape_abstract_eval(operand, *, new_sizes, dimensions):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != operand.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (of total size "
            f"{math.prod(new_sizes)}) for shape {operand.shape} (of total size {operand.size})."
        )
    if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got dimensions "
            f"{dimensions} for shape {operand.shape}."
        )
    return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_lowering(ctx, x, *, new_sizes, dimensions):
    if dimensions is not None and dimensions != tuple(range(len(dimensions))):
        x = hlo.transpose(x, list(dimensions))
    return hlo.reshape(ir_type(ctx.avals_out[0]), x)


def _reshape_transpose(ct, x, *, new_sizes, dimensions):
    shape = x.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    transposed = reshape(ct, tuple(shape[p] for p in dimensions))
    return [transpose(transposed, tuple(int(p) for p in np.argsort(dimensions)))]


def _reshape_batching_rule(args, dims, *, new_sizes, dimensions):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    if dimensions is not None:
        dimensions = (0, *(p + 1 for p in dimensions))
    out = reshape_p.bind(x, new_sizes=(_shape(x)[0], *new_sizes), dimensions=dimensions)
    return out, 0


reshape_p = _declare("reshape", _reshape_abstract_eval, _reshape_lowering)
deflinear(reshape_p, _reshape_transpose)
batching_rules[reshape_p] = _reshape_batching_rule


def reshape(
    operand, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, *, out_sharding=None
):
    """Reshape ``operand`` to ``new_sizes`` in row-major order (jax.lax.reshape).

    With ``dimensions``, the operand is first transposed by that permutation.
    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh)
    sets the result's sharding: needed for a reshape that splits or merges
    dimensions sharded over explicit mesh axes.
    """
    if out_sharding is not None:  # JAX ignores it for an operand with no mesh, outside one
        out_sharding = operation_out_sharding(out_sharding, "reshape", [aval_of(operand)])
    if out_sharding is not None:
        return reshard(reshape(unsharded_in_type(operand), new_sizes, dimensions), out_sharding)
    try:
        new_sizes = tuple(operator.index(d) for d in new_sizes)
    except TypeError:
        raise TypeError(f"reshape new_sizes must be integers, got {new_sizes!r}") from None
    dims = None if dimensions is None else _ints(dimensions, "dimensions")
    if dims is not None:
        shape = aval_of(operand).shape
        if sorted(dims) != list(range(len(shape))):
            raise TypeError(
                "reshape dimensions must be a permutation of operand dimensions, got "
                f"dimensions {dims} for shape {shape}."
            )
        if dims == tuple(range(len(dims))):
            dims = None
    if dims is None and _is_array(operand) and aval_of(operand).shape == new_sizes:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims)


def unsharded_in_type(x):
    """Return ``x`` gathered in its type (no dimension split over explicit mesh axes).

    An operation given ``out_sharding=`` runs on this, whose result's type is
    then unambiguous, and reshards the result: XLA still chooses the
    communication (both steps are sharding constraints).
    """
    aval = aval_of(x)
    if aval.type_sharding is None:
        return x
    return with_sharding_constraint(x, aval.type_sharding.update(spec=(None,) * aval.ndim))


def typed_as(x, sharding):
    """Return ``x`` with ``sharding`` in its type (resharded when its type says otherwise).

    Transposes use it to give a cotangent its primal's type, as JAX's pass
    ``out_sharding=`` the primal's sharding; None leaves ``x`` as it is.
    """
    if sharding is None:
        return x
    aval = aval_of(x)
    spec = sharding.spec
    if (
        aval.type_sharding is not None
        and sharding_entries(aval) == spec.partitions + (None,) * (aval.ndim - len(spec))
        and aval.type_sharding.spec.unreduced == spec.unreduced
        and aval.type_sharding.spec.reduced == spec.reduced
    ):
        return x
    return with_sharding_constraint(x, sharding)


def _squeeze_abstract_eval(operand, *, dimensions):
    for d in dimensions:
        if not 0 <= d < operand.ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {operand.ndim}")
        if operand.shape[d] != 1:
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={operand.shape} and dimensions={dimensions}"
            )
    shape = tuple(s for i, s in enumerate(operand.shape) if i not in dimensions)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_lowering(ctx, x, *, dimensions):
    return hlo.reshape(ir_type(ctx.avals_out[0]), x)


squeeze_p = _declare("squeeze", _squeeze_abstract_eval, _squeeze_lowering)
deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])
defreducer(squeeze_p, "dimensions")


def squeeze(array, dimensions: Sequence[int]):
    """Remove the size-1 dimensions ``dimensions`` from ``array`` (jax.lax.squeeze)."""
    ndim = aval_of(array).ndim
    dims = []
    for d in _ints(dimensions, "dimensions"):
        if not -ndim <= d < ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim}")
        dims.append(d + ndim if d < 0 else d)
    dims = tuple(sorted(dims))
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {dims}")
    if not dims and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


# --- transpose and rev --------------------------------------------------------------------------


def _transpose_abstract_eval(operand, *, permutation):
    if sorted(permutation) != list(range(operand.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{permutation} for operand shape {operand.shape}."
        )
    shape = tuple(operand.shape[p] for p in permutation)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _transpose_lowering(ctx, x, *, permutation):
    return hlo.transpose(x, list(permutation))


def _transpose_transpose(ct, x, *, permutation):
    return [transpose(ct, tuple(int(p) for p in np.argsort(permutation)))]


def _transpose_batching_rule(args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = list(shift_axes(permutation, d))
    perm.insert(d, d)  # the batch axis stays where it is
    return transpose_p.bind(x, permutation=tuple(perm)), d


transpose_p = _declare("transpose", _transpose_abstract_eval, _transpose_lowering)
deflinear(transpose_p, _transpose_transpose)
batching_rules[transpose_p] = _transpose_batching_rule


def transpose(operand, permutation: Sequence[int]):
    """Permute the axes of ``operand``: axis ``i`` is ``permutation[i]`` (jax.lax.transpose)."""
    permutation = _ints(permutation, "permutation")
    identity = permutation == tuple(range(len(permutation)))
    if identity and _is_array(operand) and len(permutation) == aval_of(operand).ndim:
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def _rev_abstract_eval(operand, *, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must have every element be nonnegative, got {dimensions}.")
    if any(d >= operand.ndim for d in dimensions):
        raise TypeError(
            f"rev dimensions must all be less than operand ndim, got dimensions {dimensions} "
            f"for operand ndim {operand.ndim}."
        )
    return operand


def _rev_lowering(ctx, x, *, dimensions):
    return hlo.reverse(x, list(dimensions))


rev_p = _declare("rev", _rev_abstract_eval, _rev_lowering)
deflinear(rev_p, lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)])
defreducer(rev_p, "dimensions", keepdims=True)


def rev(operand, dimensions: Sequence[int]):
    """Reverse ``operand`` along ``dimensions`` (jax.lax.rev)."""
    return rev_p.bind(operand, dimensions=_ints(dimensions, "dimensions"))


# --- slice, concatenate, pad ----------------------------------------------------------------


def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides):
    n = operand.ndim
    if len(start_indices) != n or len(limit_indices) != n:
        raise TypeError(
            "slice start_indices and limit_indices must have length equal to the number of "
            f"dimensions of the operand, got start_indices {start_indices} and limit_indices "
            f"{limit_indices} for operand shape {operand.shape}."
        )
    if strides is not None and len(strides) != n:
        raise TypeError(
            f"slice strides must have length equal to the number of dimensions of the operand, "
            f"got strides {strides} for operand shape {operand.shape}."
        )
    if any(s < 0 for s in start_indices):
        raise TypeError(
            f"slice start_indices must be greater than or equal to zero, got {start_indices}."
        )
    if any(lim > d for lim, d in zip(limit_indices, operand.shape, strict=True)):
        raise TypeError(
            f"slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {operand.shape}."
        )
    if any(s > lim for s, lim in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    strides = strides or (1,) * n
    if any(s <= 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    shape = tuple(
        (lim - s + st - 1) // st if lim > s else 0
        for s, lim, st in zip(start_indices, limit_indices, strides, strict=True)
    )
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return hlo.slice(x, list(start_indices), list(limit_indices), list(strides))


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape, ct_shape = x.aval.shape, _shape(ct)
    strides = strides or (1,) * len(shape)
    config = []  # pad the cotangent back: zeros before, after and between the taken elements
    for start, stride, size, taken in zip(start_indices, strides, shape, ct_shape, strict=True):
        end = start + (taken - 1) * stride + 1 if taken else start
        config.append((start, size - end, stride - 1))
    # JAX pads with _const: strong next to a weak array (the gradient of a slice is).
    return [pad_p.bind(ct, strong_const(ct, 0), padding_config=tuple(config))]


def _slice_batching_rule(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    size = _shape(x)[d]
    start = (*start_indices[:d], 0, *start_indices[d:])
    limit = (*limit_indices[:d], size, *limit_indices[d:])
    if strides is not None:
        strides = (*strides[:d], 1, *strides[d:])
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides), d


def _slice_impl(x, *, start_indices, limit_indices, strides):
    """Run an eager unit-stride slice as a dynamic_slice whose starts are arguments.

    As JAX's eager slices do: reading ``x[i]`` for many ``i`` (hypothesis, and the
    Array API suite, read arrays element by element) then compiles one program per
    slice size, not one per position.
    """
    x_aval = aval_of(x)
    if strides is not None or isinstance(x_aval.dtype, dtypes.ExtendedDType):
        # Keys: the key reuse checks see a slice (which consumes what it takes), as JAX's
        # eager slice. (A type sharded over explicit axes takes the dynamic_slice path too,
        # as in JAX: an eager result is laid out as its sharding rule types it.)
        return apply_primitive(
            slice_p, x, start_indices=start_indices, limit_indices=limit_indices, strides=strides
        )
    from .indexing.dynamic_slice import dynamic_slice_p  # noqa: PLC0415 - indexing imports us

    index_dtype = np.int32 if max(limit_indices, default=0) < 2**31 else np.int64
    starts = [index_dtype(s) for s in start_indices]
    sizes = tuple(stop - start for start, stop in zip(start_indices, limit_indices, strict=True))
    return apply_primitive(dynamic_slice_p, x, *starts, slice_sizes=sizes)


slice_p = _declare("slice", _slice_abstract_eval, _slice_lowering)
slice_p.def_impl(_slice_impl)
deflinear(slice_p, _slice_transpose)
batching_rules[slice_p] = _slice_batching_rule


def slice(  # noqa: A001 - JAX's public name
    operand,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
):
    """Take the static slice ``[start:limit:stride]`` of every dimension (jax.lax.slice)."""
    start = _ints(start_indices, "start_indices")
    limit = _ints(limit_indices, "limit_indices")
    strides = None if strides is None else _ints(strides, "strides")
    if strides is not None and all(s == 1 for s in strides):
        strides = None
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def _concatenate_abstract_eval(*operands, dimension):
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    shapes = [o.shape for o in operands]
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            f"{', '.join(map(str, shapes))}."
        )
    if not 0 <= dimension < len(shapes[0]):
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            f"{', '.join(map(str, shapes))}."
        )
    others = [s[:dimension] + s[dimension + 1 :] for s in shapes]
    if any(o != others[0] for o in others):
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the "
            f"one being concatenated: concatenating along dimension {dimension} for shapes "
            f"{', '.join(map(str, shapes))}."
        )
    check_same_dtypes("concatenate", operands)  # after the shapes, as JAX's rules run
    shape = list(shapes[0])
    shape[dimension] = sum(s[dimension] for s in shapes)
    weak = all(o.weak_type for o in operands)
    return ShapedArray(tuple(shape), operands[0].dtype, weak)


def _concatenate_lowering(ctx, *operands, dimension):
    return hlo.concatenate(list(operands), dimension)


def _concatenate_transpose(ct, *operands, dimension):
    ct_shape = _shape(ct)
    cts, offset = [], 0
    for x in operands:
        size = (x.aval if is_undefined_primal(x) else to_aval(x)).shape[dimension]
        if is_undefined_primal(x):
            start = tuple(offset if i == dimension else 0 for i in range(len(ct_shape)))
            limit = tuple(offset + size if i == dimension else s for i, s in enumerate(ct_shape))
            cts.append(slice_p.bind(ct, start_indices=start, limit_indices=limit, strides=None))
        else:
            cts.append(None)
        offset += size
    return cts


def _concatenate_batching_rule(args, dims, *, dimension):
    size = batch_size(args, dims)
    out_dim = next(d for d in dims if d is not None)
    operands = [matchaxis(size, d, out_dim, x) for x, d in zip(args, dims, strict=True)]
    return concatenate_p.bind(*operands, dimension=shift_axes(dimension, out_dim)), out_dim


concatenate_p = _declare("concatenate", _concatenate_abstract_eval, _concatenate_lowering)
jvp_rules[concatenate_p] = linear_jvp(concatenate_p)
transpose_rules[concatenate_p] = _concatenate_transpose
batching_rules[concatenate_p] = _concatenate_batching_rule


def concatenate(operands: Sequence, dimension: int):
    """Join ``operands`` (same dtype and rank) along ``dimension`` (jax.lax.concatenate)."""
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and _is_array(operands[0]):
        aval = aval_of(operands[0])
        if not 0 <= dimension < aval.ndim:
            raise TypeError(
                f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                f"{aval.shape}."
            )
        return operands[0]
    return concatenate_p.bind(*operands, dimension=operator.index(dimension))


def _pad_abstract_eval(operand, padding_value, *, padding_config):
    if operand.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{dtypes.dtype_name(operand.dtype)} and {dtypes.dtype_name(padding_value.dtype)}."
        )
    if padding_value.shape:
        raise ValueError(f"padding_value must be a scalar; got shape {padding_value.shape}")
    if len(padding_config) != operand.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {operand.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(
            f"interior padding in padding_config must be nonnegative, got padding_config "
            f"{padding_config}"
        )
    shape = tuple(
        lo + hi + d + max(d - 1, 0) * interior
        for d, (lo, hi, interior) in zip(operand.shape, padding_config, strict=True)
    )
    if any(s < 0 for s in shape):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for "
            f"padding_config {padding_config} and operand shape {operand.shape}"
        )
    return ShapedArray(shape, operand.dtype, operand.weak_type and padding_value.weak_type)


def _pad_lowering(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    return hlo.pad(x, padding_value, list(lo), list(hi), list(interior))


def _pad_transpose(ct, x, padding_value, *, padding_config):
    # Remove the low/high padding (or restore what negative padding removed), then take
    # every (interior + 1)-th element: the cotangent of the operand.
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    inner = ct
    if any(lo or hi for lo, hi, _ in unpad):
        inner = pad_p.bind(ct, const(ct, 0), padding_config=unpad)
    steps = tuple(interior + 1 for _, _, interior in padding_config)
    ct_x = inner
    if any(step > 1 for step in steps):
        ct_x = slice(inner, (0,) * len(steps), _shape(inner), steps)
    ct_value = None
    if is_undefined_primal(padding_value):  # everything the operand did not receive
        every = tuple(range(len(steps)))
        ct_value = sub(_reduce_sum(ct, every), _reduce_sum(ct_x, every))
    return [ct_x if is_undefined_primal(x) else None, ct_value]


def _pad_batching_rule(args, dims, *, padding_config):
    x, value = args
    x_dim, value_dim = dims
    size = batch_size(args, dims)
    if x_dim is None:
        x, x_dim = bdim_at_front(x, None, size), 0
    config = (*padding_config[:x_dim], (0, 0, 0), *padding_config[x_dim:])
    if value_dim is None:
        return pad_p.bind(x, value, padding_config=config), x_dim
    # A batch of padding values: pad with zeros, then select each padding value by a mask.
    padded = pad_p.bind(x, const(x, 0), padding_config=config)
    true = broadcast_in_dim_p.bind(np.True_, shape=_shape(x), broadcast_dimensions=())
    mask = pad_p.bind(true, np.False_, padding_config=config)
    values = broadcast_in_dim_p.bind(value, shape=_shape(padded), broadcast_dimensions=(x_dim,))
    return select_n_p.bind(mask, values, padded), x_dim


pad_p = _declare("pad", _pad_abstract_eval, _pad_lowering)
jvp_rules[pad_p] = linear_jvp(pad_p)
transpose_rules[pad_p] = _pad_transpose
batching_rules[pad_p] = _pad_batching_rule


def pad(operand, padding_value, padding_config: Sequence[tuple[int, int, int]]):
    """Pad ``operand`` with ``padding_value``, ``(low, high, interior)`` per axis (jax.lax.pad).

    ``low`` and ``high`` may be negative (they then remove elements);
    ``interior`` (the padding between elements) must not.
    """
    config = tuple(tuple(operator.index(v) for v in triple) for triple in padding_config)
    for triple in config:
        if len(triple) != 3:  # JAX unpacks each triple: Python's ValueError
            raise ValueError(
                f"{'not enough' if len(triple) < 3 else 'too many'} values to unpack "
                f"(expected 3{f', got {len(triple)}' if len(triple) < 3 else ''})"
            )
    if type(padding_value) in PYTHON_SCALARS and type(operand) not in PYTHON_SCALARS:
        target = aval_of(operand).dtype
        if dtypes.result_type(padding_value, target) == target:
            padding_value = python_scalar_as(padding_value, target)
    return pad_p.bind(operand, padding_value, padding_config=config)


# --- iota and copy ------------------------------------------------------------------------------


def _iota_abstract_eval(*, dtype, shape, dimension):
    check_dtype("iota", ShapedArray((), dtype), NUM)
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise ValueError(
            f"iota dimension must be between 0 and len(shape), got dimension={dimension} for "
            f"shape={shape}"
        )
    return ShapedArray(shape, dtype)


def _iota_lowering(ctx, *, dtype, shape, dimension):
    return hlo.iota(ir_type(ctx.avals_out[0]), dimension)


iota_p = _declare("iota", _iota_abstract_eval, _iota_lowering)
# iota has no operands: no JVP or batching rule is ever asked for (its result is a constant).


def iota(dtype, size: int):
    """Return ``[0, 1, ..., size - 1]`` of ``dtype`` (jax.lax.iota)."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape: Sequence[int], dimension: int, *, out_sharding=None):
    """Return an array of ``shape`` counting along ``dimension`` (jax.lax.broadcasted_iota).

    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh) is
    the result's sharding.
    """
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"iota shape must be a sequence of integers, got {shape!r}") from None
    out = iota_p.bind(dtype=dtype, shape=shape, dimension=operator.index(dimension))
    return resharded_result(out, out_sharding, "broadcasted_iota")


def _copy_lowering(ctx, x):
    return x


copy_p = _declare("copy", lambda aval: aval, _copy_lowering)
deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
defvectorized(copy_p)


def copy(x):
    """Return a copy of ``x`` in a new buffer (JAX's ``copy_p``, behind ``jnp.copy``)."""
    return copy_p.bind(x)


# --- full ---------------------------------------------------------------------------------

#: How ``full`` fills an array of an extended dtype: ``extended_full[type(dtype)](shape,
#: fill_value, dtype)``. The package defining the dtype registers it (JAX's
#: ``dtype._rules.full``): lax cannot know how a fill value becomes an element's data.
extended_full: dict[type, Callable] = {}


def _full_extended(shape, fill_value, dtype):
    try:
        rule = extended_full[type(dtype)]
    except KeyError:
        raise TypeError(f"full does not support the extended dtype {dtype}") from None
    return rule(canonicalize_shape(shape), fill_value, dtype)


def full(shape: Sequence[int], fill_value, dtype=None, *, sharding=None):
    """Return an array of ``shape`` filled with the scalar ``fill_value`` (jax.lax.full).

    Without ``dtype`` the result takes ``fill_value``'s dtype and weak type
    (``full((2,), 3)`` is a weakly typed int32 array). The result is put on
    ``sharding`` when given (as ``device_put``).
    """
    if sharding is not None:
        return device_put(full(shape, fill_value, dtype), sharding)
    shape = _broadcast_shape(shape)
    fill_shape = _shape_of(fill_value)
    if fill_shape:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape {fill_shape}."
        )
    if dtype is not None:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full")
        if isinstance(dtype, dtypes.ExtendedDType):
            return _full_extended(shape, fill_value, dtype)
        fill_value = _as_dtype(fill_value, dtype)
    return broadcast(fill_value, shape)


def _shape_of(value) -> tuple[int, ...]:
    if type(value) in PYTHON_SCALARS or type(value) is bool:
        return ()
    if isinstance(value, np.ndarray | np.generic):
        return value.shape
    return aval_of(value).shape


def _as_dtype(value, dtype):
    """Return the scalar ``value`` with dtype ``dtype`` (strongly typed)."""
    dtype = dtypes.canonicalize_dtype(dtypes.dtype(dtype))
    if type(value) in PYTHON_SCALARS:
        return python_scalar_as(value, dtype)
    if type(value) is bool:
        return np.bool_(value).astype(dtype)
    if isinstance(value, np.ndarray | np.generic):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(value).astype(dtype)[()]
    from .elementwise import _convert_element_type

    return _convert_element_type(value, dtype, weak_type=False)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """Return ``fill_value`` in the shape and dtype of ``x`` unless given (jax.lax.full_like).

    The result is weakly typed when ``x`` is and no ``dtype`` is given. It is put
    on ``sharding`` when given (as ``device_put``); without it it has ``x``'s type.
    """
    if sharding is not None:
        return device_put(full_like(x, fill_value, dtype, shape), sharding)
    aval = aval_of(x)
    weak = dtype is None and aval.weak_type
    if dtype is None:
        dtype = aval.dtype
    else:
        dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "full_like")
    shape = aval.shape if shape is None else shape
    if isinstance(dtype, dtypes.ExtendedDType):
        return vary_like(_full_extended(shape, fill_value, dtype), aval)
    if weak:
        from .elementwise import _convert_element_type

        value = _convert_element_type(fill_value, dtype, weak_type=True)
        return vary_like(typed_like(broadcast(value, _broadcast_shape(shape)), aval), aval)
    return vary_like(typed_like(full(shape, fill_value, dtype), aval), aval)


def typed_like(out, like_aval):
    """Return ``out`` with the sharding in ``like_aval``'s type, as JAX's ``full_like`` has.

    Only where ``out`` is typed otherwise (a constant made under ``jax.set_mesh`` is
    typed on the mesh, replicated) and has ``like_aval``'s shape; an untyped ``out``
    already matches any sharding.
    """
    out_aval = aval_of(out)
    if (
        like_aval.type_sharding is None
        or out_aval.type_sharding is None
        or out_aval.shape != like_aval.shape
        or sharding_entries(out_aval) == sharding_entries(like_aval)
    ):
        return out
    return reshard(out, like_aval.type_sharding)


def vary_like(out, like_aval):
    """Return ``out`` made to vary over the manual axes ``like_aval`` varies over.

    Inside shard_map with ``check_vma`` a value built "like" a varying one varies
    as it does (JAX's ``full_like`` inserts the ``pvary``).
    """
    missing = getattr(like_aval, "vma", frozenset()) - getattr(aval_of(out), "vma", frozenset())
    if not missing or not vma_checked():
        return out
    return pvary_p.bind(out, axes=order_axes(missing))
