"""The ``BCSR`` class: batched compressed-row sparse arrays (``jax.experimental.sparse.BCSR``).

A BCSR array of shape ``(*batch, n_rows, n_cols, *dense)`` stores, per batch entry,
``data`` of shape ``(nse, *dense)``, column ``indices`` of shape ``(nse,)`` and row
pointers ``indptr`` of shape ``(n_rows + 1,)``: the entries of row ``r`` are
``indptr[r]:indptr[r + 1]``. It always has exactly two sparse dimensions. A batch
axis of a buffer may have size 1 where the shape's does not. Padding (as
``fromdense`` writes it) lies past ``indptr[-1]`` with column ``n_cols`` and data 0.

A BCSR is a pytree: children ``data``, ``indices``, ``indptr``; static ``shape``,
``indices_sorted`` and ``unique_indices`` (JAX's ``SparseInfo``, given by
``tree_flatten`` as a dict). Its static shape follows its children's batch axes, so
under ``vmap`` a BCSR mapped over a batch axis is one batch entry inside and a
returned BCSR gains the mapped axis as a batch dimension, as in JAX; mapping an axis
that is not a batch axis raises ValueError.

The operations live in ``_bcsr_convert`` and ``_bcsr_dot``; the methods here forward
to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._format_checks import check_dtype, check_shape
from modjax.tree_util import register_pytree_node

__all__ = ["BCSR", "SparseInfo", "validate_bcsr", "validate_bcsr_indices"]


class SparseInfo(NamedTuple):
    """The static part of a BCSR array (JAX's ``SparseInfo``)."""

    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False


def _compatible(batch: Sequence[int], shape: Sequence[int]) -> bool:
    return len(batch) == len(shape) and all(b in (1, s) for b, s in zip(batch, shape, strict=True))


def validate_bcsr_indices(indices, indptr, shape: Sequence[int]) -> tuple[int, int, int]:
    """Check BCSR ``indices`` and ``indptr`` against ``shape``.

    Returns ``(n_batch, n_dense, nse)``.
    """
    shape = tuple(shape)
    check_dtype(
        jnp.issubdtype(indices.dtype, jnp.integer) and jnp.issubdtype(indptr.dtype, jnp.integer),
        f"BCSR indices and indptr must be integer arrays; got {indices.dtype} and {indptr.dtype}",
    )
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    check_shape(
        n_batch >= 0 and n_dense >= 0,
        f"BCSR indices of shape {indices.shape} do not fit an array of shape {shape}: "
        "a BCSR array has n_batch = indices.ndim - 1 leading batch dimensions, then 2 "
        "sparse dimensions",
    )
    nse = indices.shape[-1]
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indices batch dimensions not compatible for indices.shape={indices.shape}, "
            f"shape={shape}"
        )
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indptr batch dimensions not compatible for indptr.shape={indptr.shape}, shape={shape}"
        )
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError(
            f"indptr shape must match the matrix shape plus 1; got indptr.shape={indptr.shape} "
            f"for shape={shape} with n_batch={n_batch}"
        )
    return n_batch, n_dense, nse


def validate_bcsr(data, indices, indptr, shape: Sequence[int]) -> tuple[int, int, int]:
    """Check a BCSR's buffers against ``shape``; return ``(n_batch, n_dense, nse)``."""
    n_batch, n_dense, nse = validate_bcsr_indices(indices, indptr, shape)
    shape = tuple(shape)
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"data batch dimensions not compatible for data.shape={data.shape}, shape={shape}"
        )
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + 2 :]):
        raise ValueError(
            f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, n_dense={n_dense}"
        )
    return n_batch, n_dense, nse


class BCSR(JAXSparse):
    """Batched compressed-row sparse array: ``BCSR((data, indices, indptr), shape=...)``.

    ``data`` has shape ``(*batch, nse, *dense)``, ``indices`` ``(*batch, nse)`` and
    ``indptr`` ``(*batch, n_rows + 1)``. ``indices_sorted`` and ``unique_indices`` are
    promises of the caller (not checked).

    >>> BCSR.fromdense(jnp.array([[0., 2., 0.], [1., 0., 4.]]))
    BCSR(float32[2, 3], nse=3)
    """

    data: Any
    indices: Any
    indptr: Any
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    # --- layout ------------------------------------------------------------------------

    @property
    def _bufs(self) -> tuple[Any, Any, Any]:
        return (self.data, self.indices, self.indptr)

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 1

    @property
    def n_sparse(self) -> int:
        return 2

    @property
    def n_dense(self) -> int:
        return self.data.ndim - self.indices.ndim

    @property
    def _sparse_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[self.n_batch : self.n_batch + 2])

    # --- pytree ------------------------------------------------------------------------

    def tree_flatten(self):
        return self._bufs, self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCSR.tree_unflatten: invalid aux_data={aux_data!r}")
        data, indices, indptr = children
        shape = tuple(aux_data["shape"])
        if all(isinstance(getattr(c, "shape", None), tuple) for c in children):
            shape = _mapped_shape(shape, data, indices, indptr)
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = data, indices, indptr
        obj.shape = shape
        obj.indices_sorted = aux_data["indices_sorted"]
        obj.unique_indices = aux_data["unique_indices"]
        return obj

    # --- constructors and conversions --------------------------------------------------

    @classmethod
    def _empty(
        cls, shape, *, dtype=None, index_dtype="int32", n_dense: int = 0, n_batch: int = 0, nse=0
    ) -> BCSR:
        """An all-zero BCSR array with ``nse`` padding entries (``sparse.empty``'s 'bcsr')."""
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(
                f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, nse={nse}"
            )
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch, (n_rows, n_cols), dense = (
            shape[:n_batch],
            shape[n_batch : n_batch + 2],
            shape[n_batch + 2 :],
        )
        data = jnp.zeros((*batch, nse, *dense), dtype)
        indices = jnp.full((*batch, nse), n_cols, index_dtype)
        indptr = jnp.zeros((*batch, n_rows + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    @classmethod
    def fromdense(
        cls, mat, *, nse=None, index_dtype=np.int32, n_dense: int = 0, n_batch: int = 0
    ) -> BCSR:
        """Create a BCSR array from a dense array (see ``bcsr_fromdense``)."""
        from modjax.experimental.sparse._bcsr_convert import bcsr_fromdense

        return bcsr_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0, n_batch: int = 0):
        """Create a BCSR array from a 2-D ``scipy.sparse`` matrix or array (its CSR form)."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch.")
        if mat.ndim != 2:
            raise ValueError(f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is given.")
        csr = mat.tocsr()
        index_dtype = index_dtype or jnp.int32
        indices = jnp.asarray(csr.indices).astype(index_dtype)
        indptr = jnp.asarray(csr.indptr).astype(index_dtype)
        return cls((jnp.asarray(csr.data), indices, indptr), shape=csr.shape)

    @classmethod
    def from_bcoo(cls, arr) -> BCSR:
        """The BCSR form of a BCOO array with two sparse dimensions (indices sorted first)."""
        from modjax.experimental.sparse._bcsr_convert import bcsr_from_bcoo

        return bcsr_from_bcoo(arr)

    def to_bcoo(self):
        """The BCOO form: the same data, with a (row, column) index per entry."""
        from modjax.experimental.sparse._bcsr_convert import bcsr_to_bcoo

        return bcsr_to_bcoo(self)

    def todense(self):
        """The dense array this BCSR stands for."""
        from modjax.experimental.sparse._bcsr_convert import bcsr_todense

        return bcsr_todense(self)

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCSR:
        """Sum duplicate indices and sort them (and drop explicit zeros unless
        ``remove_zeros=False``); ``nse`` is needed under ``jit``."""
        from modjax.experimental.sparse._bcsr_convert import (
            bcsr_eliminate_zeros,
            bcsr_sum_duplicates,
        )

        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    # --- products ----------------------------------------------------------------------

    def __matmul__(self, other):
        from modjax.experimental.sparse._bcsr_dot import bcsr_matmul

        return bcsr_matmul(self, other)

    def __rmatmul__(self, other):
        raise NotImplementedError(
            "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs."
        )


def _mapped_shape(shape: tuple[int, ...], data, indices, indptr) -> tuple[int, ...]:
    """``shape`` after ``vmap`` (or a tree map) added or removed leading batch axes."""
    n_dense = data.ndim - indices.ndim
    old_n_batch = len(shape) - 2 - n_dense
    n_batch = indices.ndim - 1
    if n_batch == old_n_batch:
        return shape
    error = ValueError(
        f"Cannot map an axis of a BCSR array with n_batch={old_n_batch} that is not one of "
        "its batch dimensions: in_axes (and out_axes) for batched BCSR operations must "
        "correspond to a batched dimension"
    )
    if n_batch < 0 or old_n_batch < 0:
        raise error
    try:
        batch = jnp.broadcast_shapes(
            tuple(data.shape[:n_batch]),
            tuple(indices.shape[:n_batch]),
            tuple(indptr.shape[:n_batch]),
        )
    except ValueError:
        raise error from None
    new_shape = tuple(batch) + shape[old_n_batch:]
    if tuple(indptr.shape[n_batch:]) != (new_shape[n_batch] + 1,) or tuple(
        data.shape[n_batch + 1 :]
    ) != tuple(new_shape[n_batch + 2 :]):
        raise error
    return new_shape


register_pytree_node(BCSR, BCSR.tree_flatten, BCSR.tree_unflatten)
