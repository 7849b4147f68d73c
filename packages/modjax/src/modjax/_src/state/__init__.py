"""``jax._src.state``: the abstract value of mutable array references."""

from modjax._src.state.types import AbstractRef

__all__ = ["AbstractRef"]
