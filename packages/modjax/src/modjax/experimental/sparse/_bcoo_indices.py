"""Index bookkeeping of BCOO arrays: sorting, summing duplicates, dropping explicit zeros.

All of it rests on one lexicographic sort of a batch entry's indices (``lax.sort``
with the sparse index columns as keys and the entry number as the last key, so that
equal indices keep their order). Out-of-range indices are first replaced by the
padding index (the sparse shape), which sorts after every valid one.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse.util import map_batched
from modjax.tracecore.core import concrete_or_error

__all__ = ["bcoo_eliminate_zeros", "bcoo_sort_indices", "bcoo_sum_duplicates", "first_occurrences"]


def _lexsort(indices):
    """``(sorted_indices, permutation)`` of one batch entry's ``(nse, n_sparse)`` indices."""
    nse, n_sparse = indices.shape
    order = jnp.arange(nse, dtype=np.int32)
    keys = [indices[:, i] for i in range(n_sparse)]
    *sorted_keys, permutation = lax.sort((*keys, order), num_keys=n_sparse + 1)
    return jnp.stack(sorted_keys, axis=1).astype(indices.dtype), permutation


def _valid(indices, sparse_shape):
    bound = jnp.asarray(np.array(sparse_shape, dtype=np.int64)).astype(indices.dtype)
    return jnp.all((indices >= 0) & (indices < bound), axis=1), bound


def _groups(indices, sparse_shape):
    """Sort one batch entry's indices, out-of-range ones replaced by the padding index.

    Returns ``(sorted_indices, permutation, starts, valid)``: ``starts[k]`` is True where
    sorted entry ``k`` begins a run of equal indices, ``valid[k]`` where it is in range.
    """
    valid, bound = _valid(indices, sparse_shape)
    indices = jnp.where(valid[:, None], indices, bound[None, :])
    sorted_indices, permutation = _lexsort(indices)
    changed = jnp.any(sorted_indices[1:] != sorted_indices[:-1], axis=1)
    starts = jnp.concatenate([jnp.ones((1,), bool), changed])
    return sorted_indices, permutation, starts, valid[permutation]


def first_occurrences(indices, sparse_shape):
    """For each entry of ``(nse, n_sparse)`` indices: is it the first with its index?"""
    nse, n_sparse = indices.shape
    if n_sparse == 0:
        return jnp.arange(nse) == 0
    if nse == 0:
        return jnp.zeros((0,), bool)
    _, permutation, starts, _ = _groups(indices, sparse_shape)
    return jnp.zeros((nse,), bool).at[permutation].set(starts)


# --- sort_indices --------------------------------------------------------------------


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """Sort each batch entry's indices lexicographically (duplicates are kept)."""
    if mat.n_sparse == 0 or mat.nse == 0:
        return BCOO(
            (mat.data, mat.indices),
            shape=mat.shape,
            indices_sorted=True,
            unique_indices=mat.unique_indices,
        )

    data, indices = _sort_buffers(mat.data, mat.indices)
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices
    )


@modjax.jit
def _sort_buffers(data, indices):
    def unbatched(data, indices):
        sorted_indices, permutation = _lexsort(indices)
        return data[permutation], sorted_indices

    return map_batched(unbatched, indices.ndim - 2, data, indices)


# --- sum_duplicates ------------------------------------------------------------------


def _sum_duplicates_unbatched(data, indices, sparse_shape, nse: int):
    """Sorted unique valid indices (padded to ``nse``) with the data of each summed."""
    old_nse, n_sparse = indices.shape
    bound = jnp.asarray(np.array(sparse_shape, dtype=np.int64)).astype(indices.dtype)
    if n_sparse == 0:
        total = data.sum(0, keepdims=True)
        out = jnp.zeros((nse, *data.shape[1:]), data.dtype)
        return (out.at[:1].set(total) if nse else out), jnp.zeros((nse, 0), indices.dtype)
    out_indices = jnp.broadcast_to(bound, (nse, n_sparse))
    out_data = jnp.zeros((nse, *data.shape[1:]), data.dtype)
    if old_nse == 0:
        return out_data, out_indices
    sorted_indices, permutation, starts, valid = _groups(indices, sparse_shape)
    segment = jnp.cumsum(starts & valid) - 1
    segment = jnp.where(valid, segment, nse)  # invalid entries land past the end: dropped
    out_indices = out_indices.at[segment].set(sorted_indices, mode="drop")
    out_data = out_data.at[segment].add(data[permutation], mode="drop")
    return out_data, out_indices


def _count_unique(mat: BCOO):
    if mat.n_sparse == 0:
        return 1
    if mat.nse == 0:
        return 0
    return _count_unique_buffers(mat.indices, shape=mat.shape)


@partial(modjax.jit, static_argnames=("shape",))
def _count_unique_buffers(indices, *, shape):
    n_batch = indices.ndim - 2
    sparse_shape = shape[n_batch : n_batch + indices.shape[-1]]

    def unbatched(indices):
        _, _, starts, valid = _groups(indices, sparse_shape)
        return jnp.sum(starts & valid)

    counts = map_batched(unbatched, n_batch, indices)
    return counts.max() if counts.ndim else counts


@partial(modjax.jit, static_argnames=("shape", "nse"))
def _sum_duplicates_buffers(data, indices, *, shape, nse):
    n_batch = indices.ndim - 2
    sparse_shape = shape[n_batch : n_batch + indices.shape[-1]]

    def unbatched(data, indices):
        return _sum_duplicates_unbatched(data, indices, sparse_shape, nse)

    return map_batched(unbatched, n_batch, data, indices)


def bcoo_sum_duplicates(mat: BCOO, nse=None) -> BCOO:
    """Sum the data of repeated indices; the result's indices are sorted and unique.

    ``nse`` defaults to the number of distinct in-range indices (the most of any batch
    entry), which needs concrete indices; a larger ``nse`` pads (data 0, indices equal
    to the sparse shape), a smaller one drops the last indices.
    """
    if nse is None:
        context = "the nse argument of bcoo_sum_duplicates: under jit pass nse as a Python int"
        nse = concrete_or_error(_count_unique(mat), context)
    nse = operator.index(int(np.asarray(nse)))
    data, indices = _sum_duplicates_buffers(mat.data, mat.indices, shape=mat.shape, nse=nse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse=None) -> BCOO:
    """``bcoo_sum_duplicates`` after turning entries whose data is all zero into padding."""
    if mat.n_sparse == 0:
        return bcoo_sum_duplicates(mat, nse=nse)
    bound = jnp.asarray(np.array(mat.shape[mat.n_batch : mat.n_batch + mat.n_sparse])).astype(
        mat.indices.dtype
    )
    zero = mat.data == 0
    if mat.n_dense:
        zero = zero.all(axis=tuple(range(mat.n_batch + 1, mat.data.ndim)))
    indices = jnp.where(zero[..., None], bound, mat.indices)
    return bcoo_sum_duplicates(BCOO((mat.data, indices), shape=mat.shape), nse=nse)
