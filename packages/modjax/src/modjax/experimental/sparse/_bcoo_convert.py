"""Conversions of BCOO arrays: to and from dense arrays, ``bcoo_extract``, layout changes.

Each routine is written for one batch entry (``n_batch == 0``) and mapped over the
batch dimensions with ``util.map_batched``. Padding entries, as ``fromdense`` writes
them (and JAX does), have data 0 and the index one past the end of every sparse
dimension, so ``todense`` and the products drop them.
"""

from __future__ import annotations

import operator
import warnings
from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._format_checks import fromdense_nse_context
from modjax.experimental.sparse.util import (
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    map_batched,
)
from modjax.tracecore.core import concrete_or_error

__all__ = [
    "bcoo_add",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_todense",
    "bcoo_update_layout",
    "gather_at",
]


def gather_at(indices, arr):
    """The entries of ``arr`` (shape ``(*sparse, *dense)``) at ``indices`` (``(nse, n_sparse)``).

    Out-of-range indices read 0; the result has shape ``(nse, *dense)``.
    """
    nse, n_sparse = indices.shape
    if n_sparse == 0:
        return jnp.broadcast_to(arr[None], (nse, *arr.shape))
    return arr.at[tuple(indices[:, i] for i in range(n_sparse))].get(mode="fill", fill_value=0)


# --- todense -------------------------------------------------------------------------


def bcoo_todense(mat: BCOO):
    """The dense array of a BCOO array (duplicates summed, out-of-range entries dropped)."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_todense expects a BCOO array; got {type(mat).__name__}")
    return _todense_buffers(mat.data, mat.indices, shape=mat.shape)


@partial(modjax.jit, static_argnames=("shape",))
def _todense_buffers(data, indices, *, shape):
    n_batch, n_sparse = indices.ndim - 2, indices.shape[-1]
    sparse_shape = shape[n_batch : n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse :]

    def unbatched(data, indices):
        if n_sparse == 0:
            return data.sum(0)
        out = jnp.zeros((*sparse_shape, *dense_shape), data.dtype)
        return out.at[tuple(indices[:, i] for i in range(n_sparse))].add(data, mode="drop")

    out = map_batched(unbatched, n_batch, data, indices)
    return jnp.broadcast_to(out, shape)


# --- fromdense -----------------------------------------------------------------------


def _check_layout(ndim: int, n_batch: int, n_dense: int) -> int:
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > ndim:
        raise ValueError(
            f"Invalid layout for an array of ndim={ndim}: n_batch={n_batch}, n_dense={n_dense}"
        )
    return ndim - n_batch - n_dense


@partial(modjax.jit, static_argnames=("n_batch", "n_dense"))
def _count_nonzero(mat, *, n_batch: int, n_dense: int):
    """The most sparse positions with a nonzero in any one batch entry (a 0-d array)."""
    mask = mat != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    counts = mask.sum(axis=tuple(range(n_batch, mask.ndim)))
    return counts.max() if counts.size else jnp.zeros((), counts.dtype)


_NSE_CONTEXT = fromdense_nse_context("bcoo_fromdense", "BCOO.fromdense")


def bcoo_fromdense(
    mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype=jnp.int32
) -> BCOO:
    """Create a BCOO array from a dense array.

    ``nse`` (the number of stored elements per batch entry) defaults to the most
    nonzero sparse positions of any batch entry, which needs a concrete ``mat``:
    under ``jit`` pass it explicitly (else ConcretizationTypeError, as in JAX). With a
    larger ``nse`` the tail is padding (data 0, indices equal to the sparse shape);
    with a smaller one the last nonzeros (in row-major order) are dropped.
    """
    mat = jnp.asarray(mat)
    _check_layout(mat.ndim, n_batch, n_dense)
    if nse is None:
        nse = concrete_or_error(_count_nonzero(mat, n_batch=n_batch, n_dense=n_dense), _NSE_CONTEXT)
    nse = operator.index(int(np.asarray(concrete_or_error(nse, _NSE_CONTEXT))))
    if nse < 0:
        raise ValueError(f"bcoo_fromdense: nse must be non-negative; got {nse}")
    data, indices = _fromdense_buffers(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=np.dtype(index_dtype)
    )
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


@partial(modjax.jit, static_argnames=("nse", "n_batch", "n_dense", "index_dtype"))
def _fromdense_buffers(mat, *, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_batch - n_dense
    sparse_shape = mat.shape[n_batch : n_batch + n_sparse]
    dense_axes = tuple(range(n_sparse, n_sparse + n_dense))

    def unbatched(m):
        if n_sparse == 0:
            data = jnp.zeros((nse, *m.shape), m.dtype)
            data = data.at[:1].set(m[None]) if nse else data
            return data, jnp.zeros((nse, 0), index_dtype)
        mask = m != 0
        if n_dense:
            mask = mask.any(axis=dense_axes)
        positions = jnp.nonzero(mask, size=nse, fill_value=tuple(sparse_shape))
        indices = jnp.stack(positions, axis=1).astype(index_dtype)
        return gather_at(indices, m), indices

    return map_batched(unbatched, n_batch, mat)


# --- extract -------------------------------------------------------------------------


def bcoo_extract(sparr: BCOO, arr, *, assume_unique=None) -> BCOO:
    """The entries of the dense ``arr`` at ``sparr``'s indices, as a BCOO with that pattern.

    Unless ``assume_unique`` (default: ``sparr.unique_indices``), a repeated index
    holds the value at its first occurrence and 0 at the others, so the result's
    dense form equals ``arr`` where ``sparr`` has entries.
    """
    from modjax.experimental.sparse._bcoo_indices import first_occurrences

    if not isinstance(sparr, BCOO):
        raise TypeError(
            f"First argument to bcoo_extract should be a BCOO array; got {type(sparr).__name__}"
        )
    arr = jnp.asarray(arr)
    if arr.shape != sparr.shape:
        raise ValueError(
            f"bcoo_extract: shape mismatch, sparr.shape={sparr.shape} arr.shape={arr.shape}"
        )
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    sparse_shape = sparr.shape[sparr.n_batch : sparr.n_batch + sparr.n_sparse]

    def unbatched(indices, a):
        values = gather_at(indices, a)
        if not assume_unique:
            first = first_occurrences(indices, sparse_shape)
            first = first.reshape(first.shape + (1,) * (values.ndim - 1))
            values = jnp.where(first, values, jnp.zeros((), values.dtype))
        return values

    data = map_batched(unbatched, sparr.n_batch, sparr.indices, arr)
    return BCOO(
        (data, sparr.indices),
        shape=sparr.shape,
        indices_sorted=sparr.indices_sorted,
        unique_indices=sparr.unique_indices,
    )


# --- update_layout -------------------------------------------------------------------


def _grid(shape: tuple[int, ...], dtype):
    """All positions of ``shape`` in row-major order, shape ``(prod(shape), len(shape))``."""
    return jnp.asarray(np.indices(shape).reshape(len(shape), -1).T, dtype=dtype)


def bcoo_update_layout(mat: BCOO, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
    """Change how many leading dimensions are batch and trailing ones dense.

    Turning batch or dense dimensions into sparse ones is cheap. Turning sparse
    dimensions of size > 1 into batch or dense ones stores many zeros: that raises
    SparseEfficiencyError unless ``on_inefficient`` is ``'warn'`` (a
    SparseEfficiencyWarning) or None.
    """
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(
            f"on_inefficient={on_inefficient!r}; expected one of ['error', 'warn', None]."
        )
    if n_batch < 0 or n_dense < 0:
        raise ValueError(
            f"n_batch and n_dense must be non-negative; got n_batch={n_batch}, n_dense={n_dense}"
        )
    if n_batch + n_dense > mat.ndim:
        raise ValueError(
            f"sum of n_batch={n_batch} and n_dense={n_dense} "
            f"cannot be larger than mat.ndim={mat.ndim}."
        )

    def inefficient(message: str) -> None:
        if on_inefficient == "error":
            raise SparseEfficiencyError(
                message + " To disable this error, set the on_inefficient argument of"
                " bcoo_update_layout to 'warn' or None."
            )
        if on_inefficient == "warn":
            warnings.warn(
                message + " To disable this warning, set the on_inefficient argument of"
                " bcoo_update_layout to None.",
                SparseEfficiencyWarning,
                stacklevel=3,
            )

    shape = mat.shape
    if n_dense > mat.n_dense and any(
        d > 1 for d in shape[mat.ndim - n_dense : mat.ndim - mat.n_dense]
    ):
        inefficient(
            f"For matrix of shape {shape}, increasing n_dense from {mat.n_dense} to {n_dense} "
            "results in inefficient storage."
        )
    if n_batch > mat.n_batch and any(d > 1 for d in shape[mat.n_batch : n_batch]):
        inefficient(
            f"For matrix of shape {shape}, increasing n_batch from {mat.n_batch} to {n_batch} "
            "results in inefficient storage."
        )

    data, indices = _relayout_buffers(
        mat.data, mat.indices, shape=shape, n_batch=n_batch, n_dense=n_dense
    )
    return BCOO((data, indices), shape=shape)


@partial(modjax.jit, static_argnames=("shape", "n_batch", "n_dense"))
def _relayout_buffers(data, indices, *, shape, n_batch, n_dense):
    """The buffers of a BCOO of ``shape`` in the layout ``(n_batch, n_dense)``."""
    ndim = len(shape)
    cur_batch = indices.ndim - 2
    cur_dense = data.ndim - 1 - cur_batch
    index_dtype = indices.dtype

    if n_dense < cur_dense:  # leading dense dimensions become trailing sparse ones
        moved = shape[ndim - cur_dense : ndim - n_dense]
        grid = _grid(moved, index_dtype)

        def dense_to_sparse(d, i):
            nse = i.shape[0]
            new_d = d.reshape(nse * len(grid), *d.shape[1 + len(moved) :])
            new_i = jnp.concatenate(
                [jnp.repeat(i, len(grid), axis=0), jnp.tile(grid, (nse, 1))], axis=1
            )
            return new_d, new_i

        data, indices = map_batched(dense_to_sparse, cur_batch, data, indices)
        cur_dense = n_dense

    if n_batch < cur_batch:  # trailing batch dimensions become leading sparse ones
        moved = shape[n_batch:cur_batch]
        grid = _grid(moved, index_dtype)

        def batch_to_sparse(d, i):
            nse = i.shape[len(moved)]
            d = jnp.broadcast_to(d, moved + d.shape[len(moved) :])
            i = jnp.broadcast_to(i, moved + i.shape[len(moved) :])
            new_d = d.reshape(len(grid) * nse, *d.shape[len(moved) + 1 :])
            new_i = jnp.concatenate(
                [jnp.repeat(grid, nse, axis=0), i.reshape(len(grid) * nse, i.shape[-1])], axis=1
            )
            return new_d, new_i

        data, indices = map_batched(batch_to_sparse, n_batch, data, indices)
        cur_batch = n_batch

    if n_dense > cur_dense:  # trailing sparse dimensions become leading dense ones
        count = n_dense - cur_dense
        new_dense = shape[ndim - n_dense :]

        def sparse_to_dense(d, i):
            nse = i.shape[0]
            position = (jnp.arange(nse), *(i[:, j] for j in range(i.shape[1] - count, i.shape[1])))
            new_d = jnp.zeros((nse, *new_dense), d.dtype).at[position].set(d, mode="drop")
            return new_d, i[:, : i.shape[1] - count]

        data, indices = map_batched(sparse_to_dense, cur_batch, data, indices)
        cur_dense = n_dense

    if n_batch > cur_batch:  # leading sparse dimensions become trailing batch ones
        count = n_batch - cur_batch
        new_batch = shape[cur_batch:n_batch]

        def sparse_to_batch(d, i):
            nse = i.shape[0]
            position = (*(i[:, j] for j in range(count)), jnp.arange(nse))
            new_d = (
                jnp.zeros((*new_batch, nse, *d.shape[1:]), d.dtype).at[position].set(d, mode="drop")
            )
            new_i = jnp.broadcast_to(i[:, count:], (*new_batch, nse, i.shape[1] - count))
            return new_d, new_i

        data, indices = map_batched(sparse_to_batch, cur_batch, data, indices)

    return data, indices


# --- addition ------------------------------------------------------------------------


def bcoo_add(lhs: BCOO, rhs):
    """``lhs + rhs``: a BCOO (entries concatenated) for two BCOO arrays of one shape and
    layout, the dense sum otherwise (as JAX gives for sparse + dense)."""
    if not isinstance(rhs, JAXSparse):
        return lhs.todense() + rhs
    if not isinstance(rhs, BCOO):
        raise NotImplementedError(
            f"adding BCOO and {type(rhs).__name__} is not implemented in modjax"
        )
    if lhs.shape != rhs.shape:
        raise ValueError(
            f"Addition of sparse arrays of different shapes: {lhs.shape} and {rhs.shape}"
        )
    if (lhs.n_batch, lhs.n_dense) != (rhs.n_batch, rhs.n_dense):
        raise NotImplementedError(
            "adding BCOO arrays of different layouts (n_batch, n_dense): "
            f"{(lhs.n_batch, lhs.n_dense)} and {(rhs.n_batch, rhs.n_dense)}; "
            "use bcoo_update_layout first"
        )
    nb = lhs.n_batch
    batch = lhs.shape[:nb]

    def full(a):
        return jnp.broadcast_to(a, batch + a.shape[nb:])

    index_dtype = jnp.promote_types(lhs.indices.dtype, rhs.indices.dtype)
    data = jnp.concatenate([full(lhs.data), full(rhs.data)], axis=nb)
    indices = jnp.concatenate(
        [full(lhs.indices).astype(index_dtype), full(rhs.indices).astype(index_dtype)], axis=nb
    )
    return BCOO((data, indices), shape=lhs.shape)
