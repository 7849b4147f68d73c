"""``jax._src.interpreters.pxla``: a view of ``jax.interpreters.pxla``."""

from modjax.interpreters.pxla import *  # noqa: F403
from modjax.interpreters.pxla import __getattr__  # noqa: F401 - its deprecated names
