"""Pytree utilities (the counterpart of ``jax.tree_util``)."""

from modjax.tracecore.tree_util import *  # noqa: F403
from modjax.tracecore.tree_util import KeyEntry, KeyPath  # noqa: F401  (type aliases)
from modjax.tracecore.tree_util import __all__  # noqa: F401
