"""Conversions of BCSR arrays: to and from BCOO and dense arrays, ``bcsr_extract``,
``bcsr_sum_duplicates``.

A BCSR batch entry is a BCOO batch entry with two sparse dimensions whose indices are
sorted by row: the BCOO column index is the BCSR ``indices``, the BCOO row index is
recovered from ``indptr`` (``_csr_indices``). So every routine here converts the
indices (jitted with the static layout, mapped over batch dimensions with
``util.map_batched``) and uses the BCOO routine, as JAX does.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import _count_nonzero, bcoo_fromdense, gather_at
from modjax.experimental.sparse._bcoo_indices import bcoo_eliminate_zeros, bcoo_sum_duplicates
from modjax.experimental.sparse._bcsr_array import BCSR, validate_bcsr_indices
from modjax.experimental.sparse._csr_indices import pointer_rows, row_pointers
from modjax.experimental.sparse._format_checks import fromdense_nse_context, static_nse
from modjax.experimental.sparse.util import map_batched

__all__ = [
    "bcoo_indices_of",
    "bcsr_eliminate_zeros",
    "bcsr_extract",
    "bcsr_from_bcoo",
    "bcsr_fromdense",
    "bcsr_sum_duplicates",
    "bcsr_to_bcoo",
    "bcsr_todense",
]


# --- index conversions -----------------------------------------------------------------


@modjax.jit
def bcoo_indices_of(indices, indptr):
    """BCOO indices ``(*batch, nse, 2)`` (row, column) of BCSR ``indices`` and ``indptr``."""

    def unbatched(indices, indptr):
        rows = pointer_rows(indptr, indices.shape[0], indices.dtype)
        return jnp.stack([rows, indices], axis=1)

    return map_batched(unbatched, indices.ndim - 1, indices, indptr)


@partial(modjax.jit, static_argnames=("n_rows", "index_dtype"))
def _bcsr_indices_of(indices, *, n_rows, index_dtype):
    """BCSR ``(indices, indptr)`` of row-sorted BCOO indices ``(*batch, nse, 2)``."""
    indptr = map_batched(
        lambda rows: row_pointers(rows, n_rows, index_dtype), indices.ndim - 2, indices[..., 0]
    )
    return indices[..., 1], indptr


def bcsr_to_bcoo(mat: BCSR) -> BCOO:
    """The BCOO form of a BCSR array (``BCSR.to_bcoo``); it claims neither sorted nor
    unique indices, as in JAX."""
    return BCOO((mat.data, bcoo_indices_of(mat.indices, mat.indptr)), shape=mat.shape)


def bcsr_from_bcoo(arr: BCOO) -> BCSR:
    """The BCSR form of a BCOO array with ``n_sparse == 2`` (``BCSR.from_bcoo``).

    Its indices are sorted first unless ``arr.indices_sorted``; the index dtype is kept.
    """
    if arr.n_sparse != 2:
        raise NotImplementedError(
            f"BCSR.from_bcoo requires n_sparse=2; got arr.n_sparse={arr.n_sparse}"
        )
    if not arr.indices_sorted:
        arr = arr.sort_indices()
    indices, indptr = _bcsr_indices_of(
        arr.indices, n_rows=arr.shape[arr.n_batch], index_dtype=np.dtype(arr.indices.dtype)
    )
    return BCSR((arr.data, indices, indptr), shape=arr.shape)


# --- dense conversions -----------------------------------------------------------------

_NSE_CONTEXT = fromdense_nse_context("bcsr_fromdense", "BCSR.fromdense")


def bcsr_fromdense(
    mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype=jnp.int32
) -> BCSR:
    """Create a BCSR array from a dense array (``jax.experimental.sparse.bcsr_fromdense``).

    ``mat.ndim - n_batch - n_dense`` must be 2. ``nse`` (stored elements per batch
    entry) defaults to the most nonzero positions of any batch entry, which needs a
    concrete ``mat``; a larger ``nse`` pads (data 0, column ``n_cols``, past
    ``indptr[-1]``), a smaller one drops the last nonzeros in row-major order.
    """
    mat = jnp.asarray(mat)
    if nse is None:
        nse = _count_nonzero(mat, n_batch=n_batch, n_dense=n_dense)
    nse = static_nse(nse, _NSE_CONTEXT)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    coo = bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype)
    indices, indptr = _bcsr_indices_of(
        coo.indices, n_rows=mat.shape[n_batch], index_dtype=np.dtype(index_dtype)
    )
    return BCSR((coo.data, indices, indptr), shape=mat.shape)


def bcsr_todense(mat: BCSR):
    """The dense array of a BCSR array (``jax.experimental.sparse.bcsr_todense``)."""
    return bcsr_to_bcoo(mat).todense()


@modjax.jit
def _extract(indices, indptr, mat):
    coo_indices = bcoo_indices_of(indices, indptr)
    return map_batched(gather_at, indices.ndim - 1, coo_indices, mat)


def bcsr_extract(indices, indptr, mat):
    """The entries of the dense ``mat`` at BCSR ``indices``/``indptr``: BCSR ``data``.

    ``jax.experimental.sparse.bcsr_extract``; every entry reads its position, repeated
    ones included, and padding (outside the matrix) reads 0.
    """
    if not isinstance(mat, (np.ndarray, modjax.Array)):
        raise TypeError(
            f"Error interpreting argument to bcsr_extract as a JAX value: the dense matrix "
            f"must be an array; got {type(mat).__name__}"
        )
    indices, indptr, mat = jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(mat)
    validate_bcsr_indices(indices, indptr, mat.shape)
    return _extract(indices, indptr, mat)


# --- duplicates ------------------------------------------------------------------------


def bcsr_sum_duplicates(mat: BCSR, nse=None) -> BCSR:
    """Sum the data of repeated indices; the indices become sorted and unique.

    ``jax.experimental.sparse.bcsr_sum_duplicates``: ``nse`` defaults to the number of
    distinct indices (concrete indices needed), a larger one pads, a smaller one drops.
    """
    return bcsr_from_bcoo(bcoo_sum_duplicates(bcsr_to_bcoo(mat), nse=nse))


def bcsr_eliminate_zeros(mat: BCSR, nse=None) -> BCSR:
    """``bcsr_sum_duplicates`` after dropping entries whose data is zero."""
    return bcsr_from_bcoo(bcoo_eliminate_zeros(bcsr_to_bcoo(mat), nse=nse))
