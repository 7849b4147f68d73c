"""``jax._src.checkify``: ``jax.experimental.checkify``'s names and two that flax.nnx reads."""

from __future__ import annotations

from typing import TypeVar

from modjax.experimental import checkify as _public
from modjax.experimental.checkify import *  # noqa: F403 - this module is a view of it
from modjax.experimental.checkify import JaxException

__all__ = [*_public.__all__, "JaxException", "Out"]

#: The output type of a checkified function, as JAX's annotations name it.
Out = TypeVar("Out")
