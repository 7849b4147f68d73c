"""Slicing BCOO arrays: ``bcoo_slice``, ``bcoo_dynamic_slice``, ``bcoo_rev``, ``bcoo_concatenate``.

Batch and dense dimensions are sliced (or reversed, or joined) as axes of the
buffers. Along sparse dimensions the stored elements stay where they are: each
index is shifted into the slice, and an element outside it becomes padding (data 0,
index equal to the new sparse size). When the slice has fewer sparse positions than
``nse``, the result is compacted to that many elements with duplicates summed (as
JAX does), so ``nse`` never exceeds the number of sparse positions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_indices import _sum_duplicates_unbatched
from modjax.experimental.sparse.util import map_batched

__all__ = ["bcoo_concatenate", "bcoo_dynamic_slice", "bcoo_rev", "bcoo_slice"]


def _compact(data, indices, *, sparse_shape, nse):
    """Sum duplicates of every batch entry into ``nse`` elements (out-of-range ones dropped)."""
    nb = indices.ndim - 2

    def unbatched(d, i):
        return _sum_duplicates_unbatched(d, i, sparse_shape, nse)

    return map_batched(unbatched, nb, data, indices)


def _keep_data(data, keep, nb):
    """Zero the data of the elements where ``keep`` (shape ``(*batch, nse)``) is False."""
    keep = keep.reshape(keep.shape + (1,) * (data.ndim - keep.ndim))
    return jnp.where(keep, data, jnp.zeros((), data.dtype))


# --- slice ---------------------------------------------------------------------------


def bcoo_slice(
    mat: BCOO,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> BCOO:
    """Slice a BCOO array with static bounds (``jax.experimental.sparse.bcoo_slice``).

    As ``lax.slice``: ``start_indices``, ``limit_indices`` and ``strides`` (default 1)
    give one bound per dimension, with ``0 <= start <= limit <= size`` (else
    ValueError, as in JAX).
    """
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start = tuple(operator.index(i) for i in start_indices)
    limit = tuple(operator.index(i) for i in limit_indices)
    stride = (1,) * mat.ndim if strides is None else tuple(operator.index(i) for i in strides)
    if not len(start) == len(limit) == len(stride) == mat.ndim:
        raise ValueError(
            f"bcoo_slice: indices must have size mat.ndim={mat.ndim}; got "
            f"start_indices={start}, limit_indices={limit}, strides={stride}"
        )
    if any(s <= 0 for s in stride):
        raise ValueError(f"strides must be a sequence of positive integers; got {list(stride)}")
    if not all(0 <= a <= b <= n for a, b, n in zip(start, limit, mat.shape, strict=True)):
        raise ValueError(
            f"bcoo_slice: invalid indices. Got start_indices={list(start)}, "
            f"limit_indices={list(limit)} and shape={mat.shape}"
        )
    new_shape = tuple((b - a + s - 1) // s for a, b, s in zip(start, limit, stride, strict=True))
    data, indices = _slice_buffers(
        mat.data, mat.indices, shape=mat.shape, start=start, limit=limit, stride=stride
    )
    return BCOO((data, indices), shape=new_shape)


@partial(modjax.jit, static_argnames=("shape", "start", "limit", "stride"))
def _slice_buffers(data, indices, *, shape, start, limit, stride):
    nb, nse, ns = indices.ndim - 2, indices.shape[-2], indices.shape[-1]
    data_index: list[Any] = []
    indices_index: list[Any] = []
    for axis in range(nb):
        piece = slice(start[axis], limit[axis], stride[axis])
        data_index.append(piece if data.shape[axis] == shape[axis] else slice(None))
        indices_index.append(piece if indices.shape[axis] == shape[axis] else slice(None))
    data_index.append(slice(None))
    data_index.extend(
        slice(a, b, s) for a, b, s in list(zip(start, limit, stride, strict=True))[nb + ns :]
    )
    data = data[tuple(data_index)]
    indices = indices[tuple(indices_index)]
    if ns == 0:
        return data, indices
    lo = np.array(start[nb : nb + ns])
    hi = np.array(limit[nb : nb + ns])
    step = np.array(stride[nb : nb + ns])
    new_sparse = tuple(int(n) for n in (hi - lo + step - 1) // step)
    lo_, hi_, step_ = (jnp.asarray(v).astype(indices.dtype) for v in (lo, hi, step))
    keep = jnp.all((indices >= lo_) & (indices < hi_) & ((indices - lo_) % step_ == 0), axis=-1)
    padding = jnp.asarray(np.array(new_sparse)).astype(indices.dtype)
    indices = jnp.where(keep[..., None], (indices - lo_ + step_ - 1) // step_, padding)
    data = _keep_data(data, keep, nb)
    if nse > math.prod(new_sparse):
        data, indices = _compact(data, indices, sparse_shape=new_sparse, nse=math.prod(new_sparse))
    return data, indices


# --- dynamic_slice -------------------------------------------------------------------


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """Slice a BCOO array at traced start indices (``jax.experimental.sparse.bcoo_dynamic_slice``).

    As ``lax.dynamic_slice``: ``slice_sizes`` are static, the starts may be traced
    scalars; a negative start counts from the end and starts are clamped so that
    the slice fits.
    """
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    slice_sizes = tuple(operator.index(i) for i in slice_sizes)
    start_indices = tuple(start_indices)
    if len(start_indices) != mat.ndim or len(slice_sizes) != mat.ndim:
        raise ValueError(
            "Length of slice indices must match number of operand dimensions "
            f"({len(start_indices)} vs {mat.shape})"
        )
    if not all(0 <= size <= n for size, n in zip(slice_sizes, mat.shape, strict=True)):
        raise TypeError(
            "slice slice_sizes must be less than or equal to operand shape, "
            f"got slice_sizes {slice_sizes} for operand shape {mat.shape}"
        )
    starts = [jnp.asarray(i) for i in start_indices]
    for s in starts:
        if s.shape != () or not jnp.issubdtype(s.dtype, jnp.integer):
            raise TypeError(
                f"dynamic_slice start_indices must be integer scalars; got {s.dtype}{list(s.shape)}"
            )
    index_dtype = jnp.result_type(*starts) if starts else np.dtype(np.int32)
    starts_array = (
        jnp.stack([s.astype(index_dtype) for s in starts]) if starts else jnp.zeros((0,), np.int32)
    )
    data, indices = _dynamic_slice_buffers(
        mat.data, mat.indices, starts_array, shape=mat.shape, sizes=slice_sizes
    )
    return BCOO((data, indices), shape=slice_sizes)


@partial(modjax.jit, static_argnames=("shape", "sizes"))
def _dynamic_slice_buffers(data, indices, starts, *, shape, sizes):
    nb, nse, ns = indices.ndim - 2, indices.shape[-2], indices.shape[-1]
    dims = jnp.asarray(np.array(shape, dtype=np.int64)).astype(starts.dtype)
    widths = jnp.asarray(np.array(sizes, dtype=np.int64)).astype(starts.dtype)
    starts = jnp.where(starts < 0, starts + dims, starts)
    starts = jnp.clip(starts, 0, dims - widths)
    zero = jnp.zeros((), starts.dtype)
    data_start, data_size, index_start, index_size = [], [], [], []
    for axis in range(nb):
        for buffer, begin, size in (
            (data, data_start, data_size),
            (indices, index_start, index_size),
        ):
            broadcast = buffer.shape[axis] != shape[axis]
            begin.append(zero if broadcast else starts[axis])
            size.append(1 if broadcast else sizes[axis])
    data_start.append(zero)
    data_size.append(nse)
    data_start.extend(starts[a] for a in range(nb + ns, len(shape)))
    data_size.extend(sizes[nb + ns :])
    index_start.extend([zero, zero])
    index_size.extend([nse, ns])
    data = lax.dynamic_slice(data, data_start, data_size)
    indices = lax.dynamic_slice(indices, index_start, index_size)
    if ns == 0:
        return data, indices
    new_sparse = sizes[nb : nb + ns]
    lo = starts[nb : nb + ns].astype(indices.dtype)
    width = jnp.asarray(np.array(new_sparse)).astype(indices.dtype)
    keep = jnp.all((indices >= lo) & (indices < lo + width), axis=-1)
    indices = jnp.where(keep[..., None], indices - lo, width)
    data = _keep_data(data, keep, nb)
    if nse > math.prod(new_sparse):
        data, indices = _compact(data, indices, sparse_shape=new_sparse, nse=math.prod(new_sparse))
    return data, indices


# --- rev -----------------------------------------------------------------------------


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """Reverse the order of elements along ``dimensions`` (``jax.experimental.sparse.bcoo_rev``).

    As ``lax.rev``: the dimensions must be distinct and in range (else TypeError).
    """
    dimensions = tuple(operator.index(d) for d in dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(not 0 <= d < operand.ndim for d in dimensions):
        raise TypeError(
            "rev dimensions must all be less than operand ndim, got dimensions "
            f"{dimensions} for operand ndim {operand.ndim}."
        )
    data, indices = _rev_buffers(
        operand.data, operand.indices, shape=operand.shape, dimensions=dimensions
    )
    return BCOO((data, indices), shape=operand.shape)


@partial(modjax.jit, static_argnames=("shape", "dimensions"))
def _rev_buffers(data, indices, *, shape, dimensions):
    nb, ns = indices.ndim - 2, indices.shape[-1]
    batch = tuple(d for d in dimensions if d < nb)
    sparse = tuple(d - nb for d in dimensions if nb <= d < nb + ns)
    dense = tuple(d + 1 - ns for d in dimensions if d >= nb + ns)
    if batch:
        indices = lax.rev(indices, batch)
    if batch or dense:
        data = lax.rev(data, batch + dense)
    if sparse:
        sizes = np.array(shape[nb : nb + ns])
        flip = np.zeros(ns, bool)
        flip[list(sparse)] = True
        size = jnp.asarray(sizes).astype(indices.dtype)
        flipped = jnp.where(jnp.asarray(flip), size - 1 - indices, indices)
        indices = jnp.where(flipped < 0, size, flipped)
    return data, indices


# --- concatenate ---------------------------------------------------------------------


def _concatenated_shape(operands, dimension: int) -> tuple[int, ...]:
    shapes = [op.shape for op in operands]
    if not shapes:
        raise TypeError("concatenate requires a non-empty sequence of operands")
    ndim = len(shapes[0])
    if any(len(s) != ndim for s in shapes):
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            + ", ".join(str(s) for s in shapes)
            + "."
        )
    if not 0 <= dimension < ndim:
        shown = ", ".join(str(s) for s in shapes)
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes {shown}."
        )
    others = {s[:dimension] + s[dimension + 1 :] for s in shapes}
    if len(others) != 1:
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the "
            f"one being concatenated: concatenating along dimension {dimension} for shapes "
            + ", ".join(str(s) for s in shapes)
            + "."
        )
    if len({op.dtype for op in operands}) != 1:
        raise TypeError(
            "lax.concatenate requires arguments to have the same dtypes, got "
            + ", ".join(str(op.dtype) for op in operands)
            + "."
        )
    total = sum(s[dimension] for s in shapes)
    return shapes[0][:dimension] + (total,) + shapes[0][dimension + 1 :]


def _with_nse(mat: BCOO, nse: int) -> BCOO:
    """``mat`` padded with elements (data 0, padding indices) up to ``nse``."""
    if mat.nse == nse:
        return mat
    nb = mat.n_batch
    extra = nse - mat.nse
    pad_data = jnp.zeros((*mat.data.shape[:nb], extra, *mat.data.shape[nb + 1 :]), mat.dtype)
    padding = np.array(mat.shape[nb : nb + mat.n_sparse])
    pad_indices = jnp.broadcast_to(
        jnp.asarray(padding).astype(mat.indices.dtype),
        (*mat.indices.shape[:nb], extra, mat.n_sparse),
    )
    return BCOO(
        (
            jnp.concatenate([mat.data, pad_data], axis=nb),
            jnp.concatenate([mat.indices, pad_indices], axis=nb),
        ),
        shape=mat.shape,
        indices_sorted=mat.indices_sorted,
        unique_indices=mat.unique_indices,
    )


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """Join BCOO arrays along a batch or sparse dimension (JAX's ``bcoo_concatenate``).

    As ``lax.concatenate`` (TypeError for mismatched shapes or an out-of-range
    dimension). The operands must share ``n_batch`` and ``n_dense`` (ValueError; an
    operand whose leading dimension has size 1 is relaid to match, as in JAX);
    joining along a dense dimension raises NotImplementedError. Along a batch
    dimension the result's ``nse`` is the largest of the operands', along a sparse
    one their sum.
    """
    dimension = operator.index(dimension)
    operands = list(operands)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(
            f"bcoo_concatenate: expected operands to be a sequence of BCOO arrays. Got {operands}"
        )
    out_shape = _concatenated_shape(operands, dimension)
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1 and max(n_batches) == 1:
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [op.update_layout(n_batch=1) if op.n_batch == 0 else op for op in operands]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [op.update_layout(n_batch=0) if op.n_batch == 1 else op for op in operands]
        n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    nb, ns = operands[0].n_batch, operands[0].n_sparse
    if dimension >= nb + ns:
        raise NotImplementedError("Concatenation along dense dimensions.")

    def batch_shapes(buffers):
        shapes = {tuple(b.shape[:nb]) for b in buffers}
        if dimension < nb:
            shapes = {s[:dimension] + s[dimension + 1 :] for s in shapes}
        return shapes

    if len(batch_shapes([op.indices for op in operands])) != 1 or (
        len(batch_shapes([op.data for op in operands])) != 1
    ):
        raise NotImplementedError("concatenation of arrays with broadcasted batch indices")
    index_dtype = jnp.result_type(*(op.indices.dtype for op in operands))
    if dimension < nb:
        nse = max(op.nse for op in operands)
        operands = [_with_nse(op, nse) for op in operands]

        def along(buffer, size):
            if buffer.shape[dimension] != size:
                full = list(buffer.shape)
                full[dimension] = size
                buffer = jnp.broadcast_to(buffer, tuple(full))
            return buffer

        data = jnp.concatenate(
            [along(op.data, op.shape[dimension]) for op in operands], axis=dimension
        )
        indices = jnp.concatenate(
            [along(op.indices, op.shape[dimension]).astype(index_dtype) for op in operands],
            axis=dimension,
        )
    else:
        column = dimension - nb
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]])
        data = jnp.concatenate([op.data for op in operands], axis=nb)
        indices = jnp.concatenate(
            [
                op.indices.astype(index_dtype).at[..., column].add(int(offset))
                for op, offset in zip(operands, offsets, strict=True)
            ],
            axis=nb,
        )
    return BCOO((data, indices), shape=out_shape)
