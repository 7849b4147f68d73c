"""Indexing along one axis on top of the primitives: ``slice_in_dim``, ``index_in_dim``,
``dynamic_slice_in_dim``, ``dynamic_index_in_dim``, ``dynamic_update_slice_in_dim``,
``dynamic_update_index_in_dim`` and ``index_take`` (the jax.lax functions of those names).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from .. import elementwise as _ew
from .. import structural as _st
from .._common import aval_of
from .dimension_numbers import GatherDimensionNumbers
from .dynamic_slice import _start_index_dtype, dynamic_slice, dynamic_update_slice
from .gather import gather


def _axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def dynamic_slice_in_dim(
    operand, start_index, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True
):
    """Slice ``slice_size`` items along ``axis`` from a traced start (lax.dynamic_slice_in_dim)."""
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(
    operand, index, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
):
    """Take element ``index`` (traced) along ``axis`` (jax.lax.dynamic_index_in_dim)."""
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    if keepdims:
        return out
    return _st.squeeze(out, (_axis(axis, aval_of(operand).ndim),))


def dynamic_update_slice_in_dim(
    operand, update, start_index, axis: int, *, allow_negative_indices: bool = True
):
    """Write ``update`` at a traced start along ``axis`` (jax.lax.dynamic_update_slice_in_dim)."""
    ndim = aval_of(operand).ndim
    axis = _axis(axis, ndim)
    starts = [0] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(
    operand, update, index, axis: int, *, allow_negative_indices: bool = True
):
    """Write ``update`` at position ``index`` along ``axis`` (jax.lax.dynamic_update_index_in_dim).

    ``update`` may lack the ``axis`` dimension; it is added.
    """
    ndim = aval_of(operand).ndim
    axis = _axis(axis, ndim)
    if aval_of(update).ndim == ndim - 1:
        update = _st.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """Take the static element ``index`` along ``axis`` (jax.lax.index_in_dim)."""
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    index = operator.index(index)
    size = shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else _st.squeeze(out, (axis,))


def slice_in_dim(
    operand, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
):
    """Take the static slice ``[start:limit:stride]`` along ``axis`` (jax.lax.slice_in_dim).

    Negative bounds count from the end; None means the whole extent.
    """
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return _st.slice(operand, starts, limits, strides)


def index_take(src, idxs, axes: Sequence[int]):
    """Take ``src[idxs[0], idxs[1], ...]`` along ``axes`` with a gather (jax.lax.index_take).

    Indices are taken modulo the size of their axis.
    """
    shape = aval_of(src).shape
    axes = tuple(_axis(a, len(shape)) for a in axes)
    idxs = list(idxs)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: got {len(idxs)} index arrays for {len(axes)} axes")
    batch = aval_of(idxs[0]).shape
    dtype = _start_index_dtype(idxs)
    columns = []
    for i, axis in zip(idxs, axes, strict=True):
        i = _ew.convert_element_type(i, dtype)
        size = np.asarray(max(shape[axis], 1), dtype)
        i = _ew.rem(i, size)
        i = _ew.select_n(_ew.lt(i, np.zeros((), dtype)), i, _ew.add(i, size))
        columns.append(_st.reshape(i, (*batch, 1)))
    indices = _st.concatenate(columns, len(batch))
    slice_sizes = tuple(1 if d in axes else s for d, s in enumerate(shape))
    offset = tuple(range(len(batch), len(batch) + len(shape) - len(axes)))
    dn = GatherDimensionNumbers(
        offset_dims=offset, collapsed_slice_dims=tuple(sorted(axes)), start_index_map=axes
    )
    return gather(src, indices, dn, slice_sizes)
