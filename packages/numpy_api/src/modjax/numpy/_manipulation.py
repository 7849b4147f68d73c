"""Shapes, joins, splits and reordering: ``reshape``, ``concatenate``, ``split``, ``tile``, ...

Everything here moves, repeats or drops elements with lax's structural
primitives (``reshape``, ``transpose``, ``slice``, ``rev``, ``concatenate``,
``pad``, ``broadcast_in_dim``); sizes must be static, as in JAX. Where numpy
takes index data (``split`` points, ``repeat`` counts, ``roll`` shifts) a
concrete value compiles to slices; a traced one is accepted where JAX accepts
it (``repeat`` with ``total_repeat_length``, ``roll``). Shape errors raise
TypeError where JAX does (a bad reshape), ValueError for bad axes.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.autodiff.jvp import with_array_values
from modjax.lax.structural import unsharded_in_type
from modjax.sharding import reshard
from modjax.sharding.constraint import operation_out_sharding, placed_out_sharding
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import _invalid_shape_error
from modjax.tracecore.core import Tracer, concrete_or_error

from . import _util
from ._eager_jit import compile_on_arrays
from ._util import (
    ARRAY_TYPES,
    ARRAYLIKE,
    aval,
    canonical_dtype,
    canonicalize_axes,
    canonicalize_axis,
    check_arraylike,
    convert,
    promote_dtypes,
    shape_of,
)

__all__ = [
    "append",
    "array_split",
    "astype",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "column_stack",
    "concat",
    "concatenate",
    "copy",
    "dot",
    "dsplit",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "matmul",
    "matrix_transpose",
    "moveaxis",
    "ndim",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "row_stack",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "trim_zeros",
    "unstack",
    "vsplit",
    "vstack",
]


def _array(a: Any, name: str):
    check_arraylike(name, a)
    if isinstance(a, ARRAY_TYPES):
        return with_array_values(a)  # a reshape to the same shape binds nothing
    from ._creation import asarray

    return asarray(a)


def _static_int(value: Any, what: str) -> int:
    """Return ``value`` as a Python int; a tracer raises ConcretizationTypeError."""
    value = concrete_or_error(value, what)
    return operator.index(np.asarray(value).item() if hasattr(value, "shape") else value)


def _static_ints(value: Any, what: str) -> np.ndarray:
    """Return concrete integer data as a 1-d numpy array (tracers raise ConcretizationTypeError)."""
    value = concrete_or_error(value, what)
    arr = np.asarray(value)
    if arr.dtype.kind not in "iub" and arr.size:  # JAX takes an empty float array (np.cumsum([]))
        raise TypeError(f"{what} must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64).reshape(-1)


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _shape_of_any(name: str, a: Any) -> tuple[int, ...]:
    """``a``'s shape, as JAX reads it: an array's, any object's ``shape`` attribute (a
    ShapeDtypeStruct), or that of what ``__jax_array__`` gives; a list or other non-array
    still works with JAX's DeprecationWarning."""
    if isinstance(a, ARRAYLIKE):
        return shape_of(a)
    own = getattr(a, "shape", None)
    if own is not None:
        return tuple(own)
    method = getattr(a, "__jax_array__", None)
    if method is not None:
        return shape_of(method())
    warnings.warn(
        f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
        "In a future JAX release this will be an error.",
        DeprecationWarning,
        stacklevel=3,
    )
    return np.shape(a)


def shape(a: Any) -> tuple[int, ...]:
    """Return the shape of ``a`` (jax.numpy.shape)."""
    return _shape_of_any("shape", a)


def ndim(a: Any) -> int:
    """Return the number of dimensions of ``a`` (jax.numpy.ndim)."""
    return len(_shape_of_any("ndim", a))


def size(a: Any, axis: int | Sequence[int] | None = None) -> int:
    """Return the number of elements of ``a``, or along ``axis`` or axes (jax.numpy.size)."""
    s = _shape_of_any("size", a)
    if axis is None:
        return math.prod(s)
    axes = canonicalize_axes(axis, len(s))
    return math.prod(s[i] for i in axes)


# --- reshaping and axes ---------------------------------------------------------------------


def _new_shape(new: Any, size_: int, old: tuple[int, ...]) -> tuple[int, ...]:
    given = new if isinstance(new, Sequence) else [new]
    try:
        dims = [operator.index(d) for d in given]
    except TypeError:  # a traced or non-integer size: JAX's canonicalize_shape error
        raise _invalid_shape_error(given) from None
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        raise TypeError(
            f"can only specify one unknown axis size with a `-1` value, got {tuple(dims)}"
        )
    if any(d < -1 for d in dims):
        raise TypeError(f"reshape new sizes must be non-negative or -1, got {tuple(dims)}")
    if unknown:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size_ % known:
            raise TypeError(
                f"cannot reshape array of shape {old} (size {size_}) into shape "
                f"{tuple(dims)} because the product of specified axis sizes ({known}) does not "
                f"evenly divide {size_}"
            )
        dims[unknown[0]] = size_ // known
    if math.prod(dims) != size_:
        shape_text = dims[0] if len(dims) == 1 and not isinstance(new, Sequence) else tuple(dims)
        raise TypeError(
            f"cannot reshape array of shape {old} (size {size_}) into shape {shape_text} "
            f"(size {math.prod(dims)})"
        )
    return tuple(dims)


def reshape(
    a: Any,
    shape: Any = None,
    order: str = "C",
    *,
    newshape: Any = None,
    copy=None,
    out_sharding=None,
):
    """Give ``a`` a new shape with as many elements; one size may be -1 (jax.numpy.reshape).

    ``order="F"`` reads and writes the elements in column-major order.
    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh)
    is the result's sharding, for reshapes that split or merge dimensions split
    over explicit mesh axes in ways the type cannot follow.
    """
    if out_sharding is not None:  # JAX ignores it for an operand with no mesh, outside one
        a = _array(a, "reshape")
        out_sharding = operation_out_sharding(out_sharding, "reshape", [aval(a)])
    if out_sharding is not None:
        out = reshape(unsharded_in_type(a), shape, order, newshape=newshape)
        return reshard(out, out_sharding)
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing the required argument 'shape'")
    a = _array(a, "reshape")
    av = aval(a)
    dims = _new_shape(shape, av.size, av.shape)
    if order == "C":
        return lax.reshape(a, dims)
    if order == "F":
        return transpose(lax.reshape(transpose(a), dims[::-1]))
    if order == "A":
        raise NotImplementedError("jnp.reshape order='A' is not implemented (as in JAX).")
    raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")


def ravel(a: Any, order: str = "C", *, out_sharding=None):
    """Flatten ``a`` to one dimension (jax.numpy.ravel); ``out_sharding`` as ``reshape``'s."""
    if order == "K":  # numpy's memory order: JAX arrays have none to follow
        raise NotImplementedError("jnp.ravel order='K' is not implemented (as in JAX).")
    return reshape(a, (-1,), order, out_sharding=out_sharding)


def transpose(a: Any, axes: Sequence[int] | None = None):
    """Permute the axes of ``a``; reverse them by default (jax.numpy.transpose)."""
    a = _array(a, "transpose")
    n = aval(a).ndim
    if axes is None:
        perm = tuple(range(n - 1, -1, -1))
    else:
        # lax.transpose raises JAX's TypeError for a repeated or missing axis
        perm = tuple(canonicalize_axis(ax, n) for ax in axes)
    return lax.transpose(a, perm)


def permute_dims(a: Any, /, axes: Sequence[int]):
    """Permute the axes of ``a`` as ``axes`` says (jax.numpy.permute_dims, Array API)."""
    return transpose(a, axes)


def matrix_transpose(x: Any, /):
    """Swap the last two axes of ``x`` (jax.numpy.matrix_transpose)."""
    x = _array(x, "matrix_transpose")
    n = aval(x).ndim
    if n < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={n}")
    return swapaxes(x, -1, -2)


def swapaxes(a: Any, axis1: int, axis2: int):
    """Interchange two axes of ``a`` (jax.numpy.swapaxes)."""
    a = _array(a, "swapaxes")
    n = aval(a).ndim
    perm = list(range(n))
    i, j = canonicalize_axis(axis1, n), canonicalize_axis(axis2, n)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]):
    """Move axes of ``a`` to new positions, the others keeping their order (jax.numpy.moveaxis)."""
    a = _array(a, "moveaxis")
    n = aval(a).ndim
    src = list(source) if isinstance(source, Sequence | np.ndarray) else [source]
    dst = list(destination) if isinstance(destination, Sequence | np.ndarray) else [destination]
    src = [canonicalize_axis(s, n) for s in src]
    dst = [canonicalize_axis(d, n) for d in dst]
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        # TypeError as JAX's (its transpose rejects the permutation).
        raise TypeError(f"repeated axis in moveaxis: source={source}, destination={destination}")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


def rollaxis(a: Any, axis: int, start: int = 0):
    """Move ``axis`` to sit before position ``start`` (jax.numpy.rollaxis)."""
    a = _array(a, "rollaxis")
    n = aval(a).ndim
    axis = canonicalize_axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f"start={start} must be in [{-n}, {n}]")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if start != axis else a


def squeeze(a: Any, axis: int | Sequence[int] | None = None):
    """Remove size-1 axes of ``a`` (all of them, or those of ``axis``) (jax.numpy.squeeze)."""
    a = _array(a, "squeeze")
    s = aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = _util.canonicalize_axes(axis, len(s))
        for ax in axes:
            if s[ax] != 1:
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one, got "
                    f"shape={s} and dimensions={axes}"
                )
    return lax.squeeze(a, axes) if axes else a


def expand_dims(a: Any, axis: int | Sequence[int]):
    """Insert size-1 axes at the positions ``axis`` of the result (jax.numpy.expand_dims)."""
    a = _array(a, "expand_dims")
    axes = (axis,) if not isinstance(axis, Sequence) else tuple(axis)
    n_out = aval(a).ndim + len(axes)
    canon = [canonicalize_axis(ax, n_out) for ax in axes]
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(axes)}")
    return lax.expand_dims(a, tuple(canon))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Return the shape that ``shapes`` broadcast to (jax.numpy.broadcast_shapes)."""
    shapes = [(operator.index(s),) if not isinstance(s, Sequence) else tuple(s) for s in shapes]
    if not shapes:
        return ()
    return _util.broadcast_shapes(*shapes)


def broadcast_to(array: Any, shape: Any, *, out_sharding=None):
    """Broadcast ``array`` to ``shape`` with numpy's rules (jax.numpy.broadcast_to).

    ``out_sharding`` is the result's sharding.
    """
    array = _array(array, "broadcast_to")
    shape = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(shape)
    out = _util.broadcast_to(array, tuple(operator.index(d) for d in shape))
    out_sharding = placed_out_sharding(out_sharding, "jnp.broadcast_to", out, [aval(array)])
    return out if out_sharding is None else reshard(out, out_sharding)


def broadcast_arrays(*args: Any) -> list:
    """Broadcast ``args`` against each other, keeping their dtypes (jax.numpy.broadcast_arrays)."""
    arrays = [_array(a, "broadcast_arrays") for a in args]
    if not arrays:
        return []
    target = broadcast_shapes(*[aval(a).shape for a in arrays])
    return [_util.broadcast_to(a, target) for a in arrays]


def _atleast(name: str, fn: Callable, arys: tuple):
    out = [fn(_array(a, name)) for a in arys]
    return out[0] if len(out) == 1 else out


def _at_least_1d(a):
    return lax.expand_dims(a, (0,)) if aval(a).ndim == 0 else a


def _at_least_2d(a):
    n = aval(a).ndim
    return lax.expand_dims(a, tuple(range(2 - n))) if n < 2 else a


def _at_least_3d(a):
    n = aval(a).ndim
    if n == 0:
        return lax.expand_dims(a, (0, 1, 2))
    if n == 1:
        return lax.expand_dims(a, (0, 2))
    if n == 2:
        return lax.expand_dims(a, (2,))
    return a


def atleast_1d(*arys: Any):
    """Give each argument at least one dimension (jax.numpy.atleast_1d)."""
    return _atleast("atleast_1d", _at_least_1d, arys)


def atleast_2d(*arys: Any):
    """Give each argument at least two dimensions, adding leading axes (jax.numpy.atleast_2d)."""
    return _atleast("atleast_2d", _at_least_2d, arys)


def atleast_3d(*arys: Any):
    """Give each argument at least three dimensions, numpy's way (jax.numpy.atleast_3d).

    A 1-d array of length N becomes (1, N, 1); a 2-d (M, N) becomes (M, N, 1).
    """
    return _atleast("atleast_3d", _at_least_3d, arys)


# --- joining --------------------------------------------------------------------------------


def concatenate(arrays: Sequence, axis: int | None = 0, dtype: Any = None):
    """Join ``arrays`` along an existing ``axis``, promoting dtypes (jax.numpy.concatenate).

    ``axis=None`` joins the flattened arrays.
    """
    if isinstance(arrays, ARRAY_TYPES + (np.ndarray,)):
        arrays = list(unstack(arrays, axis=0)) if aval(arrays).ndim else [arrays]
    arrays = [_array(a, "concatenate") for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [convert(a, canonical_dtype(dtype, "concatenate")) for a in arrays]
    n = aval(arrays[0]).ndim
    if n == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, n)
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


def concat(arrays: Sequence, /, *, axis: int | None = 0):
    """Join ``arrays`` along ``axis`` (jax.numpy.concat, the Array API's name)."""
    return concatenate(arrays, axis)


def stack(arrays: Sequence, axis: int = 0, out=None, dtype: Any = None):
    """Join ``arrays`` of one shape along a new ``axis`` (jax.numpy.stack)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if isinstance(arrays, ARRAY_TYPES + (np.ndarray,)):
        arrays = list(unstack(arrays, axis=0))
    arrays = [_array(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = {aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}.")
    n = aval(arrays[0]).ndim + 1
    axis = canonicalize_axis(axis, n)
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [convert(a, canonical_dtype(dtype, "stack")) for a in arrays]
    return lax.stack(arrays, axis)  # one stack_p, as JAX's jnp.stack


def _sequence(name: str, tup: Any) -> list:
    if isinstance(tup, ARRAY_TYPES + (np.ndarray,)):
        return list(unstack(tup, axis=0))
    return [_array(a, name) for a in tup]


def vstack(tup: Sequence, dtype: Any = None):
    """Join arrays along the first axis, after ``atleast_2d`` (jax.numpy.vstack)."""
    arrays = [_at_least_2d(a) for a in _sequence("vstack", tup)]
    return concatenate(arrays, 0, dtype)


row_stack = vstack


def hstack(tup: Sequence, dtype: Any = None):
    """Join arrays along the second axis (the first for 1-d arrays) (jax.numpy.hstack)."""
    arrays = [_at_least_1d(a) for a in _sequence("hstack", tup)]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    return concatenate(arrays, 0 if aval(arrays[0]).ndim == 1 else 1, dtype)


def dstack(tup: Sequence, dtype: Any = None):
    """Join arrays along the third axis, after ``atleast_3d`` (jax.numpy.dstack)."""
    arrays = [_at_least_3d(a) for a in _sequence("dstack", tup)]
    return concatenate(arrays, 2, dtype)


def column_stack(tup: Sequence):
    """Join 1-d arrays as columns (and 2-d arrays as they are) (jax.numpy.column_stack)."""
    arrays = []
    for a in _sequence("column_stack", tup):
        n = aval(a).ndim
        arrays.append(lax.expand_dims(a, (1,)) if n == 1 else _at_least_2d(a))
    return concatenate(arrays, 1)


def append(arr: Any, values: Any, axis: int | None = None):
    """Append ``values`` to ``arr`` along ``axis`` (flattened when None) (jax.numpy.append)."""
    arr, values = _array(arr, "append"), _array(values, "append")
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def block(arrays: Any):
    """Assemble an array from nested lists of blocks (jax.numpy.block).

    The innermost lists join along the last axis, the next ones along the
    second-to-last, and so on; blocks get leading size-1 axes up to the
    result's rank, as numpy does.
    """

    def depth(x, where):
        if isinstance(x, tuple):
            raise TypeError(f"jnp.block: arrays is a tuple at {where}; only lists may nest blocks")
        if not isinstance(x, list):
            return 0
        if not x:
            raise ValueError(f"jnp.block: list at {where} cannot be empty")
        depths = {depth(item, f"{where}[{i}]") for i, item in enumerate(x)}
        if len(depths) != 1:
            raise ValueError(f"jnp.block: list depths are mismatched at {where}")
        return 1 + depths.pop()

    levels = depth(arrays, "arrays")

    def leaves(x):
        return [leaf for item in x for leaf in leaves(item)] if isinstance(x, list) else [x]

    blocks = [_array(leaf, "block") for leaf in leaves(arrays)]
    dtype = _util.result_type(*blocks)[0] if blocks else None
    ndim = builtins.max([levels] + [aval(b).ndim for b in blocks])

    def assemble(x, level):
        if not isinstance(x, list):
            x = convert(_array(x, "block"), dtype)
            n = aval(x).ndim
            return lax.expand_dims(x, tuple(range(ndim - n))) if n < ndim else x
        parts = [assemble(item, level + 1) for item in x]
        axis = ndim - (levels - level)
        return parts[0] if len(parts) == 1 else lax.concatenate(parts, axis)

    return assemble(arrays, 0)


# --- splitting ------------------------------------------------------------------------------


def _slice_axis(a, start: int, stop: int, axis: int, step: int = 1):
    av = aval(a)
    starts = [0] * av.ndim
    limits = list(av.shape)
    starts[axis], limits[axis] = start, stop
    strides = None
    if step != 1:
        strides = [1] * av.ndim
        strides[axis] = step
    return lax.slice(a, starts, limits, strides)


def _split(name: str, ary: Any, indices_or_sections: Any, axis: int, even: bool) -> list:
    ary = _array(ary, name)
    av = aval(ary)
    axis = canonicalize_axis(axis, av.ndim)
    n = av.shape[axis]
    if isinstance(indices_or_sections, Sequence) or np.ndim(
        indices_or_sections
        if not isinstance(indices_or_sections, ARRAY_TYPES)
        else np.empty(aval(indices_or_sections).shape)
    ):
        points = [int(p) for p in _static_ints(indices_or_sections, f"{name} indices")]
        bounds = [0, *points, n]
        sizes = []
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            start, stop, _ = builtins.slice(lo, hi).indices(n)  # numpy's a[lo:hi]
            sizes.append(builtins.max(start, stop) - start)
        if builtins.sum(sizes) == n:  # one split_p, as JAX's
            return list(lax.split(ary, sizes, axis))
        starts = [
            builtins.slice(lo, hi).indices(n)[0] for lo, hi in zip(bounds, bounds[1:], strict=False)
        ]
        return [_slice_axis(ary, b, b + k, axis) for b, k in zip(starts, sizes, strict=True)]
    sections = _static_int(indices_or_sections, f"{name} sections")
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    quotient, rest = divmod(n, sections)
    if even and rest:
        raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    sizes = [quotient + 1] * rest + [quotient] * (sections - rest)
    return list(lax.split(ary, sizes, axis))


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split ``ary`` into equal sections or at indices along ``axis`` (jax.numpy.split).

    An integer number of sections must divide the axis (ValueError otherwise);
    the indices must be concrete.
    """
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split ``ary`` into nearly equal sections (the first ones longer) (jax.numpy.array_split)."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along the second axis (the first for 1-d arrays) (jax.numpy.hsplit)."""
    ary = _array(ary, "hsplit")
    n = aval(ary).ndim
    if n == 0:
        raise np.exceptions.AxisError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", ary, indices_or_sections, 0 if n == 1 else 1, even=True)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along the first axis (jax.numpy.vsplit).

    Unlike numpy's, JAX's splits 1-d arrays too.
    """
    ary = _array(ary, "vsplit")
    if aval(ary).ndim < 1:
        # An AxisError is JAX's IndexError and numpy's ValueError.
        raise np.exceptions.AxisError("vsplit only works on arrays of 1 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, even=True)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split along the third axis of an array of 3 or more dimensions (jax.numpy.dsplit)."""
    ary = _array(ary, "dsplit")
    if aval(ary).ndim < 3:
        raise np.exceptions.AxisError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, even=True)


def unstack(x: Any, /, *, axis: int = 0) -> tuple:
    """Split ``x`` into the tuple of its slices along ``axis`` (jax.numpy.unstack)."""
    x = _array(x, "unstack")
    av = aval(x)
    if av.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was given.")
    return lax.unstack(x, canonicalize_axis(axis, av.ndim))


# --- repeating and reordering ---------------------------------------------------------------


def take_static(a, indices: np.ndarray, axis: int):
    """Gather the concrete ``indices`` (in range) of ``a`` along ``axis`` with slices.

    Runs of consecutive indices become one slice (reversed runs a ``rev``),
    repeats of one index a broadcast, and the pieces are concatenated: no
    gather is needed when the indices are known.
    """
    av = aval(a)
    indices = [int(i) for i in np.asarray(indices).reshape(-1)]
    if not indices:
        return _slice_axis(a, 0, 0, axis)
    pieces = []
    k = 0
    while k < len(indices):
        j = k + 1
        step = indices[j] - indices[k] if j < len(indices) else 0
        if step not in (-1, 0, 1):
            step, j = 0, k + 1
        else:
            while j < len(indices) and indices[j] - indices[j - 1] == step:
                j += 1
        first, count = indices[k], j - k
        if step == 0:
            piece = _slice_axis(a, first, first + 1, axis)
            if count > 1:
                target = list(av.shape)
                target[axis] = count
                piece = lax.broadcast_in_dim(piece, tuple(target), tuple(range(av.ndim)))
        elif step == 1:
            piece = _slice_axis(a, first, first + count, axis)
        else:
            piece = lax.rev(_slice_axis(a, first - count + 1, first + 1, axis), (axis,))
        pieces.append(piece)
        k = j
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


def repeat(
    a: Any,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
    out_sharding=None,
):
    """Repeat each element of ``a`` ``repeats`` times along ``axis`` (jax.numpy.repeat).

    ``repeats`` is an int or one count per element; with ``axis=None`` the
    flattened array is repeated. Traced counts need ``total_repeat_length``
    (the static output length: longer results are cut, shorter ones are
    filled with the axis' last element, as in JAX). ``out_sharding`` is the
    result's sharding.
    """
    if out_sharding is not None:
        a = _array(a, "repeat")
        out = repeat(unsharded_in_type(a), repeats, axis, total_repeat_length=total_repeat_length)
        out_sharding = placed_out_sharding(out_sharding, "repeat", out, [aval(a)])
        return out if out_sharding is None else reshard(out, out_sharding)
    a = _array(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    av = aval(a)
    axis = canonicalize_axis(axis, av.ndim)
    n = av.shape[axis]
    if total_repeat_length is not None:
        total_repeat_length = operator.index(total_repeat_length)
    if _is_concrete(repeats):
        counts = np.asarray(concrete_or_error(repeats)).astype(np.int64)
        if counts.ndim > 1:
            raise ValueError(f"repeats must be a scalar or 1-d, got shape {counts.shape}")
        if (counts < 0).any():
            raise ValueError(f"repeats may not contain negative values, got {counts}")
        if counts.ndim == 1 and counts.shape[0] == 1:
            counts = counts.reshape(())
        if counts.ndim == 1 and counts.shape[0] != n:
            raise ValueError(
                f"repeat: repeats of shape {counts.shape} do not match the axis of size {n}"
            )
        index = np.repeat(np.arange(n), counts)
        if total_repeat_length is not None:
            if index.size >= total_repeat_length:
                index = index[:total_repeat_length]
            elif n:  # JAX fills with the axis' last element, whatever the counts
                index = np.concatenate([index, np.full(total_repeat_length - index.size, n - 1)])
            else:
                raise ValueError("repeat: cannot fill total_repeat_length from an empty axis")
        if counts.ndim == 0 and index.size == n * int(counts) and int(counts) > 0:
            r = int(counts)  # one broadcast and one reshape
            shape_out = av.shape[:axis] + (n, r) + av.shape[axis + 1 :]
            dims = tuple(i for i in range(av.ndim + 1) if i != axis + 1)
            out = lax.broadcast_in_dim(a, shape_out, dims)
            return lax.reshape(out, av.shape[:axis] + (n * r,) + av.shape[axis + 1 :])
        return take_static(a, index, axis)
    if total_repeat_length is None:
        concrete_or_error(
            repeats,
            "jnp.repeat with traced repeats needs a static total_repeat_length",
        )
    int_dtype = dtypes.default_int_dtype()
    counts = lax.convert_element_type(_array(repeats, "repeat"), int_dtype)
    if aval(counts).ndim == 0:
        counts = lax.broadcast_in_dim(counts, (n,), ())
    # output position i shows element j when ends[j-1] <= i < ends[j]: mark every end,
    # then count the marks at or before i (JAX's scatter-and-cumsum construction)
    ends = lax.cumsum(counts, 0)
    marks = lax.full((total_repeat_length,), 0, int_dtype).at[ends].add(1, mode="drop")
    index = lax.min(lax.cumsum(marks, 0), np.asarray(n - 1, int_dtype)[()])
    from ._indexing import take

    return take(a, index, axis=axis)


def tile(A: Any, reps: Any):  # noqa: N803 - numpy's name
    """Repeat the whole of ``A`` ``reps`` times along each axis (jax.numpy.tile)."""
    A = _array(A, "tile")
    reps = (
        (_static_int(reps, "tile reps"),)
        if not isinstance(reps, Sequence)
        else tuple(_static_int(r, "tile reps") for r in reps)
    )
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got {reps}")
    av = aval(A)
    n = builtins.max(av.ndim, len(reps))
    reps = (1,) * (n - len(reps)) + reps
    shape_a = (1,) * (n - av.ndim) + av.shape
    if shape_a != av.shape:
        A = lax.reshape(A, shape_a)
    return lax.tile(A, reps)  # one tile_p, as JAX's


def resize(a: Any, new_shape: Any):
    """Return ``a`` flattened, repeated cyclically and reshaped to ``new_shape`` (jax.numpy.resize).

    An empty ``a`` gives zeros, as in JAX.
    """
    a = _array(a, "resize")
    new_shape = (
        (operator.index(new_shape),)
        if not isinstance(new_shape, Sequence)
        else tuple(operator.index(d) for d in new_shape)
    )
    if any(d < 0 for d in new_shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    total = math.prod(new_shape)
    flat = ravel(a)
    n = aval(flat).shape[0]
    if n == 0:
        return lax.full(new_shape, 0, aval(a).dtype)
    copies = -(-total // n)
    flat = tile(flat, copies) if copies > 1 else flat
    return lax.reshape(_slice_axis(flat, 0, total, 0), new_shape)


def flip(m: Any, axis: int | Sequence[int] | None = None):
    """Reverse the order of elements along ``axis`` (all axes by default) (jax.numpy.flip)."""
    m = _array(m, "flip")
    axes = _util.canonicalize_axes(axis, aval(m).ndim)
    return lax.rev(m, axes) if axes else m


def fliplr(m: Any):
    """Reverse the order of the columns (axis 1) (jax.numpy.fliplr)."""
    return flip(m, 1)


def flipud(m: Any):
    """Reverse the order of the rows (axis 0) (jax.numpy.flipud)."""
    return flip(m, 0)


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None):
    """Shift elements of ``a`` cyclically along ``axis`` (jax.numpy.roll).

    ``shift`` and ``axis`` may be tuples (broadcast against each other); with
    ``axis=None`` the flattened array is rolled. Traced shifts are accepted.
    """
    a = _array(a, "roll")
    if axis is None:
        return lax.reshape(roll(ravel(a), shift, 0), aval(a).shape)
    av = aval(a)
    axes = (axis,) if not isinstance(axis, Sequence) else tuple(axis)
    if isinstance(shift, ARRAY_TYPES) and aval(shift).ndim == 1:
        shifts = list(unstack(shift))
    elif isinstance(shift, Sequence | np.ndarray) and np.ndim(shift) == 1:
        shifts = list(shift)
    else:
        shifts = [shift]
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(
            f"roll: shift and axis must broadcast, got {len(shifts)} shifts and {len(axes)} axes"
        )
    for s, ax in zip(shifts, axes, strict=True):
        ax = canonicalize_axis(ax, av.ndim)
        n = av.shape[ax]
        if n == 0:
            continue
        if _is_concrete(s):
            k = _static_int(s, "roll shift") % n
            if k:
                a = lax.concatenate(
                    [_slice_axis(a, n - k, n, ax), _slice_axis(a, 0, n - k, ax)], ax
                )
        else:  # a traced shift: a dynamic slice of the array repeated twice
            int_dtype = dtypes.default_int_dtype()
            size = np.asarray(n, int_dtype)[()]
            k = lax.rem(lax.convert_element_type(_array(s, "roll"), int_dtype), size)
            start = lax.rem(lax.sub(size, lax.rem(lax.add(k, size), size)), size)
            starts = [np.asarray(0, int_dtype)[()]] * av.ndim
            starts[ax] = start
            doubled = lax.concatenate([a, a], ax)
            a = lax.dynamic_slice(doubled, starts, av.shape)
    return a


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)):
    """Rotate ``m`` by 90 degrees ``k`` times in the plane of ``axes`` (jax.numpy.rot90)."""
    m = _array(m, "rot90")
    n = aval(m).ndim
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if n < 2:
        raise ValueError(f"rot90 requires an array of at least 2 dimensions, got ndim={n}")
    a0, a1 = canonicalize_axis(axes[0], n), canonicalize_axis(axes[1], n)
    if a0 == a1:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return lax.rev(m, tuple(sorted((a0, a1))))
    perm = list(range(n))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(lax.rev(m, (a1,)), tuple(perm))
    return lax.rev(lax.transpose(m, tuple(perm)), (a1,))


# --- trimming -------------------------------------------------------------------------------


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None):
    """Drop the leading (``f``) and/or trailing (``b``) zeros of ``filt`` (jax.numpy.trim_zeros).

    Along each axis of ``axis`` (all by default) the result keeps the span of
    slices holding a nonzero element. Its size depends on the values, so
    ``filt`` must be concrete.
    """
    filt = _array(filt, "trim_zeros")
    values = np.asarray(concrete_or_error(filt, "the `filt` argument of trim_zeros()"))
    ndim = values.ndim
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {canonicalize_axis(a, ndim) for a in ((axis,) if np.ndim(axis) == 0 else axis)}
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt

    def span(ax: int) -> slice:
        if ax not in axes:
            return slice(None)
        nonzero = np.flatnonzero(values.any(axis=tuple(i for i in range(ndim) if i != ax)))
        if nonzero.size == 0:
            return slice(0, 0)
        start = int(nonzero[0]) if "f" in trim else None
        stop = int(nonzero[-1]) + 1 if "b" in trim else None
        return slice(start, stop)

    return filt[tuple(span(ax) for ax in range(ndim))]


# --- dtypes and copies ----------------------------------------------------------------------


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device=None):
    """Convert ``x`` to ``dtype`` (jax.numpy.astype); the result is strongly typed."""
    x = _array(x, "astype")
    return lax.convert_element_type(x, canonical_dtype(dtype, "astype"))


def copy(a: Any, order: str | None = None):
    """Return a copy of ``a`` (jax.numpy.copy)."""
    return lax.copy(_array(a, "copy"))


# The products live in _products; these names stay importable from here.
from ._products import dot, matmul  # noqa: E402

# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "append array_split dsplit hsplit vsplit split repeat resize roll rot90 tile",
    values={"append": "values"},
)
