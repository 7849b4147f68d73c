"""Shape operations of BCOO arrays: ``bcoo_transpose`` and ``bcoo_reduce_sum``.

Both work on the buffers directly: a transpose permutes batch axes of both buffers,
sparse columns of the indices and dense axes of the data; a sum over a sparse axis
drops that index column (duplicates then add up), over a dense axis sums the data,
and over a batch axis folds that axis into the stored elements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

import modjax.numpy as jnp
from modjax.experimental.sparse._bcoo_array import BCOO

__all__ = ["bcoo_reduce_sum", "bcoo_transpose"]


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """Permute the axes of a BCOO array.

    Batch axes may only move among batch axes, sparse among sparse and dense among
    dense (else NotImplementedError, as in JAX).
    """
    permutation = tuple(int(p) for p in permutation)
    if sorted(permutation) != list(range(mat.ndim)):
        raise ValueError(
            f"transpose permutation {permutation} is not a permutation "
            f"of the axes of shape {mat.shape}"
        )
    nb, ns = mat.n_batch, mat.n_sparse
    batch_perm, sparse_perm, dense_perm = (
        permutation[:nb],
        permutation[nb : nb + ns],
        permutation[nb + ns :],
    )
    if sorted(batch_perm) != list(range(nb)):
        raise NotImplementedError(
            f"bcoo_transpose: the permutation {permutation} moves batch axes "
            f"among non-batch ones (n_batch={nb})"
        )
    if sorted(sparse_perm) != list(range(nb, nb + ns)):
        raise NotImplementedError(
            f"bcoo_transpose: the permutation {permutation} moves sparse axes among dense ones "
            f"(n_batch={nb}, n_sparse={ns}, n_dense={mat.n_dense})"
        )
    data = mat.data.transpose((*batch_perm, nb, *(p - ns + 1 for p in dense_perm)))
    indices = mat.indices.transpose((*batch_perm, nb, nb + 1))
    columns = [p - nb for p in sparse_perm]
    if columns != list(range(ns)):
        indices = indices[..., np.array(columns, dtype=np.int32)]
    return BCOO(
        (data, indices),
        shape=tuple(mat.shape[p] for p in permutation),
        indices_sorted=mat.indices_sorted and columns == list(range(ns)),
        unique_indices=mat.unique_indices,
    )


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """Sum a BCOO array over ``axes``; the result is a BCOO of the remaining axes."""
    ndim, nb, ns = mat.ndim, mat.n_batch, mat.n_sparse
    axes = sorted({int(a) for a in axes})
    if any(not 0 <= a < ndim for a in axes):
        raise ValueError(f"bcoo_reduce_sum: axes {axes} out of range for shape {mat.shape}")
    data, indices = mat.data, mat.indices

    dense_axes = tuple(nb + 1 + a - nb - ns for a in axes if a >= nb + ns)
    if dense_axes:
        data = data.sum(axis=dense_axes)
    if ns:
        # Entries outside the shape stand for nothing; once an index column is gone
        # they could land inside it, so their data is zeroed first.
        bound = jnp.asarray(np.array(mat.shape[nb : nb + ns])).astype(indices.dtype)
        inside = jnp.all((indices >= 0) & (indices < bound), axis=-1)
        inside = inside.reshape(inside.shape + (1,) * (data.ndim - inside.ndim))
        data = jnp.where(inside, data, jnp.zeros((), data.dtype))
    kept_columns = [i for i in range(ns) if nb + i not in axes]
    if len(kept_columns) != ns:
        indices = indices[..., np.array(kept_columns, dtype=np.int32)]

    batch_axes = [a for a in axes if a < nb]
    if batch_axes:
        kept_batch = [a for a in range(nb) if a not in batch_axes]
        folded = math.prod(mat.shape[a] for a in batch_axes)

        def fold(buffer):
            full = list(buffer.shape)
            for a in batch_axes:
                full[a] = mat.shape[a]
            buffer = jnp.broadcast_to(buffer, tuple(full))
            order = (*kept_batch, *batch_axes, *range(nb, buffer.ndim))
            buffer = buffer.transpose(order)
            kept_shape = tuple(buffer.shape[: len(kept_batch)])
            return buffer.reshape((*kept_shape, folded * buffer.shape[nb], *buffer.shape[nb + 1 :]))

        data, indices = fold(data), fold(indices)
    shape = tuple(d for a, d in enumerate(mat.shape) if a not in axes)
    return BCOO((data, indices), shape=shape)
