"""``jax._src.tree_util``: ``jax.tree_util``'s names, the registry flax.nnx reads and
the private structure-error helpers (``prefix_errors``, ``equality_errors``).

``_registry`` maps each explicitly registered pytree node type (and the builtin
containers) to its entry; libraries ask ``type(x) in _registry``.
"""

from __future__ import annotations

from modjax import tree_util as _public
from modjax.tracecore.tree_util import (  # noqa: F401 - JAX's private helpers, here as in JAX
    PytreeLeaf,
    _registry,  # read by flax.nnx
    equality_errors,
    equality_errors_pytreedef,
    prefix_errors,
)
from modjax.tree_util import *  # noqa: F403 - this module is a view of jax.tree_util

__all__ = [*_public.__all__, "_registry"]
