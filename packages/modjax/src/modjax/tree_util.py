"""Pytree utilities (the counterpart of ``jax.tree_util``)."""

from modjax.tracecore.tree_util import *  # noqa: F403
from modjax.tracecore.tree_util import (  # noqa: F401  (the type aliases are not in __all__)
    KeyEntry,
    KeyPath,
    __all__,
)
