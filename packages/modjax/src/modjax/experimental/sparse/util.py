"""``jax.experimental.sparse.util``: the sparse warnings and errors, and batching helpers.

``map_batched(f, n_batch, *arrays)`` is how every BCOO routine handles batch
dimensions: the routine is written for ``n_batch == 0`` and mapped with ``vmap``
over the (broadcast, flattened) leading batch dimensions of its array arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import modjax
import modjax.numpy as jnp

__all__ = [
    "CuSparseEfficiencyWarning",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "map_batched",
]


class SparseEfficiencyError(ValueError):
    """A sparse operation would store far more elements than its input holds."""


class SparseEfficiencyWarning(UserWarning):
    """Warned instead of raising SparseEfficiencyError when asked to."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """JAX warns this when a cuSPARSE kernel cannot be used; modjax never does."""


def map_batched(f: Callable[..., Any], n_batch: int, *arrays: Any) -> Any:
    """Apply ``f`` (written for unbatched arrays) over the first ``n_batch`` axes of ``arrays``.

    The batch axes of the arrays broadcast against each other (a size-1 axis of the
    BCOO indices stands for all the data's batch entries). ``f`` returns a pytree of
    arrays; each result gains the broadcast batch shape in front.
    """
    if n_batch == 0:
        return f(*arrays)
    batch_shape = jnp.broadcast_shapes(*(a.shape[:n_batch] for a in arrays))
    size = math.prod(batch_shape)
    flat = [
        jnp.broadcast_to(a, batch_shape + a.shape[n_batch:]).reshape((size, *a.shape[n_batch:]))
        for a in arrays
    ]
    out = modjax.vmap(f)(*flat)
    return modjax.tree_util.tree_map(lambda o: o.reshape(batch_shape + o.shape[1:]), out)
