"""``jax.export``: functions as serialized StableHLO in JAX's format (from ``modjax.runtime``)."""

from modjax.runtime.export import *  # noqa: F403  (the whole public surface, as listed there)
from modjax.runtime.export import __all__  # noqa: F401
