"""``jax.experimental.sparse.random``: ``random_bcoo``, a BCOO array with random entries."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import random
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_indices import bcoo_sort_indices

__all__ = ["random_bcoo"]


def random_bcoo(
    key,
    shape: Sequence[int],
    *,
    dtype=jnp.float_,
    indices_dtype=None,
    nse: float | int = 0.2,
    n_batch: int = 0,
    n_dense: int = 0,
    unique_indices: bool = True,
    sorted_indices: bool = False,
    generator: Callable[..., Any] = random.uniform,
    **kwds: Any,
) -> BCOO:
    """A random BCOO array of ``shape``.

    ``nse`` is the number of stored elements per batch entry, or for ``0 < nse < 1``
    that fraction of the sparse positions (rounded up). Positions are drawn without
    repetition when ``unique_indices``; the data comes from
    ``generator(key, shape=..., dtype=dtype, **kwds)`` (``random.uniform`` by default).
    """
    shape = tuple(operator.index(d) for d in shape)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    n_sparse = len(shape) - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape {shape}")
    batch, sparse, dense = (
        shape[:n_batch],
        shape[n_batch : n_batch + n_sparse],
        shape[n_batch + n_sparse :],
    )
    size = math.prod(sparse)
    if 0 < nse < 1:
        nse = int(math.ceil(nse * size))
    nse = operator.index(nse)
    if nse < 0 or (unique_indices and nse > size):
        raise ValueError(f"random_bcoo: nse={nse} is out of range for {size} sparse positions")
    if indices_dtype is None:
        indices_dtype = modjax.dtypes.canonicalize_dtype(jnp.int_)
    index_key, data_key = random.split(key)

    def positions(k):
        if unique_indices:
            flat = random.choice(k, size, (nse,), replace=False)
        else:
            flat = random.randint(k, (nse,), 0, max(size, 1))
        strides = np.array([math.prod(sparse[i + 1 :]) for i in range(n_sparse)], dtype=np.int64)
        extents = np.array(sparse, dtype=np.int64)
        return ((flat[:, None] // jnp.asarray(strides)) % jnp.asarray(extents)).astype(
            indices_dtype
        )

    keys = random.split(index_key, math.prod(batch)) if batch else index_key
    indices = modjax.vmap(positions)(keys) if batch else positions(keys)
    indices = indices.reshape((*batch, nse, n_sparse))
    data = generator(data_key, shape=(*batch, nse, *dense), dtype=dtype, **kwds)
    mat = BCOO((data, indices), shape=shape, indices_sorted=False, unique_indices=unique_indices)
    return bcoo_sort_indices(mat) if sorted_indices else mat
