"""The ``BCOO`` class: batched-coordinate sparse arrays (``jax.experimental.sparse.BCOO``).

A BCOO array of shape ``(*batch, *sparse, *dense)`` stores ``data`` of shape
``(*batch, nse, *dense)`` and ``indices`` of shape ``(*batch, nse, n_sparse)``: entry
``k`` of a batch puts ``data[..., k, :]`` at the sparse position ``indices[..., k, :]``.
Duplicate indices add up; an index outside the shape (the padding that ``fromdense``
and ``sum_duplicates`` write, one past the end of each sparse dimension) stands for
nothing. The batch axes of ``indices`` may have size 1 where ``data``'s do not.

A BCOO is a pytree: children ``data`` and ``indices``, with the shape and the flags
``indices_sorted``/``unique_indices`` static. Its static shape follows its children's
batch axes when they change: under ``vmap`` a BCOO with ``n_batch = 1`` mapped on axis
0 is seen inside as one batch entry, and a BCOO returned from ``vmap`` gains the
mapped axis as a batch dimension, as in JAX. Mapping a BCOO with ``n_batch = 0`` raises
ValueError.

The operations live in ``_bcoo_convert``, ``_bcoo_indices``, ``_bcoo_shape`` and
``_bcoo_dot``; the methods here forward to them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.tree_util import register_pytree_node

__all__ = ["BCOO"]


def validate_bcoo(data, indices, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Check a BCOO's buffers against its shape; return ``(n_batch, n_sparse, n_dense, nse)``."""
    if indices.ndim < 2:
        raise ValueError(
            f"BCOO indices must have ndim >= 2 (*batch, nse, n_sparse); got shape {indices.shape}"
        )
    if not jnp.issubdtype(indices.dtype, jnp.integer):
        raise TypeError(f"BCOO indices must be an integer array; got dtype {indices.dtype}")
    n_batch = indices.ndim - 2
    nse, n_sparse = indices.shape[-2:]
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(
            f"BCOO indices of shape {indices.shape} (n_batch={n_batch}, n_sparse={n_sparse}) "
            f"do not fit an array of shape {shape}"
        )
    if data.ndim != n_batch + 1 + n_dense:
        raise ValueError(
            f"BCOO data of shape {data.shape} does not match indices of shape {indices.shape} "
            f"for an array of shape {shape}: expected data.ndim == {n_batch + 1 + n_dense}"
        )
    if data.shape[n_batch] != nse:
        raise ValueError(
            f"BCOO data of shape {data.shape} and indices of shape {indices.shape} disagree on nse"
        )
    for axis in range(n_batch):
        for buffer, what in ((data, "data"), (indices, "indices")):
            if buffer.shape[axis] not in (1, shape[axis]):
                raise ValueError(
                    f"BCOO {what} of shape {buffer.shape} has batch dimension {axis} of size "
                    f"{buffer.shape[axis]}, not 1 or {shape[axis]} (shape {shape})"
                )
    if tuple(data.shape[n_batch + 1 :]) != tuple(shape[len(shape) - n_dense :]):
        raise ValueError(
            f"BCOO data of shape {data.shape} has dense dimensions that do not match shape {shape}"
        )
    return n_batch, n_sparse, n_dense, nse


class BCOO(JAXSparse):
    """Batched coordinate-format sparse array: ``BCOO((data, indices), shape=...)``.

    ``data`` has shape ``(*batch, nse, *dense)`` and ``indices`` shape
    ``(*batch, nse, n_sparse)``; duplicate indices are summed and out-of-range
    indices are ignored. ``indices_sorted`` and ``unique_indices`` are promises that
    the caller makes (they are not checked).

    >>> M = BCOO.fromdense(jnp.array([[0., 2., 0.], [1., 0., 4.]]))
    >>> M
    BCOO(float32[2, 3], nse=3)
    """

    data: Any
    indices: Any
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self,
        args: tuple[Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ):
        data, indices = args
        self.data = jnp.asarray(data)
        self.indices = jnp.asarray(indices)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        super().__init__(args, shape=shape)
        validate_bcoo(self.data, self.indices, self.shape)

    # --- layout ------------------------------------------------------------------------

    @property
    def nse(self) -> int:
        return self.indices.shape[-2]

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def _with_data(self, data) -> BCOO:
        """The same sparsity pattern holding other data (same batch/nse/dense layout)."""
        return BCOO(
            (data, self.indices),
            shape=self.shape,
            indices_sorted=self.indices_sorted,
            unique_indices=self.unique_indices,
        )

    # --- pytree ------------------------------------------------------------------------

    def tree_flatten(self):
        # Tree utilities may unflatten a BCOO around placeholder leaves; its n_batch
        # is then the one recorded when it was unflattened.
        ndim = getattr(self.indices, "ndim", None)
        n_batch = ndim - 2 if isinstance(ndim, int) else self.__dict__.get("_n_batch", 0)
        return (self.data, self.indices), (
            self.shape,
            n_batch,
            self.indices_sorted,
            self.unique_indices,
        )

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        shape, n_batch, indices_sorted, unique_indices = aux_data
        data, indices = children
        ndim = getattr(indices, "ndim", None)
        if isinstance(ndim, int) and ndim - 2 != n_batch and hasattr(data, "shape"):
            # vmap (or a tree map) added or removed leading batch axes of the buffers.
            new_n_batch = ndim - 2
            if new_n_batch < 0:
                raise ValueError(
                    f"Cannot map an axis of a BCOO array with n_batch={n_batch}: the mapped "
                    "axes of BCOO operands (vmap's in_axes) must be batch dimensions"
                )
            batch = jnp.broadcast_shapes(
                tuple(data.shape[:new_n_batch]), tuple(indices.shape[:new_n_batch])
            )
            shape = tuple(batch) + tuple(shape[n_batch:])
            n_batch = new_n_batch
        obj = object.__new__(cls)
        obj._n_batch = n_batch
        obj.data, obj.indices = data, indices
        obj.shape = shape
        obj.indices_sorted, obj.unique_indices = indices_sorted, unique_indices
        return obj

    # --- conversions -------------------------------------------------------------------

    @classmethod
    def fromdense(
        cls, mat, *, nse=None, index_dtype=np.int32, n_dense: int = 0, n_batch: int = 0
    ) -> BCOO:
        """Create a BCOO array from a dense array (see ``bcoo_fromdense``)."""
        from modjax.experimental.sparse._bcoo_convert import bcoo_fromdense

        return bcoo_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_scipy_sparse(
        cls, mat, *, index_dtype=None, n_dense: int = 0, n_batch: int = 0
    ) -> BCOO:
        """Create a BCOO array from a ``scipy.sparse`` matrix or array.

        The entries keep scipy's COO order (``mat.tocoo()``: row-major for CSR), with
        int32 indices unless ``index_dtype`` says otherwise; as in JAX the result
        claims neither sorted nor unique indices.
        """
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.from_scipy_sparse with nonzero n_dense or n_batch")
        coo = mat.tocoo()
        data = jnp.asarray(coo.data)
        indices = jnp.asarray(np.stack([coo.row, coo.col], axis=1).astype(np.int64)).astype(
            index_dtype or jnp.int32
        )
        return cls((data, indices), shape=coo.shape, indices_sorted=False, unique_indices=False)

    def todense(self):
        """The dense array this BCOO stands for."""
        from modjax.experimental.sparse._bcoo_convert import bcoo_todense

        return bcoo_todense(self)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
        """Change ``n_batch``/``n_dense`` (see ``bcoo_update_layout``)."""
        from modjax.experimental.sparse._bcoo_convert import bcoo_update_layout

        return bcoo_update_layout(
            self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient
        )

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCOO:
        """Sum duplicate indices (and drop explicit zeros unless ``remove_zeros=False``)."""
        from modjax.experimental.sparse._bcoo_indices import (
            bcoo_eliminate_zeros,
            bcoo_sum_duplicates,
        )

        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """A copy with the indices of each batch in lexicographic order."""
        from modjax.experimental.sparse._bcoo_indices import bcoo_sort_indices

        return bcoo_sort_indices(self)

    def astype(self, dtype) -> BCOO:
        return self._with_data(self.data.astype(dtype))

    def reshape(self, *args, order: str = "C") -> BCOO:
        """The same entries in another shape, as ``ndarray.reshape`` (see ``bcoo_reshape``).

        One dimension may be -1; reshaping to the same shape returns ``self``.
        """
        from modjax.experimental.sparse._bcoo_reshape import bcoo_reshape

        if order != "C":
            raise NotImplementedError(f"BCOO.reshape(order={order!r}): only order='C'")
        new_shape = args[0] if len(args) == 1 and isinstance(args[0], Sequence) else args
        new_shape = _resolve_shape(tuple(operator.index(d) for d in new_shape), self.shape)
        if new_shape == self.shape:
            return self
        return bcoo_reshape(self, new_sizes=new_shape)

    # --- shape operations --------------------------------------------------------------

    def transpose(self, axes=None) -> BCOO:
        """Permute the axes (reversed by default); batch, sparse and dense axes stay grouped."""
        from modjax.experimental.sparse._bcoo_shape import bcoo_transpose

        permutation = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=permutation)

    def sum(self, axis=None, dtype=None, keepdims: bool = False):
        """Sum over ``axis`` (all by default): a BCOO, or a dense scalar when nothing is left."""
        from modjax.experimental.sparse._bcoo_shape import bcoo_reduce_sum

        if axis is None:
            axes = tuple(range(self.ndim))
        elif isinstance(axis, Sequence):
            axes = tuple(axis)
        else:
            axes = (axis,)
        axes = tuple(_canonical_axis(a, self.ndim) for a in axes)
        out = bcoo_reduce_sum(self, axes=axes)
        if dtype is not None:
            out = out.astype(dtype)
        out = out.todense() if out.ndim == 0 else out
        if keepdims:
            shape = tuple(1 if a in axes else d for a, d in enumerate(self.shape))
            kept = tuple(a for a in range(self.ndim) if a not in axes)
            if isinstance(out, BCOO):
                from modjax.experimental.sparse._bcoo_reshape import bcoo_broadcast_in_dim

                return bcoo_broadcast_in_dim(out, shape=shape, broadcast_dimensions=kept)
            return jnp.reshape(out, shape)
        return out

    # --- arithmetic --------------------------------------------------------------------

    def __neg__(self) -> BCOO:
        return self._with_data(-self.data)

    def __pos__(self) -> BCOO:
        return self

    def __mul__(self, other):
        from modjax.experimental.sparse._bcoo_dot import bcoo_multiply_dense

        if isinstance(other, BCOO):
            from modjax.experimental.sparse._bcoo_spdot import bcoo_multiply_sparse

            return bcoo_multiply_sparse(self, other)
        if isinstance(other, JAXSparse):
            raise NotImplementedError(
                f"multiplying BCOO and {type(other).__name__} is not implemented in modjax"
            )
        return self._with_data(bcoo_multiply_dense(self, other))

    def __rmul__(self, other):
        if isinstance(other, BCOO):
            from modjax.experimental.sparse._bcoo_spdot import bcoo_multiply_sparse

            return bcoo_multiply_sparse(other, self)
        return self.__mul__(other)

    def __truediv__(self, other):
        from modjax.experimental.sparse._bcoo_dot import bcoo_multiply_dense

        if isinstance(other, JAXSparse):
            raise NotImplementedError(
                "Division by a sparse array is not implemented because it would result in "
                "dense output. If this is your intent, use sparse.todense() to convert your "
                "arguments to a dense array."
            )
        other = jnp.asarray(other)
        return self._with_data(bcoo_multiply_dense(self, 1.0 / other))

    def __rtruediv__(self, other):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to a dense array."
        )

    def __abs__(self) -> BCOO:
        return self._with_data(jnp.abs(self.data))

    def __pow__(self, exponent) -> BCOO:
        if not isinstance(exponent, int | np.integer) or isinstance(exponent, bool):
            raise NotImplementedError(
                "BCOO ** exponent is implemented for integer exponents only in modjax"
            )
        if exponent <= 0:
            raise NotImplementedError(
                f"sparse rule for integer_pow with non-positive exponent {exponent} is not "
                "implemented because it would result in dense output. If this is your intent, "
                "use sparse.todense() to convert your argument to a dense array."
            )
        return self._with_data(self.data ** int(exponent))

    def __getitem__(self, idx):
        from modjax.experimental.sparse._bcoo_gather import bcoo_getitem

        return bcoo_getitem(self, idx)

    def __iter__(self):
        return iter(self[i] for i in range(self.shape[0]))

    def __add__(self, other):
        from modjax.experimental.sparse._bcoo_convert import bcoo_add

        return bcoo_add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __matmul__(self, other):
        from modjax.experimental.sparse._bcoo_dot import matmul

        return matmul(self, other)

    def __rmatmul__(self, other):
        from modjax.experimental.sparse._bcoo_dot import matmul

        return matmul(other, self)

    # --- JAX's internal helpers -----------------------------------------------------

    @property
    def _bufs(self) -> tuple[Any, Any]:
        return (self.data, self.indices)

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        """An all-zero BCOO array (``sparse.empty``)."""
        from modjax.experimental.sparse.api import empty

        return empty(
            shape, dtype=dtype, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch, nse=nse
        )

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        """A BCOO identity-like matrix (``sparse.eye``)."""
        from modjax.experimental.sparse.api import eye

        return eye(N, M, k, dtype=dtype, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense)


class SparseInfo(NamedTuple):
    """A BCOO array's static description (JAX's ``SparseInfo``)."""

    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False


def _resolve_shape(new_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``new_shape`` with its one -1 filled in, checked against the size of ``shape``."""
    size = math.prod(shape)
    if new_shape.count(-1) > 1 or any(d < -1 for d in new_shape):
        raise TypeError(f"cannot reshape a sparse array of shape {shape} into shape {new_shape}")
    if -1 in new_shape:
        known = math.prod(d for d in new_shape if d != -1)
        if known == 0 or size % known:
            raise TypeError(
                f"cannot reshape a sparse array of shape {shape} into shape {new_shape}"
            )
        new_shape = tuple(size // known if d == -1 else d for d in new_shape)
    if math.prod(new_shape) != size:
        raise TypeError(f"cannot reshape a sparse array of shape {shape} into shape {new_shape}")
    return new_shape


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for a sparse array of dimension {ndim}")
    return axis % ndim


register_pytree_node(BCOO, BCOO.tree_flatten, BCOO.tree_unflatten)
