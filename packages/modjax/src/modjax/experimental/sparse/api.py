"""``jax.experimental.sparse.api``: ``empty``, ``eye`` and ``todense`` for any format.

Only the ``'bcoo'`` format exists in modjax; the others raise NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_fromdense

__all__ = ["empty", "eye", "todense"]


def _check_format(sparse_format: str) -> None:
    if sparse_format != "bcoo":
        if sparse_format in ("bcsr", "coo", "csr", "csc"):
            raise NotImplementedError(
                f"sparse_format={sparse_format!r} is not implemented in modjax yet; use 'bcoo'"
            )
        raise ValueError(f"unrecognized sparse_format={sparse_format!r}")


def empty(
    shape: Sequence[int], dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds
) -> JAXSparse:
    """An all-zero sparse array (``nse`` stored elements of padding, 0 by default).

    Keywords ``n_batch``, ``n_dense`` and ``nse`` choose the layout.
    """
    _check_format(sparse_format)
    n_batch, n_dense, nse = kwds.pop("n_batch", 0), kwds.pop("n_dense", 0), kwds.pop("nse", 0)
    if kwds:
        raise TypeError(f"empty() got unexpected keyword arguments {sorted(kwds)}")
    shape = tuple(int(d) for d in shape)
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
        raise ValueError(
            f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, nse={nse}"
        )
    batch, sparse, dense = (
        shape[:n_batch],
        shape[n_batch : n_batch + n_sparse],
        shape[n_batch + n_sparse :],
    )
    data = jnp.zeros((*batch, nse, *dense), dtype)
    indices = jnp.broadcast_to(
        jnp.asarray(np.array(sparse, dtype=np.int64)).astype(index_dtype), (*batch, nse, n_sparse)
    )
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def eye(
    N: int, M=None, k: int = 0, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds
) -> JAXSparse:
    """A sparse identity-like matrix of shape ``(N, M)`` with ones on diagonal ``k``.

    Keywords ``n_batch`` and ``n_dense`` choose the layout.
    """
    _check_format(sparse_format)
    n_batch, n_dense = kwds.pop("n_batch", 0), kwds.pop("n_dense", 0)
    if kwds:
        raise TypeError(f"eye() got unexpected keyword arguments {sorted(kwds)}")
    N, k = int(N), int(k)
    M = N if M is None else int(M)
    if 2 - n_batch - n_dense < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, n_batch={n_batch}")
    diag = min(N, M - k) if k > 0 else min(N + k, M)
    if diag <= 0:
        return empty((N, M), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense)
    if n_dense > 0 or n_batch > 1:
        return bcoo_fromdense(
            jnp.eye(N, M, k, dtype=dtype), n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
        )
    rows = np.arange(diag) + max(-k, 0)
    cols = rows + k
    if n_batch == 0:
        data = jnp.ones((diag,), dtype)
        indices = jnp.asarray(np.stack([rows, cols], axis=1)).astype(index_dtype)
    else:  # one stored element per row; rows off the diagonal hold padding
        all_rows = np.arange(N)
        all_cols = all_rows + k
        inside = (all_cols >= 0) & (all_cols < M)
        data = jnp.asarray(inside[:, None].astype(np.float32)).astype(jnp.ones((), dtype).dtype)
        indices = jnp.asarray(np.where(inside, all_cols, M)[:, None, None]).astype(index_dtype)
    return BCOO((data, indices), shape=(N, M), indices_sorted=True, unique_indices=True)


def todense(arr):
    """The dense form of a sparse array; a dense array comes back unchanged."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    return arr
