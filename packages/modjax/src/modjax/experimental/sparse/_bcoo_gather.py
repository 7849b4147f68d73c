"""Indexing BCOO arrays: ``bcoo_gather`` and ``BCOO.__getitem__``.

``x[idx]`` follows the route JAX's ``jnp`` indexing takes for a dense array, with
each step done by its BCOO counterpart, so the result's layout is JAX's:
static integers and slices (any step) become ``bcoo_slice``, ``bcoo_rev`` and
``bcoo_squeeze``; traced (or out-of-range) integers with unit-step slices become
``bcoo_dynamic_slice`` and ``bcoo_squeeze``; ``None`` adds a dimension with
``bcoo_broadcast_in_dim``; an integer array becomes ``bcoo_gather``, which slices
once per index (a vmap of ``bcoo_dynamic_slice``) and so adds a batch dimension.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_update_layout
from modjax.experimental.sparse._bcoo_reshape import (
    bcoo_broadcast_in_dim,
    bcoo_reshape,
    bcoo_squeeze,
)
from modjax.experimental.sparse._bcoo_shape import bcoo_transpose
from modjax.experimental.sparse._bcoo_slicing import bcoo_dynamic_slice, bcoo_rev, bcoo_slice
from modjax.tracecore.core import Tracer

__all__ = ["bcoo_gather", "bcoo_getitem"]


def bcoo_gather(
    operand: BCOO,
    start_indices,
    dimension_numbers,
    slice_sizes,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode=None,
    fill_value=None,
) -> BCOO:
    """``lax.gather`` of a BCOO array (``jax.experimental.sparse.bcoo_gather``).

    Only ``mode=None``/``'promise_in_bounds'`` is supported (else NotImplementedError,
    as in JAX). Each start index selects a ``bcoo_dynamic_slice``; the slices are
    stacked along a new leading batch dimension and then arranged as ``lax.gather``
    arranges its output.
    """
    parsed = lax.GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode
    parsed = lax.GatherScatterMode.from_any(parsed)
    if parsed != lax.GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode!r} not yet supported.")
    start_indices = jnp.asarray(start_indices)
    slice_sizes = tuple(operator.index(s) for s in slice_sizes)
    out = modjax.eval_shape(
        lambda x, i: lax.gather(
            x,
            i,
            dimension_numbers,
            slice_sizes,
            unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted,
            mode=parsed,
            fill_value=fill_value,
        ),
        modjax.ShapeDtypeStruct(operand.shape, operand.dtype),
        modjax.ShapeDtypeStruct(start_indices.shape, start_indices.dtype),
    )
    offset_dims = tuple(dimension_numbers.offset_dims)
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    if tuple(dimension_numbers.operand_batching_dims):
        raise NotImplementedError("bcoo_gather with operand_batching_dims")
    zero = jnp.zeros((), start_indices.dtype)
    full_starts: list[Any] = [zero] * operand.ndim
    in_axes: list[int | None] = [None] * operand.ndim
    full_sizes = list(operand.shape)
    for i, j in enumerate(dimension_numbers.start_index_map):
        full_starts[j] = start_indices[..., i].ravel()
        full_sizes[j] = slice_sizes[j]
        in_axes[j] = 0

    def slice_one(starts):
        piece = bcoo_dynamic_slice(operand, starts, slice_sizes=full_sizes)
        return bcoo_squeeze(piece, dimensions=collapsed)

    result = modjax.vmap(slice_one, in_axes=(in_axes,))(full_starts)
    result = bcoo_reshape(
        result,
        new_sizes=(*start_indices.shape[:-1], *result.shape[1:]),
        dimensions=tuple(range(result.ndim)),
    )
    if result.shape:
        batch_dims = tuple(d for d in range(len(out.shape)) if d not in offset_dims)
        permutation = np.zeros(result.ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims, dtype=int)] = np.arange(result.ndim)
        if set(permutation[: len(batch_dims)]) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    return result.reshape(out.shape).astype(out.dtype)


# --- __getitem__ ---------------------------------------------------------------------


def _is_int_scalar(item) -> bool:
    if isinstance(item, bool | np.bool_):
        return False
    if isinstance(item, int | np.integer):
        return True
    shape, dtype = getattr(item, "shape", None), getattr(item, "dtype", None)
    return shape == () and dtype is not None and jnp.issubdtype(dtype, jnp.integer)


def _is_static_int(item) -> bool:
    return isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_)


def _is_index_array(item) -> bool:
    if isinstance(item, list):
        return True
    shape, dtype = getattr(item, "shape", None), getattr(item, "dtype", None)
    return shape is not None and dtype is not None and len(shape) > 0


def _expand(mat: BCOO, idx) -> list:
    items = list(idx) if isinstance(idx, tuple) else [idx]
    for item in items:
        dtype = getattr(item, "dtype", None)
        if isinstance(item, bool | np.bool_) or (dtype is not None and dtype == np.bool_):
            raise NotImplementedError("boolean indexing of a BCOO array is not implemented")
        if not (
            item is None
            or item is Ellipsis
            or isinstance(item, slice)
            or _is_int_scalar(item)
            or _is_index_array(item)
        ):
            raise TypeError(
                "Indexer must be an integer, a slice, None, Ellipsis or an integer array; "
                f"got {item!r}"
            )
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(item is not None and item is not Ellipsis for item in items)
    if consumed > mat.ndim:
        raise IndexError(
            f"Too many indices: array is {mat.ndim}-dimensional, but {consumed} were indexed"
        )
    if any(item is Ellipsis for item in items):
        at = next(k for k, i in enumerate(items) if i is Ellipsis)
        items[at : at + 1] = [slice(None)] * (mat.ndim - consumed)
    else:
        items += [slice(None)] * (mat.ndim - consumed)
    return items


def _expand_dims(mat, newaxis_dims: list[int]):
    if not newaxis_dims:
        return mat
    ndim = mat.ndim + len(newaxis_dims)
    kept = [d for d in range(ndim) if d not in newaxis_dims]
    shape = [1] * ndim
    for d, size in zip(kept, mat.shape, strict=True):
        shape[d] = size
    if not isinstance(mat, BCOO):
        return lax.expand_dims(mat, newaxis_dims)
    return bcoo_broadcast_in_dim(mat, shape=tuple(shape), broadcast_dimensions=tuple(kept))


def _indexed_axes(mat: BCOO, items: list, squeeze: list[int], newaxis: list[int]):
    """Walk the (expanded) index ``items`` over the axes of ``mat``.

    Yields ``(axis, size, item)`` for each integer or slice. A ``None`` yields nothing:
    the position it takes in the result (after the axes so far, less those the caller
    has put in ``squeeze``) is appended to ``newaxis``. An integer on an axis of size 0
    raises IndexError.
    """
    axis = 0
    for item in items:
        if item is None:
            newaxis.append(axis - len(squeeze) + len(newaxis))
            continue
        size = mat.shape[axis]
        if not isinstance(item, slice) and size == 0:
            raise IndexError(f"index is out of bounds for axis {axis} with size 0")
        yield axis, size, item
        axis += 1


def _static_route(mat: BCOO, items: list):
    """JAX's static-slice indexing; None when an integer is out of range."""
    start, limit, strides, rev, squeeze, newaxis = [], [], [], [], [], []
    for axis, size, item in _indexed_axes(mat, items, squeeze, newaxis):
        if isinstance(item, slice):
            a, b, s = item.indices(size)
            if s < 0:
                first = min(size, b + 1 + abs(a - b - 1) % abs(s))
                start.append(first)
                limit.append(max(first, a + 1))
                strides.append(abs(s))
                rev.append(axis)
            else:
                start.append(a)
                limit.append(max(a, b))
                strides.append(s)
        else:
            i = int(item)
            if not -size <= i < size:
                return None
            i = i + size if i < 0 else i
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            squeeze.append(axis)
    out = mat
    if not (
        all(a == 0 for a in start) and tuple(limit) == mat.shape and all(s == 1 for s in strides)
    ):
        out = bcoo_slice(
            out,
            start_indices=start,
            limit_indices=limit,
            strides=None if all(s == 1 for s in strides) else strides,
        )
    if rev:
        out = bcoo_rev(out, rev)
    if squeeze:
        out = bcoo_squeeze(out, dimensions=squeeze)
    return _expand_dims(out, newaxis)


def _dynamic_route(mat: BCOO, items: list):
    starts: list[Any] = []
    sizes, squeeze, newaxis = [], [], []
    trivial = True
    for axis, size, item in _indexed_axes(mat, items, squeeze, newaxis):
        if isinstance(item, slice):
            a, b, s = item.indices(size)
            if s != 1:
                raise NotImplementedError(
                    "indexing a BCOO array with a traced integer and a strided slice "
                    "is not implemented in modjax"
                )
            starts.append(a)
            sizes.append(max(b - a, 0))
            trivial = trivial and (a, sizes[-1]) == (0, size)
        else:
            starts.append(item if isinstance(item, Tracer) else jnp.asarray(item))
            sizes.append(1)
            squeeze.append(axis)
            trivial = False
    out = mat
    if not trivial:
        dtype = jnp.result_type(*(s for s in starts if not isinstance(s, int)))
        starts = [jnp.asarray(s, dtype=dtype) if isinstance(s, int) else s for s in starts]
        out = bcoo_dynamic_slice(out, starts, sizes)
    if squeeze:
        out = bcoo_squeeze(out, dimensions=squeeze)
    return _expand_dims(out, newaxis)


def _gather_route(mat: BCOO, items: list):
    arrays = [k for k, item in enumerate(items) if _is_index_array(item)]
    others = [item for k, item in enumerate(items) if k not in arrays]
    if len(arrays) != 1 or any(
        not (isinstance(i, slice) and i.indices(1) == (0, 1, 1) and i == slice(None))
        for i in others
    ):
        raise NotImplementedError(
            "indexing a BCOO array with an integer array is implemented for one array index "
            "among full slices (x[..., idx, ...]) only"
        )
    axis = arrays[0]
    size = mat.shape[axis]
    index = jnp.asarray(items[axis])
    if not jnp.issubdtype(index.dtype, jnp.integer):
        raise TypeError(f"Indexer arrays must be integers; got dtype {index.dtype}")
    index = jnp.where(index < 0, index + size, index)
    offset = tuple(d for d in range(mat.ndim - 1 + index.ndim) if not axis <= d < axis + index.ndim)
    numbers = lax.GatherDimensionNumbers(
        offset_dims=offset, collapsed_slice_dims=(axis,), start_index_map=(axis,)
    )
    sizes = tuple(1 if d == axis else n for d, n in enumerate(mat.shape))
    return bcoo_gather(mat, index[..., None], numbers, sizes)


def bcoo_getitem(mat: BCOO, idx):
    """``mat[idx]`` for integers, slices, ``None``, ``Ellipsis`` and one integer array."""
    items = _expand(mat, idx)
    if any(_is_index_array(item) for item in items):
        return _gather_route(mat, items)
    if all(item is None or isinstance(item, slice) or _is_static_int(item) for item in items):
        out = _static_route(mat, items)
        if out is not None:
            return out
    return _dynamic_route(mat, items)
