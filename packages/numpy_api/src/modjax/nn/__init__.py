"""modjax.nn: activation functions, softmax, normalization (the counterpart of ``jax.nn``).

Every function is written with modjax.numpy and lax primitives, so it works
eagerly, under ``jit``, ``vmap`` and ``grad``. ``relu`` and ``relu6`` carry
JAX's custom derivatives at their kinks; ``softmax``, ``log_softmax`` and
``logsumexp`` use the max-shifted, overflow-free formulation.
"""

from ._functions import *  # noqa: F403
from ._functions import __all__  # noqa: F401
