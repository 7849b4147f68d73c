"""Collectives built from others (the ``jax.lax`` parallel operators that need array ops)."""

from __future__ import annotations

from modjax.batching import axis_index, psum
from modjax.tracecore import tree_util

__all__ = ["pbroadcast"]


def pbroadcast(x, axis_name, source):
    """Give every member of ``axis_name`` the value of member ``source`` (``jax.lax.pbroadcast``).

    ``x`` is a pytree; the value is the sum over the axis of ``x`` masked to
    the source member, as JAX documents it.
    """
    import modjax.numpy as jnp  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    is_source = axis_index(axis_name) == source
    return tree_util.tree_map(
        lambda leaf: psum(jnp.where(is_source, leaf, jnp.zeros_like(leaf)), axis_name), x
    )
