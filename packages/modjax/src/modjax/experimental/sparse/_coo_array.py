"""The legacy ``COO`` format (``jax.experimental.sparse.COO``) and its functions.

A COO matrix is 2-D: ``data``, ``row`` and ``col`` of shape ``(nse,)``; entry ``k``
adds ``data[k]`` at ``(row[k], col[k])``. As in JAX there is no validation and no
batching layout: a COO is a pytree of its three buffers with the shape and the flags
``rows_sorted``/``cols_sorted`` static, so under ``vmap`` each buffer is mapped and
the shape stays 2-D. ``fromdense`` pads with entries at ``(0, 0)`` holding 0.

The kernels (``todense``, products) are scatter-adds and gathers with ``jnp``'s
default index rules (negative indices count from the end; an out-of-range scatter
index is dropped, an out-of-range gather index is clamped), jitted per shape.
``_csr_array`` reuses them after turning row pointers into rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._format_checks import (
    check_dtype,
    check_shape,
    fromdense_nse_context,
    static_nse,
)
from modjax.tree_util import register_pytree_node

__all__ = [
    "COO",
    "COOInfo",
    "coo_fromdense",
    "coo_matmat",
    "coo_matvec",
    "coo_todense",
    "diagonal_entries",
    "matrix_and_nse",
    "nonzero_entries",
    "product_buffers",
    "promoted_operands",
    "todense_buffers",
]


class COOInfo(NamedTuple):
    """The static part of a COO matrix (JAX's ``COOInfo``)."""

    shape: tuple[int, ...]
    rows_sorted: bool = False
    cols_sorted: bool = False


class COO(JAXSparse):
    """Coordinate-format 2-D sparse matrix: ``COO((data, row, col), shape=(n, m))``.

    JAX's legacy format (prefer BCOO): no batch or dense dimensions, and ``nse`` is
    ``data.size``.

    >>> COO.fromdense(jnp.array([[0., 2.], [1., 0.]]))
    COO(float32[2, 2], nse=2)
    """

    data: Any
    row: Any
    col: Any
    _rows_sorted: bool
    _cols_sorted: bool

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        rows_sorted: bool = False,
        cols_sorted: bool = False,
    ):
        self.data, self.row, self.col = (jnp.asarray(a) for a in args)
        self._rows_sorted = rows_sorted
        self._cols_sorted = cols_sorted
        super().__init__(args, shape=shape)

    @property
    def _info(self) -> COOInfo:
        return COOInfo(self.shape, self._rows_sorted, self._cols_sorted)

    @property
    def _bufs(self) -> tuple[Any, Any, Any]:
        return (self.data, self.row, self.col)

    @property
    def nse(self) -> int:
        return self.data.size

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32) -> COO:
        """Create a COO matrix from a dense 2-D array (see ``coo_fromdense``)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype=None, index_dtype="int32") -> COO:
        """An all-zero COO matrix with no stored elements (``sparse.empty``'s 'coo')."""
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={shape}")
        data = jnp.zeros((0,), dtype)
        index = jnp.zeros((0,), index_dtype)
        return cls((data, index, index), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype=None, index_dtype="int32") -> COO:
        """Ones on diagonal ``k`` of an ``(N, M)`` matrix (``sparse.eye``'s 'coo')."""
        entries = diagonal_entries(N, M, k, dtype)
        if entries is None:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data, rows, cols = entries
        rows, cols = (jnp.asarray(a).astype(index_dtype) for a in (rows, cols))
        return cls((data, rows, cols), shape=(N, M), rows_sorted=True, cols_sorted=True)

    def _sort_indices(self) -> COO:
        """A copy with entries ordered by row, then column (``self`` if rows are sorted)."""
        if self._rows_sorted:
            return self
        data, row, col = _sort_buffers(self.data, self.row, self.col)
        return COO((data, row, col), shape=self.shape, rows_sorted=True)

    def todense(self):
        """The dense matrix (duplicates summed)."""
        return coo_todense(self)

    def transpose(self, axes=None) -> COO:
        """The transposed matrix: ``row`` and ``col`` swap (``axes`` is not supported)."""
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO(
            (self.data, self.col, self.row),
            shape=self.shape[::-1],
            rows_sorted=self._cols_sorted,
            cols_sorted=self._rows_sorted,
        )

    def tree_flatten(self):
        return (self.data, self.row, self.col), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        if aux_data.keys() != {"shape", "rows_sorted", "cols_sorted"}:
            raise ValueError(f"COO.tree_unflatten: invalid aux_data={aux_data!r}")
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape = aux_data["shape"]
        obj._rows_sorted = aux_data["rows_sorted"]
        obj._cols_sorted = aux_data["cols_sorted"]
        return obj

    def __matmul__(self, other):
        data, other = promoted_operands(self.data, other)
        promoted = COO((data, self.row, self.col), **self._info._asdict())
        if other.ndim == 1:
            return coo_matvec(promoted, other)
        if other.ndim == 2:
            return coo_matmat(promoted, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


register_pytree_node(COO, COO.tree_flatten, COO.tree_unflatten)


def promoted_operands(data, other):
    """``data`` and the dense ``other`` of ``sparse @ other`` in their common dtype."""
    if isinstance(other, JAXSparse):
        raise NotImplementedError("matmul between two sparse objects.")
    other = jnp.asarray(other)
    dtype = jnp.result_type(data, other)
    return data.astype(dtype), other.astype(dtype)


def diagonal_entries(N: int, M: int, k: int, dtype) -> tuple[Any, Any, Any] | None:
    """The ones on diagonal ``k`` of an ``(N, M)`` matrix, row by row (None: it has none).

    ``(data, rows, cols)``: ``data`` holds ones of ``dtype``; ``rows`` and ``cols`` are
    NumPy arrays, which each format turns into its index buffers.
    """
    size = min(N, M - k) if k > 0 else min(N + k, M)
    if size <= 0:
        return None
    steps = np.arange(size)
    return jnp.ones((size,), dtype), steps + max(-k, 0), steps + max(k, 0)


# --- conversions -----------------------------------------------------------------------


def nonzero_entries(mat, nse: int):
    """``(data, row, col, stored)`` of the first ``nse`` nonzeros of a 2-D array, row-major.

    Past the nonzeros (``stored`` False) rows and columns are 0 and data is 0.
    """
    row, col = jnp.nonzero(mat, size=nse)
    stored = jnp.arange(nse) < jnp.count_nonzero(mat)
    data = jnp.where(stored, mat[row, col], jnp.zeros((), mat.dtype))
    return data, row, col, stored


def matrix_and_nse(function: str, mat, nse) -> tuple[Any, int]:
    """The arguments of ``function`` (``coo_fromdense``, ``csr_fromdense``), checked.

    ``mat`` as a 2-D array and ``nse`` as a Python int: by default the number of
    nonzeros, which needs a concrete ``mat``.
    """
    mat = jnp.asarray(mat)
    check_shape(mat.ndim == 2, f"{function} expects a 2-D array; got shape {mat.shape}")
    if nse is None:
        nse = jnp.count_nonzero(mat)
    return mat, static_nse(nse, fromdense_nse_context(function))


@partial(modjax.jit, static_argnames=("nse", "index_dtype"))
def _fromdense_buffers(mat, *, nse, index_dtype):
    data, row, col, _ = nonzero_entries(mat, nse)
    return data, row.astype(index_dtype), col.astype(index_dtype)


def coo_fromdense(mat, *, nse=None, index_dtype=jnp.int32) -> COO:
    """Create a COO matrix from a dense 2-D array (``jax.experimental.sparse.coo_fromdense``).

    ``nse`` defaults to the number of nonzeros (which needs a concrete ``mat``); a
    larger ``nse`` pads with zeros at ``(0, 0)``, a smaller one drops the last nonzeros.
    The rows of the result are sorted.
    """
    mat, nse = matrix_and_nse("coo_fromdense", mat, nse)
    bufs = _fromdense_buffers(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return COO(bufs, shape=mat.shape, rows_sorted=True)


@partial(modjax.jit, static_argnames=("shape",))
def todense_buffers(data, row, col, *, shape):
    """The dense ``shape`` array with ``data[k]`` added at ``(row[k], col[k])``."""
    return jnp.zeros(shape, data.dtype).at[row, col].add(data)


def coo_todense(mat: COO):
    """The dense matrix of a COO matrix (``jax.experimental.sparse.coo_todense``)."""
    return todense_buffers(mat.data, mat.row, mat.col, shape=tuple(mat.shape))


@modjax.jit
def _sort_buffers(data, row, col):
    row, col, data = modjax.lax.sort((row, col, data), num_keys=2)
    return data, row, col


# --- products --------------------------------------------------------------------------


@partial(modjax.jit, static_argnames=("n_out",))
def product_buffers(data, row, col, dense, *, n_out):
    """``sum_k data[k] * dense[col[k]]`` added into row ``row[k]`` of an ``n_out``-row result."""
    scaled = data.reshape(data.shape + (1,) * (dense.ndim - 1)) * dense[col]
    return jnp.zeros((n_out, *dense.shape[1:]), scaled.dtype).at[row].add(scaled)


def check_product(what: str, data, rows, cols, dense, shape, transpose: bool, ndim: int) -> None:
    """JAX's checks of a COO/CSR product with a dense vector (``ndim`` 1) or matrix (2)."""
    check_shape(len(shape) == 2, f"{what}: the sparse matrix must be 2-D; got shape {shape}")
    check_shape(
        dense.ndim == ndim,
        f"{what} expects a {ndim}-D dense operand; got shape {dense.shape}",
    )
    check_shape(
        data.shape == rows.shape == cols.shape,
        f"{what}: data, row and column indices must have one shape; got {data.shape}, "
        f"{rows.shape} and {cols.shape}",
    )
    check_dtype(
        data.dtype == dense.dtype,
        f"{what}: the sparse data ({data.dtype}) and the dense operand ({dense.dtype}) "
        "must have one dtype",
    )
    check_dtype(
        rows.dtype == cols.dtype,
        f"{what}: the index arrays must have one dtype; got {rows.dtype} and {cols.dtype}",
    )
    expected = shape[0] if transpose else shape[1]
    check_shape(
        dense.shape[0] == expected,
        f"{what}: a matrix of shape {shape}{' (transposed)' if transpose else ''} cannot "
        f"multiply an operand of shape {dense.shape}",
    )


def _coo_product(what: str, mat: COO, dense, transpose: bool, ndim: int):
    dense = jnp.asarray(dense)
    check_product(what, mat.data, mat.row, mat.col, dense, mat.shape, transpose, ndim)
    row, col = (mat.col, mat.row) if transpose else (mat.row, mat.col)
    n_out = mat.shape[1] if transpose else mat.shape[0]
    return product_buffers(mat.data, row, col, dense, n_out=n_out)


def coo_matvec(mat: COO, v, transpose: bool = False):
    """``mat @ v`` (``mat.T @ v`` if ``transpose``) for a dense vector of ``mat``'s dtype.

    ``jax.experimental.sparse.coo_matvec``.
    """
    return _coo_product("coo_matvec", mat, v, transpose, 1)


def coo_matmat(mat: COO, B, *, transpose: bool = False):
    """``mat @ B`` (``mat.T @ B`` if ``transpose``) for a dense matrix of ``mat``'s dtype.

    ``jax.experimental.sparse.coo_matmat``.
    """
    return _coo_product("coo_matmat", mat, B, transpose, 2)
