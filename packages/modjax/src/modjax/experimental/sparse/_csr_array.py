"""The legacy ``CSR`` and ``CSC`` formats (``jax.experimental.sparse.CSR``/``CSC``).

A CSR matrix stores ``data`` and column ``indices`` of shape ``(nse,)`` and row
pointers ``indptr`` of shape ``(n_rows + 1,)``: the entries of row ``r`` are
``indptr[r]:indptr[r + 1]``. A CSC matrix holds the same buffers for its transpose
(``CSR.T`` is a CSC and back, without copying). ``fromdense`` pads with entries of
column 0 holding 0 that lie past ``indptr[-1]``, i.e. in no row.

Every operation turns the row pointers into one row per entry
(``_csr_indices.pointer_rows``; padding lands in row ``n_rows``, outside the matrix)
and runs the COO kernel of ``_coo_array``. As in JAX these are plain pytrees: under
``vmap`` each buffer is mapped and the shape stays 2-D.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._coo_array import (
    check_product,
    diagonal_entries,
    matrix_and_nse,
    nonzero_entries,
    product_buffers,
    promoted_operands,
    todense_buffers,
)
from modjax.experimental.sparse._csr_indices import pointer_rows, row_pointers
from modjax.experimental.sparse._format_checks import check_dtype, check_shape
from modjax.tree_util import register_pytree_node

__all__ = ["CSC", "CSR", "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense"]


class _Compressed(JAXSparse):
    """What CSR and CSC share: three buffers, ``nse == data.size``, a 2-D shape."""

    data: Any
    indices: Any
    indptr: Any
    # Whether the buffers are those of the CSR transpose (CSC) rather than of self (CSR).
    _transposed: bool

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return self.data.size

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        if aux_data.keys() != {"shape"}:
            raise ValueError(f"{cls.__name__}.tree_unflatten: invalid aux_data={aux_data!r}")
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux_data["shape"]
        return obj

    @classmethod
    def _empty_compressed(cls, shape, n_pointers_axis: int, dtype, index_dtype):
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"{cls.__name__} must have ndim=2; got shape={shape}")
        data = jnp.zeros((0,), dtype)
        indices = jnp.zeros((0,), index_dtype)
        indptr = jnp.zeros((shape[n_pointers_axis] + 1,), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    def _check_axes(self, axes) -> None:
        check_shape(axes is None, f"{type(self).__name__}.transpose takes no axes; got axes={axes}")

    def __matmul__(self, other):
        data, other = promoted_operands(self.data, other)
        if other.ndim not in (1, 2):
            raise NotImplementedError(f"matmul with object of shape {other.shape}")
        what = "csr_matvec" if other.ndim == 1 else "csr_matmat"
        # A CSC's buffers are its transpose's CSR: multiply by that CSR, transposed.
        shape = self.shape[::-1] if self._transposed else self.shape
        return _csr_product(what, data, self.indices, self.indptr, other, shape, self._transposed)


class CSR(_Compressed):
    """Compressed-row 2-D sparse matrix: ``CSR((data, indices, indptr), shape=(n, m))``.

    JAX's legacy format (prefer BCOO or BCSR); ``nse`` is ``data.size``.

    >>> CSR.fromdense(jnp.array([[0., 2.], [1., 0.]]))
    CSR(float32[2, 2], nse=2)
    """

    _transposed = False

    @property
    def _bufs(self) -> tuple[Any, Any, Any]:
        return (self.data, self.indices, self.indptr)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSR:
        """Create a CSR matrix from a dense 2-D array (see ``csr_fromdense``)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> CSR:
        """An all-zero CSR matrix with no stored elements (``sparse.empty``'s 'csr')."""
        return cls._empty_compressed(shape, 0, dtype, index_dtype)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype=None, index_dtype="int32") -> CSR:
        """Ones on diagonal ``k`` of an ``(N, M)`` matrix (``sparse.eye``'s 'csr')."""
        entries = diagonal_entries(N, M, k, dtype)
        if entries is None:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data, rows, cols = entries
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=N))])
        indices, indptr = (jnp.asarray(a).astype(index_dtype) for a in (cols, indptr))
        return cls((data, indices, indptr), shape=(N, M))

    def todense(self):
        """The dense matrix (duplicates summed)."""
        return csr_todense(self)

    def transpose(self, axes=None) -> CSC:
        """The transposed matrix: a CSC holding the same buffers."""
        self._check_axes(axes)
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])


class CSC(_Compressed):
    """Compressed-column 2-D sparse matrix: ``CSC((data, indices, indptr), shape=(n, m))``.

    ``indices`` are rows and ``indptr`` points into the columns; the buffers are those
    of the CSR transpose. JAX's legacy format; ``nse`` is ``data.size``.
    """

    _transposed = True

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> CSC:
        """Create a CSC matrix from a dense 2-D array (the CSR of its transpose, transposed)."""
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> CSC:
        """An all-zero CSC matrix with no stored elements (``sparse.empty``'s 'csc')."""
        return cls._empty_compressed(shape, 1, dtype, index_dtype)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype=None, index_dtype="int32") -> CSC:
        """Ones on diagonal ``k`` of an ``(N, M)`` matrix (``sparse.eye``'s 'csc')."""
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self):
        """The dense matrix (duplicates summed)."""
        return csr_todense(self.T).T

    def transpose(self, axes=None) -> CSR:
        """The transposed matrix: a CSR holding the same buffers."""
        self._check_axes(axes)
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])


for _cls in (CSR, CSC):
    register_pytree_node(_cls, _cls.tree_flatten, _cls.tree_unflatten)


# --- conversions -----------------------------------------------------------------------


@partial(modjax.jit, static_argnames=("nse", "index_dtype"))
def _fromdense_buffers(mat, *, nse, index_dtype):
    n_rows = mat.shape[0]
    data, row, col, stored = nonzero_entries(mat, nse)
    row = jnp.where(stored, row, n_rows)  # padding belongs to no row
    return data, col.astype(index_dtype), row_pointers(row, n_rows, index_dtype)


def csr_fromdense(mat, *, nse=None, index_dtype=np.int32) -> CSR:
    """Create a CSR matrix from a dense 2-D array (``jax.experimental.sparse.csr_fromdense``).

    ``nse`` defaults to the number of nonzeros (which needs a concrete ``mat``); a
    larger ``nse`` pads with zeros past ``indptr[-1]``, a smaller one drops the last
    nonzeros.
    """
    mat, nse = matrix_and_nse("csr_fromdense", mat, nse)
    bufs = _fromdense_buffers(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return CSR(bufs, shape=mat.shape)


def _check_buffers(what: str, data, indices, indptr, shape) -> None:
    check_shape(
        data.ndim == indices.ndim == indptr.ndim == 1,
        f"{what}: data, indices and indptr must be 1-D; got shapes {data.shape}, "
        f"{indices.shape} and {indptr.shape}",
    )
    check_shape(
        data.shape == indices.shape,
        f"{what}: data and indices must have one shape; got {data.shape} and {indices.shape}",
    )
    check_dtype(
        indices.dtype == indptr.dtype,
        f"{what}: indices and indptr must have one dtype; got {indices.dtype} and {indptr.dtype}",
    )
    check_shape(
        len(shape) == 2 and indptr.shape[0] == shape[0] + 1,
        f"{what}: indptr of shape {indptr.shape} does not fit a matrix of shape {shape}",
    )


@partial(modjax.jit, static_argnames=("shape",))
def _todense_buffers(data, indices, indptr, *, shape):
    rows = pointer_rows(indptr, indices.shape[0], indices.dtype)
    return todense_buffers(data, rows, indices, shape=shape)


def csr_todense(mat: CSR):
    """The dense matrix of a CSR matrix (``jax.experimental.sparse.csr_todense``)."""
    _check_buffers("csr_todense", mat.data, mat.indices, mat.indptr, mat.shape)
    return _todense_buffers(mat.data, mat.indices, mat.indptr, shape=tuple(mat.shape))


# --- products --------------------------------------------------------------------------


@partial(modjax.jit, static_argnames=("n_out", "transpose"))
def _product(data, indices, indptr, dense, *, n_out, transpose):
    rows = pointer_rows(indptr, indices.shape[0], indices.dtype)
    rows, cols = (indices, rows) if transpose else (rows, indices)
    return product_buffers(data, rows, cols, dense, n_out=n_out)


def _csr_product(what, data, indices, indptr, dense, shape, transpose: bool):
    dense = jnp.asarray(dense)
    ndim = 1 if what == "csr_matvec" else 2
    _check_buffers(what, data, indices, indptr, shape)
    check_product(what, data, indices, indices, dense, shape, transpose, ndim)
    n_out = shape[1] if transpose else shape[0]
    return _product(data, indices, indptr, dense, n_out=n_out, transpose=transpose)


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """``mat @ v`` (``mat.T @ v`` if ``transpose``) for a dense vector of ``mat``'s dtype.

    ``jax.experimental.sparse.csr_matvec``.
    """
    data, indices, indptr = mat._bufs
    return _csr_product("csr_matvec", data, indices, indptr, v, mat.shape, transpose)


def csr_matmat(mat: CSR, B, *, transpose: bool = False):
    """``mat @ B`` (``mat.T @ B`` if ``transpose``) for a dense matrix of ``mat``'s dtype.

    ``jax.experimental.sparse.csr_matmat``.
    """
    data, indices, indptr = mat._bufs
    return _csr_product("csr_matmat", data, indices, indptr, B, mat.shape, transpose)
