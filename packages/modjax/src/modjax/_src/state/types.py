"""``jax._src.state.types``: ``AbstractRef``, which flax.nnx reads from here."""

from modjax.tracecore.state import AbstractRef

__all__ = ["AbstractRef"]
