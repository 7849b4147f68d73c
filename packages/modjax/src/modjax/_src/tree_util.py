"""``jax._src.tree_util``: ``jax.tree_util``'s names and the registry flax.nnx reads.

``_registry`` maps each explicitly registered pytree node type (and the builtin
containers) to its entry; libraries ask ``type(x) in _registry``.
"""

from __future__ import annotations

from modjax import tree_util as _public
from modjax.tracecore.tree_util import _registry  # noqa: F401 - read by flax.nnx
from modjax.tree_util import *  # noqa: F403 - this module is a view of jax.tree_util

__all__ = [*_public.__all__, "_registry"]
