"""``jax.profiler``: traces, annotations, the profiler server and device memory profiles.

Everything here is ``modjax.runtime.profiler``'s (the runtime owns jaxlib's profiler).
"""

from modjax.runtime.profiler import *  # noqa: F403  (the whole public surface, as listed there)
from modjax.runtime.profiler import __all__  # noqa: F401
