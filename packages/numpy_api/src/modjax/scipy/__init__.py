"""modjax.scipy: SciPy-style functions on modjax arrays (the counterpart of ``jax.scipy``).

Only ``modjax.scipy.special`` exists so far.
"""

from . import fft, linalg, special

__all__ = ["fft", "linalg", "special"]
