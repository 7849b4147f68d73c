"""Reshaping BCOO arrays: ``bcoo_reshape``, ``bcoo_squeeze``, ``bcoo_broadcast_in_dim``.

Batch and dense dimensions are reshaped as the buffers' own axes; sparse dimensions
are reshaped by re-indexing (each entry's sparse index is flattened in row-major
order and unflattened in the new sparse shape). A new shape must therefore keep the
batch, sparse and dense parts apart, as JAX requires: the leading new dimensions
whose sizes multiply to the batch size are the batch dimensions, and so on.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_shape import bcoo_transpose

__all__ = ["bcoo_broadcast_in_dim", "bcoo_reshape", "bcoo_squeeze", "full_batch_buffers"]


def full_batch_buffers(mat: BCOO):
    """``mat``'s data and indices with size-1 (broadcast) batch axes expanded to the shape."""
    nb = mat.n_batch
    batch = tuple(mat.shape[:nb])
    data, indices = mat.data, mat.indices
    if tuple(data.shape[:nb]) != batch:
        data = jnp.broadcast_to(data, batch + tuple(data.shape[nb:]))
    if tuple(indices.shape[:nb]) != batch:
        indices = jnp.broadcast_to(indices, batch + tuple(indices.shape[nb:]))
    return data, indices


# --- reshape -------------------------------------------------------------------------


def _split_new_shape(mat: BCOO, new_sizes: tuple[int, ...]) -> tuple[int, int]:
    """Where the batch part and the sparse part of ``new_sizes`` end (JAX's rule)."""
    nb, ns = mat.n_batch, mat.n_sparse
    batch_size = math.prod(mat.shape[:nb])
    sparse_size = math.prod(mat.shape[nb : nb + ns])
    cumulative = np.cumprod(np.array(new_sizes, dtype=np.int64))
    if batch_size != 1 and batch_size not in cumulative:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
            f"got shape={mat.shape} new_shape={new_sizes} with n_batch={nb}"
        )
    if sparse_size != 1 and batch_size * sparse_size not in cumulative:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
            f"got shape={mat.shape} new_shape={new_sizes} with n_dense={mat.n_dense}"
        )
    end_batch = int(np.searchsorted(cumulative, batch_size, side="right"))
    end_sparse = int(np.searchsorted(cumulative, batch_size * sparse_size, side="right"))
    return end_batch, end_sparse


def bcoo_reshape(
    mat: BCOO, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, sharding=None
) -> BCOO:
    """Reshape a BCOO array (``jax.experimental.sparse.bcoo_reshape``, cf. ``lax.reshape``).

    The new shape must keep batch, sparse and dense dimensions apart (else
    ValueError, as in JAX); ``dimensions`` permutes the axes first and may only
    permute batch among batch, sparse among sparse and dense among dense axes
    (else NotImplementedError). The result has neither flag set.
    """
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_reshape: expected a BCOO array; got {type(mat).__name__}")
    if sharding is not None:
        raise NotImplementedError("bcoo_reshape(sharding=...) is not implemented in modjax")
    new_sizes = tuple(operator.index(d) for d in new_sizes)
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"bcoo_reshape: new_sizes must be non-negative; got {new_sizes}")
    if dimensions is not None:
        dimensions = tuple(operator.index(d) for d in dimensions)
        if dimensions != tuple(range(mat.ndim)):
            mat = bcoo_transpose(mat, permutation=dimensions)
    end_batch, end_sparse = _split_new_shape(mat, new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(
            f"bcoo_reshape: cannot reshape a sparse array of shape {mat.shape} "
            f"(size {mat.size}) into shape {new_sizes} (size {math.prod(new_sizes)})"
        )
    data, indices = full_batch_buffers(mat)
    data, indices = _reshape_buffers(
        data,
        indices,
        shape=mat.shape,
        new_sizes=new_sizes,
        end_batch=end_batch,
        end_sparse=end_sparse,
    )
    return BCOO((data, indices), shape=new_sizes)


@partial(modjax.jit, static_argnames=("shape", "new_sizes", "end_batch", "end_sparse"))
def _reshape_buffers(data, indices, *, shape, new_sizes, end_batch, end_sparse):
    nb, nse, ns = indices.ndim - 2, indices.shape[-2], indices.shape[-1]
    new_batch = new_sizes[:end_batch]
    new_sparse = new_sizes[end_batch:end_sparse]
    new_dense = new_sizes[end_sparse:]
    data = data.reshape((*new_batch, nse, *new_dense))
    indices = indices.reshape((*new_batch, nse, ns))
    if not new_sparse:
        return data, jnp.zeros((*new_batch, nse, 0), indices.dtype)
    if ns == 0:  # only size-1 sparse dimensions appear: every index is 0
        return data, jnp.zeros((*new_batch, nse, len(new_sparse)), indices.dtype)
    sparse_shape = shape[nb : nb + ns]
    bound = jnp.asarray(np.array(sparse_shape)).astype(indices.dtype)
    outside = jnp.any(indices >= bound, axis=-1, keepdims=True)
    flat = jnp.ravel_multi_index(
        tuple(indices[..., i] for i in range(ns)), tuple(sparse_shape), mode="clip"
    )
    columns = jnp.unravel_index(flat, tuple(new_sparse))
    new_indices = jnp.stack(columns, axis=-1).astype(indices.dtype)
    padding = jnp.asarray(np.array(new_sparse)).astype(indices.dtype)
    return data, jnp.where(outside, padding, new_indices)


# --- squeeze -------------------------------------------------------------------------


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """Remove size-1 dimensions (``jax.experimental.sparse.bcoo_squeeze``, cf. ``lax.squeeze``).

    A dimension out of range or of size other than 1 raises ValueError; the flags
    ``indices_sorted``/``unique_indices`` are kept.
    """
    ndim = arr.ndim
    dims = []
    for d in dimensions:
        d = operator.index(d)
        if not -ndim <= d < ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim}")
        dims.append(d % ndim)
    dimensions = tuple(dims)
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, "
            f"got shape={arr.shape} and dimensions={dimensions}"
        )
    nb, ns = arr.n_batch, arr.n_sparse
    batch_dims = tuple(d for d in dimensions if d < nb)
    dense_dims = tuple(d - ns + 1 for d in dimensions if d >= nb + ns)
    kept_columns = tuple(i for i in range(ns) if i + nb not in dimensions)
    data = lax.squeeze(arr.data, batch_dims + dense_dims) if batch_dims + dense_dims else arr.data
    indices = arr.indices
    if kept_columns != tuple(range(ns)):
        indices = indices[..., np.array(kept_columns, dtype=np.int32)]
    if batch_dims:
        indices = lax.squeeze(indices, batch_dims)
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO(
        (data, indices),
        shape=shape,
        indices_sorted=arr.indices_sorted,
        unique_indices=arr.unique_indices,
    )


# --- broadcast_in_dim ----------------------------------------------------------------


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding=None
) -> BCOO:
    """Broadcast a BCOO array (``jax.experimental.sparse.bcoo_broadcast_in_dim``).

    As ``lax.broadcast_in_dim``: operand dimension ``i`` becomes dimension
    ``broadcast_dimensions[i]`` of ``shape``. New dimensions in front of the sparse
    ones are batch dimensions (the buffers are broadcast), new trailing ones are
    dense when the operand has dense dimensions; new sparse dimensions may only have
    size 1 (else NotImplementedError, as in JAX).
    """
    if sharding is not None:
        raise NotImplementedError("bcoo_broadcast_in_dim(sharding=...) is not implemented")
    shape = tuple(operator.index(d) for d in shape)
    dims = tuple(operator.index(d) for d in broadcast_dimensions)
    if mat.ndim != len(dims):
        raise ValueError(
            f"spinfo.shape={mat.shape} and broadcast_dimensions={dims} must have the same length"
        )
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    batch_dims, sparse_dims, dense_dims = dims[:nb], dims[nb : nb + ns], dims[nb + ns :]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_nb = min(dims[nb:], default=len(shape))
    new_nd = nd and len(shape) - min(dims[nb + ns :])
    new_ns = len(shape) - new_nb - new_nd
    if math.prod(mat.shape[nb : nb + ns]) != math.prod(shape[new_nb : new_nb + new_ns]):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    increasing = all(a < b for a, b in zip(dims, dims[1:], strict=False))
    if any(not 0 <= d < len(shape) for d in dims) or not increasing:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing and in range; "
            f"got broadcast_dimensions {dims} for shape {shape}"
        )
    if any(mat.shape[i] not in (1, shape[d]) for i, d in enumerate(dims)):
        raise TypeError(
            "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
            f"corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{mat.shape}, target broadcast shape {shape}, broadcast_dimensions {dims}"
        )
    data, indices = _broadcast_buffers(
        mat.data,
        mat.indices,
        shape=shape,
        batch_dims=batch_dims,
        sparse_dims=sparse_dims,
        dense_dims=dense_dims,
        new_nb=new_nb,
        new_ns=new_ns,
    )
    return BCOO((data, indices), shape=shape)


@partial(
    modjax.jit,
    static_argnames=("shape", "batch_dims", "sparse_dims", "dense_dims", "new_nb", "new_ns"),
)
def _broadcast_buffers(
    data, indices, *, shape, batch_dims, sparse_dims, dense_dims, new_nb, new_ns
):
    nb, nse, ns = indices.ndim - 2, indices.shape[-2], indices.shape[-1]
    nd = data.ndim - nb - 1
    dense_shape = shape[new_nb + new_ns :]
    if (new_nb, len(dense_shape)) != (nb, nd) or tuple(data.shape[nb + 1 :]) != dense_shape:
        data = lax.broadcast_in_dim(
            data,
            (*shape[:new_nb], nse, *shape[new_nb + new_ns :]),
            (*batch_dims, new_nb, *(d + 1 - new_ns for d in dense_dims)),
        )
        indices = lax.broadcast_in_dim(
            indices, (*shape[:new_nb], nse, ns), (*batch_dims, new_nb, new_nb + 1)
        )
    if new_ns != ns:
        columns = np.array([d - new_nb for d in sparse_dims], dtype=np.int32)
        out = jnp.zeros((*indices.shape[:-1], new_ns), indices.dtype)
        indices = out.at[..., columns].set(indices) if ns else out
    return data, indices
