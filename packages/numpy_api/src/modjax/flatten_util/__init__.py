"""``ravel_pytree``: one flat vector from a pytree of arrays (``jax.flatten_util``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from modjax import lax
from modjax import numpy as jnp
from modjax.tracecore import dtypes
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Concatenate the raveled leaves of ``pytree`` into one vector (jax.flatten_util.ravel_pytree).

    The vector's dtype promotes the leaves' dtypes; the returned function maps a
    vector of that size and dtype back to the pytree, each leaf in its own shape
    and dtype. A pytree without leaves gives a float32 vector of size 0.
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return jnp.zeros((0,), np.float32), partial(_unravel, treedef, (), (), None, None)
    from_dtypes = tuple(dtypes.dtype(leaf, canonicalize=True) for leaf in leaves)
    to_dtype = jnp.result_type(*leaves)
    shapes = tuple(np.shape(leaf) for leaf in leaves)
    # One dtype throughout: the unravel function keeps whatever dtype it is given, so
    # that it works on tangents and cotangents of another dtype, as JAX's does; the
    # vector is then weakly typed when every leaf is (ravel_pytree(1.0), as JAX's).
    if all(d == to_dtype for d in from_dtypes):
        flat = jnp.concatenate([jnp.ravel(leaf) for leaf in leaves])
        from_dtypes, to_dtype = None, None
    else:
        flat = jnp.concatenate(
            [jnp.ravel(lax.convert_element_type(leaf, to_dtype)) for leaf in leaves]
        )
    return flat, partial(
        _unravel, treedef, shapes, tuple(map(math.prod, shapes)), from_dtypes, to_dtype
    )


def _unravel(treedef, shapes, sizes, from_dtypes, to_dtype, flat):
    if to_dtype is not None and dtypes.dtype(flat) != to_dtype:
        raise TypeError(
            f"unravel function given array of dtype {dtypes.dtype(flat)}, but expected dtype "
            f"{to_dtype}"
        )
    if np.shape(flat) != (sum(sizes),):
        raise ValueError(
            f"unravel function given an array of shape {np.shape(flat)}, but the raveled "
            f"pytree has shape ({sum(sizes)},)"
        )
    chunks = lax.split(flat, sizes) if sizes else []
    leaves = [chunk.reshape(shape) for chunk, shape in zip(chunks, shapes, strict=True)]
    if from_dtypes is not None:
        leaves = [lax.convert_element_type(x, d) for x, d in zip(leaves, from_dtypes, strict=True)]
    return tree_unflatten(treedef, leaves)
