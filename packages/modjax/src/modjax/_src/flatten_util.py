"""``jax._src.flatten_util``: ``ravel_pytree``, which blackjax imports from here."""

from modjax.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
