"""``jax.experimental.sparse.api``: ``empty``, ``eye`` and ``todense`` for any format.

``empty`` knows the formats ``'bcoo'``, ``'bcsr'``, ``'coo'``, ``'csr'`` and ``'csc'``
(another raises ValueError); ``eye`` knows them but ``'bcsr'`` (a KeyError, as in
JAX, whose BCSR has no ``_eye``). Keywords other than the layout's go to the format's
``_empty``/``_eye`` constructor, which refuses unknown ones with TypeError.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_fromdense
from modjax.experimental.sparse._bcsr_array import BCSR
from modjax.experimental.sparse._coo_array import COO
from modjax.experimental.sparse._csr_array import CSC, CSR
from modjax.experimental.sparse._todense_primitive import todense_p
from modjax.tracecore.core import concrete_or_error
from modjax.tree_util import tree_structure

__all__ = ["empty", "eye", "todense"]

_EMPTY_FORMATS: dict[str, Any] = {"bcsr": BCSR, "bcoo": BCOO, "coo": COO, "csr": CSR, "csc": CSC}
_EYE_FORMATS: dict[str, Any] = {"bcoo": BCOO, "coo": COO, "csr": CSR, "csc": CSC}


def empty(
    shape: Sequence[int], dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds
) -> JAXSparse:
    """An all-zero sparse array (``jax.experimental.sparse.empty``).

    For 'bcoo' and 'bcsr', keywords ``n_batch``, ``n_dense`` and ``nse`` choose the
    layout (``nse`` stored elements of padding, 0 by default); the 2-D formats 'coo',
    'csr' and 'csc' store nothing.
    """
    if sparse_format not in _EMPTY_FORMATS:
        raise ValueError(
            f"sparse_format={sparse_format!r} not recognized; must be one of {list(_EMPTY_FORMATS)}"
        )
    if sparse_format != "bcoo":
        return _EMPTY_FORMATS[sparse_format]._empty(
            tuple(shape), dtype=dtype, index_dtype=index_dtype, **kwds
        )
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
    """A sparse ``(N, M)`` matrix with ones on diagonal ``k`` (``jax.experimental.sparse.eye``).

    For 'bcoo', keywords ``n_batch`` and ``n_dense`` choose the layout. 'bcsr' is not a
    format of ``eye`` (KeyError, as in JAX).
    """
    cls = _EYE_FORMATS[sparse_format]
    N, k = (operator.index(concrete_or_error(v, "sparse.eye")) for v in (N, k))
    M = N if M is None else operator.index(concrete_or_error(M, "sparse.eye"))
    if cls is not BCOO:
        return cls._eye(N, M, k, dtype=dtype, index_dtype=index_dtype, **kwds)
    n_batch, n_dense = kwds.pop("n_batch", 0), kwds.pop("n_dense", 0)
    if kwds:
        raise TypeError(f"eye() got unexpected keyword arguments {sorted(kwds)}")
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
    """The dense form of a sparse array of any format; a dense array comes back unchanged.

    ``jax.experimental.sparse.todense``.
    """
    if isinstance(arr, JAXSparse):
        return arr.todense()
    if isinstance(arr, (np.ndarray, modjax.Array)):
        # JAX binds todense_p here too: under sparsify its rule densifies a sparse value.
        return todense_p.bind(arr, tree=tree_structure(arr))
    return arr
