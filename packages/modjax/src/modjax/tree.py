"""Pytree functions by short names (the counterpart of ``jax.tree``)."""

from modjax.tracecore.tree import *  # noqa: F403
from modjax.tracecore.tree import __all__  # noqa: F401
